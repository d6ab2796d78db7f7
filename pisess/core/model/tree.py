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
(``_hidden``), then lay the rows out (``_layout``).  Every stage works on store positions (ints in
arrays), never on the entries themselves: a light entry is built only for the roots and the marked
ones, and the rows (``TreeRows``) keep per row a few ints, a ``TreeRow`` with its entry being made
when a view asks for that row (``browse`` draws only the rows on screen).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
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
    position: int | None = None  # the entry's position in the session's store (None for a fold)


_NO_FLAGS: frozenset = frozenset()


class TreeRows(Sequence):
    """The rows of a tree, compact: per row the position of its entry (-1 for a fold), its
    indentation (an index into ``indents``, the distinct ``(guides, connector)`` pairs), whether it
    is on the active path and its flags (an index into ``flag_sets``); a fold's counts and a root's
    number are kept aside (they are few).  ``rows[i]`` makes the ``TreeRow`` (with the store's
    entry) when it is asked for: 100,000 rows cost a few arrays, not 100,000 objects."""

    __slots__ = ("store", "pos", "indent", "active", "flags", "indents", "flag_sets", "folds", "roots",
                 "_indent_code", "_flag_code", "_row_of")

    def __init__(self, store: Any) -> None:
        self.store = store
        self.pos = array("i")
        self.indent = array("i")
        self.active = bytearray()
        self.flags = array("i")
        self.indents: list = []  # (guides, connector)
        self.flag_sets: list = [_NO_FLAGS]
        self.folds: dict = {}  # row -> (entries, side branches) of a fold
        self.roots: dict = {}  # row -> the number of the root whose subtree starts there
        self._indent_code: dict = {}
        self._flag_code: dict = {_NO_FLAGS: 0}
        self._row_of: array | None = None

    # building ---------------------------------------------------------------------------------------

    def indent_code(self, guides: str, connector: str) -> int:
        key = (guides, connector)
        code = self._indent_code.get(key)
        if code is None:
            code = self._indent_code[key] = len(self.indents)
            self.indents.append(key)
        return code

    def flag_code(self, flags: frozenset) -> int:
        code = self._flag_code.get(flags)
        if code is None:
            code = self._flag_code[flags] = len(self.flag_sets)
            self.flag_sets.append(flags)
        return code

    def add(self, pos: int, indent: int, active: bool, flags: int = 0, root: int = 0) -> None:
        """A row: an entry's (``pos`` >= 0) or a fold's (-1, then ``fold`` gives its counts)."""
        if root:
            self.roots[len(self.pos)] = root
        self.pos.append(pos)
        self.indent.append(indent)
        self.active.append(1 if active else 0)
        self.flags.append(flags)

    def add_fold(self, guides: str, connector: str, active: bool, count: int, branches: int = 0,
                 root: int = 0) -> None:
        self.folds[len(self.pos)] = (count, branches)
        self.add(-1, self.indent_code(guides, connector), active, 0, root)

    # reading ----------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.pos)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.pos)))]
        if i < 0:
            i += len(self.pos)
        p = self.pos[i]  # (IndexError past the end)
        guides, connector = self.indents[self.indent[i]]
        if p < 0:
            count, branches = self.folds[i]
            return TreeRow("fold", None, guides, connector, self.active[i] == 1, count=count, branches=branches,
                           root=self.roots.get(i, 0))
        store = self.store
        return TreeRow("entry", store[p], guides, connector, self.active[i] == 1, self.flag_sets[self.flags[i]],
                       line=store.line(p), root=self.roots.get(i, 0), position=p)

    def __iter__(self) -> Iterator[TreeRow]:
        for i in range(len(self.pos)):
            yield self[i]

    def __bool__(self) -> bool:
        return len(self.pos) > 0

    def width(self, i: int) -> int:
        """The columns of row ``i``'s guides and connector (how deep it sits)."""
        guides, connector = self.indents[self.indent[i]]
        return len(guides) + len(connector)

    def position(self, i: int) -> int | None:
        """The store position of row ``i``'s entry (``None`` for a fold)."""
        p = self.pos[i]
        return None if p < 0 else p

    def is_entry(self, i: int) -> bool:
        return self.pos[i] >= 0

    def with_flag(self, flag: str) -> list[int]:
        """The rows whose flags hold ``flag``, in order."""
        codes = {c for c, fs in enumerate(self.flag_sets) if flag in fs}
        if not codes:
            return []
        return [i for i, c in enumerate(self.flags) if c in codes]

    def row_of(self, pos: int | None) -> int | None:
        """The row of the entry at store position ``pos`` (``None``: not drawn, or a fold hides it)."""
        if pos is None or pos < 0:
            return None
        got = self._row_of
        if got is None:
            got = self._row_of = array("i", [-1]) * len(self.store)
            for i, p in enumerate(self.pos):
                if p >= 0:
                    got[p] = i
        row = got[pos] if pos < len(got) else -1
        return None if row < 0 else row

    def entry_positions(self) -> list[int]:
        """The positions of the entries the rows show, ascending."""
        return sorted(p for p in self.pos if p >= 0)


