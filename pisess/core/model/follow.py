"""Follow one session file as pi appends to it: the appended bytes, read once, turned into events.

pi never rewrites a session in normal use: every event is one ``JSON.stringify(entry) + "\\n"``
appended with one ``appendFileSync`` (spec §3.1), so a file is read from where the last read
stopped (``Tail`` keeps the offset and never re-reads what it has read).  What else can happen:

* a line without its newline yet is pi in the middle of a write: it is held back, not an entry
  and not damage, until it is completed, or until it has stayed incomplete for ``LIVE_SECONDS``
  (validate's ``in_progress_tail`` rule), when it is reported as damage once;
* the file shrinks, is replaced (another inode), or the bytes just before the offset or at the
  start of the file change (pi rewrites a migrated v1/v2 file in place; a user restores a copy):
  it is read again from the start and reported ``rewritten`` (a change further inside a file of
  the same size is not looked for: that would mean re-reading it);
* the file disappears: ``deleted``, and its reappearance is a rewrite;
* damage (a line pi would drop or refuse) is an event with its line; following goes on.

``Watch.poll`` stats the file once per call, so following costs a ``stat`` per interval while
nothing happens, whatever the size of the file.  Nothing here reads the clock: callers pass
``now`` (seconds).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import js
from ..ids import PrefixWidth
from ..reading.jsonl import NOT_JSON, is_blank, parse_json
from .writers import WriterRule

LIVE_SECONDS = 10.0  # as validate's in_progress_tail: pi finishes a line well within this
GUARD = 256  # bytes before the offset (and at the start) compared to notice a rewrite
READ_CHUNK = 8 << 20


@dataclass(frozen=True)
class Event:
    """One thing that happened to the file.  ``kind``: ``entry``, ``branch``, ``leaf_moved``,
    ``compaction``, ``branch_summary``, ``model``, ``thinking``, ``label``, ``context_edit``,
    ``session_name``, ``concurrent_writers``, ``damage``, ``rewritten``, ``deleted``."""

    kind: str
    line: int | None = None
    offset: int | None = None
    data: dict = field(default_factory=dict)
    entry: Any = None  # the appended entry (``entry`` and meaning events)

    def to_json(self) -> dict:
        out: dict = {"event": self.kind}
        if self.line is not None:
            out["line"] = self.line
        if self.offset is not None:
            out["offset"] = self.offset
        out.update(self.data)
        return out


# --- bytes ---------------------------------------------------------------------------------


@dataclass
class Chunk:
    """What one read of the tail found."""

    lines: list = field(default_factory=list)  # (physical line, offset, bytes without "\n")
    rewritten: str | None = None  # why the file must be read again from the start
    deleted: bool = False
    pending: int = 0  # bytes of an incomplete last line held back
    count: int = 0  # complete lines read


class Tail:
    """The unread end of one file.  ``offset`` is the byte after the last complete line read."""

    def __init__(self, path: str, stat: Callable[[str], Any] = os.stat) -> None:
        self.path = path
        self._stat = stat
        self.offset = 0
        self.line = 0  # physical lines read
        self._sig: tuple | None = None  # (size, mtime_ns, inode) of the last look
        self._guard = b""  # the GUARD bytes before offset
        self._head = b""  # the first GUARD bytes of the file
        self._ino: int | None = None
        self.missing = False

    def reset(self) -> None:
        self.offset = self.line = 0
        self._guard = self._head = b""
        self._sig = None

    def start_at(self, offset: int, line: int) -> None:
        """Go on from a read made elsewhere: ``offset`` (a line end) and the ``line`` physical lines
        before it were read; the bytes that tell a rewrite are taken from the file as it is now."""
        self.reset()
        try:
            st = self._stat(self.path)
            with open(self.path, "rb") as fh:
                self._head = fh.read(min(GUARD, offset))
                start = max(0, offset - GUARD)
                fh.seek(start)
                self._guard = fh.read(offset - start)
        except OSError:
            self.missing = True
            return
        self._ino = st.st_ino
        self.offset, self.line = offset, line

    def read(self, sink: Callable[[int, int, bytes], None] | None = None,
             on_rewrite: Callable[[], None] | None = None) -> Chunk:
        """What changed since the last read.  Complete lines go to ``sink(line, offset, bytes)`` as
        they are split (a 1 GB first read is not held in memory), or into ``Chunk.lines``;
        ``on_rewrite`` is called before the lines of a file read again from the start."""
        out = Chunk()
        try:
            st = self._stat(self.path)
        except FileNotFoundError:
            if not self.missing:
                self.missing = True
                out.deleted = True
            return out
        except OSError:
            return out
        sig = (st.st_size, st.st_mtime_ns, st.st_ino)
        if sig == self._sig:
            return out
        if self.missing:
            self.missing = False
            out.rewritten = "the file was created again"
        elif self._ino is not None and st.st_ino != self._ino:
            out.rewritten = "the file was replaced by another one"
        elif st.st_size < self.offset:
            out.rewritten = f"the file shrank from {self.offset:,} to {st.st_size:,} bytes"
        self._sig = sig
        self._ino = st.st_ino
        try:
            with open(self.path, "rb") as fh:
                if out.rewritten is None and self.offset:
                    if self._changed(fh):
                        out.rewritten = "bytes before the last read position changed"
                if out.rewritten is not None:
                    self.reset()
                    self._sig = sig
                    if on_rewrite is not None:
                        on_rewrite()
                self._read_lines(fh, out, sink)
        except FileNotFoundError:
            self.missing = True
            out.deleted = True
        return out

    def _changed(self, fh) -> bool:
        start = max(0, self.offset - len(self._guard))
        fh.seek(start)
        if fh.read(self.offset - start) != self._guard:
            return True
        fh.seek(0)
        return fh.read(len(self._head)) != self._head

    def _read_lines(self, fh, out: Chunk, sink: Callable[[int, int, bytes], None] | None) -> None:
        take = sink if sink is not None else (lambda n, at, raw: out.lines.append((n, at, raw)))
        out.count = 0
        fh.seek(self.offset)
        rest = b""
        at = self.offset
        while True:
            block = fh.read(READ_CHUNK)
            if not block:
                break
            data = rest + block
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            for raw in data[:cut].split(b"\n"):
                self.line += 1
                take(self.line, at, raw)
                at += len(raw) + 1
                out.count += 1
            rest = data[cut + 1:]
        if at != self.offset:
            if not self._head or len(self._head) < GUARD:
                fh.seek(0)
                self._head = fh.read(min(GUARD, at))
            self.offset = at
            fh.seek(max(0, at - GUARD))
            self._guard = fh.read(at - max(0, at - GUARD))
        out.pending = len(rest)


# --- meaning -------------------------------------------------------------------------------


def _num(v: Any) -> float | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


def _context_bytes(e: dict) -> int:
    """What an entry adds to ``context``'s token estimate (JSON bytes of the message / 4)."""
    t = e.get("type")
    if t == "message":
        v = e.get("message")
    elif t == "custom_message":
        v = e.get("content")
    elif t in ("branch_summary", "compaction"):
        v = e.get("summary")
    else:
        return 0
    try:
        return len(orjson.dumps(v))
    except TypeError:
        return len(str(v))


