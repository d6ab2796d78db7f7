"""``pisess diff``: where two attempts part, a table of what each did, and the two contexts aligned."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.cells import cell_len
from rich.rule import Rule
from rich.text import Text

from pisess.cli.output import soft
from pisess.cli.views import describe as d
from pisess.cli.views.context import message_block
from pisess.cli.views.shared import heading, packed, safe
from pisess.cli.views.text import escape_controls, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import get

REMOVED, ADDED, CHANGED = "\u2212", "+", "~"
_STYLE = {REMOVED: "red", ADDED: "green", CHANGED: "yellow"}


def _entry_words(session: Any, e: Any, width: int) -> str:
    kind = d.entry_kind(e)
    return one_line(f"{kind} {d.entry_preview(e, session.id_width)}".strip(), width)


def _span(side: Any, after: list) -> str:
    s = side.session
    first = _sid(get(after[0], "id"), s.id_width) if after else "\u2014"
    leaf = _sid(side.context.leaf_id, s.id_width) if side.context.leaf_id is not None else "(none)"
    return f"{first} \u2192 {leaf}" if after and first != leaf else leaf


def _duration(ms: float | None) -> str:
    if ms is None:
        return "\u2014"
    seconds = int(round(ms / 1000))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _tokens(t: dict) -> str:
    return f"{t['input']:,} / {t['output']:,}"


def _cache(t: dict) -> str:
    return f"{t['cacheRead']:,} / {t['cacheWrite']:,}"


def _calls(s: Any) -> str:
    return f"{s.tool_call_count:,} ({s.failed_tool_calls:,})"


def _by_tool(s: Any) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(s.tool_calls.items(), key=lambda kv: (-kv[1], kv[0]))) or "\u2014"


def _list(xs: list) -> str:
    return ", ".join(xs) if xs else "\u2014"


#: The table's rows: label, the summary's words, whether both sides print the same for ``--stat``.
ROWS = (
    ("entries", lambda s: f"{s.entries:,}"),
    ("user turns", lambda s: f"{s.user_turns:,}"),
    ("assistant messages", lambda s: f"{s.assistant_messages:,}"),
    ("tool calls (failed)", _calls),
    ("  by tool", _by_tool),
    ("tokens in / out", lambda s: _tokens(s.tokens)),
    ("cache read / write", lambda s: _cache(s.tokens)),
    ("cost", lambda s: f"${s.cost:,.4f}"),
    ("time", lambda s: _duration(s.wall_ms)),
    ("models", lambda s: _list(s.models)),
    ("thinking", lambda s: _list(s.thinking_levels)),
    ("compactions", lambda s: f"{s.compactions:,}"),
    ("context edits", lambda s: f"{s.context_edits:,}"),
    ("files written", lambda s: _list(s.files_written)),
    ("context at leaf", lambda s: f"{plural(s.context_messages, 'message')}, ~{s.context_tokens:,} tokens"),
)


def _heading(result: Any, width: int) -> list:
    p = result.parting
    a, b = result.a, result.b
    if p.relation == "unrelated":
        pieces = [("unrelated: no entry in common", "bold"), ("compared from the start", "dim")]
    elif p.last_common is None:
        pieces = [("no entry in common", "bold")]
    else:
        sid = _sid(get(p.last_common, "id"), a.session.id_width)
        pieces = [("the same path on both sides" if p.relation == "same" else f"parted after {sid}", "bold"),
                  (f"{plural(p.common, 'entry', 'entries')} in common", "dim")]
        if p.relation == "fork":
            pieces.append(("a fork and its source", "dim"))
        what = Text(no_wrap=True)
        what.append(f"  {sid} ", "dim")
        what.append(escape_controls(_entry_words(a.session, p.last_common, max(10, width - len(sid) - 3))))
        return [*heading(pieces, width), what, *_files(a, b, width)]
    return [*heading(pieces, width), *_files(a, b, width)]


def _files(a: Any, b: Any, width: int) -> list:
    out: list = []
    if a.session is not b.session:
        for mark, side in (("A", a), ("B", b)):  # a path whole, to copy: the terminal may fold it
            t = Text()
            t.append(f"  {mark} ", "bold")
            t.append(escape_controls(str(side.session.path)), "dim")
            out.append(soft(t))
    return out


DIFFERS = "  \u2260"  # colour never carries the difference alone


def table(result: Any, width: int) -> list:
    """Side by side: label, A, B and ``≠`` where they differ; a row whose cells do not fit the
    width is folded under its label (which keeps the ``≠``), one line per side."""
    a, b = result.a.summary, result.b.summary
    p = result.parting
    cells = [(label, words(a), words(b)) for label, words in ROWS]
    head = ("", "A " + _span(result.a, p.after_a), "B " + _span(result.b, p.after_b))
    label_w = max(len(r[0]) for r in cells) + 4  # two to indent, two between the columns
    cap = (width - label_w - 2 - len(DIFFERS)) // 2  # each side's column, at most
    fits = [r for r in [head, *cells] if cell_len(r[1]) <= cap and cell_len(r[2]) <= cap]
    col = max(cell_len(r[1]) for r in fits) if fits else cap
    out: list = []
    for i, (label, x, y) in enumerate([head, *cells]):
        row = Text(no_wrap=True)
        style = "bold" if i == 0 else ""
        row.append(f"  {label}".ljust(label_w) if cell_len(x) <= cap and cell_len(y) <= cap else f"  {label}",
                   "dim")
        differs = bool(i) and x != y
        if cell_len(x) <= cap and cell_len(y) <= cap:
            row.append(x + " " * (col - cell_len(x)), style)
            row.append("  ")
            row.append(y, style)
        if differs:
            row.append(DIFFERS, "yellow")
        row.rstrip()
        if row.cell_len:
            out.append(row)
        if cell_len(x) <= cap and cell_len(y) <= cap:
            continue
        for mark, v in (("A", x), ("B", y)):  # too wide side by side: one line per side
            sub = Text(no_wrap=True)
            if i:
                sub.append(f"    {mark} ", "bold dim")
            else:  # (the head's cells name their side already)
                sub.append("  ")
            sub.append(escape_controls(one_line(v, max(10, width - sub.cell_len))), style)
            out.append(sub)
    return out


def _message(ctx: Any, i: int, mark: str, limits: Any, thinking: bool, in_app: bool = False) -> list:
    from pisess.core.model.messages import message_view

    s = ctx.session
    view = message_view(ctx.messages[i], ctx.message_sources[i], limits)
    edit = ctx.edit_of(ctx.message_sources[i])
    if edit is not None:
        from pisess.core.model.messages import Edit

        view = replace(view, edit=Edit(get(edit, "id")))
    rule, *body = message_block(view, thinking=thinking, id_width=s.id_width, in_app=in_app)
    title = Text(f"{mark} ", _STYLE[mark])
    title.append_text(rule.title if isinstance(rule.title, Text) else Text(str(rule.title)))
    return [Rule(title, align="left", style=_STYLE[mark]), *body]


def _changed(result: Any, x: Any, limits: Any, max_lines: int, full: bool, in_app: bool = False) -> list:
    a, b = result.a.context, result.b.context
    sid_a = _sid(get(a.message_sources[x.a_index], "id"), result.a.session.id_width)
    sid_b = _sid(get(b.message_sources[x.b_index], "id"), result.b.session.id_width)
    role = get(a.messages[x.a_index], "role")
    title = Text(f"{CHANGED} ", _STYLE[CHANGED])
    title.append(f"{escape_controls(str(role))} ({sid_a} \u2192 {sid_b})", "bold")
    title.append(" \u00b7 the text differs", "dim")
    out: list = [Rule(title, align="left", style=_STYLE[CHANGED])]
    lines = list(x.text_diff)
    keep = len(lines) if full or not max_lines else max_lines * 4
    for line in lines[:keep]:
        style = "red" if line.startswith("-") else "green" if line.startswith("+") else \
            "cyan" if line.startswith("@@") else ""
        out.append(safe(line, style))
    if len(lines) > keep:
        how = "" if in_app else " (--full)"
        out.append(Text(f"\u2026 {plural(len(lines) - keep, 'more line')} of the text diff{how} \u2026", "dim"))
    return out


def contexts(result: Any, *, thinking: bool, full: bool, max_lines: int, width: int, in_app: bool = False) -> list:
    """What the model sees on each side; ``in_app``: for browse, which takes no ``--full``."""
    from pisess.core.model.messages import Limits

    limits = Limits.terminal(max_lines, full)
    shared = result.shared_messages
    if result.same_context:
        return _rule([("what the model sees", "bold"), (f"the same {plural(shared, 'message')} on both sides", "dim")],
                     width)
    out = _rule([("what the model sees", "bold"), (f"{plural(shared, 'message')} the same", "dim")], width)
    if result.system is not None:
        out.extend(_system(result.system))
    a, b = result.a.context, result.b.context
    for x in result.aligned:
        if x.op == "same":
            out.append(Text(f"  \u2026 {plural(x.count, 'message')} the same \u2026", "dim"))
        elif x.op == "removed":
            out.extend(_message(a, x.a_index, REMOVED, limits, thinking, in_app))
        elif x.op == "added":
            out.extend(_message(b, x.b_index, ADDED, limits, thinking, in_app))
        else:
            out.extend(_changed(result, x, limits, max_lines, full, in_app))
    return out


def _rule(pieces: list, width: int) -> list:
    """A rule titled with the pieces, or, where they do not fit beside it, the pieces above a rule."""
    lines = heading(pieces, width - 4)  # (a rule's title keeps a few columns of the rule)
    if len(lines) == 1:
        return [Rule(lines[0], align="left", style="dim")]
    return [*heading(pieces, width), Rule(style="dim")]


def _system(sd: Any) -> list:
    out: list = [Text("system prompt and tools differ:", "bold blue")]
    for words, names in (("sections only in A", sd.sections_only_a), ("sections only in B", sd.sections_only_b),
                         ("sections that differ", sd.sections_changed), ("tools only in A", sd.tools_only_a),
                         ("tools only in B", sd.tools_only_b)):
        if names:
            t = Text(f"  {words}: ", "dim")
            t.append(escape_controls(", ".join(str(n) for n in names)))
            out.append(t)
    if sd.prompt_a != sd.prompt_b and not (sd.sections_only_a or sd.sections_only_b or sd.sections_changed):
        out.append(Text("  the prompt text differs", "dim"))
    return out


def legend(width: int = 100) -> list:
    return packed([f"{REMOVED} only in A", f"{ADDED} only in B", f"{CHANGED} the same message, its text changed"],
                  width)


def diff_view(result: Any, *, stat: bool = False, thinking: bool = False, full: bool = False, max_lines: int = 12,
              width: int = 100, in_app: bool = False) -> list:
    out = [*_heading(result, width), *table(result, width)]
    if stat:
        return out
    out.extend(contexts(result, thinking=thinking, full=full, max_lines=max_lines, width=width, in_app=in_app))
    if not result.same_context:
        out.extend(legend(width))
    for note in result.notes:
        out.append(Text("note: " + escape_controls(str(note)), "yellow"))
    return out
