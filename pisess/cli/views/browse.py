"""What ``pisess browse`` draws, as Rich renderables (no Textual here): the key table, the detail of
an entry, the trace's turns and the header.  The app (``pisess.cli.browse``) only places them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.text import escape_controls, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import get


@dataclass(frozen=True)
class Key:
    """One row of the key table: the keys as the help spells them, what they do, the screens that
    bind them, and the key bar's short form (``None``: not on the bar)."""

    keys: str
    what: str
    screens: frozenset
    bar: tuple[str, str] | None = None


LISTS = frozenset({"session", "sessions", "hits"})
PAGES = frozenset({"session", "sessions", "hits", "page"})

#: The keys, a contract: the help screen lists them, each screen's key bar is made from them (in
#: this order: a narrow bar keeps the first and the last two, and drops from the end of the
#: middle), and a test checks them against the screens' bindings both ways.
KEYS: tuple[Key, ...] = (
    Key("\u2191 \u2193  j k", "move (on a page: scroll)", PAGES, ("j/k", "move")),
    Key("c", "context: what the model sees if the selected entry were the leaf", frozenset({"session"}),
        ("c", "context")),
    Key("t", "trace: the selected entry's branch as turns and steps", frozenset({"session"}), ("t", "trace")),
    Key("/", "search this session's entries, or the listed sessions' text", frozenset({"session", "sessions"}),
        ("/", "search")),
    Key("f", "fork at the selected entry (shows the plan, asks, writes a new file beside this one)",
        frozenset({"session"}), ("f", "fork")),
    Key("\u2190 \u2192  h l", "fold / unfold a side branch, else go to the parent / first child",
        frozenset({"session"}), ("h/l", "fold")),
    Key("d", "compare: mark an entry, select another, press d again", frozenset({"session"}), ("d", "compare")),
    Key("y Y", "copy the entry id / the command that resumes there (OSC 52)", frozenset({"session"}),
        ("y", "copy")),
    Key("e E", "export the branch to a file in the current directory (Markdown / HTML)", frozenset({"session"}),
        ("e", "export")),
    Key("L", "jump to the leaf", frozenset({"session"}), ("L", "leaf")),
    Key("[ ]", "previous / next branch point", frozenset({"session"}), ("[ ]", "branches")),
    Key("n N", "next / previous hit", frozenset({"session"})),
    Key("Enter", "open the session, or the hit; in a session: the entry's context",
        frozenset({"session", "sessions", "hits"}), ("Enter", "open")),
    Key("a-z 0-9", "type to filter the sessions by id, name, first message and cwd (Esc clears)",
        frozenset({"sessions"}), ("type", "to filter")),
    Key("Tab", "this project / all projects; in a session: the other pane (j k then scroll it)",
        frozenset({"session", "sessions"}), ("Tab", "other")),
    Key("PgUp PgDn", "a page up / down", PAGES),
    Key("g G  Home End", "top / bottom", PAGES),
    Key("o", "show what context edits replaced or hid (the context page)", frozenset({"page"}),
        ("o", "originals")),
    Key("y", "yes (the fork question)", frozenset({"dialog"}), ("y", "yes")),
    Key("n  Esc q", "no (the fork question)", frozenset({"dialog"}), ("n/Esc", "no")),
    Key("?", "this help", PAGES, ("?", "help")),
    Key("Esc q", "back; on the first screen q quits", PAGES, ("q", "back")),
    Key("Ctrl-C", "quit at once (exit status 130)", frozenset({"all"})),
)


#: Where a key does something else on one screen, its bar says that: q quits the sessions screen
#: (browse without a SESSION starts there), and j k scroll a text page (it has no cursor).
_BAR_ON_SCREEN = {("sessions", ("q", "back")): ("q", "quit"), ("page", ("j/k", "move")): ("j/k", "scroll")}


def bar_keys(screen: str) -> list[tuple[str, str]]:
    """The key bar of ``screen``: the table's short forms, in the table's order."""
    bar = [k.bar for k in KEYS if k.bar is not None and screen in k.screens]
    return [_BAR_ON_SCREEN.get((screen, b), b) for b in bar]


