"""What pi's command lists about a file (``buildSessionInfo``, spec §8.2 and C.20), and the
whole-file facts of ``ls --long`` (name, message count, branches, last activity).

pi's listing reads every line of every file.  ``read_cli_info`` gives pi's answer for the
listing (the header and the last activity) from the header and the file's end whenever the
lines read prove it (see ``tail_activity``), and reads the whole file otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import js
from ..errors import PisessError
from ..js import UNDEF, get
from ..reading.blocks import line_blocks
from ..reading.files import open_regular, os_error
from ..reading.jsonl import NOT_JSON, RawFile, loads_lean, parse_json
from ..reading.sdk_v4 import SDK_V4, is_sdk_v4_header  # noqa: F401 - named here for the listing
from ..reading.session import open_cli

# Node's readline (pi's listing reads lines with it) ends a line at "\r\n", "\n" or a lone "\r".
_EOL = re.compile(rb"\r\n|\r|\n")

TAIL = 2 * 1024  # the first read at the end of a file; it grows (x4) while the lines read prove nothing

_EPOCH = None


def line_time(ts: Any) -> float | int | None:
    """``new Date(ts).getTime()`` of an entry's string ``timestamp`` (``None``: not a string, or
    NaN); pi's own ``toISOString`` form is read without the general parser."""
    if type(ts) is not str:
        return None
    if len(ts) == 24 and ts[23] == "Z" and ts[10] == "T" and ts[19] == ".":
        global _EPOCH
        from datetime import datetime, timezone

        try:
            d = datetime.fromisoformat(ts[:23] + "+00:00")
        except ValueError:
            return js.date_ms(ts)  # e.g. Feb 30, which V8 rolls over into March
        if _EPOCH is None:
            _EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
        delta = d - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return js.date_ms(ts)


class PiThrows(Exception):
    """pi's ``buildSessionInfo`` throws a TypeError on this line: its listing leaves the file out."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _number(v: Any) -> bool:
    return type(v) in (int, float)


def activity_time(entry: Any) -> float | int | None:
    """pi's ``getMessageActivityTime`` of a ``message`` entry: ``message.timestamp`` when it is a
    number, else the entry's parsed ``timestamp``, for user/assistant messages with a ``content``
    key; ``None`` otherwise.  A message entry without a ``message`` object throws in pi."""
    m = entry.get("message", UNDEF) if type(entry) is dict else get(entry, "message")
    if m is None or m is UNDEF:
        raise PiThrows("a message entry without a message")
    if type(m) is not dict or type(m.get("role")) is not str or "content" not in m:
        return None
    if m["role"] != "user" and m["role"] != "assistant":
        return None
    t = m.get("timestamp")
    if _number(t):
        return t
    ts = get(entry, "timestamp")
    return line_time(ts) if type(ts) is str else js.date_ms(ts)


def listed_text(m: dict) -> str:
    """pi's ``extractTextContent`` (user/assistant messages with ``content``): string content, or
    the ``text`` of the text blocks joined with a space; throws where pi does."""
    c = m["content"]
    if type(c) is str:
        return c
    if type(c) is not list:
        raise PiThrows(f"message content is {'null' if c is None else js.to_string(c)[:20]}, not text or blocks")
    out = []
    for b in c:
        if b is None:
            raise PiThrows("a null content block")
        if type(b) is dict and b.get("type") == "text":
            t = b.get("text", UNDEF)
            out.append("" if t is None or t is UNDEF else js.to_string(t))
    return " ".join(out)


def check_listed_text(m: dict) -> None:
    """``listed_text``'s throws, without building the text."""
    c = m["content"]
    if type(c) is not str and (type(c) is not list or None in c):
        listed_text(m)


def listed_name(entry: Any) -> str | None:
    """``entry.name?.trim() || undefined`` of a ``session_info`` entry."""
    n = get(entry, "name")
    if n is None or n is UNDEF:
        return None
    if type(n) is not str:
        raise PiThrows("a session_info name that is not a string")
    return js.js_trim(n) or None


