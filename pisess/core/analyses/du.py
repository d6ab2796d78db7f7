"""Where the bytes of session files are: by entry type and role, by where the entry sits, images.

An entry's size is the length of its line in the file (without the newline), taken from the
compact index (or, for a damaged or legacy file, the line scan); nothing is re-parsed for it.
Lines holding the bytes ``"image"`` are the only ones looked into (for the image count and
bytes), found by a byte search.  The largest entries of the whole set are read back at the end,
by offset, to say what they are.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..listing.sessionset import created_key
from ..model.placement import WHERE, place
from ..reading.images import image_chars
from ..reading.jsonl import NOT_JSON, is_blank, iter_blocks, parse_json
from ..reading.scan import entry_id, file_blocks, open_lenient, scan_visit, session_name
from ..reading.session import Reader, Session, open_indexed

TOP = 10


def images_in(v: Any) -> tuple[int, int]:
    """(count, base64 characters) of the ``{"type": "image", "data": ...}`` blocks anywhere in ``v``."""
    count = size = 0
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("type") == "image" and isinstance(x.get("data"), str):
                count += 1
                size += image_chars(x["data"])[0]
                continue
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return count, size


def kind_of(e: Any) -> tuple[str, str | None]:
    """(entry type, message role or None), both as display-safe strings."""
    t = get(e, "type") if isinstance(e, dict) else UNDEF
    t_s = t if isinstance(t, str) else ("(none)" if t is UNDEF else js.to_string(t))
    if t == "message":
        m = get(e, "message")
        role = get(m, "role") if isinstance(m, dict) else UNDEF
        return t_s, role if isinstance(role, str) else ("(none)" if role is UNDEF else js.to_string(role))
    return t_s, None


@dataclass(frozen=True)
class BigEntry:
    path: str
    session_id: Any
    entry_id: Any
    line: int
    offset: int
    bytes: int
    type: str
    role: str | None
    where: str
    images: int = 0
    image_bytes: int = 0
    tool: str | None = None  # toolResult's toolName
    detail: str | None = None  # what it is, in a few words (plain text, not escaped)
    id_width: int = 8  # characters of the entry id a view shows (its session's Session.id_width)

    def to_json(self) -> dict:
        return {"sessionId": self.session_id, "path": self.path, "entryId": self.entry_id, "line": self.line,
                "bytes": self.bytes, "type": self.type, "role": self.role, "where": self.where,
                "toolName": self.tool, "imageCount": self.images, "imageBytes": self.image_bytes, "detail": self.detail}


@dataclass(frozen=True)
class SessionUsage:
    path: str
    id: Any
    name: str | None
    cwd: Any
    created_at: Any
    reader: Reader
    size: int  # the file
    entries: int
    entry_bytes: int
    header_bytes: int
    other_bytes: int  # newlines, blank and unreadable lines, later headers
    where: dict  # active | edited | retained | compacted | branch -> bytes
    where_entries: dict  # active | retained | compacted | branch -> entries
    kinds: list  # [{"type", "role", "entryCount", "bytes"}], biggest first
    images: dict  # {"count", "bytes"}
    largest: BigEntry | None
    note: str | None = None
    dropped_lines: list = field(default_factory=list)  # {line, reason} of each line the reader dropped

    def to_json(self) -> dict:
        return {"path": self.path, "id": self.id, "name": self.name, "cwd": self.cwd, "createdAt": self.created_at,
                "reader": self.reader, "size": self.size, "entryCount": self.entries, "entryBytes": self.entry_bytes,
                "headerBytes": self.header_bytes, "otherBytes": self.other_bytes, "where": self.where,
                "entryCountByWhere": self.where_entries, "byKind": self.kinds, "images": self.images,
                "largest": self.largest.to_json() if self.largest else None, "droppedLines": self.dropped_lines}


@dataclass(frozen=True)
class DuReport:
    sessions: list  # SessionUsage, biggest file first
    size: int
    entries: int
    entry_bytes: int
    header_bytes: int
    other_bytes: int
    where: dict
    where_entries: dict
    kinds: list
    images: dict
    top: list  # BigEntry, biggest first
    skipped: list
    # the entries of a second file of one session id (pi #11060) its first file holds: counted there
    shared: dict = field(default_factory=lambda: {"entryCount": 0, "bytes": 0, "files": []})

    def to_json(self) -> dict:
        return {"sessionCount": len(self.sessions), "size": self.size, "entryCount": self.entries,
                "sharedWithSameId": self.shared,
                "entryBytes": self.entry_bytes, "headerBytes": self.header_bytes, "otherBytes": self.other_bytes,
                "where": self.where, "entryCountByWhere": self.where_entries, "byKind": self.kinds, "images": self.images,
                "top": [b.to_json() for b in self.top], "sessions": [s.to_json() for s in self.sessions],
                "skipped": [e.to_dict() for e in self.skipped]}


def _kinds_json(kinds: dict) -> list:
    rows = [{"type": t, "role": r, "entryCount": n, "bytes": b} for (t, r), (n, b) in kinds.items()]
    rows.sort(key=lambda x: (-x["bytes"], x["type"], x["role"] or ""))
    return rows


def disk_usage(paths: list[str], *, reader: str = "auto", top: int = TOP, tick: Callable[[int], None] | None = None,
               on_skip: Callable[[PisessError], None] | None = None, pi_version: str = versions.CURRENT) -> DuReport:
    from ..reading import cache

    sessions: list[SessionUsage] = []
    skipped: list = []
    largest = _Largest(top)
    totals = _Totals()
    seconds = _second_files(paths)
    shared_total = [0, 0]
    for path in paths:
        try:  # "du2": a kept value holds the byKind rows under the document's version 2 names
            if path in seconds:  # counted without the entries its first file holds (not kept: it depends on both)
                fields, kinds, biggest = _file_usage(path, reader, top, tick, pi_version,
                                                     _ids_of(seconds[path], reader, pi_version), shared_total)
            else:
                fields, kinds, biggest = cache.summary(path, f"du2:{reader}:{pi_version}:{top}",
                                                       functools.partial(_file_usage, path, reader, top, tick,
                                                                         pi_version))
        except PisessError as e:
            if e.code in ("storage", "not_found") and on_skip is None:
                raise
            skipped.append(e)
            if on_skip is not None:
                on_skip(e)
            continue
        values = list(fields)  # SessionUsage's fields in order, its largest entry as BigEntry's
        if values[15] is not None:
            values[15] = BigEntry(*values[15])
        usage = SessionUsage(*values)
        # the file's own largest entries, in file order: the set's largest are among them, and
        # offered in the same order they end the same as when every entry was offered
        for big in biggest:
            if largest.wants(big[5]):
                largest.add(big[5], BigEntry(*big))
        sessions.append(usage)
        totals.add(usage, dict(kinds))
    described = _describe(largest.biggest())
    sessions.sort(key=lambda s: (-s.size, created_key({"timestamp": s.created_at})))
    shared = {"entryCount": shared_total[0], "bytes": shared_total[1],
              "files": [{"path": p, "sameIdAs": q} for p, q in seconds.items()]}
    return replace(totals.report(sessions, described, skipped), shared=shared)


def _second_files(paths: list[str]) -> dict[str, str]:
    """The files of ``paths`` holding a session id an earlier one holds too -> that first file."""
    from ..reading.scan import header_of
    from .stats import second_files

    by_id: dict[str, list[str]] = {}
    for p in paths:
        hid = (header_of(p) or {}).get("id")
        if isinstance(hid, str) and hid:
            by_id.setdefault(hid, []).append(p)
    return second_files(by_id)


def _ids_of(path: str, reader: str, pi_version: str) -> set:
    """The string ids of a file's entries (empty when it cannot be read: nothing is shared then)."""
    try:
        got = _read_indexed(path, reader, None, pi_version) or _read_scanned(path, reader, None, pi_version)
    except PisessError:
        return set()
    return {i for i in got[0].store.string_ids() if i is not None}


