"""Entries as the terminal shows them: the kind table's words (escaped) and style names mapped to
Rich styles, previews, times.

The words and previews come from the kind table (``pisess.core.model.kinds``); this module only
makes them safe for a terminal and says which Rich style each style name is.
"""

from __future__ import annotations

from typing import Any

from pisess.cli.views.text import escape_controls
from pisess.core import js
from pisess.core.model import kinds
from pisess.core.model.kinds import model_words  # noqa: F401  (watch's model line)
from pisess.core.model.text import as_text as s  # noqa: F401  (any JSON value as display text)

# the Rich style of each of the kind table's style names
STYLE = {"user": "bold cyan", "assistant": "green", "tool": "yellow", "summary": "magenta", "mark": "blue",
         "meta": "dim", "ext": "cyan", "system": "blue", "edit": "yellow", "plain": ""}


def word(k: kinds.Kind | kinds.Part) -> str:
    """A row's word as a terminal shows it (a type or role pisess does not know is session text)."""
    return escape_controls(k.word)


def style(k: kinds.Kind | kinds.Part) -> str:
    return STYLE[k.style]


def word_style(w: str) -> str:
    """The Rich style of a kind word (a search hit carries the word only)."""
    k = kinds.by_word(w)
    return STYLE[k.style] if k is not None else ""


def entry_kind(e: Any) -> str:
    """The word for entry ``e``, escaped."""
    return escape_controls(kinds.word(e))


def entry_preview(e: Any, id_width: int = 8) -> str:
    """A line about ``e`` (the kind table's preview); ids cut to ``id_width`` (``Session.id_width``)."""
    return kinds.preview(e, id_width)


def local_time(iso: Any, with_date: bool = True) -> str:
    ms = (js.date_ms(iso) if isinstance(iso, str)
          else iso if isinstance(iso, (int, float)) and not isinstance(iso, bool) else None)
    if ms is None:
        return escape_controls(s(iso)) or "?"
    import time

    try:
        t = time.localtime(ms / 1000)
    except (OverflowError, OSError, ValueError):
        return escape_controls(s(iso))
    return time.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S", t)


def relative_age(iso: Any, now_ms: float) -> str:
    ms = js.date_ms(iso) if isinstance(iso, str) else None
    if ms is None:
        return "?"
    d = (now_ms - ms) / 1000
    if d < 0:
        return "future"
    for limit, div, unit in ((60, 1, "s"), (3600, 60, "m"), (86400, 3600, "h"), (86400 * 14, 86400, "d"),
                             (86400 * 60, 86400 * 7, "w"), (86400 * 730, 86400 * 30, "mo")):
        if d < limit:
            return f"{int(d // div)}{unit} ago"
    return f"{int(d // (86400 * 365))}y ago"
