"""The rows a line of a session adds to the search index.

The index holds, for each line of each indexed file, the searchable text of that line's entry, one
row per field (``scan.entry_texts``, the strings of a field joined by newlines; a line that is not
JSON is one row of field ``raw``, its bytes decoded as the scan decodes them), keyed by file, byte
offset, length, physical line, field and entry id.  FTS5's trigram tokenizer (case-insensitive,
positions not kept: ``detail=none``) indexes the text.
"""

from __future__ import annotations

import re

import orjson

from ...js import to_string
from ...reading.jsonl import NOT_JSON, is_blank
from ...reading.scan import parse_line
from .scan import entry_texts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BAD = re.compile("[\x00\ud800-\udfff]")  # no trigram holds these (SQLite stops at NUL; no UTF-8 for a surrogate)


def _clean(text: str) -> str:
    return BAD.sub("\ufffd", text) if not text.isascii() or "\x00" in text else text


BLANK = object()  # a blank line's value (``parsed``): no entry


def parsed(raw: bytes) -> Any:
    """The line's value as the scan parses it; ``BLANK`` for a blank line."""
    return BLANK if is_blank(raw) else parse_line(raw)


def line_rows(raw: bytes, off: int, number: int, v: Any) -> list[tuple]:
    """``(off, len, line, field, entry id, text, skip_at, skip_end)`` of one line whose value is
    ``v`` (``parsed``): the rows it adds to the index (``skip_*``: ``unread_span``, or ``None``)."""
    if v is BLANK:
        return []
    if v is NOT_JSON:
        return [(off, len(raw), number, "raw", None, _clean(raw.decode("utf-8", "replace")), None, None)]
    if not isinstance(v, dict) or v.get("type") == "session":
        return []
    by_field: dict[str, list[str]] = {}
    for fld, _kind, prefix, text in entry_texts(v):
        if text:
            by_field.setdefault(fld, []).append(prefix + text if prefix else text)
    for fld, text in _listed_extras(v):  # (what pi's /resume search reads of a message that search does not)
        by_field.setdefault(fld, []).append(text)
    if not by_field:
        return []
    eid = v.get("id")
    eid = _clean(eid) if isinstance(eid, str) else None
    at, end = unread_span(raw, v) or (None, None)
    return [(off, len(raw), number, fld, eid, _clean("\n".join(texts)), at, end) for fld, texts in by_field.items()]


TAIL_KEY = b'"retainedTail":'


def unread_span(raw: bytes, v: Any) -> tuple[int, int] | None:
    """``(start, end)`` in ``raw`` of the bytes of a compaction's ``retainedTail`` (the copies of
    the kept messages pi's harness writes with its compactions): bytes search never reads (copies
    are not searched again), and most of the line, hundreds of KB beside a summary of a few
    hundred bytes.  The index keeps the span with the line's rows, so a line read back for a hit
    is read and parsed without them (``line_back``): the 56 compaction lines with hits of a
    200 MB session hold 7 MB of copies, 9 of a warm search's 23 ms to parse.

    The list is looked for as compact JSON (as pi's ``JSON.stringify`` and orjson write it), once
    in the line, and kept only where the line with ``[]`` in its place parses to an entry with the
    same searchable texts, so a search of either finds the same; else ``None`` (parsed whole)."""
    if type(v) is not dict or v.get("type") != "compaction":
        return None
    tail = v.get("retainedTail")
    if type(tail) is not list or not tail:
        return None
    try:
        written = TAIL_KEY + orjson.dumps(tail)
    except (TypeError, orjson.JSONEncodeError):
        return None
    at = raw.find(written)
    if at < 0 or raw.find(written, at + 1) >= 0:
        return None
    start, end = at + len(TAIL_KEY), at + len(written)
    lean = parse_line(raw[:start] + b"[]" + raw[end:])
    if type(lean) is not dict or list(entry_texts(lean)) != list(entry_texts(v)):
        return None
    return start, end


def _listed_extras(v: dict) -> list[tuple[str, str]]:
    """Text blocks of user and assistant messages whose ``text`` is not a string: pi's listing
    makes text of it (``ls --search`` reads it), search does not."""
    m = v.get("message") if v.get("type") == "message" else None
    if type(m) is not dict or m.get("role") not in ("user", "assistant") or type(m.get("content")) is not list:
        return []
    out = []
    for b in m["content"]:
        if type(b) is dict and b.get("type") == "text":
            t = b.get("text")
            if t is not None and type(t) is not str:
                out.append((m["role"], to_string(t)))
    return out

