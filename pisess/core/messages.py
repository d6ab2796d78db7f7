"""One reading of a context message, drawn by every view: the terminal (``pisess context``),
Markdown and HTML (``pisess export``).

``message_view(message, source, limits)`` turns one message of a ``Context`` into a
``MessageView``: a kind (the short word the tree and the colours use), a heading and a title, the
facts shown beside it, and its blocks (text, thinking, tool call, tool output, shell command,
image, JSON of something pisess has no words for, notes).  What a role means, how an image's size
is counted and how long text is clipped are decided here once; the backends only arrange and
escape.

Strings in a view are session text as it is (not escaped): every backend escapes them its own way
(``escape_controls`` for the terminal, ``visible`` + Markdown or HTML escaping for the exports).
Plain data, no Rich, no printing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import js
from .js import UNDEF, get
from .system import js_key_order

# --- text hygiene ---------------------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible_char(m: re.Match) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def visible(v: Any) -> str:
    """Any value as text for a document: CRLF folded to LF, control characters, bidi overrides and
    lone surrogates made visible (``\\x1b``), tabs and newlines kept."""
    s = v if isinstance(v, str) else ("" if v is None or v is UNDEF else json_text(v, indent=False))
    if "\r" in s:
        s = s.replace("\r\n", "\n")
    return _CONTROL.sub(_visible_char, s) if _CONTROL.search(s) else s


def json_text(v: Any, indent: bool = True) -> str:
    """A JSON value as text (non-ASCII kept); compact on one line unless ``indent``."""
    try:
        import orjson

        return orjson.dumps(v, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except TypeError:  # lone surrogates, integers beyond 64 bits, nesting beyond orjson's limit
        pass
    try:
        return json.dumps(v, indent=2 if indent else None, ensure_ascii=False,
                          separators=None if indent else (",", ":"), default=str)
    except (RecursionError, ValueError):
        return "(a value nested too deeply to show)"


def as_text(v: Any) -> str:
    """A string as it is; anything else as compact JSON; nothing for null or missing."""
    if isinstance(v, str):
        return v
    if v is None or v is UNDEF:
        return ""
    return json_text(v, indent=False)


def short_id(v: Any, n: int = 8, escape=visible) -> str:
    """The first ``n`` characters of an id as shown (escaped first by ``escape``); ``-`` for none."""
    if v is None or v is UNDEF or v == "":
        return "-"
    return escape(v if isinstance(v, str) else js.to_string(v))[:n] or "-"


def number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --- clipping -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How much of each block a view shows.  ``None`` keeps everything.

    One rule for every view: a tool result and a shell command's output are cut at ``lines``;
    each text block of user, custom and system messages (and JSON of unknown things) at
    ``prose_lines``; a summary at ``summary_lines``; any of them and a tool call's arguments at
    ``chars`` characters (a terminal wraps one huge line in quadratic time).  An assistant's text
    and thinking are never cut."""

    lines: int | None = None
    prose_lines: int | None = None
    summary_lines: int | None = None
    chars: int | None = None
    compact_json: bool = False  # tool-call arguments and unknown blocks on one line (the terminal)
    embed_images: bool = False  # images as data: URIs (documents that asked for them)

    @classmethod
    def terminal(cls, max_lines: int, full: bool) -> Limits:
        """``pisess context``: ``-n`` lines of each result (4x for text, 2x for summaries), or all
        with ``--full``; never more than ``TERMINAL_MAX_CHARS`` (``--json`` has everything)."""
        if full:
            return cls(chars=TERMINAL_MAX_CHARS, compact_json=False)
        return cls(lines=max_lines, prose_lines=max_lines * 4, summary_lines=max_lines * 2,
                   chars=min(TERMINAL_MAX_CHARS, max(2_000, max_lines * 400)), compact_json=True)

    @classmethod
    def document(cls, max_lines: int, images: bool = False) -> Limits:
        """``pisess export``: ``--max-lines`` of each tool result and command output (0: all)."""
        return cls(lines=max_lines or None, embed_images=images)


TERMINAL_MAX_CHARS = 200_000


@dataclass(frozen=True)
class Clipped:
    text: str
    total_lines: int
    cut_lines: int = 0  # lines left out (at least 1 when characters were)
    cut_chars: int = 0  # characters left out by the character cap


def clip(text: str, lines: int | None, chars: int | None = None) -> Clipped:
    """At most ``lines`` lines and ``chars`` characters of ``text``."""
    total = text.count("\n") + 1
    kept, cut = text, 0
    if lines is not None and total > lines:
        kept = "\n".join(text.split("\n", lines)[:lines])
        cut = total - lines
    if chars is not None and len(kept) > chars:
        return Clipped(kept[:chars], total, max(cut, 1), len(text) - chars)
    return Clipped(kept, total, cut)


