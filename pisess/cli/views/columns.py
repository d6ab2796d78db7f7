"""Aligned columns that fit the width (stats, du): whole columns dropped before cells are cut;
counts as they are shown in them."""

from __future__ import annotations

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
        indent: int = 2) -> tuple[list, str, list, list]:
    """Rows laid out for ``width``: the ``flex`` column (a label) shrinks to ``least`` (its cells
    cut with ``…``), then the columns in ``drop`` go, in that order, until the rows fit.  Returns
    (rows, align, header, the headers left out) for ``columns``."""
    cells = [[c if isinstance(c, Text) else Text(c) for c in r] for r in [header] + rows]
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
    out = []
    for r in cells:
        c = r[flex]
        if c.cell_len > room:
            c = c.copy()
            c.truncate(room, overflow="ellipsis")
        out.append([c if i == flex else r[i] for i in keep])
    return out[1:], "".join(align[i] for i in keep), out[0], dropped


def left_out(dropped: list, width: int) -> list:
    if not dropped:
        return []
    return [Text(f"  ({', '.join(dropped)} left out at {width} columns: --json has them)", "dim")]
