"""The vocabulary every view shares: session text made safe to show (visible control
characters, JSON as text, short ids, one line), an image's size, an assistant's usage, what a
system message changes.  Plain functions on purpose (no dataclasses): the one-line previews of
the kind table (``pisess.core.model.kinds``) use them without loading the message model
(``pisess.core.model.messages``), which builds on them."""

from __future__ import annotations

import re

import orjson

from .. import js
from ..js import UNDEF, get
from ..reading.images import elided, image_chars, read_data
from .system import js_key_order

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# C0/C1 controls, DEL, line/paragraph separators, bidi overrides, lone surrogates
CONTROL_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
# A zero-width joiner that joins nothing (first, after whitespace, after another joiner): invisible,
# and Rich 15 cannot lay out a line that begins with two of them before a wide character (it raises
# while wrapping).  Joiners inside an emoji sequence are kept.
LOOSE_JOINER = "(?<![^\\s\u200d])\u200d"
_CONTROL = re.compile(f"[{CONTROL_CHARS}]|{LOOSE_JOINER}")


def _visible_char(m: re.Match) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def visible(v: Any) -> str:
    """Any value as text for a document: CRLF folded to LF, control characters, bidi overrides and
    lone surrogates made visible (``\\x1b``), tabs and newlines kept."""
    s = v if isinstance(v, str) else ("" if v is None or v is UNDEF else json_text(v, indent=False))
    if s.isprintable():  # (every character _CONTROL matches, and CR, is Unicode's Other or Separator)
        return s
    if "\r" in s:
        s = s.replace("\r\n", "\n")
    return _CONTROL.sub(_visible_char, s) if _CONTROL.search(s) else s


def one_line(s: str, width: int) -> str:
    """``s`` on one line: whitespace folded, control characters made visible, cut to ``width`` with
    an ellipsis (no cut for a ``width`` of 0)."""
    if (width <= 0 or len(s) <= head_chars(width)) and s.isprintable() and "  " not in s and s[:1] != " " != s[-1:]:
        # (a line already: the one whitespace printable text holds is the space, single and inside
        # here, so there is nothing to fold or to show)
        return s if width <= 0 or len(s) <= width else s[: max(1, width - 1)] + "\u2026"
    got = one_line_head(s, width)
    if got is not None:
        return got
    s = visible(" ".join(s.split()))
    if width > 0 and len(s) > width:
        return s[: max(1, width - 1)] + "\u2026"
    return s


def head_chars(width: int) -> int:
    """How much of a text ``one_line_head`` reads: a prefix one longer than this decides the line
    whenever the head does."""
    return 4 * width + 64


def one_line_head(s: str, width: int) -> str | None:
    """``one_line(s, width)`` when the first ``head_chars(width)`` characters of ``s`` decide it
    (``s`` is longer, and its head alone folds to more than ``width``), else ``None``.  So a
    prefix of a text longer than ``head_chars`` that this answers gives the whole text's line."""
    if width > 0 and len(s) > head_chars(width):
        # (a preview of a long reply: folding and showing a prefix gives a prefix of the whole
        # text's line, so when that is already too long the rest of the text cannot matter)
        head = visible(" ".join(s[:head_chars(width)].split()))
        if len(head) > width:
            return head[: max(1, width - 1)] + "\u2026"
    return None


def json_text(v: Any, indent: bool = True) -> str:
    """A JSON value as text (non-ASCII kept); compact on one line unless ``indent``."""
    try:
        return orjson.dumps(v, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except TypeError:  # lone surrogates, integers beyond 64 bits, nesting beyond orjson's limit
        pass
    import json

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


# --- images ---------------------------------------------------------------------------------------

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_size(block: Any) -> int:
    """Decoded bytes of an image block's base64 ``data`` (padding not counted)."""
    n, pad = image_chars(get(block, "data") if isinstance(block, dict) else None)
    return max(0, n * 3 // 4 - pad)


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
    e = elided(data)
    if e is not None:
        data = read_data(e)
    if mime not in IMAGE_TYPES or not isinstance(data, str) or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", data):
        return None
    return f"data:{mime};base64,{data}"


# --- what a message carries -----------------------------------------------

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
    set_: list = []
    removed: list = []
    if isinstance(sections, dict):
        for name, value in js_key_order(sections):
            (removed if value is None else set_).append(name)
    added = [(as_text(get(t, "name")) if isinstance(t, dict) else as_text(t),
              as_text(get(t, "description")) if isinstance(t, dict) else "")
             for t in _list_or_empty(m.get("toolsAdded"))]
    gone = [as_text(get(t, "name")) if isinstance(t, dict) else as_text(t) for t in _list_or_empty(m.get("toolsRemoved"))]
    return set_, removed, added, gone


def _list_or_empty(v: Any) -> list:
    return v if isinstance(v, list) else []


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
