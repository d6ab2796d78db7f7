"""Whole-file facts for ``ls --long``: name, message count, branches, last activity (pi's CLI list)."""

from __future__ import annotations

from . import js
from .errors import PisessError
from .js import UNDEF, get
from .jsonl import scan_file
from .session import open_cli


def summarize_file(path: str) -> dict:
    """Read with the lenient reader; a file pi cannot read gives ``{"error": ...}``."""
    try:
        s = open_cli(scan_file(path, light=False))
    except PisessError as err:
        return {"error": {"code": err.code, "message": err.message}}
    messages = 0
    last_activity = None
    children: dict = {}
    first_user = None
    for e in s.entries:
        if get(e, "type") == "message":
            messages += 1
            m = get(e, "message")
            if isinstance(m, dict) and m.get("role") in ("user", "assistant") and "content" in m:
                t = m.get("timestamp")
                t = t if isinstance(t, (int, float)) and not isinstance(t, bool) else js.date_ms(get(e, "timestamp"))
                if t is not None and (last_activity is None or t > last_activity):
                    last_activity = t
                if first_user is None and m.get("role") == "user":
                    first_user = message_text(m)
        pid = get(e, "parentId")
        if js.truthy(pid) and s.lookup(pid) is not None:
            k = js.key(pid)
            children[k] = children.get(k, 0) + 1
    try:
        name = s.session_name()
    except PisessError:
        name = None
    return {
        "name": name,
        "messageCount": messages,
        "entryCount": len(s.entries),
        "branchPoints": sum(1 for n in children.values() if n > 1),
        "lastActivity": js.iso_utc(last_activity) if isinstance(last_activity, (int, float)) else None,
        "firstMessage": first_user,
        "leafId": None if s.leaf_id is UNDEF else s.leaf_id,
    }


def message_text(m: dict) -> str:
    """Text of a message: string content, or its text blocks joined with a space."""
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return " ".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"
                        and isinstance(b.get("text"), str))
    return ""
