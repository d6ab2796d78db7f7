"""Human views of search, stats and du, and the progress bar they share.  Imports Rich.

As in ``render``: session text enters Rich only as ``Text`` built from escaped strings, never as
markup; words (``active``, ``compacted``, ``branch``) carry the meaning, colour only emphasis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Progress

from pisess.cli.output import make_console
from pisess.cli.views import describe as d
from pisess.cli.views.render import packed
from pisess.cli.views.text import escape_controls, human_size, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core import js
from pisess.core.js import UNDEF
from pisess.core.model import kinds

WHERE_STYLE = {"active": "green", "edited": "magenta", "retained": "cyan", "compacted": "yellow", "branch": "dim",
               "dropped": "red"}
WHERE_WORD = {"active": "in context", "edited": "edited", "retained": "retained", "compacted": "compacted", "branch": "branches"}
HIT_STYLE = "bold reverse"


def _session_head(sid: Any, name: Any, extra: str = "") -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(_sid(sid), "bold")
    if name:
        t.append(" \u00b7 " + one_line(name, 50), "bold")
    if extra:
        t.append(extra)
    return t


def progress_bar(color: str = "auto") -> Progress:
    """A transient byte progress bar on stderr; it never takes over stdout."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                    console=make_console(color, stderr=True), transient=True, redirect_stdout=False,
                    redirect_stderr=False)


# --- search ----------------------------------------------------------------------------------------


def _fit(m, room: int) -> Text:
    """The snippet in ``room`` characters with the match in view and highlighted."""
    before = escape_controls(m.snippet[:m.start])
    hit = escape_controls(m.snippet[m.start:m.end])
    after = escape_controls(m.snippet[m.end:])
    lead = "\u2026" if m.clipped_left else ""
    trail = "\u2026" if m.clipped_right else ""
    room = max(room, 12)
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
    t.append(hit, HIT_STYLE)
    t.append(after + trail)
    return t


def search_view(results: list, *, width: int, searched: int, label: str, active_only: bool) -> list:
    out: list = []
    total = 0
    for r in results:
        n = len(r.hits)
        total += n
        extra = f" \u00b7 {plural(n, 'hit')}"
        head = _session_head(r.session_id, r.name, extra)
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
            t.append_text(_fit(h.match, width - t.cell_len - 1))
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
    legend = ["active: in the model's context"]
    if any(h.where == "edited" for r in results for h in r.hits):
        legend.append("edited: hidden or replaced by a context edit")
    if any(h.where == "retained" for r in results for h in r.hits):
        legend.append("retained: a copy in the checkpoint")
    legend += ["compacted: replaced by its summary", "branch: off the active path"]
    if any(h.where == "dropped" for r in results for h in r.hits):
        legend.append("dropped: on a line no reader keeps")
    out.extend(packed(legend, width, sep=" \u00b7 "))  # (a narrow terminal breaks it between its phrases)
    return out


# --- stats -----------------------------------------------------------------------------------------


def _money(v: float, places: int | None = None) -> str:
    """``$0.0123`` below $100, ``$109.81`` above; ``places`` fixed for a column (``_moneys``)."""
    return f"${v:,.{places if places is not None else (4 if v < 100 else 2)}f}"


def _moneys(values: list) -> list[str]:
    """Amounts shown together (a column, a row): one number of decimals for all of them, so
    ``$31.2190`` never stands beside ``$109.81``."""
    places = 2 if any(v >= 100 for v in values) else 4
    return [_money(v, places) for v in values]


def _n(v: Any) -> str:
    return f"{v:,.0f}" if isinstance(v, (int, float)) else "-"


def _tool_line(calls: dict, limit: int = 8) -> str:
    items = list(calls.items())
    s = " \u00b7 ".join(f"{escape_controls(k)} {v:,}" for k, v in items[:limit])
    if len(items) > limit:
        s += f" \u00b7 {len(items) - limit} more"
    return s or "none"


