"""Human views (with ``render_stats`` and ``render_share``): each returns what to print, and
``pisess.cli.output`` prints it.  Only these modules and the printer import Rich.

Every piece of session text enters Rich as a ``Text`` built from an escaped string, never as
markup, so ``[bold]`` in a message prints literally and escape sequences print as ``\\x1b``.
Colour adds emphasis but never carries meaning alone: markers (● ○ ◐ ◀ ◆ ⚠) say it in NO_COLOR too.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.text import NO_SESSIONS_HINT, escape_controls, files_read, human_size, ls_heading, one_line, plural, tilde
from pisess.cli.views.text import short_id as _sid
from pisess.core import js
from pisess.core.ids import unique_prefix_width
from pisess.core.js import UNDEF, get
from pisess.core.model import kinds

ACTIVE, OTHER, COMPACTED = "\u25cf", "\u25cb", "\u25d0"
LEAF_MARK, CHECKPOINT_MARK, WARN = "\u25c0 leaf", "\u25c6", "\u26a0"
EDITED_MARK, HIDDEN_MARK = "\u270e edited", "\u2205 hidden"  # targets of the context's edits (pi 1.x)
WRITERS_MARK = "\u21c4"  # two processes appended in turn (concurrent_writers)


def T(s: str, style: str = "") -> Text:  # noqa: N802 - reads as a constructor
    return Text(s, style=style)


def packed(pieces: list[str], width: int, style: str = "dim", sep: str = "  ") -> list[Text]:
    """Legend pieces on as many lines as the width needs, never broken inside a piece."""
    lines: list[str] = []
    for p in pieces:
        if lines and len(lines[-1]) + len(sep) + len(p) <= width:
            lines[-1] += sep + p
        else:
            lines.append(p)
    return [T(line, style) for line in lines]


def heading(pieces: list[tuple[str, str]], width: int) -> list[Text]:
    """A view's first line from ``(text, style)`` pieces, joined by " · "; pieces that do not fit
    the width go to a line of their own below, so a narrow terminal never cuts the reader's name."""
    lines: list[Text] = [Text()]
    for text, style in pieces:
        cur = lines[-1]
        sep = " \u00b7 " if cur.cell_len else ""
        if cur.cell_len and cur.cell_len + len(sep) + len(text) > width:
            cur = Text("  ")
            lines.append(cur)
            sep = ""
        cur.append(sep)
        cur.append(text, style)
    return lines


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
    leaf = view.leaf_id
    pieces = [(_session_title(s), "bold"), (plural(view.entry_count, 'entry', 'entries'), ""),
              (plural(view.branch_points, 'branch point'), "")]
    if view.roots > 1:
        pieces.append((f"{view.roots} roots", ""))
    pieces += [(f"leaf {_sid(leaf, s.id_width) if leaf not in (None, UNDEF) else '(none)'}", ""),
               (_reader_words(s), "dim")]
    out: list = heading(pieces, width)
    if view.leaf_error:
        out.append(safe(f"{WARN} the leaf cannot be resolved: {view.leaf_error}", "bold red"))
    by_light = {id(r.entry): w for r, w in zip((r for r in view.rows if r.kind == "entry"), entries)} \
        if entries is not None else {}
    for r in view.rows:
        if r.root and view.roots > 1:  # a new root: not a child of the row above it
            if r.root > 1:
                out.append(T(""))
            out.append(T(f"root {r.root} of {view.roots}", "bold"))
        out.append(_tree_row(s, r, width, show_time, by_light.get(id(r.entry), r.entry)))
    if not view.rows:
        out.append(T("(no entries)", "dim"))
    legend = [f"{ACTIVE} active path", f"{OTHER} other branches", f"{COMPACTED} behind the checkpoint",
              f"{CHECKPOINT_MARK} checkpoint"]
    flags = set().union(*(r.flags for r in view.rows if r.kind == "entry")) if view.rows else set()
    extra = [m for f, m in (("edited", EDITED_MARK), ("hidden", HIDDEN_MARK)) if f in flags]
    if extra:
        legend.append(" / ".join(extra) + " by a context edit")
    if any(r.kind == "entry" and get(r.entry, "type") == "usage" for r in view.rows):
        legend.append("usage: model calls outside the conversation (pi's own tree hides them)")
    if any(r.kind == "entry" and ("writer_a" in r.flags or "writer_b" in r.flags) for r in view.rows):
        legend.append(f"{WRITERS_MARK}A {WRITERS_MARK}B two writers interleaved")
    out.extend(packed(legend, width))
    return out


