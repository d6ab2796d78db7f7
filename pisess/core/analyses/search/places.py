"""Kept places: every entry of a file placed once, for its current leaf.

Placing a hit needs the file's tree at its current leaf; reading that (the compact index) and
walking the path cost more than the rest of a warm search of a big file.  So the first search with
hits in a file places every entry of it at once (``places_of``: each entry's offset, line, place,
id, type and role), and the search index keeps that beside the file's rows (``codec``), valid for
the very bytes indexed; later searches place their hits from it (``placed_by``, the same hits as
``scan.placed``).  When the file grows by pi's next turns (plain messages, each the child of the
one before, the first the child of the leaf, new ids), the update that indexes them adds them on
(``extend_places``: nothing earlier moves); anything else appended, or a file indexed anew, drops
them, and the next search with hits there places the file again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...js import get
from ...reading.scan import session_name
from .scan import FileResult, entries_at, entry_fields, hits_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ...reading.session import Session

WHERE = ("active", "edited", "retained", "compacted", "branch")  # model.placement.WHERE (a test keeps them equal)
_WHERE_CODE = {w: k for k, w in enumerate(WHERE)}
_ACTIVE = _WHERE_CODE["active"]


@dataclass(frozen=True)
class Places:
    """Where every entry of one file sits at its current leaf, and what a hit on it shows: per
    entry, in file order, its line's byte offset, physical line, place (an index into ``WHERE``),
    id, and kind (an index into ``kind_table``, of ``(type, role)``); and the fields of the file's
    ``FileResult``.  Made once from the session (``places_of``) and kept by the search index while
    the file is unchanged (``extend_places`` after an append that cannot move an earlier entry),
    so a warm search places its hits without reading the file's tree.

    ``ext``: ``(leaf id, ids the file names but no entry has, length of the longest id)`` where
    appended entries can be added on (``extend_places``), else ``None``."""

    offsets: Any  # array("q")
    lines: Any  # array("q")
    where: bytes
    ids: list
    kinds: bytes
    kind_table: list
    session_id: Any
    name: str | None
    cwd: Any
    created_at: Any
    reader: str
    note: str | None
    placement_error: str | None
    dropped_lines: list
    id_width: int
    ext: tuple | None = None


def placed_by(p: Places, path: str, found: dict, active_only: bool) -> FileResult | None:
    """``scan.placed``'s answer from kept placements: the same hits, in the same order."""
    table, where, kinds, ids = p.kind_table, p.where, p.kinds, p.ids
    hits = hits_of(entries_at(p.offsets, found), found, active_only, lambda i: WHERE[where[i]], p.lines.__getitem__,
                   lambda i: (ids[i], *table[kinds[i]]))
    if not hits:
        return None
    return FileResult(path, p.session_id, p.name, p.cwd, p.created_at, p.reader, hits, p.note, p.placement_error,
                      list(p.dropped_lines), p.id_width)


def places_of(session: Session, note: str | None) -> Places | None:
    """Every entry of ``session`` placed (``placed``'s work for all of them at once), or ``None``
    when an entry's type or role cannot be kept (a value that is not a string or a number)."""
    from array import array

    from ...model.placement import place

    pl = place(session, branches=False)
    store = session.store
    got = _entry_columns(store)
    if got is None:
        return None
    ids, kinds, table = got
    where = bytes(map(_WHERE_CODE.__getitem__, pl.where))
    h = session.header if isinstance(session.header, dict) else {}
    return Places(array("q", store.spans()[0]), array("q", session.entry_lines), where, ids, bytes(kinds), table,
                  h.get("id"), session_name(session), h.get("cwd"), h.get("timestamp"), session.reader, note,
                  pl.error, list(session.dropped_lines), session.id_width, _extension(session, pl, note, where))


_KINDS = 255  # kinds a file's places can tell apart (one byte each)


def _entry_columns(store: Any) -> tuple[list, bytearray, list] | None:
    """Each entry's id, and its ``(type, role)`` as a code into a table of them."""
    table: list = []
    code: dict = {}

    def code_of(k: tuple) -> int | None:
        c = code.get(k)
        if c is None:
            if len(table) >= _KINDS:
                return None
            c = code[k] = len(table)
            table.append(k)
        return c

    ix = getattr(store, "ix", None)
    try:
        if ix is not None and hasattr(ix, "role_stubs"):  # the compact store: plain messages from its columns
            for stub in ix.role_stubs:  # (role code k is table entry k)
                code_of(("message", stub["role"]))
            ids = list(ix.ids)
            kinds = bytearray(ix.roles)
            at = ix.extras
        else:
            ids = [None] * len(store)
            kinds = bytearray(len(store))
            at = range(len(store))
        for p in at:
            eid, t, role = entry_fields(store[p])
            c = code_of((t, role))
            if c is None:
                return None
            ids[p] = eid
            kinds[p] = c
    except TypeError:  # an unhashable type or role (an object): placed anew each time
        return None
    return ids, kinds, table


_REFS = ("parentId", "targetId", "firstKeptEntryId", "fromId")