@dataclass
class CliInfo:
    """One file as pi's command lists it.  ``read`` says how much pisess read for it: ``file``
    (every line: every field is pi's) or ``tail`` (the header and the end: only ``last_activity``
    is known, and is pi's under the assumption ``tail_activity`` states)."""

    header: dict
    last_activity: float | int | None  # Math.max over the activity times, 0 included; None: none found
    mtime_ms: float
    size: int
    read: str
    name: str | None = None
    message_count: int | None = None
    first_message: str | None = None
    all_messages_text: str | None = None
    details: dict | None = None  # ``summarize_file``'s dict, read in the same pass (``read_cli_info(details=True)``)

    def modified_ms(self) -> float | int | None:
        """pi's ``modified``: last activity if > 0, else the header time, else the file mtime."""
        a = self.last_activity
        if a is not None and a > 0:
            return js.date_ms(a)
        t = line_time(self.header.get("timestamp"))
        if t is not None:
            return t
        return js.date_ms(int(self.mtime_ms + 0.5))  # Node's stats.mtime: the ms value rounded


@dataclass
class CliSkip:
    """A file pi's command leaves out of its listing, and why."""

    code: str
    reason: str


def _lines(data: bytes) -> list[bytes]:
    """``data`` split where Node's ``readline`` ends a line: ``\\r\\n``, ``\\r`` or ``\\n`` (as
    ``_EOL.split``).  Split on ``\\n`` first, at ``memchr``'s speed, then each piece that holds a
    ``\\r``: a regular expression walks a screenshot's base64 a character at a time."""
    pieces = data.split(b"\n")
    if b"\r" not in data:
        return pieces
    out: list[bytes] = []
    last = len(pieces) - 1
    for k, p in enumerate(pieces):
        if b"\r" not in p:
            out.append(p)
            continue
        if k < last and p.endswith(b"\r"):
            p = p[:-1]  # "\r\n": one end
        out += p.split(b"\r")
    return out


def _value(line: bytes, lean: str | None = None) -> Any:
    """``parseSessionEntryLine`` and ``if (!entry) continue``: the value, or ``None`` when skipped.
    ``lean``: the file's path, images' base64 left unread (``jsonl.loads_lean``; the listing reads
    no image)."""
    if not line or (line[:1] != b"{" and js.js_blank(line.decode("utf-8", "replace"))):
        return None
    v = parse_json(line) if lean is None else loads_lean(line, 0, lean)
    if v is NOT_JSON or not js.truthy(v):
        return None
    return v


class _Whole:
    """pi's ``buildSessionInfo`` loop after the header, line by line."""

    def __init__(self, texts: bool = True) -> None:
        self.want_texts = texts  # firstMessage and allMessagesText (only --long shows them)
        self.name: str | None = None
        self.count = 0
        self.first = ""
        self.texts: list[str] = []
        self.last: float | int | None = None

    def feed(self, e: Any) -> None:
        t = e.get("type") if type(e) is dict else get(e, "type")
        if t == "session_info":
            self.name = listed_name(e)
        if t != "message":
            return
        self.count += 1
        a = activity_time(e)
        if a is not None:
            self.last = max(self.last if self.last is not None else 0, a)
        m = e["message"]
        if type(m) is not dict or type(m.get("role")) is not str or "content" not in m \
                or m["role"] not in ("user", "assistant"):
            return
        if not self.want_texts:
            check_listed_text(m)
            return
        text = listed_text(m)
        if not text:
            return
        self.texts.append(text)
        if not self.first and m["role"] == "user":
            self.first = text


_BLOCK = 8 << 20


def _stream_lines(fd: int, start: int, size: int) -> Iterator[bytes]:
    """The lines of bytes ``start:size`` as ``_lines`` splits them, read a block of whole lines at a
    time (``blocks.line_blocks``: a file of gigabytes is never held whole; a ``\\r\\n`` is never cut
    in two, a block ends after a ``\\n``)."""
    for buf, end, _ in line_blocks(fd, start, size, _BLOCK):
        with memoryview(buf) as mv:
            data = bytes(mv[:end])
        lines = _lines(data)
        if data.endswith(b"\n"):
            lines.pop()  # (the empty piece after the block's last "\n")
        yield from lines


