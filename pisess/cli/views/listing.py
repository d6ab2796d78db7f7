"""``pisess ls``: the sessions of a project (or all), as a table that fits the width."""

from __future__ import annotations

import os
import time
from typing import Any

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.marks import WARN
from pisess.cli.views.shared import T, heading
from pisess.cli.views.text import escape_controls, human_size, ls_heading, no_sessions_hint, one_line, tilde
from pisess.core import js
from pisess.core.ids import unique_prefix_width


def _now_ms() -> float:
    fixed = os.environ.get("PISESS_NOW")  # reproducible ages for tests and docs
    if fixed:
        ms = js.date_ms(fixed)
        if ms is not None:
            return float(ms)
    return time.time() * 1000


def _parent_cell(s: Any, parents: dict, width: int) -> tuple[str, str]:
    """FORKED FROM: the parent's session id (``repo.parent_ids``), else its file's name, marked."""
    if not s.parent_session_path:
        return "-", "dim"
    sid = parents.get(s.path)
    if sid is not None:
        return escape_controls(sid[:width]), ""
    p = s.parent_session_path
    return escape_controls("?" + os.path.basename(p if isinstance(p, str) else "")[:width]), "dim"


def ls_view(listing, where, *, all_projects: bool, details: dict | None, width: int = 100,
            now_ms: float | None = None) -> list:
    now = _now_ms() if now_ms is None else now_ms
    n = len(listing.sessions)
    # pieces that do not fit go to a line of their own, never a line ending in " · "
    head = heading([(piece.removeprefix(" \u00b7 "), style) for piece, style in ls_heading(listing, where, all_projects)],
                   width)
    if not n:
        return [*head, T(no_sessions_hint(all_projects), "dim")]
    # ids made within the same minute share 8 characters: show as many as tell them apart
    width_id = unique_prefix_width(s.id for s in listing.sessions)
    from pisess.core.listing.repo import parent_ids, shared_ids

    twins = shared_ids(listing.sessions)
    parents = parent_ids(listing.sessions)
    # the column the rows are sorted by stays: pi 1.6 lists by last activity (read from each file)
    by_activity = any(s.listing == "cli" and s.activity_read not in (None, "header") for s in listing.sessions)

    def cells(s) -> dict:
        # (text, style) per column: plain strings until the row is joined (10,000 rows)
        c = {"id": ("  " + escape_controls(s.id[:width_id]) + (TWIN if s.path in twins else ""), "bold"),
             "created": (d.local_time(s.created_at)[:16], ""), "age": (d.relative_age(s.created_at, now), "dim"),
             "size": (human_size(s.size), ""),
             "forked": _parent_cell(s, parents, width_id),
             "cwd": (escape_controls(tilde(s.cwd)), "dim")}
        if details is not None:
            info = details.get(s.path) or {}
            if "error" in info:
                c.update(msgs=("-", ""), br=("-", ""), last=("-", ""),
                         name=(escape_controls(f"{WARN} {info['error'].get('message', '')}"), "red"))
            else:
                name, first = info.get("name"), info.get("firstMessage") or ""
                shown = (one_line(name, 60), "bold") if name else (one_line(first, 60) or "(no messages)", "dim")
                marks = shape_marks(info)
                c.update(msgs=(str(info.get("messageCount", 0)), ""), br=(str(info.get("branchPointCount", 0)), ""),
                         last=(d.local_time(info["lastActivity"])[:16] if info.get("lastActivity") else "-", "dim"),
                         name=(f"{marks} {shown[0]}", "yellow") if marks else shown)
        if by_activity and s.modified is not None:  # the time the rows are sorted by, as pi read it
            c["last"] = (d.local_time(s.modified)[:16], "")
        elif by_activity:  # a file pi's listing read no time from: the column is there, the cell says so
            c.setdefault("last", ("-", "dim"))
        return c

    # (key, header, width, justify, drop order: higher goes first when the terminal is narrow;
    # 0 never goes: the id, the column the rows are sorted by, the name and the project of each
    # session (CWD), the last two shortened)
    spec = [("id", "  ID", width_id + 2, "left", 0)]
    if by_activity:
        spec.append(("last", "LAST ACTIVE", 16, "left", 0))
    spec += [("created", "CREATED", 16, "left", 6 if by_activity else 0),
             ("age", "AGE", 8, "right", 3), ("size", "SIZE", 8, "right", 1)]
    if details is not None:
        spec += [("msgs", "MSGS", 4, "right", 1), ("br", "BR", 2, "right", 4)]
        if not by_activity:
            spec.append(("last", "LAST ACTIVE", 16, "left", 5))
        spec.append(("name", "NAME / FIRST MESSAGE", 20, "left", 0))
    spec.append(("forked", "FORKED FROM", 11, "left", 2))
    if all_projects:
        spec.append(("cwd", "CWD", 16, "left", 0))
    while sum(w + 2 for _, _, w, _, _ in spec) > width and any(p for *_, p in spec):
        worst = max(p for *_, p in spec)
        spec = [c for c in spec if c[4] != worst]
    rows = [cells(s) for s in listing.sessions]
    return [*head, *table_rows(spec, rows, width), *_legend(twins, details, width)]