def _extension(session: Session, pl: Any, note: str | None, where: bytes) -> tuple | None:
    """``(leaf id, ids named by no entry, length of the longest id)`` when entries appended to the
    file's leaf can be placed without placing the file again (``extend_places``), else ``None``.

    That holds for a well-formed v3 file read by the compact index (nothing dropped, no other
    reader's note, no placement error) whose ids are distinct, whose every parent precedes its
    child, without a ``context_edit`` (an old edit may name a new entry), and whose leaf is its
    last entry, a message on the active path (so the leaf of either reader is the last entry
    appended).  The ids its entries name that no entry has are kept: a new entry with one of them
    would be found by an old reference."""
    store = session.store
    n = len(store)
    if (not n or note is not None or session.dropped_lines or session.migrated_from_version is not None
            or pl.error is not None or getattr(store, "ix", None) is None or not store.parents_precede()
            or where[n - 1] != _ACTIVE):
        return None
    last = store[n - 1]
    leaf = get(last, "id")
    if get(last, "type") != "message" or type(leaf) is not str or pl.leaf_id != leaf:
        return None
    find = store.find
    refs = set()
    for _, e in store.extras():
        if get(e, "type") == "context_edit":
            return None
        for k in _REFS:
            v = get(e, k)
            if type(v) is str and v and find(v) is None:
                refs.add(v)
    for v in store.ix.other_parents.values():  # type: ignore[attr-defined]  # (a compact store: checked above)
        if type(v) is str and v and find(v) is None:
            refs.add(v)
    longest = max((len(i) for i in store.string_ids() if type(i) is str), default=0)
    return leaf, sorted(refs), longest


def turn(v: Any) -> tuple[str, Any, str] | None:
    """``(id, parentId, role)`` of a line's value that is a message entry both readers keep as it
    is (a string id without a newline, a string or null parent), else ``None``: what
    ``extend_places`` needs of an appended line."""
    if type(v) is not dict or v.get("type") != "message":
        return None
    eid, ts, msg, pid = v.get("id"), v.get("timestamp"), v.get("message"), v.get("parentId", 0)
    if (type(eid) is str and eid != "" and "\n" not in eid and type(ts) is str and ts != ""
            and type(msg) is dict and type(msg.get("role")) is str and (pid is None or type(pid) is str)):
        return eid, pid, msg["role"]
    return None


def extend_places(p: Places, appended: list[tuple[int, int, tuple]]) -> Places | None:
    """``p`` with the entries of appended lines placed (``(offset, physical line, turn(value))``
    of each line, blank lines left out), when they are plain messages each the child of the one
    before, the first the child of the leaf, with new ids: they are then the new end of the active
    path and no earlier entry moves.  ``None`` when anything else was appended (the file is placed
    anew)."""
    from array import array

    if p.ext is None:
        return None
    if not appended:
        return p
    leaf, refs, longest = p.ext
    parent = leaf
    new_ids: list[str] = []
    roles: list[str] = []
    for _off, _number, t in appended:
        if t is None or t[1] != parent:
            return None
        parent = t[0]
        new_ids.append(parent)
        roles.append(t[2])
    fresh = set(new_ids)
    if len(fresh) != len(new_ids) or not fresh.isdisjoint(refs) or _any_in(new_ids, p.ids):
        return None
    table = list(p.kind_table)
    code = {k: c for c, k in enumerate(table)}
    kinds = bytearray(p.kinds)
    for role in roles:
        c = code.get(("message", role))
        if c is None:
            if len(table) >= _KINDS:
                return None
            c = code[("message", role)] = len(table)
            table.append(("message", role))
        kinds.append(c)
    offsets = array("q", p.offsets)
    offsets.extend(a[0] for a in appended)
    lines = array("q", p.lines)
    lines.extend(a[1] for a in appended)
    return replace(p, offsets=offsets, lines=lines, where=p.where + bytes([_ACTIVE]) * len(new_ids),
                   ids=[*p.ids, *new_ids], kinds=bytes(kinds), kind_table=table,
                   id_width=_width_with(p.id_width, longest, p.ids, new_ids),
                   ext=(parent, refs, max(longest, *map(len, new_ids))))


def _any_in(new: list, ids: list) -> bool:
    """Whether one of ``new`` is among ``ids``."""
    try:
        return not set(new).isdisjoint(ids)
    except TypeError:  # (an id that is an object)
        return any(i in ids for i in new)


def _width_with(width: int, longest: int, ids: list, new_ids: list[str]) -> int:
    """``unique_prefix_width`` of ``ids`` (``width``; their longest string ``longest``
    characters) and of ``new_ids``, which are none of them: the same while no new id shares its
    first ``width`` characters with another id (then no fewer ever did)."""
    from ...ids import unique_prefix_width

    mine = [i[:width] for i in new_ids]
    if len(set(mine)) == len(mine):
        if longest <= width and max(map(len, new_ids)) <= width:
            return width  # (every id is its own prefix: distinct ids, distinct prefixes)
        if {i[:width] for i in ids if type(i) is str}.isdisjoint(mine):
            return width
    return unique_prefix_width([*(i for i in ids if type(i) is str), *new_ids])