def id_cell(v: Any, width: int) -> str:
    """An entry id in a column ``width`` wide and the two spaces after it: ids shorter than the
    session's id width (writers other than pi: ``mc2``, ``oc-custom-1``) are padded, so the
    columns after them do not zig-zag."""
    from rich.cells import cell_len

    sid = _sid(v, width)
    return sid + " " * (max(0, width - cell_len(sid)) + 2)


def _reader_words(session) -> str:
    from pisess.core.versions import short

    return f"{session.reader} reader, {short(session.pi_version)}"


def _edit_marks(tail: Text, flags) -> None:
    if "edited" in flags:
        tail.append(f"  {EDITED_MARK}", "bold yellow")
    if "hidden" in flags:
        tail.append(f"  {HIDDEN_MARK}", "bold yellow")


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
        sides = f"{plural(r.branches, 'side branch', 'side branches')}, " if r.branches else ""
        t.append(f"\u2506 \u2026 {sides}{plural(r.count, 'entry', 'entries')} \u2026", "dim")
        return t
    e = whole if whole is not None else r.entry
    compacted = "compacted" in r.flags or "retained" in r.flags  # both behind the checkpoint
    mark = COMPACTED if (r.active and compacted) else (ACTIVE if r.active else OTHER)
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
    _edit_marks(tail, r.flags)
    if "leaf" in r.flags:
        tail.append(f"  {LEAF_MARK}", "bold reverse")
    for side, style in (("a", "bold yellow"), ("b", "bold cyan")):
        if f"writer_{side}" in r.flags:  # one of two conversations two processes interleaved
            t.append(f"{WRITERS_MARK}{side.upper()} ", style)
    room = max(10, width - t.cell_len - tail.cell_len - 1)
    t.append(one_line(d.entry_preview(e, session.id_width), room), base)
    t.append_text(tail)
    return t


# --- path ------------------------------------------------------------------------------------


def path_view(ctx, *, width: int = 100, show_time: bool = False) -> list:
    s = ctx.session
    out: list = heading([(_session_title(s), "bold"),
                         (f"path to leaf {_sid(ctx.leaf_id, s.id_width) if ctx.leaf_id is not None else '(none)'}", ""),
                         (plural(len(ctx.path), 'entry', 'entries'), ""), (_reader_words(s), "dim")], width)
    if ctx.path and s.reader == "harness" and js.truthy(get(ctx.path[0], "parentId")):
        first = ctx.path[0]
        why = ("compaction with retainedTail" if get(first, "type") == "compaction"
               else "the first kept entry of a compaction")
        out.append(T(f"\u2504\u2504 cut here: {why} ({_sid(get(first, 'id'), s.id_width)}); older entries are not read "
                     f"\u2504\u2504", "magenta"))
    in_ctx = {id(e) for e in ctx.context_entries}
    for e in ctx.path:
        t = Text(no_wrap=True, overflow="ellipsis")
        line = s.line_of(e)
        t.append(f"{line if line else '?':>6}  ", "dim")
        seen = id(e) in in_ctx
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
            _edit_marks(tail, {"hidden" if get(edit, "replacement") is None else "edited"})
        if e is (ctx.path[-1] if ctx.path else None):
            tail.append(f"  {LEAF_MARK}", "bold reverse")
        room = max(10, width - t.cell_len - tail.cell_len - 1)
        t.append(one_line(d.entry_preview(e, s.id_width), room), "" if seen else "dim")
        t.append_text(tail)
        out.append(t)
    legend = [f"{ACTIVE} the model sees it", f"{COMPACTED} replaced by the compaction summary"]
    if ctx.applied_edits:
        legend.append(f"{EDITED_MARK} / {HIDDEN_MARK} by a context edit")
    out.extend(packed(legend, width))
    return out


