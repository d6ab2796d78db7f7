"""Human views (with ``render_stats`` and ``render_share``): each returns what to print, and
``pisess.cli.output`` prints it.  Only these modules and the printer import Rich.

Every piece of session text enters Rich as a ``Text`` built from an escaped string, never as
markup, so ``[bold]`` in a message prints literally and escape sequences print as ``\\x1b``.
Colour adds emphasis but never carries meaning alone: markers (● ○ ◐ ◀ ◆ ⚠) say it in NO_COLOR too.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from pisess.cli import describe as d
from pisess.cli.text import NO_SESSIONS_HINT, escape_controls, human_size, ls_heading, one_line, plural, tilde
from pisess.cli.text import short_id as _sid
from pisess.core import js
from pisess.core.js import UNDEF, get

ACTIVE, OTHER, COMPACTED = "\u25cf", "\u25cb", "\u25d0"
LEAF_MARK, CHECKPOINT_MARK, WARN = "\u25c0 leaf", "\u25c6", "\u26a0"
KIND_STYLE = {
    "user": "bold cyan", "assistant": "green", "tool": "yellow", "bash": "yellow", "compaction": "magenta",
    "branch sum": "magenta", "label": "blue", "name": "blue", "leaf": "blue", "model": "dim", "thinking": "dim",
    "tools": "dim", "ext state": "dim", "ext msg": "cyan", "custom": "cyan",
}


# --- console ---------------------------------------------------------------------------------


def make_console(color: str = "auto", stderr: bool = False) -> Console:
    """Colour decided at call time: --color, then NO_COLOR, then whether the stream is a terminal."""
    from pisess.cli.common import check_color

    color = check_color(color)
    no_color = color == "never" or (color == "auto" and bool(os.environ.get("NO_COLOR")))
    width = None
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        width = int(cols)
    return Console(
        file=sys.stderr if stderr else sys.stdout,
        force_terminal=True if color == "always" else None,
        no_color=no_color,
        color_system=None if no_color else "auto",
        markup=False, emoji=False, highlight=False, width=width, soft_wrap=False,
    )


def T(s: str, style: str = "") -> Text:  # noqa: N802 - reads as a constructor
    return Text(s, style=style)


def label_tag(label: Any) -> str:
    text = one_line(d.s(label), 30)
    return f"[{text}]" if text.strip() else f"[{d.s(label)!r}]"


def safe(s: Any, style: str = "") -> Text:
    """Session text as a Text: escaped, never markup."""
    return Text(escape_controls(d.s(s), keep_newlines=True), style=style)


def _session_title(session) -> str:
    h = session.header or {}
    name = None
    try:
        name = session.session_name()
    except Exception:  # a name pi cannot read: show none
        name = None
    parts = [_sid(h.get("id")) if h else "(no header)"]
    if name:
        parts.append(one_line(name, 50))
    return " \u00b7 ".join(parts)


# --- tree ------------------------------------------------------------------------------------


def tree_view(view, entries: list | None = None, *, width: int = 100, show_time: bool = False) -> list:
    """The tree's rows.  ``entries``: the whole entries of the view's entry rows, in order (the
    command reads them back from a compact index); without them the rows' own entries are shown."""
    s = view.session
    head = Text()
    head.append(_session_title(s), "bold")
    head.append(f" \u00b7 {plural(view.entry_count, 'entry', 'entries')} \u00b7 "
                f"{plural(view.branch_points, 'branch point')}")
    if view.roots > 1:
        head.append(f" \u00b7 {view.roots} roots")
    leaf = view.leaf_id
    head.append(f" \u00b7 leaf {_sid(leaf) if leaf not in (None, UNDEF) else '(none)'}")
    head.append(f" ({s.reader} reader)", "dim")
    out: list = [head]
    if view.leaf_error:
        out.append(safe(f"{WARN} the leaf cannot be resolved: {view.leaf_error}", "bold red"))
    by_light = {id(r.entry): w for r, w in zip((r for r in view.rows if r.kind == "entry"), entries)} \
        if entries is not None else {}
    for r in view.rows:
        out.append(_tree_row(s, r, width, show_time, by_light.get(id(r.entry), r.entry)))
    if not view.rows:
        out.append(T("(no entries)", "dim"))
    legend = f"{ACTIVE} active path  {OTHER} other branches  {COMPACTED} behind the checkpoint  {CHECKPOINT_MARK} checkpoint"
    out.append(T(legend, "dim"))
    return out


