"""A compact index of a session file, for files of millions of entries.

Most lines of a session are ``message`` entries written by pi with the keys ``type, id, parentId,
timestamp, message`` in that order.  For those the index keeps no per-entry Python object beyond
the id string: the parent is a position in an ``array``, the timestamp 24 bytes of a shared
buffer, the role one byte.  Every other line keeps its ``Light`` value as the line scan does.
``CompactEntries`` is the store over the index (a ``store.EntryStore``, like the line scan's
``ListStore``): it rebuilds the ``Light`` of a message on demand (the same value the line scan
would have kept) and answers ids, parents, lines and spans from the arrays, so the readers,
paths and context never ask which store they hold.

A rebuilt ``Light`` has its keys in pi's order even where the file had another order; nothing
reads a ``Light``'s key order (it is read back whole before anything is printed).

Only a well-formed v3 file is indexed this way (a header first, every line a JSON object the
harness accepts or the cli keeps as it is); anything else returns ``None`` and is read by the
line scan, which knows how each reader treats damage.  Both need the same time on such files;
the index only saves memory and time on the common case.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate, compress, islice, repeat
from operator import add, and_, eq, ge, not_, sub
from typing import Any, Protocol

import orjson

from .. import js, parallel
from ..errors import PisessError
from .images import LINE_MIN
from .jsonl import (
    Light,
    forget_shared,
    is_blank,
    iter_blocks,
    lean_of,
    lighten,
    line_start_after,
    open_fd,
    parse_json,
)
from .lines import (
    NOT_JSON,
    check_harness_entry,
    check_harness_header,
    cli_drop_reason,
    cli_skips,
    sdk_only_entry,
    sdk_only_header,
)
from .migrate import needs_migration
from .store import Cached, ReadBack, role_is

_TS_WIDTH = 24  # "2025-03-03T09:00:39.403Z": pi's Date.toISOString()
_NO_PARENT, _OTHER_PARENT, _EXTRA = -1, -2, -3
_SCANS = 16  # id lookups of a deferred index answered by a search of the ids before the map is built


def _search(ids: list, key: str, stop: int) -> int | None:
    """The first position of ``key`` in ``ids[:stop]``, or ``None`` (a search at C speed, no copy)."""
    try:
        return ids.index(key, 0, stop)
    except ValueError:
        return None


class CompactIndex:
    """Positions are entry indexes (the header is not an entry)."""

    __slots__ = ("ids", "_pos_of", "key_of", "parents", "other_parents", "offsets", "lengths", "lines", "roles",
                 "role_stubs", "stamps", "extras", "header", "harness_error",
                 "cli_plain", "sdk_marker", "size", "ends_with_newline", "line_count", "roots", "first_line",
                 "last_length", "later_pos_of", "cached", "gathered", "first_len", "first_unique", "extra_parents",
                 "_lookups", "cuts", "answered", "answered_by", "turn", "calls")

    def __init__(self) -> None:
        self.ids: list = []  # id of each entry (None for an extra whose id is not a string)
        # string id -> position of its last occurrence (in the first part, see below); None until
        # first used where the index came from the cache (``defer_pos_of``)
        self._pos_of: dict | None = {}
        self.first_len = 0  # (deferred) the entries the map covers, the first part's
        self.first_unique = False  # (deferred) the first part's string ids are distinct, none empty
        self.extra_parents: dict = {}  # (deferred) extra's position -> its parent's, where one was found
        self._lookups = 0  # (deferred) lookups answered without the map
        # A file read in two parts keeps the ids of the second in their own map, looked up first:
        # merging them into pos_of would cost a rehash of the first part's map.
        self.later_pos_of: dict | None = None
        self.key_of: dict = {}  # js.key(id) -> position, for ids that are not strings
        self.parents = array("i")  # position of an entry with the parent's id, or a marker
        self.other_parents: dict = {}  # position -> parentId string not seen before the entry
        self.offsets = array("q")
        # Physical line numbers (1-based) and lengths: None while entry i sits on line
        # first_line + i (no blank line between entries: the usual case); then lines are a range
        # and each length is the distance to the next entry's offset.
        self.lines: array | None = None
        self.lengths: array | None = None  # a line of 4 GiB or more sends the file to the line scan
        self.first_line = 0
        self.last_length = 0
        self.roles = bytearray()
        self.role_stubs: list = []  # role code -> the shared {"role": role} stub
        self.stamps = bytearray()
        self.extras: dict = {}  # position -> Light (or other value) of a line that is not a plain message
        self.header: Any = None
        self.harness_error = False  # some line fails the harness's checks
        self.cli_plain = True  # the cli keeps every entry as it is, nothing dropped or skipped
        self.sdk_marker = False
        self.size = 0
        self.ends_with_newline = True
        self.line_count = 0  # physical lines read
        self.roots: list = []  # positions of plain messages whose parentId is null
        self.cached: Any = None  # the index cache's note: which prefix came from it (cache.Prefix)
        # What a caller's gatherer took from every parsed value of this scan (``scan_compact``'s
        # ``gather``), or None: an index read from the cache has none.
        self.gathered: Any = None
        # line offset -> where its images' base64 lies (``jsonl.cuts_of``), for the long lines
        # that hold some: read back "lean", a line is then read around them
        self.cuts: dict = {}
        # Tool results whose call the scan saw: ``answered[i]`` (a plain toolResult's position)
        # carries the string ``toolCallId`` of a ``toolCall`` block of the plain assistant message
        # at ``answered_by[i]``, which did not end ``error`` or ``aborted``.  A fact of the two
        # lines as parsed, for the results that follow their call's assistant in the file (pi's
        # way); whether that assistant is the one a result answers is the tree's question
        # (``unpaired.calls_not_made``).  An index from the cache has none: a result not here is
        # read back.
        self.answered = array("i")
        self.answered_by = array("i")
        # Per plain assistant message (position), how many toolCall blocks its content holds, as the
        # scan parsed it (``store.tool_call_counts``); ``None`` where no scan counted them (an index
        # from the cache: those lines are read back)
        self.calls: dict | None = None
        self.turn: tuple | None = None  # (during the scan) the last plain assistant: position, message, call ids

    def __len__(self) -> int:
        return len(self.ids)

    def light(self, pos: int) -> Any:
        """The value the line scan keeps for entry ``pos``."""
        got = self.extras.get(pos)
        if got is not None:
            return got
        q = self.parents[pos]
        out = Light()
        out["type"] = "message"
        out["id"] = self.ids[pos]
        out["parentId"] = None if q == _NO_PARENT else self.ids[q] if q >= 0 else self.other_parents[pos]
        out["timestamp"] = self.stamps[pos * _TS_WIDTH:(pos + 1) * _TS_WIDTH].decode("ascii")
        out["message"] = self.role_stubs[self.roles[pos]]
        out.offset = self.offsets[pos]
        out.length = self.length_of(pos)
        out.index = pos
        return out

    @property
    def pos_of(self) -> dict:
        """String id -> position of its last occurrence in the first part (``later_pos_of`` maps the
        second part's)."""
        got = self._pos_of
        if got is None:
            got = self._pos_of = dict(zip(islice(self.ids, self.first_len), range(self.first_len)))
            got.pop(None, None)
        return got

    @pos_of.setter
    def pos_of(self, value: dict) -> None:
        self._pos_of = value

    def defer_pos_of(self, unique: bool, extra_parents: dict) -> None:
        """Build the id map on first use only (an index read from the cache): hashing the 300,000
        ids of a 1 GiB session takes 60-100 ms, and a context read of a file whose ids are distinct
        needs none of it.  ``unique``: the string ids are distinct and none is empty (the file as
        it was cached); ``extra_parents``: the parent position of each extra whose parent was found
        then.  Both hold for the whole file while no entry appended since repeats an id."""
        self._pos_of = None
        self.first_len = len(self.ids)
        self.first_unique = unique
        self.extra_parents = extra_parents
        self._lookups = 0

    def deferred(self) -> bool:
        """The id map is not built (see ``defer_pos_of``)."""
        return self._pos_of is None

    def position_of(self, eid: str) -> int | None:
        """The position of the last entry with string id ``eid``."""
        later = self.later_pos_of
        if later is not None:
            pos = later.get(eid)
            if pos is not None:
                return pos
        if self._pos_of is None and self.first_unique and self._lookups < _SCANS:
            # (distinct ids: the one occurrence is the last; a few searches cost less than the map)
            self._lookups += 1
            return _search(self.ids, eid, self.first_len)
        return self.pos_of.get(eid)

    def ids_unique(self) -> bool:
        """No string id twice and none empty: a parent position the scan recorded is then the
        entry ``byId.get(parentId)`` finds."""
        later = self.later_pos_of or {}
        if self._pos_of is None and len(later) <= _SCANS:
            if not self.first_unique or "" in later:
                return False
            appended = self.ids[self.first_len:]
            if len(later) != len(appended) - appended.count(None):
                return False  # an id twice among the appended entries
            ids, n = self.ids, self.first_len
            return all(_search(ids, k, n) is None for k in later)
        return self.distinct_ids() == len(self.ids) - self.ids.count(None) and "" not in self.pos_of \
            and "" not in later

    def distinct_ids(self) -> int:
        """How many different string ids the entries have."""
        later = self.later_pos_of or {}
        pos_of = self.pos_of
        return len(pos_of) + sum(1 for k in later if k not in pos_of)

    def resolved_extra_parents(self) -> dict:
        """Each extra's parent position, where its ``parentId`` is a string found in the file (what
        ``defer_pos_of`` takes back)."""
        out = {}
        for p, e in self.extras.items():
            pid = e.get("parentId") if isinstance(e, dict) else None
            if type(pid) is str and pid:
                q = self.position_of(pid)
                if q is not None:
                    out[p] = q
        return out

    def parent_id(self, pos: int) -> Any:
        """The ``parentId`` entry ``pos`` has in the file (``UNDEF`` when it has none)."""
        q = self.parents[pos]
        if q >= 0:
            return self.ids[q]
        if q == _NO_PARENT:
            return None
        if q == _OTHER_PARENT:
            return self.other_parents[pos]
        return js.get(self.extras[pos], "parentId")

    def parent_position(self, pos: int) -> int | None:
        """Where ``byId.get(parentId)`` of entry ``pos`` is, for a truthy ``parentId``."""
        pid = self.parent_id(pos)
        if type(pid) is str:
            return self.position_of(pid) if pid else None
        return self.key_of.get(js.key(pid)) if js.truthy(pid) else None

    def line_numbers(self) -> Any:
        """The physical line of each entry (a ``range`` when they follow one another)."""
        return self.lines if self.lines is not None else range(self.first_line, self.first_line + len(self.ids))

    def length_of(self, pos: int) -> int:
        if self.lengths is not None:
            return self.lengths[pos]
        return self.offsets[pos + 1] - self.offsets[pos] - 1 if pos + 1 < len(self.offsets) else self.last_length

    def _spell_out(self) -> tuple[array, array]:
        """Lines and lengths as arrays, from here on (an entry is not on the line after the last);
        returns them."""
        if self.lines is not None and self.lengths is not None:
            return self.lines, self.lengths
        n = len(self.offsets)
        self.lines = lines = array("I", range(self.first_line, self.first_line + n))
        offsets = self.offsets
        self.lengths = lengths = array("I", map(add, map(sub, offsets[1:], offsets[:-1]), repeat(-1)))
        if n:
            lengths.append(self.last_length)
        return lines, lengths


def scan_compact(path: str, *, workers: int | None = None,
                 gather: Gathering | None = None) -> CompactIndex | None:
    """Index ``path``; ``None`` when it is not a well-formed v3 session (the line scan
    then reads it).  The strict harness checks and the cli's keep/drop rules run in this pass.

    A file of ``SPLIT_MIN`` bytes or more is read in two halves at once, the second in a forked
    child, when the caller allows two processes (``workers``, else ``parallel.workers()``: the
    library's default is one, the CLI's as many as the CPUs).

    ``gather(start)`` makes an object for the part of the file from byte ``start``: its
    ``add_all(values, cut)`` is given every parsed entry in file order (the header is not an entry;
    ``cut``: some of these values are lines ``lean_of`` cut the images out of),
    its ``extend(later)`` the object of the part after it; the index keeps it as ``gathered``.
    ``gather.first_share``: the share of the file's bytes the first part takes (``FIRST_SHARE``:
    what the later part sends costs it the rest; a gatherer's own part adds to that).  A
    summary of whole entries is then taken from the scan's one parse instead of reading back."""
    try:
        if workers is None:
            workers = parallel.workers()
        if workers > 1 and hasattr(os, "fork"):
            split = _split_point(path, FIRST_SHARE if gather is None else gather.first_share)
            if split is not None:
                return _scan_halves(path, split, gather)
        return scan_part(path, gather=gather)
    finally:
        forget_shared()


class Gathering(Protocol):
    """What ``scan_compact(gather=...)`` takes: the maker of each part's gatherer (``__call__``,
    with the part's first byte), and the share of the file the first part takes."""

    first_share: float

    def __call__(self, start: int) -> Any: ...


SPLIT_MIN = 48 << 20  # below this a fork, and sending half an index back, cost more than they save


# the first part's share of the file's bytes: the child (from there to the end) also pickles its part
FIRST_SHARE = 0.51


def _split_point(path: str, share: float = FIRST_SHARE) -> int | None:
    """The first line start after ``share`` of the file (the child reads from there), if the file is
    big enough to be read in two parts."""
    try:
        fd, st = open_fd(path)  # (a FIFO would block a plain open; the scan reports what is wrong)
    except PisessError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            size = st.st_size
            if size < SPLIT_MIN:
                return None
            return line_start_after(fh.fileno(), int(size * share), size)
        except OSError:
            return None  # the scan itself reports what is wrong


_Sent = tuple[CompactIndex, str | None, list]  # the child's part as it crosses the pipe, see _second_half


def _second_half(path: str, split: int, gather: Gathering | None = None) -> _Sent | None:
    """The child's part, made cheap to send: its id map is rebuilt from the ids on the other side,
    the ids travel as one joined string where they can (``None``: they are in the index), the extras
    as ``(position, value, offset, length)`` (``_received`` puts both back)."""
    half = scan_part(path, start=split, expect_header=False, gather=gather)
    if half is None:
        return None
    half.pos_of = {}
    half.turn = None
    joined = "\n".join(half.ids) if None not in half.ids else None
    if joined is not None and half.ids and joined.count("\n") == len(half.ids) - 1:
        half.ids = []  # one string pickles in one copy, a list item by item
    else:
        joined = None
    # plain dicts and numbers pickle at twice the speed of a dict subclass with slots
    extras = [(p, dict(e), e.offset, e.length) if type(e) is Light else (p, e, -1, -1) for p, e in half.extras.items()]
    half.extras = {}
    return half, joined, extras


def _received(sent: _Sent) -> CompactIndex:
    """The child's index as ``_second_half`` made it."""
    half, joined, sent_extras = sent
    if joined is not None:
        half.ids = joined.split("\n")
    extras: dict = {}
    for p, v, offset, length in sent_extras:
        if offset >= 0:
            v = Light(v)
            v.offset, v.length, v.index = offset, length, p
        extras[p] = v
    half.extras = extras
    return half


def _scan_halves(path: str, split: int, gather: Gathering | None = None) -> CompactIndex | None:
    """The first half here, the second in a forked child that sends its index back."""
    with parallel.Child(_second_half, path, split, gather) as child:
        first = scan_part(path, stop=split, gather=gather)
        if first is None:
            return None  # damaged: the line scan decides (leaving the context cancels the child)
        sent = child.result()
    if sent is None:
        return None  # a damaged second half, or a failed child: the line scan decides
    return join_parts(first, _received(sent))  # (frees the second half's arrays as it goes)


def join_parts(ix: CompactIndex, more: CompactIndex) -> CompactIndex | None:
    """``ix`` followed by ``more`` (positions and line numbers of ``more`` start at 0)."""
    if any(k is not None and not (type(k) is tuple and k[0] in ("num", "bool")) for k in more.key_of):
        return None  # keyed by identity (an object id, a missing id): identities do not cross the pipe
    if ix.later_pos_of:  # joined before (a followed file grows): that part's ids join the first map
        ix.pos_of.update(ix.later_pos_of)
        ix.later_pos_of = None
    n = len(ix.ids)
    ix.ids.extend(more.ids)
    ix.later_pos_of = dict(zip(more.ids, range(n, n + len(more.ids))))
    ix.later_pos_of.pop(None, None)
    for k, p in more.key_of.items():
        ix.key_of[k] = p + n
    parents = array("i", map(add, more.parents, repeat(n)))  # then the markers put back
    more.parents = array("i")
    for p in more.extras:
        parents[p] = _EXTRA
    for p in more.roots:
        parents[p] = _NO_PARENT
    ix.roots.extend(p + n for p in more.roots)
    for p, pid in more.other_parents.items():
        q = ix.position_of(pid)
        if q is not None:  # seen in either half: any occurrence names the same id
            parents[p] = q
        else:
            parents[p] = _OTHER_PARENT
            ix.other_parents[p + n] = pid
    ix.parents.extend(parents)
    del parents
    if more.ids:
        if not n:
            ix.first_line = ix.line_count + more.first_line
        if ix.lines is not None or more.lines is not None or ix.line_count + more.first_line != ix.first_line + n:
            try:
                ix._spell_out()
                more._spell_out()
            except OverflowError:
                return None
    ix.offsets.extend(more.offsets)
    if ix.lines is None:
        if more.ids:
            ix.last_length = more.last_length
    elif more.ids:  # (spelled out above; blank lines alone add no entry)
        lines, lengths = ix._spell_out()
        more_lines, more_lengths = more._spell_out()
        lengths.extend(more_lengths)
        lines.extend(map(add, more_lines, repeat(ix.line_count)))
    more.offsets = array("q")
    more.lengths = more.lines = None
    codes = {}
    for code, stub in enumerate(more.role_stubs):
        mine = next((i for i, s in enumerate(ix.role_stubs) if s["role"] == stub["role"]), None)
        if mine is None:
            if len(ix.role_stubs) >= 255:
                return None
            mine = len(ix.role_stubs)
            ix.role_stubs.append({"role": stub["role"]})
        codes[code] = mine
    ix.roles += more.roles.translate(bytes(codes.get(c, c) for c in range(256)))
    more.roles = bytearray()
    ix.stamps += more.stamps
    more.stamps = bytearray()
    for p, e in more.extras.items():
        if type(e) is Light:
            e.index = p + n
        ix.extras[p + n] = e
    ix.harness_error = ix.harness_error or more.harness_error
    ix.cli_plain = ix.cli_plain and more.cli_plain
    ix.sdk_marker = ix.sdk_marker or more.sdk_marker
    ix.size, ix.ends_with_newline = more.size, more.ends_with_newline
    ix.line_count += more.line_count
    ix.answered.extend(map(add, more.answered, repeat(n)))  # (the first part's results come first)
    ix.answered_by.extend(map(add, more.answered_by, repeat(n)))
    more.answered, more.answered_by = array("i"), array("i")
    ix.turn = None  # (a result at the start of ``more`` whose call ends ``ix`` is not noted: it is read back)
    ix.cuts.update(more.cuts)  # (keyed by offsets in the file: they need no shift)
    more.cuts = {}
    if ix.calls is not None and more.calls is not None:
        ix.calls.update(zip(map(add, more.calls, repeat(n)), more.calls.values()))
    else:
        ix.calls = None  # (a part read without counting: its lines are read back)
    more.calls = None
    if ix.gathered is not None and more.gathered is not None:
        ix.gathered.extend(more.gathered)
    else:
        ix.gathered = None  # (a part read without the gatherer: it covers not every entry)
    return ix


_CHUNK_LINES = 256  # parsed values held at once: more falls out of the CPU cache and costs more than it saves
_BLOCK_BYTES = 1 << 20  # bytes read at once (the 8 MiB of the line scan cost 25 MB of peak RSS here)


def scan_part(path: str, start: int = 0, stop: int | None = None, expect_header: bool = True,
              gather: Gathering | None = None) -> CompactIndex | None:
    """The index of the bytes ``start:stop`` of ``path`` (``start`` at a line's first byte), the
    header first unless ``expect_header`` is false; ``None`` as ``scan_compact``.  Parts are put
    together with ``join_parts``; ``gather`` as ``scan_compact``."""
    loads, decode_error, dget = orjson.loads, orjson.JSONDecodeError, dict.get
    ix = CompactIndex()
    ix.calls = {}
    take = None
    if gather is not None:
        ix.gathered = gather(start)
        take = ix.gathered.add_all
    role_code: dict = {}
    first_number = 0  # physical lines before the block
    end = 0
    terminated = True
    need_header = expect_header
    for base, parts, terminated in iter_blocks(path, chunk_size=_BLOCK_BYTES, start=start, stop=stop):  # noqa: B007 - the last block's ending is read after the loop
        starts = list(accumulate(map(len, parts), initial=base))  # starts[k] + k: offset of line k
        for lo in range(0, len(parts), _CHUNK_LINES):
            chunk = parts[lo:lo + _CHUNK_LINES]
            numbered = range(lo, lo + len(chunk))
            cut = False  # (a value of the chunk is a line with its images cut out)
            if max(map(len, chunk)) >= LINE_MIN:
                for k in compress(numbered, map(ge, map(len, chunk), repeat(LINE_MIN))):
                    where, lean = lean_of(parts[k])
                    if where:
                        ix.cuts[starts[k] + k] = where
                        if lean is not None:  # (a message: the index keeps none of its content)
                            chunk[k - lo] = lean
                            cut = True
            # The common case without a Python step per line: every line parses to an object.
            # Plain message candidates are sorted from the rest; their fields are checked and
            # stored column by column in _add_block.
            try:
                vals = list(map(loads, chunk))
                mask = list(map(and_, map(eq, map(dget, vals, repeat("type")), repeat("message")),
                                map(eq, map(len, vals), repeat(5))))
            except (decode_error, TypeError, RecursionError):
                ks, vs, xs = _sort_lines(chunk, lo)
                if take is not None:
                    merged = sorted([*zip(ks, vs), *xs], key=lambda kv: kv[0])
                    take([v for _, v in (merged[1:] if need_header else merged)], cut)  # (the first value is the header)
            else:
                if take is not None:
                    take(vals[1:] if need_header else vals, cut)
                ks = list(compress(numbered, mask))
                vs = list(compress(vals, mask))
                xs = list(compress(zip(numbered, vals), map(not_, mask))) if len(vs) < len(vals) else []
                del vals
            if need_header and (ks or xs):
                if not xs or (ks and ks[0] < xs[0][0]) or not _take_header(ix, xs.pop(0)[1]):
                    return None  # no header, a legacy or odd one: the line scan knows each reader's answer
                need_header = False
            if (ks or xs) and not _add_block(ix, role_code, starts, first_number, parts, ks, vs, xs,
                                             lo, lo + len(chunk)):
                return None
        first_number += len(parts)
        end = starts[-1] + len(parts)
    ix.turn = None
    if need_header:
        return None
    ix.size = end - (0 if terminated else 1)
    ix.ends_with_newline = terminated
    ix.line_count = first_number
    return ix


def _sort_lines(chunk: list, lo: int) -> tuple[list, list, list]:
    """Line by line, for a chunk with a blank line or one that is not a JSON object."""
    ks: list = []
    vs: list = []
    xs: list = []
    for k, raw in enumerate(chunk, lo):
        if is_blank(raw):
            continue
        v = parse_json(raw)
        if type(v) is dict and len(v) == 5 and v.get("type") == "message":
            ks.append(k)
            vs.append(v)
        else:
            xs.append((k, v))
    return ks, vs, xs


def _take_header(ix: CompactIndex, v: Any) -> bool:
    if type(v) is not dict or v.get("type") != "session" or type(v.get("id")) is not str \
            or needs_migration(v) or check_harness_header(v) is not None:
        return False
    ix.header = v
    ix.sdk_marker = sdk_only_header(v)
    return True


def _plain(v: dict) -> bool:
    """A message entry the index stores without keeping its ``Light``."""
    eid, ts, msg, pid = v.get("id"), v.get("timestamp"), v.get("message"), v.get("parentId", 0)
    return (type(eid) is str and eid != "" and type(ts) is str and len(ts) == _TS_WIDTH and ts.isascii()
            and type(msg) is dict and type(msg.get("role")) is str and (pid is None or type(pid) is str))


_STR_OR_NONE = {str, type(None)}


def _columns(vs: list) -> tuple | None:
    """ids, parentIds, timestamps (joined) and roles of plain candidates, or ``None`` when one of
    them is not plain.  Each ``join`` doubles as the type check of its column (a ``TypeError``
    unless every item is a string), so each column is walked about once."""
    dget: Callable[..., Any] = dict.get  # (the values are any JSON: the joins check the types)
    try:
        eids = list(map(dget, vs, repeat("id")))
        joined = "\n".join(eids)
        tss = list(map(dget, vs, repeat("timestamp")))
        stamps = "".join(tss)
        roles = list(map(dget, map(dget, vs, repeat("message")), repeat("role")))  # every message an object
        "".join(roles)
    except TypeError:
        return None
    n = len(eids)
    # no id is empty or holds a newline; every stamp is 24 ASCII characters
    if joined.count("\n") != n - 1 or "\n\n" in joined or joined[:1] in ("", "\n") or joined[-1] == "\n" \
            or set(map(len, tss)) != {_TS_WIDTH} or not stamps.isascii():
        return None
    pids = list(map(dget, vs, repeat("parentId"), repeat(0)))
    if not set(map(type, pids)) <= _STR_OR_NONE:
        return None
    # Fresh copies made in one burst sit together; the parsed ids would each keep a hole among
    # the freed memory of their line (measured: 5 MB less peak RSS on 1,000,000 entries).
    return joined.split("\n"), pids, stamps, roles


def _add_block(ix: CompactIndex, role_code: dict, starts: list, first_number: int, parts: list,
               ks: list, vs: list, xs: list, lo: int, hi: int) -> bool:
    """Store the entries of lines ``lo:hi`` of ``parts``: plain candidates ``ks``/``vs`` (line
    index, value) and the rest ``xs`` ((line index, value), in order)."""
    cols = _columns(vs) if vs else ([], [], "", [])
    if cols is None:  # some candidate is not plain after all: sort them one by one (rare)
        keep = [_plain(v) for v in vs]
        xs = sorted(xs + [(k, v) for k, v, ok in zip(ks, vs, keep) if not ok], key=lambda kv: kv[0])
        ks = [k for k, ok in zip(ks, keep) if ok]
        vs = [v for v, ok in zip(vs, keep) if ok]
        cols = _columns(vs) if vs else ([], [], "", [])
        if cols is None:
            return False  # an id holding a newline passes _plain, not the joined column: the line scan decides
    eids, pids, stamps, roles = cols
    for role in set(roles) - role_code.keys():
        if len(ix.role_stubs) >= 255:
            return False
        role_code[role] = len(ix.role_stubs)
        ix.role_stubs.append({"role": role})

    pos_base = len(ix.ids)
    ids_b = list(eids)
    # Usually every line of the chunk is an entry (no blank line, not the header's chunk): the
    # entries are then the lines themselves, in order, and need no merging.
    every_line = len(ks) + len(xs) == hi - lo
    merged: list[int] | None = None if every_line else list(ks)  # line indexes of the entries, extras merged in
    ks_b = range(lo, hi) if merged is None else merged
    at: list = []  # where each extra goes among the block's entries
    for j, (k, v) in enumerate(xs):
        idx = k - lo if every_line else bisect_left(ks, k) + j
        pos = pos_base + idx
        at.append(idx)
        e = lighten(v, 0, 0)  # offset and length are set below
        # (the line rules are asked only while their answer can still change something)
        if type(e) is Light:
            e.index = pos
            if not ix.sdk_marker and sdk_only_entry(e):
                ix.sdk_marker = True
            eid = e.get("id", js.UNDEF)
        else:
            eid = js.get(e, "id") if e is not NOT_JSON and e is not None else js.UNDEF  # (null.id throws)
            # a light value is an object that is no header: the cli keeps it as it is
            if ix.cli_plain and (cli_drop_reason(e) is not None or cli_skips(e)):
                ix.cli_plain = False  # the cli drops or skips this line
        if not ix.harness_error and check_harness_entry(e) is not None:
            ix.harness_error = True
        if ix.harness_error and not ix.cli_plain:
            return False
        ix.extras[pos] = e
        ids_b.insert(idx, eid if type(eid) is str else None)
        if merged is not None:
            merged.insert(idx, k)
        if type(eid) is not str:
            ix.key_of[js.key(eid)] = pos

    ix.ids.extend(ids_b)
    pos_of = ix.pos_of
    pos_of.update(zip(ids_b, range(pos_base, pos_base + len(ids_b))))
    pos_of.pop(None, None)  # extras without a string id are in key_of

    par_b = list(map(pos_of.get, pids, repeat(_OTHER_PARENT)))
    if _OTHER_PARENT in par_b:  # a root, or a parent not (yet) seen: keep its id
        xks = [k for k, _ in xs]
        for i, q in enumerate(par_b):
            if q == _OTHER_PARENT:
                if pids[i] is None:
                    par_b[i] = _NO_PARENT
                    ix.roots.append(pos_base + i + bisect_left(xks, ks[i]))
                else:
                    ix.other_parents[pos_base + i + bisect_left(xks, ks[i])] = pids[i]
    role_b = bytearray(map(role_code.__getitem__, roles))
    stamp_b = bytearray(stamps.encode("ascii"))
    blank = b"\0" * _TS_WIDTH
    for idx in at:
        par_b.insert(idx, _EXTRA)
        role_b.insert(idx, 255)
        stamp_b[idx * _TS_WIDTH:idx * _TS_WIDTH] = blank
    ix.parents.extend(par_b)
    ix.roles += role_b
    ix.stamps += stamp_b
    if "toolResult" in role_code or "assistant" in role_code:
        _note_answers(ix, vs, roles, pos_base, at)

    if every_line:
        offsets = list(map(add, starts[lo:hi], ks_b))
        lengths: Any = map(len, parts[lo:hi])
        lines: Any = range(first_number + lo + 1, first_number + hi + 1)
    else:
        offsets = list(map(add, map(starts.__getitem__, ks_b), ks_b))
        lengths = map(len, map(parts.__getitem__, ks_b))
        lines = map(add, ks_b, repeat(first_number + 1))
    first = first_number + ks_b[0] + 1
    if not pos_base:
        ix.first_line = first
    if ix.lines is None and (first != ix.first_line + pos_base or ks_b[-1] - ks_b[0] != len(ks_b) - 1):
        try:
            ix._spell_out()  # (once: from then on every chunk extends the arrays)
        except OverflowError:
            return False
    ix.offsets.extend(offsets)
    if ix.lines is None:
        ix.last_length = len(parts[ks_b[-1]])
    else:
        line_numbers, line_lengths = ix._spell_out()
        try:
            line_lengths.extend(lengths)
            line_numbers.extend(lines)
        except OverflowError:
            return False
    for idx in at:
        e = ix.extras[pos_base + idx]
        if type(e) is Light:
            e.offset = offsets[idx]
            e.length = len(parts[ks_b[idx]])
    return True


_TURN_ROLES = frozenset(("assistant", "toolResult"))
# the stop reasons of the assistant messages pi-ai drops, their calls with them (here, where the scan
# notes answered calls; ``model.pairing.SKIPPED`` is this)
DROPPED = ("error", "aborted")


def _note_answers(ix: CompactIndex, vs: list, roles: list, pos_base: int, at: list) -> None:
    """``CompactIndex.answered`` of a block's plain messages ``vs`` (their ``roles``; the block's
    entries from ``pos_base``, its extras at ``at``), read from the values the scan parsed."""
    wanted = list(compress(range(len(roles)), map(_TURN_ROLES.__contains__, roles)))
    if not wanted:
        return
    if at:  # the plain messages' places among the block's entries, the extras' taken out
        taken = set(at)
        place = [i for i in range(len(vs) + len(at)) if i not in taken]
    # (an assistant's call ids are collected only where a result follows it: a final answer's never)
    turn_pos, turn, ids = ix.turn if ix.turn is not None else (-1, None, None)
    calls = ix.calls
    for i in wanted:
        m = vs[i]["message"]
        if roles[i] == "assistant":
            turn_pos, turn, ids = pos_base + (place[i] if at else i), m, None
            if calls is not None:
                content = m.get("content")
                calls[turn_pos] = [b.get("type") for b in content if type(b) is dict].count("toolCall") \
                    if type(content) is list else 0
            continue
        if turn is None:
            continue
        if ids is None:
            content = turn.get("content")
            if type(content) is not list or turn.get("stopReason") in DROPPED:
                turn = None
                continue
            ids = {cid for b in content if type(b) is dict and b.get("type") == "toolCall"
                   and type(cid := b.get("id")) is str}
        cid = m.get("toolCallId")
        if type(cid) is str and cid in ids:
            ix.answered.append(pos_base + (place[i] if at else i))
            ix.answered_by.append(turn_pos)
    ix.turn = (turn_pos, turn, ids)


class CompactEntries(Cached, Sequence):
    """The compact store (``session.entries`` over a ``CompactIndex``, an ``EntryStore``): values
    are built on first access and kept, so an entry is the same object every time (positions and
    identity checks rely on that); ids, parents, lines and spans are answered from the index's
    arrays without building any."""

    __slots__ = ("ix", "_made", "by_id", "_unique_ids")

    def __init__(self, index: CompactIndex, read_back: ReadBack) -> None:
        self.ix = index
        self._made: dict = {}
        self._unique_ids: bool | None = None
        self._init_caches(read_back)
        self.by_id = CompactById(self)

    @property
    def lines(self) -> Any:
        return self.ix.line_numbers()

    def __len__(self) -> int:
        return len(self.ix.ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self.ix.ids)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("entry index out of range")
        got = self._made.get(i)
        if got is None:
            got = self._made[i] = self.ix.light(i)
        return got

    def __iter__(self):
        for i in range(len(self.ix.ids)):
            yield self[i]

    def take(self, positions: Iterable[int]) -> list:
        made, light = self._made, self.ix.light  # __getitem__ inlined: a path takes a million
        out: list = []
        append = out.append
        for p in positions:
            e = made.get(p)
            if e is None:
                e = made[p] = light(p)
            append(e)
        return out

    def _peek(self, pos: int) -> Any:
        return self._made.get(pos)

    def _put(self, pos: int, whole: Any) -> None:
        self._made[pos] = whole

    def _all_objects(self):
        # only extras can be kept values that are not light (numbers, lists, later headers): every
        # light entry is found by its own position
        return ((p, self[p]) for p in self.ix.extras)

    def find(self, entry_id: Any) -> int | None:
        ix = self.ix
        return ix.position_of(entry_id) if type(entry_id) is str else ix.key_of.get(js.key(entry_id))

    def distinct_ids(self) -> int:
        return self.ix.distinct_ids()

    def _unique(self) -> bool:
        """No duplicate string id and none empty (``CompactIndex.ids_unique``), asked once."""
        got = self._unique_ids
        if got is None:
            got = self._unique_ids = self.ix.ids_unique()
        return got

    def parent(self, pos: int) -> int | None:
        # ``parent_position`` inlined (a path walk calls this per entry).  The position comes from
        # the id maps, not the ``parents`` array: an int read from an array is a new object, and a
        # walk up a million entries keeps every position (28 MB more peak RSS measured that way).
        # An index from the cache whose ids are distinct has no map to take it from (building it
        # costs more than the ints): there the recorded position is the one byId finds.
        ix = self.ix
        q = ix.parents[pos]
        if ix._pos_of is None and self._unique():
            if q >= 0:
                return q
            if q == _EXTRA:
                got = ix.extra_parents.get(pos)
                if got is not None:
                    return got
        if q >= 0:
            pid = ix.ids[q]
            if not pid:
                return None  # "" is falsy: no parent, though an entry may have the id ""
            later = ix.later_pos_of
            if later:
                up = later.get(pid)
                if up is not None:
                    return up
            return ix.pos_of.get(pid)
        if q == _NO_PARENT:
            return None
        return ix.parent_position(pos)

    def line(self, pos: int) -> int:
        ix = self.ix
        return ix.lines[pos] if ix.lines is not None else ix.first_line + pos

    def span(self, pos: int) -> tuple[int, int]:
        return self.ix.offsets[pos], self.ix.length_of(pos)

    def spans(self) -> tuple[Sequence[int], Sequence[int]]:
        ix = self.ix
        return ix.offsets, ix._spell_out()[1]  # (lengths as an array from here on)

    def extras(self, reverse: bool = False):
        """``(position, entry)`` of every entry that is not a plain message, in file order."""
        for i in (reversed(self.ix.extras) if reverse else self.ix.extras):
            yield i, self[i]

    def suspects(self):
        ix = self.ix
        return sorted({*ix.other_parents, *ix.extras})

    def not_following(self) -> set | None:
        from itertools import compress

        ix = self.ix
        parents = ix.parents
        if len(parents) != len(ix.ids):
            return None
        # a plain message whose recorded parent is the entry before it follows it; after an
        # extra the next entry is looked at too (after a leaf record the leaf is its target)
        out = set(compress(range(len(parents)), map(int.__ne__, parents, range(-1, len(parents) - 1))))
        out.update(p + 1 for p in ix.extras if p + 1 < len(parents))
        return out

    def parents_precede(self) -> bool:
        from operator import ge

        ix = self.ix
        if not self._unique() or any(map(ge, ix.parents, range(len(ix.ids)))):
            return False
        parent_at = self.parent
        return all((q := parent_at(p)) is None or q < p for p in {*ix.other_parents, *ix.extras})

    def gathered(self) -> Any:
        return self.ix.gathered

    def plain_role(self, pos: int) -> str | None:
        r = self.ix.roles[pos]
        return None if r == 255 else self.ix.role_stubs[r]["role"]

    def role_positions(self, role: str) -> list[int]:
        ix = self.ix
        code = next((i for i, stub in enumerate(ix.role_stubs) if stub.get("role") == role), None)
        found: list = []
        if code is not None:  # a byte search over the role column
            roles, at = ix.roles, ix.roles.find(code)
            while at >= 0:
                found.append(at)
                at = roles.find(code, at + 1)
        odd = [p for p, e in ix.extras.items() if role_is(e, role)]  # (extras are few)
        return sorted(found + odd) if odd else found

    def string_ids(self) -> Sequence[Any]:
        return self.ix.ids

    def cached_prefix(self) -> Any:
        return self.ix.cached

    def answered(self) -> tuple[Sequence[int], Sequence[int]]:
        return self.ix.answered, self.ix.answered_by

    def tool_call_counts(self) -> Mapping[int, int] | None:
        return self.ix.calls


class CompactById(Mapping):
    """``by_id`` of the compact store: ``js.key(id)`` -> entry, last occurrence wins, read through
    the store (a complete entry read back replaces its light one here too)."""

    __slots__ = ("entries",)

    def __init__(self, entries: CompactEntries) -> None:
        self.entries = entries

    def __getitem__(self, key: Any) -> Any:
        ix = self.entries.ix
        pos = ix.position_of(key) if type(key) is str else ix.key_of.get(key)
        if pos is None:
            raise KeyError(key)
        return self.entries[pos]

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except (KeyError, TypeError):
            return default

    def __iter__(self):
        ix = self.entries.ix
        later = ix.later_pos_of or {}
        yield from later
        yield from (k for k in ix.pos_of if k not in later)
        yield from ix.key_of

    def __len__(self) -> int:
        return sum(1 for _ in self)