# --- context ---------------------------------------------------------------------------------


def context_view(ctx, *, llm: bool = False, thinking: bool = False, full: bool = False, max_lines: int = 12,
                 system: bool = False, original: bool = False) -> list:
    """The context panel and each message.  pi 1.6: the header counts the replayed prompt's
    sections and tools and the messages context edits hide; an edited message says which edit;
    ``original`` also shows what edits replaced or hid, ``system`` the whole prompt and tools."""
    from pisess.core import versions
    from pisess.core.model.context import approx_tokens

    s = ctx.session
    st = ctx.state
    model = st.model
    model_text = d.model_words(model.get("provider"), model.get("modelId")) if isinstance(model, dict) \
        else "unknown"
    info = Text()
    info.append("model ", "dim")
    info.append(escape_controls(model_text), "bold")
    info.append(" \u00b7 thinking ", "dim")
    info.append(escape_controls(d.s(st.thinking_level) if st.thinking_level is not UNDEF else "(unset)"), "bold")
    if s.reader == "harness":
        info.append(" \u00b7 tools ", "dim")
        tools = st.active_tool_names
        info.append(one_line(", ".join(d.s(x) for x in tools), 60) if tools is not None else "(default)", "bold")
    sm = _system_message(ctx)
    if sm is not None:
        sections, tools16 = sm.get("sections") or {}, sm.get("toolsAdded") or []
        info.append(" \u00b7 prompt ", "dim")
        info.append(f"{plural(len(sections), 'section')}, {plural(len(tools16), 'tool')}", "bold")
    info.append("\n")
    if ctx.checkpoint is not None:
        cp = ctx.checkpoint
        info.append(f"checkpoint {_sid(get(cp, 'id'), s.id_width)}", "magenta")
        fk = get(cp, "firstKeptEntryId")
        if js.truthy(get(cp, "retainedTail")):
            info.append(" (retainedTail)", "dim")
        elif js.strict_eq(fk, get(cp, "id")):
            info.append(" (retain-none)", "dim")
        elif js.truthy(fk):
            info.append(f" (firstKeptEntryId {_sid(fk, s.id_width)})", "dim")
        info.append(" \u00b7 ")
    msgs = ctx.llm_messages if llm else ctx.messages
    info.append(f"{plural(len(msgs), 'provider message' if llm else 'message')} \u00b7 ~{approx_tokens(msgs):,} tokens")
    edited = [e for e, n in ctx.projection if n and ctx.edit_of(e) is not None]
    if edited:
        info.append(f" \u00b7 {len(edited)} edited", "yellow")
    if ctx.omitted:
        info.append(f" \u00b7 {len(ctx.omitted)} hidden by context edits: "
                    + ", ".join(_sid(get(e, "id"), s.id_width) for e in ctx.omitted[:6])
                    + (" \u2026" if len(ctx.omitted) > 6 else ""),
                    "yellow")
    for note in s.notes:
        info.append("\nnote: " + escape_controls(note), "yellow")
    reader_words = f"{s.reader} reader, {versions.short(s.pi_version)}"
    title = (f" context \u00b7 {_sid((s.header or {}).get('id'))} \u00b7 leaf "
             f"{_sid(ctx.leaf_id, s.id_width) if ctx.leaf_id is not None else '(none)'} \u00b7 {reader_words} ")
    out: list = [Panel(info, title=Text(title, "bold"), title_align="left", expand=True)]
    if system:
        out.extend(system_prompt_view(sm))
    out.extend(_context_messages(ctx, llm=llm, thinking=thinking, limits_n=max_lines, full=full, original=original))
    if not msgs:
        out.append(T("(the context is empty)", "dim"))
    return out


