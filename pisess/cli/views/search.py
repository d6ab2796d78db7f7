"""``pisess search``: hits with their snippet, kind and where they sit."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.shared import WHERE_STYLE, packed, session_head
from pisess.cli.views.text import escape_controls, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core import js

HIT_STYLE = "bold reverse"
#: Around the match when there is no colour to show it (NO_COLOR, a pipe, --color never): colour
#: never carries meaning alone.  Two characters code and prose rarely hold (``[[ ]]`` is bash's).
MARK_OPEN, MARK_CLOSE = "\u00bb", "\u00ab"


def _fit(m, room: int, marked: bool = False) -> Text:
    """The snippet in ``room`` characters with the match in view and highlighted (``marked``: also
    between ``MARK_OPEN`` and ``MARK_CLOSE``)."""
    before = escape_controls(m.snippet[:m.start])
    hit = escape_controls(m.snippet[m.start:m.end])
    after = escape_controls(m.snippet[m.end:])
    lead = "\u2026" if m.clipped_left else ""
    trail = "\u2026" if m.clipped_right else ""
    room = max(room, 12) - (2 if marked else 0)
    if len(hit) > room - 1:
        hit = hit[:room - 1] + "\u2026"
        before = after = lead = trail = ""
    avail = room - len(hit)
    if len(lead) + len(before) + len(after) + len(trail) > avail:
        # all of what comes before when it leaves room after the match, else its last third
        shown_after = min(len(after) + len(trail), avail // 3)
        keep = len(lead) + len(before)
        if keep > avail - shown_after:
            keep = avail - shown_after
            before = before[len(before) - max(keep - 1, 0):] if keep > 1 else ""
            lead = "\u2026" if keep >= 1 else ""
        left = avail - len(lead) - len(before)
        if len(after) + len(trail) > left:
            after = after[:max(left - 1, 0)]
            trail = "\u2026" if left >= 1 else ""
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(lead + before)
    t.append(f"{MARK_OPEN}{hit}{MARK_CLOSE}" if marked else hit, HIT_STYLE)
    t.append(after + trail)
    return t


def search_view(results: list, *, width: int, searched: int, label: str, active_only: bool,
                marked: bool = False) -> list:
    """The hits of each session, the count, the legend; ``marked``: no colour shows the match, so
    marks do (``MARK_OPEN``, ``MARK_CLOSE``)."""
    out: list = []
    total = 0
    for r in results:
        n = len(r.hits)
        total += n
        extra = f" \u00b7 {plural(n, 'hit')}"
        head = session_head(r.session_id, r.name, extra)
        if r.cwd:
            head.append(" \u00b7 " + escape_controls(js.to_string(r.cwd)), "dim")
        head.append(f" ({r.reader} reader)", "dim")
        if r.dropped_lines:  # named one by one on stderr
            head.append(f" \u00b7 {plural(len(r.dropped_lines), 'line')} skipped", "yellow")
        out.append(head)
        for h in r.hits:
            t = Text(no_wrap=True, overflow="ellipsis")
            t.append("  " + _sid(h.entry_id, r.id_width).ljust(r.id_width) + "  ", "bold" if h.where == "active" else "")
            kind = h.match.kind
            t.append(f"{escape_controls(kind):<10} ", d.word_style(kind))
            t.append(f"{h.where:<10} ", WHERE_STYLE.get(h.where, ""))
            t.append_text(_fit(h.match, width - t.cell_len - 1, marked))
            out.append(t)
        out.append(Text(""))
    foot = Text()
    sessions = len(results)
    foot.append(f"{plural(total, 'hit')} in {plural(sessions, 'session')}", "bold")
    foot.append(f" \u00b7 {plural(searched, 'file')} searched"
                + ("" if label.endswith((" file", " files")) else f" ({label})"))
    if active_only:
        foot.append(" \u00b7 active path in context only")
    out.append(foot)
    legend = [f"{MARK_OPEN}\u2026{MARK_CLOSE}: the match"] if marked else []
    legend.append("active: in the model's context")
    if any(h.where == "edited" for r in results for h in r.hits):
        legend.append("edited: hidden or replaced by a context edit")
    if any(h.where == "retained" for r in results for h in r.hits):
        legend.append("retained: a copy in the checkpoint")
    legend += ["compacted: replaced by its summary", "branch: off the active path"]
    if any(h.where == "dropped" for r in results for h in r.hits):
        legend.append("dropped: on a line no reader keeps")
    out.extend(packed(legend, width, sep=" \u00b7 "))  # (a narrow terminal breaks it between its phrases)
    return out
