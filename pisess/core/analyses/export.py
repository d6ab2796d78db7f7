"""Exporting what the model sees on one path: Markdown, HTML, or a session file (pi's ``/clone``).

``md`` and ``html`` render a ``Context`` (the selection ``pisess context`` shows) in reading order.
Session text is data in both: in Markdown every prose character that could start markup is
backslash-escaped and code-like text sits in fences longer than any backtick run it holds; in HTML
everything is ``html.escape``d and the page carries no script, no link and a Content-Security-Policy
that forbids fetching anything.  Control characters become visible (``\\x1b``) in both.

``jsonl`` is pi's ``/clone`` (spec §9.2: ``createBranchedSession`` at the leaf, cli reader): the
root path without label entries, re-chained, labels re-created, a new session id and
``parentSession`` = the source path.

The scan of ``pisess.core.analyses.secrets`` runs over every exported string; with ``redact`` each finding
is replaced with ``[REDACTED:kind]``, without it the findings are only counted.  Pure code: the id
and the clock are passed in; ``write_export`` is the one function that touches the disk.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..model.messages import Block, Limits, MessageView, message_view
from ..model.text import image_words, short_id, visible
from ..reading.files import piece_length
from ..reading.jsonl import dumps

FORMATS = ("md", "html", "jsonl")
EXTENSIONS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".jsonl": "jsonl"}
# entry members that are structure, never text: left alone by --redact so the file stays valid
STRUCTURAL = frozenset({"type", "id", "parentId", "timestamp", "targetId", "firstKeptEntryId", "fromId"})


@dataclass(frozen=True)
class ExportOptions:
    max_lines: int = 200  # lines of each tool result / bash output; 0 = no cap
    images: bool = False  # embed images as data: URIs instead of references
    redact: bool = False  # replace every secret found with [REDACTED:kind]
    system: bool = False  # begin with the system prompt and tools pi 1.x folds from the system messages
    script: bool = True  # html: the explorer page of the whole tree (False: the static page of the leaf's context)


class Stream:
    """An export written piece by piece as it is iterated (the explorer page: its messages are read
    back from a spool, never held whole); ``size`` counts the bytes that went by.  ``tail``: the
    pieces that end it, known before the others are made (``files.write_atomically`` may write
    them first); ``close``: what lets go of what the pieces are read from, called once they have
    all gone by (``spans`` calls it; a writer that takes ``head`` and ``tail`` apart calls
    ``close`` itself)."""

    def __init__(self, pieces: Iterator[Any], held: Any = None, *, tail: list | None = None,
                 close: Any = None) -> None:
        self._pieces = pieces
        self._head_size = self._tail_size = 0
        self.held = held  # (what the pieces were made from: freed with the stream, see PageData.held)
        self.tail = tail
        self._close = close

    @property
    def size(self) -> int:
        return self._head_size + self._tail_size

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.spans():
            if type(piece) is bytes:
                yield piece
            else:
                yield from piece.chunks()

    def spans(self) -> Iterator[Any]:
        """The pieces as they are made: bytes, or an ``images.Span`` of a file for a writer to copy
        (``Span.send``: the kernel copies it, no trip through this process)."""
        try:
            yield from self.head()
            yield from self.take_tail()
        finally:
            self.close()

    def head(self) -> Iterator[Any]:
        """The pieces before ``tail`` (all of them without one)."""
        for piece in self._pieces:
            self._head_size += piece_length(piece)
            yield piece

    def take_tail(self) -> list:
        """``tail``, counted as gone by (a writer may write it in another process)."""
        tail = self.tail or []
        self._tail_size = sum(map(piece_length, tail))
        return tail

    def close(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            close()


@dataclass(frozen=True)
class Export:
    format: str
    data: bytes | Stream
    reader: str
    leaf_id: Any
    checkpoint_id: Any
    message_count: int  # messages (md, html) or entries (jsonl) exported
    secrets: dict = field(default_factory=dict)  # kind -> count (redacted, or only found; of a Stream: once it went by)
    redacted: bool = False
    session_id: str | None = None  # jsonl: the new session's id


# --- text hygiene -------------------------------------------------------------------------------

plain = visible  # the name the exports and their tests use


def utc(ms: Any) -> str:
    if isinstance(ms, str):
        ms = js.date_ms(ms)
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return js.iso_utc(ms)[:19].replace("T", " ") + " UTC"
    except (OverflowError, OSError, ValueError):
        return ""


def flat(text: str) -> str:
    """One line: a title, a label or a meta line never breaks (a newline there could start a list
    or a heading in Markdown)."""
    return text.replace("\n", "\u21b5 ") if "\n" in text else text


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _sid(v: Any, width: int = 8) -> str:
    return short_id(v, width, visible)


# --- the context as a document: facts, then the message model of pisess.core.model.messages -------------


@dataclass(frozen=True)
class Doc:
    title: str
    facts: list  # (label, value), visible-safe (not yet escaped)
    items: list  # MessageView
    id_width: int = 8  # characters of an entry id shown (Session.id_width)
    system: tuple[str, list[str]] | None = None  # (prompt text, tool names) at the leaf, when asked for


_SOURCE_WORDS = {"entry": "entry", "retained": "retained in compaction", "checkpoint": "checkpoint of compaction",
                 "compaction": "compaction", "branch summary": "branch summary"}


def meta_of(v: MessageView, id_width: int = 8) -> list:
    """The words under a message's heading, visible-safe: where it came from, when, and its facts."""
    meta = [f"{_SOURCE_WORDS[v.source]} {_sid(v.source_id, id_width)}"]
    when = utc(v.time_ms)
    if when:
        meta.append(when)
    if v.subject and v.role in ("custom", "hookMessage"):
        meta.append(f"extension {plain(v.subject)}")
    meta.extend(plain(f) for f in v.facts)
    if v.edit is not None:
        meta.append(f"edited by {_sid(v.edit.entry_id, id_width)}")
    if v.hidden:
        meta.append(f"hidden: {plain(v.hidden)}")
    return meta