def _system_message(ctx) -> dict | None:
    try:
        return ctx.system_message()
    except Exception:  # a checkpoint pi cannot replay: validate says why; the view goes on
        return None


def system_prompt_view(sm: dict | None) -> list:
    """``context --system``: the prompt pi folds from the context's system messages, then its tools."""
    from pisess.core.model.system import prompt_text

    if sm is None:
        return [T("(no system message in this context: the prompt is not in the file)", "dim")]
    sections = sm.get("sections") or {}
    tools = [t for t in sm.get("toolsAdded") or [] if isinstance(t, dict)]
    head = Text(f"system prompt \u00b7 {plural(len(sections), 'section')} \u00b7 {plural(len(tools), 'tool')}",
                "bold blue")
    out: list = [Rule(head, align="left", style="blue")]
    if sections:
        out.append(T("sections: " + ", ".join(escape_controls(d.s(k)) for k in sections), "dim"))
    out.append(safe(prompt_text(sm)))
    for t in tools:
        line = Text("\u2022 ", "dim")
        line.append(escape_controls(d.s(t.get("name"))), "bold")
        desc = t.get("description")
        if isinstance(desc, str) and desc:
            line.append(" \u2014 " + one_line(desc, 200), "dim")
        out.append(line)
    return out


def _context_messages(ctx, *, llm: bool, thinking: bool, limits_n: int, full: bool, original: bool) -> list:
    """Each message in order; with ``original`` the messages edits replaced or hid, beside them."""
    from dataclasses import replace

    from pisess.core.model.context import convert_to_llm
    from pisess.core.model.messages import Edit, Limits, message_view

    s = ctx.session
    limits = Limits.terminal(limits_n, full)
    out: list = []
    messages = iter(zip(ctx.messages, ctx.message_sources))

    def block(m, src, **marks) -> list:
        shown, converted_from = m, None
        if llm:
            conv = convert_to_llm([m], s.pi_version)
            if not conv:
                return []
            shown = conv[0]
            converted_from = None if shown is m else kinds.of_message(m).word
        view = message_view(shown, src, limits, converted_from=converted_from)
        return message_block(replace(view, **marks) if marks else view, thinking=thinking, id_width=s.id_width)

    for entry, n in ctx.projection or [(src, 1) for _, src in zip(ctx.messages, ctx.message_sources)]:
        edit = ctx.edit_of(entry)
        before = ctx.originals.get(js.key(get(entry, "id")), []) if edit is not None else []
        for _ in range(n):
            m, src = next(messages)
            out.extend(block(m, src, edit=Edit(get(edit, "id"))) if edit is not None else block(m, src))
        if original and edit is not None:
            by = _sid(get(edit, "id"), s.id_width)
            for m in before:
                out.extend(block(m, entry, hidden=f"by {by}" if n == 0 else f"original, replaced by {by}"))
    return out


def _cut(b) -> str:
    return f" \u2026 [{b.cut_chars:,} more characters: pisess context --json]" if b.cut_chars else ""


def _lines_left(b) -> int:
    """Whole lines a block leaves out (a character cut stops inside a line: ``_cut`` says how many
    characters are left, this the lines after the one it stopped in)."""
    return b.total_lines - (b.text.count("\n") + 1) if b.cut_chars else b.cut_lines


def _more(b) -> list:
    left = _lines_left(b)
    return [T(f"\u2026 {plural(left, 'more line')} (--full) \u2026", "dim")] if left > 0 else []


_SOURCE_WORDS = {"retained": "retained in ", "checkpoint": "compaction "}


