"""``pisess tree``: the branch tree, one row per entry (the kind table's word and preview)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.context import id_cell
from pisess.cli.views.marks import (
    ACTIVE,
    CHECKPOINT_MARK,
    COMPACTED,
    EDITED_MARK,
    HIDDEN_MARK,
    LEAF_MARK,
    OTHER,
    WARN,
    WRITERS_MARK,
    edit_marks,
)
from pisess.cli.views.shared import T, heading, label_tag, packed, reader_words, safe, session_title
from pisess.cli.views.text import one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import UNDEF, get
from pisess.core.model import kinds


def tree_view(view, complete: Iterable[tuple[int, Any]] | None = None, *, width: int = 100,
              show_time: bool = False) -> list:
    """The tree's rows.  ``complete``: ``(position, whole entry)`` of the view's entry rows
    (``TreeView.complete_entries``, the command's read of a compact index), each row's preview
    taken as they pass: only the previews are kept, cut to the widest a row shows (a row cuts it
    again to its room: the same text); without them the rows' own entries are shown."""
    s = view.session
    cut = max(width, 10)  # (tree_row's room is at most this)
    previews = {pos: one_line(d.entry_preview(whole, s.id_width), cut) for pos, whole in complete or ()}
    leaf = view.leaf_id
    pieces = [(session_title(s), "bold"), (plural(view.entry_count, 'entry', 'entries'), ""),
              (plural(view.branch_points, 'branch point'), "")]
    if view.roots > 1:
        pieces.append((f"{view.roots} roots", ""))
    pieces += [(f"leaf {_sid(leaf, s.id_width) if leaf not in (None, UNDEF) else '(none)'}", ""),
               (reader_words(s), "dim")]
    out: list = heading(pieces, width)
    if view.leaf_error:
        out.append(safe(f"{WARN} the leaf cannot be resolved: {view.leaf_error}", "bold red"))
    flags: set = set()  # what the legend explains, gathered as the rows are drawn
    drawn: set = set()  # the marks of the rows drawn
    usage = False
    for r in view.rows:
        if r.root and view.roots > 1:  # a new root: not a child of the row above it
            if r.root > 1:
                out.append(T(""))
            out.append(T(f"root {r.root} of {view.roots}", "bold"))
        preview = None
        if r.kind == "entry":
            flags |= r.flags
            drawn.add(row_mark(r))
            usage = usage or get(r.entry, "type") == "usage"
            preview = previews.get(r.position) if previews else None
        out.append(tree_row(s, r, width, show_time, preview=preview))
    if not view.rows:  # nothing to explain: no legend
        out.append(T("(no entries)", "dim"))
        return out
    writers = "writer_a" in flags or "writer_b" in flags
    legend = [words for mark, words in ((ACTIVE, f"{ACTIVE} active path"), (OTHER, f"{OTHER} other branches"),
                                        (COMPACTED, f"{COMPACTED} behind the checkpoint")) if mark in drawn]
    if "checkpoint" in flags:
        legend.append(f"{CHECKPOINT_MARK} checkpoint")
    extra = [m for f, m in (("edited", EDITED_MARK), ("hidden", HIDDEN_MARK)) if f in flags]
    if extra:
        legend.append(" / ".join(extra) + " by a context edit")
    if usage:
        legend.append("usage: model calls outside the conversation (pi's own tree hides them)")
    if writers:
        legend.append(f"{WRITERS_MARK}A {WRITERS_MARK}B two writers interleaved")
    out.extend(packed(legend, width))
    return out


def row_mark(r) -> str:
    """An entry row's mark: on the active path (behind the checkpoint or not), or on another branch."""
    compacted = "compacted" in r.flags or "retained" in r.flags  # both behind the checkpoint
    return COMPACTED if (r.active and compacted) else (ACTIVE if r.active else OTHER)


def tree_row(session, r, width: int, show_time: bool, whole: Any = None, preview: str | None = None) -> Text:
    """One row; ``whole``: its entry complete (else the row's own, maybe light, is shown);
    ``preview``: the entry's preview made already (``tree_view``), instead of the entry's."""
    t = Text(no_wrap=True, overflow="ellipsis")
    guides = r.guides
    deepest = max(8, width // 3) // 2 * 2  # guides come in 2-column levels
    if len(guides) > deepest:
        # hundreds of branch points deep: the outer levels would fill the row (and cost a
        # measurement of every column of it); "⋯" stands for them
        guides = "\u22ef " + guides[len(guides) - deepest + 2:]
    t.append(guides + r.connector, "dim")
    if r.kind == "fold":
        sides = f"{plural(r.branches, 'side branch', 'side branches')}, " if r.branches else ""
        t.append(f"\u2506 \u2026 {sides}{plural(r.count, 'entry', 'entries')} \u2026", "dim")
        return t
    e = whole if whole is not None else r.entry
    compacted = "compacted" in r.flags or "retained" in r.flags  # both behind the checkpoint
    mark = row_mark(r)
    k = kinds.of_entry(e)
    # bookkeeping (usage entries: pi's tree hides them) is dimmed wherever it sits
    base = "" if r.active and not compacted and k.tree != "dim" else "dim"
    t.append(mark + " ", "bold" if r.active and not compacted else "dim")
    t.append(id_cell(get(e, "id"), session.id_width), "bold" if r.active else "dim")
    if show_time:
        t.append(d.local_time(get(e, "timestamp")) + "  ", "dim")
    t.append(f"{d.word(k):<10} ", d.style(k) if not base else "dim")
    tail = Text()
    label = session.label_of(get(e, "id"))
    if label is not None:
        tail.append("  " + label_tag(label), "bold blue")
    if "checkpoint" in r.flags:
        tail.append(f"  {CHECKPOINT_MARK} checkpoint", "bold magenta")
    if "dangling" in r.flags:
        tail.append(f"  {WARN} parent {_sid(get(e, 'parentId'), session.id_width)} missing", "bold red")
    if "cycle" in r.flags:
        tail.append(f"  {WARN} on a parentId cycle", "bold red")
    if "self_parent" in r.flags:
        tail.append(f"  {WARN} its own parent", "bold red")
    edit_marks(tail, r.flags)
    if "leaf" in r.flags:
        tail.append(f"  {LEAF_MARK}", "bold reverse")
    for side, style in (("a", "bold yellow"), ("b", "bold cyan")):
        if f"writer_{side}" in r.flags:  # one of two conversations two processes interleaved
            t.append(f"{WRITERS_MARK}{side.upper()} ", style)
    room = max(10, width - t.cell_len - tail.cell_len - 1)
    t.append(one_line(preview if preview is not None else d.entry_preview(e, session.id_width), room), base)
    t.append_text(tail)
    return t
