"""The explorer page's document (``export --format html``): every entry of every branch, and what
the model sees at every node, as a change to what it sees at the node's parent.

pi's context rules have one owner, ``pisess.core.model.context``: this module does not restate
them, it applies them one entry at a time.  Walking the tree depth first from its roots, the
context at a node is the context at its parent with the node's entry added to the selection:

* a ``compaction`` starts the selection again (``select_entries`` on the path, cut where its
  ``firstKeptEntryId`` first appears: the kept entries cost what they hold, not the whole path);
* a ``context_edit`` (pi 1.6) changes the selected entries it targets (``apply_edit``);
* any other entry appends what it projects to (``project_one``, edited when an edit in the
  selection targets it).

Each entry is projected once, in file order, and every message is written once to a table; a
node's change names messages by their index in it.  So the document grows with the number of
entries (and of entries a compaction keeps), never with entries times context length, and the
page replays the changes from the nearest start (``replay`` is that replay, for the tests and
anyone else).

Where the incremental walk cannot be certain to match ``build_context`` (the SDK reader's rules,
an entry pi throws on, a parentId cycle), a node's context is ``build_context``'s own answer for
that node, written as a fresh start.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, NamedTuple

import orjson

from .. import js
from ..errors import PisessError
from ..js import UNDEF, get
from ..model.context import (
    Context,
    Rules,
    apply_edit,
    build_context,
    derive_state,
    project_one,
    select_entries,
)
from ..model.paths import path_to_checkpoint
from ..reading.files import write_pieces_at
from ..reading.session import Session

EDITED, HIDDEN = 1, 2  # a segment's mark: a context_edit changes (or hides) what its entry projects to


class Segment(NamedTuple):
    """What one selected entry contributes to a context.  (Tuples: one or two are made per node of
    the tree, a frozen dataclass costs several times as much to make.)"""

    entry: int  # the entry's store position
    messages: tuple  # indexes into the message table: what the model sees of it
    mark: int = 0  # EDITED / HIDDEN by a context_edit (pi 1.6), else 0
    originals: tuple = ()  # marked: the messages before the edit


class Change(NamedTuple):
    """A node's context from its parent's: start from nothing (``reset``), replace some segments
    (``replaced``: (index, segment)), then append ``appended``.  ``error``: pi throws building the
    context here (no messages)."""

    reset: bool = False
    replaced: tuple = ()
    appended: tuple = ()
    error: str | None = None

    @property
    def starts(self) -> bool:
        return self.reset or self.error is not None


NO_CHANGE = Change()


_DIGEST = 32  # bytes of a message's digest (sha256), and of a ``hashed_key``

# The end of a ``hashed_key``: no sha256 digest ends so but by a chance of 2**-128
_HASHED = b"\x00pisess: hashed\x00"
assert len(_HASHED) == _DIGEST - 16


def hashed_key(data: bytes, size: int) -> bytes:
    """A message's key from Python's hash of ``data`` (what the table stores of it) and its
    ``size``, for an encoder's ``key``; not a digest: the table compares the stored forms of two
    messages that share one (``MessageTable.add``, ``take``), so the hash may leave bytes out.  It
    reads the first and last ``_SAMPLE`` bytes of a long ``data``: a message's start names its role
    and its tool call, its end its time (``timestamp``, to the millisecond), and two that share
    them and the size are compared whole.  (Hashing all of it was 2.5% of the instructions of the
    200 MB session's scan.)  Python's hash is the same in a forked child; its seed differs from run
    to run, so a key is never kept."""
    sample = data if len(data) <= 2 * _SAMPLE else data[:_SAMPLE] + data[-_SAMPLE:]
    return (hash(sample) & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little") + size.to_bytes(8, "little") + _HASHED


_SAMPLE = 256  # bytes of each end of a message's stored form that ``hashed_key`` hashes


class MessageTable:
    """Each distinct message once: the index a change names it by, found by a digest of its JSON as
    ``build_context`` returns it; ``sizes`` are that JSON's bytes (``approx_tokens`` counts a
    quarter of them).  ``encode`` makes what the page stores of a message (images left out,
    secrets masked): its ``key(m)`` gives ``(digest, size, state)`` (the digest tells messages
    apart), its ``store(m, state)`` the stored form of a message not seen before; without it the
    JSON is stored as it is.  With ``spool`` (a binary file) the stored forms go there, one a line,
    instead of staying in memory: a 200 MB session's text is not held twice.  A table that took
    another's messages (``take``) reads theirs from that table's spool, where they are."""

    _BATCH = 1 << 20  # bytes of stored forms gathered before one write to the spool

    def __init__(self, encode: Any = None, spool: Any = None) -> None:
        self.encode = encode
        self.spool = spool
        self.spools: list = [spool]  # what ``stored`` points into: this table's spool, then the ones it took
        self.stored: list = []  # the stored forms (bytes), or with a spool (offset, length, spool number)
        self.sizes: list = []
        self.index: dict = {}  # a message's digest (or, where its hashed key was taken, ``_digest_of``) -> its index
        self.keys: list = []  # per message stored: its key as ``encode.key`` made it (what ``part`` sends)
        self._end = 0  # the spool's length, with what is gathered for it
        self._pending: list = []  # gathered for the spool, not yet written
        self._pending_bytes = 0

    def add(self, m: Any) -> int:
        if self.encode is None:
            data = message_json(m)
            digest = hashlib.sha256(data).digest()  # (sha256 is in the CPU's instructions: half blake2b's time)
            size = len(data)
        else:
            digest, size, data = self.encode.key(m)
        got, where = self._find(digest, size, lambda: self.encode.stored_form(m, data))
        if got is None:
            got = self.index[where] = len(self.stored)
            self.keys.append(digest)
            if self.encode is not None:
                data = self.encode.store(m, data)
            if self.spool is None:
                self.stored.append(data)
            else:
                self._put(data)
            self.sizes.append(size)
        return got

    def _find(self, digest: bytes, size: int, stored_form: Any) -> tuple[int | None, bytes]:
        """The index of the message with key ``digest`` (``None``: none is here), and the key to
        index it by if it is new.  A ``hashed_key`` met again is the same message where the stored
        forms (``stored_form()``, the one here) are the same; else it is another whose hash is the
        same, found or indexed by a digest of its stored form and size."""
        got = self.index.get(digest)
        if got is None or not digest.endswith(_HASHED):
            return got, digest
        mine = stored_form()
        if mine == self.get(got):
            return got, digest
        other = _digest_of(mine, size)
        return self.index.get(other), other

    def _put(self, data: bytes) -> None:
        """``data`` as the next stored form in the spool (one a line: a run of them is the page's
        element of messages as it is)."""
        if self._end:
            self._pending.append(b"\n")
            self._end += 1
            self._pending_bytes += 1
        self._pending.append(data)
        self.stored.append((self._end, len(data), 0))
        self._end += len(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= self._BATCH:
            self.flush()

    def flush(self) -> None:
        """Write what is gathered for the spool (at its place: ``_end`` counts what went before)."""
        if self._pending:
            if _PWRITEV:
                self.spool.flush()
                write_pieces_at(self.spool.fileno(), self._pending, self._end - self._pending_bytes)
            else:
                self.spool.seek(0, 2)
                self.spool.write(b"".join(self._pending))
            self._pending.clear()
            self._pending_bytes = 0
        if self.spool is not None:
            self.spool.flush()

    def spool_to(self, spool: Any) -> None:
        """The stored forms from now on to ``spool``, from its start (a forked child's own table:
        its ``part`` says where they are)."""
        self.flush()
        self.spool, self.spools[0], self._end = spool, spool, 0

    def __len__(self) -> int:
        return len(self.stored)

    def part(self) -> tuple:
        """What a table filled in a forked child sends back (``take``): each message's key (as
        ``add`` was given it), size and where its stored form lies in the spool (a few flat
        values: they cross a pipe)."""
        self.flush()
        return (b"".join(self.keys), array("q", self.sizes), array("q", (o for o, _, _ in self.stored)),
                array("q", (n for _, n, _ in self.stored)))

    def take(self, part: tuple, spool: Any) -> list:
        """Add the messages of another table (``part()`` of it, its stored forms in ``spool``), as
        if they had been added here after this table's own, one after the other; returns, per
        message of the other table, its index here.  Their stored forms stay in ``spool``, which
        this table reads from then (and ``close`` closes)."""
        joined, sizes, offsets, lengths = part
        k = len(self.spools)
        self.spools.append(spool)
        digests = [joined[i:i + _DIGEST] for i in range(0, len(joined), _DIGEST)]
        if not any(map(self.index.__contains__, digests)) and len(set(digests)) == len(digests):
            # (the usual part: every message new here, numbered as the other table numbered them)
            base = len(self.stored)
            self.index.update(zip(digests, range(base, base + len(digests))))
            self.keys += digests
            self.stored.extend(zip(offsets, lengths, repeat(k)))
            self.sizes.extend(sizes)
            return list(range(base, base + len(digests)))
        remap = []
        for digest, size, offset, length in zip(digests, sizes, offsets, lengths):
            def theirs(offset: int = offset, length: int = length) -> bytes:
                spool.seek(offset)
                return spool.read(length)
            got, where = self._find(digest, size, theirs)
            if got is None:
                got = self.index[where] = len(self.stored)
                self.keys.append(digest)
                self.stored.append((offset, length, k))
                self.sizes.append(size)
            remap.append(got)
        return remap

    def close(self) -> None:
        """Close the spools taken from other tables (this table's own is its caller's)."""
        for spool in self.spools[1:]:
            spool.close()
        del self.spools[1:]

    def get(self, i: int) -> bytes:
        """The stored form of message ``i``."""
        if self.spool is None:
            return self.stored[i]
        return self.json_range(i, i + 1)

    def json_lines(self, block: int = 4 << 20) -> Iterator[bytes]:
        """The stored forms one per line (JSON never holds a raw newline), in pieces of about
        ``block`` bytes that end where a message ends."""
        if self.spool is None:
            yield b"\n".join(self.stored)
            return
        lo = size = 0
        for i, (_, length, _) in enumerate(self.stored):
            size += length + 1
            if size >= block:
                yield self.json_range(lo, i + 1)
                lo, size = i + 1, 0
        if lo < len(self.stored):
            yield self.json_range(lo, len(self.stored))

    def json_range(self, lo: int, hi: int) -> bytes:
        """The stored forms of messages ``lo`` to ``hi`` (not included), one per line."""
        if self.spool is None:
            return b"\n".join(self.stored[lo:hi])
        runs = []
        for k, start, end in self._runs(lo, hi):
            spool = self.spools[k]
            spool.seek(start)
            runs.append(spool.read(end - start))
        self.spool.seek(0, 2)
        return runs[0] if len(runs) == 1 else b"\n".join(runs)

    def json_pieces(self, lo: int, hi: int) -> Iterator[Any]:
        """``json_range(lo, hi)`` in pieces for a writer: bytes, and each run of stored forms that
        lies in a spool as an ``images.Span`` of it (the kernel copies it: ``Span.send``)."""
        if self.spool is None:
            yield self.json_range(lo, hi)
            return
        from ..reading.images import Span

        for j, (k, start, end) in enumerate(self._runs(lo, hi)):
            if j:
                yield b"\n"
            yield Span(self.spools[k], "(the page's spool)", start, end - start)

    def _runs(self, lo: int, hi: int) -> Iterator[tuple[int, int, int]]:
        """``(spool number, start, end)`` of each run of messages ``lo`` to ``hi`` that lie one a
        line in one spool, in order (the spool written first)."""
        if lo >= hi:
            return
        self.flush()
        stored = self.stored
        i = lo
        while i < hi:
            start, length, k = stored[i]
            end = start + length
            i += 1
            while i < hi:
                offset, length, k2 = stored[i]
                if k2 != k or offset != end + 1:
                    break
                end = offset + length
                i += 1
            yield k, start, end

    def message(self, i: int) -> Any:
        return orjson.loads(self.get(i))


def _digest_of(stored: bytes, size: int) -> bytes:
    """The key of a message whose ``hashed_key`` another message has: sha256 of its stored form
    and size."""
    return hashlib.sha256(stored + size.to_bytes(8, "little")).digest()


_PWRITEV = hasattr(os, "pwritev")  # (files.write_pieces_at writes with it)


def message_json(m: Any) -> bytes:
    try:
        return orjson.dumps(m)
    except TypeError:  # (approx_tokens measures such a value by its str)
        return orjson.dumps(str(m))


class Changes(Sequence):
    """Per store position its ``Change``.  ``steps`` holds the usual node's change (its own entry
    appends what it projects to, nothing else) as just those message indexes, a plain tuple (a
    ``Change`` is a subclass): made a ``Change`` when asked (most nodes are usual; the page
    writes them as they are, and a Segment and a Change for each cost more than the walk else)."""

    def __init__(self, steps: list) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, pos: int) -> Change:  # type: ignore[override]
        c = self.steps[pos]
        if type(c) is tuple:
            return Change(appended=(Segment(pos % len(self.steps), c),))
        return c


@dataclass(frozen=True)
class Contexts:
    """Per store position: the parent it hangs from (-1: a root), and its ``Change``."""

    parents: list
    changes: Changes
    fallback: int  # nodes whose context is build_context's answer written whole
    projected: list  # per position: the message indexes its entry projects to (a str: pi throws projecting it)


def replay(contexts: Contexts, pos: int) -> list[Segment] | str:
    """The segments of the context at ``pos`` (or the error pi raises there), from the changes."""
    chain = []
    p = pos
    steps = contexts.changes.steps
    while p >= 0:
        chain.append(p)
        c = steps[p]
        if type(c) is not tuple and c.starts:
            break
        p = contexts.parents[p]
    segs: list = []
    for p in reversed(chain):
        c = steps[p]
        if type(c) is tuple:  # (the usual node's: ``Changes``)
            segs.append(Segment(p, c))
            continue
        if c.error is not None:
            if p == pos:
                return c.error
            segs = []
            continue
        if c.reset:
            segs = []
        for i, s in c.replaced:
            segs[i] = s
        segs.extend(c.appended)
    return segs


def segments_of(ctx: Context, table: MessageTable) -> list[Segment]:
    """``build_context``'s answer as segments (the fallback, and the test's oracle)."""
    s = ctx.session
    out = []
    k = 0
    for e, n in ctx.projection:
        msgs = tuple(table.add(m) for m in ctx.messages[k:k + n])
        k += n
        edit = ctx.edit_of(e)
        if edit is None:
            out.append(Segment(_pos(s, e), msgs))
        else:
            originals = tuple(table.add(m) for m in ctx.originals.get(js.key(get(e, "id")), []))
            hides = get(s.full(edit), "replacement") is None
            out.append(Segment(_pos(s, e), msgs, HIDDEN if hides else EDITED, originals))
    return out


def _pos(session: Session, e: Any) -> int:
    p = session.position(e)
    return -1 if p is None else p


class Walk:
    """The depth-first walk that writes each node's change (see the module's note)."""

    def __init__(self, session: Session, table: MessageTable) -> None:
        self.s = session
        self.store = session.store
        self.table = table
        self.rules = Rules.of(session)
        n = len(self.store)
        self.n = n
        self.projected: list = [()] * n  # per position: message indexes, or a str (pi throws projecting it)
        self.breaks_path = bytearray(n)  # derive_state throws on it: every node below it fails
        self.edits: dict = {}  # position -> the whole context_edit
        self.originals: dict = {}  # position -> its produced messages (entries an edit targets)
        self.unique_ids = self.store.distinct_ids() == n
        self.harness = session.reader == "harness"
        self.keys: list = [None] * n  # js.key of each entry's id
        self.types: list = [None] * n

    @classmethod
    def of_part(cls, reading: Any, table: MessageTable) -> Walk:
        """A walk of a part of the file read before its session is (``page.PageGather``, during the
        open's one parse): ``project_all`` over entries numbered from 0, its lists grown by
        ``grow`` first; ``reading`` stands for the session where ``Rules.of`` and ``derive_state``
        ask (the cli reader's view).  What needs the whole file (the entries an edit targets) is
        left to the session's walk, which ``adopt``s this one."""
        w = cls.__new__(cls)
        w.s, w.table, w.rules, w.n = reading, table, Rules.of(reading), 0
        w.store = None  # type: ignore[assignment]  # (no session yet: nothing asks the store)
        w.projected, w.breaks_path, w.edits, w.originals = [], bytearray(), {}, {}
        w.unique_ids, w.harness, w.keys, w.types = False, False, [], []
        return w

    def grow(self, more: int) -> None:
        """Room for ``more`` entries after those of a part's walk (``of_part``)."""
        self.projected += [()] * more
        self.breaks_path += bytes(more)
        self.keys += [None] * more
        self.types += [None] * more
        self.n += more

    def adopt(self, part: Walk) -> None:
        """What ``part`` (``of_part``, its parts taken) took of every entry of the session, as
        ``project_all`` would have taken it here; then the originals of the entries an edit
        targets (``originals_at``)."""
        self.projected, self.breaks_path, self.keys, self.types = part.projected, part.breaks_path, part.keys, part.types
        self.edits, self.originals = part.edits, part.originals
        targets = self.edit_targets()
        if targets:
            self.originals_at(self.s.complete_at([p for p, k in enumerate(self.keys) if k in targets]))

    def edit_targets(self) -> set:
        """``js.key`` of every id a ``context_edit`` of the session targets."""
        ix = getattr(self.store, "ix", None)  # a compact index keeps every entry but plain messages apart
        others = ix.extras.values() if ix is not None else self.store
        return {js.key(get(e, "targetId")) for e in others if get(e, "type") == "context_edit"}

    def originals_at(self, entries: Iterator[tuple[int, Any]]) -> None:
        """The messages each of ``entries`` produces, kept as the originals an edit replaces (as
        ``project_all`` keeps them where it knows the targets)."""
        for pos, e in entries:
            if type(self.projected[pos]) is not tuple:  # (pi throws projecting it: no originals)
                continue
            m = e.get("message") if type(e) is dict and e.get("type") == "message" else None
            if type(m) is dict and m.get("content") is not None:
                self.originals[pos] = [m]
            else:
                self.originals[pos] = project_one(e, 0, [e], self.harness, {}, self.rules)

    def key(self, pos: int) -> Any:
        return self.keys[pos]

    def project_all(self, entries: Iterator[tuple[int, Any]], visit: Any = None, targets: Any = None) -> None:
        """Each entry's messages (``projected``) and what else the walk needs of it; ``targets``:
        the ids edits target (``edit_targets``, by default)."""
        if targets is None:
            targets = self.edit_targets()
        rules, s = self.rules, self.s
        for pos, e in entries:
            if visit is not None:
                visit(pos, e)
            t = get(e, "type")
            self.types[pos] = t
            self.keys[pos] = js.key(get(e, "id"))
            if type(e) is not dict or t != "message" or type(e.get("message")) is not dict:  # (a message object: none throws)
                try:
                    derive_state(s, [e])
                except PisessError:
                    self.breaks_path[pos] = 1
            if t == "context_edit":
                self.edits[pos] = e
            if t == "message" and type(e) is dict:  # (the commonest: a message with content projects to itself)
                m = e.get("message")
                if type(m) is dict and m.get("content") is not None:
                    if targets and self.keys[pos] in targets:
                        self.originals[pos] = [m]
                    self.projected[pos] = (self.table.add(m),)
                    continue
            try:
                produced = project_one(e, 0, [e], self.harness, {}, rules)
            except TypeError as err:
                self.projected[pos] = str(err)
                continue
            if any(m is None or m is UNDEF for m in produced):
                self.projected[pos] = "a message in the context is null"
                continue
            if targets and js.key(get(e, "id")) in targets:
                self.originals[pos] = produced
            self.projected[pos] = tuple(self.table.add(m) for m in produced)

    def part(self, lo: int) -> dict | None:
        """What ``project_all`` took of the positions from ``lo`` on, to send from a forked child
        (``take``); ``None`` where a value would not be the same on the other side (an id that
        is no string keys an entry by its object's identity)."""
        keys, types = self.keys[lo:], self.types[lo:]
        if any(k is not None and type(k) is not str for k in keys) or any(type(t) is not str for t in types):
            return None
        return {"projected": self.projected[lo:], "breaks": bytes(self.breaks_path[lo:]), "keys": keys,
                "types": types, "edits": {p: e for p, e in self.edits.items() if p >= lo},
                "originals": {p: m for p, m in self.originals.items() if p >= lo}}

    def take(self, lo: int, part: dict, remap: list) -> None:
        """The positions from ``lo`` on as a child's ``part`` says, its message indexes mapped
        by ``remap`` (``MessageTable.take``)."""
        self.projected[lo:] = [((remap[got[0]],) if len(got) == 1 else tuple([remap[i] for i in got]))
                               if type(got) is tuple else got for got in part["projected"]]
        self.breaks_path[lo:] = part["breaks"]
        self.keys[lo:] = part["keys"]
        self.types[lo:] = part["types"]
        self.edits.update(part["edits"])
        self.originals.update(part["originals"])

    def segment(self, pos: int, index: int, edit_at: int | None) -> Segment | str:
        """What the entry at ``pos`` adds at ``index`` of a selection (``_project``'s rule for one
        entry), edited by the context_edit at ``edit_at``."""
        got = self.projected[pos]
        if isinstance(got, str):
            return got
        if self.rules.newest_compaction_only and index > 0 and self.types[pos] == "compaction":
            return Segment(pos, ())  # (C.7: it emits nothing, and no edit applies to it)
        if edit_at is None:
            return Segment(pos, got)
        edit = self.edits[edit_at]
        produced = [] if not got else self.originals[pos]
        try:
            edited = apply_edit(produced, edit)
        except PisessError as err:
            return err.message
        mark = HIDDEN if get(edit, "replacement") is None else EDITED
        return Segment(pos, tuple(self.table.add(m) for m in edited), mark, got)

    def run(self, parents: list) -> Contexts:
        n, store = self.n, self.store
        kids: list = [[] for _ in range(n)]
        roots: list = []
        for pos, q in enumerate(parents):
            (roots if q < 0 else kids[q]).append(pos)
        changes: list = [None] * n
        fallback = 0
        # the walk's state, undone on the way back up
        segs: list = []
        edit_of: dict = {}  # js.key(target id) -> position of the latest context_edit selected
        path: list = []  # the positions from the root
        first_at: dict = {}  # js.key(id) -> its first index on path
        broken = bytearray(n)  # the incremental state is unknown here: build_context answers
        keys, types, projected, breaks_path = self.keys, self.types, self.projected, self.breaks_path
        special = ("compaction", "context_edit")
        stack: list = [(r, 0, None) for r in reversed(roots)]
        push, pop, harness = stack.append, stack.pop, self.harness
        while stack:
            pos, leaving, undo = pop()
            if leaving == 1:  # (a run of usual nodes' undo: their places on the path, segments and first places)
                start, (start_segs, firsts) = pos, undo  # (pushed below as (start, 1, (start_segs, firsts)))
                del path[start:]
                del segs[start_segs:]
                for k in firsts:
                    del first_at[k]
                continue
            if leaving:
                undo()
                continue
            # a run of usual nodes, each the only child of the one before: each one's entry appends
            # what it projects to (``_step``'s answer, made short: ``Changes``; on ``segs`` its
            # position stands for ``Segment(pos, got)``), and the run is undone at once
            start, start_segs, firsts = len(path), len(segs), []
            q = parents[pos]
            below = None
            while True:
                k = keys[pos]
                got = projected[pos]
                # (the SDK reader throws walking up to a parent that is missing: build_context says where)
                if (q >= 0 and broken[q]) or breaks_path[pos] or types[pos] in special or type(got) is not tuple \
                        or k in edit_of or (harness and q < 0 and js.truthy(get(store[pos], "parentId"))):
                    below = None
                    break
                if k not in first_at:
                    first_at[k] = len(path)
                    firsts.append(k)
                path.append(pos)
                changes[pos] = got
                segs.append(pos)
                below = kids[pos]
                if len(below) != 1:
                    break
                q, pos = pos, below[0]
            if len(path) > start:
                push((start, 1, (start_segs, firsts)))
            if below is not None:  # (the run ended at a usual node with other than one child)
                stack.extend((c, 0, None) for c in reversed(below))
                continue
            k = keys[pos]
            path.append(pos)
            fresh = k not in first_at
            if fresh:
                first_at[k] = len(path) - 1
            is_broken = (q >= 0 and broken[q]) or breaks_path[pos] or \
                (harness and q < 0 and js.truthy(get(store[pos], "parentId")))
            change: Change | None = None
            if not is_broken:
                change = self._step(pos, store[pos], segs, edit_of, path, first_at)
                if change is None:
                    is_broken = True
            if is_broken:
                broken[pos] = 1
                fallback += 1
                change = self._fallback(pos)
            assert change is not None
            changes[pos] = change
            undo = self._apply(change, segs, edit_of, path, first_at, k, fresh, pos) if not is_broken \
                else self._pop_path(path, first_at, k, fresh)
            stack.append((pos, 2, undo))
            stack.extend((c, 0, None) for c in reversed(kids[pos]))
        for pos in range(n):  # on a parentId cycle no root reaches: build_context's answer
            if changes[pos] is None:
                changes[pos] = self._fallback(pos)
                fallback += 1
        return Contexts(parents, Changes(changes), fallback, self.projected)

    def _pop_path(self, path: list, first_at: dict, k: Any, fresh: bool):
        def undo() -> None:
            path.pop()
            if fresh:
                del first_at[k]
        return undo

    def _step(self, pos: int, e: Any, segs: list, edit_of: dict, path: list, first_at: dict) -> Change | None:
        """The change at ``pos`` from the state at its parent; ``None`` where pi throws (the
        fallback says how)."""
        t = self.types[pos]
        if t == "compaction" and self.harness:
            if not self.unique_ids:
                return None
            try:  # the SDK reader's own walk from it: cut where the compaction's stop rule says
                walk = path_to_checkpoint(self.s, get(e, "id"))
            except PisessError:
                return None
            return self._reset(select_entries(self.s, walk))
        if t == "compaction":
            if self.unique_ids:  # the kept entries start where that id is on the path, if it is
                kept = path[first_at.get(js.key(get(e, "firstKeptEntryId")), len(path) - 1):]
            else:  # which of two entries of one id is found first depends on the whole path
                kept = path
            return self._reset(select_entries(self.s, self.store.take(kept)))
        replaced = []
        if t == "context_edit" and self.rules.edits:
            target = js.key(get(self.edits[pos], "targetId"))
            for i, seg in enumerate(segs):
                entry = seg if type(seg) is int else seg.entry  # (a usual node's position: ``run``)
                if self.key(entry) == target:
                    got = self.segment(entry, i, pos)
                    if isinstance(got, str):
                        return None
                    replaced.append((i, got))
        own = self.segment(pos, len(segs), edit_of.get(self.key(pos)))
        if isinstance(own, str):
            return None
        if not replaced and not own.messages and not own.mark:
            return Change(appended=(own,))
        return Change(replaced=tuple(replaced), appended=(own,))

    def _reset(self, selected: list) -> Change | None:
        """A fresh start at a compaction: ``selected`` (``select_entries``'s answer) projected."""
        where = [_pos(self.s, x) for x in selected]
        latest: dict = {}
        if self.rules.edits:
            for p in where:
                if self.types[p] == "context_edit":
                    latest[js.key(get(self.edits[p], "targetId"))] = p
        new = []
        for i, p in enumerate(where):
            seg = self.segment(p, i, latest.get(self.key(p)))
            if isinstance(seg, str):
                return None
            new.append(seg)
        return Change(reset=True, appended=tuple(new))

    def _apply(self, c: Change, segs: list, edit_of: dict, path: list, first_at: dict, k: Any, fresh: bool,
               pos: int):
        """Apply ``c`` to the walk's state; returns what undoes it."""
        t = self.types[pos]
        if c.reset:
            old_segs, old_edits = segs[:], dict(edit_of)
            segs[:] = c.appended
            edit_of.clear()
            if self.rules.edits:
                for s in c.appended:
                    if self.types[s.entry] == "context_edit":
                        edit_of[js.key(get(self.edits[s.entry], "targetId"))] = s.entry

            def undo_reset() -> None:
                segs[:] = old_segs
                edit_of.clear()
                edit_of.update(old_edits)
                self._pop_path(path, first_at, k, fresh)()
            return undo_reset
        olds = [(i, segs[i]) for i, _ in c.replaced]
        for i, s in c.replaced:
            segs[i] = s
        length = len(segs)
        segs.extend(c.appended)
        edit_key = UNDEF
        before = None
        if t == "context_edit" and self.rules.edits:
            edit_key = js.key(get(self.edits[pos], "targetId"))
            before = edit_of.get(edit_key)
            edit_of[edit_key] = pos

        def undo() -> None:
            del segs[length:]
            for i, s in olds:
                segs[i] = s
            if edit_key is not UNDEF:
                if before is None:
                    del edit_of[edit_key]
                else:
                    edit_of[edit_key] = before
            self._pop_path(path, first_at, k, fresh)()
        return undo

    def _fallback(self, pos: int) -> Change:
        try:
            ctx = build_context(self.s, get(self.store[pos], "id"), full_path=False)
        except PisessError as err:
            return Change(error=err.message)
        return Change(reset=True, appended=tuple(segments_of(ctx, self.table)))


def node_contexts(session: Session, table: MessageTable, parents: Any = None, visit: Any = None) -> Contexts:
    """Every node's context as a change to its parent's (see the module's note).  ``parents``: per
    position the store's parent (``store.parent``, -1 for none; ``TreeView.parents``).  ``visit(pos,
    entry)`` sees each complete entry once, in file order, as it is projected (the page's other facts
    are taken then: the file is read once)."""
    store = session.store
    if parents is None:
        parents = [-1 if (q := store.parent(p)) is None else q for p in range(len(store))]
    else:
        parents = list(parents)  # (an entry that is its own parent is reached from no root: the fallback answers)
    walk = Walk(session, table)
    walk.project_all(session.complete_at(range(len(store))), visit)
    return walk.run(parents)
