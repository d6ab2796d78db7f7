"""The branch tree as rows to draw: no recursion, cycles and orphans made visible, long runs folded.

pi's ``getTree`` makes entries with a ``null`` (or their own) parent roots, orphans roots too, and
drops entries that only sit on a cycle.  Here every entry appears: a cycle is entered at one of its
members, flagged.  Linear runs stay in one column (a 1,000,000-entry chain is 1,000,000 rows, not
1,000,000 levels of indentation).  At a branch point one child continues in the parent's column,
as ``git log --graph`` keeps the main line: the child on the active path (elsewhere the last
child); the others are side branches, drawn first and indented one level.  So the active path runs
down the first column from the root to the leaf, and ``depth`` (side-branch levels) never folds it.

``build_tree`` runs in stages: link the entries (``_link``), mark the two writers, resolve the
leaf, mark what the context holds (``_mark_context``), order the children, choose what folds
(``_hidden``), then lay the rows out (``_layout``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import js
from ..errors import PisessError
from ..js import UNDEF, get
from ..reading.session import Session
from . import kinds


@dataclass(frozen=True)
class TreeRow:
    kind: str  # "entry" or "fold"
    entry: Any  # the entry (None for a fold)
    guides: str  # prefix from enclosing branch points: "│ " / "  " per level
    connector: str  # "" or "├─" (a side branch)
    active: bool  # on the path from the root to the leaf
    flags: frozenset = frozenset()  # leaf, checkpoint, compacted, dangling, cycle, self_parent, in_context,
    #                                 edited / hidden (pi 1.6: changed by a context_edit in the context)
    #                                 writer_a / writer_b (one of two conversations two processes interleaved: model/writers.py)
    count: int = 0  # entries a fold stands for
    line: int | None = None
    branches: int = 0  # side branches a fold stands for (``depth``); 0: the middle of a long run
    root: int = 0  # on the first row of each root's subtree: the root's number (1, 2, ...); else 0


@dataclass(frozen=True)
class TreeView:
    session: Session
    rows: list
    leaf_id: Any
    leaf_error: str | None
    entry_count: int
    branch_points: int
    roots: int
    active_count: int
    checkpoint: Any = None
    notes: list = field(default_factory=list)

    def to_json(self) -> dict:
        """The tree document (``pisess tree --json``): the counts, the leaf, and one row per
        drawn line: an entry (id, parent, type, line, on the active path, label, flags) or a fold
        (how many entries and side branches it stands for), each with its indentation level."""
        s = self.session
        rows = []
        for r in self.rows:
            indent = len(r.guides + r.connector) // 2
            if r.kind == "fold":
                rows.append({"kind": "fold", "entryCount": r.count, "branchCount": r.branches, "indent": indent})
            else:
                rows.append({"kind": "entry", "id": js.get_json(r.entry, "id"),
                             "parentId": js.get_json(r.entry, "parentId"), "type": js.get_json(r.entry, "type"),
                             "line": r.line, "active": r.active, "label": s.label_of(get(r.entry, "id")),
                             "flags": sorted(r.flags), "indent": indent})
        return {"reader": s.reader, "piVersion": s.pi_version, "path": s.path,
                "leafId": self.leaf_id if self.leaf_id is not UNDEF else None,
                "leafError": self.leaf_error, "entryCount": self.entry_count,
                "branchPointCount": self.branch_points, "rootCount": self.roots, "droppedLines": s.dropped_lines, "rows": rows}

    def complete_entries(self) -> Iterator[tuple[int, Any]]:
        """``(position, whole entry)`` of the entry rows, in file order: a compact index holds light
        ones, and a view's previews need their text.  Read back in batches and not kept, so a view
        that takes what it shows of each as they pass never holds them all (``tree --full`` of a
        200 MB session), and never touches the file itself."""
        at = self.session.position
        return self.session.complete_at(sorted({p for p in (at(r.entry) for r in self.rows if r.kind == "entry")
                                                if p is not None}))


def _ancestors(session: Session, start: Any) -> list:
    """Leaf back to its root, cycle-safe, stopping quietly at a missing parent."""
    out, seen = [], set()
    cur = start
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        out.append(cur)
        pid = get(cur, "parentId")
        cur = session.lookup(pid) if js.truthy(pid) else None
    out.reverse()
    return out


def current_leaf(session: Session) -> tuple[Any, Any, str | None]:
    """(leaf id, leaf entry, error) as the session's reader determines them."""
    from .paths import leaf_of

    try:
        leaf_id = leaf_of(session)
    except PisessError as e:
        return session.leaf_id, None, e.message
    if leaf_id is None:
        if session.reader == "cli" and session.leaf_id is UNDEF and session.entries:
            return None, session.entries[-1], None
        return None, None, None
    entry = session.lookup(leaf_id)
    if entry is None and session.reader == "cli":
        entry = session.entries[-1] if session.entries else None
    return leaf_id, entry, None