def key_bar(keys: list[tuple[str, str]], width: int) -> Text:
    """``key what`` pairs on one row of ``width`` cells: the first pair and the last two (help, back
    or quit) always; as many of the others, in their order, as fit, ``…`` for those left out."""
    def pair(k: str, what: str) -> str:
        return f"{k} {what}"

    head, middle, tail = (keys[:1], keys[1:-2], keys[-2:]) if len(keys) > 3 else ([], [], keys)
    fixed = sum(len(pair(*p)) + 2 for p in (*head, *tail)) + 1
    kept: list = []
    room = width - fixed
    for p in middle:
        need = len(pair(*p)) + 2
        if need > room - (3 if len(kept) + 1 < len(middle) else 0):
            break
        kept.append(p)
        room -= need
    shown = [*head, *kept, *tail]
    t = Text(" ", "dim", no_wrap=True, overflow="ellipsis")
    for i, (k, what) in enumerate(shown):
        if i:
            t.append("  ")
        if i == len(head) + len(kept) and len(kept) < len(middle):
            t.append("\u2026  ", "dim")
        t.append(k, "bold")
        t.append(f" {what}", "dim")
    t.truncate(width, overflow="ellipsis")
    return t


def _session_columns(id_width: int, all_projects: bool, width: int) -> tuple[int, int]:
    """The widths of the name and the cwd columns of the sessions screen (the rest is fixed)."""
    room = max(10, width - (id_width + 2) - 18 - 6)
    if not all_projects:
        return room, 0
    cwd = max(10, room * 2 // 5)
    return max(8, room - cwd - 2), cwd


def sessions_header(id_width: int, all_projects: bool, width: int) -> Text:
    name, cwd = _session_columns(id_width, all_projects, width)
    t = Text(f"{'ID':<{id_width}}  {'LAST ACTIVE':<16}  {'MSGS':>4}  {'NAME / FIRST MESSAGE':<{name}}", "bold dim",
             no_wrap=True)
    if all_projects:
        t.append(f"  {'CWD'}")
    return t


def session_row(s: Any, info: dict, id_width: int, all_projects: bool, width: int) -> Text:
    """A session as ``ls --long`` shows it (``info``: its details), in columns: the id as long as
    tells the listed sessions apart, last activity, messages, name or first message, cwd."""
    from pisess.cli.views.text import tilde

    name_w, cwd_w = _session_columns(id_width, all_projects, width)
    t = Text(no_wrap=True)
    t.append(f"{escape_controls(str(s.id)[:id_width]):<{id_width}}  ", "bold")
    last = info.get("lastActivity") or s.created_at
    t.append(f"{d.local_time(last)[:16] if last else '-':<16}  ", "dim")
    if "error" in info:
        t.append(f"{'-':>4}  ")
        t.append(one_line(escape_controls(str(info["error"].get("message", ""))), name_w), "red")
    else:
        t.append(f"{info.get('messageCount', 0):>4}  ", "dim")
        name = info.get("name")
        shown = one_line(escape_controls(str(name or info.get("firstMessage") or "(no messages)")), name_w)
        t.append(f"{shown:<{name_w}}", "bold" if name else "")
    if all_projects:
        cwd = escape_controls(tilde(str(s.cwd)))
        if len(cwd) > cwd_w:  # (the end of a path is the project's own name)
            cwd = "\u2026" + cwd[len(cwd) - cwd_w + 1:]
        t.append(f"  {cwd}", "dim")
    return t


def help_view() -> list:
    """The keys as a table: keys, what, where (each column wraps inside itself at any width)."""
    from rich.table import Table

    table = Table.grid(padding=(0, 2), pad_edge=True, expand=False)
    table.add_column(no_wrap=True, style="bold")
    table.add_column(ratio=1)
    table.add_column(style="dim", max_width=18)
    order = ("session", "sessions", "hits", "page", "dialog", "all")
    for k in KEYS:
        where = "every screen" if k.screens == PAGES else ", ".join(x for x in order if x in k.screens)
        table.add_row(k.keys, k.what, where)
    return [Text("pisess browse: keys", "bold"), Text(""), table, Text(""),
            Text("Nothing here writes to an existing session file: fork and export create new files.", "dim")]


def duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(s), 60)
    if m < 60:
        return f"{m}m {s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m"


