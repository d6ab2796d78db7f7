"""One pass over a session file's bytes: physical lines, offsets, parsed JSON values.

Both of pi's readers split on ``\\n`` only (U+2028, U+2029 and U+0085 are ordinary characters
inside strings), decode invalid UTF-8 as U+FFFD, and parse with ``JSON.parse``.  This module does
that once; the harness and cli readers then apply their own rules to the same lines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import orjson

from .deepjson import loads as deep_loads
from .js import js_blank


class _Bad:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not JSON>"


NOT_JSON: Any = _Bad()
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


def dumps(v: Any, indent: bool = False) -> bytes:
    """``JSON.stringify`` as pi's output would read: integers beyond 2**53 are doubles (rounded),
    NaN and Infinity are null, lone surrogates are escaped.  The common case costs one orjson call:
    big integers are found by orjson's strict-integer check, not by scanning every line."""
    opt = orjson.OPT_STRICT_INTEGER | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(v, option=opt)
    except TypeError as e:
        if "Integer" in str(e):
            return dumps(js_numbers(v), indent)
        try:
            return json.dumps(js_numbers(v), ensure_ascii=True, indent=2 if indent else None,
                              separators=None if indent else (",", ":"), default=str).encode()
        except RecursionError:
            from .errors import PisessError

            raise PisessError("invalid_value", "a value nests too deeply to print as JSON "
                              "(thousands of levels); the human views show it") from None


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
SDK_TYPES = ("leaf", "active_tools_change")


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

    @property
    def nonblank(self) -> list[RawLine]:
        return [ln for ln in self.lines if not ln.blank]

    def read_at(self, offset: int, length: int) -> bytes:
        """Bytes of the file at ``offset`` (the file is re-opened: it is never held open)."""
        from .errors import PisessError

        try:
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                return fh.read(length)
        except OSError as e:
            raise PisessError("storage", f"Failed to re-read {self.path}: {e.strerror or e}", path=self.path) from None

    def full(self, entries: list) -> list:
        """The complete parsed values of ``entries`` (``Light`` ones read back by offset)."""
        from .errors import PisessError

        wanted = [e for e in entries if type(e) is Light]
        if not wanted:
            return list(entries)
        got: dict = {}
        try:
            fh = open(self.path, "rb")
        except OSError as err:
            raise PisessError("storage", f"Failed to re-read {self.path}: {err.strerror or err}",
                              path=self.path) from None
        with fh:
            for e in sorted(wanted, key=lambda x: x.offset):
                fh.seek(e.offset)
                v = parse_json(fh.read(e.length))
                if type(v) is not dict or v.get("id", None) != e.get("id", None):
                    raise PisessError("storage", f"{self.path} changed while it was being read (the entry at byte "
                                      f"{e.offset} is not the one read before); run the command again",
                                      path=self.path, offset=e.offset)
                got[id(e)] = v
        return [got.get(id(e), e) for e in entries]


def _line(number: int, offset: int, raw: bytes, light: bool) -> RawLine:
    n = len(raw)
    if is_blank(raw):
        return RawLine(number, offset, n, True, None)
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


def _open(path: str):
    """Open a session file for reading; anything but a regular file (a FIFO would block forever,
    ``/dev/zero`` never ends) is refused before it is opened."""
    import stat as st_

    from .errors import PisessError

    try:
        mode = os.stat(path).st_mode
        if st_.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory")
        if not st_.S_ISREG(mode):
            raise PisessError("storage", f"Failed to read session {path}: not a regular file", path=path)
        return open(path, "rb")
    except FileNotFoundError:
        raise PisessError("not_found", f"Session not found: {path}", path=path) from None
    except IsADirectoryError:
        raise PisessError("storage", f"Failed to read session {path}: is a directory", path=path) from None
    except OSError as e:
        raise PisessError("storage", f"Failed to read session {path}: {e.strerror or e}", path=path) from None


def read_bytes(path: str) -> bytes:
    """Read a session file; I/O failures become ``PisessError`` (``not_found`` / ``storage``)."""
    from .errors import PisessError

    with _open(path) as fh:
        try:
            return fh.read()
        except OSError as e:
            raise PisessError("storage", f"Failed to read session {path}: {e.strerror or e}", path=path) from None


def scan_file(path: str, light: bool = True) -> RawFile:
    # Parsed JSON holds no reference cycles, yet allocating millions of containers triggers the
    # cyclic collector over and over (half the time on a 1,000,000-entry file).
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _scan_file(path, light)
    finally:
        _shared.clear()
        gc.freeze()  # later collections need not walk what the scan made
        if enabled:
            gc.enable()


def iter_blocks(path: str, tick=None, chunk_size: int = CHUNK, start: int = 0, stop: int | None = None):
    """``(offset, lines, terminated)`` per chunk of about 8 MiB: the physical lines (split on
    ``\\n`` only) that end in it, ``offset`` the byte offset of the first.  Only the last block
    can be unterminated (a single line without its ``\\n``).  ``tick(bytes)`` is called after each
    chunk.  Per-line work stays in the caller's loop: a generator step per line costs as much as
    the split itself on files of a million short lines.  ``start``/``stop`` read a byte range
    (``start`` at a line's first byte)."""
    from .errors import PisessError

    offset = start
    pending: list[bytes] = []
    with _open(path) as fh:
        if start:
            fh.seek(start)
        left = -1 if stop is None else stop - start
        while left:
            try:
                chunk = fh.read(chunk_size if left < 0 else min(chunk_size, left))
                left -= len(chunk) if left > 0 else 0
            except OSError as e:
                raise PisessError("storage", f"Failed to read session {path}: {e.strerror or e}", path=path) from None
            if not chunk:
                break
            if tick:
                tick(len(chunk))
            if pending and b"\n" not in chunk:
                pending.append(chunk)
                continue
            if pending:
                pending.append(chunk)
                chunk = b"".join(pending)
                pending = []
            parts = chunk.split(b"\n")
            tail = parts.pop()
            if parts:
                yield offset, parts, True
                offset += len(chunk) - len(tail)
            if tail:
                pending = [tail]
    if pending:
        yield offset, [b"".join(pending)], False


def iter_lines(path: str, tick=None):
    """``(number, offset, raw, terminated)`` for each physical line (see ``iter_blocks``)."""
    number = 0
    for offset, parts, terminated in iter_blocks(path, tick):
        for raw in parts:
            number += 1
            yield number, offset, raw, terminated
            offset += len(raw) + 1


def _scan_file(path: str, light: bool = True) -> RawFile:
    lines: list[RawLine] = []
    append = lines.append
    size = 0
    terminated = True
    for number, offset, raw, terminated in iter_lines(path):
        append(_line(number, offset, raw, light))
        size = offset + len(raw) + (1 if terminated else 0)
    out = RawFile(path, size, lines, terminated, light)
    if light:
        out.sdk_marker = _sdk_marker(lines)
    return out


def _sdk_marker(lines: list[RawLine]) -> bool:
    """Any record only pi's SDK writes: a ``leaf`` or ``active_tools_change`` entry, a compaction
    with a ``retainedTail`` key, or a header with ``metadata``."""
    first = True
    for ln in lines:
        v = ln.value
        tv = type(v)
        if tv is Light:
            first = False
            t = v.get("type")
            if t in SDK_TYPES or (t == "compaction" and "retainedTail" in v):
                return True
        elif tv is dict:
            if first and v.get("type") == "session":
                if "metadata" in v:
                    return True
            elif v.get("type") in SDK_TYPES:
                return True
            first = False
    return False