@dataclass
class _Node:
    line: int
    offset: int
    parent: Any
    own: int  # what the entry itself adds to the context estimate
    ctx: int  # context bytes with this entry as the leaf


class SessionState:
    """The tree as appends build it: each line in, the events it means out (spec §3, §5)."""

    def __init__(self, cost_of: Callable[[dict], float | None] | None = None) -> None:
        self.header: dict | None = None
        self.nodes: dict = {}  # id -> _Node (last occurrence wins, as pi's byId)
        self.id_prefix = PrefixWidth()  # how many characters of an id the rows show (ids.unique_prefix_width)
        self.with_children: set = set()
        self.branching: set = set()  # ids with more than one child: tree's branch points
        self.leaf: Any = None  # where pi's next append goes (cli: the last entry)
        self.last_type: Any = None
        self.entries = 0
        self.cost = 0.0
        self.name: str | None = None
        self.model: str | None = None
        self.thinking: str | None = None
        self.last_line: int | None = None
        self.recent: list = []  # (line, entry) of the last few entries, for the summary
        self._cost_of = cost_of
        self._writers = WriterRule()
        self._nonblank = 0
        self._leaf_target: tuple | None = None
        self.damaged = 0

    @property
    def id_width(self) -> int:
        """Characters of an entry id the rows show: the fewest, at least 8, that tell the ids seen so far apart."""
        return self.id_prefix.width

    @property
    def branches(self) -> int:
        """Tips: entries no other entry continues."""
        return sum(1 for k in self.nodes if k not in self.with_children)

    @property
    def branch_points(self) -> int:
        """Entries with more than one child, as ``tree`` counts them."""
        return len(self.branching)

    def context_tokens(self) -> int:
        node = self.nodes.get(self.leaf) if isinstance(self.leaf, str) else None
        return (node.ctx if node else 0) // 4

    def feed(self, line: int, offset: int, raw: bytes) -> list[Event]:
        """The events of one complete physical line."""
        if is_blank(raw):
            return []
        self._nonblank += 1
        v = parse_json(raw)
        if v is NOT_JSON:
            glued = raw.find(b'}{"') > 0
            code = "glued_line" if glued else "invalid_json"
            what = ("two entries glued without a newline" if glued else "not valid JSON")
            return [self._damage(code, f"line {line} is {what}: pi's SDK refuses the file; the pi command "
                                       "silently drops this line", line, offset)]
        if not js.truthy(v):
            return [self._damage("falsy_line", f"line {line} holds {js.to_string(v)}: the pi command drops it",
                                 line, offset)]
        if isinstance(v, dict) and v.get("type") == "session":
            if self.header is None and self._nonblank == 1:
                self.header = v
                return []
            return [self._damage("duplicate_header", f"line {line} is a second session header: pi's SDK refuses "
                                 "the file; the pi command ignores it", line, offset)]
        out: list[Event] = []
        if self.header is None and self._nonblank == 1:
            out.append(self._damage("missing_header", "the first line is not a session header: pi reads no "
                                    "session from this file", line, offset))
        from ..reading.session import check_harness_entry

        reason = check_harness_entry(v)
        if reason is not None:
            out.append(self._damage("invalid_entry", f"line {line} {reason} (pi's SDK refuses the file)", line, offset))
            if not isinstance(v, dict) or not isinstance(v.get("id"), str):
                return out
        out.extend(self._entry(v, line, offset))
        return out

    def _damage(self, code: str, message: str, line: int, offset: int) -> Event:
        self.damaged += 1
        return Event("damage", line, offset, {"code": code, "message": message})

    def _entry(self, e: dict, line: int, offset: int) -> list[Event]:
        eid, pid, etype = e.get("id"), e.get("parentId"), e.get("type")
        m = e.get("message")
        role = m.get("role") if etype == "message" and isinstance(m, dict) else None
        parent = self.nodes.get(pid) if isinstance(pid, str) else None
        data = {"id": eid, "parentId": pid, "type": etype, "role": role}
        out = [Event("entry", line, offset, data, e)]
        had_children = isinstance(pid, str) and pid in self.with_children
        prev_leaf = self.leaf
        # pi's SDK continues from a leaf record's target; the pi command from the record itself
        target = self._leaf_target
        if self.entries and pid != prev_leaf and not (target is not None and pid == target[0]) \
                and etype != "branch_summary":
            if pid is None:
                out.append(Event("branch", line, offset, {"id": eid, "from": None, "previousLeaf": prev_leaf,
                                                          "newRoot": True}, e))
            elif parent is None:
                out.append(self._damage("dangling_parent", f"entry {eid} has parent {js.to_string(pid)}, which is "
                                        "not in the file", line, offset))
            elif had_children:
                out.append(Event("branch", line, offset, {"id": eid, "from": pid, "previousLeaf": prev_leaf,
                                                          "newRoot": False}, e))
            else:
                out.append(Event("leaf_moved", line, offset, {"id": eid, "to": pid, "previousLeaf": prev_leaf,
                                                              "tip": True}, e))
        out.extend(self._meaning(e, etype, line, offset))
        own = _context_bytes(e)
        ctx = own + (self._kept_bytes(e) if etype == "compaction" else parent.ctx if parent else 0)
        self.nodes[eid] = _Node(line, offset, pid, own, ctx)
        self.id_prefix.add(eid)
        if isinstance(pid, str):
            if had_children:
                self.branching.add(pid)
            self.with_children.add(pid)
        self._leaf_target = None
        if etype == "leaf":
            t = e.get("targetId")
            self._leaf_target = (t,)
            self.leaf = eid  # the pi command continues from the record itself (§5.3)
            out.append(Event("leaf_moved", line, offset, {"id": eid, "to": t if isinstance(t, str) else None,
                                                          "previousLeaf": prev_leaf, "tip": False}, e))
        else:
            self.leaf = eid
        self.entries += 1
        self.last_type = etype
        self.last_line = line
        self.recent.append((line, e))
        del self.recent[:-8]
        if self._cost_of is not None:
            c = self._cost_of(e)
            if c:
                self.cost += c
        alt = self._writers.add(e, line)
        if alt is not None:
            out.append(Event("concurrent_writers", line, offset, alt.to_json()))
        return out

    def _kept_bytes(self, e: dict) -> int:
        """Context bytes of what a compaction keeps: its path from ``firstKeptEntryId`` on."""
        first = e.get("firstKeptEntryId")
        total, cur, steps = 0, e.get("parentId"), 0
        while isinstance(cur, str) and steps < 1_000_000:
            node = self.nodes.get(cur)
            if node is None:
                return 0
            total += node.own
            if cur == first:
                return total
            cur, steps = node.parent, steps + 1
        return 0  # nothing kept (retain-none, or the kept entry is not on the path)

    def _meaning(self, e: dict, etype: Any, line: int, offset: int) -> list[Event]:
        if etype == "compaction":
            return [Event("compaction", line, offset, {"id": e.get("id"), "tokensBefore": _num(e.get("tokensBefore")),
                                                       "firstKeptEntryId": e.get("firstKeptEntryId")}, e)]
        if etype == "branch_summary":
            return [Event("branch_summary", line, offset, {"id": e.get("id"), "at": e.get("parentId"),
                                                           "fromId": e.get("fromId")}, e)]
        if etype == "model_change":
            self.model = f"{js.to_string(e.get('provider'))}/{js.to_string(e.get('modelId'))}"
            return [Event("model", line, offset, {"id": e.get("id"), "provider": e.get("provider"),
                                                  "modelId": e.get("modelId")}, e)]
        if etype == "thinking_level_change":
            self.thinking = js.to_string(e.get("thinkingLevel"))
            return [Event("thinking", line, offset, {"id": e.get("id"), "thinkingLevel": e.get("thinkingLevel")}, e)]
        if etype == "label":
            lbl = e.get("label")
            return [Event("label", line, offset, {"id": e.get("id"), "targetId": e.get("targetId"),
                                                  "label": lbl if js.truthy(lbl) else None}, e)]
        if etype == "context_edit":
            r = e.get("replacement", None)
            return [Event("context_edit", line, offset, {"id": e.get("id"), "targetId": e.get("targetId"),
                                                         "omits": r is None}, e)]
        if etype == "session_info":
            name = e.get("name")
            self.name = js.js_trim(name) or None if isinstance(name, str) else None
            return [Event("session_name", line, offset, {"id": e.get("id"), "name": self.name}, e)]
        if etype == "message" and isinstance(e.get("message"), dict):
            m = e["message"]
            if m.get("role") == "assistant" and m.get("model") is not None:
                self.model = f"{js.to_string(m.get('provider'))}/{js.to_string(m.get('model'))}"
        return []


