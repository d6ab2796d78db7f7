"""``pisess search``: hits with their snippet, kind and where they sit.

One layout (``_layout``: each row as ``(text, style)`` pieces), drawn two ways: ``search_view``,
Rich ``Text`` rows for the printer (colour, a terminal), and ``search_lines``, the same rows as the
plain lines the printer writes for them where there is no colour (a pipe, a file), made without
loading Rich (``None`` when only Rich can say how wide a row is, or a row would wrap).  ``hit_rows``
chooses between them, and ``last_word`` is what search says after its hits: both ways of answering
a search (the command, and the console script's lean path) use them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator

from pisess.cli.output import PIPE_WIDTH, columns, isatty
from pisess.cli.views.text import escape_controls, one_line, pack, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core import js

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HIT_STYLE = "bold reverse"
#: Around the match when there is no colour to show it (NO_COLOR, a pipe, --color never): colour
#: never carries meaning alone.  Two characters code and prose rarely hold (``[[ ]]`` is bash's).
MARK_OPEN, MARK_CLOSE = "\u00bb", "\u00ab"
SEP = " \u00b7 "
_Pieces = list[tuple[str, str]]


def _fit_parts(m, room: int, marked: bool = False) -> tuple[str, str, str]:
    """The snippet in ``room`` characters with the match in view: what comes before the match, the
    match (``marked``: between ``MARK_OPEN`` and ``MARK_CLOSE``), what comes after."""
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
    return lead + before, f"{MARK_OPEN}{hit}{MARK_CLOSE}" if marked else hit, after + trail


def _layout(results: list, *, width: int, searched: int, label: str, active_only: bool, marked: bool,
            cells: Callable[[str], int], style: Callable[[str, str], str]) -> Iterator[tuple[str, _Pieces]]:
    """The view's rows, each ``(how, pieces)``: ``how`` is ``cut`` (one line, cut to the width with
    an ellipsis), ``wrap`` (wrapped to the width) or ``legend`` (one piece, its whole style the
    piece's); ``pieces`` are ``(text, style)``.  ``cells``: a string's width on the terminal;
    ``style(what, word)``: the style of a kind word (``what="kind"``) or a place (``"where"``)."""
    total = 0
    for r in results:
        n = len(r.hits)
        total += n
        head: _Pieces = [(_sid(r.session_id), "bold")]  # (shared.session_head's pieces)
        if r.name:
            head.append((SEP + one_line(r.name, 50), "bold"))
        head.append((f" \u00b7 {plural(n, 'hit')}", ""))
        if r.cwd:
            head.append((SEP + escape_controls(js.to_string(r.cwd)), "dim"))
        head.append((f" ({r.reader} reader)", "dim"))
        if r.dropped_lines:  # named one by one on stderr
            head.append((f" \u00b7 {plural(len(r.dropped_lines), 'line')} skipped", "yellow"))
        yield "cut", head
        for h in r.hits:
            kind = h.match.kind
            row: _Pieces = [("  " + _sid(h.entry_id, r.id_width).ljust(r.id_width) + "  ",
                             "bold" if h.where == "active" else ""),
                            (f"{escape_controls(kind):<10} ", style("kind", kind)),
                            (f"{h.where:<10} ", style("where", h.where))]
            before, hit, after = _fit_parts(h.match, width - cells("".join(t for t, _ in row)) - 1, marked)
            row += [(before, ""), (hit, HIT_STYLE), (after, "")]
            yield "cut", row
        yield "wrap", []
    sessions = len(results)
    yield "wrap", [(f"{plural(total, 'hit')} in {plural(sessions, 'session')}", "bold"),
                   (f" \u00b7 {plural(searched, 'file')} searched"
                    + ("" if label.endswith((" file", " files")) else f" ({label})"), ""),
                   *([(" \u00b7 active path in context only", "")] if active_only else [])]
    legend = [f"{MARK_OPEN}\u2026{MARK_CLOSE}: the match"] if marked else []
    legend.append("active: in the model's context")
    if any(h.where == "edited" for r in results for h in r.hits):
        legend.append("edited: hidden or replaced by a context edit")
    if any(h.where == "retained" for r in results for h in r.hits):
        legend.append("retained: a copy in the checkpoint")
    legend += ["compacted: replaced by its summary", "branch: off the active path"]
    if any(h.where == "dropped" for r in results for h in r.hits):
        legend.append("dropped: on a line no reader keeps")
    for line in pack(legend, width, SEP):
        yield "legend", [(line, "dim")]


def search_view(results: list, *, width: int, searched: int, label: str, active_only: bool,
                marked: bool = False) -> list:
    """The hits of each session, the count, the legend; ``marked``: no colour shows the match, so
    marks do (``MARK_OPEN``, ``MARK_CLOSE``)."""
    from rich.cells import cell_len
    from rich.text import Text

    from pisess.cli.views import describe as d
    from pisess.cli.views.shared import WHERE_STYLE

    def style(what: str, word: str) -> str:
        return d.word_style(word) if what == "kind" else WHERE_STYLE.get(word, "")

    out: list = []
    for how, pieces in _layout(results, width=width, searched=searched, label=label, active_only=active_only,
                               marked=marked, cells=cell_len, style=style):
        if how == "legend":
            out.append(Text(pieces[0][0], style=pieces[0][1]))
            continue
        t = Text(no_wrap=True, overflow="ellipsis") if how == "cut" else Text()
        for text, s in pieces:
            t.append(text, s)
        out.append(t)
    return out


class _Wide(Exception):
    """A row holds a character whose width on the terminal only Rich's table says."""


#: Characters one cell wide in Rich's table (tests/test_lean_search.py checks each against the
#: installed Rich): printable ASCII, Latin, IPA, Greek, Cyrillic, the punctuation the views use.
_NARROW = re.compile("[ -~\u00a0-\u02ff\u0370-\u0482\u048a-\u052f\u2010-\u2027\u2030-\u205e\u2190-\u21ff]*")


def _cells(s: str) -> int:
    if (s.isascii() and s.isprintable()) or _NARROW.fullmatch(s):
        return len(s)
    raise _Wide


def search_lines(results: list, *, width: int, searched: int, label: str, active_only: bool) -> list[str] | None:
    """``search_view``'s rows (``marked``) as the printer writes them where there is no colour: a
    one-line row cut to the width with an ellipsis, spaces at the end of a row dropped.  ``None``
    when a row holds a character only Rich can measure, or a row that wraps (Rich breaks it)."""
    out: list[str] = []
    try:
        for how, pieces in _layout(results, width=width, searched=searched, label=label, active_only=active_only,
                                   marked=True, cells=_cells, style=lambda what, word: ""):
            line = "".join(t for t, _ in pieces)
            if _cells(line) > width:
                if how != "cut":
                    return None
                line = line[:max(width - 1, 0)] + "\u2026"
            out.append(line.rstrip(" "))
    except _Wide:
        return None
    return out


def hit_rows(report: Any, label: str, active_only: bool, color: str, printer: Any) -> list:
    """The hits of ``report`` as ``printer`` prints them: plain lines drawn without Rich where the
    printer would write them plain (no colour, not a terminal), else the Rich view."""
    env = os.environ
    if (color.lower() != "always" and not isatty(sys.stdout)
            and "FORCE_COLOR" not in env and "TTY_COMPATIBLE" not in env):  # (Rich's reasons for a terminal)
        lines = search_lines(report.results, width=columns() or PIPE_WIDTH, searched=report.files, label=label,
                             active_only=active_only)
        if lines is not None:
            return lines
    return search_view(report.results, width=printer.width, searched=report.files, label=label,
                       active_only=active_only, marked=printer.console.color_system is None)


def last_word(report: Any, label: str) -> str:
    """What search says on stderr after its hits: how to see the first in context (or, when every
    hit is on a damaged line, what is wrong with the file), or that there were none."""
    import shlex

    first = next(((r, h) for r in report.results for h in r.hits if h.entry_id is not None), None)
    if first:
        return (f"see a hit in context: pisess context {shlex.quote(first[0].path)} --leaf "
                f"{shlex.quote(str(first[1].entry_id))}")
    if report.results:
        return f"see what is wrong with the file: pisess validate {shlex.quote(report.results[0].path)}"
    return no_hits(report, label)


def no_hits(report: Any, label: str) -> str:
    """``no hits in 3 files (this project)``: the files searched, the scope when a name is not
    its count, and what was not searched (unreadable, not a session: each named on stderr)."""
    searched = report.files - len(report.unreadable) - len(report.skipped)
    notes = [] if label.endswith((" file", " files")) else [label]
    if report.unreadable:
        notes.append(f"{len(report.unreadable)} unreadable")
    if report.skipped:
        n = len(report.skipped)
        notes.append(f"{n} not a session" if n == 1 else f"{n} not sessions")
    head = f"no hits in {searched} file{'s' if searched != 1 else ''}" if searched else "no file searched"
    return head + (f" ({', '.join(notes)})" if notes else "")
