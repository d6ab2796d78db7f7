"""Human views.  The only module that imports Rich.

Every piece of session text enters Rich as a ``Text`` built from an escaped string, never as
markup, so ``[bold]`` in a message prints literally and escape sequences print as ``\\x1b``.
Colour adds emphasis but never carries meaning alone: markers (● ○ ◐ ◀ ◆ ⚠) say it in NO_COLOR too.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from pisess.cli import describe as d
from pisess.cli.text import NO_SESSIONS_HINT, escape_controls, human_size, ls_heading, one_line, plural, tilde
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


def show(renderables: Iterable[Any], color: str = "auto", pager: bool = False) -> None:
    console = make_console(color)
    items = list(renderables)
    if pager and console.is_terminal and sys.stdin.isatty():
        with console.capture() as cap:
            console.print(Group(*items))
        out = cap.get()
        if out.count("\n") > console.size.height:
            os.environ.setdefault("LESS", "-FRX")
            with console.pager(styles=not console.no_color):
                console.print(Text.from_ansi(out) if not console.no_color else Text(out), end="")
            return
        console.file.write(out)
        return
    # Rows are printed a thousand at a time: per-print set-up (size, options, buffer flush) cost as
    # much as the rows, and one print of everything holds every segment of the output at once.
    # (A Group also keeps each row's no_wrap: print(text) joins its arguments into a new Text that
    # wraps, so an over-long tree row used to spill onto a line of its own.)
    for at in range(0, len(items), 1000):
        console.print(Group(*items[at:at + 1000]))


def T(s: str, style: str = "") -> Text:  # noqa: N802 - reads as a constructor
    return Text(s, style=style)


def label_tag(label: Any) -> str:
    text = one_line(d.s(label), 30)
    return f"[{text}]" if text.strip() else f"[{d.s(label)!r}]"


def safe(s: Any, style: str = "") -> Text:
    """Session text as a Text: escaped, never markup."""
    return Text(escape_controls(d.s(s), keep_newlines=True), style=style)


def _width() -> int:
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isdigit() and int(cols) > 0 else shutil.get_terminal_size((100, 24)).columns


def _sid(v: Any, n: int = 8) -> str:
    return escape_controls(d.s(v))[:n] if v not in (None, UNDEF) else "-"


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


def tree_view(view, show_time: bool = False) -> list:
    s = view.session
    width = _width()
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
    whole = s.materialize([r.entry for r in view.rows if r.kind == "entry"])
    by_light = {id(r.entry): w for r, w in zip((r for r in view.rows if r.kind == "entry"), whole)}
    for r in view.rows:
        out.append(_tree_row(s, r, width, show_time, by_light.get(id(r.entry), r.entry)))
    if not view.rows:
        out.append(T("(no entries)", "dim"))
    legend = (f"{ACTIVE} active path  {OTHER} other branches  {COMPACTED} behind the checkpoint  "
              f"{CHECKPOINT_MARK} checkpoint")
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


def path_view(ctx, show_time: bool = False) -> list:
    s = ctx.session
    width = _width()
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
    info.append(f"{plural(len(msgs), 'provider message' if llm else 'message')} "
                f"\u00b7 ~{_approx_tokens(msgs):,} tokens")
    for note in s.notes:
        info.append("\nnote: " + escape_controls(note), "yellow")
    title = (f" context \u00b7 {_sid((s.header or {}).get('id'))} \u00b7 leaf "
             f"{_sid(ctx.leaf_id) if ctx.leaf_id is not None else '(none)'} \u00b7 {s.reader} reader ")
    out: list = [Panel(info, title=Text(title, "bold"), title_align="left", expand=True)]
    sources = ctx.message_sources
    from pisess.core.context import convert_to_llm

    for m, src in zip(ctx.messages, sources):
        shown = m
        if llm:
            conv = convert_to_llm([m])
            if not conv:
                continue
            shown = conv[0]
        out.extend(_message_block(shown, src, thinking=thinking, full=full, max_lines=max_lines,
                                  converted_from=None if not llm or shown is m else d.message_kind(m)))
    if not msgs:
        out.append(T("(the context is empty)", "dim"))
    return out


MAX_BLOCK_CHARS = 200_000  # even with --full: wrapping one huge line in a terminal view is quadratic


def _clip(text: str, max_lines: int, full: bool) -> tuple[str, int]:
    """At most ``max_lines`` lines (all with ``full``) and never more than ``MAX_BLOCK_CHARS``
    (``--json`` has everything); returns the text and how many lines were cut."""
    limit = MAX_BLOCK_CHARS if full else min(MAX_BLOCK_CHARS, max(2_000, max_lines * 400))
    lines = text.split("\n", max_lines if not full else -1)
    if not full and len(lines) > max_lines:
        kept, more = "\n".join(lines[:max_lines]), text.count("\n") - max_lines + 1
    else:
        kept, more = text, 0
    if len(kept) > limit:
        cut = kept[:limit]
        more = max(more, 1)
        return cut + f" \u2026 [{len(text) - limit:,} more characters: pisess context --json]", more
    return kept, more


def _message_block(m: Any, src: Any, *, thinking: bool, full: bool, max_lines: int, converted_from: str | None) -> list:
    kind = d.message_kind(m)
    title = Text()
    title.append(kind if not converted_from else f"{kind} (from {converted_from})", KIND_STYLE.get(kind, "bold"))
    retained = get(src, "type") == "compaction" and isinstance(m, dict) and m.get("role") != "compactionSummary"
    src_label = f" ({'retained in ' if retained else ''}{_sid(get(src, 'id'))})"
    title.append(src_label, "dim")
    right = ""
    body: list = []
    if not isinstance(m, dict):
        return [Rule(title, align="left", style="dim"), safe(d.s(m))]
    ts = m.get("timestamp")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        title.append(" \u00b7 " + d.local_time(ts, with_date=False), "dim")
    role = m.get("role")
    content = m.get("content")
    if role == "assistant":
        mdl = f"{d.s(m.get('provider'))}/{d.s(m.get('model'))}" if m.get("model") else ""
        right = " \u00b7 ".join(x for x in (escape_controls(mdl), d.usage_text(m)) if x)
        stop = m.get("stopReason")
        if stop in ("error", "aborted"):
            body.append(safe(f"[{stop}] {d.s(m.get('errorMessage'))}".rstrip(), "bold red"))
        for b in content if isinstance(content, list) else [content]:
            if isinstance(b, dict) and b.get("type") == "thinking":
                txt = d.s(b.get("thinking"))
                if thinking:
                    body.append(safe(txt, "dim italic"))
                else:
                    body.append(T(f"\u25b8 thinking ({len(txt):,} chars, --thinking to show)", "dim"))
            elif isinstance(b, dict) and b.get("type") == "toolCall":
                import orjson

                try:
                    args = orjson.dumps(b.get("arguments"), option=orjson.OPT_INDENT_2 if full else 0).decode()
                except TypeError:
                    args = d.s(b.get("arguments"))
                args, more = _clip(args, max_lines, full)
                body.append(safe(f"\u2192 {d.s(b.get('name'))}({args})"
                                 + (f" \u2026 {more} more lines" if more else ""), "yellow"))
            elif isinstance(b, dict) and b.get("type") == "text":
                body.append(safe(d.s(b.get("text"))))
            elif isinstance(b, str):
                body.append(safe(b))
    elif role == "toolResult":
        text = d.content_text(content)
        n = text.count("\n") + 1 if text else 0
        title = Text()
        title.append("tool result", "yellow")
        title.append(f" \u00b7 {escape_controls(d.s(m.get('toolName')))}{src_label}", "dim")
        right = ("error \u00b7 " if m.get("isError") else "") + f"{n} line{'s' if n != 1 else ''}"
        clipped, more = _clip(text, max_lines, full)
        body.append(safe(clipped, "red" if m.get("isError") else ""))
        if more:
            body.append(T(f"\u2026 {more} more lines (--full) \u2026", "dim"))
    elif role == "bashExecution":
        body.append(safe(f"$ {d.s(m.get('command'))}", "bold"))
        clipped, more = _clip(d.s(m.get("output")), max_lines, full)
        if clipped:
            body.append(safe(clipped))
        if more:
            body.append(T(f"\u2026 {more} more lines (--full) \u2026", "dim"))
        code = m.get("exitCode")
        right = "cancelled" if m.get("cancelled") else (f"exit {d.s(code)}" if code not in (None, UNDEF) else "")
        if m.get("excludeFromContext"):
            right += " \u00b7 not sent to the model"
    elif role in ("compactionSummary", "branchSummary"):
        title = Text()
        title.append("compaction summary" if role == "compactionSummary" else "branch summary", "magenta")
        title.append(f" ({_sid(get(src, 'id'))})", "dim")
        if role == "compactionSummary" and isinstance(m.get("tokensBefore"), (int, float)):
            right = f"{m['tokensBefore']:,.0f} tokens before"
        clipped, more = _clip(d.s(m.get("summary")), max_lines * 2, full)
        body.append(safe(clipped))
        if more:
            body.append(T(f"\u2026 {more} more lines (--full) \u2026", "dim"))
    else:
        if role == "custom":
            title.append(f" [{escape_controls(d.s(m.get('customType')))}]", "cyan")
            if m.get("display") is False:
                right = "hidden in pi's UI"
        for b in content if isinstance(content, list) else [content]:
            if isinstance(b, dict) and b.get("type") == "image":
                body.append(T(d.image_ref(b), "cyan"))
            elif isinstance(b, dict) and b.get("type") == "text":
                clipped, more = _clip(d.s(b.get("text")), max_lines * 4, full)
                body.append(safe(clipped))
                if more:
                    body.append(T(f"\u2026 {more} more lines (--full) \u2026", "dim"))
            elif isinstance(b, str):
                clipped, more = _clip(b, max_lines * 4, full)
                body.append(safe(clipped))
                if more:
                    body.append(T(f"\u2026 {more} more lines (--full) \u2026", "dim"))
            elif b not in (None, UNDEF):
                body.append(safe(d.s(b)))
    if right:
        title.append(" \u00b7 " + right, "dim")
    return [Rule(title, align="left", style="dim"), *body]


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


def ls_view(listing, where, *, all_projects: bool, details: dict | None, color: str) -> None:
    console = make_console(color)
    now = _now_ms()
    n = len(listing.sessions)
    head = Text()
    for piece, style in ls_heading(listing, where, all_projects):
        head.append(piece, style)
    console.print(head)
    if not n:
        console.print(T(NO_SESSIONS_HINT, "dim"))
        return
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
    while sum(w + 2 for _, _, w, _, _ in spec) > console.width and any(p for *_, p in spec):
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
    console.print(table)


# --- validate --------------------------------------------------------------------------------

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def _rel(p: str) -> str:
    try:
        r = os.path.relpath(p)
        return r if not r.startswith("../../..") else p
    except ValueError:
        return p


def validate_summary_counts(reports: list, strict: bool) -> dict:
    return {
        "files": len(reports),
        "errors": sum(r.count("error") for r in reports) + (sum(r.count("warning") for r in reports) if strict else 0),
        "warnings": 0 if strict else sum(r.count("warning") for r in reports),
        "infos": sum(r.count("info") for r in reports),
        "sdkRefuses": sum(1 for r in reports if not r.pi["harness"]["opens"]),
        "piCommandLosesData": sum(1 for r in reports if not r.pi["cli"]["opens"] or r.pi["cli"].get("droppedLines")),
        "filesWithErrors": sum(1 for r in reports if not r.ok(strict)),
    }


def validate_text(reports: list, unreadable: list, strict: bool, *, quiet: bool, color: str) -> None:
    console = make_console(color)
    for err in unreadable:
        console.print(safe(f"{_rel(err.path or '?')}: error {err.code}: {err.message}", "bold red"))
    for r in reports:
        if quiet:
            continue
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            t = Text()
            t.append(escape_controls(_rel(r.path)) + (f":{f.line}" if f.line else "") + ": ", "bold")
            t.append(f"{sev} {f.code}", SEV_STYLE[sev])
            t.append(": " + escape_controls(f.message))
            console.print(t, soft_wrap=True)
    c = validate_summary_counts(reports, strict)
    line = Text()
    line.append(f"{c['files']} file{'s' if c['files'] != 1 else ''} checked \u00b7 ")
    line.append(f"{c['errors']} error{'s' if c['errors'] != 1 else ''}", "bold red" if c["errors"] else "green")
    line.append(f" \u00b7 {c['warnings']} warning{'s' if c['warnings'] != 1 else ''}",
                "yellow" if c["warnings"] else "")
    if c["infos"]:
        line.append(f" \u00b7 {c['infos']} note{'s' if c['infos'] != 1 else ''}", "dim")
    line.append(f" \u00b7 {c['sdkRefuses']} file{'s' if c['sdkRefuses'] != 1 else ''} pi's SDK would refuse"
                f" \u00b7 {c['piCommandLosesData']} file{'s' if c['piCommandLosesData'] != 1 else ''} the pi command "
                "would lose data from")
    if unreadable:
        line.append(f" \u00b7 {len(unreadable)} unreadable", "bold red")
    console.print(line, soft_wrap=True)


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return escape_controls(s)


def validate_github(reports: list, unreadable: list, strict: bool) -> None:
    out = sys.stdout
    for err in unreadable:
        out.write(f"::error file={_gh_escape(err.path or '?', True)},title={err.code}::{_gh_escape(err.message)}\n")
    for r in reports:
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            cmd = {"error": "error", "warning": "warning", "info": "notice"}[sev]
            loc = f"file={_gh_escape(r.path, True)}" + (f",line={f.line}" if f.line else "")
            out.write(f"::{cmd} {loc},title={_gh_escape(f.code, True)}::{_gh_escape(f.message)}\n")
    c = validate_summary_counts(reports, strict)
    out.write(f"{c['files']} files checked, {c['errors']} errors, {c['warnings']} warnings\n")


# --- fork ------------------------------------------------------------------------------------


def fork_view(plan, path: str, *, dry_run: bool, color: str) -> None:
    err = make_console(color, stderr=True)
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
    err.print(msg, soft_wrap=True)
    if dry_run:
        for e in plan.entries[-5:]:
            err.print(Text(f"  {_sid(get(e, 'id'))}  {d.entry_kind(e):<10} " + one_line(d.entry_preview(e), 60), "dim"))
        err.print(Text(f"\u2192 {escape_controls(path)} (not written: --dry-run)", "dim"), soft_wrap=True)
        return
    sys.stdout.write(escape_controls(path) + "\n")
    err.print(Text(f"  resume it with: pi --session {plan.header['id'][:8]}", "dim"))


# --- demo ------------------------------------------------------------------------------------


def demo(color: str = "auto") -> None:
    """Copy the shipped examples to a temporary root and show every view on them."""
    from importlib import resources

    from pisess.cli.common import Where
    from pisess.core.context import build_context
    from pisess.core.repo import list_sessions
    from pisess.core.session import open_session
    from pisess.core.tree import build_tree
    from pisess.core.validate import validate_file

    console = make_console(color)
    src = resources.files("pisess") / "examples" / "sessions"
    with tempfile.TemporaryDirectory(prefix="pisess-demo-") as tmp:
        root = os.path.join(tmp, "sessions")
        with resources.as_file(src) as src_dir:
            shutil.copytree(src_dir, root)
        projects = sorted(p for p in os.listdir(root) if p.startswith("--"))

        def step(cmd: str) -> None:
            console.print()
            console.print(Rule(Text("$ " + cmd, "bold"), align="left", style="cyan"))

        step(f"pisess ls --all --long --sessions-dir {root}")
        listing = list_sessions(root, None)
        from pisess.core.summary import summarize_file

        ls_view(listing, Where(root, tmp), all_projects=True,
                details={s.path: summarize_file(s.path) for s in listing.sessions}, color=color)
        for info in listing.sessions:
            s = open_session(info.path, "auto")
            step(f"pisess tree {info.id[:8]}")
            for r in tree_view(build_tree(s)):
                console.print(r)
        first = open_session(listing.sessions[-1].path, "auto")
        step(f"pisess context {listing.sessions[-1].id[:8]}")
        for r in context_view(build_context(first), max_lines=4):
            console.print(r)
        step(f"pisess path {listing.sessions[0].id[:8]}")
        for r in path_view(build_context(open_session(listing.sessions[0].path, "auto"))):
            console.print(r)
        step(f"pisess validate {root}")
        reports = [validate_file(p) for p in sorted(str(x) for x in __import__("pathlib").Path(root).rglob("*.jsonl"))]
        validate_text(reports, [], False, quiet=False, color=color)
        console.print()
        console.print(Text(f"(the example sessions were copied to a temporary root, now removed; projects: "
                           f"{', '.join(projects)})", "dim"))