# --- the two together ------------------------------------------------------------------------


class Watch:
    """One followed file: ``start`` reads what is there (no events but damage), each ``poll``
    returns what was appended since, as events."""

    def __init__(self, path: str, *, cost_of: Callable[[dict], float | None] | None = None,
                 stat: Callable[[str], Any] = os.stat, live_seconds: float = LIVE_SECONDS) -> None:
        self.path = path
        self.tail = Tail(path, stat)
        self._cost_of = cost_of
        self.state = SessionState(cost_of)
        self._live = live_seconds
        self._pending_since: float | None = None
        self._pending_reported = False
        self.last_append: float | None = None

    def start_json(self) -> dict:
        """The ``start`` event of ``watch --json``: what the file holds when the watch begins."""
        s = self.state
        h = s.header or {}
        return {"event": "start", "path": self.path, "sessionId": h.get("id"), "entryCount": s.entries,
                "branchCount": s.branches, "leafId": s.leaf, "line": s.last_line, "offset": self.tail.offset,
                "name": s.name, "contextTokens": s.context_tokens(), "cost": s.cost}

    def switched_json(self) -> dict:
        """The ``switched`` event: the watch follows this file now (a newer session of the project)."""
        return {"event": "switched", "path": self.path}

    def start(self, now: float) -> list[Event]:
        """Read the file as it is; only damage is returned (the rest is the summary's).  Where the
        cache kept the state at an earlier end of this file, only what came after it is read."""
        from ..reading import cache

        got = cache.resume(self.path, "watch")
        if got is not None:
            try:
                damage = self._restore(got[1])
            except (ValueError, TypeError, KeyError, OSError):  # another shape of state: read from the start
                Watch.__init__(self, self.path, cost_of=self._cost_of, stat=self.tail._stat, live_seconds=self._live)
            else:
                if self.tail.offset == got[0]:
                    out = damage + self._read(now, quiet=True)
                    if self.tail.offset - got[0] > cache.REFRESH_AFTER:
                        self._keep(out)
                    return out
                Watch.__init__(self, self.path, cost_of=self._cost_of, stat=self.tail._stat, live_seconds=self._live)
        out = self._read(now, quiet=True)
        self._keep(out)
        return out

    def _keep(self, out: list) -> None:
        from ..reading import cache

        if not self.tail.missing:
            fields = _fields_of(self.state, "_cost_of")
            try:
                # the last entries as where they are (read again from the file), not their text
                fields["recent"] = [(line, self.state.nodes[e["id"]].offset) for line, e in fields["recent"]]
                if any(self.state.nodes[e["id"]].line != line for line, e in self.state.recent):
                    return
                state = _plain((self._tail_state(), fields, out))
            except (ValueError, KeyError, TypeError):  # a value the cache cannot hold: nothing kept
                return
            cache.keep(self.path, "watch", self.tail.offset, state)

    def _tail_state(self) -> tuple:
        t = self.tail
        return t.offset, t.line, t._guard, t._head, t._ino

    def _restore(self, plain: Any) -> list[Event]:
        (offset, line, guard, head, ino), state, damage = _unplain(plain)
        self.tail.offset, self.tail.line, self.tail._guard, self.tail._head, self.tail._ino = offset, line, guard, head, ino
        s = SessionState(self._cost_of)
        writers = state.pop("_writers")
        recent = []
        with open(self.path, "rb") as fh:
            for line_no, at in state.pop("recent"):
                fh.seek(at)
                e = parse_json(fh.readline().rstrip(b"\n"))
                if not isinstance(e, dict):
                    raise ValueError("not the entry kept")
                recent.append((line_no, e))
        s.recent = recent
        for k, v in state.items():
            if not hasattr(s, k):
                raise KeyError(k)
            setattr(s, k, v)
        role_of = s._writers._role_of
        for k, v in writers.items():
            setattr(s._writers, k, v)
        s._writers._role_of = role_of
        self.state = s
        return damage

    def poll(self, now: float) -> list[Event]:
        return self._read(now, quiet=False)

    def _read(self, now: float, quiet: bool) -> list[Event]:
        out: list[Event] = []
        mode = {"quiet": quiet}
        rewritten: dict = {}

        def rewrite() -> None:
            self.state = SessionState(self._cost_of)
            self._pending_since, self._pending_reported = None, False
            mode["quiet"] = True
            out.append(Event("rewritten", data=rewritten))  # before the damage the re-read finds

        def line(n: int, at: int, raw: bytes) -> None:
            evs = self.state.feed(n, at, raw)
            out.extend(evs if not mode["quiet"] else (e for e in evs if e.kind == "damage"))

        chunk = self.tail.read(line, rewrite)
        if chunk.deleted:
            out.append(Event("deleted", data={"path": self.path}))
            return out
        if chunk.rewritten is not None:
            rewritten.update(reason=chunk.rewritten, entryCount=self.state.entries, lineCount=self.tail.line)
        if chunk.count:
            self.last_append = now
            self._pending_since, self._pending_reported = None, False
        if chunk.pending and self._pending_since is None:
            self._pending_since = now
        out.extend(self._stale_tail(now))
        return out

    def _stale_tail(self, now: float) -> list[Event]:
        if self._pending_since is None or self._pending_reported or now - self._pending_since < self._live:
            return []
        self._pending_reported = True
        line = self.tail.line + 1
        return [self.state._damage("truncated_line", f"line {line} has had no newline for {self._live:.0f} s: "
                                   "a write that did not finish (pi crashed or was killed mid-append); pi drops it",
                                   line, self.tail.offset)]

    @property
    def has_pending(self) -> bool:
        return self._pending_since is not None


