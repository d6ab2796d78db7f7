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


def path_to_root(session: Session, start: Any) -> list:
    """CLI walk from an entry: follow ``parentId`` until it is falsy or missing (the orphan then
    acts as the root)."""
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