def title_of(v: MessageView) -> str:
    if v.role == "toolResult":
        return f"{v.title} \u00b7 {plain(v.subject) or '?'}"
    return plain(v.title)


def cut_note(b: Block, limits: Limits) -> str | None:
    if not b.cut_lines:
        return None
    shown = b.total_lines - b.cut_lines
    return (f"\u2026 {_n(b.cut_lines, 'more line')} cut: showing {shown:,} of {b.total_lines:,} "
            f"(--max-lines {limits.lines or 0})")


def stop_note(b: Block) -> str:
    err = plain(b.text)
    return (f"stopped: {plain(b.label)}" + (f": {err}" if err else "") +
            " (pi drops this message before sending the context to the provider)")


def thinking_label(b: Block) -> str:
    return "Thinking (redacted by the provider)" if b.redacted else f"Thinking ({_n(len(b.text), 'char')})"


def context_doc(ctx, limits: Limits, name: Any = None, system: bool = False) -> Doc:
    """The context as facts and a list of message views."""
    s = ctx.session
    h = s.header or {}
    model = ctx.state.model
    model_text = "/".join(plain(x) for x in (get(model, "provider"), get(model, "modelId"))
                          if isinstance(x, str) and x) if isinstance(model, dict) else ""
    thinking = ctx.state.thinking_level
    facts = [("Session", plain(h.get("id")) or "(no header)")]
    if isinstance(name, str) and name:
        facts.append(("Name", plain(name)))
    facts.append(("Model", (model_text or "(none)") +
                  (f" \u00b7 thinking {plain(thinking)}" if thinking not in (None, UNDEF) else "")))
    facts.append(("Leaf", plain(ctx.leaf_id) if ctx.leaf_id not in (None, UNDEF) else "(none)"))
    cp = ctx.checkpoint
    if cp is not None:
        tokens = get(cp, "tokensBefore")
        facts.append(("Checkpoint", f"compaction {_sid(get(cp, 'id'), s.id_width)}" +
                      (f" \u00b7 {tokens:,.0f} tokens before" if isinstance(tokens, (int, float))
                       and not isinstance(tokens, bool) else "")))
    else:
        facts.append(("Checkpoint", "none (the whole path is in context)"))
    facts.append(("Messages", f"{len(ctx.messages):,} \u00b7 read as pi's {s.reader} reader does"))
    if ctx.omitted:  # pi 1.6 context edits: left out as the model does not see them, named here
        facts.append(("Hidden", f"{_n(len(ctx.omitted), 'message')} hidden by context edits: " +
                      ", ".join(_sid(get(e, "id"), s.id_width) for e in ctx.omitted)))
    if ctx.applied_edits:
        facts.append(("Edited", f"{_n(len(ctx.applied_edits), 'message')} shown as context edits replaced them"))
    title = f"pi session {_sid(h.get('id'))}" + (f" \u00b7 {plain(name)}" if isinstance(name, str) and name else "")
    items = [message_view(m, src, limits) for m, src in zip(ctx.messages, ctx.message_sources)]
    return Doc(title, facts, items, s.id_width, _system_of(ctx) if system else None)


def _system_of(ctx) -> tuple[str, list[str]]:
    """The prompt and tools the model is given at the leaf (pi-ai's getCurrentSystemMessage of
    the context's system messages), visible-safe: what ``pisess context --system`` prints."""
    from ..model.system import prompt_text, tool_names

    current = ctx.system_message()
    return plain(prompt_text(current)), [plain(t) for t in tool_names(current)]


# --- Markdown -------------------------------------------------------------------------------------

