"""pi's rules for one line of a session file, written once: the bottom of the core.

* ``check_harness_header`` / ``check_harness_entry``: the SDK's ``parseHeaderLine`` and
  ``parseEntryLine`` (the reason a line is refused, or ``None``).
* ``sdk_only_header`` / ``sdk_only_entry``: a record only pi's SDK writes (``auto`` reads such a
  file with the SDK's reader).
* ``cli_drop_reason`` / ``is_cli_header`` / ``cli_skips``: what the ``pi`` command keeps, takes
  as the header, and skips.

Every reader (the line scan, the compact index, validate, the listing) asks these functions; this
module imports nothing of the core but ``js``.
"""

from __future__ import annotations

from .. import js
from ..js import UNDEF

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Bad:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<not JSON>"


NOT_JSON: Any = _Bad()  # the value of a line ``JSON.parse`` throws on

SDK_ONLY_TYPES = ("leaf", "active_tools_change")


def check_harness_header(v: Any) -> str | None:
    """pi's ``parseHeaderLine``: the reason the header is refused, or ``None``."""
    if type(v) is dict and v.get("type") == "session" and v.get("version") == 3 and type(v.get("version")) is int \
            and type(v.get("id")) is str and v["id"] and type(v.get("timestamp")) is str and v["timestamp"] \
            and type(v.get("cwd")) is str and v["cwd"] and "parentSession" not in v and "metadata" not in v:
        return None  # the common header, in one go
    bad = "first line is not a valid session header"
    if v is NOT_JSON or not isinstance(v, (dict, list)):
        return bad
    if not isinstance(v, dict) or v.get("type") != "session":
        return bad
    version = v.get("version", UNDEF)
    if isinstance(version, bool) or not isinstance(version, (int, float)) or version != 3:
        return "unsupported session version"
    for k in ("id", "timestamp", "cwd"):
        if not isinstance(v.get(k), str) or not v.get(k):
            return f"session header is missing {k}"
    if "parentSession" in v and not isinstance(v["parentSession"], str):
        return "session header parentSession must be a string"
    if "metadata" in v and not isinstance(v["metadata"], dict):
        return "session header metadata must be an object"
    return None


def check_harness_entry(v: Any) -> str | None:
    """pi's ``parseEntryLine``: the reason the entry line is refused, or ``None``."""
    if isinstance(v, dict):  # the common case (a dict or a light entry), in one go
        t, i, p, ts = v.get("type"), v.get("id"), v.get("parentId", 0), v.get("timestamp")
        if type(t) is str and type(i) is str and i and (p is None or type(p) is str) \
                and type(ts) is str and ts and t != "leaf":
            return None
    if v is NOT_JSON:
        return "is not valid JSON"
    if not isinstance(v, (dict, list)):
        return "is not a valid session entry"
    if not isinstance(v, dict) or not isinstance(v.get("type"), str):
        return "is missing entry type"
    if not isinstance(v.get("id"), str) or not v["id"]:
        return "is missing entry id"
    if "parentId" not in v or not (v["parentId"] is None or isinstance(v["parentId"], str)):
        return "has invalid parentId"
    if not isinstance(v.get("timestamp"), str) or not v["timestamp"]:
        return "is missing timestamp"
    if v["type"] == "leaf" and ("targetId" not in v or not (v["targetId"] is None or isinstance(v["targetId"], str))):
        return "has invalid targetId"
    return None


def sdk_only_header(v: Any) -> bool:
    """A header only pi's SDK writes: one with ``metadata``."""
    return isinstance(v, dict) and v.get("type") == "session" and "metadata" in v


def sdk_only_entry(v: Any) -> bool:
    """An entry only pi's SDK writes: ``leaf``, ``active_tools_change``, or a compaction with a
    ``retainedTail`` key (any value)."""
    if not isinstance(v, dict):
        return False
    t = v.get("type")
    return t in SDK_ONLY_TYPES or (t == "compaction" and "retainedTail" in v)


def cli_drop_reason(v: Any) -> str | None:
    """pi's ``loadEntriesFromFile`` keeps truthy parsed values: why this (non-blank) line is dropped,
    or ``None`` when it is kept."""
    if v is NOT_JSON:
        return "not valid JSON"
    if not js.truthy(v):
        return "falsy JSON value"
    return None


def is_cli_header(v: Any) -> bool:
    """The pi command's header test on the first kept value."""
    return isinstance(v, dict) and v.get("type") == "session" and isinstance(v.get("id"), str)


def cli_skips(v: Any) -> bool:
    """A kept value after the header that the pi command skips: every later header."""
    return isinstance(v, dict) and v.get("type") == "session"


def written_by_sdk(values: Any) -> bool:
    """Do these parsed values (a file's non-blank lines, in order) hold a record only pi's SDK
    writes?  The first object may be the header."""
    first = True
    for v in values:
        if not isinstance(v, dict):
            continue
        if first and v.get("type") == "session":
            if "metadata" in v:
                return True
        elif sdk_only_entry(v):
            return True
        first = False
    return False


def glued_entries(text: bytes) -> list[tuple[int, Any]] | None:
    """``[(byte offset, object)]`` when the line is nothing but two or more complete JSON objects."""
    import json

    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError:
        return None
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(s):
        if s[i] in " \t\r":
            i += 1
            continue
        try:
            v, j = dec.raw_decode(s, i)
        except ValueError:
            return None
        if not isinstance(v, dict):
            return None
        out.append((len(s[:i].encode()), v))
        i = j
    return out if len(out) >= 2 else None


def glued_reason(path: str, offset: int, length: int) -> str | None:
    """Why a line that is not JSON is dropped, when it is entries glued together without a newline
    (the line read back from ``path``; ``None`` when it is not, or cannot be read): the words
    validate's ``glued_line`` uses."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            text = fh.read(length)
    except OSError:
        return None
    whole = glued_entries(text) if len(text) == length else None
    return f"glued_line: {len(whole)} complete entries with no newline between them" if whole else None
