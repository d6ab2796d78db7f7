"""Which pi's rules a read follows.

Files written by pi 0.82.1 and pi 1.6.0 both say ``"version": 3``; nothing in a file names its
writer (spec C.1).  So the rule set is chosen by the caller and passed down as one value, and
each difference is written beside the pi function it mirrors as ``since(version, FEATURE)``:
adding the next pi release means adding its number here and the rules that start with it.

The SDK reader (``harness``) exists only with 0.82.1's rules: pi 0.84 replaced that SDK format
(C.28) and pi 1.0.3 removed it, so a harness read is always a 0.82.1 read.
"""

from __future__ import annotations

from functools import lru_cache

from .errors import PisessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    PiVersion = Literal["0.82.1", "1.6.0"]  # (a name for annotations only: import it under TYPE_CHECKING)

PI_0_82: PiVersion = "0.82.1"
PI_1_6: PiVersion = "1.6.0"
CURRENT: PiVersion = PI_1_6
KNOWN: tuple[PiVersion, ...] = (PI_0_82, PI_1_6)
_ALIASES = {"0.82": PI_0_82, "0.82.1": PI_0_82, "1.6": PI_1_6, "1.6.0": PI_1_6}

# The first pi release each rule applies from (Appendix C).
REPAIRS_FINAL_NEWLINE = (0, 84, 4)  # C.17: open appends "\n" to an unterminated last line
SYSTEM_MESSAGES = (0, 86, 0)  # C.2-C.6: system role, compaction systemMessage, usage entries
LISTING_ORDER = (0, 86, 0)  # C.20-C.24: list() name order, listAll by mtime, findById
LIST_ALL_SYMLINKS = (0, 84, 0)  # C.21: listAll's project directories include symlinks
CONTEXT_EDITS = (0, 87, 0)  # C.7, C.9: context_edit entries; only the newest compaction emits
FORK_REMAPS_LABELS = (0, 85, 0)  # C.25: a compaction's firstKeptEntryId naming a dropped label
RECORDS_ABORTED_CALLS = (1, 6, 0)  # pi #9986: a batch's calls cut off by Esc get "Operation aborted" results
FILE_ON_USER_MESSAGE = (0, 99, 0)  # C.18, C.25: a file appears with the first user or assistant


def parse(text: str | None) -> PiVersion:
    """``0.82``/``0.82.1``/``1.6``/``1.6.0`` (``None``: the current pi)."""
    if text is None or text == "":
        return CURRENT
    v = _ALIASES.get(text.strip().lower().removeprefix("v"))
    if v is None:
        raise PisessError("usage", f"--pi-version must be one of {', '.join(KNOWN)} (or 0.82, 1.6), not {text!r}")
    return v


def choices() -> str:
    """The versions ``--pi-version`` takes, for its help: ``1.6.0 (the current pi; also 1.6) or
    0.82.1 (also 0.82)``, newest first."""
    def one(v: PiVersion) -> str:
        also = ", ".join(a for a, to in _ALIASES.items() if to == v and a != v)
        return f"{v} ({'the current pi; ' if v == CURRENT else ''}also {also})"

    return " or ".join(one(v) for v in reversed(KNOWN))


@lru_cache(maxsize=64)
def number(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))  # (asked per entry by the rules: parsed once)


def since(version: str, first: tuple[int, ...]) -> bool:
    """Does pi ``version`` follow the rule that started with release ``first``?"""
    return number(version) >= first


def of_reader(reader: str, version: str) -> PiVersion:
    """The rules a read by ``reader`` follows: the SDK reader only ever had 0.82.1's."""
    return PI_0_82 if reader == "harness" else parse(version)


def short(version: str) -> str:
    """``pi 1.6`` in human headers."""
    major, minor, *_ = version.split(".")
    return f"pi {major}.{minor}"
