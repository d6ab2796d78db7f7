"""Aligned columns that fit the width (stats, du): whole columns dropped before cells are cut;
counts as they are shown in them."""

from __future__ import annotations

import os
from typing import Any

from rich.text import Text


def count_text(v: Any) -> str:
    return f"{v:,.0f}" if isinstance(v, (int, float)) else "-"


def columns(rows: list, align: str, *, indent: int = 2, header: list | None = None) -> list:
    """Rows of cells (``str`` or ``Text``) as aligned lines: ``align`` has ``l`` or ``r`` per
    column, two spaces between columns, nothing padded after the last one."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in r] for r in ([header] if header else []) + rows]
    if not cells:
        return []
    n = max(len(r) for r in cells)
    widths = [max((r[i].cell_len for r in cells if i < len(r)), default=0) for i in range(n)]
    out = []
    for k, r in enumerate(cells):
        t = Text(" " * indent, no_wrap=True, overflow="ellipsis")
        for i, c in enumerate(r):
            pad = widths[i] - c.cell_len
            last = i == len(r) - 1
            if i:
                t.append("  ")
            if align[i] == "r":
                t.append(" " * pad)
                t.append_text(c)
            else:
                t.append_text(c)
                if not last:
                    t.append(" " * pad)
        if header and k == 0:
            t.stylize("bold dim", indent)
        t.rstrip()
        out.append(t)
    return out


def fit(rows: list, align: str, header: list, width: int, *, flex: int, least: int, drop: tuple = (),
        indent: int = 2, most: int | None = None) -> tuple[list, str, list, list]:
    """Rows laid out for ``width``: the ``flex`` column (a label) shrinks to ``least`` (its cells
    cut with ``…``), then the columns in ``drop`` go, in that order, until the rows fit.  Returns
    (rows, align, header, the headers left out) for ``columns``."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in r] for r in [header] + rows]
    if most is not None:  # the flex column is at most this wide, even with room for more
        cells = [r[:flex] + [c] + r[flex + 1:]
                 for r, c in zip(cells, [cells[0][flex], *distinct_cut([r[flex] for r in cells[1:]], most)],
                                 strict=True)]
    keep = list(range(len(header)))

    def widths() -> dict:
        return {i: max(r[i].cell_len for r in cells) for i in keep}

    def need(w: dict) -> int:
        return indent + sum(w.values()) + 2 * (len(keep) - 1)

    w = widths()
    dropped: list = []
    for i in drop:
        over = need(w) - width
        if over <= 0 or w[flex] - over >= least:
            break
        keep.remove(i)
        dropped.append(cells[0][i].plain)
        w = widths()
    room = max(least, w[flex] - max(0, need(w) - width))
    cut = [cells[0][flex], *distinct_cut([r[flex] for r in cells[1:]], room)]
    out = [[c if i == flex else r[i] for i in keep] for r, c in zip(cells, cut, strict=True)]
    return out[1:], "".join(align[i] for i in keep), out[0], dropped


def distinct_cut(labels: list, room: int) -> list:
    """``labels`` (``Text``) cut to ``room`` cells so that labels that differ still differ: cut at
    the end with ``…`` when that keeps them apart, else in the middle (the start and the end kept:
    ``openrouter/anthro…ew-long-1``), else from the first place they differ (``…4-5-preview-2``).
    Two rows of a table must never look the same."""
    def end_cut(c: Any) -> Any:
        c = c.copy()
        c.truncate(room, overflow="ellipsis")
        return c

    def middle_cut(c: Any, tail: int) -> Any:
        return c[:room - 1 - tail] + Text("\u2026") + c[len(c) - tail:]

    long = [c.cell_len > room for c in labels]
    if not any(long) or room < 3 or any(not c.plain.isprintable() or len(c) != c.cell_len for c in labels):
        return [end_cut(c) if n else c for c, n in zip(labels, long, strict=True)]

    def apart(got: list) -> bool:
        seen: dict = {}
        for c, g in zip(labels, got, strict=True):
            if seen.setdefault(g.plain, c.plain) != c.plain:
                return False
        return True

    got = [end_cut(c) if n else c for c, n in zip(labels, long, strict=True)]
    if apart(got):
        return got
    for tail in range(max(1, room // 3), room - 1):
        got = [middle_cut(c, tail) if n else c for c, n in zip(labels, long, strict=True)]
        if apart(got):
            return got
    plains = [c.plain for c in labels]

    def from_difference(i: int, c: Any) -> Any:
        same = max((len(os.path.commonprefix([plains[i], p])) for j, p in enumerate(plains)
                    if j != i and p != plains[i]), default=0)
        start = min(max(0, same - 2), max(0, len(c) - (room - 1)))
        piece = c[start:start + room - 1] if start else c[:room - 1]
        return (Text("\u2026") + piece) if start else piece + Text("\u2026")

    return [from_difference(i, c) if n else c for i, (c, n) in enumerate(zip(labels, long, strict=True))]


def left_out(dropped: list, width: int) -> list:
    if not dropped:
        return []
    return [Text(f"  ({', '.join(dropped)} left out at {width} columns: --json has them)", "dim")]