def _tree_row(session, r, width: int, show_time: bool, whole: Any = None) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    guides = r.guides
    deepest = max(8, width // 3) // 2 * 2  # guides come in 2-column levels
    if len(guides) > deepest:
        # hundreds of branch points deep: the outer levels would fill the row (and cost a
        # measurement of every column of it); "⋯" stands for them
        guides = "\u22ef " + guides[len(guides) - deepest + 2:]
    t.append(guides + r.connector, "dim")
    if r.kind == "fold":
        t.append(f"\u2506 \u2026 {r.count:,} entr{'ies' if r.count != 1 else 'y'} \u2026", "dim")
        return t
    e = whole if whole is not None else r.entry
    compacted = "compacted" in r.flags
    mark = COMPACTED if (r.active and compacted) else (ACTIVE if r.active else OTHER)
    base = "" if r.active and not compacted else "dim"
    t.append(mark + " ", "bold" if r.active and not compacted else "dim")
    t.append(_sid(get(e, "id")), "bold" if r.active else "dim")
    t.append("  ")
    if show_time:
        t.append(d.local_time(get(e, "timestamp")) + "  ", "dim")
    kind = d.entry_kind(e)
    t.append(f"{kind:<10} ", KIND_STYLE.get(kind, "") if not base else "dim")
    tail = Text()
    label = session.label_of(get(e, "id"))
    if label is not None:
        tail.append("  " + label_tag(label), "bold blue")
    if "checkpoint" in r.flags:
        tail.append(f"  {CHECKPOINT_MARK} checkpoint", "bold magenta")
    if "dangling" in r.flags:
        tail.append(f"  {WARN} parent {_sid(get(e, 'parentId'))} missing", "bold red")
    if "cycle" in r.flags:
        tail.append(f"  {WARN} on a parentId cycle", "bold red")
    if "self_parent" in r.flags:
        tail.append(f"  {WARN} its own parent", "bold red")
    if "leaf" in r.flags:
        tail.append(f"  {LEAF_MARK}", "bold reverse")
    room = max(10, width - t.cell_len - tail.cell_len - 1)
    t.append(one_line(d.entry_preview(e), room), base)
    t.append_text(tail)
    return t


# --- path ------------------------------------------------------------------------------------


def path_view(ctx, *, width: int = 100, show_time: bool = False) -> list:
    s = ctx.session
    head = Text()
    head.append(_session_title(s), "bold")
    head.append(f" \u00b7 path to leaf {_sid(ctx.leaf_id) if ctx.leaf_id is not None else '(none)'}"
                f" \u00b7 {plural(len(ctx.path), 'entry', 'entries')}")
    head.append(f" ({s.reader} reader)", "dim")
    out: list = [head]
    if ctx.path and s.reader == "harness" and js.truthy(get(ctx.path[0], "parentId")):
        first = ctx.path[0]
        why = ("compaction with retainedTail" if get(first, "type") == "compaction"
               else "the first kept entry of a compaction")
        out.append(T(f"\u2504\u2504 cut here: {why} ({_sid(get(first, 'id'))}); older entries are not read "
                     f"\u2504\u2504", "magenta"))
    in_ctx = {id(e) for e in ctx.context_entries}
    for e in ctx.path:
        t = Text(no_wrap=True, overflow="ellipsis")
        line = s.line_of(e)
        t.append(f"{line if line else '?':>6}  ", "dim")
        seen = id(e) in in_ctx
        t.append((ACTIVE if seen else COMPACTED) + " ", "bold" if seen else "dim")
        t.append(_sid(get(e, "id")) + "  ", "bold" if seen else "dim")
        if show_time:
            t.append(d.local_time(get(e, "timestamp")) + "  ", "dim")
        kind = d.entry_kind(e)
        t.append(f"{kind:<10} ", KIND_STYLE.get(kind, "") if seen else "dim")
        tail = Text()
        label = s.label_of(get(e, "id"))
        if label is not None:
            tail.append("  " + label_tag(label), "bold blue")
        if e is ctx.checkpoint:
            tail.append(f"  {CHECKPOINT_MARK} checkpoint", "bold magenta")
        if e is (ctx.path[-1] if ctx.path else None):
            tail.append(f"  {LEAF_MARK}", "bold reverse")
        room = max(10, width - t.cell_len - tail.cell_len - 1)
        t.append(one_line(d.entry_preview(e), room), "" if seen else "dim")
        t.append_text(tail)
        out.append(t)
    out.append(T(f"{ACTIVE} the model sees it  {COMPACTED} replaced by the compaction summary", "dim"))
    return out


# --- context ---------------------------------------------------------------------------------


def _approx_tokens(messages: list) -> int:
    import orjson

    total = 0
    for m in messages:
        try:
            total += len(orjson.dumps(m))
        except TypeError:
            total += len(str(m))
    return total // 4


def context_view(ctx, *, llm: bool = False, thinking: bool = False, full: bool = False, max_lines: int = 12) -> list:
    s = ctx.session
    st = ctx.state
    model = st.model
    model_text = f"{d.s(model.get('provider'))}/{d.s(model.get('modelId'))}" if isinstance(model, dict) else "(none)"
    info = Text()
    info.append("model ", "dim")
    info.append(escape_controls(model_text), "bold")
    info.append(" \u00b7 thinking ", "dim")
    info.append(escape_controls(d.s(st.thinking_level) if st.thinking_level is not UNDEF else "(unset)"), "bold")
    if s.reader == "harness":
        info.append(" \u00b7 tools ", "dim")
        tools = st.active_tool_names
        info.append(one_line(", ".join(d.s(x) for x in tools), 60) if tools is not None else "(default)", "bold")
    info.append("\n")
    if ctx.checkpoint is not None:
        cp = ctx.checkpoint
        info.append(f"checkpoint {_sid(get(cp, 'id'))}", "magenta")
        fk = get(cp, "firstKeptEntryId")
        if js.truthy(get(cp, "retainedTail")):
            info.append(" (retainedTail)", "dim")
        elif js.truthy(fk):
            info.append(f" (firstKeptEntryId {_sid(fk)})", "dim")
        info.append(" \u00b7 ")
    msgs = ctx.llm_messages if llm else ctx.messages
    info.append(f"{plural(len(msgs), 'provider message' if llm else 'message')} \u00b7 ~{_approx_tokens(msgs):,} tokens")
    for note in s.notes:
        info.append("\nnote: " + escape_controls(note), "yellow")
    title = (f" context \u00b7 {_sid((s.header or {}).get('id'))} \u00b7 leaf "
             f"{_sid(ctx.leaf_id) if ctx.leaf_id is not None else '(none)'} \u00b7 {s.reader} reader ")
    out: list = [Panel(info, title=Text(title, "bold"), title_align="left", expand=True)]
    from pisess.core.context import convert_to_llm
    from pisess.core.messages import Limits, message_view
    from pisess.core.text import role_kind

    limits = Limits.terminal(max_lines, full)
    for m, src in zip(ctx.messages, ctx.message_sources):
        shown, converted_from = m, None
        if llm:
            conv = convert_to_llm([m])
            if not conv:
                continue
            shown = conv[0]
            converted_from = None if shown is m else role_kind(m)
        out.extend(message_block(message_view(shown, src, limits, converted_from=converted_from), thinking=thinking))
    if not msgs:
        out.append(T("(the context is empty)", "dim"))
    return out


def _cut(b) -> str:
    return f" \u2026 [{b.cut_chars:,} more characters: pisess context --json]" if b.cut_chars else ""


def _more(b) -> list:
    return [T(f"\u2026 {b.cut_lines} more lines (--full) \u2026", "dim")] if b.cut_lines else []


_SOURCE_WORDS = {"retained": "retained in ", "checkpoint": "compaction "}


def _heading(v) -> Text:
    """The rule above a message: what it is, where it came from, when, and its facts."""
    title = Text()
    sid = _sid(v.source_id)
    src_label = f" ({_SOURCE_WORDS.get(v.source, '')}{sid})"
    if v.role == "toolResult":
        title.append(v.heading, "yellow")
        title.append(f" \u00b7 {escape_controls(v.subject)}{src_label}", "dim")
    elif v.role in ("compactionSummary", "branchSummary"):
        title.append(v.heading, "magenta")
        title.append(f" ({sid})", "dim")
    else:
        kind = escape_controls(v.kind)
        word = kind if not v.converted_from else f"{kind} (from {escape_controls(v.converted_from)})"
        title.append(word, KIND_STYLE.get(kind, "bold"))
        title.append(src_label, "dim")
        if v.time_ms is not None:
            title.append(" \u00b7 " + d.local_time(v.time_ms, with_date=False), "dim")
        if v.role in ("custom", "hookMessage"):
            title.append(f" [{escape_controls(v.subject)}]", "cyan")
    facts = [escape_controls(f) for f in v.facts]
    if v.edit is not None:
        facts.append(f"edited by {_sid(v.edit.entry_id)}")
    if v.hidden:
        facts.append(f"hidden: {escape_controls(v.hidden)}")
    if facts:
        title.append(" \u00b7 " + " \u00b7 ".join(facts), "dim")
    return title


def message_block(v, *, thinking: bool = False) -> list:
    """A ``MessageView`` (pisess.core.messages) on a terminal: a rule, then its blocks."""
    from pisess.core.text import image_words

    body: list = []
    for b in v.blocks:
        if b.kind == "error":
            body.append(safe(f"[{b.label}] {b.text}".rstrip(), "bold red"))
        elif b.kind == "thinking":
            if b.redacted:
                body.append(T("\u25b8 thinking (redacted by the provider)", "dim"))
            elif thinking:
                body.append(safe(b.text, "dim italic"))
            else:
                body.append(T(f"\u25b8 thinking ({len(b.text):,} chars, --thinking to show)", "dim"))
        elif b.kind == "call":
            body.append(safe(f"\u2192 {b.label}({b.text}{_cut(b)})" +
                             (f" \u2026 {b.cut_lines} more lines" if b.cut_lines else ""), "yellow"))
        elif b.kind == "command":
            body.append(safe(f"$ {b.text}", "bold"))
        elif b.kind == "image":
            body.append(T(image_words(escape_controls(b.label), b.size), "cyan"))
        elif b.kind == "names":
            t = Text()
            t.append(b.label + ": ", "dim")
            names = [n[0] if isinstance(n, tuple) else n for n in b.items]
            t.append(escape_controls(", ".join(names)))
            body.append(t)
        elif b.kind == "note":
            body.append(T(b.text, "dim"))
        else:  # text, output, json
            body.append(safe(b.text + _cut(b), "red" if v.error and b.kind == "output" else ""))
            body.extend(_more(b))
    return [Rule(_heading(v), align="left", style="dim"), *body]


# --- ls --------------------------------------------------------------------------------------


def _now_ms() -> float:
    fixed = os.environ.get("PISESS_NOW")  # reproducible ages for tests and docs
    if fixed:
        ms = js.date_ms(fixed)
        if ms is not None:
            return float(ms)
    return time.time() * 1000


def _session_id_from_path(p: Any) -> str:
    if not isinstance(p, str):
        return "-"
    base = os.path.basename(p)
    if base.endswith(".jsonl"):
        base = base[:-6]
    return escape_controls(base.split("_", 1)[1] if "_" in base else base)[:8]


def ls_view(listing, where, *, all_projects: bool, details: dict | None, width: int = 100,
            now_ms: float | None = None) -> list:
    now = _now_ms() if now_ms is None else now_ms
    n = len(listing.sessions)
    head = Text()
    for piece, style in ls_heading(listing, where, all_projects):
        head.append(piece, style)
    if not n:
        return [head, T(NO_SESSIONS_HINT, "dim")]
    # ids made within the same minute share 8 characters: show as many as tell them apart
    ids = [s.id for s in listing.sessions]
    width_id = 8
    while width_id < 36 and len({i[:width_id] for i in ids}) < len(set(ids)):
        width_id += 1

    def cells(s) -> dict:
        c = {"id": Text("  " + escape_controls(s.id[:width_id]), "bold"),
             "created": T(d.local_time(s.created_at)[:16]), "age": T(d.relative_age(s.created_at, now), "dim"),
             "size": T(human_size(s.size)),
             "forked": T(_session_id_from_path(s.parent_session_path) if s.parent_session_path else "-",
                         "" if s.parent_session_path else "dim"),
             "cwd": T(escape_controls(tilde(s.cwd)), "dim")}
        if details is not None:
            info = details.get(s.path) or {}
            if "error" in info:
                c.update(msgs=T("-"), br=T("-"), last=T("-"),
                         name=safe(f"{WARN} {info['error'].get('message', '')}", "red"))
            else:
                name, first = info.get("name"), info.get("firstMessage") or ""
                c.update(msgs=T(str(info.get("messageCount", 0))), br=T(str(info.get("branchPoints", 0))),
                         last=T(d.local_time(info["lastActivity"])[:16] if info.get("lastActivity") else "-", "dim"),
                         name=Text(one_line(name, 60), "bold") if name
                         else Text(one_line(first, 60) or "(no messages)", "dim"))
        return c

    # (key, header, width, justify, drop order: higher goes first when the terminal is narrow)
    spec = [("id", "  ID", width_id + 2, "left", 0), ("created", "CREATED", 16, "left", 0),
            ("age", "AGE", 8, "right", 3), ("size", "SIZE", 8, "right", 0)]
    if details is not None:
        spec += [("msgs", "MSGS", 4, "right", 0), ("br", "BR", 2, "right", 4), ("last", "LAST ACTIVE", 16, "left", 5),
                 ("name", "NAME / FIRST MESSAGE", 14, "left", 0)]
    spec.append(("forked", "FORKED FROM", 11, "left", 2))
    if all_projects:
        spec.append(("cwd", "CWD", 16, "left", 1))
    while sum(w + 2 for _, _, w, _, _ in spec) > width and any(p for *_, p in spec):
        worst = max(p for *_, p in spec)
        spec = [c for c in spec if c[4] != worst]
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), show_edge=False, header_style="bold dim")
    for key, header, width, justify, _ in spec:
        stretch = key in ("name", "cwd")
        table.add_column(header, no_wrap=True, justify=justify, min_width=width, overflow="ellipsis",
                         ratio=1 if stretch else None, max_width=60 if key == "name" else None)
    for s in listing.sessions:
        c = cells(s)
        table.add_row(*(c[key] for key, *_ in spec))
    return [head, table]