def context_selection(session: Session, leaf: Any) -> list:
    """The entries the context at ``leaf`` is built from (``context.select_entries`` on the
    reader's walk: the checkpoint, the entries it keeps and what follows).  An entry on the active
    path outside it is behind the checkpoint: ``tree`` marks it ◐, as ``path`` does (the same
    selection, there ``Context.context_entries``) and as ``place`` counts it ``compacted``."""
    from .context import select_entries
    from .paths import cli_context_path, path_to_checkpoint

    if session.reader == "harness":
        walk = path_to_checkpoint(session, get(leaf, "id"))
    else:
        walk = cli_context_path(session, get(leaf, "id"))
    return select_entries(session, walk)


def build_tree(session: Session, *, leaf_id: Any = UNDEF, full: bool = False, depth: int | None = None,
               branches_only: bool = False, labels_only: bool = False, fold_over: int = 8, keep: int = 3) -> TreeView:
    """The rows of ``pisess tree``.  ``depth``: side branches nested deeper than that many levels
    fold into one row per branch point (the active path is never a side branch); ``full``: no long
    run folds; ``branches_only``: only the active path, branch points and their ancestors."""
    entries = session.entries
    children, roots, flags, line_of = _link(session)
    _mark_writers(session, flags)
    leaf_id, leaf_entry, leaf_error = _resolve_leaf(session, leaf_id)
    active_path = _ancestors(session, leaf_entry) if leaf_entry is not None else []
    active = {id(e) for e in active_path}
    checkpoint, error = _mark_context(session, leaf_entry, active_path, flags)
    leaf_error = leaf_error or error
    _order(children, roots, active)
    branch_points = sum(1 for kids in children.values() if len(kids) > 1)

    def view(rows: list) -> TreeView:
        return TreeView(session, rows, leaf_id, leaf_error, len(entries), branch_points, len(roots), len(active),
                        checkpoint)

    if labels_only:
        return view([TreeRow("entry", e, "", "", id(e) in active, frozenset(flags.get(id(e), ())), line=line)
                     for line, e in zip(session.entry_lines, entries) if session.label_of(get(e, "id")) is not None])

    marks = ("leaf", "checkpoint", "dangling", "cycle", "self_parent", "edited", "hidden")

    def keep_visible(e: Any) -> bool:
        # being on the active path alone does not keep an entry from folding: a long linear
        # session folds too, around its marked entries
        f = flags.get(id(e))
        return (f is not None and any(m in f for m in marks)) or kinds.of_entry(e).tree == "kept" \
            or session.label_of(get(e, "id")) is not None

    hidden = _hidden(session, children, roots, active, keep_visible, branches_only=branches_only,
                     full=full, fold_over=fold_over, keep=keep)
    return view(_layout(line_of, children, roots, active, flags, hidden, depth))


