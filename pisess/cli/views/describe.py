"""One-line descriptions of entries and messages: a kind label and a preview, as plain strings.

No Rich here: renderers decide styles.  Every string taken from the session goes through
``one_line`` (whitespace folded, control characters escaped).
"""

from __future__ import annotations

from typing import Any

import orjson

from pisess.cli.views.text import escape_controls, one_line
from pisess.core import js
from pisess.core.js import UNDEF, get
from pisess.core.model.text import usage_text


def s(v: Any) -> str:
    """Any JSON value as display text."""
    if isinstance(v, str):
        return v
    if v is None or v is UNDEF:
        return ""
    try:
        return orjson.dumps(v).decode()
    except TypeError:  # lone surrogates, or nesting beyond orjson's limit
        try:
            import json

            return json.dumps(v, ensure_ascii=False, default=str)
        except (RecursionError, ValueError):
            return "(a value nested too deeply to show)"


def model_words(provider: Any, model: Any) -> str:
    """``provider/model`` (``?`` for a missing half); ``unknown`` when neither is known."""
    p, m = s(provider), s(model)
    return f"{p or '?'}/{m or '?'}" if p or m else "unknown"


def content_text(content: Any, images: bool = True) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return s(content)
    parts = []
    for b in content:
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "text":
            parts.append(s(b.get("text")))
        elif t == "image" and images:
            parts.append(image_ref(b))
    return " ".join(p for p in parts if p)


def image_ref(block: dict) -> str:
    """``[image image/png, 12 KB]``, the decoded size counted as the message model counts it."""
    from pisess.core.model.text import image_ref as ref

    return ref(block, escape=lambda t: t)


def tool_call_text(block: dict, width: int = 60) -> str:
    args = block.get("arguments")
    if isinstance(args, dict) and len(args) == 1:
        inner = s(next(iter(args.values())))
    else:
        inner = s(args)
    return f"{s(block.get('name'))}({one_line(inner, width)})"


def assistant_preview(m: dict) -> str:
    content = m.get("content")
    text = content_text(content)
    calls = ([b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
             if isinstance(content, list) else [])
    out = text
    if calls:
        out = (out + " " if out else "") + " ".join("\u2192 " + tool_call_text(c, 40) for c in calls)
    stop = m.get("stopReason")
    if stop in ("error", "aborted"):
        err = s(m.get("errorMessage"))
        out = f"[{stop}{': ' + err if err else ''}] " + out
    if not out and isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "thinking"
                                                     for b in content):
        out = "(thinking only)"
    return out


def message_kind(m: Any) -> str:
    """The message model's short word for the role (pisess.core.model.text.role_kind), escaped."""
    from pisess.core.model.text import role_kind

    return escape_controls(role_kind(m))


def message_preview(m: Any) -> str:
    if not isinstance(m, dict):
        return s(m)
    role = m.get("role")
    if role == "user":
        return content_text(m.get("content"))
    if role == "assistant":
        return assistant_preview(m)
    if role == "toolResult":
        text = content_text(m.get("content"))
        lines = text.count("\n") + 1 if text else 0
        mark = "\u2717 error" if m.get("isError") else "\u2713"
        first = text.strip().split("\n", 1)[0] if text else ""
        return (f"{s(m.get('toolName'))} {mark} {lines} line{'s' if lines != 1 else ''}"
                + (f" \u00b7 {first}" if first else ""))
    if role == "bashExecution":
        code = m.get("exitCode")
        tail = " (cancelled)" if m.get("cancelled") else (f" (exit {s(code)})" if code not in (None, UNDEF, 0) else "")
        excl = " [not in context]" if m.get("excludeFromContext") else ""
        return f"$ {s(m.get('command'))}{tail}{excl}"
    if role in ("custom", "hookMessage"):
        return f"[{s(m.get('customType'))}] {content_text(m.get('content'))}"
    if role in ("branchSummary", "compactionSummary"):
        return s(m.get("summary"))
    if role == "system":
        from pisess.core.model.text import system_summary

        return system_summary(m)
    # a role pisess has no words for (the kind column names it): its text, never the raw object
    return content_text(m.get("content")) or "(no text)"