Kind = tuple[str, str | None]  # (entry type, message role), see kind_of
# (position, line, offset, bytes, kind, (images, base64 bytes) or None): one entry of a file
Row = tuple[int, int, int, int, Kind, tuple[int, int] | None]
Read = tuple[Session, str | None, int, Iterator[Row]]  # (session, note, header bytes, rows), see _usage


class _Largest:
    """The ``top`` biggest entries of the whole set (a heap, smallest first; of equal sizes the
    one met first ranks first)."""

    def __init__(self, top: int) -> None:
        self.top = top
        self.heap: list = []  # (bytes, -seq, BigEntry), at most ``top``
        self.seq = 0

    def wants(self, size: int) -> bool:
        return self.top > 0 and (len(self.heap) < self.top or size > self.heap[0][0])

    def add(self, size: int, big: BigEntry) -> None:
        self.seq += 1
        (heapq.heappush if len(self.heap) < self.top else heapq.heapreplace)(self.heap, (size, -self.seq, big))

    def biggest(self) -> list[BigEntry]:
        return [b for _, _, b in sorted(self.heap, key=lambda x: (-x[0], -x[1]))]


def _file_usage(path: str, reader: str, top: int, tick: Callable[[int], None] | None, pi_version: str,
                shared: set | None = None, shared_total: list | None = None) -> tuple:
    """One file's figures as plain values (what the cache keeps of it): the ``SessionUsage``
    fields (``largest`` as a tuple of ``BigEntry``'s fields), its ``(kind, (entries, bytes))`` pairs
    and its ``top`` largest entries (``BigEntry`` tuples) in file order.  ``shared``: the ids of
    the entries another file of the same session holds, counted there (their count and bytes are
    added to ``shared_total``, and are in none of the file's figures but its size)."""
    session, note, header_bytes, rows = _read_indexed(path, reader, tick, pi_version) or \
        _read_scanned(path, reader, tick, pi_version)
    mine = [0, 0]  # this file's entries counted in its first file
    if shared:
        rows = _unshared(rows, session.store.string_ids(), shared, mine)
    pl = place(session, branches=False)
    h = session.header if isinstance(session.header, dict) else {}
    sid = h.get("id")
    kinds: dict = {}
    where = dict.fromkeys(WHERE, 0)
    where_n = dict.fromkeys(WHERE, 0)
    entry_bytes = 0
    n_img = img_bytes = 0
    biggest: tuple | None = None
    no_image = (0, 0)
    heap: list = []  # (bytes, -position, row) smallest first: ties keep the earlier entry, as the set's heap does
    counted = 0
    for i, number, offset, size, k, found in rows:
        counted += 1
        entry_bytes += size
        c = kinds.get(k)
        kinds[k] = (1, size) if c is None else (c[0] + 1, c[1] + size)
        w = pl.where[i]
        where[w] += size
        where_n[w] += 1
        im = found or no_image
        n_img += im[0]
        img_bytes += im[1]
        if biggest is None or size > biggest[0]:
            biggest = (size, i, number, offset, k, im)
        if top > 0 and (len(heap) < top or size > heap[0][0]):
            (heapq.heappush if len(heap) < top else heapq.heapreplace)(heap, (size, -i, (i, number, offset, size, k, w, im)))
    width = session.id_width

    def big(i: int, number: int, offset: int, size: int, k: Kind, w: str, im: tuple) -> tuple:
        return (path, sid, entry_id(session.entries[i]), number, offset, size, k[0], k[1], w, im[0], im[1], None, None,
                width)

    big_one = None
    if biggest is not None:
        size, i, number, offset, k, im = biggest
        big_one = big(i, number, offset, size, k, pl.where[i], im)
    other = max(0, session.raw.size - entry_bytes - mine[1] - header_bytes)
    if shared_total is not None:
        shared_total[0] += mine[0]
        shared_total[1] += mine[1]
    fields = (path, sid, session_name(session), h.get("cwd"), h.get("timestamp"), session.reader,
              session.raw.size, counted, entry_bytes, header_bytes, other, where, where_n,
              _kinds_json(kinds), {"count": n_img, "bytes": img_bytes}, big_one, note, list(session.dropped_lines))
    return fields, list(kinds.items()), [big(*row) for _, _, row in sorted(heap, key=lambda x: -x[1])]