def _errors_line(err: dict) -> str:
    parts = []
    if err.get("assistant"):
        parts.append(plural(err["assistant"], "assistant error"))
    if err.get("aborted"):
        parts.append(f"{err['aborted']:,} aborted")
    if err.get("tool"):
        parts.append(plural(err["tool"], "tool error"))
    return " \u00b7 ".join(parts) or "none"


def _messages_line(msgs: dict) -> str:
    words = {"user": ("user", "user"), "assistant": ("assistant", "assistant"),
             "toolResult": ("tool result", "tool results"), "bashExecution": ("bash", "bash"),
             "custom": ("ext msg", "ext msgs"), "other": ("other", "other")}
    parts = [f"{n:,} {words[k][0] if n == 1 else words[k][1]}" for k, n in msgs.items() if n]
    return " \u00b7 ".join(parts) or "none"


def columns(rows: list, align: str, *, indent: int = 2, header: list | None = None) -> list:
    """Rows of cells (``str`` or ``Text``) as aligned lines: ``align`` has ``l`` or ``r`` per
    column, two spaces between columns, nothing padded after the last one."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in r] for r in ([header] if header else []) + rows]
    if not cells:
        return []
    n = max(len(r) for r in cells)
    widths = [max((r[i].cell_len for r in cells if i < len(r)), default=0) for i in range(n)]
    out = []
    for k, r in enumerate(cells):
        t = Text(" " * indent, no_wrap=True, overflow="ellipsis")
        for i, c in enumerate(r):
            pad = widths[i] - c.cell_len
            last = i == len(r) - 1
            if i:
                t.append("  ")
            if align[i] == "r":
                t.append(" " * pad)
                t.append_text(c)
            else:
                t.append_text(c)
                if not last:
                    t.append(" " * pad)
        if header and k == 0:
            t.stylize("bold dim", indent)
        t.rstrip()
        out.append(t)
    return out


def fit(rows: list, align: str, header: list, width: int, *, flex: int, least: int, drop: tuple = (),
        indent: int = 2) -> tuple[list, str, list, list]:
    """Rows laid out for ``width``: the ``flex`` column (a label) shrinks to ``least`` (its cells
    cut with ``…``), then the columns in ``drop`` go, in that order, until the rows fit.  Returns
    (rows, align, header, the headers left out) for ``columns``."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in r] for r in [header] + rows]
    keep = list(range(len(header)))

    def widths() -> dict:
        return {i: max(r[i].cell_len for r in cells) for i in keep}

    def need(w: dict) -> int:
        return indent + sum(w.values()) + 2 * (len(keep) - 1)

    w = widths()
    dropped: list = []
    for i in drop:
        over = need(w) - width
        if over <= 0 or w[flex] - over >= least:
            break
        keep.remove(i)
        dropped.append(cells[0][i].plain)
        w = widths()
    room = max(least, w[flex] - max(0, need(w) - width))
    out = []
    for r in cells:
        c = r[flex]
        if c.cell_len > room:
            c = c.copy()
            c.truncate(room, overflow="ellipsis")
        out.append([c if i == flex else r[i] for i in keep])
    return out[1:], "".join(align[i] for i in keep), out[0], dropped


def _left_out(dropped: list, width: int) -> list:
    if not dropped:
        return []
    return [Text(f"  ({', '.join(dropped)} left out at {width} columns: --json has them)", "dim")]


def _k(v: Any, millions: bool | None = None) -> str:
    """A token count in at most 7 characters: ``332,555``, ``1.80M``; ``millions`` fixed for a
    column (``_ks``)."""
    if not isinstance(v, (int, float)):
        return "-"
    if millions is None:
        millions = abs(v) >= 1_000_000
    if not millions or not v:
        return f"{v:,.0f}"
    return f"{v / 1_000_000:,.2f}M"