# Characters that can start inline markup (CommonMark, GitHub's extensions, mentions and refs)
_MD_INLINE = re.compile(r"([\\`*_\[\]<>&~|$@#!{}])")
_MD_LINE_START = re.compile(r"^([-+=])|^(\d{1,9})([.)])")


def md_escape(text: str) -> str:
    """Literal text as CommonMark inline content: it renders as exactly these characters."""
    return _MD_INLINE.sub(r"\\\1", text)


def md_line(text: str) -> str:
    """Literal text at the start of a line (a list item): inline markup escaped, and a leading
    ``-``, ``+``, ``=`` or ``1.`` that would start a list or a heading escaped too."""
    return _MD_LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3),
                              md_escape(text))


def md_prose(text: str) -> str:
    """Literal text as paragraphs: markup escaped, line breaks kept (hard breaks), leading spaces
    kept (non-breaking), blank lines separating paragraphs."""
    out: list[str] = []
    lines = [ln.rstrip() for ln in text.split("\n")]
    for i, ln in enumerate(lines):
        if not ln:
            if out and out[-1] != "":
                out.append("")
            continue
        stripped = ln.lstrip(" \t")
        indent = ln[: len(ln) - len(stripped)]
        body = md_line(stripped)
        lead = "".join("&nbsp;" * (4 if c == "\t" else 1) for c in indent)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        out.append(lead + body + ("\\" if nxt else ""))
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)


def md_fence(text: str, info: str = "") -> str:
    """A fenced code block no line of ``text`` can close: longer than any backtick run in it."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


def _md_meta(parts: list) -> str:
    return "*" + md_escape(flat(" \u00b7 ".join(parts))) + "*"


def _md_names(b: Block) -> str:
    label = f"**{md_escape(b.label[:1].upper() + b.label[1:])}:**"
    if b.items and isinstance(b.items[0], tuple):
        return label + "\n\n" + "\n".join(
            f"- {md_line(flat(plain(n)) or '?')}" + (f": {md_escape(flat(plain(d)))}" if d else "") for n, d in b.items)
    return f"{label} {md_escape(flat(', '.join(plain(n) for n in b.items)))}"


def _md_blocks(v: MessageView, limits: Limits) -> list:
    out: list = []
    for b in v.blocks:
        if b.kind == "text":
            if b.text.strip():
                out.append(md_prose(plain(b.text)))
        elif b.kind in ("output", "json"):
            out.append(md_fence(plain(b.text), "text" if b.kind == "output" else "json"))
        elif b.kind == "command":
            out.append(md_fence("$ " + plain(b.text), "sh"))
        elif b.kind == "thinking":
            summary = html.escape(thinking_label(b))
            inner = f"\n\n{md_fence(plain(b.text), 'text')}\n" if b.text and not b.redacted else "\n"
            out.append(f"<details>\n<summary>{summary}</summary>\n{inner}\n</details>")
        elif b.kind == "call":
            out.append(f"**Tool call: {md_escape(flat(plain(b.label)) or '(unnamed)')}**")
            out.append(md_fence(plain(b.text), "json"))
        elif b.kind == "image":
            ref = image_words(plain(b.label), b.size)
            out.append(f"![{md_escape(flat(ref))}](<{b.uri}>)" if b.uri else "*" + md_escape(flat(ref)) + "*")
        elif b.kind == "names":
            out.append(_md_names(b))
        elif b.kind == "error":
            out.append("*" + md_escape(flat(stop_note(b))) + "*")
        elif b.kind == "note":
            out.append("*" + md_escape(flat(plain(b.text))) + "*")
        note = cut_note(b, limits)
        if note:
            out.append("*" + md_escape(note) + "*")
    return out


def render_md(doc: Doc, limits: Limits | None = None) -> str:
    limits = limits or Limits()
    out = [f"# {md_escape(flat(doc.title))}",
           "\n".join(f"- **{md_escape(k)}:** {md_escape(flat(v))}" for k, v in doc.facts)]
    if doc.system is not None:
        prompt, tools = doc.system
        out.append("## " + md_escape("System prompt"))
        out.append(md_fence(prompt) if prompt else "*" + md_escape("(no system message: pi's own prompt)") + "*")
        out.append("**Tools:** " + (md_escape(", ".join(tools)) if tools else "*" + md_escape("(none added)") + "*"))
    if not doc.items:
        out.append("*" + md_escape("(the context is empty)") + "*")
    for n, item in enumerate(doc.items, 1):
        out.append(f"## {n}. {md_escape(flat(title_of(item)))}")
        out.append(_md_meta(meta_of(item, doc.id_width)))
        if item.about:
            out.append("*" + md_escape(item.about) + "*")
        out.extend(_md_blocks(item, limits))
    out.append("---\n\n*" + md_escape("Exported by pisess: what the model sees on this path, in reading order.") + "*")
    return "\n\n".join(out) + "\n"


# --- HTML -----------------------------------------------------------------------------------------

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --code: #f6f8fa; --user: #0969da; --assistant: #1a7f37; --tool: #9a6700; --summary: #8250df; --error: #cf222e; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --code: #151b23;
    --user: #4493f8; --assistant: #3fb950; --tool: #d29922; --summary: #ab7df8; --error: #f85149; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 1.5rem; background: var(--bg); color: var(--fg);
  font: 15px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Helvetica, Arial, sans-serif; }
header h1 { font-size: 1.4rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0 0 1.5rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
section.msg { border-left: 3px solid var(--line); padding: .25rem 0 .25rem 1rem; margin: 0 0 1.25rem; }
section.msg h2 { font-size: 1rem; margin: 0; }
section.user { border-color: var(--user); } section.user h2 { color: var(--user); }
section.assistant { border-color: var(--assistant); } section.assistant h2 { color: var(--assistant); }
section.tool, section.bash { border-color: var(--tool); } section.tool h2, section.bash h2 { color: var(--tool); }
section.compaction, section.branch { border-color: var(--summary); }
section.compaction h2, section.branch h2 { color: var(--summary); }
section.system { border-color: var(--summary); } section.system h2 { color: var(--summary); }
p.meta { color: var(--muted); font-size: .85rem; margin: 0 0 .5rem; }
p.note { color: var(--muted); font-style: italic; margin: .4rem 0; }
p.note.error { color: var(--error); }
div.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .4rem 0; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
  overflow-x: auto; margin: .4rem 0; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
details { margin: .4rem 0; } summary { cursor: pointer; color: var(--muted); }
div.call > p { margin: .4rem 0 0; font-weight: 600; }
img { max-width: 100%; border: 1px solid var(--line); }
footer { color: var(--muted); font-size: .8rem; border-top: 1px solid var(--line); padding-top: .5rem; }
""".strip()


