"""One pass over a session file's bytes: physical lines, offsets, parsed JSON values.

Both of pi's readers split on ``\\n`` only (U+2028, U+2029 and U+0085 are ordinary characters
inside strings), decode invalid UTF-8 as U+FFFD, and parse with ``JSON.parse``.  This module does
that once; the harness and cli readers then apply their own rules to the same lines.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from ..js import js_blank
from .blocks import copy_out, line_blocks
from .deepjson import loads as deep_loads
from .files import open_file, open_regular, os_error, read_first_line
from .images import MARK_JSON, cut, cut_range, lean_line, placed
from .lines import NOT_JSON, written_by_sdk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ASCII_WS = b" \t\r\n\x0b\x0c"


def _js_int(digits: str) -> int | float:
    # JS reads every number as a double: a 5,000-digit integer is Infinity, not an error
    return int(digits) if len(digits) <= 300 else float(digits)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


from .deepjson import js_numbers  # noqa: E402 - re-exported


def parse_json(raw: bytes) -> Any:
    """``JSON.parse`` of one line (after U+FFFD decoding); ``NOT_JSON`` when it throws."""
    try:
        v = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses what JSON.parse accepts: invalid UTF-8 (pi decodes it to U+FFFD),
        # lone surrogate escapes, numbers that overflow to Infinity.
        text = raw.decode("utf-8", "replace")
        try:
            v = json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)
        except RecursionError:
            try:
                v = deep_loads(text)  # deeper than json goes; JSON.parse has no such limit
            except (ValueError, IndexError):
                return NOT_JSON
        except ValueError:
            return NOT_JSON
    except RecursionError:
        return NOT_JSON
    return v


def loads_lean(raw: bytes, offset: int, path: str) -> Any:
    """``parse_json(raw)`` of the line at byte ``offset`` of ``path``, each long image ``data``
    string a placeholder that says where its base64 is (``images``: the bytes are never decoded
    into a string, nor checked for control characters)."""
    lean, cuts = cut(raw, offset, path)
    if not cuts:
        return parse_json(raw)
    v = parse_json(lean)
    if placed(v) != cuts:
        return parse_json(raw)  # a cut outside an image block: the whole line as it is
    return v


def cuts_of(raw: bytes) -> tuple[int, ...]:
    """Where ``cut`` would cut ``raw`` (a line), checked as ``loads_lean`` checks it: ``(start,
    length, pad, ...)`` of each image's base64, relative to the line; empty where ``cut`` would
    cut nothing or ``loads_lean`` would parse the line whole.  The scan that parses a line whole
    keeps this, so a later read of the line need never read those bytes (``lean_line``)."""
    return lean_of(raw)[0]


_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def lean_of(raw: bytes) -> tuple[tuple[int, ...], bytes | None]:
    """``(cuts_of(raw), the line with the images cut out)``, the second only where the line is a
    message entry whose images all lie in its ``message`` and where parsing the short line is
    parsing ``raw``: each image's base64 holds nothing but base64's own characters (so no control
    character either, which makes pi drop the line and ``cut`` does not look for).  The index's
    scan, which keeps nothing of a message's content, then parses the short line instead of
    decoding every image into a string: a byte-table pass over the base64 instead of a JSON
    string's.

    The line is cut first without ``cut``'s test that each image is ASCII (a pass over the whole
    line): the count of base64's characters tests each image anyway, and where one fails, or
    anything else does, the line is cut again as ``cut`` cuts it and looked at as before."""
    lean, cuts = cut_range(raw, 0, len(raw), 0, "", True)
    if not cuts:
        return (), None  # (``cut`` cuts none of what this left)
    got = _lean_of(raw, lean, cuts)
    return got if got[1] is not None else _lean_of(raw, *cut(raw, 0, ""))


def _lean_of(raw: bytes, lean: bytes, cuts: int) -> tuple[tuple[int, ...], bytes | None]:
    """``lean_of(raw)`` from ``raw`` cut (``images.cut_range``): ``lean``, with ``cuts`` images cut."""
    v = parse_json(lean) if cuts else None
    if not cuts or placed(v) != cuts:
        return (), None
    message = v.get("message") if type(v) is dict and v.get("type") == "message" else None
    inside = type(message) is dict and placed(message) == cuts
    out: list[int] = []
    k = 0
    rest = 0  # base64 characters of the line outside its images
    last = 0
    while (k := lean.find(MARK_JSON, k)) >= 0:
        end = lean.index(b'"', k)
        _n, offset, length, pad = lean[k + len(MARK_JSON):end].split(b":")
        piece = lean[last:k]
        rest += len(piece) - len(piece.translate(None, _BASE64))
        out += (int(offset), int(length), int(pad))
        k = last = end
    if len(out) != 3 * cuts:
        return (), None
    piece = lean[last:]
    rest += len(piece) - len(piece.translate(None, _BASE64))
    images = sum(out[1::3])
    pure = inside and len(raw) - len(raw.translate(None, _BASE64)) - rest == images
    return tuple(out), lean if pure else None


def dumps(v: Any, indent: bool = False) -> bytes:
    """``JSON.stringify`` as pi's output would read: integers beyond 2**53 are doubles (rounded),
    NaN and Infinity are null, lone surrogates are escaped.  The common case costs one orjson call:
    big integers are found by orjson's strict-integer check, not by scanning every line."""
    opt = orjson.OPT_STRICT_INTEGER | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return js_exponents(orjson.dumps(v, option=opt))
    except TypeError as e:
        if "Integer" in str(e):
            return dumps(js_numbers(v), indent)
        try:
            return js_exponents(json.dumps(js_numbers(v), ensure_ascii=True, indent=2 if indent else None,
                                            separators=None if indent else (",", ":"), default=str).encode())
        except RecursionError:
            from ..errors import PisessError

            raise PisessError("invalid_value", "a value nests too deeply to print as JSON "
                              "(thousands of levels); the human views show it") from None