def _heading(v, id_width: int = 8) -> Text:
    """The rule above a message: what it is, where it came from, when, and its facts."""
    title = Text()
    sid = _sid(v.source_id, id_width)
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
        title.append(word, d.style(kinds.of("message", v.role)) or "bold")
        title.append(src_label, "dim")
        if v.time_ms is not None:
            title.append(" \u00b7 " + d.local_time(v.time_ms, with_date=False), "dim")
        if v.role in ("custom", "hookMessage"):
            title.append(f" [{escape_controls(v.subject)}]", "cyan")
    facts = [escape_controls(f) for f in v.facts]
    # what an edit did comes first: the heading is cut at the width, and this is the part to keep
    if v.hidden:
        facts.insert(0, f"hidden: {escape_controls(v.hidden)}")
    if v.edit is not None:
        facts.insert(0, f"edited by {_sid(v.edit.entry_id, id_width)}")
    if facts:
        title.append(" \u00b7 " + " \u00b7 ".join(facts), "dim")
    return title


def message_block(v, *, thinking: bool = False, id_width: int = 8) -> list:
    """A ``MessageView`` (pisess.core.model.messages) on a terminal: a rule, then its blocks."""
    from pisess.core.model.text import image_words

    body: list = []
    for b in v.blocks:
        if b.kind == "error":
            body.append(safe(f"[{b.label}] {b.text}".rstrip(), "bold red"))
        elif b.kind == "thinking":
            if b.redacted:
                body.append(T("\u25b8 thinking (redacted by the provider)", "dim"))
            elif thinking:
                body.append(safe(b.text + _cut(b), "dim italic"))
            else:
                body.append(T(f"\u25b8 thinking ({len(b.text) + b.cut_chars:,} chars, --thinking to show)", "dim"))
        elif b.kind == "call":
            left = _lines_left(b)
            body.append(safe(f"\u2192 {b.label}({b.text}{_cut(b)})" +
                             (f" \u2026 {plural(left, 'more line')}" if left > 0 else ""), "yellow"))
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
    return [Rule(_heading(v, id_width), align="left", style="dim"), *body]


# --- ls --------------------------------------------------------------------------------------


def _now_ms() -> float:
    fixed = os.environ.get("PISESS_NOW")  # reproducible ages for tests and docs
    if fixed:
        ms = js.date_ms(fixed)
        if ms is not None:
            return float(ms)
    return time.time() * 1000


def _session_id_from_path(p: Any, width: int = 8) -> str:
    if not isinstance(p, str):
        return "-"
    base = os.path.basename(p)
    if base.endswith(".jsonl"):
        base = base[:-6]
    return escape_controls((base.split("_", 1)[1] if "_" in base else base)[:width])


