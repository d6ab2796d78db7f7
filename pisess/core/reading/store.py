"""Where a session's entries live: one interface, two implementations.

``EntryStore`` is what every reader of a ``Session`` may ask of its entries (in the manner of
pre-commit's ``Language`` protocol); callers never ask which implementation they hold.

* ``ListStore``: the entries as parsed values in a list (a damaged, legacy or small-bytes read).
* ``compact.CompactEntries``: the entries of a ``CompactIndex``, built on first access.

Both read complete entries back by offset (a streamed file keeps only structural keys) and put
the complete value in the entry's place, so every later access, lookup and position sees it.
The store owns these caches; the ``Session`` holding it stays frozen.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Sequence as SequenceABC
from typing import Any, Protocol

from .. import js
from ..js import UNDEF, get
from .jsonl import Light

ReadBack = Callable[[list], list]  # complete values of light entries, read by offset (RawFile.full)


class EntryStore(Protocol):
    """A session's entries by position (the header is not an entry)."""

    @property
    def lines(self) -> Sequence[int]:
        """The physical line (1-based) of each entry."""

    @property
    def by_id(self) -> Mapping[Any, Any]:
        """``js.key(id)`` -> entry, the last occurrence wins (pi's byId)."""

    def __len__(self) -> int: ...

    def __getitem__(self, pos: int) -> Any:
        """The entry at ``pos``: the same object on every access (until read back complete)."""

    def __iter__(self) -> Iterator[Any]: ...

    def take(self, positions: Iterable[int]) -> list:
        """The entries at ``positions`` (valid ones), in that order."""

    def _peek(self, pos: int) -> Any:
        """The entry at ``pos`` where the store has made it already (light or complete), else
        ``None`` (``Session.complete_at`` of a run makes no light entry it would drop at once)."""

    def find(self, entry_id: Any) -> int | None:
        """The position of ``byId.get(entry_id)`` (last occurrence wins), or ``None``."""

    def position(self, entry: Any) -> int | None:
        """The position of this entry object (a light one read back complete keeps it), or ``None``
        when it is not one of the store's."""

    def parent(self, pos: int) -> int | None:
        """The position of ``byId.get(parentId)`` of entry ``pos`` for a truthy ``parentId``;
        ``None`` when it has none or it is not in the file."""

    def line(self, pos: int) -> int: ...

    def span(self, pos: int) -> tuple[int, int]:
        """Byte offset and length (without the newline) of entry ``pos``'s line."""

    def spans(self) -> tuple[Sequence[int], Sequence[int]]:
        """The offset and the length of every entry's line."""

    def extras(self, reverse: bool = False) -> Iterator[tuple[int, Any]]:
        """``(position, entry)`` of every entry that is not a plain message (an object of type
        ``message`` with a string id), in file order; a store may yield more."""

    def suspects(self) -> Iterable[int]:
        """Positions, ascending, of the entries whose parent, targets or kept entry can be missing
        or misplaced: all but plain messages whose parent is an earlier entry."""

    def parents_precede(self) -> bool:
        """True when every entry's parent is known to sit before it (no walk can loop)."""

    def not_following(self) -> set | None:
        """Positions whose entry may not be the child of the entry before it (roots, parents met
        out of order, every entry that is not a plain message and the one after it), or ``None``
        when the store cannot tell without building every entry (then ask each one)."""

    def plain_role(self, pos: int) -> str | None:
        """The role of a plain message, without building the entry (``None``: look at the entry)."""

    def gathered(self) -> Any:
        """What the read's gatherer took from every entry (``open_session(gather=...)``), or
        ``None`` when the store was not read that way (a line scan, an index from the cache)."""

    def role_positions(self, role: str) -> list[int]:
        """Positions, ascending, of the ``message`` entries whose message has this role."""

    def string_ids(self) -> Sequence[Any]:
        """The id of each entry where it is a string, else ``None``."""

    def distinct_ids(self) -> int:
        """How many distinct string ids there are."""

    def complete(self, entries: list) -> list:
        """``entries`` complete (light ones read back and put in their place), in order."""

    def answered(self) -> tuple[Sequence[int], Sequence[int]]:
        """Positions of tool results, ascending, and of the assistant message whose tool call
        each one's ``toolCallId`` names (that did not end ``error`` or ``aborted``), as the read
        found them in the lines' one parse (``CompactIndex.answered``); empty where it did not."""

    def tool_call_counts(self) -> Mapping[int, int] | None:
        """Per plain assistant message (its position), how many toolCall blocks its content holds,
        as the read counted them in the lines' one parse (``CompactIndex.calls``); ``None`` where it
        did not (a position not in it: its line holds what it holds)."""

    def cached_prefix(self) -> Any:
        """The index cache's note (``cache.Prefix``) where the entries came from its cached
        prefix, else ``None``."""