def _ks(values: list) -> list[str]:
    """Token counts of one column in one format: in millions (``0.33M`` under ``1.8M``) as soon
    as one of them is, never ``332,555`` under ``1.80M``."""
    millions = any(isinstance(v, (int, float)) and abs(v) >= 1_000_000 for v in values)
    return [_k(v, millions) for v in values]


_MATCHED_BY = {"path": "by path", "fileId": "by the id in its file name", "headerId": "by its header id"}


def _matches_line(matches: dict) -> str | None:
    """How forks' parents were found: the path written in a fork names another tree once a root is
    copied, so a user can tell a parent found by id from one found by its path."""
    found = [f"{words} ({matches[how]})" for how, words in _MATCHED_BY.items() if matches.get(how)]
    parts = [f"parent matched {', '.join(found)}"] if found else []
    if matches.get("unmatched"):
        parts.append(f"{plural(matches['unmatched'], 'fork whose parent is', 'forks whose parents are')} "
                     "not in the set (counted whole)")
    return " \u00b7 ".join(parts) or None


def stats_view(report, *, label: str, width: int = 100) -> list:
    t = report.total
    out: list = []
    head = Text()
    head.append(f"stats \u00b7 {label} \u00b7 {plural(len(report.sessions), 'session')}", "bold")
    if report.forks:
        head.append(f" \u00b7 {plural(len(report.forks), 'fork')} of a session in the set")
    out.append(head)
    shown = [w for w in ("active", "edited", "retained", "compacted", "branch")
             if w not in ("edited", "retained") or report.where[w]["entries"]]
    cols = [report.where[w] for w in shown] + [t]
    rows = [["entries", *[_n(c["entries"]) for c in cols]],
            ["messages", *[_n(c["messageCount"]) for c in cols]]]
    for key, word in (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
                      ("cacheWrite", "cache write"), ("total", "tokens")):
        rows.append([word, *[_n(c["tokens"][key]) for c in cols]])
    rows.append(["cost", *_moneys([c["cost"] for c in cols])])
    rows.append(["tool calls", *[_n(sum(c["toolCalls"].values())) for c in cols]])
    rows.append(["errors", *[_n(sum(c["errors"].values())) for c in cols]])
    words = {"active": "IN CONTEXT", "edited": "EDITED", "retained": "RETAINED", "compacted": "COMPACTED", "branch": "BRANCHES"}
    total_bold = [[*r[:-1], Text(r[-1], "bold")] for r in rows]
    out.extend(columns(total_bold, "l" + "r" * len(cols), header=["", *[words[w] for w in shown], "TOTAL"]))
    if report.by:
        out.append(Text(""))
        out.extend(_by_table(report, width))
    out.append(Text(""))
    c = report.copied
    if report.forks:
        forks = (f"{plural(len(report.forks), 'session')} forked from another in the set: "
                 f"{plural(c['entries'], 'copied entry', 'copied entries')} counted once")
        forks_left = (f"left out: {plural(c['messageCount'], 'message')} \u00b7 {c['tokens']['total']:,} tokens "
                      f"\u00b7 {_money(c['cost'])}")
    else:
        forks, forks_left = "no session in the set is forked from another one in it", None
    forks_matched = _matches_line(report.matches)
    detail = [
        ("messages", _messages_line(t["messages"])),
        ("tool calls", _tool_line(t["toolCalls"])),
        ("errors", _errors_line(t["errors"])),
        ("structure", " \u00b7 ".join([
            plural(t["compactions"], "compaction"),
            plural(t["branchSummaries"], "branch summary", "branch summaries"),
            plural(report.branch_points, "branch point"),
            plural(report.abandoned_branches, "abandoned branch", "abandoned branches")
            + (" (off the active path)" if report.abandoned_branches else "")])),
        ("forks", forks),
    ]
    if forks_left:
        detail.append(("", forks_left))
    if forks_matched:
        detail.append(("", forks_matched))
    if t["usageKinds"]:  # pi 1.6's usage entries (prompt-cache warming and other model calls)
        detail.append(("usage", " \u00b7 ".join(f"{k} {_n(v['entries'])} ({_money(v['cost'])})"
                                                for k, v in t["usageKinds"].items())))
    if t["thinkingLevels"]:
        detail.append(("thinking", " \u00b7 ".join(f"{k} {_n(n)}" for k, n in t["thinkingLevels"].items())))
    if t["virtualModels"]:
        detail.append(("virtual", " \u00b7 ".join(f"{k} ({plural(n, 'state entry', 'state entries')})"
                                                  for k, n in t["virtualModels"].items())))
    for word, text in detail:
        # a line too long for the width goes on under its text, broken between " · " pieces
        for i, piece in enumerate(packed(text.split(" \u00b7 "), max(20, width - 11), style="", sep=" \u00b7 ")):
            line = Text(no_wrap=True, overflow="ellipsis")
            line.append(f"{word if not i else '':<11}", "dim")
            line.append_text(piece)
            out.append(line)
    return out