# --- a session as pi appends to it (browse) --------------------------------------------------------


REREAD = "reread"


class SessionTail:
    """A session read once, then kept up to date as pi appends to its file: ``poll`` reads only
    what was appended (the ``Tail`` above: complete lines only, a rewrite or a deletion noticed)
    and returns the session with those entries, or ``REREAD`` where only a read from the start can
    tell what the file holds now, or ``None`` when nothing new is complete.

    Only a session over a compact index (``open_session(light=True)`` of a well-formed v3 file,
    from the cache or not) grows in place: the appended bytes are indexed on their own and joined
    to it (``compact.join_parts``, what the cache does with the bytes after its prefix), and the
    session is made again over the joined index (labels, leaf).  Any other (a damaged file the
    line scan read, a migrated one) is read again when it grows, as is a file whose appended part
    a reader would refuse or drop, or that now holds a record only pi's SDK writes (``auto`` would
    pick the other reader)."""

    def __init__(self, session: Any, stat: Callable[[str], Any] = os.stat) -> None:
        from ..reading.compact import CompactEntries

        self.session = session
        self.why = ""
        self.tail = Tail(session.path, stat)
        store = session.store
        self._ix = store.ix if type(store) is CompactEntries and store.ix.ends_with_newline else None
        if self._ix is not None:
            self.tail.start_at(self._ix.size, self._ix.line_count)
        else:
            self.tail.start_at(session.raw.size, 0)

    def poll(self) -> Any:
        """The grown session, ``None`` or ``REREAD``; after ``REREAD``, ``why`` says what was seen:
        ``rewritten`` (or deleted: what was read is not what the file holds) or ``appended`` (the
        lines added cannot be joined: a damaged line, or a session not over a compact index)."""
        chunk = self.tail.read(lambda n, at, raw: None)  # (the lines are indexed below, not kept here)
        if chunk.deleted or chunk.rewritten is not None:
            self.why = "rewritten"
            return REREAD
        if not chunk.count:
            return None
        self.why = "appended"
        ix = self._ix
        if ix is None:
            return REREAD
        grown = _join_appended(self.session, ix, self.tail.offset)
        if grown is None:
            self._ix = None
            return REREAD
        self.session = grown
        return grown


