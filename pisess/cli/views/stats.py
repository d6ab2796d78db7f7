"""``pisess stats``: totals, tokens and cost, and the ``--by`` tables."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from pisess.cli.views.columns import columns, count_text, fit, left_out
from pisess.cli.views.shared import packed
from pisess.cli.views.text import escape_controls, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core import js
from pisess.core.ids import unique_prefix_width


def _money(v: float, places: int | None = None) -> str:
    """``$0.0123`` below $100, ``$109.81`` above; ``places`` fixed for a column (``_moneys``)."""
    return f"${v:,.{places if places is not None else (4 if v < 100 else 2)}f}"


def _moneys(values: list) -> list[str]:
    """Amounts shown together (a column, a row): one number of decimals for all of them, so
    ``$31.2190`` never stands beside ``$109.81``."""
    places = 2 if any(v >= 100 for v in values) else 4
    return [_money(v, places) for v in values]


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


_MATCHED_BY = {"path": "by path", "fileId": "by the id in its file name", "headerId": "by its header id",
               "sameId": "as another file of its session id (pi #11060)"}


def _matches_line(matches: dict) -> str | None:
    """How forks' parents were found: the path written in a fork names another tree once a root is
    copied, so a user can tell a parent found by id from one found by its path."""
    found = [f"{words} ({matches[how]})" for how, words in _MATCHED_BY.items() if matches.get(how)]
    parts = [f"parent matched {', '.join(found)}"] if found else []
    if matches.get("unmatched"):
        parts.append(f"{plural(matches['unmatched'], 'fork whose parent is', 'forks whose parents are')} "
                     "not in the set (counted whole)")
    return " \u00b7 ".join(parts) or None


def _nested_line(n: dict) -> str | None:
    """Sessions below a session's folder (subagent runs): whether they are in the figures."""
    found = n["foundCount"]
    if not found:
        return None
    parents = n["parentCount"]
    below = f"{found} below {plural(parents, 'session')}{chr(39) + 's' if parents == 1 else chr(39)} folder"
    if n["folded"]:
        return f"{below}, folded into {'its' if parents == 1 else 'their'} parent's figures"
    if n["countedCount"] == found:
        return f"{below}, each counted on its own (--nested folds)"
    return f"{below}, {found - n['countedCount']} not counted (--nested folds them in)"