@dataclass(frozen=True)
class TreeView:
    session: Session
    rows: TreeRows
    leaf_id: Any
    leaf_error: str | None
    entry_count: int
    branch_points: int
    roots: int
    active_count: int
    checkpoint: Any = None
    notes: list = field(default_factory=list)
    parents: Any = None  # per store position, its parent's (``store.parent``; -1: none), an array

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
        return self.session.complete_at(self.rows.entry_positions())


def build_tree(session: Session, *, leaf_id: Any = UNDEF, full: bool = False, depth: int | None = None,
               branches_only: bool = False, labels_only: bool = False, fold_over: int = 8, keep: int = 3,
               linked: TreeLinks | None = None) -> TreeView:
    """The rows of ``pisess tree``.  ``depth``: side branches nested deeper than that many levels
    fold into one row per branch point (the active path is never a side branch); ``full``: no long
    run folds; ``branches_only``: only the active path, branch points and their ancestors.
    ``linked``: ``link_entries(session)``, where the caller made it already (used up here)."""
    store = session.store
    n = len(store)
    g = _link(session) if linked is None else linked.graph
    _mark_writers(session, g.flags)
    leaf_id, leaf_entry, leaf_error = _resolve_leaf(session, leaf_id)
    leaf_pos = session.position(leaf_entry) if leaf_entry is not None else None
    active_path = _up_from(g.parent, leaf_pos) if leaf_pos is not None else []
    active = bytearray(n)
    for p in active_path:
        active[p] = 1
    path_mark = bytearray(n)  # 1 in_context, 2 compacted, 3 retained: on the active path, most entries
    checkpoint, error = _mark_context(session, leaf_entry, leaf_pos, active_path, g.flags, path_mark)
    leaf_error = leaf_error or error
    _order(g, active)
    rows = TreeRows(store)
    codes = _FlagCodes(rows, g.flags, path_mark)

    def view() -> TreeView:
        return TreeView(session, rows, leaf_id, leaf_error, n, len(g.multi), len(g.roots), len(active_path),
                        checkpoint, parents=g.parent)

    labelled = _Labels(session)
    if labels_only:
        no_indent = rows.indent_code("", "")
        for pos in range(n):
            if labelled(pos):
                rows.add(pos, no_indent, active[pos] == 1, codes(pos))
        return view()

    marks = ("leaf", "checkpoint", "dangling", "cycle", "self_parent", "edited", "hidden")
    flags = g.flags
    kind_of = _KindTree(store)

    def keep_visible(pos: int) -> bool:
        # being on the active path alone does not keep an entry from folding: a long linear
        # session folds too, around its marked entries
        f = flags.get(pos)
        return (f is not None and any(m in f for m in marks)) or kind_of(pos) == "kept" or labelled(pos)

    hidden = _hidden(g, active, keep_visible, branches_only=branches_only, full=full, fold_over=fold_over, keep=keep)
    _layout(rows, g, active, codes, hidden, depth)
    return view()


class _Graph:
    """The entries linked by position: ``parent`` (store.parent, -1 for none), each entry's first
    child (``first``, -1 for none) and, for the few with more than one, all of them in order
    (``multi``), the roots in order, and the flags of the entries that have any besides the active
    path's (position -> set)."""

    __slots__ = ("parent", "first", "multi", "roots", "flags")

    def __init__(self, n: int) -> None:
        self.parent = array("i", [-1]) * n
        self.first = array("i", [-1]) * n
        self.multi: dict = {}
        self.roots: list = []
        self.flags: dict = {}

    def kids(self, pos: int) -> list:
        many = self.multi.get(pos)
        if many is not None:
            return many
        k = self.first[pos]
        return [] if k < 0 else [k]