TWIN = "="  # after an id another listed file holds too


def _legend(twins: dict, details: dict | None, width: int) -> list:
    """What the table's marks mean, under it, only for the marks it shows."""
    from pisess.cli.views.shared import packed

    pieces = []
    if twins:
        pieces.append(f"{TWIN} another file holds this session id too (pi's /import before 1.5.2, pi #11060): "
                      "an id names the first by name; stats and du --all count their shared entries once")
    infos = list((details or {}).values())
    if any(i.get("sessionCount", 1) > 1 for i in infos):
        pieces.append("[N sessions] the file holds N sessions (pi's /new before pi PR #649): pi reads them as one, "
                      "pisess validate says where each starts")
    if any(i.get("nestedSessionCount") for i in infos):
        pieces.append("[+N nested] sessions below the session's folder (subagent runs), which /resume does not "
                      "list")
    out = []
    for p in pieces:
        out.extend(packed(p.split(" "), width, sep=" "))
    return out


def shape_marks(info: dict) -> str:
    """What ``ls --long`` says before a session's name about the shape of its file: the sessions
    it holds (pi's /new before pi PR #649) and those nested below its folder (subagent runs)."""
    marks = []
    if info.get("sessionCount", 1) > 1:
        marks.append(f"[{info['sessionCount']} sessions]")
    if info.get("nestedSessionCount"):
        marks.append(f"[+{info['nestedSessionCount']} nested]")
    return " ".join(marks)


def table_rows(spec: list, rows: list[dict], width: int) -> list[Text]:
    """Columns laid out without Rich's table renderer (10,000 ls rows in a blink): each column as
    wide as its widest cell, the flexible ones (``name``, ``cwd``) sharing what is left; a cell
    that does not fit ends in ``…`` (a path keeps its end, where the project is); no trailing
    spaces.  ``rows`` hold ``(text, style)`` per key."""
    flexible = {"name", "cwd"}
    widths = {}
    for key, header, least, _, _ in spec:
        widest = max([len(header)] + [_cells(r[key][0]) for r in rows if key in r])
        widths[key] = widest if key not in flexible else max(least, len(header))
    fixed = sum(widths[k] + 2 for k, *_ in spec if k not in flexible)
    flex = [k for k, *_ in spec if k in flexible]
    room = width - fixed - 2 * len(flex)
    for k in list(flex):
        widest = max([widths[k]] + [_cells(r[k][0]) for r in rows if k in r])
        share = max(widths[k], room // len(flex)) if room > 0 else widths[k]
        widths[k] = min(widest, share, 60 if k == "name" else widest)
        room -= widths[k]
        flex = flex[1:]
    # still too wide (a narrow terminal, long ids): the flexible columns give up their least
    # widths, each its share, so the row ends inside the width and neither is cut to nothing
    over = sum(widths[key] + 2 for key, *_ in spec) - 2 - width
    squeeze = [k for k in ("name", "cwd") if k in widths]
    for i, k in enumerate(squeeze):
        if over > 0:
            cut = min(widths[k] - 8, -(-over // (len(squeeze) - i)))
            widths[k] -= max(0, cut)
            over -= max(0, cut)
    last = len(spec) - 1
    layout = [(key, widths[key], justify, i == last) for i, (key, _, _, justify, _) in enumerate(spec)]
    out = [_row({key: (title, "bold dim") for key, title, *_ in spec}, layout)]
    out.extend(_row(r, layout) for r in rows)
    return out


def _cells(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _row(cells: dict, layout: list) -> Text:
    line = Text(no_wrap=True)
    for key, width, justify, last in layout:
        text, style = cells[key]
        n = _cells(text)
        if n > width:
            if key == "cwd":  # keep the end of a path: the project's own name
                text = "\u2026" + text[len(text) - width + 1:]
            else:
                cut = Text(text)
                cut.truncate(width, overflow="ellipsis")
                text = cut.plain
            n = _cells(text)
        pad = " " * (width - n)
        if justify == "right":
            line.append(pad)
            line.append(text, style)
        else:
            line.append(text, style)
            if not last:
                line.append(pad)
        if not last:
            line.append("  ")
    return line