def _join_appended(session: Any, ix: Any, end: int) -> Any:
    """``session`` with the entries in the bytes from ``ix.size`` to ``end`` (line ends), or
    ``None`` where the file must be read again."""
    from dataclasses import replace

    from ..errors import PisessError
    from ..reading.compact import join_parts, scan_part
    from ..reading.session import index_raw, index_view

    sdk = ix.sdk_marker
    more = scan_part(session.path, start=ix.size, stop=end, expect_header=False)
    if more is None:
        return None
    if join_parts(ix, more) is None or ix.sdk_marker != sdk:
        return None
    if ix.harness_error if session.reader == "harness" else not ix.cli_plain:
        return None  # the reader refuses or drops a line: the line scan says how
    raw = index_raw(session.path, ix)
    raw.images = session.raw.images
    try:
        grown = index_view(ix, raw, session.reader)
    except PisessError:  # (pi's SDK throws on a label that is not a string): the read from the start says so
        return None
    return grown if grown.pi_version == session.pi_version else replace(grown, pi_version=session.pi_version)


# --- the state as plain values (what the cache can hold) --------------------------------------------


def _fields_of(obj: Any, *leave: str) -> dict:
    """An object's attributes but ``leave`` (callables the owner passes in again)."""
    out = {k: v for k, v in vars(obj).items() if k not in leave}
    if "_writers" in out:
        out["_writers"] = _fields_of(out["_writers"], "_role_of")
    return out


