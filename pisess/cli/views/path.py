"""``pisess path``: the entries from the root to the leaf, and what the model sees of them."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.context import id_cell
from pisess.cli.views.marks import ACTIVE, CHECKPOINT_MARK, COMPACTED, EDITED_MARK, HIDDEN_MARK, LEAF_MARK, edit_marks
from pisess.cli.views.shared import T, heading, label_tag, packed, reader_words, session_title
from pisess.cli.views.text import one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import get
from pisess.core.model import kinds


def path_view(ctx, *, width: int = 100, show_time: bool = False) -> list:
    s = ctx.session
    out: list = heading([(session_title(s), "bold"),
                         (f"path to leaf {_sid(ctx.leaf_id, s.id_width) if ctx.leaf_id is not None else '(none)'}", ""),
                         (plural(len(ctx.path), 'entry', 'entries'), ""), (reader_words(s), "dim")], width)
    first = ctx.cut_at
    if first is not None:
        why = ("compaction with retainedTail" if get(first, "type") == "compaction"
               else "the first kept entry of a compaction")
        out.append(T(f"\u2504\u2504 cut here: {why} ({_sid(get(first, 'id'), s.id_width)}); older entries are not read "
                     f"\u2504\u2504", "magenta"))
    in_ctx = {id(e) for e in ctx.context_entries}
    behind = False  # (the legend names ◐ only where a row draws it)
    for e in ctx.path:
        t = Text(no_wrap=True, overflow="ellipsis")
        line = s.line_of(e)
        t.append(f"{line if line else '?':>6}  ", "dim")
        seen = id(e) in in_ctx
        behind = behind or not seen
        t.append((ACTIVE if seen else COMPACTED) + " ", "bold" if seen else "dim")
        t.append(id_cell(get(e, "id"), s.id_width), "bold" if seen else "dim")
        if show_time:
            t.append(d.local_time(get(e, "timestamp")) + "  ", "dim")
        k = kinds.of_entry(e)
        t.append(f"{d.word(k):<10} ", d.style(k) if seen else "dim")
        tail = Text()
        label = s.label_of(get(e, "id"))
        if label is not None:
            tail.append("  " + label_tag(label), "bold blue")
        if e is ctx.checkpoint:
            tail.append(f"  {CHECKPOINT_MARK} checkpoint", "bold magenta")
        edit = ctx.edit_of(e) if seen else None
        if edit is not None:
            edit_marks(tail, {"hidden" if get(edit, "replacement") is None else "edited"})
        if e is (ctx.path[-1] if ctx.path else None):
            tail.append(f"  {LEAF_MARK}", "bold reverse")
        room = max(10, width - t.cell_len - tail.cell_len - 1)
        t.append(one_line(d.entry_preview(e, s.id_width), room), "" if seen else "dim")
        t.append_text(tail)
        out.append(t)
    legend = [f"{ACTIVE} the model sees it"] + ([f"{COMPACTED} replaced by the compaction summary"] if behind else [])
    if ctx.applied_edits:
        legend.append(f"{EDITED_MARK} / {HIDDEN_MARK} by a context edit")
    out.extend(packed(legend, width))
    return out
