"""What each entry is: one row per (entry type, message role), the one table every view reads.

A row says the word the views show for the entry (tree, path, du, search, watch, the context's
headings), the name of its style (the views map style names to their own styles: Rich's in the
terminal), the pi release it appears from (``pisess.core.versions``), how ``tree`` shows it,
which ``search --in`` field holds its text, the texts ``search`` looks in, and its one-line
preview.  Plain data and plain functions (no Rich): ``browse`` and ``diff`` take their words and
previews from here too.

For ``message`` rows the functions get the message (``entry["message"]``), so a message a
compaction retains is described as the entry that wrote it; for every other row they get the
entry.  A new entry type is one row here plus its real semantics (what the context does with it).

Previews and texts are raw session text: a view escapes control characters and cuts them to its
width (``pisess.cli.views.text.one_line``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .. import js, versions
from ..js import UNDEF, get
from .text import as_text, head_chars, image_ref, one_line, one_line_head, system_summary, usage_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    # How ``tree`` shows an entry: ``row`` an ordinary row (the middle of a long run folds),
    # ``kept`` a row that never folds away (it changes what the model sees or names something),
    # ``dim`` bookkeeping pi's own tree hides, drawn dimmed.
    TreeShow = Literal["row", "kept", "dim"]

# ``search --in`` fields (``pisess search --in``), in the order help lists them
FIELDS = ("user", "assistant", "thinking", "tool", "summary", "custom", "label", "name", "system", "edit")
# The style names a row may carry; each view maps every one of them (``KIND_STYLE`` in the terminal).
STYLES = ("user", "assistant", "tool", "summary", "mark", "meta", "ext", "system", "edit", "plain")

Found = tuple[str, str, str, str]  # (search field, kind word, prefix, text): one string search looks in


@dataclass(frozen=True)
class Part:
    """A piece of an entry that ``search`` names apart from its row (an assistant's thinking, a
    tool call, a system prompt's tool definition)."""

    word: str
    style: str
    search: str


@dataclass(frozen=True)
class Kind:
    type: str  # the entry's ``type``
    role: str | None  # the message's ``role`` (``message`` rows only)
    word: str  # the word every view shows (at most 10 characters: tree's and path's kind column)
    style: str  # a style name of ``STYLES``
    since: tuple[int, ...] | None  # the first pi release writing it (``versions``); None: every pi pisess knows
    tree: TreeShow
    search: str | None  # the ``search --in`` field its own text is found under; None: nothing searchable
    preview: Callable[[Any, int], str]  # (entry or message, id width) -> one line
    texts: Callable[[Any, Kind], Iterator[Found]]  # (entry or message, this row) -> what search looks in
    heading: str = ""  # the context view's heading when it differs from ``word`` (``tool result``)
    title: str = ""  # a document's heading (``export``): ``Tool result``

    def known_in(self, pi_version: str) -> bool:
        """Does pi ``pi_version`` write (and read) this kind?"""
        return self.since is None or versions.since(pi_version, self.since)


THINKING = Part("thinking", "meta", "thinking")
TOOL_CALL = Part("tool call", "tool", "tool")
TOOL_DEF = Part("tool def", "plain", "system")
PARTS = (THINKING, TOOL_CALL, TOOL_DEF)


# --- text helpers -----------------------------------------------------------------------------------


def content_text(content: Any, images: bool = True) -> str:
    """A message's content as one string: its texts (and ``[image …]`` refs), space-joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return as_text(content)
    return content_head(content, None, images)[0]


def content_head(content: Any, limit: int | None, images: bool = True) -> tuple[str, bool]:
    """``content_text`` with each of its parts cut to ``limit`` characters (``None``: whole), and
    whether one was: a part cut gives ``limit`` characters already, so the first ``limit`` of
    the answer are ``content_text``'s (a one-line preview reads no more)."""
    if isinstance(content, str) or not isinstance(content, list):
        text = content if isinstance(content, str) else as_text(content)
        return (text[:limit], True) if limit is not None and len(text) > limit else (text, False)
    parts = []
    cut = False
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            p = as_text(b.get("text"))
        elif t == "image" and images:
            p = image_ref(b, escape=lambda x: x)
        else:
            continue
        if p:
            if limit is not None and len(p) > limit:
                p = p[:limit]
                cut = True
            parts.append(p)
    return " ".join(parts), cut


def model_words(provider: Any, model: Any) -> str:
    """``provider/model`` (``?`` for a missing half); ``unknown`` when neither is known."""
    p, m = as_text(provider), as_text(model)
    return f"{p or '?'}/{m or '?'}" if p or m else "unknown"


def tool_call_text(block: dict, width: int = 60) -> str:
    """``name(argument)``: the one argument's value, or all of them as JSON, cut to ``width``."""
    args = block.get("arguments")
    inner = as_text(next(iter(args.values()))) if isinstance(args, dict) and len(args) == 1 else as_text(args)
    return f"{as_text(block.get('name'))}({one_line(inner, width)})"


def _text_blocks(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                yield b["text"]


def _strings(v: Any) -> Iterator[str]:
    """Every string value inside ``v`` (not keys), depth-first, without recursion."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, list):
            stack.extend(reversed(x))


# --- messages: previews and texts --------------------------------------------------------------------


# A preview's "head" function: the preview with its long texts cut to ``limit`` characters (``None``:
# whole), and whether one was (a cut text gives ``limit`` characters: the first ``limit`` of the
# answer are the preview's).  ``message_line`` reads a long message no further than a line needs.


def _content_preview(m: Any, id_width: int = 8) -> str:
    return content_text(m.get("content"))


def _content_preview_head(m: Any, limit: int | None) -> tuple[str, bool]:
    return content_head(m.get("content"), limit)


def _assistant_preview(m: Any, id_width: int = 8) -> str:
    return _assistant_preview_head(m, None)[0]


def _assistant_preview_head(m: Any, limit: int | None) -> tuple[str, bool]:
    content = m.get("content")
    out, cut = content_head(content, limit)
    calls = ([b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
             if isinstance(content, list) else [])
    if calls:
        out = (out + " " if out else "") + " ".join("\u2192 " + tool_call_text(c, 40) for c in calls)
    stop = m.get("stopReason")
    if stop in ("error", "aborted"):
        err = as_text(m.get("errorMessage"))
        out = f"[{stop}{': ' + err if err else ''}] " + out
    if not out and isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "thinking"
                                                     for b in content):
        out = "(thinking only)"
    return out, cut


def _tool_result_preview(m: Any, id_width: int = 8) -> str:
    return _tool_result_preview_head(m, None)[0]


def _tool_result_preview_head(m: Any, limit: int | None) -> tuple[str, bool]:
    content = m.get("content")
    block = content[0] if type(content) is list and len(content) == 1 else None
    text = block.get("text") if type(block) is dict and block.get("type") == "text" else None
    if type(text) is not str:  # (else the one text block is the content's text: as content_text joins it)
        text = content_text(content)  # (whole: its lines are counted)
    lines = text.count("\n") + 1 if text else 0
    mark = "\u2717 error" if m.get("isError") else "\u2713"
    first = _first_line(text)
    cut = limit is not None and len(first) > limit
    if cut:
        first = first[:limit]
    return (f"{as_text(m.get('toolName'))} {mark} {lines} line{'s' if lines != 1 else ''}"
            + (f" \u00b7 {first}" if first else "")), cut


_NOT_SPACE = re.compile(r"\S")  # (Python's whitespace, as str.strip's)


def _first_line(text: str) -> str:
    """``text.strip().split("\\n", 1)[0]`` without copying a long text twice."""
    start = _NOT_SPACE.search(text)
    if start is None:
        return ""
    end = text.find("\n", start.start())
    if end < 0 or _NOT_SPACE.search(text, end) is None:  # (one line, or only space after it)
        return text.strip()
    return text[start.start():end]


def _bash_preview(m: Any, id_width: int = 8) -> str:
    code = m.get("exitCode")
    tail = " (cancelled)" if m.get("cancelled") else (f" (exit {as_text(code)})" if code not in (None, UNDEF, 0) else "")
    excl = " [not in context]" if m.get("excludeFromContext") else ""
    return f"$ {as_text(m.get('command'))}{tail}{excl}"


def _ext_preview(m: Any, id_width: int = 8) -> str:
    """An extension's message (a ``custom`` role, a ``custom_message`` entry): ``[type] text``."""
    return f"[{as_text(m.get('customType'))}] {content_text(m.get('content'))}"


def _summary_preview(e: Any, id_width: int = 8) -> str:
    return as_text(e.get("summary"))


def _system_preview(m: Any, id_width: int = 8) -> str:
    return system_summary(m)


def _text_texts(m: Any, k: Kind) -> Iterator[Found]:
    for s in _text_blocks(m.get("content")):
        yield k.search or "", k.word, "", s


def _assistant_texts(m: Any, k: Kind) -> Iterator[Found]:
    content = m.get("content")
    for b in content if isinstance(content, list) else [content]:
        if isinstance(b, str):
            yield k.search or "", k.word, "", b
        if not isinstance(b, dict):
            continue
        bt = b.get("type")
        if bt == "text" and isinstance(b.get("text"), str):
            yield k.search or "", k.word, "", b["text"]
        elif bt == "thinking" and isinstance(b.get("thinking"), str):
            yield THINKING.search, THINKING.word, "", b["thinking"]
        elif bt == "toolCall":
            name = b.get("name")
            name_s = name if isinstance(name, str) else ""
            if name_s:
                yield TOOL_CALL.search, TOOL_CALL.word, "", name_s
            for s in _strings(b.get("arguments")):
                yield TOOL_CALL.search, TOOL_CALL.word, f"{name_s}: " if name_s else "", s
    if isinstance(m.get("errorMessage"), str):
        yield k.search or "", k.word, "error: ", m["errorMessage"]


def _bash_texts(m: Any, k: Kind) -> Iterator[Found]:
    cmd = m.get("command")
    for s in [cmd] if isinstance(cmd, str) else _strings(cmd):
        yield k.search or "", k.word, "$ ", s
    if isinstance(m.get("output"), str):
        yield k.search or "", k.word, "", m["output"]


def _summary_texts(e: Any, k: Kind) -> Iterator[Found]:
    if isinstance(e.get("summary"), str):
        yield k.search or "", k.word, "", e["summary"]


def _system_texts(m: Any, k: Kind) -> Iterator[Found]:
    """A system message's prompt text, its sections (named) and its tools' names and descriptions."""
    for s in _text_blocks(m.get("content")):
        yield k.search or "", k.word, "", s
    sections = m.get("sections")
    for name, value in sections.items() if isinstance(sections, dict) else ():
        if isinstance(value, str):
            yield k.search or "", k.word, f"[{name}] ", value
    tools = m.get("toolsAdded")
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") if isinstance(tool.get("name"), str) else ""
        if name:
            yield TOOL_DEF.search, TOOL_DEF.word, "", name
        if isinstance(tool.get("description"), str):
            yield TOOL_DEF.search, TOOL_DEF.word, f"{name}: " if name else "", tool["description"]


def _no_texts(e: Any, k: Kind) -> Iterator[Found]:
    return iter(())


# --- other entries: previews and texts ----------------------------------------------------------------


def _model_preview(e: Any, id_width: int = 8) -> str:
    return model_words(e.get("provider"), e.get("modelId"))


def _thinking_preview(e: Any, id_width: int = 8) -> str:
    return as_text(e.get("thinkingLevel"))


def _tools_preview(e: Any, id_width: int = 8) -> str:
    names = e.get("activeToolNames")
    return ", ".join(as_text(n) for n in names) if isinstance(names, list) else as_text(names)


def _compaction_preview(e: Any, id_width: int = 8) -> str:
    tokens = e.get("tokensBefore")
    parts = []
    if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
        parts.append(f"{tokens:,.0f} tokens before")
    if "retainedTail" in e:
        tail = e.get("retainedTail")
        parts.append(f"retains {len(tail) if isinstance(tail, list) else '?'} messages")
    if js.truthy(e.get("firstKeptEntryId")):
        parts.append(f"keeps from {as_text(e.get('firstKeptEntryId'))[:id_width]}")
    summary = as_text(e.get("summary")).split("\n", 1)[0]
    return " \u00b7 ".join(parts) + (f"  {summary}" if summary else "")


def _compaction_texts(e: Any, k: Kind) -> Iterator[Found]:
    yield from _summary_texts(e, k)
    sm = e.get("systemMessage")
    if isinstance(sm, dict):  # pi 1.6's replayed prompt (C.5): found as the system message it is
        yield from _system_texts(sm, of("message", "system"))


def _label_preview(e: Any, id_width: int = 8) -> str:
    lbl = e.get("label")
    target = as_text(e.get("targetId"))[:id_width]
    return f"[{as_text(lbl)}] \u2192 {target}" if js.truthy(lbl) else f"clear \u2192 {target}"


def _label_texts(e: Any, k: Kind) -> Iterator[Found]:
    if isinstance(e.get("label"), str):
        yield k.search or "", k.word, "", e["label"]


def _name_preview(e: Any, id_width: int = 8) -> str:
    name = e.get("name")
    return f"\u201c{as_text(name)}\u201d" if js.truthy(name) else "(name cleared)"


def _name_texts(e: Any, k: Kind) -> Iterator[Found]:
    if isinstance(e.get("name"), str):
        yield k.search or "", k.word, "", e["name"]


def _ext_state_preview(e: Any, id_width: int = 8) -> str:
    return f"{as_text(e.get('customType'))} {as_text(e.get('data'))}"


def _leaf_preview(e: Any, id_width: int = 8) -> str:
    target = e.get("targetId")
    return f"\u21b7 leaf \u2192 {as_text(target)[:id_width] if target else '(before the first entry)'}"


def _edit_preview(e: Any, id_width: int = 8) -> str:
    """``hides a1b2c3d4`` / ``replaces a1b2c3d4: new text`` (pi 1.x context edits)."""
    target = as_text(e.get("targetId"))[:id_width] or "?"
    if "replacement" not in e:
        return f"edits {target} (no replacement: pi throws)"
    r = e["replacement"]
    if r is None:
        return f"hides {target}"
    text = content_text(r.get("content")) if isinstance(r, dict) else ""
    return f"replaces {target}" + (f": {text}" if text else "")


def _edit_texts(e: Any, k: Kind) -> Iterator[Found]:
    r = e.get("replacement")
    if isinstance(r, dict):
        yield from _text_texts(r, k)


def _usage_preview(e: Any, id_width: int = 8) -> str:
    model = model_words(e.get("provider"), e.get("model"))
    model = "model unknown" if model == "unknown" else model
    note = e.get("note")
    return " \u00b7 ".join(p for p in (as_text(e.get("kind")) or "(no kind)", model, usage_text(e) or "no usage",
                                       as_text(note) if note else "") if p)


def _unknown_entry_preview(e: Any, id_width: int = 8) -> str:
    return as_text({k: v for k, v in e.items() if k not in ("type", "id", "parentId", "timestamp")})


def _unknown_message_preview(m: Any, id_width: int = 8) -> str:
    # a role pisess has no words for (the kind column names it): its text, never the raw object
    return content_text(m.get("content")) or "(no text)"


# --- the table ------------------------------------------------------------------------------------------

_M = "message"
KINDS: tuple[Kind, ...] = (
    Kind(_M, "user", "user", "user", None, "row", "user", _content_preview, _text_texts, title="User"),
    Kind(_M, "assistant", "assistant", "assistant", None, "row", "assistant", _assistant_preview, _assistant_texts,
         title="Assistant"),
    Kind(_M, "toolResult", "tool", "tool", None, "row", "tool", _tool_result_preview, _text_texts,
         heading="tool result", title="Tool result"),
    Kind(_M, "bashExecution", "bash", "tool", None, "row", "tool", _bash_preview, _bash_texts, title="Shell command"),
    Kind(_M, "custom", "ext msg", "ext", None, "row", "custom", _ext_preview, _text_texts, title="Extension message"),
    Kind(_M, "hookMessage", "ext msg", "ext", None, "row", "custom", _ext_preview, _text_texts,
         title="Extension message"),
    Kind(_M, "branchSummary", "branch sum", "summary", None, "row", "summary", _summary_preview, _summary_texts,
         heading="branch summary", title="Branch summary"),
    Kind(_M, "compactionSummary", "compaction", "summary", None, "row", "summary", _summary_preview, _summary_texts,
         heading="compaction summary", title="Compaction summary"),
    Kind(_M, "system", "system", "system", versions.SYSTEM_MESSAGES, "row", "system", _system_preview, _system_texts,
         title="System message"),
    Kind("model_change", None, "model", "meta", None, "row", None, _model_preview, _no_texts),
    Kind("thinking_level_change", None, "thinking", "meta", None, "row", None, _thinking_preview, _no_texts),
    Kind("active_tools_change", None, "tools", "meta", None, "row", None, _tools_preview, _no_texts),
    Kind("compaction", None, "compaction", "summary", None, "kept", "summary", _compaction_preview, _compaction_texts),
    Kind("branch_summary", None, "branch sum", "summary", None, "kept", "summary", _summary_preview, _summary_texts),
    Kind("label", None, "label", "mark", None, "kept", "label", _label_preview, _label_texts),
    Kind("session_info", None, "name", "mark", None, "kept", "name", _name_preview, _name_texts),
    Kind("custom", None, "ext state", "meta", None, "row", None, _ext_state_preview, _no_texts),
    Kind("custom_message", None, "ext msg", "ext", None, "row", "custom", _ext_preview, _text_texts),
    Kind("leaf", None, "leaf", "mark", None, "kept", None, _leaf_preview, _no_texts),
    Kind("context_edit", None, "edit", "edit", versions.CONTEXT_EDITS, "kept", "edit", _edit_preview, _edit_texts),
    Kind("usage", None, "usage", "meta", versions.SYSTEM_MESSAGES, "dim", None, _usage_preview, _no_texts),
)
_BY_KEY: dict[tuple[str, str | None], Kind] = {}
_LINES: dict = {}  # a role -> (its row, its preview's head function): message_line's, until a row changes


def register(kind: Kind) -> None:
    """Add (or replace) a row: the one place a new kind goes in."""
    _BY_KEY[(kind.type, kind.role)] = kind
    _LINES.clear()


def unregister(type_: str, role: str | None = None) -> None:
    _BY_KEY.pop((type_, role), None)
    _LINES.clear()


for _k in KINDS:
    register(_k)


def rows() -> tuple[Kind, ...]:
    """Every row, in table order (registered ones last)."""
    return tuple(_BY_KEY.values())


def of(type_: Any, role: Any = None) -> Kind:
    """The row of an entry type (and a message's role).  A type or role pisess has no row for gets
    one made up on the spot: its own name as the word (``?type`` for an entry type, the role for a
    message, ``message`` for a message without one), plain, nothing searchable."""
    k = _BY_KEY.get((type_, role if type_ == _M and isinstance(role, str) else None)) \
        if isinstance(type_, str) else None
    if k is not None:
        return k
    if type_ == _M:
        word = as_text(role) or "message"
        return Kind(_M, role if isinstance(role, str) else None, word, "plain", None, "row", None,
                    _unknown_message_preview, _no_texts, title=f"Message ({as_text(role) or '?'})")
    word = f"?{as_text(type_)}" if type_ is not UNDEF else "?"
    return Kind(as_text(type_), None, word, "plain", None, "row", None, _unknown_entry_preview, _no_texts)


def of_message(m: Any) -> Kind:
    """The row of a message (``message`` for one that is not an object)."""
    return of(_M, get(m, "role") if isinstance(m, dict) else UNDEF)


def of_entry(e: Any) -> Kind:
    """The row of an entry; a message entry's is its message's."""
    t = get(e, "type") if isinstance(e, dict) else UNDEF
    return of_message(e.get("message")) if t == _M else of(t)


def by_word(word: str) -> Kind | Part | None:
    """The first row or part showing ``word`` (every row and part with one word has one style)."""
    found: list[Kind | Part] = [*rows(), *PARTS]
    return next((k for k in found if k.word == word), None)


def word(e: Any) -> str:
    """The word every view shows for entry ``e``."""
    return of_entry(e).word


def preview(e: Any, id_width: int = 8) -> str:
    """A line about entry ``e``; the ids it names cut to ``id_width`` (``Session.id_width``)."""
    if not isinstance(e, dict):
        return as_text(e)
    if e.get("type") == _M:
        return message_preview(e.get("message"), id_width)
    return of(e.get("type")).preview(e, id_width)


def message_preview(m: Any, id_width: int = 8) -> str:
    """A line about message ``m``."""
    if not isinstance(m, dict):
        return as_text(m)
    return of_message(m).preview(m, id_width)


_PREVIEW_HEADS: dict = {_content_preview: _content_preview_head, _assistant_preview: _assistant_preview_head,
                        _tool_result_preview: _tool_result_preview_head}


def preview_line(e: Any, id_width: int = 8, width: int = 64) -> str:
    """``one_line(preview(e, id_width), width)``, reading no more of a long message than the line
    needs (``message_line``)."""
    if isinstance(e, dict) and e.get("type") == _M:
        return message_line(e.get("message"), width, id_width)
    return one_line(preview(e, id_width), width)


def message_line(m: Any, width: int, id_width: int = 8) -> str:
    """``one_line(message_preview(m, id_width), width)``: a user's, an assistant's or a tool
    result's preview from the heads of its texts (``text.one_line_head``), the whole preview only
    when the head does not decide the line (a head of mostly whitespace)."""
    if not isinstance(m, dict):
        return one_line(as_text(m), width)
    role = m.get("role")
    got = _LINES.get(role) if type(role) is str else None
    if got is None:
        k = of_message(m)
        got = k, _PREVIEW_HEADS.get(k.preview)
        if type(role) is str and (_M, role) in _BY_KEY:  # (a made-up row is made again: no role of a file kept)
            _LINES[role] = got
    k, head = got
    if head is None or width <= 0:
        return one_line(k.preview(m, id_width), width)
    text, cut = head(m, head_chars(width) + 1)
    if cut:
        line = one_line_head(text, width)
        return line if line is not None else one_line(k.preview(m, id_width), width)
    return one_line(text, width)


def texts(e: Any) -> Iterator[Found]:
    """``(field, kind word, prefix, text)`` for each string ``search`` looks in, in entry ``e``."""
    if not isinstance(e, dict):
        return
    if e.get("type") == _M:
        m = e.get("message")
        if isinstance(m, dict):
            yield from (k := of_message(m)).texts(m, k)
        return
    k = of(e.get("type"))
    yield from k.texts(e, k)


def known_types(pi_version: str) -> set[str]:
    """The entry types pi ``pi_version`` writes."""
    return {k.type for k in rows() if k.role is None and k.known_in(pi_version)} | {_M}