class _Totals:
    """The sums over the files read."""

    def __init__(self) -> None:
        self.kinds: dict = {}
        self.where = dict.fromkeys(WHERE, 0)
        self.where_entries = dict.fromkeys(WHERE, 0)
        self.images = [0, 0]
        self.size = self.entries = self.entry_bytes = self.header_bytes = self.other_bytes = 0

    def add(self, usage: SessionUsage, kinds: dict) -> None:
        for k, (n, b) in kinds.items():
            c = self.kinds.get(k, (0, 0))
            self.kinds[k] = (c[0] + n, c[1] + b)
        for w in WHERE:
            self.where[w] += usage.where[w]
            self.where_entries[w] += usage.where_entries[w]
        self.images[0] += usage.images["count"]
        self.images[1] += usage.images["bytes"]
        self.size += usage.size
        self.entries += usage.entries
        self.entry_bytes += usage.entry_bytes
        self.header_bytes += usage.header_bytes
        self.other_bytes += usage.other_bytes

    def report(self, sessions: list, top: list, skipped: list) -> DuReport:
        return DuReport(sessions, self.size, self.entries, self.entry_bytes, self.header_bytes, self.other_bytes,
                        self.where, self.where_entries, _kinds_json(self.kinds),
                        {"count": self.images[0], "bytes": self.images[1]}, top, skipped)