# the label column's least width (the session id whole), and the columns that go first when narrow
_BY_LEAST = {"session": 8, "model": 20, "day": 10, "branch": 21}
_BY_DROP = (5, 4, 7, 8, 1)  # CACHE W, CACHE R, TOOLS, ERR, MSGS: INPUT, OUTPUT and COST stay


def _by_table(report, width: int = 100) -> list:
    title = {"session": "SESSION", "model": "MODEL", "day": "DAY (local)", "branch": "SESSION   BRANCH"}[report.by]
    t = report.total
    groups = [*report.groups, t]
    tokens = {key: _ks([g["tokens"][key] for g in groups]) for key in ("input", "output", "cacheRead", "cacheWrite")}
    costs = _moneys([g["cost"] for g in groups])
    rows: list = []
    for i, row in enumerate(groups):  # each column in one format, the total row's included
        rows.append([_group_label(report.by, row) if row is not t else Text("total", "bold"), _n(row["messageCount"]),
                     tokens["input"][i], tokens["output"][i], tokens["cacheRead"][i], tokens["cacheWrite"][i],
                     costs[i], _n(sum(row["toolCalls"].values())), _n(sum(row["errors"].values()))])
    rows[-1] = [c if isinstance(c, Text) else Text(c, "bold") for c in rows[-1]]
    rows, align, header, dropped = fit(rows, "lrrrrrrrr", [title, "MSGS", "INPUT", "OUTPUT", "CACHE R", "CACHE W",
                                                          "COST", "TOOLS", "ERR"], width, flex=0,
                                       least=_BY_LEAST[report.by], drop=_BY_DROP)
    return columns(rows, align, header=header) + _left_out(dropped, width)


def _group_label(by: str, row: dict) -> Text:
    t = Text(no_wrap=True)
    if by == "session":
        t.append(_sid(row.get("session")), "bold")
        if row.get("name"):
            t.append("  " + one_line(row["name"], 24))
    elif by == "branch":
        t.append(_sid(row.get("session")), "bold")
        if row.get("branch") is None:
            t.append("  active path")
        else:
            t.append(f"  {_sid(row['branch'])}", "dim")
            if row.get("from"):
                t.append(f" from {_sid(row['from'])}", "dim")
    else:
        t.append(one_line(js.to_string(row["key"]), 34))
    return t


# --- du --------------------------------------------------------------------------------------------

def kind_word(t: str, role: str | None) -> str:
    """The kind table's word for du's (type, role) pair (du says ``(none)`` for a message without a role)."""
    return escape_controls(kinds.of(UNDEF if t == "(none)" else t, UNDEF if role == "(none)" else role).word)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _bar(part: int, whole: int, width: int = 20) -> str:
    return "\u2588" * (round(width * part / whole) if whole else 0)


