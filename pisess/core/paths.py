"""Walking parent links: the active path of each reader, without recursion and without hanging.

pi walks ``parentId`` links in a ``while`` loop and never checks for cycles, so a cycle hangs it.
These walks keep a visited set and raise ``cycle`` naming an entry on the loop instead.
"""

from __future__ import annotations

from typing import Any

from . import js
from .errors import PisessError
from .js import UNDEF, get
from .session import Session


def _cycle(session: Session, entry: Any) -> PisessError:
    eid = js.to_string(get(entry, "id"))
    return PisessError(
        "cycle",
        f"parentId chain revisits entry {eid}: pi's walk would never terminate",
        path=session.path, line=session.line_of(entry), stage="path",
    )


def path_to_checkpoint(session: Session, leaf_id: Any) -> list:
    """HARNESS ``getPathToRootOrCompaction``: leaf back to the root or the compaction stop point.

    A compaction with ``retainedTail`` (even ``[]``) ends the walk at itself; one without walks on
    until its ``firstKeptEntryId`` has been added.  An older compaction met first takes over.
    """
    if leaf_id is None:
        return []
    current = session.lookup(leaf_id)
    if current is None:
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path, stage="path")
    path = []
    stop_at: Any = None
    seen: set = set()
    while True:
        state = (id(current), js.key(stop_at))
        if state in seen:
            raise _cycle(session, current)
        seen.add(state)
        path.append(current)
        if stop_at is not None and js.strict_eq(get(current, "id"), stop_at):
            break
        if get(current, "type") == "compaction":
            if js.truthy(get(current, "retainedTail")):
                break
            first_kept = get(current, "firstKeptEntryId")
            stop_at = None if first_kept is None or first_kept is UNDEF else first_kept
        parent_id = get(current, "parentId")
        if not js.truthy(parent_id):
            break
        parent = session.lookup(parent_id)
        if parent is None:
            raise PisessError("invalid_session", f"Entry {js.to_string(parent_id)} not found",
                              path=session.path, line=session.line_of(current), stage="path")
        current = parent
    path.reverse()
    return path


def walk_positions(session: Session, start: Any) -> tuple[list, int | None] | None:
    """The positions from ``start`` up its ``parentId`` links over a compact index's ids and parent
    positions (a path of a million entries walks no entry object), and the position met twice
    (a cycle, or an entry that is its own parent) or ``None``.  ``None`` where that walk would not
    be the readers' own: no compact index, ids that are not strings, ids remapped after the read,
    a start that is not the index's own entry."""
    from .compact import CompactById, CompactEntries

    entries, by_id = session.entries, session.by_id
    if type(entries) is not CompactEntries or type(by_id) is not CompactById or by_id.entries is not entries \
            or by_id._set:
        return None
    if start is None:
        return [], None
    ix, made = entries.index, entries._made
    sid = get(start, "id")
    pos = ix.position_of(sid) if type(sid) is str else None
    if pos is None or entries[pos] is not start:
        return None
    parent_id = ix.parent_id
    later, first = ix.later_pos_of or {}, ix.pos_of  # position_of, inlined: this loop runs per path entry
    out: list = []
    seen: set = set()
    while pos not in seen:
        seen.add(pos)
        out.append(pos)
        e = made.get(pos)
        pid = parent_id(pos) if e is None else get(e, "parentId")
        if type(pid) is not str or not pid:
            if not js.truthy(pid):
                return out, None  # no parent ("" included, though an entry may have the id "")
            return None  # found by JS Map identity: the object walk knows how
        up = later.get(pid)
        if up is None:
            up = first.get(pid)
        if up is None:
            return out, None
        pos = up
    return out, pos


def path_to_root(session: Session, start: Any) -> list:
    """CLI walk from an entry: follow ``parentId`` until it is falsy or missing (the orphan then
    acts as the root)."""
    got = walk_positions(session, start)
    if got is not None:
        positions, again = got
        entries: Any = session.entries  # walk_positions answers only for the compact index's CompactEntries
        if again is not None:
            raise _cycle(session, entries[again])
        made, light = entries._made, entries.index.light
        path = []
        for p in reversed(positions):
            e = made.get(p)
            if e is None:
                e = made[p] = light(p)
            path.append(e)
        return path
    path = []
    seen: set = set()
    current = start
    while current is not None:
        if id(current) in seen:
            raise _cycle(session, current)
        seen.add(id(current))
        path.append(current)
        parent_id = get(current, "parentId")
        current = session.lookup(parent_id) if js.truthy(parent_id) else None
    path.reverse()
    return path


def cli_branch(session: Session, from_id: Any = UNDEF) -> list:
    """CLI ``getBranch``: empty unless the start id is truthy and found."""
    start_id = session.leaf_id if from_id is UNDEF else from_id
    start = session.lookup(start_id) if js.truthy(start_id) else None
    return path_to_root(session, start)


def cli_context_path(session: Session, leaf_id: Any = UNDEF) -> list:
    """CLI ``buildSessionPath``: a ``null`` leaf is empty; an unknown one falls back to the last entry."""
    leaf_id = session.leaf_id if leaf_id is UNDEF else leaf_id
    if leaf_id is None:
        return []
    leaf = session.lookup(leaf_id) if js.truthy(leaf_id) else None
    if leaf is None:
        leaf = session.entries[-1] if session.entries else None
    return path_to_root(session, leaf)


def leaf_of(session: Session) -> Any:
    """The current leaf as the reader sees it.  HARNESS checks it exists (``getLeafId``)."""
    leaf = session.leaf_id
    if session.reader == "harness" and leaf is not None and session.lookup(leaf) is None:
        raise PisessError("invalid_session", f"Entry {js.to_string(leaf)} not found", path=session.path, stage="leaf")
    return None if leaf is UNDEF else leaf


def active_path(session: Session, leaf_id: Any = UNDEF) -> list:
    """The entries from the start (root or checkpoint) to the leaf, as ``getBranch`` returns them."""
    if session.reader == "harness":
        return path_to_checkpoint(session, leaf_of(session) if leaf_id is UNDEF else leaf_id)
    return cli_branch(session, leaf_id)