# (a literal first: the scan jumps from 'e' to 'e'; a number ends where a value does, which leaves
# out the hex of ids and hashes, 'e' and digits followed by more of them)
_EXPONENT = re.compile(rb"e[+-]?[0-9]+(?=[,\]}\s]|\Z)")
_MANTISSA = frozenset(b"0123456789.")


def js_exponents(out: bytes) -> bytes:
    """Numbers as ``JSON.stringify`` writes them: a double below 1e21 in full digits
    (``12345678901234567000``, not ``1.2345678901234567e+19``), larger ones as ``1e+21``.  Only the
    few places that look like such a number are looked at: one is a number when an even count of
    quotes comes before it (escaped backslashes and quotes blanked first, keeping every offset),
    rather than reading every token of a document to tell strings from numbers."""
    pieces: list = []
    last = quotes = counted = floor = 0
    quotes_of = None
    for mo in _EXPONENT.finditer(out):
        start, low = mo.start(), max(floor, counted)  # (never back into what was counted)
        floor = mo.end()
        while start > low and out[start - 1] in _MANTISSA:
            start -= 1
        if start == mo.start():
            continue  # no digits before the 'e': a word, not a number
        if start > low and out[start - 1] == 45:  # '-'
            start -= 1
        if quotes_of is None:
            from ..js import number_to_string

            quotes_of = out.replace(b"\\\\", b"__").replace(b'\\"', b"__")  # each '"' left opens or closes a string
        quotes += quotes_of.count(b'"', counted, start)
        counted = start
        if quotes % 2:
            continue  # inside a string
        pieces += (out[last:start], number_to_string(float(out[start:mo.end()])).encode())
        last = mo.end()
    if not pieces:
        return out
    pieces.append(out[last:])
    return b"".join(pieces)


def is_blank(raw: bytes) -> bool:
    """``!line.trim()`` on the decoded line."""
    if not raw:
        return True
    first = raw[0]
    if first == 0x7B:  # "{": the common case, never blank
        return False
    if not raw.strip(_ASCII_WS):
        return True
    if raw.lstrip(_ASCII_WS)[:1] in (b"{", b"[", b'"'):
        return False
    return js_blank(raw.decode("utf-8", "replace"))


