"""The SDK's later session files (pi 0.84-0.99, spec C.28): recognised, named, never read.

pi's agent-core replaced its v3 files with v4 ones in 0.84.0 and dropped session storage in 1.0.3;
the pi command never wrote them and refuses them.  They can still sit in a sessions directory
(same folders and name pattern), so every place that meets one says what it is instead of
calling it garbage.
"""

from __future__ import annotations

from typing import Any

SDK_V4 = "a pi SDK v4 session (pi 0.84\u20130.99); pisess reads the pi command's v3 files"


def is_sdk_v4_header(v: Any) -> bool:
    """A v4 first line: ``{"kind":"header","version":4,...}`` (0.84) or
    ``{"v":4,"kind":"header",...}`` (0.85-0.99)."""
    if type(v) is not dict or v.get("type") == "session":
        return False

    def four(x: Any) -> bool:
        return type(x) in (int, float) and x == 4

    return (v.get("kind") == "header" and (four(v.get("version")) or four(v.get("v")))) or \
        (four(v.get("v")) and "kind" in v)


def is_v4_line(raw: Any, ln: Any) -> bool:
    """Is this line of a scanned file (``jsonl.RawLine``) a v4 header?  A light scan keeps only
    structural keys, so the line is parsed again from the file then."""
    from .jsonl import Light, parse_json

    v = ln.value
    if type(v) is Light:
        if v.get("type") == "session":
            return False
        v = parse_json(raw.read_at(ln.offset, ln.length))
    return is_sdk_v4_header(v)
