"""One pass over a session file's bytes: physical lines, offsets, parsed JSON values.

Both of pi's readers split on ``\\n`` only (U+2028, U+2029 and U+0085 are ordinary characters
inside strings), decode invalid UTF-8 as U+FFFD, and parse with ``JSON.parse``.  This module does
that once; the harness and cli readers then apply their own rules to the same lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from .js import js_blank


class _Bad:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not JSON>"


NOT_JSON: Any = _Bad()
_BIG_INT = re.compile(rb"\d{16}")
_ASCII_WS = b" \t\r\n\x0b\x0c"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _js_numbers(v: Any) -> Any:
    """JS has only doubles: integers beyond 2**53 lose precision exactly as pi's do."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return float(v) if abs(v) > 2**53 else v
    if isinstance(v, list):
        return [_js_numbers(x) for x in v]
    if isinstance(v, dict):
        return {k: _js_numbers(x) for k, x in v.items()}
    return v


def parse_json(raw: bytes) -> Any:
    """``JSON.parse`` of one line (after U+FFFD decoding); ``NOT_JSON`` when it throws."""
    try:
        v = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses what JSON.parse accepts: invalid UTF-8 (pi decodes it to U+FFFD),
        # lone surrogate escapes, numbers that overflow to Infinity.
        try:
            v = json.loads(raw.decode("utf-8", "replace"), parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return NOT_JSON
    except RecursionError:
        return NOT_JSON
    if _BIG_INT.search(raw):
        v = _js_numbers(v)
    return v


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


@dataclass(slots=True)
class RawLine:
    number: int  # physical line, 1-based
    offset: int  # byte offset of the line's first byte
    length: int  # bytes, without the "\n"
    blank: bool
    value: Any  # parsed JSON, or NOT_JSON; None for blank lines


@dataclass(slots=True)
class RawFile:
    path: str
    size: int
    lines: list[RawLine]
    ends_with_newline: bool

    @property
    def nonblank(self) -> list[RawLine]:
        return [ln for ln in self.lines if not ln.blank]


def scan_bytes(data: bytes, path: str = "<bytes>") -> RawFile:
    """Split on ``\\n`` and parse every non-blank line."""
    lines: list[RawLine] = []
    offset = 0
    parts = data.split(b"\n")
    # A trailing "\n" leaves an empty last piece that is not a line.
    if parts and parts[-1] == b"":
        parts.pop()
    append = lines.append
    for number, raw in enumerate(parts, 1):
        n = len(raw)
        if is_blank(raw):
            append(RawLine(number, offset, n, True, None))
        else:
            append(RawLine(number, offset, n, False, parse_json(raw)))
        offset += n + 1
    return RawFile(path, len(data), lines, data.endswith(b"\n") or not data)


def read_bytes(path: str) -> bytes:
    """Read a session file; I/O failures become ``PisessError`` (``not_found`` / ``storage``)."""
    from .errors import PisessError

    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise PisessError("not_found", f"Session not found: {path}", path=path) from None
    except IsADirectoryError:
        raise PisessError("storage", f"Failed to read session {path}: is a directory", path=path) from None
    except OSError as e:
        raise PisessError("storage", f"Failed to read session {path}: {e.strerror or e}", path=path) from None


def scan_file(path: str) -> RawFile:
    return scan_bytes(read_bytes(path), path)