def _link(session: Session) -> _Graph:
    """Children per parent (in file order), the roots, the flags of entries that are roots only
    because their parent is missing (``dangling``), themselves (``self_parent``) or sits on a
    parentId cycle no root reaches (``cycle``: each cycle entered once, at one of its members)."""
    store = session.store
    n = len(store)
    g = _Graph(n)
    parent, first, multi, roots, flags = g.parent, g.first, g.multi, g.roots, g.flags
    # by position, from the store's parent of each entry (``byId.get(parentId)``, what ``lookup``
    # finds): a 100,000-entry tree is linked without reading a parentId or hashing an id
    parent_of, sids = store.parent, store.string_ids()
    for pos in range(n):
        q = parent_of(pos)
        if q is None:
            roots.append(pos)
            if js.truthy(get(store[pos], "parentId")):
                flags.setdefault(pos, set()).add("dangling")
            continue
        parent[pos] = q
        if q == pos or (sids[pos] is not None and sids[q] == sids[pos]):
            # its parentId is its own id (pi's byId may hold a later entry of the same id)
            roots.append(pos)
            flags.setdefault(pos, set()).add("self_parent")
        elif first[q] < 0:
            first[q] = pos
        else:
            many = multi.get(q)
            if many is None:
                multi[q] = [first[q], pos]
            else:
                many.append(pos)
    if store.parents_precede():
        return g  # every walk up ends at a root: each entry is reached from one, no cycle
    reached = bytearray(n)
    _mark_reached(roots, g, reached)
    for pos in range(n):
        if reached[pos]:
            continue
        member = _cycle_member(parent, pos)
        flags.setdefault(member, set()).add("cycle")
        roots.append(member)
        _mark_reached([member], g, reached)
    return g


def _up_from(parent: array, pos: int) -> list:
    """``pos`` and the positions above it, root first, cycle-safe, stopping quietly at a missing parent."""
    out, seen = [], set()
    cur = pos
    while cur >= 0 and cur not in seen:
        seen.add(cur)
        out.append(cur)
        cur = parent[cur]
    out.reverse()
    return out


def _mark_writers(session: Session, flags: dict) -> None:
    """``writer_a`` / ``writer_b``: the two conversations two processes appended in turn."""
    from .writers import interleaved_sides

    sides = interleaved_sides(session)
    if not sides:
        return
    where = {id(e): p for p, e in enumerate(session.store)}  # (the entries it looked at, read back or not)
    for key, side in sides.items():
        p = where.get(key)
        if p is not None:
            flags.setdefault(p, set()).add("writer_" + "ab"[side])


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


@dataclass(frozen=True)
class TreeLinks:
    """The tree's links before its rows (``link_entries``): ``parents`` per store position, its
    parent's as the tree draws it (-1: a root, also one on a parentId cycle no root reaches), and
    ``leaf_pos``, the position of the leaf ``build_tree(leaf_id=...)`` marks (``None``: none)."""

    graph: Any  # (_Graph: build_tree(linked=...) goes on from it)
    leaf_pos: int | None

    @property
    def parents(self) -> Any:
        return self.graph.parent


def link_entries(session: Session, leaf_id: Any = UNDEF) -> TreeLinks:
    """What ``build_tree`` knows before it lays out a row: each entry's parent and the leaf, for a
    caller that needs them first (the explorer page replays every node's context from them, and
    draws the tree later; ``build_tree(linked=...)`` goes on from here, not linking again).  Raises
    as ``build_tree`` does for a leaf that is not there."""
    g = _link(session)
    leaf_entry = _resolve_leaf(session, leaf_id)[1]
    return TreeLinks(g, session.position(leaf_entry) if leaf_entry is not None else None)


def _resolve_leaf(session: Session, leaf_id: Any) -> tuple[Any, Any, str | None]:
    """(leaf id, leaf entry, error): the reader's current leaf, or the one asked for."""
    if leaf_id is UNDEF:
        return current_leaf(session)
    leaf_entry = session.lookup(leaf_id)
    if leaf_entry is None and leaf_id is not None:
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path)
    return leaf_id, leaf_entry, None


_PATH_FLAGS = (None, "in_context", "compacted", "retained")