def _read_at(fd: int, n: int, offset: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = os.pread(fd, n - got, offset + got)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def _header(fd: int, size: int) -> tuple[Any, int]:
    """The first value pi's listing parses (blank, malformed and falsy lines before it skipped),
    and the offset after its line; ``(None, size)`` when there is none."""
    pos, pending, n = 0, b"", 4096
    while True:
        chunk = _read_at(fd, n, pos)
        eof = not chunk
        pos += len(chunk)
        data = pending + chunk
        start = 0
        for m in _EOL.finditer(data):
            v = _value(data[start:m.start()])
            if v is not None:
                return v, pos - len(data) + m.end()
            start = m.end()
        pending = data[start:]
        if eof:
            v = _value(pending)
            return (v, size) if v is not None else (None, size)
        n = 65536


CHECKED = 8  # entries read from the end at least, to see a clock that went back just before the end


def tail_activity(fd: int, size: int, start: int, header: dict, tail: int | None = None) -> float | int | None | bool:
    """The newest message time (pi's ``lastActivityTime``), read from the end of the file.

    Assumes what an append-only file written by a forward-running clock gives: entry timestamps
    never decrease from line to line, and a message is written after it was made (its activity
    time is not later than its entry's timestamp).  Lines are read back from the end; once one
    is stamped at or before the newest message time found after it, no earlier line can hold a
    newer one.  At least ``CHECKED`` entries are read (all of them in a short file), and the
    window grows while nothing proves the answer.

    Returns ``False`` when the lines read contradict the assumption (a line stamped later than
    the one after it, a message newer than its own entry, a line older than the header of a
    session that is not a fork): the caller then reads the whole file.  Throws ``PiThrows`` for
    a line read that makes pi's listing fail."""
    fork = "parentSession" in header
    created = line_time(header.get("timestamp"))
    window = tail or TAIL
    while True:
        lo = max(start, size - window)
        lines = _lines(_read_at(fd, size - lo, lo))
        if lo > start:
            lines = lines[1:]  # the first piece may begin mid-line
        best: float | int | None = None
        later: float | int | None = None  # the time of the nearest later line that has one
        bound, checked = False, 0
        for line in reversed(lines):
            e = _value(line)
            if e is None:
                continue
            t = e.get("type") if type(e) is dict else get(e, "type")
            if t == "session_info":
                listed_name(e)
            ts = line_time(e.get("timestamp")) if type(e) is dict else None
            if t == "message":
                a = activity_time(e)
                m = e["message"]
                if type(m) is dict and m.get("role") in ("user", "assistant") and "content" in m:
                    check_listed_text(m)
                if a is not None:
                    if ts is None or a > ts:
                        return False  # its time is not bounded by its line's: nothing bounds the lines before
                    best = a if best is None else max(best, a)
            if ts is not None:
                if later is not None and ts > later:
                    return False  # the clock went backwards between these lines
                if not fork and created is not None and ts < created:
                    return False  # older than the session itself
                later = ts
                bound = bound or (best is not None and ts <= best)
            checked += 1
            if bound and best is not None and checked >= CHECKED:  # (bound: best is set)
                return max(best, 0)
        if lo <= start:
            return None if best is None else max(best, 0)  # every line was read
        if bound and best is not None:
            return max(best, 0)  # fewer, longer lines: the window held the proof
        window *= 4


SCAN_MIN = 1 << 20  # files read whole from this size on through ``wholescan`` (its images' base64 neither copied nor parsed)
HEAD = 4096  # the first read: the header line, and all of a small file
WHOLE = 8 * 1024  # files up to this size are read whole: as cheap as their end, and pi's answer in full


def read_cli_info(path: str, *, whole: bool = False, tail: int | None = None,
                  activity: bool = True, details: bool = False) -> CliInfo | CliSkip:
    """pi's ``buildSessionInfo`` for one file: a ``CliInfo``, or a ``CliSkip`` where pi's listing
    leaves the file out (no session header, an I/O error, a line pi's code throws on).

    Small files and ``whole`` are read completely (every field is pi's); otherwise only the
    header and as much of the end as ``tail_activity`` needs.  ``activity=False``: the header
    only (``last_activity`` unknown, ``read`` is ``header``).  ``details`` (with ``whole``): also
    the file's ``ls --long`` details (``summarize_file``'s), read in the same pass."""
    try:
        fd, st = open_regular(path)
    except PisessError as e:
        if os.path.isdir(path):
            return CliSkip("not_a_file", "a directory")
        return CliSkip(e.code, e.reason)
    assert st is not None
    try:
        size = st.st_size
        mtime_ms = st.st_mtime_ns // 1_000_000_000 * 1e3 + (st.st_mtime_ns % 1_000_000_000) / 1e6
        first = os.read(fd, HEAD)
        nl = first.find(b"\n")
        header = _value(first[:nl]) if nl >= 0 and b"\r" not in first[:nl] else None
        if header is not None:  # the common first line: "{...}\n"
            end = nl + 1
        else:
            header, end = _header(fd, size)
        if header is None:
            return CliSkip("invalid_session", "no JSON line in the file" if size else "empty file")
        if get(header, "type") != "session":
            if is_sdk_v4_header(header):
                return CliSkip("invalid_session", SDK_V4)
            return CliSkip("invalid_session", "first parsed line is not a session header")
        if not activity:
            return CliInfo(header, None, mtime_ms, size, "header")
        found = None
        try:
            tail = tail or TAIL
            if not whole and size > max(WHOLE, end + tail):
                last = tail_activity(fd, size, end, header, tail)
                if last is not False:
                    return CliInfo(header, last, mtime_ms, size, "tail")
            acc = _Whole(texts=whole)
            if details and whole:
                found = _read_whole(path, fd, size, first, end, acc)
            elif len(first) >= size and end <= len(first):
                _feed(acc, _lines(first[end:]), path)  # the first read held the whole file
            elif size < SCAN_MIN:
                _feed(acc, _stream_lines(fd, end, size), path)
            else:
                _read_whole(path, fd, size, first, end, acc, keep=False)
        except PiThrows as e:
            return CliSkip("invalid_entry", f"pi's listing fails on it ({e.reason}) and leaves it out")
        if not whole:
            return CliInfo(header, acc.last, mtime_ms, size, "file", acc.name, acc.count)
        return CliInfo(header, acc.last, mtime_ms, size, "file", acc.name, acc.count, acc.first or "(no messages)",
                       " ".join(acc.texts), found)
    except OSError as e:
        err = os_error(path, e)
        return CliSkip(err.code, err.reason)
    finally:
        os.close(fd)


def _feed(acc: _Whole, lines: Iterable[bytes], path: str) -> None:
    """pi's listing loop over ``lines`` (after the header)."""
    for line in lines:
        entry = _value(line, path)
        if entry is not None:
            acc.feed(entry)


def _read_whole(path: str, fd: int, size: int, first: bytes, end: int, acc: _Whole,
                keep: bool = True) -> dict | None:
    """One read of the whole file feeding pi's listing loop ``acc`` with the lines after the
    header (which ends at byte ``end``) and, with ``keep``, the file's ``ls --long`` details from
    the same lines (``wholescan.read_lines``, ``summarize``); without ``keep`` (``None``) only what
    the listing reads of each line (``wholescan.Skim``: the images' base64 skipped).  Where a
    line holds a ``\r`` (pi's listing ends a line there too) the listing's loop starts again on the
    lines as pi reads them.  Raises ``PiThrows`` where pi's listing fails (the details are then of
    no use), and ``OSError``."""
    from ..reading.wholescan import Skim, read_lines

    if keep:
        raw, first_cr = read_lines(path, fd, size, first)
        if first_cr is None:
            _feed_values(acc, raw.lines, end)
        else:  # (before the header too: its end may then be inside that line)
            _feed(acc, _stream_lines(fd, end, size), path)
        return summarize(raw)
    skim = Skim(fd, end, size, first[end:])
    feed, truthy = acc.feed, js.truthy
    for _, v in skim:
        if v is not NOT_JSON and truthy(v):
            feed(v)
    if skim.first_cr is not None:
        fresh = _Whole(texts=acc.want_texts)
        _feed(fresh, _stream_lines(fd, end, size), path)
        acc.__dict__.update(fresh.__dict__)
    return None


def _feed_values(acc: _Whole, lines: Iterable[Any], end: int) -> None:
    """pi's listing loop over the scan's lines (``RawLine``) from byte ``end`` on."""
    feed, truthy = acc.feed, js.truthy
    for ln in lines:
        if ln.offset >= end:
            v = ln.value
            if v is not None and v is not NOT_JSON and truthy(v):
                feed(v)


LS_LONG = "ls-long3"  # the cache's kind of ``summarize_file``'s values: ls's document version 2 names


def details_of(sessions: Iterable[Any]) -> dict[str, dict]:
    """``ls --long``'s details of each listed session (``SessionInfo``), by path: those the listing
    read in its own pass over the file (``SessionInfo.details``), else the whole file's
    ``summarize_file``, kept per directory while each file's stat is unchanged (``cache.by_stat``),
    so an unchanged file is not read again (the kind, ``LS_LONG``, changes with the names it holds)."""
    from ..reading.cache import by_stat

    out: dict[str, dict] = {}
    paths = []
    for s in sessions:
        found = getattr(s, "details", None)  # read by the listing's own pass (``list_sessions(details=True)``)
        if found is not None:
            out[s.path] = found
        else:
            paths.append(s.path)
    out.update(zip(paths, by_stat(paths, LS_LONG, lambda todo: [summarize_file(p) for p in todo])))
    return out


def summarize_file(path: str) -> dict:
    """Read with the lenient reader; a file pi cannot read gives ``{"error": ...}``.  Images'
    base64 is neither copied nor parsed (``wholescan.WholeScan``, the lines ``scan_file(path,
    light=False, images="lean")`` gives): a session of screenshots is listed in the memory of its
    text, at about the speed of a search of its bytes."""
    from ..reading.jsonl import open_fd, storage_error
    from ..reading.wholescan import read_lines

    try:
        fd, st = open_fd(path)
        try:
            raw = read_lines(path, fd, st.st_size)[0]
        except OSError as e:
            raise storage_error(path, e) from None
        finally:
            os.close(fd)
    except PisessError as err:
        return {"error": {"code": err.code, "message": err.message}}
    return summarize(raw)


def summarize(raw: RawFile) -> dict:
    """``summarize_file`` of the lines read (``RawFile``, whole values)."""
    try:
        s = open_cli(raw)
    except PisessError as err:
        return {"error": {"code": err.code, "message": err.message}}
    messages = 0
    last_activity = None
    children: dict = {}
    first_user = None
    for e in s.entries:
        if get(e, "type") == "message":
            messages += 1
            m = get(e, "message")
            if isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m:
                t = m.get("timestamp")
                t = t if isinstance(t, (int, float)) and not isinstance(t, bool) else js.date_ms(get(e, "timestamp"))
                if t is not None and (last_activity is None or t > last_activity):
                    last_activity = t
                if first_user is None and m.get("role") == "user":
                    first_user = message_text(m)
        pid = get(e, "parentId")
        if js.truthy(pid) and s.lookup(pid) is not None:
            k = js.key(pid)
            children[k] = children.get(k, 0) + 1
    try:
        name = s.session_name()
    except PisessError:
        name = None
    return {
        # several sessions in one file (pi's /new before pi PR #649): the headers after the first,
        # of other ids, each start one; pi reads them all as one session (validate: several_sessions)
        "sessionCount": _session_count(raw, s.header),
        "name": name,
        "messageCount": messages,
        "entryCount": len(s.entries),
        "branchPointCount": sum(1 for n in children.values() if n > 1),
        "lastActivity": _iso(last_activity),
        "firstMessage": first_user,
        "leafId": None if s.leaf_id is UNDEF else s.leaf_id,
    }


def _session_count(raw: RawFile, header: Any) -> int:
    first = get(header, "id") if isinstance(header, dict) else UNDEF
    n = 1
    seen_header = False
    for ln in raw.lines:
        v = ln.value
        if type(v) is dict and v.get("type") == "session":
            if seen_header and not js.strict_eq(v.get("id"), first):
                n += 1
            seen_header = True
    return n


def _iso(ms: Any) -> str | None:
    """``new Date(ms).toISOString()``, ``None`` for an invalid date (pi's oracle prints null)."""
    t = js.date_ms(ms) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None
    return js.iso_utc(t) if t is not None else None


def message_text(m: dict) -> str:
    """Text of a message: string content, or its text blocks joined with a space."""
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return " ".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"
                        and isinstance(b.get("text"), str))
    return ""
