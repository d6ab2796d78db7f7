"""The pattern of a search: what it looks for, in which fields, and the bytes a line must hold."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import PisessError
from ...model import kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELDS = kinds.FIELDS

_SAFE_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - set('"\\/<>&\'+`')
_SAFE_RUN = re.compile("[" + re.escape("".join(sorted(_SAFE_CHARS))) + "]+")
# Unicode letters that ``re.IGNORECASE`` folds to an ASCII letter: kept apart for a literal -i search
_FOLD_TO_ASCII = {0x130: 0xE000, 0x131: 0xE001, 0x17F: 0xE002, 0x212A: 0xE003}


# --- the pattern -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matcher:
    pattern: str
    regex: bool
    ignore_case: bool
    fields: frozenset
    rx: Any  # compiled on str
    needle: bytes | None  # looked for in the raw bytes (lower-cased with -i); None: parse every line

    def search_text(self, text: str) -> str:
        """The text the pattern runs on (same length: positions carry over to the original)."""
        if self.ignore_case and not self.regex and not text.isascii():
            return text.translate(_FOLD_TO_ASCII)
        return text


def make_matcher(pattern: str, *, regex: bool = False, ignore_case: bool = False,
                 fields: Any = None) -> Matcher:
    """Raises ``PisessError("usage")`` for an empty pattern, a bad regex or an unknown field."""
    if pattern == "":
        raise PisessError("usage", "the pattern is empty (it would match every line)")
    wanted = frozenset(FIELDS if not fields else fields)
    unknown = sorted(wanted - set(FIELDS))
    if unknown:
        raise PisessError("usage", f"unknown --in value {', '.join(unknown)}: use {','.join(FIELDS)}")
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    source = pattern if regex else re.escape(pattern.translate(_FOLD_TO_ASCII) if ignore_case else pattern)
    try:
        rx = re.compile(source, flags)
    except (re.error, OverflowError, RecursionError) as e:
        raise PisessError("usage", f"invalid regular expression {pattern!r}: {e}") from None
    needle = None
    if not regex:
        best = max(_SAFE_RUN.findall(pattern), key=len, default="")
        if best:
            needle = (best.lower() if ignore_case else best).encode("ascii")
    return Matcher(pattern, regex, ignore_case, wanted, rx, needle)


def candidate_starts(buf: Any, end: int, m: Matcher) -> list[int]:
    """Start offsets of the lines of ``buf[:end]`` that hold the needle (sorted, no duplicates)."""
    if m.ignore_case:
        hay = buf[:end].lower()
        stop = len(hay)
    else:
        hay, stop = buf, end
    needle = m.needle
    find, rfind, nl = hay.find, buf.rfind, buf.find
    starts = []
    p = find(needle, 0, stop)
    while p >= 0:
        starts.append(rfind(b"\n", 0, p) + 1)
        e = nl(b"\n", p, end)
        if e < 0:
            break
        p = find(needle, e + 1, stop)
    return starts


def parse_fields(text: str | None) -> list[str] | None:
    """``--in``'s value (comma separated field names; ``None``: every field).  Raises
    ``PisessError("usage")`` when it names none."""
    if text is None:
        return None
    wanted = [f.strip().lower() for f in text.split(",") if f.strip()]
    if not wanted:
        raise PisessError("usage", f"--in needs at least one of {', '.join(FIELDS)}")
    return wanted