def _mark_context(session: Session, leaf_entry: Any, leaf_pos: int | None, active_path: list, flags: dict,
                  path_mark: bytearray) -> tuple[Any, str | None]:
    """Flag the leaf, the checkpoint, what the context holds (``in_context``), the active path's
    entries behind the checkpoint (``compacted``: on the path, not in the selection, for both
    readers; in ``path_mark``) and pi 1.6's edit targets.  Returns (checkpoint, error)."""
    if leaf_entry is None:
        return None, None
    from .context import edit_marks, retained_positions

    if leaf_pos is not None:
        flags.setdefault(leaf_pos, set()).add("leaf")
    try:
        selected = context_selection(session, leaf_entry)
        at = {id(e): session.position(e) for e in selected}  # (before an edit is read back: a new object)
        edits = edit_marks(session, selected)  # pi 1.6: targets of context edits
    except PisessError as err:  # no context: nothing is marked behind a checkpoint that cannot be found
        return None, err.message
    in_context = bytearray(len(path_mark))
    for p in at.values():
        if p is not None:
            in_context[p] = 1
    for key, mark in edits.items():
        p = at.get(key)
        if p is not None:
            flags.setdefault(p, set()).add(mark)
    retained = retained_positions(session, selected)  # behind the checkpoint, their copies in it (SDK reader)
    for p in active_path:
        path_mark[p] = 1 if in_context[p] else 3 if p in retained else 2
    checkpoint = None
    if selected and get(selected[0], "type") == "compaction":
        checkpoint = selected[0]
        p = at.get(id(checkpoint))
        if p is not None:
            flags.setdefault(p, set()).add("checkpoint")
    return checkpoint, None


class _FlagCodes:
    """The code (``TreeRows.flag_sets``) of each entry's flags: its own set, with its active path mark."""

    def __init__(self, rows: TreeRows, flags: dict, path_mark: bytearray) -> None:
        self.rows, self.flags, self.path_mark = rows, flags, path_mark
        self.plain = [rows.flag_code(frozenset((m,)) if m else _NO_FLAGS) for m in _PATH_FLAGS]

    def __call__(self, pos: int) -> int:
        mark = self.path_mark[pos]
        f = self.flags.get(pos)
        if f is None:
            return self.plain[mark]
        return self.rows.flag_code(frozenset(f) | {_PATH_FLAGS[mark]} if mark else frozenset(f))


class _Labels:
    """Does the entry at a position have a label (``Session.label_of`` of its id)?"""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.labels = session.labels
        self.sids = session.store.string_ids()

    def __call__(self, pos: int) -> bool:
        if not self.labels:
            return False
        sid = self.sids[pos]
        if sid is not None:
            return sid in self.labels  # (js.key of a string is the string)
        return self.session.label_of(get(self.session.store[pos], "id")) is not None


