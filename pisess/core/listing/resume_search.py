"""pi 1.6's ``/resume`` search (``session-selector-search.js``): which sessions a query keeps.

The query is ``re:PATTERN`` (a regular expression, case-insensitive, tried on the session's name,
id, all its user and assistant message text joined by spaces, and cwd) or tokens separated by
whitespace, ``"quoted phrases"`` kept whole (an unclosed quote: plain whitespace tokens).  A
session is kept when every token matches: a token matches when its lower-cased text is in the
lower-cased name, id, message text or cwd, or (a token outside quotes only) when its characters
appear in order in the name or cwd (pi-tui's ``fuzzyMatch``, digits and letters also swapped:
``v2`` finds ``2v``); a phrase is matched with runs of whitespace collapsed to one space.  ``ls``
keeps its own order (pi's "recent" sort: filter only).

Differences from pi, said plainly: the regular expression is Python's (``re.IGNORECASE``), not
JavaScript's (the common syntax is the same; lookbehind, ``$`` before a final newline and
Unicode classes differ in edge cases), and letters are lower-cased by Python (``str.lower``,
which agrees with JavaScript's ``toLowerCase`` but for a few special cases such as the Greek final
sigma).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Query:
    mode: str  # tokens | regex
    tokens: list = field(default_factory=list)  # (kind, value): kind fuzzy | phrase
    regex: Any = None
    error: str | None = None


def parse(query: str) -> Query:
    """pi's ``parseSearchQuery``."""
    trimmed = query.strip()
    if not trimmed:
        return Query("tokens")
    if trimmed.startswith("re:"):
        pattern = trimmed[3:].strip()
        if not pattern:
            return Query("regex", error="Empty regex")
        try:
            return Query("regex", regex=re.compile(pattern, re.IGNORECASE))
        except (re.error, OverflowError, RecursionError) as e:
            return Query("regex", error=str(e))
    tokens: list = []
    buf: list[str] = []
    in_quote = False

    def flush(kind: str) -> None:
        v = "".join(buf).strip()
        buf.clear()
        if v:
            tokens.append((kind, v))

    for ch in trimmed:
        if ch == '"':
            if in_quote:
                flush("phrase")
                in_quote = False
            else:
                flush("fuzzy")
                in_quote = True
            continue
        if not in_quote and ch.isspace():
            flush("fuzzy")
            continue
        buf.append(ch)
    if in_quote:  # unbalanced quotes: plain whitespace tokens
        return Query("tokens", [("fuzzy", t) for t in trimmed.split() if t])
    flush("fuzzy")
    return Query("tokens", tokens)


def _normalized(text: str) -> str:
    return _WS.sub(" ", text.lower()).strip()


def _subsequence(q: str, text: str) -> bool:
    if not q:
        return True
    if len(q) > len(text):
        return False
    at = -1
    for ch in q:
        at = text.find(ch, at + 1)
        if at < 0:
            return False
    return True


_ALNUM = re.compile(r"^([a-z]+)([0-9]+)$")
_NUMAL = re.compile(r"^([0-9]+)([a-z]+)$")


def fuzzy_match(query: str, text: str) -> bool:
    """Whether pi-tui's ``fuzzyMatch(query, text)`` matches (its score is not needed here)."""
    q, t = query.lower(), text.lower()
    if _subsequence(q, t):
        return True
    m = _ALNUM.match(q) or _NUMAL.match(q)
    return m is not None and _subsequence(m.group(2) + m.group(1), t)


@dataclass(frozen=True)
class Candidate:
    """What the query is tried on: ``messages()`` is the message text, read only when needed."""

    name: str | None
    id: str
    cwd: str
    messages: Callable[[], str]
    may_hold: Callable[[int], bool] = lambda k: True  # False: the messages cannot hold token k (the index says)


def matches(q: Query, s: Candidate) -> bool:
    """pi's ``matchSession(...).matches``."""
    if q.mode == "regex":
        if q.regex is None:
            return False
        rx = q.regex
        return bool((s.name and rx.search(s.name)) or rx.search(s.id) or rx.search(s.messages())
                    or rx.search(s.cwd))
    for k, (kind, value) in enumerate(q.tokens):
        if kind == "phrase":
            phrase = _normalized(value)
            if not phrase:
                continue
            if not (phrase in _normalized(s.name or "") or phrase in s.id.lower()
                    or (s.may_hold(k) and phrase in _normalized(s.messages())) or phrase in _normalized(s.cwd)):
                return False
        else:
            v = value.lower()
            if not ((v in (s.name or "").lower()) or v in s.id.lower()
                    or (s.may_hold(k) and v in s.messages().lower())
                    or v in s.cwd.lower() or fuzzy_match(value, s.name or "") or fuzzy_match(value, s.cwd)):
                return False
    return True


_IK = re.compile("[^iIkK]{3,}")  # JavaScript lower-cases İ and K (Kelvin) to i and k
_ASCII_WORD = re.compile(r"[\x21-\x7e]+")


def message_runs(q: Query) -> list[list[str]] | None:
    """For each token, ASCII runs of 3+ characters its message-text match needs (an empty list: the
    token can match without them, e.g. a short one); ``None`` for a regular expression.  A session
    whose user and assistant text (as the search index holds it) lacks a token's runs can only
    match that token on its name, id or cwd."""
    if q.mode == "regex":
        return None
    out = []
    for _kind, value in q.tokens:
        runs = [r for w in _ASCII_WORD.findall(value) for r in _IK.findall(w)]
        out.append(runs if all(ord(c) < 128 for c in value) else [])
    return out


__all__ = ["Query", "parse", "fuzzy_match", "Candidate", "matches", "message_runs"]
