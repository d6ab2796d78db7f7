"""The raw reads ``search``, ``stats`` and ``du`` share: one streaming scan of a file.

``scan_visit`` reads a file once, in chunks, like ``jsonl.scan_file``: each entry line is parsed
once, handed complete to a visitor (usage, images...), then kept light.  Memory grows with the
number of entries, not with bytes.  ``file_blocks`` hands the file over in blocks of whole lines,
``read_small`` a small file whole; ``open_lenient`` opens a session as pi's command does when the
chosen reader refuses it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import orjson

from .. import versions
from ..errors import PisessError
from ..js import UNDEF, get
from .blocks import line_blocks
from .jsonl import (
    NOT_JSON,
    RawFile,
    RawLine,
    first_line_value,
    is_blank,
    iter_lines,
    lighten,
    open_fd,
    parse_json,
    storage_error,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .session import Session

    Visitor = Callable[[int, Any, bytes], None]


def file_blocks(path: str, tick: Callable[[int], None] | None, block: int) -> Iterator[tuple[bytearray, int, int]]:
    """``blocks.line_blocks`` of the session file ``path``: ``(buffer, end, offset)``, whole lines in
    ``buffer[:end]`` from file offset ``offset``; one buffer reused.  Failures are ``PisessError``."""
    fd, st = open_fd(path)
    try:
        yield from line_blocks(fd, block=block, tick=tick, size_hint=st.st_size)  # (as iter_blocks)
    except OSError as e:
        raise storage_error(path, e) from None
    finally:
        os.close(fd)


def read_small(path: str, limit: int) -> bytes | None:
    """The file's ``st_size`` first bytes when that is at most ``limit``, else ``None`` (nothing
    read).  What is appended meanwhile is left for the next run."""
    fd, st = open_fd(path)
    try:
        size = st.st_size
        if size > limit:
            return None
        data = os.read(fd, size) if size else b""
        if len(data) < size:  # a short read: collect the rest
            parts = [data]
            got = len(data)
            while got < size:
                b = os.read(fd, size - got)
                if not b:
                    break
                parts.append(b)
                got += len(b)
            data = b"".join(parts)
        return data
    except OSError as e:
        raise storage_error(path, e) from None
    finally:
        os.close(fd)


def parse_line(raw: bytes) -> Any:
    """The line parsed exactly as ``jsonl.scan_file`` parses it."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json(raw)
    except RecursionError:
        return NOT_JSON


def scan_visit(path: str, visit: Visitor | None = None, tick: Callable[[int], None] | None = None) -> RawFile:
    """One pass: every non-blank line parsed, ``visit(number, value, raw)`` called on each parsed
    value, then the value kept light (as ``scan_file(path, light=True)`` keeps it)."""
    lines: list[RawLine] = []
    append = lines.append
    size = 0
    last_nl = True
    for number, offset, raw, terminated in iter_lines(path, tick):
        n = len(raw)
        size = offset + n + terminated
        last_nl = terminated
        if is_blank(raw):
            append(RawLine(number, offset, n, True, None))
            continue
        v = parse_line(raw)
        if visit is not None and v is not NOT_JSON:
            visit(number, v, raw)
        append(RawLine(number, offset, n, False, lighten(v, offset, n)))
    return RawFile(path, size, lines, last_nl, True)


def open_lenient(path: str, reader: str, raw: RawFile | None,
                 pi_version: str = versions.CURRENT) -> tuple[Session, str | None]:
    """``open_session``; when the chosen reader refuses the file, the pi command's lenient reader
    (with a note saying so).  Raises when neither reads it.  Without ``raw`` the file is read
    light (structure only, see ``open_session``)."""
    from .session import open_read  # (imported on first use: a warm search through the index opens no session)

    return open_read(path, reader, raw, light=raw is None, lenient=True, pi_version=pi_version)


def header_of(path: str) -> dict | None:
    """The first line as a header object (``type: session``), or ``None``; never raises and never
    opens anything but a regular file."""
    v = first_line_value(path)
    return v if isinstance(v, dict) and v.get("type") == "session" else None


def entry_id(e: Any) -> Any:
    v = get(e, "id") if isinstance(e, dict) else UNDEF
    return None if v is UNDEF else v


def session_name(session: Session) -> str | None:
    try:
        return session.session_name()
    except PisessError:
        return None
