"""One pass over a session file's bytes: physical lines, offsets, parsed JSON values.

Both of pi's readers split on ``\\n`` only (U+2028, U+2029 and U+0085 are ordinary characters
inside strings), decode invalid UTF-8 as U+FFFD, and parse with ``JSON.parse``.  This module does
that once; the harness and cli readers then apply their own rules to the same lines.
"""

from __future__ import annotations

import json
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
    """An entry reduced to its structural keys; ``offset``/``length`` locate the full line."""

    __slots__ = ("offset", "length")


def lighten(v: Any, offset: int, length: int) -> Any:
    if type(v) is not dict or v.get("type") == "session":
        return v  # headers and non-objects stay as they are
    out = Light()
    for k in LIGHT_KEYS:
        if k in v:
            out[k] = v[k]
    if "retainedTail" in v:
        rt = v["retainedTail"]
        # same truthiness and the same spread behaviour, without the copied messages
        out["retainedTail"] = [] if type(rt) is list else rt[:1] if type(rt) is str else {} if type(rt) is dict else rt
    if "message" in v:
        m = v["message"]
        if type(m) is dict:
            out["message"] = {"role": m["role"]} if "role" in m else {}
        else:
            out["message"] = m if not isinstance(m, (str, list)) else type(m)()  # keeps "present" and its type
    out.offset = offset
    out.length = length
    return out


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
        except OSError as e:
            raise PisessError("storage", f"Failed to re-read {self.path}: {e.strerror or e}", path=self.path) from None
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
    from .errors import PisessError

    try:
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
    """One streaming pass over the file in 8 MiB chunks.

    With ``light`` (the default) entries keep only their structural keys (``Light``), so memory
    grows with the number of entries, not with the bytes; ``RawFile.full`` reads back the few
    entries a command shows.  The whole file is never held in memory.
    """
    from .errors import PisessError

    lines: list[RawLine] = []
    append = lines.append
    number = 0
    offset = 0
    pending: list[bytes] = []
    last_byte = b""
    with _open(path) as fh:
        while True:
            try:
                chunk = fh.read(CHUNK)
            except OSError as e:
                raise PisessError("storage", f"Failed to read session {path}: {e.strerror or e}", path=path) from None
            if not chunk:
                break
            last_byte = chunk[-1:]
            if pending and b"\n" not in chunk:
                pending.append(chunk)
                continue
            if pending:
                pending.append(chunk)
                chunk = b"".join(pending)
                pending = []
            parts = chunk.split(b"\n")
            tail = parts.pop()
            for raw in parts:
                number += 1
                append(_line(number, offset, raw, light))
                offset += len(raw) + 1
            if tail:
                pending = [tail]
    if pending:
        raw = b"".join(pending)
        number += 1
        append(_line(number, offset, raw, light))
        offset += len(raw)
    return RawFile(path, offset, lines, last_byte == b"\n" or offset == 0, light)