def _unshared(rows: Iterator[Row], ids: Any, shared: set, total: list) -> Iterator[Row]:
    for row in rows:
        if ids[row[0]] in shared:
            total[0] += 1
            total[1] += row[3]
            continue
        yield row


def _read_scanned(path: str, reader: str, tick: Callable[[int], None] | None,
                  pi_version: str = versions.CURRENT) -> Read:
    """The line scan (damaged, legacy and refused files), images found as the scan parses each line."""
    images: dict[int, tuple[int, int]] = {}

    def visit(number: int, v: Any, raw: bytes) -> None:
        if IMAGE in raw:
            got = images_in(v)
            if got[0]:
                images[number] = got

    raw = scan_visit(path, visit, tick)
    session, note = open_lenient(path, reader, raw, pi_version=pi_version)
    lines = raw.lines
    return _usage(session, note, {lines[n - 1].offset: got for n, got in images.items()})


def _read_indexed(path: str, reader: str, tick: Callable[[int], None] | None,
                  pi_version: str = versions.CURRENT) -> Read | None:
    """A clean file through its compact index (``None``: not one), images from a byte search for
    ``"image"``; no entry object is built but for the entries that are not plain messages."""
    session = open_indexed(path, reader, pi_version=pi_version)
    if session is None:
        return None
    return _usage(session, None, _image_lines(path, tick))


def _usage(session: Session, note: str | None, images: dict) -> Read:
    """``(session, note, header bytes, rows)``, a row per entry: ``(position, line, offset, bytes,
    kind, images or None)``; sizes and offsets come from the store, ``images`` by line offset."""
    store = session.store
    offsets, lengths = store.spans()
    numbers = store.lines
    plain_role = store.plain_role
    header_bytes = _header_bytes(session.path, offsets[0] if len(offsets) else session.raw.size) \
        if session.header is not None else 0

    def rows() -> Iterator[Row]:
        for i in range(len(offsets)):
            role = plain_role(i)
            off = offsets[i]
            yield (i, numbers[i], off, lengths[i], ("message", role) if role is not None else kind_of(store[i]),
                   images.get(off))

    return session, note, header_bytes, rows()