def h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_blocks(v: MessageView, limits: Limits) -> list:
    out: list = []
    for b in v.blocks:
        if b.kind == "text":
            if b.text.strip():
                out.append(f'<div class="text">{h(plain(b.text))}</div>')
        elif b.kind in ("output", "json", "command"):
            text = ("$ " if b.kind == "command" else "") + plain(b.text)
            info = {"output": "text", "json": "json", "command": "sh"}[b.kind]
            out.append(f'<pre><code class="{info}">{h(text)}</code></pre>')
        elif b.kind == "thinking":
            body = f"<pre>{h(plain(b.text))}</pre>" if b.text and not b.redacted else ""
            out.append(f'<details class="thinking"><summary>{h(thinking_label(b))}</summary>{body}</details>')
        elif b.kind == "call":
            out.append(f'<div class="call"><p>Tool call: {h(plain(b.label) or "(unnamed)")}</p>'
                       f'<pre><code class="json">{h(plain(b.text))}</code></pre></div>')
        elif b.kind == "image":
            ref = image_words(plain(b.label), b.size)
            out.append(f'<p><img src="{h(b.uri)}" alt="{h(ref)}"></p>' if b.uri else f'<p class="note">{h(ref)}</p>')
        elif b.kind == "names":
            label = h(b.label[:1].upper() + b.label[1:])
            if b.items and isinstance(b.items[0], tuple):
                rows = "".join(f"<li><code>{h(plain(n) or '?')}</code>" + (f": {h(plain(d))}" if d else "") + "</li>"
                               for n, d in b.items)
                out.append(f'<div class="names"><p>{label}:</p><ul>{rows}</ul></div>')
            else:
                out.append(f'<p class="names">{label}: {h(", ".join(plain(n) for n in b.items))}</p>')
        elif b.kind == "error":
            out.append(f'<p class="note error">{h(stop_note(b))}</p>')
        elif b.kind == "note":
            out.append(f'<p class="note">{h(plain(b.text))}</p>')
        note = cut_note(b, limits)
        if note:
            out.append(f'<p class="note">{h(note)}</p>')
    return out