def du_view(report, *, label: str, width: int = 100) -> list:
    out: list = []
    head = Text()
    head.append(f"du \u00b7 {label} \u00b7 {plural(len(report.sessions), 'session')} \u00b7 {human_size(report.size)}",
                "bold")
    out.append(head)
    rows = []
    for s in report.sessions:
        big = s.largest
        rows.append([Text(_sid(s.id), "bold"), Text(one_line(s.name, 14)) if s.name else Text("-", "dim"),
                     human_size(s.size), _n(s.entries), human_size(s.where["active"]),
                     human_size(s.where["compacted"]), human_size(s.where["branch"]),
                     human_size(s.images["bytes"]) if s.images["count"] else "-",
                     f"{human_size(big.bytes)} {_sid(big.entry_id, big.id_width)}" if big else "-"])
    rows, align, header, dropped = fit(rows, "llrrrrrrl", ["SESSION", "NAME", "SIZE", "ENTRIES", "CONTEXT", "COMPACTED",
                                                          "BRANCHES", "IMAGES", "LARGEST"], width, flex=1, least=6,
                                       drop=(8, 7, 3))  # LARGEST, IMAGES, ENTRIES go first
    out.extend(columns(rows, align, header=header) + _left_out(dropped, width))
    out.append(Text(""))
    out.append(Text("by entry type", "bold"))
    whole = report.size
    rows = [[kind_word(r["type"], r["role"]), plural(r["entries"], "entry", "entries"), human_size(r["bytes"]),
             _pct(r["bytes"], whole), Text(_bar(r["bytes"], whole), "cyan")] for r in report.kinds]
    rest = report.header_bytes + report.other_bytes
    rows.append([Text("other", "dim"), Text("headers, newlines", "dim"), human_size(rest), _pct(rest, whole), ""])
    out.extend(columns(rows, "lrrrl"))
    out.append(Text(""))
    w = Text(no_wrap=True, overflow="ellipsis")
    w.append("where", "bold")
    w.append("  ")
    parts = [("in context", report.where["active"], "green"), ("compacted", report.where["compacted"], "yellow"),
             ("other branches", report.where["branch"], "")]
    if report.where.get("retained"):  # kept verbatim by a checkpoint's retainedTail (pi's SDK)
        parts.insert(1, ("retained", report.where["retained"], "cyan"))
    if report.where.get("edited"):  # hidden or replaced by a pi 1.6 context_edit
        parts.insert(1, ("edited", report.where["edited"], "magenta"))
    for i, (word, b, style) in enumerate(parts):
        piece = f"{word} {human_size(b)} ({_pct(b, whole)})"
        if i and w.cell_len + 3 + len(piece) > width:  # the next piece on a line of its own, under the first
            out.append(w)
            w = Text("       ", no_wrap=True, overflow="ellipsis")
        elif i:
            w.append(" \u00b7 ")
        w.append(piece, style)
    out.append(w)
    img = Text()
    img.append("images", "bold")
    img.append(" " + (f"{plural(report.images['count'], 'image')} \u00b7 {human_size(report.images['bytes'])} of "
                      "base64" if report.images["count"] else "none"))
    out.append(img)
    out.append(Text(""))
    out.append(Text(f"top {plural(len(report.top), 'entry', 'entries')} by size", "bold"))
    rows = []
    for b in report.top:
        what = one_line(b.detail or "", 50)
        if b.images:
            what += f" \u00b7 {plural(b.images, 'image')} ({human_size(b.image_bytes)})"
        rows.append([human_size(b.bytes), _sid(b.session_id), Text(_sid(b.entry_id, b.id_width), "bold"), str(b.line),
                     kind_word(b.type, b.role), Text(b.where, WHERE_STYLE.get(b.where, "")), what])
    out.extend(columns(rows, "rllrlll", header=["SIZE", "SESSION", "ENTRY", "LINE", "KIND", "WHERE", "WHAT"]))
    return out

