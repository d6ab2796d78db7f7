"""Session text is data: control characters and escape sequences are shown, never executed.

Everything a session file holds (messages, tool output, labels, names, cwd) passes through
``escape_controls`` before it reaches a terminal: ESC, CSI, OSC, CR, BS and the rest of C0/C1
become visible ``\\x1b``-style escapes; Rich markup is never interpreted because renderers build
``Text`` objects, not markup strings.
"""

from __future__ import annotations

import re

from pisess.core.model.text import (
    CONTROL_CHARS,
    LOOSE_JOINER,
    one_line,  # noqa: F401  (whitespace folded, escaped, cut: the core's)
)
from pisess.core.model.text import short_id as _core_short_id

_CONTROL = re.compile(f"[{CONTROL_CHARS}]|{LOOSE_JOINER}")
_CONTROL_NL = re.compile(f"[\t{CONTROL_CHARS}]|{LOOSE_JOINER}")  # (tabs too: to spaces)


def _visible(m: re.Match) -> str:
    c = m.group()
    if c == "\t":
        return "    "
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def escape_controls(s: str, keep_newlines: bool = False) -> str:
    """Make every control character visible (``\\x1b``, ``\\r``→``\\x0d``, a joiner that joins
    nothing ``\\u200d``); tabs become spaces."""
    if keep_newlines:
        return _CONTROL_NL.sub(_visible, s) if _CONTROL_NL.search(s) else s
    s = s.replace("\n", "\u21b5 ") if "\n" in s else s
    return _CONTROL.sub(_visible, s) if _CONTROL.search(s) else s


def human_size(n: int) -> str:
    size: float = n
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{size:.1f} {unit}".replace(".0 ", " ")
        size /= 1024
    return f"{size:.1f} TB"


def short_id(v, n: int = 8) -> str:
    """The first ``n`` characters of an id as a terminal shows it (escaped), ``-`` for none: the
    core's ``short_id`` with the terminal's escaping."""
    return _core_short_id(v, n, escape_controls)


def tilde(p: str) -> str:
    """``/home/me/x`` -> ``~/x``."""
    import os

    home = os.path.expanduser("~")
    return "~" + p[len(home):] if home and home != "/" and (p == home or p.startswith(home + os.sep)) else p


NO_SESSIONS_HINT = "  (no sessions here; try --all, --cwd DIR or --sessions-dir DIR)"
NO_SESSIONS_ANYWHERE = "  (no sessions under this root; try --sessions-dir DIR)"


def no_sessions_hint(all_projects: bool) -> str:
    """What to try when a listing is empty (``--all`` is not suggested to who gave it)."""
    return NO_SESSIONS_ANYWHERE if all_projects else NO_SESSIONS_HINT


def ls_heading(listing, where, all_projects: bool) -> list[tuple[str, str]]:
    """The first line of ``pisess ls`` as ``(text, style)`` pieces."""
    n = len(listing.sessions)
    count = f"{n} session{'s' if n != 1 else ''}"
    if all_projects:
        return [(f"all projects \u00b7 {count}", "bold"), (f" \u00b7 {escape_controls(tilde(where.root))}", "dim")]
    d = listing.directories[0] if listing.directories else where.root
    return [(escape_controls(tilde(where.cwd)), "bold"), (f" \u00b7 {count}", ""),
            (f" \u00b7 {escape_controls(tilde(d))}", "dim")]


def pack(pieces: list[str], width: int, sep: str = "  ") -> list[str]:
    """Pieces joined by ``sep`` on as many lines as ``width`` needs, never broken inside a piece
    (legends: ``views.shared.packed`` draws them, search's plain rows write them)."""
    lines: list[str] = []
    for p in pieces:
        if lines and len(lines[-1]) + len(sep) + len(p) <= width:
            lines[-1] += sep + p
        else:
            lines.append(p)
    return lines


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 message``, ``2 messages``, ``1,200 entries`` (with ``many``)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def files_read(n: int, verb: str, unreadable: int) -> str:
    """``2 files checked``, ``2 files checked, 1 unreadable``: the head of validate's and secrets'
    summaries, the files read apart from those that could not be (each an error line above)."""
    return plural(n, "file") + " " + verb + (f", {unreadable:,} unreadable" if unreadable else "")
