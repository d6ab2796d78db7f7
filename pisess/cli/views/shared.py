"""What the human views share: legend packing, the first line, a label's tag, session text as a
Rich ``Text``, the session's title, the reader words, where-styles and the progress bar.

Every view returns what to print and ``pisess.cli.output`` prints it; only the views and the
printer import Rich.  Session text enters Rich as a ``Text`` built from an escaped string, never
as markup, so ``[bold]`` in a message prints literally and escape sequences print as ``\\x1b``.
Colour adds emphasis but never carries meaning alone: markers (● ○ ◐ ◀ ◆ ⚠) say it in NO_COLOR too.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from pisess.cli.output import make_console
from pisess.cli.views import describe as d
from pisess.cli.views.text import escape_controls, one_line, pack
from pisess.cli.views.text import short_id as _sid

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.progress import Progress


def T(s: str, style: str = "") -> Text:  # noqa: N802 - reads as a constructor
    return Text(s, style=style)


def packed(pieces: list[str], width: int, style: str = "dim", sep: str = "  ") -> list[Text]:
    """Legend pieces on as many lines as the width needs, never broken inside a piece (``pack``)."""
    return [T(line, style) for line in pack(pieces, width, sep)]


def heading(pieces: list[tuple[str, str]], width: int) -> list[Text]:
    """A view's first line from ``(text, style)`` pieces, joined by " · "; pieces that do not fit
    the width go to a line of their own below, so a narrow terminal never cuts the reader's name."""
    lines: list[Text] = [Text()]
    for text, style in pieces:
        cur = lines[-1]
        sep = " \u00b7 " if cur.cell_len else ""
        if cur.cell_len and cur.cell_len + len(sep) + len(text) > width:
            cur = Text("  ")
            lines.append(cur)
            sep = ""
        cur.append(sep)
        cur.append(text, style)
    return lines


def label_tag(label: Any) -> str:
    text = one_line(d.s(label), 30)
    return f"[{text}]" if text.strip() else f"[{d.s(label)!r}]"


def safe(s: Any, style: str = "") -> Text:
    """Session text as a Text: escaped, never markup."""
    return Text(escape_controls(d.s(s), keep_newlines=True), style=style)


def session_title(session) -> str:
    h = session.header or {}
    name = None
    try:
        name = session.session_name()
    except Exception:  # a name pi cannot read: show none
        name = None
    parts = [_sid(h.get("id")) if h else "(no header)"]
    if name:
        parts.append(one_line(name, 50))
    return " \u00b7 ".join(parts)


def reader_words(session) -> str:
    from pisess.core.versions import short

    return f"{session.reader} reader, {short(session.pi_version)}"


WHERE_STYLE = {"active": "green", "edited": "magenta", "retained": "cyan", "compacted": "yellow", "branch": "dim",
               "dropped": "red"}


WHERE_WORD = {"active": "in context", "edited": "edited", "retained": "retained", "compacted": "compacted", "branch": "branches"}


def session_head(sid: Any, name: Any, extra: str = "") -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(_sid(sid), "bold")
    if name:
        t.append(" \u00b7 " + one_line(name, 50), "bold")
    if extra:
        t.append(extra)
    return t


def progress_bar(color: str = "auto") -> Progress:
    """A transient byte progress bar on stderr; it never takes over stdout."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                    console=make_console(color, stderr=True), transient=True, redirect_stdout=False,
                    redirect_stderr=False)