def _link(session: Session) -> tuple[dict, list, dict, dict]:
    """Children per parent (in file order), the roots, the flags of entries that are roots only
    because their parent is missing (``dangling``), themselves (``self_parent``) or sits on a
    parentId cycle no root reaches (``cycle``: each cycle entered once, at one of its members),
    and each entry's line (by ``id``)."""
    children: dict[int, list] = {}
    roots: list = []
    flags: dict[int, set] = {}
    store = session.entries
    # by position, from the store's parent of each entry (``byId.get(parentId)``, what ``lookup``
    # finds): a 100,000-entry tree is linked without reading a parentId or hashing an id
    entries = store.take(range(len(store)))
    parent_of, sids = store.parent, store.string_ids()
    for pos, e in enumerate(entries):
        q = parent_of(pos)
        if q is None:
            roots.append(e)
            if js.truthy(get(e, "parentId")):
                flags.setdefault(id(e), set()).add("dangling")
        elif q == pos or (sids[pos] is not None and sids[q] == sids[pos]):
            # its parentId is its own id (pi's byId may hold a later entry of the same id)
            roots.append(e)
            flags.setdefault(id(e), set()).add("self_parent")
        else:
            children.setdefault(id(entries[q]), []).append(e)
    reached: set[int] = set()
    _mark_reached(roots, children, reached)
    for e in entries:
        if id(e) in reached:
            continue
        member = _cycle_member(session, e)
        flags.setdefault(id(member), set()).add("cycle")
        roots.append(member)
        _mark_reached([member], children, reached)
    return children, roots, flags, dict(zip(map(id, entries), session.entry_lines))


def _mark_writers(session: Session, flags: dict) -> None:
    """``writer_a`` / ``writer_b``: the two conversations two processes appended in turn."""
    from .writers import interleaved_sides

    for key, side in interleaved_sides(session).items():
        flags.setdefault(key, set()).add("writer_" + "ab"[side])


def _resolve_leaf(session: Session, leaf_id: Any) -> tuple[Any, Any, str | None]:
    """(leaf id, leaf entry, error): the reader's current leaf, or the one asked for."""
    if leaf_id is UNDEF:
        return current_leaf(session)
    leaf_entry = session.lookup(leaf_id)
    if leaf_entry is None and leaf_id is not None:
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path)
    return leaf_id, leaf_entry, None


def _mark_context(session: Session, leaf_entry: Any, active_path: list, flags: dict) -> tuple[Any, str | None]:
    """Flag the leaf, the checkpoint, what the context holds (``in_context``), the active path's
    entries behind the checkpoint (``compacted``: on the path, not in the selection, for both
    readers) and pi 1.6's edit targets.  Returns (checkpoint, error)."""
    if leaf_entry is None:
        return None, None
    from .context import edit_marks

    flags.setdefault(id(leaf_entry), set()).add("leaf")
    try:
        selected = context_selection(session, leaf_entry)
        edits = edit_marks(session, selected)  # pi 1.6: targets of context edits
    except PisessError as err:  # no context: nothing is marked behind a checkpoint that cannot be found
        return None, err.message
    in_context = {id(e) for e in selected}
    for key, mark in edits.items():
        flags.setdefault(key, set()).add(mark)
    from .context import retained_positions

    retained = retained_positions(session, selected)  # behind the checkpoint, their copies in it (SDK reader)
    for e in active_path:
        if id(e) in in_context:
            flags.setdefault(id(e), set()).add("in_context")
        else:
            flags.setdefault(id(e), set()).add("retained" if session.position(e) in retained else "compacted")
    checkpoint = None
    if selected and get(selected[0], "type") == "compaction":
        checkpoint = selected[0]
        flags.setdefault(id(checkpoint), set()).add("checkpoint")
    return checkpoint, None


def _order(children: dict, roots: list, active: set) -> None:
    """The child that continues a branch point's column comes last: the active one, else the
    last in file order (the sort is stable)."""
    for kids in children.values():
        if len(kids) > 1:
            kids.sort(key=lambda c: id(c) in active)
    if len(roots) > 1:
        roots.sort(key=lambda c: id(c) in active)


def _hidden(session: Session, children: dict, roots: list, active: set, keep_visible, *, branches_only: bool,
            full: bool, fold_over: int, keep: int) -> set:
    """The entries that fold: with ``branches_only`` everything but the active path, the branch
    points' children and their ancestors (and marked entries); unless ``full`` the middle of each
    long linear run."""
    hidden: set = set()
    if branches_only:
        shown = set(active)
        for kids in children.values():
            if len(kids) > 1:
                for k in kids:
                    for a in _ancestors(session, k):
                        shown.add(id(a))
        hidden = {id(e) for e in session.entries if id(e) not in shown and not keep_visible(e)}
    if not full:
        _fold_long_runs(roots, children, hidden, keep_visible, fold_over, keep)
    return hidden