# Keys the structure needs (tree, leaf, labels, name, compaction stop rules, harness line checks).
# Everything else of an entry is read back from the file by offset when it is needed.
LIGHT_KEYS = ("type", "id", "parentId", "timestamp", "targetId", "label", "name", "firstKeptEntryId",
              "customType", "fromId", "tokensBefore", "activeToolNames", "thinkingLevel", "provider", "modelId")
CHUNK = 8 << 20


class Light(dict):
    """An entry reduced to its structural keys; ``offset``/``length`` locate the full line,
    ``index`` its position in the session's entries."""

    __slots__ = ("offset", "length", "index")
    offset: int
    length: int
    index: int


_LIGHT_SET = frozenset(LIGHT_KEYS)
_SHARED_VALUE_KEYS = frozenset(("type", "id", "parentId", "targetId"))
_shared: dict = {}
_ROLE_STUBS: dict = {}


def lighten(v: Any, offset: int, length: int) -> Any:
    if type(v) is not dict or v.get("type") == "session":
        return v  # headers and non-objects stay as they are
    out = Light()
    for k, x in v.items():
        if k in _LIGHT_SET:
            if type(x) is str and k in _SHARED_VALUE_KEYS:
                # one string object per distinct id and type, not one per line
                x = _shared.setdefault(x, x) if len(_shared) < 4_000_000 else x
            out[k] = x
        elif k == "message":
            if type(x) is dict:
                role = x.get("role", UNDEF_ROLE)
                if role is UNDEF_ROLE:
                    out[k] = {}
                else:
                    # one shared stub per role: the stub is never mutated
                    stub = _ROLE_STUBS.get(role) if type(role) is str else None
                    if stub is None:
                        stub = {"role": role}
                        if type(role) is str and len(_ROLE_STUBS) < 64:
                            _ROLE_STUBS[role] = stub
                    out[k] = stub
            else:
                out[k] = x if not isinstance(x, (str, list)) else type(x)()  # keeps "present" and its type
        elif k == "retainedTail":
            # same truthiness and the same spread behaviour, without the copied messages
            out[k] = [] if type(x) is list else x[:1] if type(x) is str else {} if type(x) is dict else x
    out.offset = offset
    out.length = length
    out.index = -1
    return out


UNDEF_ROLE: Any = object()


@dataclass(slots=True)
class RawLine:
    number: int  # physical line, 1-based
    offset: int  # byte offset of the line's first byte
    length: int  # bytes, without the "\n"
    blank: bool
    value: Any  # parsed JSON (``Light`` for entries of a streamed file), or NOT_JSON; None for blank lines


