"""``pisess context``: the panel and each message the model sees (``message_block`` is
also ``diff``'s)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.lines import Heading, Line, Lines, Para, Part, to_rich
from pisess.cli.views.shared import T, safe
from pisess.cli.views.text import escape_controls, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core import js
from pisess.core.js import UNDEF, get
from pisess.core.model import kinds


def id_cell(v: Any, width: int) -> str:
    """An entry id in a column ``width`` wide and the two spaces after it: ids shorter than the
    session's id width (writers other than pi: ``mc2``, ``oc-custom-1``) are padded, so the
    columns after them do not zig-zag."""
    from rich.cells import cell_len

    sid = _sid(v, width)
    return sid + " " * (max(0, width - cell_len(sid)) + 2)


def context_view(ctx, *, llm: bool = False, thinking: bool = False, full: bool = False, max_lines: int = 12,
                 system: bool = False, original: bool = False, lines: bool = False, in_app: bool = False) -> list:
    """The context panel and each message.  pi 1.6: the header counts the replayed prompt's
    sections and tools and the messages context edits hide; an edited message says which edit;
    ``original`` also shows what edits replaced or hid, ``system`` the whole prompt and tools.
    With ``lines`` the messages are one ``views.lines.Lines`` item, made as the printer writes it
    (the command's: 15,000 messages laid out by Rich took most of its time), else Rich's objects."""
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
    edited = [e for e, n in ctx.projection if n and ctx.edit_of(e) is not None] if ctx.applied_edits else []
    if edited:
        info.append(f" \u00b7 {len(edited)} edited", "yellow")
    if ctx.omitted:
        info.append(f" \u00b7 {len(ctx.omitted)} hidden by context edits: "
                    + ", ".join(_sid(get(e, "id"), s.id_width) for e in ctx.omitted[:6])
                    + (" \u2026" if len(ctx.omitted) > 6 else ""),
                    "yellow")
    unpaired = ctx.without_call()
    if unpaired:
        info.append(f"\n{plural(len(unpaired), 'tool result')} without {'its' if len(unpaired) == 1 else 'their'} "
                    "call: the provider refuses this context", "bold red")
    for note in s.notes:
        info.append("\nnote: " + escape_controls(note), "yellow")
    reader_words = f"{s.reader} reader, {versions.short(s.pi_version)}"
    title = (f" context \u00b7 {_sid((s.header or {}).get('id'))} \u00b7 leaf "
             f"{_sid(ctx.leaf_id, s.id_width) if ctx.leaf_id is not None else '(none)'} \u00b7 {reader_words} ")
    out: list = [Panel(info, title=Text(title, "bold"), title_align="left", expand=True)]
    if system:
        out.extend(system_prompt_view(sm))
    parts = _context_messages(ctx, llm=llm, thinking=thinking, limits_n=max_lines, full=full, original=original,
                              unpaired=set(unpaired), in_app=in_app)
    if lines:
        out.append(Lines(parts))
    else:
        out.extend(to_rich(p) for p in parts)
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


NO_CALL = "no call before it: refused"


def _context_messages(ctx, *, llm: bool, thinking: bool, limits_n: int, full: bool,
                      original: bool, unpaired: set | frozenset = frozenset(), in_app: bool = False) -> Iterator[Part]:
    """Each message's parts in order, made as they are read; with ``original`` the messages edits
    replaced or hid, beside them."""
    from dataclasses import replace

    from pisess.core.model.context import convert_to_llm
    from pisess.core.model.messages import Edit, Limits, message_view

    s = ctx.session
    limits = Limits.terminal(limits_n, full)
    messages = iter(zip(ctx.messages, ctx.message_sources))

    def block(m, src, **marks) -> list[Part]:
        shown, converted_from = m, None
        if llm:
            conv = convert_to_llm([m], s.pi_version)
            if not conv:
                return []
            shown = conv[0]
            converted_from = None if shown is m else kinds.of_message(m).word
        view = message_view(shown, src, limits, converted_from=converted_from, origin=m)
        return message_parts(replace(view, **marks) if marks else view, thinking=thinking, id_width=s.id_width,
                             in_app=in_app)

    edits = bool(ctx.applied_edits)  # (most contexts have none: no entry's id to look up then)
    index = 0
    for entry, n in ctx.projection or [(src, 1) for _, src in zip(ctx.messages, ctx.message_sources)]:
        edit = ctx.edit_of(entry) if edits else None
        before = ctx.originals.get(js.key(get(entry, "id")), []) if edit is not None else []
        for _ in range(n):
            m, src = next(messages)
            marks: dict = {"edit": Edit(get(edit, "id"))} if edit is not None else {}
            if index in unpaired:
                marks["warning"] = NO_CALL
            index += 1
            yield from block(m, src, **marks)
        if original and edit is not None:
            by = _sid(get(edit, "id"), s.id_width)
            for m in before:
                yield from block(m, entry, hidden=f"by {by}" if n == 0 else f"original, replaced by {by}")


def _cut(b, in_app: bool = False) -> str:
    """The one note of a block cut by characters (the lines after the cut counted in it): ``--full``
    cuts there too, ``--json`` has everything (a command an app, browse, does not point to)."""
    if not b.cut_chars:
        return ""
    left = _lines_left(b)
    lines = f" in {plural(left + 1, 'line')}" if left > 0 else ""
    return f" \u2026 [{b.cut_chars:,} more characters{lines}{'' if in_app else ': pisess context --json'}]"


def _lines_left(b) -> int:
    """Whole lines a block leaves out (a character cut stops inside a line: ``_cut`` says how many
    characters are left, this the lines after the one it stopped in)."""
    return b.total_lines - (b.text.count("\n") + 1) if b.cut_chars else b.cut_lines


def _more(b, in_app: bool = False) -> list:
    """``… N more lines (--full) …`` under a block cut by lines (one cut by characters says it all
    in ``_cut``)."""
    left = _lines_left(b)
    how = "" if in_app else " (--full)"
    return [Para(f"\u2026 {plural(left, 'more line')}{how} \u2026", "dim")] if left > 0 and not b.cut_chars else []


_SOURCE_WORDS = {"retained": "retained in ", "checkpoint": "compaction "}


def _heading(v, id_width: int = 8) -> tuple[tuple[str, str], ...]:
    """The rule above a message, as ``(text, style)`` pieces: what it is, where it came from, when,
    and its facts."""
    title: list[tuple[str, str]] = []
    sid = _sid(v.source_id, id_width)
    src_label = f" ({_SOURCE_WORDS.get(v.source, '')}{sid})"
    if v.role == "toolResult":
        title.append((v.heading, "yellow"))
        title.append((f" \u00b7 {escape_controls(v.subject)}{src_label}", "dim"))
    elif v.role in ("compactionSummary", "branchSummary"):
        title.append((v.heading, "magenta"))
        title.append((f" ({sid})", "dim"))
    else:
        kind = escape_controls(v.kind)
        word = kind if not v.converted_from else f"{kind} (from {escape_controls(v.converted_from)})"
        title.append((word, d.style(kinds.of("message", v.role)) or "bold"))
        title.append((src_label, "dim"))
        if v.time_ms is not None:
            title.append((" \u00b7 " + d.local_time(v.time_ms, with_date=False), "dim"))
        if v.role in ("custom", "hookMessage"):
            title.append((f" [{escape_controls(v.subject)}]", "cyan"))
    facts = [escape_controls(f) for f in v.facts]
    # what an edit did comes first: the heading is cut at the width, and this is the part to keep
    if v.hidden:
        facts.insert(0, f"hidden: {escape_controls(v.hidden)}")
    if v.edit is not None:
        facts.insert(0, f"edited by {_sid(v.edit.entry_id, id_width)}")
    if facts:
        title.append((" \u00b7 " + " \u00b7 ".join(facts), "dim"))
    if v.warning:
        title.append((f" \u00b7 {v.warning}", "bold red"))
    return tuple(title)


def _safe(s, style: str = "") -> Para:
    """Session text as a part: escaped (``shared.safe``'s)."""
    return Para(escape_controls(d.s(s), keep_newlines=True), style)


def message_parts(v, *, thinking: bool = False, id_width: int = 8, in_app: bool = False) -> list[Part]:
    """A ``MessageView`` (pisess.core.model.messages) as the parts of ``views.lines``: a heading,
    then its blocks (``message_block`` is the same as Rich's objects).  ``in_app`` (browse): the
    notes name no command-line option, and thinking shown says it is thinking."""
    from pisess.core.model.text import image_words

    body: list[Part] = [Heading(_heading(v, id_width), "dim")]
    for b in v.blocks:
        if b.kind == "error":
            body.append(_safe(f"[{b.label}] {b.text}".rstrip(), "bold red"))
        elif b.kind == "thinking":
            if b.redacted:
                body.append(Para("\u25b8 thinking (redacted by the provider)", "dim"))
            elif thinking:
                if in_app:
                    body.append(Para("\u25b8 thinking", "dim"))
                body.append(_safe(b.text + _cut(b, in_app), "dim italic"))
            else:
                how = "" if in_app else ", --thinking to show"
                body.append(Para(f"\u25b8 thinking ({len(b.text) + b.cut_chars:,} chars{how})", "dim"))
        elif b.kind == "call":
            left = 0 if b.cut_chars else _lines_left(b)
            body.append(_safe(f"\u2192 {b.label}({b.text}{_cut(b, in_app)})" +
                              (f" \u2026 {plural(left, 'more line')}" if left > 0 else ""), "yellow"))
        elif b.kind == "command":
            body.append(_safe(f"$ {b.text}", "bold"))
        elif b.kind == "image":
            body.append(Para(image_words(escape_controls(b.label), b.size), "cyan"))
        elif b.kind == "names":
            names = [n[0] if isinstance(n, tuple) else n for n in b.items]
            body.append(Line(((b.label + ": ", "dim"), (escape_controls(", ".join(names)), ""))))
        elif b.kind == "note":
            body.append(Para(b.text, "dim"))
        else:  # text, output, json
            body.append(_safe(b.text + _cut(b, in_app), "red" if v.error and b.kind == "output" else ""))
            body.extend(_more(b, in_app))
    return body


def message_block(v, *, thinking: bool = False, id_width: int = 8, in_app: bool = False) -> list:
    """A ``MessageView`` (pisess.core.model.messages) on a terminal: a rule, then its blocks (Rich's
    objects, for views that lay them out among others: diff's, the browser's)."""
    return [to_rich(p) for p in message_parts(v, thinking=thinking, id_width=id_width, in_app=in_app)]