def stats_view(report, *, label: str, width: int = 100) -> list:
    t = report.total
    out: list = []
    head = Text()
    head.append(f"stats \u00b7 {label} \u00b7 {plural(len(report.sessions), 'session')}", "bold")
    same = sum(1 for *_, how in report.forks if how == "sameId")
    if len(report.forks) > same:
        head.append(f" \u00b7 {plural(len(report.forks) - same, 'fork')} of a session in the set")
    if same:
        head.append(f" \u00b7 {plural(same, 'second file')} of a session id")
    out.append(head)
    shown = [w for w in ("active", "edited", "retained", "compacted", "branch")
             if w not in ("edited", "retained") or report.where[w]["entryCount"]]
    cols = [report.where[w] for w in shown] + [t]
    rows = [["entries", *[count_text(c["entryCount"]) for c in cols]],
            ["messages", *[count_text(c["messageCount"]) for c in cols]]]
    for key, word in (("input", "input"), ("output", "output"), ("cacheRead", "cache read"),
                      ("cacheWrite", "cache write"), ("total", "tokens")):
        rows.append([word, *[count_text(c["tokens"][key]) for c in cols]])
    rows.append(["cost", *_moneys([c["cost"] for c in cols])])
    rows.append(["tool calls", *[count_text(sum(c["toolCallCountByTool"].values())) for c in cols]])
    rows.append(["errors", *[count_text(sum(c["errorCountByKind"].values())) for c in cols]])
    words = {"active": "IN CONTEXT", "edited": "EDITED", "retained": "RETAINED", "compacted": "COMPACTED", "branch": "BRANCHES"}
    total_bold = [[*r[:-1], Text(r[-1], "bold")] for r in rows]
    out.extend(columns(total_bold, "l" + "r" * len(cols), header=["", *[words[w] for w in shown], "TOTAL"]))
    if report.by:
        out.append(Text(""))
        out.extend(_by_table(report, width))
    out.append(Text(""))
    c = report.copied
    if report.forks:
        what = [plural(len(report.forks) - same, "session") + " forked from another in the set"] \
            if len(report.forks) > same else []
        if same:
            what.append(f"{plural(same, 'second file')} of a session id")
        forks = (f"{', '.join(what)}: {plural(c['entryCount'], 'copied entry', 'copied entries')} counted once")
        forks_left = (f"left out: {plural(c['messageCount'], 'message')} \u00b7 {c['tokens']['total']:,} tokens "
                      f"\u00b7 {_money(c['cost'])}")
    else:
        forks, forks_left = "no session in the set is forked from another one in it", None
    forks_matched = _matches_line(report.matches)
    detail = [
        ("messages", _messages_line(t["messageCountByRole"])),
        ("tool calls", _tool_line(t["toolCallCountByTool"])),
        ("errors", _errors_line(t["errorCountByKind"])),
        ("structure", " \u00b7 ".join([
            plural(t["compactionCount"], "compaction"),
            plural(t["branchSummaryCount"], "branch summary", "branch summaries"),
            plural(report.branch_points, "branch point"),
            plural(report.abandoned_branches, "abandoned branch", "abandoned branches")
            + (" (off the active path)" if report.abandoned_branches else "")])),
        ("forks", forks),
    ]
    nested = _nested_line(report.nested)
    if forks_left:
        detail.append(("", forks_left))
    if forks_matched:
        detail.append(("", forks_matched))
    if nested:
        detail.append(("nested", nested))
    if t["usageKinds"]:  # pi 1.6's usage entries (prompt-cache warming and other model calls)
        detail.append(("usage", " \u00b7 ".join(f"{k} {count_text(v['entryCount'])} ({_money(v['cost'])})"
                                                for k, v in t["usageKinds"].items())))
    if t["messageCountByThinkingLevel"]:
        detail.append(("thinking", " \u00b7 ".join(f"{k} {count_text(n)}"
                                                     for k, n in t["messageCountByThinkingLevel"].items())))
    if t["entryCountByVirtualModel"]:
        detail.append(("virtual", " \u00b7 ".join(f"{k} ({plural(n, 'state entry', 'state entries')})"
                                                  for k, n in t["entryCountByVirtualModel"].items())))
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
    t = report.total
    groups = [*report.groups, t]
    tokens = {key: _ks([g["tokens"][key] for g in groups]) for key in ("input", "output", "cacheRead", "cacheWrite")}
    costs = _moneys([g["cost"] for g in groups])
    # sessions whose ids begin alike (pi's ids are UUIDv7: the first 8 characters are the minute)
    idw = unique_prefix_width([g.get("sessionId") for g in report.groups if isinstance(g.get("sessionId"), str)])
    bw = unique_prefix_width([g.get("branch") for g in report.groups if isinstance(g.get("branch"), str)])
    title = {"session": "SESSION", "model": "MODEL", "day": "DAY (local)",
             "branch": "SESSION".ljust(idw + 2) + "BRANCH"}[report.by]
    # the ids stay whole however narrow: a name or a branch's "from" is cut first
    least = {"session": idw + 2, "branch": idw + 2 + max(bw, len("active path"))}.get(report.by, 0)
    rows: list = []
    for i, row in enumerate(groups):  # each column in one format, the total row's included
        label = _group_label(report.by, row, idw, bw) if row is not t else Text("total", "bold")
        rows.append([label, count_text(row["messageCount"]),
                     tokens["input"][i], tokens["output"][i], tokens["cacheRead"][i], tokens["cacheWrite"][i],
                     costs[i], count_text(sum(row["toolCallCountByTool"].values())),
                     count_text(sum(row["errorCountByKind"].values()))])
    rows[-1] = [c if isinstance(c, Text) else Text(c, "bold") for c in rows[-1]]
    rows, align, header, dropped = fit(rows, "lrrrrrrrr", [title, "MSGS", "INPUT", "OUTPUT", "CACHE R", "CACHE W",
                                                          "COST", "TOOLS", "ERR"], width, flex=0,
                                       least=max(least, _BY_LEAST[report.by]), drop=_BY_DROP,
                                       most=34 if report.by in ("model", "day") else None)
    return columns(rows, align, header=header) + left_out(dropped, width)


def _group_label(by: str, row: dict, id_width: int = 8, branch_width: int = 8) -> Text:
    t = Text(no_wrap=True)
    if by == "session":
        t.append(_sid(row.get("sessionId"), id_width), "bold")
        if row.get("name"):
            t.append("  " + one_line(row["name"], 24))
    elif by == "branch":
        t.append(_sid(row.get("sessionId"), id_width), "bold")
        if row.get("branch") is None:
            t.append("  active path")
        else:
            t.append(f"  {_sid(row['branch'], branch_width)}", "dim")
            if row.get("from"):
                t.append(f" from {_sid(row['from'])}", "dim")
    else:
        t.append(one_line(js.to_string(row["key"]), 1000))
    return t