class _KindTree:
    """How ``tree`` treats the entry at a position (``kinds.of_entry(e).tree``), a plain message's
    told by its role without building it."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.by_role: dict = {}

    def __call__(self, pos: int) -> str:
        role = self.store.plain_role(pos)
        if role is None:
            return kinds.of_entry(self.store[pos]).tree
        got = self.by_role.get(role)
        if got is None:
            got = self.by_role[role] = kinds.of("message", role).tree
        return got


def _order(g: _Graph, active: bytearray) -> None:
    """The child that continues a branch point's column comes last: the active one, else the
    last in file order (the sort is stable)."""
    for q, kids in g.multi.items():
        kids.sort(key=active.__getitem__)
        g.first[q] = kids[0]
    if len(g.roots) > 1:
        g.roots.sort(key=active.__getitem__)


def _hidden(g: _Graph, active: bytearray, keep_visible, *, branches_only: bool, full: bool, fold_over: int,
            keep: int) -> bytearray:
    """The entries that fold: with ``branches_only`` everything but the active path, the branch
    points' children and their ancestors (and marked entries); unless ``full`` the middle of each
    long linear run."""
    n = len(active)
    hidden = bytearray(n)
    if branches_only:
        shown = bytearray(active)  # (the path's ancestors are on it)
        parent = g.parent
        for kids in g.multi.values():
            for k in kids:
                cur = k
                while cur >= 0 and not shown[cur]:  # (above a shown entry every ancestor is shown)
                    shown[cur] = 1
                    cur = parent[cur]
        for pos in range(n):
            if not shown[pos] and not keep_visible(pos):
                hidden[pos] = 1
    if not full:
        _fold_long_runs(g, hidden, keep_visible, fold_over, keep)
    return hidden


SIDE, TRUNK = "\u251c\u2500", "\u2502 "  # a side branch's connector, and the guide of the column it leaves


def _layout(rows: TreeRows, g: _Graph, active: bytearray, codes: _FlagCodes, hidden: bytearray,
            depth: int | None) -> None:
    """The rows, depth first.  Each stack item is (entry, guides, connector, side level, root); a
    side branch starts at ``guides + "├─"`` and goes on under ``guides + "│ "``, the guide of the
    column that continues below it."""
    sizes = _subtree_sizes(g) if depth is not None else {}
    first, multi = g.first, g.multi
    seen = bytearray(len(active))
    stack = [(r, "", "", 0, k) for k, r in reversed(list(enumerate(g.roots, 1)))]
    cont = {"": "", SIDE: TRUNK}
    indent_code = rows.indent_code
    # (``rows.add`` and ``codes`` inlined: this runs once per row, 100,000 times on a big session)
    add_pos, add_indent, add_active, add_flags = rows.pos.append, rows.indent.append, rows.active.append, \
        rows.flags.append
    root_rows, own_flags, path_mark, plain = rows.roots, codes.flags, codes.path_mark, codes.plain
    while stack:
        node, guides, conn, level, root = stack.pop()
        indent = indent_code(guides, conn)
        while True:  # down one column: a single child goes on in it (as if pushed and popped at once)
            if seen[node]:
                break
            count = 0
            while hidden[node] and node not in multi and not seen[node]:
                seen[node] = 1
                count += 1
                node = first[node]
                if node < 0:
                    break
            if count:
                rows.add_fold(guides, conn, node >= 0 and active[node] == 1, count, root=root)
                root = 0
                if node < 0 or seen[node]:
                    break
                guides, conn = guides + cont[conn], ""
                indent = indent_code(guides, conn)
            seen[node] = 1
            if root:
                root_rows[len(rows.pos)] = root
                root = 0
            add_pos(node)
            add_indent(indent)
            add_active(active[node])
            add_flags(plain[path_mark[node]] if node not in own_flags else codes(node))
            many = multi.get(node)
            if many is None:
                k = first[node]
                if k < 0 or seen[k]:
                    break
                if conn:
                    guides, conn = guides + cont[conn], ""
                    indent = indent_code(guides, conn)
                node = k
                continue
            kids = [k for k in many if not seen[k]]
            if not kids:
                break
            below = guides + cont[conn]
            stack.append((kids[-1], below, "", level, 0))  # the column goes on below the side branches
            sides = kids[:-1]
            if depth is not None and level + 1 > depth and sides:
                rows.add_fold(below, SIDE, False, count=sum(sizes.get(k, 1) for k in sides), branches=len(sides))
                for k in _subtree_ids(sides, g):
                    seen[k] = 1
                break
            for k in reversed(sides):
                stack.append((k, below, SIDE, level + 1, 0))
            break


def _mark_reached(starts: list, g: _Graph, reached: bytearray) -> None:
    stack = list(starts)
    first, multi = g.first, g.multi
    while stack:
        e = stack.pop()
        while e >= 0 and not reached[e]:  # (a single child: no trip through the stack)
            reached[e] = 1
            many = multi.get(e)
            if many is not None:
                stack.extend(many)
                break
            e = first[e]


def _cycle_member(parent: array, pos: int) -> int:
    seen = set()
    cur = pos
    while cur not in seen:
        seen.add(cur)
        nxt = parent[cur]
        if nxt < 0:
            return cur
        cur = nxt
    return cur


def _fold_long_runs(g: _Graph, hidden: bytearray, keep_visible, fold_over: int, keep: int) -> None:
    """Hide the middle of each linear run of ordinary entries longer than ``fold_over``."""
    first, multi = g.first, g.multi
    stack = list(g.roots)
    seen = bytearray(len(hidden))
    while stack:
        e = stack.pop()
        if seen[e]:
            continue
        run = []
        cur = e
        while True:
            seen[cur] = 1
            k = first[cur]
            if k >= 0 and cur not in multi and not keep_visible(cur) and not seen[k]:
                run.append(cur)
                cur = k
            else:
                break
        if len(run) > fold_over:
            for r in run[keep:len(run) - keep]:
                hidden[r] = 1
        stack.extend(g.kids(cur))


def _subtree_ids(starts: list, g: _Graph) -> set:
    out: set = set()
    stack = list(starts)
    while stack:
        e = stack.pop()
        if e in out:
            continue
        out.add(e)
        stack.extend(g.kids(e))
    return out


def _subtree_sizes(g: _Graph) -> dict:
    order = []
    stack = list(g.roots)
    seen: set = set()
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        order.append(e)
        stack.extend(g.kids(e))
    sizes: dict = {}
    for e in reversed(order):
        sizes[e] = 1 + sum(sizes.get(k, 0) for k in g.kids(e))
    return sizes