# --- validate --------------------------------------------------------------------------------

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def relative(p: str) -> str:
    try:
        r = os.path.relpath(p)
        return r if not r.startswith("../../..") else p
    except ValueError:
        return p


def validate_text(reports: list, unreadable: list, strict: bool, *, quiet: bool) -> list:
    """One line per finding (compiler style, unwrapped), then the summary."""
    from pisess.cli.output import soft
    from pisess.core.validate import summary_counts

    out: list = []
    for err in unreadable:
        out.append(safe(f"{relative(err.path or '?')}: error {err.code}: {err.message}", "bold red"))
    for r in reports:
        if quiet:
            continue
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            t = Text()
            t.append(escape_controls(relative(r.path)) + (f":{f.line}" if f.line else "") + ": ", "bold")
            t.append(f"{sev} {f.code}", SEV_STYLE[sev])
            t.append(": " + escape_controls(f.message))
            out.append(soft(t))
    c = summary_counts(reports, strict)
    line = Text()
    line.append(f"{c['files']} file{'s' if c['files'] != 1 else ''} checked \u00b7 ")
    line.append(f"{c['errors']} error{'s' if c['errors'] != 1 else ''}", "bold red" if c["errors"] else "green")
    line.append(f" \u00b7 {c['warnings']} warning{'s' if c['warnings'] != 1 else ''}", "yellow" if c["warnings"] else "")
    if c["infos"]:
        line.append(f" \u00b7 {c['infos']} note{'s' if c['infos'] != 1 else ''}", "dim")
    line.append(f" \u00b7 {c['sdkRefuses']} file{'s' if c['sdkRefuses'] != 1 else ''} pi's SDK would refuse"
                f" \u00b7 {c['piCommandLosesData']} file{'s' if c['piCommandLosesData'] != 1 else ''} the pi command "
                "would lose data from")
    if unreadable:
        line.append(f" \u00b7 {len(unreadable)} unreadable", "bold red")
    out.append(soft(line))
    return out


def gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return escape_controls(s)


def validate_github(reports: list, unreadable: list, strict: bool) -> list[str]:
    """GitHub workflow commands, one line each."""
    from pisess.core.validate import summary_counts

    out: list[str] = []
    for err in unreadable:
        out.append(f"::error file={gh_escape(err.path or '?', True)},title={err.code}::{gh_escape(err.message)}")
    for r in reports:
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            cmd = {"error": "error", "warning": "warning", "info": "notice"}[sev]
            loc = f"file={gh_escape(r.path, True)}" + (f",line={f.line}" if f.line else "")
            out.append(f"::{cmd} {loc},title={gh_escape(f.code, True)}::{gh_escape(f.message)}")
    c = summary_counts(reports, strict)
    out.append(f"{c['files']} files checked, {c['errors']} errors, {c['warnings']} warnings")
    return out


# --- fork ------------------------------------------------------------------------------------


def fork_view(plan, path: str, *, dry_run: bool) -> tuple[list, list, list]:
    """``(talk, out, more talk)``: what was (or would be) written on stderr, the new file's path on
    stdout (nothing with ``dry_run``), then how to resume it."""
    from pisess.cli.output import soft

    src = plan.source
    n = len(plan.entries)
    start = ""
    if plan.entries and src.reader == "harness" and js.truthy(get(plan.entries[0], "parentId")):
        start = f" (path from checkpoint {_sid(get(plan.entries[0], 'id'))})"
    verb = "Would fork" if dry_run else "Forked"
    msg = Text()
    msg.append(f"{verb} {_sid((src.header or {}).get('id'))} {plan.position} {escape_controls(plan.entry_id or '')}: ")
    if plan.new_empty_session:
        msg.append("nothing before it, so pi starts an empty session with parentSession set")
    else:
        msg.append(f"{n} entr{'ies' if n != 1 else 'y'} {'would be ' if dry_run else ''}copied{start}")
    msg.append(f" ({src.reader} reader)", "dim")
    talk: list = [soft(msg)]
    if dry_run:
        for e in plan.entries[-5:]:
            talk.append(Text(f"  {_sid(get(e, 'id'))}  {d.entry_kind(e):<10} " + one_line(d.entry_preview(e), 60), "dim"))
        talk.append(soft(Text(f"\u2192 {escape_controls(path)} (not written: --dry-run)", "dim")))
        return talk, [], []
    return talk, [escape_controls(path)], [Text(f"  resume it with: pi --session {plan.header['id'][:8]}", "dim")]