def _header_bytes(path: str, before: int) -> int:
    """The length of the header line: the first non-blank line before byte ``before`` (the first
    entry's offset) that is a ``session`` object.  Only those bytes are read."""
    for _, parts, _ in iter_blocks(path, chunk_size=1 << 16, stop=before):
        for raw in parts:
            if not is_blank(raw):
                v = parse_json(raw)
                if isinstance(v, dict) and v.get("type") == "session":
                    return len(raw)
    return 0


IMAGE = b'"image"'  # lines without these bytes hold no image block (the line scan's test too)


def _image_lines(path: str, tick: Callable[[int], None] | None) -> dict[int, tuple[int, int]]:
    """``offset -> (images, base64 bytes)`` of the lines that hold ``"image"`` and an image block,
    found by a byte search over the file (lines are parsed only where the bytes are)."""
    out: dict[int, tuple[int, int]] = {}
    for buf, end, base in file_blocks(path, tick, BLOCK):
        p = buf.find(IMAGE, 0, end)
        while p >= 0:
            start = buf.rfind(b"\n", 0, p) + 1
            stop = buf.find(b"\n", p, end)
            stop = end if stop < 0 else stop
            v = parse_json(bytes(buf[start:stop]))
            if v is not NOT_JSON:
                got = images_in(v)
                if got[0]:
                    out[base + start] = got
            p = buf.find(IMAGE, stop, end)
    return out


BLOCK = 8 << 20


def _describe(entries: list) -> list:
    """Read back each entry by offset and say what it is; one that changed meanwhile stays as is."""
    out = []
    for b in entries:
        try:
            with open(b.path, "rb") as fh:
                fh.seek(b.offset)
                v = parse_json(fh.read(b.bytes))
        except OSError:
            out.append(b)
            continue
        if not isinstance(v, dict) or js.to_string(v.get("id")) != js.to_string(b.entry_id):
            out.append(b)
            continue
        tool, detail = describe(v)
        out.append(BigEntry(b.path, b.session_id, b.entry_id, b.line, b.offset, b.bytes, b.type, b.role, b.where,
                            b.images, b.image_bytes, tool, detail, b.id_width))
    return out


def describe(v: dict) -> tuple[str | None, str]:
    """(tool name, a few words) for a complete entry."""
    t = v.get("type")
    if t == "message":
        msg = v.get("message")
        m = msg if isinstance(msg, dict) else {}
        role = m.get("role")
        if role == "toolResult":
            name = m.get("toolName")
            name = name if isinstance(name, str) else js.to_string(name)
            return name, f"{name} result" + (" (error)" if m.get("isError") is True else "")
        if role == "bashExecution":
            cmd = m.get("command")
            return None, f"$ {cmd if isinstance(cmd, str) else js.to_string(cmd)}"
        if role == "assistant":
            blocks = m.get("content")
            content = blocks if isinstance(blocks, list) else []
            kinds = {b.get("type") for b in content if isinstance(b, dict)}
            calls = [b.get("name") for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
            parts = [k for k in ("text", "thinking") if k in kinds]
            if calls:
                parts.append(f"{len(calls)} tool call{'s' if len(calls) != 1 else ''}: "
                             + ", ".join(c if isinstance(c, str) else js.to_string(c) for c in calls[:5])
                             + (", \u2026" if len(calls) > 5 else ""))
            return None, " + ".join(parts) or "empty"
        if role in ("custom", "hookMessage"):
            return None, f"[{js.to_string(m.get('customType'))}]"
        if role == "user":
            return None, "user message"
        return None, f"{role if isinstance(role, str) else '?'} message"
    if t == "compaction":
        tail = v.get("retainedTail")
        return None, "summary" + (f" + retainedTail of {len(tail)} messages" if isinstance(tail, list) else "")
    if t == "custom_message":
        return None, f"[{js.to_string(v.get('customType'))}]"
    if t == "custom":
        return None, f"{js.to_string(v.get('customType'))} state"
    return None, t if isinstance(t, str) else "?"