def ls_view(listing, where, *, all_projects: bool, details: dict | None, width: int = 100,
            now_ms: float | None = None) -> list:
    now = _now_ms() if now_ms is None else now_ms
    n = len(listing.sessions)
    # pieces that do not fit go to a line of their own, never a line ending in " · "
    head = heading([(piece.removeprefix(" \u00b7 "), style) for piece, style in ls_heading(listing, where, all_projects)],
                   width)
    if not n:
        return [*head, T(NO_SESSIONS_HINT, "dim")]
    # ids made within the same minute share 8 characters: show as many as tell them apart
    width_id = unique_prefix_width(s.id for s in listing.sessions)
    # the column the rows are sorted by stays: pi 1.6 lists by last activity (read from each file)
    by_activity = any(s.listing == "cli" and s.activity_read not in (None, "header") for s in listing.sessions)

    def cells(s) -> dict:
        # (text, style) per column: plain strings until the row is joined (10,000 rows)
        c = {"id": ("  " + escape_controls(s.id[:width_id]), "bold"),
             "created": (d.local_time(s.created_at)[:16], ""), "age": (d.relative_age(s.created_at, now), "dim"),
             "size": (human_size(s.size), ""),
             "forked": (_session_id_from_path(s.parent_session_path, width_id) if s.parent_session_path else "-",
                        "" if s.parent_session_path else "dim"),
             "cwd": (escape_controls(tilde(s.cwd)), "dim")}
        if details is not None:
            info = details.get(s.path) or {}
            if "error" in info:
                c.update(msgs=("-", ""), br=("-", ""), last=("-", ""),
                         name=(escape_controls(f"{WARN} {info['error'].get('message', '')}"), "red"))
            else:
                name, first = info.get("name"), info.get("firstMessage") or ""
                c.update(msgs=(str(info.get("messageCount", 0)), ""), br=(str(info.get("branchPoints", 0)), ""),
                         last=(d.local_time(info["lastActivity"])[:16] if info.get("lastActivity") else "-", "dim"),
                         name=(one_line(name, 60), "bold") if name
                         else (one_line(first, 60) or "(no messages)", "dim"))
        if by_activity and s.modified is not None:  # the time the rows are sorted by, as pi read it
            c["last"] = (d.local_time(s.modified)[:16], "")
        return c

    # (key, header, width, justify, drop order: higher goes first when the terminal is narrow;
    # 0 never goes: the id, the column the rows are sorted by, the name and the project of each
    # session (CWD), the last two shortened)
    spec = [("id", "  ID", width_id + 2, "left", 0)]
    if by_activity:
        spec.append(("last", "LAST ACTIVE", 16, "left", 0))
    spec += [("created", "CREATED", 16, "left", 6 if by_activity else 0),
             ("age", "AGE", 8, "right", 3), ("size", "SIZE", 8, "right", 1)]
    if details is not None:
        spec += [("msgs", "MSGS", 4, "right", 1), ("br", "BR", 2, "right", 4)]
        if not by_activity:
            spec.append(("last", "LAST ACTIVE", 16, "left", 5))
        spec.append(("name", "NAME / FIRST MESSAGE", 20, "left", 0))
    spec.append(("forked", "FORKED FROM", 11, "left", 2))
    if all_projects:
        spec.append(("cwd", "CWD", 16, "left", 0))
    while sum(w + 2 for _, _, w, _, _ in spec) > width and any(p for *_, p in spec):
        worst = max(p for *_, p in spec)
        spec = [c for c in spec if c[4] != worst]
    rows = [cells(s) for s in listing.sessions]
    return [*head, *table_rows(spec, rows, width)]


