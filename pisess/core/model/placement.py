"""Where each entry of a session sits (``place``), for ``search``, ``stats`` and ``du``.

``active`` (on the path from the root to the leaf and in what the model sees), ``edited`` (in the
context, but a pi 1.6 ``context_edit`` hides or replaces its text, or it is an edit whose
replacement the model does not see), ``retained`` (on
that path before the checkpoint, but kept verbatim by it: the model sees the copy in the
checkpoint's ``retainedTail``), ``compacted`` (on that path but before the compaction checkpoint:
the model sees the summary instead) or ``branch`` (anywhere else: abandoned branches, ``leaf``
records).  The leaf, the path and the checkpoint are the ones ``tree`` marks, for the session's
reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, overload

from ..errors import PisessError
from ..js import get
from ..reading.session import Session
from ..reading.store import EntryStore

WHERE = ("active", "edited", "retained", "compacted", "branch")


@dataclass(frozen=True)
class Placement:
    """Per entry of ``session.entries`` (same order): where it sits and, off the active path (when
    asked for), the first entry of its abandoned branch: the child of the active path it hangs from."""

    # "active" | "edited" | "retained" | "compacted" | "branch" by position (a dict: of the positions asked for)
    where: list | dict
    branch_root: list | None  # entry or None (None on the active path); None when not asked for
    leaf_id: Any
    checkpoint: Any  # the compaction the context starts at, or None
    branch_points: int | None  # entries with more than one child; None when not asked for
    error: str | None = None  # the leaf or the path cannot be resolved


@dataclass(frozen=True)
class BranchPlacement(Placement):
    """A placement with the branches asked for (``place``'s default)."""

    branch_root: list
    branch_points: int


@overload
def place(session: Session, *, branches: Literal[True] = ..., positions: list | None = None) -> BranchPlacement: ...
@overload
def place(session: Session, *, branches: bool, positions: list | None = None) -> Placement: ...
def place(session: Session, *, branches: bool = True, positions: list | None = None) -> Placement:
    """Where each entry sits for the session's reader; with ``branches`` also the branch points
    and each abandoned branch's first entry.  With ``positions`` (and no ``branches``) ``where``
    maps only those entry positions (a search places its hits, not a million entries).  Placed on
    the store's positions: entries are built only for the context."""
    from ..model.context import retained_positions, select_entries, unseen_by_edits
    from ..model.paths import cli_context_path, path_to_checkpoint
    from ..model.tree import current_leaf

    store = session.store
    leaf_id, leaf, error = current_leaf(session)
    active_at = _active_positions(session, leaf) or set()
    chosen: list | None = None  # None: the context could not be built, all of the path counts
    checkpoint = None
    if leaf is not None:
        try:
            if session.reader == "harness":
                walk = path_to_checkpoint(session, get(leaf, "id"))
            else:
                walk = cli_context_path(session, get(leaf, "id"))
            chosen = select_entries(session, walk)
            if chosen and get(chosen[0], "type") == "compaction":
                checkpoint = chosen[0]
        except PisessError as e:
            error = error or e.message
    where = _where_by_position(store, active_at, chosen, retained_positions(session, chosen))
    if chosen:
        for at in unseen_by_edits(session, chosen):
            where[at] = "edited"
    if not branches:
        if positions is not None:
            return Placement({i: where[i] for i in positions}, None, leaf_id, checkpoint, None, error)
        return Placement(where, None, leaf_id, checkpoint, None, error)
    parent = store.parent
    parent_of: list = [None] * len(store)
    kids: dict[int, int] = {}
    for i in range(len(store)):
        q = parent(i)
        if q is not None and q != i:
            parent_of[i] = q
            kids[q] = kids.get(q, 0) + 1
    root_of: dict[int, int] = {}
    roots = [None if w != "branch" else store[_branch_root(i, active_at, parent_of, root_of)]
             for i, w in enumerate(where)]
    return BranchPlacement(where, roots, leaf_id, checkpoint, sum(1 for n in kids.values() if n > 1), error)


def _where_by_position(store: EntryStore, active_at: set, chosen: list | None, retained: set) -> list:
    """``where`` of every position: ``branch`` off the active path, on it ``active`` when the
    context holds it (``chosen``; ``None``: the context could not be built, all of the path
    counts), ``retained`` when a checkpoint holds its copy (``retained``), else ``compacted``."""
    where = ["branch"] * len(store)
    if chosen is None:
        for i in active_at:
            where[i] = "active"
        return where
    position = store.position
    in_context = {position(e) for e in chosen}
    for i in active_at:
        where[i] = "active" if i in in_context else "retained" if i in retained else "compacted"
    return where


def _active_positions(session: Session, leaf: Any) -> set | None:
    """The positions on the path from ``leaf`` to its root (``None``: ``leaf`` is not one of the
    session's entries, see ``paths.walk_positions``)."""
    from ..model.paths import walk_positions

    got = walk_positions(session, leaf)
    return None if got is None else set(got[0])


def _branch_root(pos: int, active: set, parent_of: list, memo: dict) -> int:
    """Walk up until the parent is on the active path (or missing); memoised, cycle-safe."""
    chain = []
    seen: set = set()
    cur = pos
    while True:
        if cur in memo:
            root = memo[cur]
            break
        if cur in seen:  # a parentId cycle off the active path: its first member stands for it
            root = cur
            break
        seen.add(cur)
        chain.append(cur)
        p = parent_of[cur]
        if p is None or p in active:
            root = cur
            break
        cur = p
    for k in chain:
        memo[k] = root
    return root