SIDE, TRUNK = "\u251c\u2500", "\u2502 "  # a side branch's connector, and the guide of the column it leaves


def _layout(line_of: dict, children: dict, roots: list, active: set, flags: dict, hidden: set,
            depth: int | None) -> list:
    """The rows, depth first.  Each stack item is (entry, guides, connector, side level); a side
    branch starts at ``guides + "├─"`` and goes on under ``guides + "│ "``, the guide of the column
    that continues below it."""
    sizes = _subtree_sizes(roots, children) if depth is not None else {}
    rows: list = []
    stack = [(r, "", "", 0, n) for n, r in reversed(list(enumerate(roots, 1)))]
    seen: set = set()
    cont = {"": "", SIDE: TRUNK}
    while stack:
        node, guides, conn, level, root = stack.pop()
        if id(node) in seen:
            continue
        count = 0
        while id(node) in hidden and len(children.get(id(node), ())) <= 1 and id(node) not in seen:
            seen.add(id(node))
            count += 1
            kids = children.get(id(node), [])
            if not kids:
                node = None
                break
            node = kids[0]
        if count:
            rows.append(TreeRow("fold", None, guides, conn, node is not None and id(node) in active, count=count,
                                root=root))
            root = 0
            if node is None or id(node) in seen:
                continue
            guides, conn = guides + cont[conn], ""
        seen.add(id(node))
        rows.append(TreeRow("entry", node, guides, conn, id(node) in active, frozenset(flags.get(id(node), ())),
                            line=line_of.get(id(node)), root=root))
        kids = [k for k in children.get(id(node), []) if id(k) not in seen]
        if not kids:
            continue
        below = guides + cont[conn]
        stack.append((kids[-1], below, "", level, 0))  # the column goes on below the side branches
        sides = kids[:-1]
        if depth is not None and level + 1 > depth and sides:
            rows.append(TreeRow("fold", None, below, SIDE, False, count=sum(sizes.get(id(k), 1) for k in sides),
                                branches=len(sides)))
            seen.update(_subtree_ids(sides, children))
            continue
        for k in reversed(sides):
            stack.append((k, below, SIDE, level + 1, 0))
    return rows


def _mark_reached(starts: list, children: dict, reached: set) -> None:
    stack = list(starts)
    while stack:
        e = stack.pop()
        if id(e) in reached:
            continue
        reached.add(id(e))
        stack.extend(children.get(id(e), ()))


def _cycle_member(session: Session, e: Any) -> Any:
    seen = set()
    cur = e
    while id(cur) not in seen:
        seen.add(id(cur))
        pid = get(cur, "parentId")
        nxt = session.lookup(pid) if js.truthy(pid) else None
        if nxt is None:
            return cur
        cur = nxt
    return cur


def _fold_long_runs(roots, children, hidden, keep_visible, fold_over, keep) -> None:
    """Hide the middle of each linear run of ordinary entries longer than ``fold_over``."""
    stack = list(roots)
    seen: set = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        run = []
        cur = e
        while True:
            seen.add(id(cur))
            kids = children.get(id(cur), [])
            if len(kids) == 1 and not keep_visible(cur) and id(kids[0]) not in seen:
                run.append(cur)
                cur = kids[0]
            else:
                break
        if len(run) > fold_over:
            for r in run[keep:len(run) - keep]:
                hidden.add(id(r))
        stack.extend(children.get(id(cur), []))


def _subtree_ids(starts: list, children: dict) -> set:
    out: set = set()
    _mark_reached(starts, children, out)
    return out


def _subtree_sizes(roots, children) -> dict:
    order = []
    stack = list(roots)
    seen = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        order.append(e)
        stack.extend(children.get(id(e), ()))
    sizes: dict = {}
    for e in reversed(order):
        sizes[id(e)] = 1 + sum(sizes.get(id(k), 0) for k in children.get(id(e), ()))
    return sizes