class Cached:
    """The caches both stores share: where each object is, and what was read back.

    A subclass provides ``_peek(pos)`` (the object at ``pos`` if one is built, else ``None``),
    ``_put(pos, whole)`` and ``_all_objects()`` (``(pos, object)`` of the objects a position
    search must look among)."""

    __slots__ = ("_read_back", "_read", "_replaced", "_pos_cache")

    def _init_caches(self, read_back: ReadBack) -> None:
        self._read_back = read_back
        self._read: dict = {}  # id(light) -> (light, whole): the light is kept so its id is not reused
        self._replaced: dict = {}  # id(whole) -> position
        self._pos_cache: dict | None = None

    def _peek(self, pos: int) -> Any:
        raise NotImplementedError

    def _put(self, pos: int, whole: Any) -> None:
        raise NotImplementedError

    def _all_objects(self) -> Iterable[tuple[int, Any]]:
        raise NotImplementedError

    def position(self, entry: Any) -> int | None:
        if type(entry) is Light:  # light entries carry their position
            i = entry.index
            if i >= 0 and self._peek(i) is entry:
                return i
        replaced = self._replaced
        if replaced:
            if id(entry) in replaced:
                return replaced[id(entry)]
            got = self._read.get(id(entry))  # a light entry read back: its whole one holds its place
            if got is not None and got[0] is entry and id(got[1]) in replaced:
                return replaced[id(got[1])]
        cache = self._pos_cache
        if cache is None:
            cache = self._pos_cache = {id(e): i for i, e in self._all_objects()}
        return cache.get(id(entry))

    def complete(self, entries: list) -> list:
        read = self._read
        fresh = list({id(e): e for e in entries if type(e) is Light and id(e) not in read}.values())
        if fresh:
            for light, whole in zip(fresh, self._read_back(fresh)):
                read[id(light)] = (light, whole)
                if light is whole:
                    continue
                i = self.position(light)
                if i is not None:
                    self._put(i, whole)
                    self._replaced[id(whole)] = i
        return [read[id(e)][1] if type(e) is Light else e for e in entries]


class ListStore(Cached, SequenceABC):
    """Entries as parsed values in a list; ``by_id`` is filled in one pass, light entries are told
    their position."""

    __slots__ = ("_entries", "lines", "by_id", "_extras", "_offsets", "_lengths")

    def __init__(self, entries: list, lines: Sequence[int], read_back: ReadBack,
                 spans: tuple[Sequence[int], Sequence[int]] | None = None) -> None:
        self._entries = entries
        self.lines = lines
        self._init_caches(read_back)
        self._offsets, self._lengths = spans if spans is not None else ((), ())
        by_id: dict = {}
        extras: list = []
        for i, e in enumerate(entries):
            te = type(e)
            if te is Light:
                e.index = i
            if te is Light or te is dict:
                eid = e.get("id", UNDEF)
                if type(eid) is str:
                    by_id[eid] = e
                    if e.get("type") != "message":
                        extras.append(i)
                    continue
            else:
                eid = get(e, "id")
            by_id[js.key(eid)] = e
            extras.append(i)
        self.by_id = by_id
        self._extras = extras

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, pos):
        return self._entries[pos]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __eq__(self, other: object) -> bool:
        return list(self._entries) == list(other) if isinstance(other, (list, ListStore)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListStore({self._entries!r})"

    def take(self, positions: Iterable[int]) -> list:
        entries = self._entries
        return [entries[p] for p in positions]

    def _peek(self, pos: int) -> Any:
        entries = self._entries
        return entries[pos] if pos < len(entries) else None

    def _put(self, pos: int, whole: Any) -> None:
        old = self._entries[pos]
        self._entries[pos] = whole
        k = js.key(get(old, "id"))
        if self.by_id.get(k) is old:
            self.by_id[k] = whole

    def _all_objects(self) -> Iterable[tuple[int, Any]]:
        return enumerate(self._entries)

    def find(self, entry_id: Any) -> int | None:
        e = self.by_id.get(js.key(entry_id))
        return None if e is None else self.position(e)

    def parent(self, pos: int) -> int | None:
        e = self._entries[pos]
        pid = get(e, "parentId")
        if not js.truthy(pid):
            return None
        p = self.by_id.get(pid if type(pid) is str else js.key(pid))
        return None if p is None else self.position(p)

    def line(self, pos: int) -> int:
        return self.lines[pos]

    def span(self, pos: int) -> tuple[int, int]:
        return self._offsets[pos], self._lengths[pos]

    def spans(self) -> tuple[Sequence[int], Sequence[int]]:
        return self._offsets, self._lengths

    def extras(self, reverse: bool = False) -> Iterator[tuple[int, Any]]:
        entries = self._entries
        for i in (reversed(self._extras) if reverse else self._extras):
            yield i, entries[i]

    def suspects(self) -> Iterable[int]:
        return range(len(self._entries))

    def parents_precede(self) -> bool:
        return False  # not known without walking

    def not_following(self) -> set | None:
        return None

    def plain_role(self, pos: int) -> str | None:
        return None

    def cached_prefix(self) -> Any:
        return None

    def answered(self) -> tuple[Sequence[int], Sequence[int]]:
        return (), ()

    def tool_call_counts(self) -> Mapping[int, int] | None:
        return None

    def gathered(self) -> Any:
        return None

    def role_positions(self, role: str) -> list[int]:
        return [i for i, e in enumerate(self._entries) if role_is(e, role)]

    def distinct_ids(self) -> int:
        return sum(1 for k in self.by_id if type(k) is str)

    def string_ids(self) -> Sequence[Any]:
        return [eid if type(eid) is str else None
                for eid in (get(e, "id") if isinstance(e, dict) else None for e in self._entries)]


def role_is(e: Any, role: str) -> bool:
    if not isinstance(e, dict) or e.get("type") != "message":
        return False
    m = e.get("message")
    return isinstance(m, dict) and m.get("role") == role


def spans_of(raw_lines: Iterable[Any]) -> tuple[array, array]:
    """Offsets and lengths of ``RawLine`` records (a list store's ``spans``)."""
    offsets, lengths = array("q"), array("q")
    for ln in raw_lines:
        offsets.append(ln.offset)
        lengths.append(ln.length)
    return offsets, lengths