@dataclass(slots=True)
class RawFile:
    path: str
    size: int
    lines: list[RawLine]
    ends_with_newline: bool
    light: bool = False
    sdk_marker: bool | None = None  # holds an SDK-only record (None: not determined during the scan)
    # How entries read back by offset treat inline images: "whole" (every byte parsed) or "lean"
    # (each image's base64 left in the file, a placeholder in its place: loads_lean; the scan
    # that found the entry parsed its line whole)
    images: str = "whole"
    # line offset -> where the images' base64 lies in the line (``cuts_of``), for lines the
    # scan found them in: read back "lean", such a line is read around them (``images.lean_line``)
    cuts: dict | None = None

    @property
    def nonblank(self) -> list[RawLine]:
        return [ln for ln in self.lines if not ln.blank]

    def read_at(self, offset: int, length: int) -> bytes:
        """Bytes of the file at ``offset`` (the file is re-opened: it is never held open)."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                return fh.read(length)
        except OSError as e:
            raise storage_error(self.path, e, "re-read") from None

    def full(self, entries: list) -> list:
        """The complete parsed values of ``entries`` (``Light`` ones read back by offset)."""
        wanted = [e for e in entries if type(e) is Light]
        if not wanted:
            return list(entries)
        got = {id(e): self.parse_back(e, data) for e, data in self.lines_of(sorted(wanted, key=lambda x: x.offset))}
        return [got.get(id(e), e) for e in entries]

    def lines_of(self, lights: list) -> Iterator[tuple[Any, bytes]]:
        """``(light, bytes of its line)`` for light entries in ascending offset order (one open)."""
        if not lights:
            return
        try:
            fh = open(self.path, "rb")
        except OSError as err:
            raise storage_error(self.path, err, "re-read") from None
        cuts = self.cuts if self.images == "lean" else None
        with fh:
            for e in lights:
                where = cuts.get(e.offset) if cuts else None
                if where:
                    yield e, lean_line(fh, e.offset, e.length, where, self.path)
                    continue
                fh.seek(e.offset)
                yield e, fh.read(e.length)

    def parse_back(self, light: Any, data: bytes) -> Any:
        """The complete value of ``light`` from its line's bytes; a file changed since it was read
        (another entry at that offset) is an I/O condition, not a session defect."""
        from ..errors import PisessError

        if self.images == "whole":
            v = parse_json(data)
        else:
            v = loads_lean(data, light.offset, self.path)
        if type(v) is not dict or v.get("id", None) != light.get("id", None):
            raise PisessError("storage", f"{self.path} changed while it was being read (the entry at byte "
                              f"{light.offset} is not the one read before); run the command again",
                              path=self.path, offset=light.offset)
        return v


def _line(number: int, offset: int, raw: bytes, light: bool, lean: str | None = None) -> RawLine:
    n = len(raw)
    if is_blank(raw):
        return RawLine(number, offset, n, True, None)
    if lean is not None:
        return RawLine(number, offset, n, False, loads_lean(raw, offset, lean))
    if light:
        try:
            v = orjson.loads(raw)
        except orjson.JSONDecodeError:
            v = parse_json(raw)
        except RecursionError:
            v = NOT_JSON
        return RawLine(number, offset, n, False, lighten(v, offset, n))
    return RawLine(number, offset, n, False, parse_json(raw))


def scan_bytes(data: bytes, path: str = "<bytes>") -> RawFile:
    """Split on ``\n`` and parse every non-blank line (all values kept whole)."""
    lines: list[RawLine] = []
    offset = 0
    parts = data.split(b"\n")
    # A trailing "\n" leaves an empty last piece that is not a line.
    if parts and parts[-1] == b"":
        parts.pop()
    append = lines.append
    for number, raw in enumerate(parts, 1):
        append(_line(number, offset, raw, False))
        offset += len(raw) + 1
    return RawFile(path, len(data), lines, data.endswith(b"\n") or not data)


def storage_error(path: str, e: OSError, what: str = "read") -> Any:
    """The ``PisessError`` of an ``OSError`` met reading the session file ``path``."""
    return os_error(path, e, what, subject="session")


def open_fd(path: str) -> tuple[int, os.stat_result]:
    """A read-only descriptor on a regular session file, and its ``fstat`` (``files.open_regular``)."""
    fd, st = open_regular(path, subject="session")
    assert st is not None
    return fd, st


def _open(path: str):
    """A session file opened for reading (see ``open_fd``)."""
    return open_file(path, subject="session")


def first_line_value(path: str) -> Any:
    """The first line parsed (``NOT_JSON`` when it is not JSON, ``None`` when unreadable)."""
    from ..errors import PisessError

    try:
        raw = read_first_line(path)
    except PisessError:
        return None
    return parse_json(raw)


def read_bytes(path: str) -> bytes:
    """Read a session file; I/O failures become ``PisessError`` (``not_found`` / ``storage``)."""
    with _open(path) as fh:
        try:
            return fh.read()
        except OSError as e:
            raise storage_error(path, e) from None


def forget_shared() -> None:
    """``lighten`` shares one string per distinct id and type within one file; a read calls this
    when its file is done."""
    _shared.clear()


def scan_file(path: str, light: bool = True, images: str = "whole") -> RawFile:
    """Every line of ``path``: ``Light`` values, or whole ones (``light=False``); with
    ``images="lean"`` whole values whose images' base64 stays in the file (``loads_lean``)."""
    try:
        return _scan_file(path, light, images)
    finally:
        forget_shared()


