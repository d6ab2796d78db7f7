"""The one reader of a session file's bytes: blocks of whole lines, read into one reused buffer.

Every loop that turns a file into lines stands on ``line_blocks``: the line scan's ``iter_blocks``
(bytes per line), the search and ``du`` byte searches, the search index's update, and the whole
read of the listing (``wholescan``).  Lines end at ``\\n`` only, as in both of pi's readers.

The buffer is read with ``preadv`` straight into a ``bytearray`` that lives as long as the read:
no block is allocated twice, and a search runs at ``memchr``'s speed over pages already mapped.  A
line longer than the buffer grows it (doubling), so the memory is the larger of one block and the
longest line, never the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

BLOCK = 8 << 20  # bytes read at once


def line_blocks(fd: int, start: int = 0, stop: int | None = None, block: int = BLOCK,
                tick: Callable[[int], None] | None = None, first: bytes = b"",
                size_hint: int | None = None) -> Iterator[tuple[bytearray, int, int]]:
    """``(buffer, end, offset)`` for the open file ``fd`` from byte ``start`` (a line's first byte):
    ``buffer[:end]`` holds whole lines starting at file offset ``offset``; only the last block may
    end without a ``\\n`` (the file's last line).  The buffer is reused: use it before taking the
    next item.

    ``stop``: read up to that offset only (else to the end of the file, appends included).
    ``first``: the bytes at ``start``, already read; when they reach ``stop`` nothing more is read.
    ``size_hint``: the bytes expected (a smaller file gets a smaller buffer).  ``tick(n)`` after
    each read of ``n`` bytes.  An ``OSError`` is the caller's to report."""
    limit = stop if stop is not None else size_hint
    room = block if limit is None else max(min(block, limit - start + 1), 4096)
    have = len(first)
    if stop is not None and have >= stop - start:
        first = first[:stop - start]
        have = len(first)
        if have:
            yield bytearray(first), have, start
        return
    buf = bytearray(max(room, have + 1))
    buf[:have] = first
    base = start  # the file offset of buf[0]
    preadv = os.preadv
    while True:
        left = -1 if stop is None else stop - base - have
        got = 0
        if left:
            if have == len(buf):  # one line longer than the buffer
                buf *= 2  # (in place: no zeroed copy beside it; what lies past ``have`` is read over)
            with memoryview(buf) as mv, (mv[have:] if left < 0 else mv[have:have + left]) as into:
                got = preadv(fd, [into], base + have)
            if tick and got:
                tick(got)
        if not got:  # the end: what is left is the last line, without its "\n"
            if have:
                yield buf, have, base
            return
        have += got
        cut = buf.rfind(b"\n", have - got, have)
        if cut < 0:
            continue  # no line ends in what was read: read on (the buffer grows when full)
        end = cut + 1
        yield buf, end, base
        rest = have - end
        if rest:  # (through a view: a memmove, no copy of the line begun)
            with memoryview(buf) as mv:
                mv[:rest] = mv[end:have]
        base += end
        have = rest


def copy_out(buf: bytes | bytearray, lo: int, hi: int) -> bytes:
    """``bytes(buf[lo:hi])`` in one copy (a slice of a ``bytearray`` is a copy of its own)."""
    if type(buf) is bytes:
        return buf[lo:hi]
    with memoryview(buf) as mv, mv[lo:hi] as part:
        return bytes(part)