def render_html(doc: Doc, limits: Limits | None = None) -> str:
    limits = limits or Limits()
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{h(CSP)}">',
           '<meta name="referrer" content="no-referrer">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta name="color-scheme" content="light dark">',
           f"<title>{h(doc.title)}</title>", f"<style>\n{CSS}\n</style>", "</head>", "<body>", "<header>",
           f"<h1>{h(doc.title)}</h1>", '<dl class="facts">']
    out.extend(f"<dt>{h(k)}</dt><dd>{h(v)}</dd>" for k, v in doc.facts)
    out += ["</dl>", "</header>", "<main>"]
    if doc.system is not None:
        prompt, tools = doc.system
        out += ['<section class="msg system" id="system">', "<h2>System prompt</h2>",
                f"<pre>{h(prompt)}</pre>" if prompt else '<p class="note">(no system message: pi\'s own prompt)</p>',
                f'<p class="meta">tools: {h(", ".join(tools)) if tools else "(none added)"}</p>', "</section>"]
    if not doc.items:
        out.append('<p class="note">(the context is empty)</p>')
    for n, item in enumerate(doc.items, 1):
        out.append(f'<section class="msg {h(HTML_CLASS.get(item.role or "", "unknown"))}" id="m{n}">')
        out.append(f"<h2>{n}. {h(title_of(item))}</h2>")
        out.append(f'<p class="meta">{h(" · ".join(meta_of(item, doc.id_width)))}</p>')
        if item.about:
            out.append(f'<p class="note">{h(item.about)}</p>')
        out.extend(_html_blocks(item, limits))
        out.append("</section>")
    out += ["</main>", "<footer>Exported by pisess: what the model sees on this path, in reading order. "
            "This page runs no script and loads nothing.</footer>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


# a section's class (its colour): by role
HTML_CLASS = {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "bash",
              "custom": "custom", "hookMessage": "custom", "compactionSummary": "compaction",
              "branchSummary": "branch", "system": "system"}


# --- the exports ----------------------------------------------------------------------------------


def _count(matches: list) -> dict:
    out: dict = {}
    for m in matches:
        out[m.kind] = out.get(m.kind, 0) + 1
    return dict(sorted(out.items()))


# A context of this many messages, exported without --redact, has its secrets counted in a forked
# child while it is rendered here: the scan and the rendering each take about as long (3,700 turns
# of screenshots, 14,800 messages: 0.23 s and 0.58 s), and below this the fork costs more than the
# scan it moves
COUNT_APART_MIN = 2000


def export_context(ctx, fmt: str, opts: ExportOptions = ExportOptions()) -> Export:
    """``md`` or ``html`` of the context ``ctx`` (from ``build_context``)."""
    if fmt not in ("md", "html"):
        raise PisessError("usage", f"format must be md, html or jsonl, not {fmt!r}")
    from .. import parallel

    s = ctx.session
    try:
        name = s.session_name()
    except PisessError:
        name = None
    counter = None
    if not opts.redact and len(ctx.messages) >= COUNT_APART_MIN and parallel.workers() > 1:
        counter = parallel.Child(_secrets_of, ctx.messages, name)
    try:
        if opts.redact:
            from dataclasses import replace

            from .secrets import redact as redact_value

            messages, found = redact_value(list(ctx.messages))
            name, found_name = redact_value(name)
            counts = _count(found + found_name)
            ctx = replace(ctx, messages=messages)
        elif counter is None:
            counts = _secrets_of(ctx.messages, name)
        limits = Limits.document(opts.max_lines, opts.images)
        doc = context_doc(ctx, limits, name, opts.system)
        text = render_md(doc, limits) if fmt == "md" else render_html(doc, limits)
        if counter is not None:
            got = counter.result()
            counts = got if got is not None else _secrets_of(ctx.messages, name)
    finally:
        if counter is not None:
            counter.cancel()  # (a no-op once its result was read)
    checkpoint = get(ctx.checkpoint, "id") if ctx.checkpoint is not None else None
    return Export(fmt, text.encode("utf-8"), s.reader, ctx.leaf_id, checkpoint, len(ctx.messages), counts,
                  opts.redact)


def _secrets_of(messages: Any, name: Any) -> dict:
    """What the secret scan finds in ``messages`` and the session's ``name``, by kind."""
    from .secrets import redact as redact_value

    return _count(redact_value(list(messages))[1] + redact_value(name)[1])


def export_explorer(session, leaf_id: Any, opts: ExportOptions, gathering: Any = None) -> Export:
    """The explorer page of the whole tree (``pisess.core.analyses.page``), opening on ``leaf_id``
    (``UNDEF``: the session's leaf).  ``gathering``: the ``page.PageGathering`` the session was
    opened with (its pass taken during the open's parse, where the read took it)."""
    from .. import parallel
    from .page import PAGE_SPLIT_MIN, placements

    def static_page() -> tuple[str, dict]:
        """The leaf's context as the static page, for <noscript> (images as references: the page
        holds them once), and the secrets its export found."""
        from ..model.context import build_context

        try:
            ctx = build_context(session, leaf_id, full_path=False)
            leaf_export = export_context(ctx, "html", ExportOptions(opts.max_lines, False, opts.redact))
            return bytes(leaf_export.data).decode("utf-8"), leaf_export.secrets  # type: ignore[arg-type]
        except PisessError as err:
            return f"<body><p>{html.escape(err.message)}</p></body>", {}

    def beside(premake: Any) -> tuple:
        """What a big session's page takes from a forked child (``start``), made once this process
        has taken its half of the entries, on the CPU the page's serial tail leaves idle (forked
        before, it was a third process beside the two halves): validate's findings and search's
        placements (neither depends on the page's pass), the summaries it kept (validate's), which
        the cache here writes, and the page's members ``premake`` writes (``page.page_pass``'s
        ``after_pass``)."""
        from ..reading import cache

        return page_findings(session), placements(session), cache.made_here(), premake() if premake is not None else None

    children: list = []  # (the static page's child, then ``beside``'s)

    def start(premake: Any) -> None:
        # The static page (the leaf's context rendered, its secrets counted) in a child of its own,
        # beside the rest: of the 1.4 GB session of screenshots, whose leaf's context is its 3,700
        # turns, it took 1.5 s, and the page waited for it and validate one after the other.
        if parallel.workers() > 1 and session.raw.size >= PAGE_SPLIT_MIN:
            children.extend((parallel.Child(static_page), parallel.Child(beside, premake)))
    try:
        return _explorer(session, leaf_id, opts, children, static_page, start, gathering)
    except BaseException:
        for child in children:
            child.cancel()
        raise


# A page's tail (its messages but those drawn first) this big (bytes) is written first, beside the
# page's JSON (files.write_atomically's tail): below it, starting the helper that writes it costs
# more than the copy it saves (10,000 entries, a 3.7 MB page: 0.426 s against 0.418 s in order)
TAIL_FIRST_MIN = 16 << 20


def page_findings(session) -> list:
    """validate's findings of ``session``'s file as the page shows them (each with its entry's
    position); none when the file cannot be validated."""
    from .validate import validate_file

    try:
        report = None
        ix = getattr(session.store, "ix", None)  # the compact index the session was read from: not read again
        if ix is not None and not ix.harness_error and ix.cli_plain:
            from .. import versions as pi_versions
            from .validate import validate_index

            report = validate_index(session.path, ix, pi_versions.parse(session.pi_version))
        if report is None:
            report = validate_file(session.path, pi_version=session.pi_version)
    except PisessError:
        return []
    return [{**f.to_json(), "entry": session.position(session.lookup(f.entry_id)) if f.entry_id is not None else None}
            for f in report.findings]


def _explorer(session, leaf_id: Any, opts: ExportOptions, children: list, static_page: Any, start: Any,
              gathering: Any = None) -> Export:
    """``export_explorer``'s page; the static page, the findings and placements from the children
    ``start`` forks into ``children`` (the static page's ``parallel.Child``, then ``beside``'s), or
    made here where there are none or one failed."""
    import tempfile
    from dataclasses import replace

    from ... import __version__
    from ..reading.files import INSERT_ALIGN
    from .page import PageOptions, page_finish, page_parts, page_pass

    def meanwhile() -> tuple:
        side = children[1].result() if children else None
        if side is None:
            return page_findings(session), None, None
        from ..reading import cache

        cache.keep_made(side[2])
        return side[0], side[1], side[3]

    spool = tempfile.TemporaryFile(prefix="pisess-page-")  # (the messages, until the page is written)
    try:
        made = page_pass(session, PageOptions("inline" if opts.images else "omit", opts.redact, leaf_id), spool=spool,
                         after_pass=start, gathered=session.store.gathered() if gathering is not None else None)
    except BaseException:  # (the gathering's spools: export_session closes them)
        spool.close()
        raise
    # a big page's messages (its tail: all but those drawn first) can be written while its JSON is
    # made (in pieces(), as the page is written: files.write_atomically)
    head, tail = page_parts(made.table, made.first_messages)
    tail_first = sum(map(piece_length, tail)) >= TAIL_FIRST_MIN
    # without --redact only the leaf's context is scanned (the static page's export): its count warns
    secrets: dict = {}  # (filled as the page is made: Export.secrets)

    def pieces() -> Iterator[Any]:
        data = page_finish(made, pisess_version=__version__, meanwhile=meanwhile)
        static_made = children[0].result() if children else None
        static, static_secrets = static_made if static_made is not None else static_page()
        data = replace(data, static_html=static)
        secrets.update(data.secrets if opts.redact else static_secrets)
        stream.held = data.held
        yield from head(data, INSERT_ALIGN if tail_first else 0)
        if not tail_first:
            yield from tail

    def close() -> None:
        for child in children:
            child.cancel()
        made.table.close()
        spool.close()
        if gathering is not None:
            gathering.close()
    stream = Stream(pieces(), made, tail=tail if tail_first else None, close=close)
    return Export("html", stream, session.reader, made.leaf_id, None, len(made.table), secrets, opts.redact)


def export_branch(session, leaf_id: Any, *, new_id: str, now_iso: str, source_path: str,
                  redact: bool = False) -> Export:
    """pi's ``/clone`` of the path ending at ``leaf_id``: a valid v3 session file (cli reader)."""
    from ..model.fork import plan_fork

    if session.reader != "cli":
        raise PisessError("usage", "a jsonl export is planned on the cli reader's view of the file (pi's /clone)")
    if leaf_id in (None, UNDEF) or session.lookup(leaf_id) is None:
        if leaf_id in (None, UNDEF):
            raise PisessError("not_found", "nothing to export: the session has no entries yet (pi: \"Nothing to clone "
                              "yet\")", path=session.path)
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path, stage="leaf")
    plan = plan_fork(session, leaf_id, "at", new_id=new_id, now_iso=now_iso, source_path=source_path)
    header, entries = plan.header, plan.entries
    from .secrets import redact as redact_value

    found: list = []
    new_header, hf = redact_value(header, skip=frozenset({"type", "version", "id", "timestamp"}))
    found += hf
    new_entries = []
    for e in entries:
        r, ef = redact_value(e, skip=STRUCTURAL)
        found += ef
        new_entries.append(r)
    if redact:
        header, entries = new_header, new_entries
    data = b"".join(dumps(v) + b"\n" for v in [header, *entries])
    return Export("jsonl", data, "cli", leaf_id, None, len(entries), _count(found), redact, new_id)


