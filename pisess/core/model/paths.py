"""Walking parent links: the active path of each reader, without recursion and without hanging.

pi walks ``parentId`` links in a ``while`` loop and never checks for cycles, so a cycle hangs it.
These walks keep a visited set and raise ``cycle`` naming an entry on the loop instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import js
from ..errors import PisessError
from ..js import UNDEF, get
from ..reading.session import Session
from ..reading.store import EntryStore


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


def cut_at(session: Session, path: list) -> Any:
    """Where the compaction stop rule cut ``path`` (a path the session's reader walks to the leaf):
    its first entry when the SDK reader stopped there with a parent still above it (a compaction
    with ``retainedTail``, or the first kept entry of one: older entries are not read), else
    ``None`` (the path runs from a root; the pi command always walks to the root)."""
    if path and session.reader == "harness" and js.truthy(get(path[0], "parentId")):
        return path[0]
    return None


def walk_positions(session: Session, start: Any) -> tuple[list, int | None] | None:
    """The positions from ``start`` up its ``parentId`` links (``byId`` lookups, on the store's
    positions: a path of a million entries walks no entry object), and the position met twice (a
    cycle, or an entry that is its own parent) or ``None``.  ``None`` when ``start`` is not an
    entry of the session."""
    if start is None:
        return [], None
    store = session.store
    pos = store.position(start)
    if pos is None:
        return None
    return walk_up(store, pos)


def walk_up(store: EntryStore, pos: int | None) -> tuple[list, int | None]:
    """``walk_positions`` from position ``pos`` of ``store``."""
    parent = store.parent
    out: list = []
    seen: set = set()
    while pos is not None and pos not in seen:
        seen.add(pos)
        out.append(pos)
        pos = parent(pos)
    return out, pos


def ancestors(store: EntryStore, pos: int) -> Iterator[int]:
    """The positions above ``pos``, nearest first, each once (a cycle ends the walk)."""
    parent = store.parent
    seen = {pos}
    cur = parent(pos)
    while cur is not None and cur not in seen:
        yield cur
        seen.add(cur)
        cur = parent(cur)


def cycle_positions(store: EntryStore) -> list:
    """One position per ``parentId`` cycle, in the order the cycles are met walking up from each
    entry in file order (each entry has at most one parent, so walks are chains)."""
    if store.parents_precede():
        return []
    n = len(store)
    parent = store.parent
    state = bytearray(n)  # 1 on the current walk, 2 done
    found = []
    for start in range(n):
        if state[start]:
            continue
        walk = []
        cur: int | None = start
        while cur is not None and not state[cur]:
            state[cur] = 1
            walk.append(cur)
            cur = parent(cur)
        if cur is not None and state[cur] == 1:
            found.append(cur)
        for p in walk:
            state[p] = 2
    return found


def path_to_root(session: Session, start: Any) -> list:
    """CLI walk from an entry: follow ``parentId`` until it is falsy or missing (the orphan then
    acts as the root)."""
    if start is None:
        return []
    store = session.store
    pos = store.position(start)
    head = []
    if pos is None:  # not one of the session's entries (a caller's value): its parent is looked up
        head = [start]
        pid = get(start, "parentId")
        pos = store.find(pid) if js.truthy(pid) else None
    positions, again = walk_up(store, pos)
    if again is not None:
        raise _cycle(session, store[again])
    positions.reverse()
    path = store.take(positions)
    path.extend(head)
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