def iter_blocks(path: str, tick=None, chunk_size: int | None = None, start: int = 0, stop: int | None = None):
    """``(offset, lines, terminated)`` per block of about 8 MiB (``blocks.line_blocks``): the
    physical lines (split on ``\\n`` only) that end in it, as ``bytes``, ``offset`` the byte offset
    of the first.  Only the last block can be unterminated (a single line without its ``\\n``).
    ``tick(bytes)`` is called after each read.  Per-line work stays in the caller's loop: a
    generator step per line costs as much as the split itself on files of a million short lines.
    ``start``/``stop`` read a byte range (``start`` at a line's first byte)."""
    fd, st = open_fd(path)
    try:
        # (the file's size as the hint: a small file gets a buffer its size, not a zeroed 8 MiB)
        for buf, end, offset in line_blocks(fd, start, stop, chunk_size or CHUNK, tick, size_hint=st.st_size):
            if buf[end - 1] == 10:
                yield offset, _lines(buf, end - 1), True
                continue
            last = buf.rfind(b"\n", 0, end)  # the file's last line has no "\n": a block of its own
            if last >= 0:
                yield offset, _lines(buf, last), True
            yield offset + last + 1, [copy_out(buf, last + 1, end)], False
    except OSError as e:
        raise storage_error(path, e) from None
    finally:
        os.close(fd)


_LONG = 1024  # bytes a line holds on average, from which a loop of finds splits faster than split


def _lines(buf: bytearray, hi: int) -> list[bytes]:
    """The lines of ``buf[:hi]`` (``buf[hi]`` is a newline), split on ``\\n``, as ``bytes``.
    ``bytes.split`` on one byte walks the bytes one at a time, ``find`` runs at ``memchr``'s speed:
    where the lines are long (a screenshot's 400 KB, a file read's tool result) a loop of finds,
    each line copied out of the buffer once, takes half the time or less; where they are short (a
    million small entries) the loop's steps cost more than a copy of the block and its split."""
    k = -1
    find = buf.find
    for _ in range(8):  # where the eighth line ends tells their length
        k = find(b"\n", k + 1, hi)
        if k < 0:
            break
    with memoryview(buf) as mv:
        if 0 <= k < 8 * _LONG:
            return bytes(mv[:hi]).split(b"\n")
        out: list[bytes] = []
        add = out.append
        pos = 0
        while (k := find(b"\n", pos, hi)) >= 0:
            add(bytes(mv[pos:k]))
            pos = k + 1
        add(bytes(mv[pos:hi]))
    return out


def line_start_after(fd: int, pos: int, size: int) -> int | None:
    """The first line start after byte ``pos`` of the open file ``fd`` (of ``size`` bytes), if one
    comes before its end: where a second process may begin to read the file's lines."""
    while pos < size:
        chunk = os.pread(fd, 1 << 16, pos)
        if not chunk:
            return None
        k = chunk.find(b"\n")
        if k >= 0:
            return pos + k + 1 if pos + k + 1 < size else None
        pos += len(chunk)
    return None


def iter_lines(path: str, tick=None, start: int = 0):
    """``(number, offset, raw, terminated)`` for each physical line from byte ``start`` (a line's
    first byte; ``number`` counts from there), see ``iter_blocks``."""
    number = 0
    for offset, parts, terminated in iter_blocks(path, tick, start=start):
        for raw in parts:
            number += 1
            yield number, offset, raw, terminated
            offset += len(raw) + 1


def _scan_file(path: str, light: bool = True, images: str = "whole") -> RawFile:
    lines: list[RawLine] = []
    append = lines.append
    size = 0
    terminated = True
    lean = path if images == "lean" and not light else None
    for number, offset, raw, terminated in iter_lines(path):
        append(_line(number, offset, raw, light, lean))
        size = offset + len(raw) + (1 if terminated else 0)
    out = RawFile(path, size, lines, terminated, light, images="lean" if lean else "whole")
    if light:
        out.sdk_marker = written_by_sdk(ln.value for ln in lines)
    return out