# --- one run of pisess export ---------------------------------------------------------------------


@dataclass(frozen=True)
class ExportRun:
    """What ``pisess export`` did with one session file: how it was read, what was exported."""

    path: str
    reader: str  # the reader the file was read with (a jsonl export is planned on the cli reader's view)
    pi_version: str
    id_width: int  # characters of an entry id the summary shows (Session.id_width)
    export: Export
    dropped_lines: list = field(default_factory=list)  # {line, reason} of each line the reader dropped

    def to_json(self, written: str | None) -> dict:
        """The ``--json`` document (without its version): the session's ``path``, the file written
        (``outputPath``), how many messages (``entryCount`` for jsonl: entries) were exported;
        ``content`` when nothing was written."""
        r = self.export
        count = "entryCount" if r.format == "jsonl" else "messageCount"
        doc = {"reader": self.reader, "piVersion": self.pi_version, "path": self.path, "format": r.format,
               "leafId": r.leaf_id, "checkpointId": r.checkpoint_id, count: r.message_count,
               "droppedLines": self.dropped_lines, "outputPath": written,
               "bytes": 0, "secretCountByKind": r.secrets, "redacted": r.redacted}
        if r.format == "jsonl":
            doc["id"] = r.session_id
        if written is None:
            data = r.data if isinstance(r.data, bytes) else b"".join(r.data)
            doc["content"] = data.decode("utf-8", "replace")
        doc["bytes"] = len(r.data) if isinstance(r.data, bytes) else r.data.size
        return doc


