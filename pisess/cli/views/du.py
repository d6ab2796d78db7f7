"""``pisess du``: where the bytes are, by kind (the kind table's words), place and entry."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.views.columns import columns, count_text, fit, left_out
from pisess.cli.views.shared import WHERE_STYLE
from pisess.cli.views.text import escape_controls, human_size, one_line, plural
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import UNDEF
from pisess.core.model import kinds


def kind_word(t: str, role: str | None) -> str:
    """The kind table's word for du's (type, role) pair (du says ``(none)`` for a message without a role)."""
    return escape_controls(kinds.of(UNDEF if t == "(none)" else t, UNDEF if role == "(none)" else role).word)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _bar(part: int, whole: int, width: int = 20) -> str:
    return "\u2588" * (round(width * part / whole) if whole else 0)


def du_view(report, *, label: str, width: int = 100) -> list:
    out: list = []
    head = Text()
    head.append(f"du \u00b7 {label} \u00b7 {plural(len(report.sessions), 'session')} \u00b7 {human_size(report.size)}",
                "bold")
    out.append(head)
    rows = []
    for s in report.sessions:
        big = s.largest
        rows.append([Text(_sid(s.id), "bold"), Text(one_line(s.name, 14)) if s.name else Text("-", "dim"),
                     human_size(s.size), count_text(s.entries), human_size(s.where["active"]),
                     human_size(s.where["compacted"]), human_size(s.where["branch"]),
                     human_size(s.images["bytes"]) if s.images["count"] else "-",
                     f"{human_size(big.bytes)} {_sid(big.entry_id, big.id_width)}" if big else "-"])
    rows, align, header, dropped = fit(rows, "llrrrrrrl", ["SESSION", "NAME", "SIZE", "ENTRIES", "CONTEXT", "COMPACTED",
                                                          "BRANCHES", "IMAGES", "LARGEST"], width, flex=1, least=6,
                                       drop=(8, 7, 3))  # LARGEST, IMAGES, ENTRIES go first
    if rows:  # (no session read: no table of nothing)
        out.extend(columns(rows, align, header=header) + left_out(dropped, width))
    out.append(Text(""))
    out.append(Text("by entry type", "bold"))
    whole = report.size
    rows = [[kind_word(r["type"], r["role"]), plural(r["entryCount"], "entry", "entries"), human_size(r["bytes"]),
             _pct(r["bytes"], whole), Text(_bar(r["bytes"], whole), "cyan")] for r in report.kinds]
    rest = report.header_bytes + report.other_bytes
    rows.append([Text("other", "dim"), Text("headers, newlines", "dim"), human_size(rest), _pct(rest, whole), ""])
    out.extend(columns(rows, "lrrrl"))
    out.append(Text(""))
    w = Text(no_wrap=True, overflow="ellipsis")
    w.append("where", "bold")
    w.append("  ")
    parts = [("in context", report.where["active"], "green"), ("compacted", report.where["compacted"], "yellow"),
             ("other branches", report.where["branch"], "")]
    if report.where.get("retained"):  # kept verbatim by a checkpoint's retainedTail (pi's SDK)
        parts.insert(1, ("retained", report.where["retained"], "cyan"))
    if report.where.get("edited"):  # hidden or replaced by a pi 1.6 context_edit
        parts.insert(1, ("edited", report.where["edited"], "magenta"))
    for i, (word, b, style) in enumerate(parts):
        piece = f"{word} {human_size(b)} ({_pct(b, whole)})"
        if i and w.cell_len + 3 + len(piece) > width:  # the next piece on a line of its own, under the first
            out.append(w)
            w = Text("       ", no_wrap=True, overflow="ellipsis")
        elif i:
            w.append(" \u00b7 ")
        w.append(piece, style)
    out.append(w)
    img = Text()
    img.append("images", "bold")
    img.append(" " + (f"{plural(report.images['count'], 'image')} \u00b7 {human_size(report.images['bytes'])} of "
                      "base64" if report.images["count"] else "none"))
    out.append(img)
    shared = report.shared
    if shared["files"]:
        line = Text()
        line.append("same id", "bold")
        line.append(f" {plural(len(shared['files']), 'second file')} of a session id (pi #11060): "
                    f"{plural(shared['entryCount'], 'entry', 'entries')} ({human_size(shared['bytes'])}) its first "
                    "file holds counted once, there")
        out.append(line)
    out.append(Text(""))
    if not report.top:  # (an empty file, a header alone: no table of nothing)
        out.append(Text("top entries by size: none (no entries)", "dim"))
        return out
    out.append(Text(f"top {plural(len(report.top), 'entry', 'entries')} by size", "bold"))
    rows = []
    for b in report.top:
        what = one_line(b.detail or "", 50)
        if b.images:
            what += f" \u00b7 {plural(b.images, 'image')} ({human_size(b.image_bytes)})"
        rows.append([human_size(b.bytes), _sid(b.session_id), Text(_sid(b.entry_id, b.id_width), "bold"), str(b.line),
                     kind_word(b.type, b.role), Text(b.where, WHERE_STYLE.get(b.where, "")), what])
    out.extend(columns(rows, "rllrlll", header=["SIZE", "SESSION", "ENTRY", "LINE", "KIND", "WHERE", "WHAT"]))
    return out