_CLASSES: dict = {}


def _classes() -> dict:
    if not _CLASSES:
        from .writers import Alternation, Run, Tip

        _CLASSES.update((c.__name__, c) for c in (_Node, Run, Alternation, Tip, Event))
    return _CLASSES


def _plain(v: Any) -> Any:
    """Tuples tagged ``("t", items)``, the state's dataclasses ``("d", name, fields)``; JSON values,
    sets of plain keys and bytes as they are.  Anything else raises ``ValueError``."""
    t = type(v)
    if v is None or t in (str, int, float, bool, bytes):
        return v
    if t is list:
        return [_plain(x) for x in v]
    if t is dict:
        for k in v:
            if type(k) not in (str, int, float, bool) and k is not None:
                raise ValueError("a key the cache cannot hold")
        return {k: _plain(x) for k, x in v.items()}
    if t is tuple:
        return ("t", [_plain(x) for x in v])
    if t in (set, frozenset) and all(type(x) in (str, int) for x in v):
        return v
    if t is PrefixWidth:  # (a plain class: its state, not its constructor's arguments)
        return ("w", [v.minimum, v.width, v._ids, v._prefixes])
    if t is _Node:  # (most of the state: one per entry)
        return ("d", "_Node", [v.line, v.offset, _plain(v.parent), v.own, v.ctx])
    if _classes().get(t.__name__) is t:
        from dataclasses import fields

        return ("d", t.__name__, [_plain(getattr(v, f.name)) for f in fields(v)])
    raise ValueError(f"{t.__name__} is not kept in the cache")


def _unplain(v: Any) -> Any:
    t = type(v)
    if t is list:
        return [_unplain(x) for x in v]
    if t is dict:
        return {k: _unplain(x) for k, x in v.items()}
    if t is tuple:
        if v[0] == "t":
            return tuple(_unplain(x) for x in v[1])
        if v[0] == "w":
            w = PrefixWidth(v[1][0])
            w.width, w._ids, w._prefixes = v[1][1], set(v[1][2]), set(v[1][3])
            return w
        return _classes()[v[1]](*(_unplain(x) for x in v[2]))
    return v