def check_export_request(fmt: str, output: str | None, force: bool) -> None:
    """The combinations of options that make no export (usage errors, before any reading)."""
    if fmt not in FORMATS:
        raise PisessError("usage", f"format must be md, html or jsonl, not {fmt!r}")
    if force and not output:
        raise PisessError("usage", "--force needs -o FILE")
    if output:
        check_export_target(output, force)  # (before minutes of reading a big session, not after)


# what a record only pi's SDK writes holds, as the SDK writes it (lines.sdk_only_entry): a guess, see _likely_sdk
_SDK_SIGNS = (b'"type":"leaf"', b'"type":"active_tools_change"', b'"retainedTail"')
_SDK_LOOK = 1 << 20  # bytes looked at, at each end of the file


def _likely_sdk(path: str) -> bool:
    """Will ``--reader auto`` read ``path`` with the SDK's reader, by its header (``metadata``) or
    a record only the SDK writes in its first or last MiB?  A guess at how the page is made faster
    (its pass taken in the open's parse assumes the pi command's reader, and is thrown away where
    the file turns out the SDK's: a 200 MB file whose only SDK record came last took 3.3-3.75 s,
    where the page made after the open took 2.5-2.8 s): the page is the same either way."""
    from ..reading.files import open_regular
    from ..reading.jsonl import first_line_value

    v = first_line_value(path)
    if isinstance(v, dict) and v.get("type") == "session" and "metadata" in v:
        return True
    try:
        fd, st = open_regular(path)
    except PisessError:
        return False
    try:
        size = st.st_size if st is not None else 0
        ends = os.pread(fd, _SDK_LOOK, 0) + b"\n" + os.pread(fd, _SDK_LOOK, max(0, size - _SDK_LOOK))
    except OSError:
        return False
    finally:
        os.close(fd)
    return any(sign in ends for sign in _SDK_SIGNS)


