"""Exporting what the model sees on one path: Markdown, HTML, or a session file (pi's ``/clone``).

``md`` and ``html`` render a ``Context`` (the selection ``pisess context`` shows) in reading order.
Session text is data in both: in Markdown every prose character that could start markup is
backslash-escaped and code-like text sits in fences longer than any backtick run it holds; in HTML
everything is ``html.escape``d and the page carries no script, no link and a Content-Security-Policy
that forbids fetching anything.  Control characters become visible (``\\x1b``) in both.

``jsonl`` is pi's ``/clone`` (spec §9.2: ``createBranchedSession`` at the leaf, cli reader): the
root path without label entries, re-chained, labels re-created, a new session id and
``parentSession`` = the source path.

The scan of ``pisess.core.secrets`` runs over every exported string; with ``redact`` each finding
is replaced with ``[REDACTED:kind]``, without it the findings are only counted.  Pure code: the id
and the clock are passed in; ``write_export`` is the one function that touches the disk.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from . import js
from .errors import PisessError
from .js import UNDEF, get
from .jsonl import dumps
from .secrets import redact as redact_value

FORMATS = ("md", "html", "jsonl")
EXTENSIONS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".jsonl": "jsonl"}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
# entry members that are structure, never text: left alone by --redact so the file stays valid
STRUCTURAL = frozenset({"type", "id", "parentId", "timestamp", "targetId", "firstKeptEntryId", "fromId"})


@dataclass(frozen=True)
class ExportOptions:
    max_lines: int = 200  # lines of each tool result / bash output; 0 = no cap
    images: bool = False  # embed images as data: URIs instead of references
    redact: bool = False  # replace every secret found with [REDACTED:kind]


@dataclass(frozen=True)
class Export:
    format: str
    data: bytes
    reader: str
    leaf_id: Any
    checkpoint_id: Any
    message_count: int  # messages (md, html) or entries (jsonl) exported
    secrets: dict = field(default_factory=dict)  # kind -> count (redacted, or only found)
    redacted: bool = False
    session_id: str | None = None  # jsonl: the new session's id


# --- text hygiene -------------------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(m: re.Match) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def plain(v: Any) -> str:
    """Any value as text: CRLF folded to LF, control characters, bidi overrides and lone
    surrogates made visible (``\\x1b``), tabs kept."""
    s = v if isinstance(v, str) else ("" if v is None or v is UNDEF else _json(v, indent=False))
    if "\r" in s:
        s = s.replace("\r\n", "\n")
    return _CONTROL.sub(_visible, s) if _CONTROL.search(s) else s


def _json(v: Any, indent: bool = True) -> str:
    try:
        return json.dumps(v, indent=2 if indent else None, ensure_ascii=False,
                          separators=None if indent else (",", ":"), default=str)
    except (RecursionError, ValueError):
        return "(a value nested too deeply to show)"


def clip(text: str, max_lines: int) -> tuple[str, int, int]:
    """``(shown, cut, total)`` lines; ``max_lines`` 0 keeps everything."""
    lines = text.split("\n")
    total = len(lines)
    if max_lines <= 0 or total <= max_lines:
        return text, 0, total
    return "\n".join(lines[:max_lines]), total - max_lines, total


def utc(ms: Any) -> str:
    if isinstance(ms, str):
        ms = js.date_ms(ms)
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return js.iso_utc(ms)[:19].replace("T", " ") + " UTC"
    except (OverflowError, OSError, ValueError):
        return ""


def image_ref(block: Any) -> str:
    data = get(block, "data") if isinstance(block, dict) else None
    size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))) if isinstance(data, str) else 0
    kb = f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} B"
    mime = get(block, "mimeType") if isinstance(block, dict) else None
    return f"[image {plain(mime) or '?'}, {kb}]"


def data_uri(block: Any) -> str | None:
    """A ``data:`` URI for an image block pisess is willing to embed (raster types, base64 only)."""
    if not isinstance(block, dict):
        return None
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in IMAGE_TYPES or not isinstance(data, str) or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", data):
        return None
    return f"data:{mime};base64,{data}"


def flat(text: str) -> str:
    """One line: a title, a label or a meta line never breaks (a newline there could start a list
    or a heading in Markdown)."""
    return text.replace("\n", "\u21b5 ") if "\n" in text else text


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _sid(v: Any, n: int = 8) -> str:
    if v is None or v is UNDEF or v == "":
        return "-"
    return plain(v if isinstance(v, str) else js.to_string(v))[:n]


# --- a renderer-neutral view of the context -------------------------------------------------------


@dataclass
class Block:
    """One piece of a message: ``prose`` (text), ``code`` (fenced), ``thinking`` (collapsible),
    ``call`` (tool call: label + JSON), ``image``, ``note`` (pisess's own words)."""

    kind: str
    text: str = ""
    label: str = ""
    info: str = ""
    uri: str | None = None


@dataclass
class Item:
    role: str
    title: str
    meta: list
    blocks: list


@dataclass
class Doc:
    title: str
    facts: list  # (label, value)
    items: list


def _content_blocks(content: Any, opts: ExportOptions, *, fence: bool, max_lines: int = 0) -> list:
    """Text and image blocks of user / tool / custom content."""
    out: list = []
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return [Block("code", plain(content), info="json")] if content not in (None, UNDEF) else []
    texts = [plain(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if fence:
        if texts:
            shown, cut, total = clip("\n".join(texts), max_lines)
            out.append(Block("code", shown, info="text"))
            if cut:
                out.append(Block("note", f"\u2026 {_n(cut, 'more line')} cut: showing {max_lines:,} of {total:,} "
                                         f"(--max-lines {max_lines})"))
    else:
        out.extend(Block("prose", t) for t in texts)
    for b in content:
        if isinstance(b, dict) and b.get("type") == "image":
            uri = data_uri(b) if opts.images else None
            out.append(Block("image", image_ref(b), uri=uri))
        elif isinstance(b, str):
            out.append(Block("prose", plain(b)))
        elif not isinstance(b, dict) or b.get("type") not in ("text", "image"):
            out.append(Block("code", plain(_json(b)), info="json"))
    return out


def _message_item(m: Any, src: Any, opts: ExportOptions) -> Item:
    src_id = _sid(get(src, "id") if isinstance(src, dict) else None)
    if not isinstance(m, dict):
        return Item("unknown", "Message", [f"entry {src_id}"], [Block("code", plain(_json(m)), info="json")])
    role = m.get("role")
    meta = [f"entry {src_id}"]
    retained = get(src, "type") == "compaction" and role != "compactionSummary"
    if retained:
        meta = [f"retained in compaction {src_id}"]
    when = utc(m.get("timestamp"))
    if when:
        meta.append(when)
    content = m.get("content")
    if role == "user":
        return Item("user", "User", meta, _content_blocks(content, opts, fence=False))
    if role == "assistant":
        model = "/".join(plain(x) for x in (m.get("provider"), m.get("model")) if isinstance(x, str) and x)
        if model:
            meta.append(model)
        usage = m.get("usage")
        if isinstance(usage, dict) and all(isinstance(usage.get(k), (int, float)) for k in ("input", "output")):
            meta.append(f"{usage['input']:,.0f} in / {usage['output']:,.0f} out")
        blocks: list = []
        stop = m.get("stopReason")
        if stop in ("error", "aborted"):
            err = plain(m.get("errorMessage"))
            blocks.append(Block("note", f"stopped: {stop}" + (f": {err}" if err else "") +
                                " (pi drops this message before sending the context to the provider)"))
        for b in content if isinstance(content, list) else [content]:
            if isinstance(b, dict) and b.get("type") == "thinking":
                if b.get("redacted"):
                    blocks.append(Block("thinking", "", label="Thinking (redacted by the provider)"))
                else:
                    t = plain(b.get("thinking"))
                    blocks.append(Block("thinking", t, label=f"Thinking ({_n(len(t), 'char')})"))
            elif isinstance(b, dict) and b.get("type") == "toolCall":
                blocks.append(Block("call", plain(_json(b.get("arguments"))), label=plain(b.get("name")) or "(unnamed)",
                                    info="json"))
            elif isinstance(b, dict) and b.get("type") == "text":
                blocks.append(Block("prose", plain(b.get("text"))))
            elif isinstance(b, str):
                blocks.append(Block("prose", plain(b)))
            elif b not in (None, UNDEF):
                blocks.append(Block("code", plain(_json(b)), info="json"))
        return Item("assistant", "Assistant", meta, blocks)
    if role == "toolResult":
        name = plain(m.get("toolName")) or "?"
        text = "\n".join(plain(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text") \
            if isinstance(content, list) else plain(content)
        lines = text.count("\n") + 1 if text else 0
        meta.append(_n(lines, "line"))
        if m.get("isError"):
            meta.append("error")
        return Item("tool", f"Tool result \u00b7 {name}", meta,
                    _content_blocks(content, opts, fence=True, max_lines=opts.max_lines) or
                    [Block("note", "(no output)")])
    if role == "bashExecution":
        blocks = [Block("code", "$ " + plain(m.get("command")), info="sh")]
        output = plain(m.get("output"))
        if output:
            shown, cut, total = clip(output, opts.max_lines)
            blocks.append(Block("code", shown, info="text"))
            if cut:
                blocks.append(Block("note", f"\u2026 {_n(cut, 'more line')} cut: showing {opts.max_lines:,} of "
                                            f"{total:,} (--max-lines {opts.max_lines})"))
        code = m.get("exitCode")
        if m.get("cancelled"):
            meta.append("cancelled")
        elif code not in (None, UNDEF):
            meta.append(f"exit {plain(code)}")
        if m.get("excludeFromContext"):
            meta.append("not sent to the model")
        return Item("bash", "Shell command", meta, blocks)
    if role in ("custom", "hookMessage"):
        meta.append(f"extension {plain(m.get('customType')) or '?'}")
        if m.get("display") is False:
            meta.append("hidden in pi's UI")
        return Item("custom", "Extension message", meta, _content_blocks(content, opts, fence=False))
    if role == "compactionSummary":
        tokens = m.get("tokensBefore")
        meta = [f"compaction {src_id}"] + ([when] if when else [])
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            meta.append(f"{tokens:,.0f} tokens before")
        return Item("compaction", "Compaction summary", meta,
                    [Block("note", "The model sees this summary in place of the conversation before it."),
                     Block("prose", plain(m.get("summary")))])
    if role == "branchSummary":
        meta = [f"branch summary {src_id}"] + ([when] if when else [])
        return Item("branch", "Branch summary", meta,
                    [Block("note", "A summary of a branch the conversation came back from."),
                     Block("prose", plain(m.get("summary")))])
    return Item("unknown", f"Message ({plain(role) or '?'})", meta, [Block("code", plain(_json(m)), info="json")])


def context_doc(ctx, opts: ExportOptions, name: Any = None) -> Doc:
    """The context as a list of items, every string made visible-safe (not yet escaped)."""
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
        facts.append(("Checkpoint", f"compaction {_sid(get(cp, 'id'))}" +
                      (f" \u00b7 {tokens:,.0f} tokens before" if isinstance(tokens, (int, float))
                       and not isinstance(tokens, bool) else "")))
    else:
        facts.append(("Checkpoint", "none (the whole path is in context)"))
    facts.append(("Messages", f"{len(ctx.messages):,} \u00b7 read as pi's {s.reader} reader does"))
    title = f"pi session {_sid(h.get('id'))}" + (f" \u00b7 {plain(name)}" if isinstance(name, str) and name else "")
    items = [_message_item(m, src, opts) for m, src in zip(ctx.messages, ctx.message_sources)]
    return Doc(title, facts, items)


# --- Markdown -------------------------------------------------------------------------------------

# Characters that can start inline markup (CommonMark, GitHub's extensions, mentions and refs)
_MD_INLINE = re.compile(r"([\\`*_\[\]<>&~|$@#!{}])")
_MD_LINE_START = re.compile(r"^([-+=])|^(\d{1,9})([.)])")


def md_escape(text: str) -> str:
    """Literal text as CommonMark inline content: it renders as exactly these characters."""
    return _MD_INLINE.sub(r"\\\1", text)


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
        body = _MD_LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3),
                                  md_escape(stripped))
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


def render_md(doc: Doc) -> str:
    out = [f"# {md_escape(flat(doc.title))}",
           "\n".join(f"- **{md_escape(k)}:** {md_escape(flat(v))}" for k, v in doc.facts)]
    if not doc.items:
        out.append("*" + md_escape("(the context is empty)") + "*")
    for n, item in enumerate(doc.items, 1):
        out.append(f"## {n}. {md_escape(flat(item.title))}")
        out.append(_md_meta(item.meta))
        for b in item.blocks:
            if b.kind == "prose":
                if b.text.strip():
                    out.append(md_prose(b.text))
            elif b.kind == "code":
                out.append(md_fence(b.text, b.info))
            elif b.kind == "thinking":
                summary = html.escape(flat(b.label))
                inner = f"\n\n{md_fence(b.text, 'text')}\n" if b.text else "\n"
                out.append(f"<details>\n<summary>{summary}</summary>\n{inner}\n</details>")
            elif b.kind == "call":
                out.append(f"**Tool call: {md_escape(flat(b.label))}**")
                out.append(md_fence(b.text, "json"))
            elif b.kind == "image":
                if b.uri:
                    out.append(f"![{md_escape(flat(b.text))}](<{b.uri}>)")
                else:
                    out.append("*" + md_escape(flat(b.text)) + "*")
            elif b.kind == "note":
                out.append("*" + md_escape(flat(b.text)) + "*")
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


def render_html(doc: Doc) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{h(CSP)}">',
           '<meta name="referrer" content="no-referrer">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta name="color-scheme" content="light dark">',
           f"<title>{h(doc.title)}</title>", f"<style>\n{CSS}\n</style>", "</head>", "<body>", "<header>",
           f"<h1>{h(doc.title)}</h1>", '<dl class="facts">']
    out.extend(f"<dt>{h(k)}</dt><dd>{h(v)}</dd>" for k, v in doc.facts)
    out += ["</dl>", "</header>", "<main>"]
    if not doc.items:
        out.append('<p class="note">(the context is empty)</p>')
    for n, item in enumerate(doc.items, 1):
        out.append(f'<section class="msg {h(item.role)}" id="m{n}">')
        out.append(f"<h2>{n}. {h(item.title)}</h2>")
        out.append(f'<p class="meta">{h(" · ".join(item.meta))}</p>')
        for b in item.blocks:
            if b.kind == "prose":
                if b.text.strip():
                    out.append(f'<div class="text">{h(b.text)}</div>')
            elif b.kind == "code":
                out.append(f'<pre><code class="{h(b.info)}">{h(b.text)}</code></pre>')
            elif b.kind == "thinking":
                body = f"<pre>{h(b.text)}</pre>" if b.text else ""
                out.append(f'<details class="thinking"><summary>{h(b.label)}</summary>{body}</details>')
            elif b.kind == "call":
                out.append(f'<div class="call"><p>Tool call: {h(b.label)}</p>'
                           f'<pre><code class="json">{h(b.text)}</code></pre></div>')
            elif b.kind == "image":
                if b.uri:
                    out.append(f'<p><img src="{h(b.uri)}" alt="{h(b.text)}"></p>')
                else:
                    out.append(f'<p class="note">{h(b.text)}</p>')
            elif b.kind == "note":
                cls = "note error" if b.text.startswith("stopped:") else "note"
                out.append(f'<p class="{cls}">{h(b.text)}</p>')
        out.append("</section>")
    out += ["</main>", "<footer>Exported by pisess: what the model sees on this path, in reading order. "
            "This page runs no script and loads nothing.</footer>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


# --- the exports ----------------------------------------------------------------------------------


def _count(matches: list) -> dict:
    out: dict = {}
    for m in matches:
        out[m.kind] = out.get(m.kind, 0) + 1
    return dict(sorted(out.items()))


def export_context(ctx, fmt: str, opts: ExportOptions = ExportOptions()) -> Export:
    """``md`` or ``html`` of the context ``ctx`` (from ``build_context``)."""
    if fmt not in ("md", "html"):
        raise PisessError("usage", f"format must be md, html or jsonl, not {fmt!r}")
    s = ctx.session
    try:
        name = s.session_name()
    except PisessError:
        name = None
    messages, found = redact_value(list(ctx.messages))
    name_r, found_name = redact_value(name)
    found = found + found_name
    if opts.redact:
        from dataclasses import replace

        ctx = replace(ctx, messages=messages)
        name = name_r
    doc = context_doc(ctx, opts, name)
    text = render_md(doc) if fmt == "md" else render_html(doc)
    checkpoint = get(ctx.checkpoint, "id") if ctx.checkpoint is not None else None
    return Export(fmt, text.encode("utf-8"), s.reader, ctx.leaf_id, checkpoint, len(ctx.messages), _count(found),
                  opts.redact)


def export_branch(session, leaf_id: Any, *, new_id: str, now_iso: str, source_path: str,
                  redact: bool = False) -> Export:
    """pi's ``/clone`` of the path ending at ``leaf_id``: a valid v3 session file (cli reader)."""
    from .fork import plan_fork

    if session.reader != "cli":
        raise PisessError("usage", "a jsonl export is planned on the cli reader's view of the file (pi's /clone)")
    if leaf_id in (None, UNDEF) or session.lookup(leaf_id) is None:
        if leaf_id in (None, UNDEF):
            raise PisessError("not_found", "nothing to export: the session has no entries yet (pi: \"Nothing to clone "
                              "yet\")", path=session.path)
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path, stage="leaf")
    plan = plan_fork(session, leaf_id, "at", new_id=new_id, now_iso=now_iso, source_path=source_path)
    header, entries = plan.header, plan.entries
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


# --- writing --------------------------------------------------------------------------------------


def is_session_file(path: str) -> bool:
    """Is the first non-blank line of ``path`` a session header (``{"type": "session", …}``)?"""
    from .jsonl import parse_json

    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return False
    for raw in head.split(b"\n"):
        raw = raw.strip().removeprefix(b"\xef\xbb\xbf").strip()
        if not raw:
            continue
        v = parse_json(raw)
        return isinstance(v, dict) and v.get("type") == "session"
    return False


def write_export(path: str, data: bytes, *, force: bool = False) -> str:
    """Create ``path`` exclusively and atomically (temp file, fsync, hard link); with ``force`` an
    existing file that is not a session file is replaced (atomically).  A session file is never
    overwritten."""
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
    from .files import write_atomically

    try:
        return write_atomically(path, data, replace=exists, prefix=".pisess-export-")
    except PisessError as e:
        if "refusing to overwrite" in e.message:  # created by someone else meanwhile
            raise PisessError("usage", e.message, path=path) from None
        raise


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

