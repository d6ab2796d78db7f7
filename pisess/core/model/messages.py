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

from dataclasses import dataclass
from typing import Any

from .. import js
from ..js import UNDEF, get
from . import kinds
from .text import as_text, content_parts, data_uri, image_size, json_text, number, system_changes, usage_text

# --- clipping -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """How much of each block a view shows.  ``None`` keeps everything.

    One rule for every view: a tool result and a shell command's output are cut at ``lines``;
    each text block of user, custom and system messages (and JSON of unknown things) at
    ``prose_lines``; a summary at ``summary_lines``; any of them, a tool call's arguments and an
    assistant's text and thinking at ``chars`` characters.  An assistant's text and thinking are
    never cut by lines (the reply is what a reader came for), but one line of 200,000 characters
    is 2,500 rows of a terminal, and a terminal wraps it in quadratic time."""

    lines: int | None = None
    prose_lines: int | None = None
    summary_lines: int | None = None
    chars: int | None = None
    compact_json: bool = False  # tool-call arguments and unknown blocks on one line (the terminal)
    embed_images: bool = False  # images as data: URIs (documents that asked for them)

    @classmethod
    def terminal(cls, max_lines: int, full: bool) -> Limits:
        """``pisess context``: ``--max-lines`` of each result (4x for text, 2x for summaries), or
        all with ``--full``; never more than ``TERMINAL_MAX_CHARS`` (``--json`` has everything).
        ``--max-lines 0`` keeps every line, as it does in ``pisess export``."""
        if full:
            return cls(chars=TERMINAL_MAX_CHARS, compact_json=False)
        if not max_lines:
            return cls(chars=TERMINAL_MAX_CHARS, compact_json=True)
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
    compaction's systemMessage), ``compaction`` or ``branch summary``.  ``time_ms`` is the
    timestamp of the entry the message is, as ``tree --time`` shows it and pi's own session view
    shows each message; a compaction's retained messages and systemMessage are no entries of their
    own (pi would show them all at the compaction's time) and keep theirs.  ``about`` says, for a
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
    warning: str | None = None  # what is wrong with it where it is (a tool result without its call)


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


def message_view(m: Any, src: Any, limits: Limits | None = None, *, converted_from: str | None = None,
                 origin: Any = None) -> MessageView:
    """``m``, a message of the context, reached through entry ``src``, as every view shows it.
    ``origin`` is the message convertToLlm turned into ``m`` (``context --llm``): how it reached
    the context is the original's (a compaction's summary is no retained message once a user one)."""
    limits = limits or Limits()
    src_id = get(src, "id") if isinstance(src, dict) else None
    b = _Builder(limits)
    if not isinstance(m, dict):
        b.json(m)
        return MessageView(None, "message", "message", "Message", "entry", src_id, blocks=tuple(b.blocks),
                           converted_from=converted_from)
    role = m.get("role")
    k = kinds.of_message(m)
    kind, heading, title = k.word, k.heading or k.word, k.title
    source = "entry"
    source_role = origin.get("role") if isinstance(origin, dict) else role
    if get(src, "type") == "compaction" and source_role == "compactionSummary":
        source = "compaction"
    elif get(src, "type") == "compaction":
        # a compaction yields its summary, then a retained tail (SDK) or its systemMessage (pi 1.6, C.5)
        source = "checkpoint" if role == "system" else "retained"
    ts = get(src, "timestamp") if isinstance(src, dict) and source == "entry" else UNDEF
    if not (number(ts) or isinstance(ts, str)):
        ts = m.get("timestamp")
    time_ms = ts if number(ts) else (js.date_ms(ts) if isinstance(ts, str) else None)
    content: Any = m.get("content")
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
                b.clipped("thinking", as_text(c.get("thinking")), None, redacted=bool(c.get("redacted")))
            elif t == "toolCall":
                # arguments are cut only by the character cap (one line on a terminal; a document
                # shows a write's whole file as the model sent it)
                b.clipped("call", json_text(c.get("arguments"), indent=not limits.compact_json), None,
                          label=as_text(c.get("name")))
            elif t == "text":
                b.clipped("text", as_text(c.get("text")), None)
            elif isinstance(c, str):
                b.clipped("text", c, None)
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
        b.prose(content if content != "" else None)  # a patch carries only sections and tools
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
        # a role pisess has no words for: its content as text, and the names of the other fields
        # it carries (never the raw object: context --json and export --format jsonl have it whole)
        b.prose(content)
        rest = [as_text(k) for k in m if k not in ("role", "content", "timestamp")]
        if rest:
            b.blocks.append(Block("note", f"(role {as_text(role) or '?'} is unknown to pisess; it also carries "
                                          f"{', '.join(rest)})"))
        elif not b.blocks:
            b.blocks.append(Block("note", f"(role {as_text(role) or '?'} is unknown to pisess; no content)"))
    return MessageView(role if isinstance(role, str) else None, kind, heading, title, source, src_id, time_ms,
                       subject, tuple(facts), tuple(b.blocks), error, about, converted_from)