# --- images ---------------------------------------------------------------------------------------

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_size(block: Any) -> int:
    """Decoded bytes of an image block's base64 ``data`` (padding not counted)."""
    data = get(block, "data") if isinstance(block, dict) else None
    if not isinstance(data, str):
        return 0
    return max(0, len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))))


def size_text(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


def image_words(mime: str, size: int) -> str:
    """``[image image/png, 12 KB]``: an image without its bytes (``mime`` escaped by the caller)."""
    return f"[image {mime or '?'}, {size_text(size)}]"


def image_ref(block: Any, escape=visible) -> str:
    """``image_words`` of an image block."""
    mime = get(block, "mimeType") if isinstance(block, dict) else None
    return image_words(escape(as_text(mime)), image_size(block))


def data_uri(block: Any) -> str | None:
    """A ``data:`` URI for an image block pisess is willing to embed (raster types, base64 only)."""
    if not isinstance(block, dict):
        return None
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in IMAGE_TYPES or not isinstance(data, str) or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", data):
        return None
    return f"data:{mime};base64,{data}"


# --- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One piece of a message.  ``kind``:

    ``text``      prose (user, assistant, custom, system text; summaries)
    ``output``    a tool result's text or a shell command's output (verbatim, fenced in documents)
    ``command``   a shell command (``text`` without the ``$``)
    ``thinking``  ``text``; ``redacted`` when the provider hid it
    ``call``      a tool call: ``label`` the tool's name, ``text`` its arguments as JSON
    ``image``     ``label`` the MIME type, ``size`` decoded bytes, ``uri`` when embedded
    ``json``      something pisess has no words for, as JSON
    ``names``     a list of names (``items``), ``label`` says what they are (``sets sections``)
    ``error``     an assistant's failed stop: ``label`` the stop reason, ``text`` the error message
    ``note``      pisess's own words (``(no output)``)
    """

    kind: str
    text: str = ""
    label: str = ""
    total_lines: int = 0
    cut_lines: int = 0
    cut_chars: int = 0
    redacted: bool = False
    size: int = 0
    uri: str | None = None
    items: tuple = ()  # names; for tools added (name, description) pairs


@dataclass(frozen=True)
class Edit:
    """A context edit that replaced a message's content (filled in by the context builder)."""

    entry_id: Any
    original: Any = None


@dataclass(frozen=True)
class MessageView:
    """A message as every view shows it.

    ``kind`` is the short word of the tree and of colours (``user``, ``tool``, ``branch sum``);
    ``heading`` the terminal's words (``tool result``); ``title`` a document's (``Tool result``).
    ``subject`` is the tool's name or the extension's custom type; ``facts`` the words shown beside
    the heading (model, usage, line count, exit code), in order.  ``source`` is how the message
    reached the context: ``entry``, ``retained`` (a compaction's retained tail), ``checkpoint`` (a
    compaction's systemMessage), ``compaction`` or ``branch summary``.  ``time_ms`` is the message's own timestamp.  ``about`` says, for a
    document reader, what a summary is."""

    role: str | None
    kind: str
    heading: str
    title: str
    source: str
    source_id: Any
    time_ms: float | None = None
    subject: str = ""
    facts: tuple = ()
    blocks: tuple = ()
    error: bool = False  # a tool result pi marked isError
    about: str = ""
    converted_from: str | None = None  # --llm: the kind of the message convertToLlm turned into this
    edit: Edit | None = None  # content replaced by a context edit
    hidden: str | None = None  # why the model does not see it, when shown anyway


ROLE_KIND = {"user": "user", "assistant": "assistant", "toolResult": "tool", "bashExecution": "bash",
             "custom": "custom", "branchSummary": "branch sum", "compactionSummary": "compaction",
             "hookMessage": "hook", "system": "system"}
_TITLES = {"user": ("user", "User"), "assistant": ("assistant", "Assistant"),
           "toolResult": ("tool result", "Tool result"), "bashExecution": ("bash", "Shell command"),
           "custom": ("custom", "Extension message"), "hookMessage": ("hook", "Extension message"),
           "compactionSummary": ("compaction summary", "Compaction summary"),
           "branchSummary": ("branch summary", "Branch summary"), "system": ("system", "System message")}


def role_kind(m: Any) -> str:
    """The short word for a message's role (``tool`` for ``toolResult``); the role itself, escaped
    by the caller, when pisess does not know it; ``message`` without one."""
    role = get(m, "role") if isinstance(m, dict) else UNDEF
    kind = ROLE_KIND.get(role) if isinstance(role, str) else None
    return kind or as_text(role) or "message"


def usage_text(m: Any) -> str:
    """``1,200 in / 34 out · 600 cached · $0.0100``."""
    u = get(m, "usage") if isinstance(m, dict) else None
    if not isinstance(u, dict):
        return ""
    parts = []
    i, o = u.get("input"), u.get("output")
    if number(i) and number(o):
        parts.append(f"{i:,.0f} in / {o:,.0f} out")
    cr = u.get("cacheRead")
    if number(cr) and cr:
        parts.append(f"{cr:,.0f} cached")
    cost = u.get("cost")
    if isinstance(cost, dict) and number(cost.get("total")) and cost["total"]:
        parts.append(f"${cost['total']:.4f}")
    return " \u00b7 ".join(parts)


def content_parts(content: Any) -> tuple[list, list]:
    """``(texts, others)`` of a message's content: a string is one text; ``others`` are the
    blocks that are not text (images, unknown blocks), in order."""
    if isinstance(content, str):
        return [content], []
    if not isinstance(content, list):
        return [], ([] if content is None or content is UNDEF else [content])
    texts, others = [], []
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text":
            texts.append(as_text(b.get("text")))
        elif isinstance(b, str):
            texts.append(b)
        else:
            others.append(b)
    return texts, others


def system_changes(m: dict) -> tuple[list, list, list, list]:
    """A system message's ``(sections set, sections removed, tools added, tools removed)``: names,
    and (name, description) pairs for tools added (spec C.2)."""
    sections = m.get("sections")
    set_, removed = [], []
    if isinstance(sections, dict):
        for name, value in js_key_order(sections):
            (removed if value is None else set_).append(name)
    added = [(as_text(get(t, "name")) if isinstance(t, dict) else as_text(t),
              as_text(get(t, "description")) if isinstance(t, dict) else "")
             for t in (m.get("toolsAdded") if isinstance(m.get("toolsAdded"), list) else [])]
    gone = [as_text(get(t, "name")) if isinstance(t, dict) else as_text(t)
            for t in (m.get("toolsRemoved") if isinstance(m.get("toolsRemoved"), list) else [])]
    return set_, removed, added, gone


def system_summary(m: dict) -> str:
    """One line for a system message: its text, then what it changes."""
    texts, _ = content_parts(m.get("content"))
    set_, removed, added, gone = system_changes(m)
    parts = [" ".join(t for t in texts if t)] if any(texts) else []
    if set_:
        parts.append("sections " + ", ".join(set_))
    if removed:
        parts.append("removes sections " + ", ".join(removed))
    if added:
        parts.append("+tools " + ", ".join(n for n, _ in added))
    if gone:
        parts.append("-tools " + ", ".join(gone))
    return " \u00b7 ".join(parts) or "(empty system message)"


class _Builder:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.blocks: list = []

    def clipped(self, kind: str, text: str, lines: int | None, **kw) -> None:
        c = clip(text, lines, self.limits.chars)
        self.blocks.append(Block(kind, c.text, total_lines=c.total_lines, cut_lines=c.cut_lines,
                                 cut_chars=c.cut_chars, **kw))

    def json(self, v: Any) -> None:
        """Something pisess has no words for: clipped as prose is."""
        self.clipped("json", json_text(v, indent=not self.limits.compact_json), self.limits.prose_lines)

    def image(self, b: dict) -> None:
        self.blocks.append(Block("image", label=as_text(b.get("mimeType")), size=image_size(b),
                                 uri=data_uri(b) if self.limits.embed_images else None))

    def others(self, others: list) -> None:
        for b in others:
            if isinstance(b, dict) and b.get("type") == "image":
                self.image(b)
            elif b is not None and b is not UNDEF:
                self.json(b)

    def prose(self, content: Any) -> None:
        """User, custom and system content: each text block clipped on its own, then images and
        anything else."""
        texts, others = content_parts(content)
        for t in texts:
            self.clipped("text", t, self.limits.prose_lines)
        self.others(others)


def message_view(m: Any, src: Any, limits: Limits | None = None, *, converted_from: str | None = None) -> MessageView:
    """``m``, a message of the context, reached through entry ``src``, as every view shows it."""
    limits = limits or Limits()
    src_id = get(src, "id") if isinstance(src, dict) else None
    b = _Builder(limits)
    if not isinstance(m, dict):
        b.json(m)
        return MessageView(None, "message", "message", "Message", "entry", src_id, blocks=tuple(b.blocks),
                           converted_from=converted_from)
    role = m.get("role")
    kind = role_kind(m)
    heading, title = _TITLES.get(role, (kind, f"Message ({as_text(role) or '?'})")) if isinstance(role, str) \
        else (kind, f"Message ({as_text(role) or '?'})")
    source = "entry"
    if get(src, "type") == "compaction" and role != "compactionSummary":
        # a compaction yields its summary, then a retained tail (SDK) or its systemMessage (pi 1.6, C.5)
        source = "checkpoint" if role == "system" else "retained"
    ts = m.get("timestamp")
    time_ms = ts if number(ts) else (js.date_ms(ts) if isinstance(ts, str) else None)
    content = m.get("content")
    facts: list = []
    subject = ""
    about = ""
    error = False
    if role == "assistant":
        model = "/".join(x for x in (m.get("provider"), m.get("model")) if isinstance(x, str) and x) \
            if m.get("model") else ""
        facts = [x for x in (model, usage_text(m)) if x]
        stop = m.get("stopReason")
        if stop in ("error", "aborted"):
            b.blocks.append(Block("error", as_text(m.get("errorMessage")), label=stop))
        for c in content if isinstance(content, list) else [content]:
            t = c.get("type") if isinstance(c, dict) else None
            if t == "thinking":
                b.blocks.append(Block("thinking", as_text(c.get("thinking")), redacted=bool(c.get("redacted"))))
            elif t == "toolCall":
                # arguments are cut only by the character cap (one line on a terminal; a document
                # shows a write's whole file as the model sent it)
                b.clipped("call", json_text(c.get("arguments"), indent=not limits.compact_json), None,
                          label=as_text(c.get("name")))
            elif t == "text":
                b.blocks.append(Block("text", as_text(c.get("text"))))
            elif isinstance(c, str):
                b.blocks.append(Block("text", c))
            elif t == "image":
                b.image(c)
            elif c is not None and c is not UNDEF:
                b.json(c)
    elif role == "toolResult":
        subject = as_text(m.get("toolName"))
        texts, others = content_parts(content)
        text = "\n".join(texts)
        n = text.count("\n") + 1 if text else 0
        error = bool(m.get("isError"))
        facts = (["error"] if error else []) + [f"{n:,} line{'s' if n != 1 else ''}"]
        if text:
            b.clipped("output", text, limits.lines)
        b.others(others)
        if not b.blocks:
            b.blocks.append(Block("note", "(no output)"))
    elif role == "bashExecution":
        b.blocks.append(Block("command", as_text(m.get("command"))))
        output = as_text(m.get("output"))
        if output:
            b.clipped("output", output, limits.lines)
        code = m.get("exitCode")
        if m.get("cancelled"):
            facts.append("cancelled")
        elif code is not None and code is not UNDEF:
            facts.append(f"exit {as_text(code)}")
        if m.get("excludeFromContext"):
            facts.append("not sent to the model")
    elif role in ("compactionSummary", "branchSummary"):
        source = "compaction" if role == "compactionSummary" else "branch summary"
        tokens = m.get("tokensBefore")
        if role == "compactionSummary" and number(tokens):
            facts.append(f"{tokens:,.0f} tokens before")
        about = ("The model sees this summary in place of the conversation before it." if role == "compactionSummary"
                 else "A summary of a branch the conversation came back from.")
        b.clipped("text", as_text(m.get("summary")), limits.summary_lines)
    elif role in ("custom", "hookMessage"):
        subject = as_text(m.get("customType"))
        if m.get("display") is False:
            facts.append("hidden in pi's UI")
        b.prose(content)
    elif role == "system":
        b.prose(content)
        set_, removed, added, gone = system_changes(m)
        for label, items in (("sets sections", set_), ("removes sections", removed), ("adds tools", added),
                             ("removes tools", gone)):
            if items:
                b.blocks.append(Block("names", label=label, items=tuple(items)))
        if not b.blocks:
            b.blocks.append(Block("note", "(an empty system message)"))
    elif role == "user":
        b.prose(content)
    else:
        # a role pisess has no words for: its content as text, everything else it carries as JSON
        b.prose(content)
        rest = {k: v for k, v in m.items() if k not in ("role", "content", "timestamp")}
        if rest:
            b.json(rest)
    return MessageView(role if isinstance(role, str) else None, kind, heading, title, source, src_id, time_ms,
                       subject, tuple(facts), tuple(b.blocks), error, about, converted_from)