def export_session(path: str, fmt: str, *, leaf: str | None = None, reader: str = "auto",
                   pi_version: str = versions.CURRENT, options: ExportOptions = ExportOptions(),
                   new_id: str, now_iso: str) -> ExportRun:
    """``fmt`` (md, html or jsonl) of the path to ``leaf`` in the session file ``path``, as
    ``pisess export`` makes it, without writing it (``write_export`` does).

    ``leaf``: an entry id or a prefix of exactly one (``Session.entry_id``), default the current
    leaf.  md and html show the context at the leaf as ``reader`` reads the file; jsonl is pi's
    ``/clone``, planned on the cli reader's view (``new_id`` and ``now_iso`` are its id and time).
    """
    from ..model.context import build_context
    from ..model.paths import leaf_of
    from ..reading.session import open_session

    # md and html draw an image as one line (or embed it, read then): its base64 stays in the file
    gathering = None
    if fmt == "html" and options.script and not options.redact and not options.images and reader != "harness" \
            and not (reader == "auto" and _likely_sdk(path)):
        from .page import PageGathering

        gathering = PageGathering(pi_version, reader)  # (the page's pass, taken during the open's one parse)
    try:
        s = open_session(path, reader, light=True, pi_version=pi_version,
                         images="whole" if fmt == "jsonl" else "lean", gather=gathering)
        leaf_id = UNDEF if leaf is None else s.entry_id(leaf, option="--leaf")
        if fmt == "jsonl":
            cli = s if s.reader == "cli" else open_session(path, "cli", light=True, pi_version=pi_version)
            result = export_branch(cli, leaf_of(s) if leaf_id is UNDEF else leaf_id, new_id=new_id, now_iso=now_iso,
                                   source_path=os.path.abspath(path), redact=options.redact)
        elif fmt == "html" and options.script:
            result = export_explorer(s, leaf_id, options, gathering)  # (which closes the gathering's spools)
        else:
            result = export_context(build_context(s, leaf_id, full_path=False), fmt, options)
    except BaseException:
        if gathering is not None:
            gathering.close()
        raise
    return ExportRun(path, s.reader, s.pi_version, s.id_width, result, list(s.dropped_lines))


# --- writing --------------------------------------------------------------------------------------


def is_session_file(path: str) -> bool:
    """Is the first non-blank line of ``path`` a session header (``{"type": "session", …}``)?"""
    from ..reading.files import open_file
    from ..reading.jsonl import parse_json

    try:
        with open_file(path) as fh:  # a FIFO at the export's target must not block
            head = fh.read(1 << 20)
    except (PisessError, OSError):
        return False
    for raw in head.split(b"\n"):
        raw = raw.strip().removeprefix(b"\xef\xbb\xbf").strip()
        if not raw:
            continue
        v = parse_json(raw)
        return isinstance(v, dict) and v.get("type") == "session"
    return False


def write_export(path: str, data: bytes | Stream, *, force: bool = False) -> str:
    """Create ``path`` exclusively and atomically (temp file, fsync, hard link); with ``force`` an
    existing file that is not a session file is replaced (atomically).  A session file is never
    overwritten."""
    exists = check_export_target(path, force)
    from ..reading.files import write_atomically

    try:
        if not isinstance(data, Stream):
            return write_atomically(path, data, replace=exists, prefix=".pisess-export-")
        return write_atomically(path, data.head(), tail=None if data.tail is None else data.take_tail(),
                                replace=exists, prefix=".pisess-export-")
    except PisessError as e:
        if "refusing to overwrite" in e.message:  # created by someone else meanwhile
            raise PisessError("usage", e.message, path=path) from None
        raise
    finally:
        if isinstance(data, Stream):
            data.close()


def check_export_target(path: str, force: bool = False) -> bool:
    """Whether ``path`` exists, where ``write_export`` may write it; else the refusal."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    exists = os.path.lexists(path)
    if exists and os.path.isdir(path):
        raise PisessError("usage", f"{path} is a directory", path=path)
    if exists and not os.path.isfile(path):  # a pipe, a device, a dangling symlink: never opened
        raise PisessError("usage", f"refusing to write to {path}: not a regular file", path=path)
    if exists and is_session_file(path):
        raise PisessError("usage", f"refusing to overwrite {path}: it is a pi session file", path=path)
    if exists and not force:
        raise PisessError("usage", f"refusing to overwrite existing file {path} (--force replaces a file that is "
                          "not a session file)", path=path)
    if not os.path.isdir(directory):
        raise PisessError("storage", f"directory {directory} does not exist", path=directory)
    return exists


def format_for(path: str | None, explicit: str | None) -> str:
    """``--format``, else the output file's extension, else ``md``."""
    if explicit:
        fmt = explicit.lower()
        if fmt not in FORMATS:
            raise PisessError("usage", f"--format must be md, html or jsonl, not {explicit!r}")
        return fmt
    if path:
        return EXTENSIONS.get(os.path.splitext(path)[1].lower(), "md")
    return "md"