def detail_view(session: Any, det: Any, *, width: int = 60, max_lines: int = 40) -> list:
    """The selected entry in full: what and when, then its message (as ``pisess context`` draws
    one) or summary, the edits that change it, or its JSON."""
    from pisess.cli.views.context import message_block
    from pisess.core.model.messages import Limits, message_view
    from pisess.core.model.text import json_text, usage_text

    e = det.entry
    head = Text()
    head.append(escape_controls(det.word), d.STYLE.get(det.style, "") or "bold")
    head.append(f" {_sid(det.entry_id, session.id_width)}", "bold")
    if det.time_ms is not None:
        head.append(" \u00b7 " + d.local_time(get(e, "timestamp")), "dim")
    if det.since_previous_ms is not None:
        head.append(f" (+{duration(det.since_previous_ms)})", "dim")
    if det.line:
        head.append(f" \u00b7 line {det.line}", "dim")
    out: list = [head]
    facts = []
    if det.label is not None:
        facts.append(f"label [{escape_controls(str(det.label))}]")
    if det.children > 1:
        facts.append(f"branch point: {det.children} children")
    if det.message is not None and get(det.message, "role") == "assistant":
        u = usage_text(det.message)
        if u:
            facts.append(u)
    if facts:
        out.append(Text(" \u00b7 ".join(facts), "dim"))
    for edit in det.edits:
        rep = get(edit, "replacement")
        what = "hides it" if rep is None else "replaces its content"
        out.append(Text(f"\u270e context edit {_sid(get(edit, 'id'), session.id_width)} {what}", "yellow"))
        if isinstance(rep, dict):
            out.append(Text(one_line(json_text(rep.get("content"), indent=False), width * 3), "yellow"))
    out.append(Text(""))
    limits = Limits.terminal(max_lines, False)
    if det.message is not None:
        _, *body = message_block(message_view(det.message, e, limits), thinking=True, id_width=session.id_width,
                                 in_app=True)
        out.extend(body)
    elif isinstance(get(e, "summary"), str):
        out.append(Text(escape_controls(get(e, "summary"), keep_newlines=True)))
    else:
        shown = {k: v for k, v in e.items() if k not in ("type", "id", "parentId", "timestamp")} \
            if isinstance(e, dict) else e
        out.append(Text(escape_controls(json_text(shown), keep_newlines=True), "dim"))
    return out


def trace_view(session: Any, turns: list, *, width: int = 100) -> list:
    """Turns, then their steps: each step's time, tool calls ✓ ✗ …, tokens and cost."""
    out: list = []
    for t in turns:
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(f"turn {t.index}" if t.index else "before the first prompt", "bold")
        if t.prompt:
            head.append(f" \u00b7 \u201c{escape_controls(one_line(t.prompt, 50))}\u201d")
        if t.time_ms is not None and t.entry_id is not None:
            head.append(f" \u00b7 {_sid(t.entry_id, session.id_width)}", "dim")
        bits = [plural(len(t.steps), "step"), duration(t.duration_ms), f"{t.tokens:,} tokens", f"${t.cost:.4f}"]
        head.append(" \u00b7 " + " \u00b7 ".join(b for b in bits if b), "dim")
        if t.errors:
            head.append(f" \u00b7 {plural(t.errors, 'error')}", "bold red")
        out.append(head)
        for i, st in enumerate(t.steps):
            last = i == len(t.steps) - 1
            row = Text(no_wrap=True, overflow="ellipsis")
            row.append("  \u2514 " if last else "  \u251c ", "dim")
            row.append(f"{escape_controls(st.word):<10} ", "bold red" if st.error else "")
            row.append(f"{duration(st.duration_ms):>8}  ", "dim")
            if st.error:
                row.append(f"[{st.error}] ", "bold red")
            calls = [f"\u2192 {escape_controls(c.name)} {'✓' if c.ok else '✗' if c.ok is False else '…'}"
                     for c in st.calls]
            words = " ".join(calls) if calls else escape_controls(one_line(st.text, 60))
            row.append(words, "red" if st.failed_calls else "")
            if st.tokens_in or st.tokens_out:
                row.append(f"  {st.tokens_in:,} in / {st.tokens_out:,} out", "dim")
            if st.cost:
                row.append(f"  ${st.cost:.4f}", "dim")
            out.append(row)
            for c in st.calls:
                sub = Text(no_wrap=True, overflow="ellipsis")
                sub.append("  \u2502    " if not last else "       ", "dim")
                mark = "\u2713" if c.ok else "\u2717" if c.ok is False else "\u2026 no result"
                sub.append(f"{mark} ", "green" if c.ok else "bold red" if c.ok is False else "yellow")
                sub.append(escape_controls(one_line(c.arguments, 50)), "dim")
                if c.result:
                    sub.append(" \u2192 " + escape_controls(one_line(c.result, 60)), "red" if c.ok is False else "dim")
                out.append(sub)
    if not turns:
        out.append(Text("(no turns on this path)", "dim"))
    return out


def session_title(session: Any, view: Any) -> str:
    from pisess.core.versions import short

    name = session.session_name()
    sid = _sid((session.header or {}).get("id"))
    bits = [f"pisess \u00b7 {sid}"]
    if isinstance(name, str) and name:
        bits[0] += f" {escape_controls(one_line(name, 40))}"
    bits += [plural(view.entry_count, "entry", "entries"), plural(view.branch_points, "branch point"),
             short(session.pi_version), f"{session.reader} reader"]
    return " \u00b7 ".join(bits)