def entry_kind(e: Any) -> str:
    t = get(e, "type") if isinstance(e, dict) else UNDEF
    if t == "message":
        return message_kind(e.get("message"))
    return {
        "model_change": "model", "thinking_level_change": "thinking", "active_tools_change": "tools",
        "compaction": "compaction", "branch_summary": "branch sum", "label": "label", "session_info": "name",
        "custom": "ext state", "custom_message": "ext msg", "leaf": "leaf",
        "context_edit": "edit", "usage": "usage",  # pi 1.x
    }.get(t, f"?{escape_controls(s(t))}" if t is not UNDEF else "?")


def entry_preview(e: Any, id_width: int = 8) -> str:
    """A line about ``e``; the ids it names are cut to ``id_width`` (the session's, see ``Session.id_width``)."""
    if not isinstance(e, dict):
        return s(e)
    t = e.get("type")
    if t == "message":
        return message_preview(e.get("message"))
    if t == "model_change":
        return model_words(e.get("provider"), e.get("modelId"))
    if t == "thinking_level_change":
        return s(e.get("thinkingLevel"))
    if t == "active_tools_change":
        names = e.get("activeToolNames")
        return ", ".join(s(n) for n in names) if isinstance(names, list) else s(names)
    if t == "compaction":
        tokens = e.get("tokensBefore")
        parts = []
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool):
            parts.append(f"{tokens:,.0f} tokens before")
        if "retainedTail" in e:
            tail = e.get("retainedTail")
            parts.append(f"retains {len(tail) if isinstance(tail, list) else '?'} messages")
        if js.truthy(e.get("firstKeptEntryId")):
            parts.append(f"keeps from {s(e.get('firstKeptEntryId'))[:id_width]}")
        summary = s(e.get("summary")).split("\n", 1)[0]
        return " \u00b7 ".join(parts) + (f"  {summary}" if summary else "")
    if t == "branch_summary":
        return s(e.get("summary"))
    if t == "label":
        lbl = e.get("label")
        target = s(e.get("targetId"))[:id_width]
        return f"[{s(lbl)}] \u2192 {target}" if js.truthy(lbl) else f"clear \u2192 {target}"
    if t == "session_info":
        name = e.get("name")
        return f"\u201c{s(name)}\u201d" if js.truthy(name) else "(name cleared)"
    if t == "custom":
        return f"{s(e.get('customType'))} {s(e.get('data'))}"
    if t == "custom_message":
        return f"[{s(e.get('customType'))}] {content_text(e.get('content'))}"
    if t == "leaf":
        target = e.get("targetId")
        return f"\u21b7 leaf \u2192 {s(target)[:id_width] if target else '(before the first entry)'}"
    if t == "context_edit":
        return edit_preview(e, id_width)
    if t == "usage":
        kind = e.get("kind")
        model = model_words(e.get("provider"), e.get("model"))
        model = "model unknown" if model == "unknown" else model
        used = usage_text(e) or "no usage"
        note = e.get("note")
        return " \u00b7 ".join(p for p in (s(kind) or "(no kind)", model, used, s(note) if note else "") if p)
    rest = {k: v for k, v in e.items() if k not in ("type", "id", "parentId", "timestamp")}
    return s(rest)


def edit_preview(e: dict, id_width: int = 8) -> str:
    """``hides a1b2c3d4`` / ``replaces a1b2c3d4: new text`` (pi 1.x context edits)."""
    target = s(e.get("targetId"))[:id_width] or "?"
    if "replacement" not in e:
        return f"edits {target} (no replacement: pi throws)"
    r = e["replacement"]
    if r is None:
        return f"hides {target}"
    text = content_text(r.get("content")) if isinstance(r, dict) else ""
    return f"replaces {target}" + (f": {text}" if text else "")


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
