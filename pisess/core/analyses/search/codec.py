"""The kept form of a file's places (``places.Places``) in the search index's ``places`` table.

A file's places are kept as one part (``encode_places``), then one more part per append carried
over (``encode_tail``), read back in order (``load_places``); whatever does not read back as
places of one entry per column is no answer (``None``), and the file is placed anew.
"""

from __future__ import annotations

import marshal
from array import array
from dataclasses import replace

from .places import Places

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any


def encode_places(p: Places) -> bytes | None:
    """The kept form of ``p`` (``None`` when a value cannot be kept: nested too deep)."""
    ids: Any = p.ids
    try:
        joined = "\n".join(ids)
        if ids and joined.count("\n") == len(ids) - 1:
            ids = joined  # one string: loaded as one object, split in one call
    except TypeError:  # (an id that is not a string: kept as a list)
        pass
    try:
        return marshal.dumps((p.offsets.tobytes(), p.lines.tobytes(), p.where, ids, p.kinds, p.kind_table,
                              p.session_id, p.name, p.cwd, p.created_at, p.reader, p.note, p.placement_error,
                              p.dropped_lines, p.id_width, p.ext))
    except ValueError:
        return None


def encode_tail(p: Places, start: int) -> bytes | None:
    """The entries of ``p`` from ``start`` on, and what else changed with them (``extend_places``):
    one more part of a file's kept places (``decode_tail``)."""
    try:
        return marshal.dumps((p.offsets[start:].tobytes(), p.lines[start:].tobytes(), p.where[start:],
                              p.ids[start:], p.kinds[start:], p.kind_table, p.id_width, p.ext))
    except ValueError:
        return None


def decode_tail(p: Places, data: bytes) -> Places | None:
    """``p`` with one more part (``encode_tail``) added on, or ``None`` (damaged)."""
    try:
        offs, lines, where, ids, kinds, table, width, ext = marshal.loads(data)
        offsets, numbers = array("q", p.offsets), array("q", p.lines)
        offsets.frombytes(offs)
        numbers.frombytes(lines)
        all_where, all_ids, all_kinds = p.where + where, [*p.ids, *ids], p.kinds + kinds
        if not _columns_agree(offsets, numbers, all_where, all_ids, all_kinds, table):
            return None
        return replace(p, offsets=offsets, lines=numbers, where=all_where, ids=all_ids, kinds=all_kinds,
                       kind_table=[tuple(k) for k in table], id_width=width, ext=ext)
    except Exception:  # noqa: BLE001 - a damaged part of any shape is no answer: the file is placed anew
        return None


def _columns_agree(offsets: Any, numbers: Any, where: Any, ids: Any, kinds: Any, table: Any) -> bool:
    """Kept places read back hold one of each column per entry, and kinds within their table."""
    n = len(offsets)
    return (len(numbers) == len(where) == len(ids) == len(kinds) == n
            and not kinds.translate(None, bytes(range(len(table)))))  # (every code deleted: all within the table)


def decode_places(data: bytes) -> Places | None:
    """``encode_places``' ``Places`` again, or ``None`` for anything else (damaged, another version's)."""
    try:
        offs, lines, where, ids, kinds, table, *rest = marshal.loads(data)
        offsets, numbers = array("q"), array("q")
        offsets.frombytes(offs)
        numbers.frombytes(lines)
        ids = ids.split("\n") if type(ids) is str else ids
        if not _columns_agree(offsets, numbers, where, ids, kinds, table):
            return None
        return Places(offsets, numbers, where, ids, kinds, [tuple(k) for k in table], *rest)
    except Exception:  # noqa: BLE001 - a damaged row of any shape is no answer: the file is placed anew
        return None


def load_places(con: sqlite3.Connection, fid: int, reader: str, pi: str) -> tuple[Places | None, int, bytes, int]:
    """``(places, indexed end and print they are of, how many parts)`` of a file (``None``: none
    kept, or damaged)."""
    rows = con.execute("SELECT size, print, data FROM places WHERE file=? AND reader=? AND pi=? ORDER BY part",
                       (fid, reader, pi)).fetchall()
    if not rows:
        return None, 0, b"", 0
    p = decode_places(rows[0][2])
    for row in rows[1:]:
        if p is None:
            break
        p = decode_tail(p, row[2])
    return p, rows[-1][0], rows[-1][1], len(rows)