def table_rows(spec: list, rows: list[dict], width: int) -> list[Text]:
    """Columns laid out without Rich's table renderer (10,000 ls rows in a blink): each column as
    wide as its widest cell, the flexible ones (``name``, ``cwd``) sharing what is left; a cell
    that does not fit ends in ``…`` (a path keeps its end, where the project is); no trailing
    spaces.  ``rows`` hold ``(text, style)`` per key."""
    flexible = {"name", "cwd"}
    widths = {}
    for key, header, least, _, _ in spec:
        widest = max([len(header)] + [_cells(r[key][0]) for r in rows if key in r])
        widths[key] = widest if key not in flexible else max(least, len(header))
    fixed = sum(widths[k] + 2 for k, *_ in spec if k not in flexible)
    flex = [k for k, *_ in spec if k in flexible]
    room = width - fixed - 2 * len(flex)
    for k in list(flex):
        widest = max([widths[k]] + [_cells(r[k][0]) for r in rows if k in r])
        share = max(widths[k], room // len(flex)) if room > 0 else widths[k]
        widths[k] = min(widest, share, 60 if k == "name" else widest)
        room -= widths[k]
        flex = flex[1:]
    # still too wide (a narrow terminal, long ids): the flexible columns give up their least
    # widths, each its share, so the row ends inside the width and neither is cut to nothing
    over = sum(widths[key] + 2 for key, *_ in spec) - 2 - width
    squeeze = [k for k in ("name", "cwd") if k in widths]
    for i, k in enumerate(squeeze):
        if over > 0:
            cut = min(widths[k] - 8, -(-over // (len(squeeze) - i)))
            widths[k] -= max(0, cut)
            over -= max(0, cut)
    last = len(spec) - 1
    layout = [(key, widths[key], justify, i == last) for i, (key, _, _, justify, _) in enumerate(spec)]
    out = [_row({key: (title, "bold dim") for key, title, *_ in spec}, layout)]
    out.extend(_row(r, layout) for r in rows)
    return out


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _row(cells: dict, layout: list) -> Text:
    line = Text(no_wrap=True)
    for key, width, justify, last in layout:
        text, style = cells[key]
        n = _cells(text)
        if n > width:
            if key == "cwd":  # keep the end of a path: the project's own name
                text = "\u2026" + text[len(text) - width + 1:]
            else:
                cut = Text(text)
                cut.truncate(width, overflow="ellipsis")
                text = cut.plain
            n = _cells(text)
        pad = " " * (width - n)
        if justify == "right":
            line.append(pad)
            line.append(text, style)
        else:
            line.append(text, style)
            if not last:
                line.append(pad)
        if not last:
            line.append("  ")
    return line


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
    from pisess.core.analyses.validate import summary_counts

    out: list = []
    for err in unreadable:
        out.append(soft(safe(f"{relative(err.path or '?')}: error {err.code}: {err.message}", "bold red")))
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
    errors = c["errors"] + len(unreadable)  # each unreadable input is an error line above
    line = Text()
    line.append(files_read(c["files"], "checked", 0))
    if unreadable:
        line.append(f", {len(unreadable):,} unreadable", "bold red")
    line.append(" \u00b7 ")
    line.append(plural(errors, "error"), "bold red" if errors else "green")
    line.append(f" \u00b7 {c['warnings']} warning{'s' if c['warnings'] != 1 else ''}", "yellow" if c["warnings"] else "")
    if c["infos"]:
        line.append(f" \u00b7 {c['infos']} note{'s' if c['infos'] != 1 else ''}", "dim")
    line.append(f" \u00b7 {c['sdkRefuses']} file{'s' if c['sdkRefuses'] != 1 else ''} pi's SDK would refuse"
                f" \u00b7 {c['piCommandLosesData']} file{'s' if c['piCommandLosesData'] != 1 else ''} the pi command "
                "would lose data from")
    out.append(soft(line))
    return out


def gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return escape_controls(s)


def validate_github(reports: list, unreadable: list, strict: bool) -> list[str]:
    """GitHub workflow commands, one line each."""
    from pisess.core.analyses.validate import summary_counts

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
    out.append(f"{files_read(c['files'], 'checked', len(unreadable))}, {plural(c['errors'] + len(unreadable), 'error')}, "
               f"{plural(c['warnings'], 'warning')}")
    return out


# --- fork ------------------------------------------------------------------------------------


def fork_view(plan, path: str, *, dry_run: bool, resume: str | None = None) -> tuple[list, list, list]:
    """``(talk, out, more talk)``: what was (or would be) written on stderr, the new file's path on
    stdout (nothing with ``dry_run``), then how to resume it (``resume``: a prefix of the new id
    that no other session of its directory has, ``repo.resume_prefix``)."""
    from pisess.cli.output import soft

    src = plan.source
    n = len(plan.entries)
    start = ""
    if plan.entries and src.reader == "harness" and js.truthy(get(plan.entries[0], "parentId")):
        start = f" (path from checkpoint {_sid(get(plan.entries[0], 'id'), src.id_width)})"
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
            talk.append(Text(f"  {_sid(get(e, 'id'), src.id_width)}  {d.entry_kind(e):<10} "
                             + one_line(d.entry_preview(e, src.id_width), 60), "dim"))
        talk.append(soft(Text(f"\u2192 {escape_controls(path)} (not written: --dry-run)", "dim")))
        return talk, [], []
    resume_with = Text(f"  resume it with: pi --session {escape_controls(resume or plan.header['id'])}", "dim")
    return talk, [escape_controls(path)], [resume_with]
