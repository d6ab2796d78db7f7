"""The branch tree as rows to draw: no recursion, cycles and orphans made visible, long runs folded.

pi's ``getTree`` makes entries with a ``null`` (or their own) parent roots, orphans roots too, and
drops entries that only sit on a cycle.  Here every entry appears: a cycle is entered at one of its
members, flagged.  Linear runs stay in one column (a 1,000,000-entry chain is 1,000,000 rows, not
1,000,000 levels of indentation); only branch points indent.  The child on the active path is
drawn last, so the active path reads as the trunk ending at the leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import js
from .errors import PisessError
from .js import UNDEF, get
from .session import Session

INTERESTING_TYPES = ("compaction", "branch_summary", "leaf", "session_info", "label", "context_edit")


@dataclass(frozen=True)
class TreeRow:
    kind: str  # "entry" or "fold"
    entry: Any  # the entry (None for a fold)
    guides: str  # prefix from enclosing branch points: "│ " / "  " per level
    connector: str  # "", "├─" or "└─"
    active: bool  # on the path from the root to the leaf
    flags: frozenset = frozenset()  # leaf, checkpoint, compacted, dangling, cycle, self_parent, in_context,
    #                                 edited / hidden (pi 1.6: changed by a context_edit in the context)
    #                                 writer_a / writer_b (one of two conversations two processes interleaved: core/writers.py)
    count: int = 0  # entries a fold stands for
    line: int | None = None


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


def build_tree(session: Session, *, leaf_id: Any = UNDEF, full: bool = False, depth: int | None = None,
               branches_only: bool = False, labels_only: bool = False, fold_over: int = 8, keep: int = 3) -> TreeView:
    entries = session.entries
    children: dict[int, list] = {}
    roots: list = []
    flags: dict[int, set] = {}
    for e in entries:
        pid = get(e, "parentId")
        parent = session.lookup(pid) if js.truthy(pid) else None
        if parent is None or parent is e or (isinstance(pid, str) and js.strict_eq(pid, get(e, "id"))):
            roots.append(e)
            if js.truthy(pid) and parent is None:
                flags.setdefault(id(e), set()).add("dangling")
            elif js.truthy(pid):
                flags.setdefault(id(e), set()).add("self_parent")
        else:
            children.setdefault(id(parent), []).append(e)

    # Entries that no root reaches sit on (or hang from) a parentId cycle: enter each cycle once.
    reached: set[int] = set()
    _mark_reached(roots, children, reached)
    for e in entries:
        if id(e) in reached:
            continue
        member = _cycle_member(session, e)
        flags.setdefault(id(member), set()).add("cycle")
        roots.append(member)
        _mark_reached([member], children, reached)

    from .writers import interleaved_sides

    for key, side in interleaved_sides(session).items():  # two writers appended in turn
        flags.setdefault(key, set()).add("writer_" + "ab"[side])

    if leaf_id is UNDEF:
        leaf_id, leaf_entry, leaf_error = current_leaf(session)
    else:
        leaf_entry, leaf_error = session.lookup(leaf_id), None
        if leaf_entry is None and leaf_id is not None:
            raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path)
    active_path = _ancestors(session, leaf_entry) if leaf_entry is not None else []
    active = {id(e) for e in active_path}
    if leaf_entry is not None:
        flags.setdefault(id(leaf_entry), set()).add("leaf")
    checkpoint = None
    in_context: set = set()
    if leaf_entry is not None:
        try:
            from .context import edit_marks, select_entries
            from .paths import cli_context_path, path_to_checkpoint

            if session.reader == "harness":
                walk = path_to_checkpoint(session, get(leaf_entry, "id"))
            else:
                walk = cli_context_path(session, get(leaf_entry, "id"))
            selected = select_entries(session, walk)
            in_context = {id(e) for e in selected}
            for key, mark in edit_marks(session, selected).items():  # pi 1.6: targets of context edits
                flags.setdefault(key, set()).add(mark)
            if session.reader == "harness" and walk and walk[0] is not active_path[0]:
                from .context import retained_positions

                retained = retained_positions(session, selected)  # behind the checkpoint, their copies in it
                for e in active_path:
                    if e is walk[0]:
                        break
                    flags.setdefault(id(e), set()).add("retained" if session.position(e) in retained else "compacted")
            if selected and get(selected[0], "type") == "compaction":
                checkpoint = selected[0]
                flags.setdefault(id(checkpoint), set()).add("checkpoint")
        except PisessError as err:
            leaf_error = leaf_error or err.message
    for e in active_path:
        if id(e) in in_context:
            flags.setdefault(id(e), set()).add("in_context")

    # Active child drawn last, so the trunk ends at the leaf.
    for kids in children.values():
        if len(kids) > 1:
            kids.sort(key=lambda c: id(c) in active)
    branch_points = sum(1 for kids in children.values() if len(kids) > 1)
    if len(roots) > 1:
        roots.sort(key=lambda c: id(c) in active)

    marks = ("leaf", "checkpoint", "dangling", "cycle", "self_parent", "edited", "hidden")

    def keep_visible(e: Any) -> bool:
        # being on the active path alone does not keep an entry from folding: a long linear
        # session folds too, around its marked entries
        f = flags.get(id(e))
        return (f is not None and any(m in f for m in marks)) or get(e, "type") in INTERESTING_TYPES \
            or session.label_of(get(e, "id")) is not None

    if labels_only:
        rows = [TreeRow("entry", e, "", "", id(e) in active, frozenset(flags.get(id(e), ())), line=line)
                for line, e in zip(session.entry_lines, entries) if session.label_of(get(e, "id")) is not None]
        return TreeView(session, rows, leaf_id, leaf_error, len(entries), branch_points, len(roots), len(active),
                        checkpoint)

    hidden: set = set()
    if branches_only:
        shown = set(active)
        for kids in children.values():
            if len(kids) > 1:
                for k in kids:
                    for a in _ancestors(session, k):
                        shown.add(id(a))
        hidden = {id(e) for e in entries if id(e) not in shown and not keep_visible(e)}
    if not full:
        _fold_long_runs(roots, children, hidden, keep_visible, fold_over, keep)

    sizes = _subtree_sizes(roots, children) if depth is not None else {}
    rows = []
    stack = [(r, "", "", 0) for r in reversed(roots)]
    seen: set = set()
    cont = {"": "", "├─": "│ ", "└─": "  "}
    while stack:
        node, guides, conn, level = stack.pop()
        if id(node) in seen:
            continue
        if depth is not None and level > depth:
            rows.append(TreeRow("fold", None, guides, conn, id(node) in active, count=sizes.get(id(node), 1)))
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
            rows.append(TreeRow("fold", None, guides, conn, node is not None and id(node) in active, count=count))
            if node is None or id(node) in seen:
                continue
            guides, conn = guides + cont[conn], ""
        seen.add(id(node))
        rows.append(TreeRow("entry", node, guides, conn, id(node) in active, frozenset(flags.get(id(node), ())),
                            line=session.line_of(node)))
        kids = [k for k in children.get(id(node), []) if id(k) not in seen]
        below = guides + cont[conn]
        if len(kids) == 1:
            stack.append((kids[0], below, "", level))
        elif kids:
            for i in range(len(kids) - 1, -1, -1):
                stack.append((kids[i], below, "└─" if i == len(kids) - 1 else "├─", level + 1))
    return TreeView(session, rows, leaf_id, leaf_error, len(entries), branch_points, len(roots), len(active),
                    checkpoint)


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
