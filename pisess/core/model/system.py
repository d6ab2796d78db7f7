"""System messages replayed into the current prompt and tool set (pi 1.6, spec C.2-C.3).

pi 0.86 started persisting the system prompt and tools as ``system``-role messages: the first of a
branch declares them, later ones patch ``sections`` by name (``null`` removes one) and add or
remove tools.  These mirror pi-ai's ``getCurrentSystemMessage`` and ``getSystemMessageText``,
including JavaScript's property order, which decides the order the prompt's sections are joined in.
"""

from __future__ import annotations

from .. import js
from ..errors import JSError
from ..js import UNDEF, get

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_INDEX = 2**32 - 2


def is_array_index(name: str) -> bool:
    """A canonical array index ("0", "17"; not "01" or "-1"): JavaScript orders such keys first."""
    return name.isdigit() and name.isascii() and (name == "0" or name[0] != "0") and int(name) <= _MAX_INDEX


def js_key_order(obj: dict) -> list[tuple[str, Any]]:
    """An object's entries in JavaScript's property order: index keys ascending, then insertion order."""
    index = sorted((k for k in obj if is_array_index(k)), key=int)
    return [(k, obj[k]) for k in index] + [(k, v) for k, v in obj.items() if not is_array_index(k)]


def content_text(content: Any) -> str:
    """A system message's ``content`` as one string: its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise JSError(f"system message content is {type(content).__name__}, not a string or a list "
                      "(pi throws replaying it)")
    texts = [get(b, "text") for b in content if get(b, "type") == "text"]
    return "\n".join("" if t is None or t is UNDEF else js.to_string(t) for t in texts)


def current_system_message(messages: list) -> dict | None:
    """pi-ai's ``getCurrentSystemMessage``: every system message folded into one, or ``None``."""
    parts: list[str] = []
    sections: dict = {}
    tools: dict = {}
    first_ts: Any = UNDEF
    systems = [m for m in messages if get(m, "role") == "system"]
    for m in systems:
        if first_ts is UNDEF or first_ts is None:  # JS "??=": null and missing both try again
            first_ts = get(m, "timestamp")
        text = content_text(get(m, "content"))
        if text:
            parts.append(text)
        patch = get(m, "sections")
        for name, value in js_key_order(patch) if isinstance(patch, dict) else ():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value  # a Map: reassigning keeps the place, delete-then-set moves it
    for m in systems:  # tools after all prompt text: within one message removals run first
        for t in _list(get(m, "toolsRemoved")):
            tools.pop(js.key(get(t, "name")), None)
        for t in _list(get(m, "toolsAdded")):
            tools[js.key(get(t, "name"))] = t  # a Map: redefining keeps the place
    if first_ts is UNDEF and not tools:
        return None  # a JSON null timestamp still gives a message
    out: dict = {"role": "system", "content": "\n\n".join(parts)}
    if sections:
        out["sections"] = dict(js_key_order(sections))  # a plain object again: index names move first
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = 0 if first_ts is UNDEF or first_ts is None else first_ts
    return out


def prompt_text(system_message: dict | None) -> str:
    """pi-ai's ``getSystemMessageText``: the content, then every section, joined by blank lines."""
    if not system_message:
        return ""
    pieces = [content_text(system_message.get("content", ""))]
    pieces += [js.to_string(v) for _, v in js_key_order(system_message.get("sections") or {}) if v is not None]
    return "\n\n".join(p for p in pieces if p)


def tool_names(system_message: dict | None) -> list[str]:
    return [js.to_string(get(t, "name")) for t in _list((system_message or {}).get("toolsAdded"))]


def _list(v: Any) -> list:
    return v if isinstance(v, list) else []
