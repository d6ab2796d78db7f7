"""One read of a whole session file, its images' base64 left where it is (the listing's ``ls --long``).

``WholeScan`` gives the lines of a file as the line scan gives them (``jsonl.scan_file(path,
light=False, images="lean")``: split on ``\\n`` only, each parsed as ``jsonl.loads_lean`` parses
it), read a block at a time into one reused buffer (``blocks.line_blocks``).  A long line is never copied out whole: each
long ``data`` string of an image block is found in the buffer and cut out there
(``images.cut_range``), so only the text around the images is copied and parsed.  A session of
screenshots (a 400 KB base64 PNG in every tool result) is then read at about the speed of a
``memchr`` over its bytes, in the memory of one block and its text.

The scan also notes the first line that holds a ``\\r`` before its last byte: pi's listing (Node's
``readline``) ends a line there too, so a reader of pi's listing fields takes the lines as they are
only before it.  A ``\\r\\n`` ends the same line for both (the ``\\r`` left on the scan's line is
JSON's whitespace): a file written with CRLF is read once.
"""

from __future__ import annotations

from collections.abc import Iterator

from .blocks import copy_out, line_blocks
from .images import LINE_MIN, cut_range, data_strings, path_number, placed
from .jsonl import RawFile, RawLine, is_blank, line_start_after, loads_lean, parse_json
from .lines import NOT_JSON

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BLOCK = 4 << 20  # bytes read at once; a longer line grows the buffer to hold it


class WholeScan:
    """The lines of the open file ``fd`` (of ``path``) from its start, as ``RawLine`` records equal
    to the line scan's with ``images="lean"`` (see the module's note).  ``data``: the file's first
    bytes, already read (all of it when it holds ``size`` bytes or more: nothing more is read).
    ``start``/``stop``: the lines of that byte range only (``start`` at a line's first byte, no
    ``data``), numbered from 1.

    After the iteration: ``size`` (the offset after the last byte read), ``ends_with_newline``, and
    all along ``first_cr``, the offset of the first line given so far that holds a ``\\r`` other
    than a last byte (the ``\\r`` of a ``\\r\\n``)
    (``None``: none)."""

    def __init__(self, path: str, fd: int, size: int, data: bytes = b"", start: int = 0,
                 stop: int | None = None) -> None:
        self.path = path
        self.fd = fd
        self.expected = size if stop is None else stop
        self.data = data if stop is None else data[:stop - start]
        self.start = start
        self.stop = stop
        self.size = 0
        self.ends_with_newline = True
        self.first_cr: int | None = None
        self.elided = 0  # bytes of the lines given that were images' base64, cut out unread
        self._ascii: bool | None = None  # every byte of the buffer is ASCII (None: not known since the last read)

    def raw_file(self, lines: list[RawLine]) -> RawFile:
        """The ``RawFile`` of the lines given (all of them: the iteration ran to its end)."""
        return RawFile(self.path, self.size, lines, self.ends_with_newline, False, images="lean")

    def __iter__(self) -> Iterator[RawLine]:
        data, stop = self.data, self.stop
        if stop is None and data and len(data) >= self.expected - self.start:
            stop = self.start + len(data)  # the first read held the whole file: nothing more is read
        number = 0  # lines given
        end = self.start
        for buf, n, base in line_blocks(self.fd, self.start, stop, BLOCK, first=data, size_hint=self.expected):
            self._ascii = None
            find = buf.find
            pos = 0
            while pos < n:
                e = find(b"\n", pos, n)
                if e < 0:
                    e = n  # the last line, without its "\n"
                    self.ends_with_newline = False
                number += 1
                yield self._line(buf, pos, e, base, number)
                pos = e + 1
            end = base + n
        self.size = end

    def _line(self, buf: bytearray, lo: int, hi: int, base: int, number: int) -> RawLine:
        offset = base + lo
        n = hi - lo
        if n >= LINE_MIN and _opens_object(buf, lo, hi):  # never blank; the images are cut in the buffer
            if self.first_cr is None and buf.find(b"\r", lo, hi - 1) >= 0:
                self.first_cr = offset
            if self._ascii is None:  # (one test of the buffer, usually true, instead of a copy of each image)
                self._ascii = buf.isascii()
            lean, cuts = cut_range(buf, lo, hi, offset, self.path, self._ascii)
            if not cuts:
                return RawLine(number, offset, n, False, parse_json(lean))
            v = parse_json(lean)
            if placed(v) != cuts:
                v = parse_json(copy_out(buf, lo, hi))  # a cut outside an image block: the whole line as it is
            else:
                self.elided += n - len(lean)
            return RawLine(number, offset, n, False, v)
        raw = copy_out(buf, lo, hi)
        if self.first_cr is None and raw.find(b"\r", 0, n - 1) >= 0:
            self.first_cr = offset
        if is_blank(raw):
            return RawLine(number, offset, n, True, None)
        return RawLine(number, offset, n, False, loads_lean(raw, offset, self.path))


SPLIT_MIN = 48 << 20  # below this, a fork and sending half the lines back cost more than they save
SAMPLE = 4 << 20  # bytes read before deciding whether the second half goes to a child


def read_lines(path: str, fd: int, size: int, data: bytes = b"") -> tuple[RawFile, int | None]:
    """Every line of the open file ``fd`` (``WholeScan``) as a ``RawFile``, and the offset of the
    first line that holds a ``\\r``.

    A file of ``SPLIT_MIN`` bytes or more whose first ``SAMPLE`` bytes are mostly images' base64
    is read in two parts at once, the second by a forked child, when the caller allows two
    processes (``parallel.workers``): the child's time goes to finding the lines in the bytes, and
    the few values it sends back are quickly pickled.  (Text is not: sending its values back costs
    about what parsing them does.)  A child that fails leaves its part to be read here."""
    from .. import parallel

    split = line_start_after(fd, size // 2, size) if size >= SPLIT_MIN and parallel.workers() > 1 else None
    scan = WholeScan(path, fd, size, data, stop=split)
    if split is None:
        return scan.raw_file(list(scan)), scan.first_cr
    lines: list = []
    rest = iter(scan)
    for ln in rest:
        lines.append(ln)
        if ln.offset >= SAMPLE:
            break
    read = lines[-1].offset + lines[-1].length if lines else 0
    sent = None
    if _mostly_images(scan.elided, read):
        path_number(path)  # (the child's placeholders name the file by the number it has here)
        with parallel.Child(_sent_part, path, fd, size, split) as child:
            lines += rest
            sent = child.result()
    else:
        lines += rest
    n = len(lines)
    if sent is None:  # text, or a child that failed: the second part here
        second = WholeScan(path, fd, size, start=split)
        for ln in second:
            ln.number += n
            lines.append(ln)
        end, ends_with_newline, first_cr = second.size, second.ends_with_newline, second.first_cr
    else:
        more, end, ends_with_newline, first_cr = sent
        lines += [RawLine(k + n, *others) for k, *others in more]
    whole = RawFile(path, end, lines, ends_with_newline, False, images="lean")
    return whole, scan.first_cr if scan.first_cr is not None else first_cr


def _mostly_images(elided: int, read: int) -> bool:
    """Were more than half of the ``read`` bytes images' base64 (``elided``)?"""
    return elided * 2 > read


def _sent_part(path: str, fd: int, size: int, start: int) -> tuple:
    """The lines from byte ``start`` on, as plain tuples (they pickle faster than the records), the
    offset after the last byte, whether it ends in a newline, and the first line holding a ``\\r``."""
    scan = WholeScan(path, fd, size, start=start)
    lines = [(ln.number, ln.offset, ln.length, ln.blank, ln.value) for ln in scan]
    return lines, scan.size, scan.ends_with_newline, scan.first_cr


class Skim:
    """The values pi's listing loop reads (``buildSessionInfo``: a line's type, its message's role,
    time and content kind, a ``session_info`` name), line by line from byte ``start`` of the open
    file ``fd`` up to ``stop``: ``(offset, value)`` of each line that is not blank, ``value`` as
    ``jsonl.parse_json`` gives it (``NOT_JSON`` included) except that each long ``data`` string of
    an object (an image's base64, in whatever shape: spaces around the colon, escapes, keys in any
    order) is read as ``""``: found by byte searches and never decoded, nor copied.  The listing
    reads no ``data`` member, so its answer is the whole parse's; a line whose cut string pi would
    refuse (a control character or a bad escape inside it) is the one difference, as in
    ``images``' lean reads.  ``data``: the bytes at ``start``, already read.

    A line that holds a ``\\r`` before its last byte stops the iteration (Node's ``readline``
    ends a line there too): ``first_cr`` is then its offset, for the caller to read the rest as pi
    splits it."""

    def __init__(self, fd: int, start: int, stop: int, data: bytes = b"") -> None:
        self.fd = fd
        self.start = start
        self.stop = stop
        self.data = data[:stop - start]
        self.first_cr: int | None = None

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        for buf, n, base in line_blocks(self.fd, self.start, self.stop, BLOCK, first=self.data):
            find = buf.find
            pos = 0
            while pos < n:
                e = find(b"\n", pos, n)
                if e < 0:
                    e = n
                if e - pos >= LINE_MIN:
                    if find(b"\r", pos, e - 1) >= 0:
                        self.first_cr = base + pos
                        return
                    lean = skim_cut(buf, pos, e)
                    v = _parsed(lean)
                    if v is NOT_JSON and len(lean) < e - pos:
                        v = _parsed(copy_out(buf, pos, e))  # (a cut that broke the line: the line as it is)
                    if v is not None:
                        yield base + pos, v
                else:
                    raw = copy_out(buf, pos, e)
                    if raw.find(b"\r", 0, len(raw) - 1) >= 0:
                        self.first_cr = base + pos
                        return
                    if not is_blank(raw):
                        yield base + pos, parse_json(raw)
                pos = e + 1


def _opens_object(buf: bytearray, lo: int, hi: int) -> bool:
    """Does ``buf[lo:hi]`` begin with ``{`` after JSON's whitespace (other tools write a space or a
    tab before it)?"""
    while lo < hi:
        b = buf[lo]
        if b != 0x20 and b != 0x09 and b != 0x0D and b != 0x0A:
            return b == 0x7B
        lo += 1
    return False


def _parsed(raw: bytes) -> Any:
    return None if is_blank(raw) else parse_json(raw)


def skim_cut(buf: bytes | bytearray, lo: int, hi: int) -> bytes:
    """The line ``buf[lo:hi]`` with the characters of each long ``data`` string of an object left
    out (``""`` in their place): the keys found as ``images.cut_range`` finds them, the string's
    end at its first quote that no backslash escapes; nothing in it decoded."""
    with memoryview(buf) as mv:
        pieces: list = []
        last = lo
        for start, end in data_strings(buf, lo, hi, escapes=True):
            pieces.append(mv[last:start])
            last = end
        pieces.append(mv[last:hi])
        lean = b"".join(pieces)
        pieces.clear()  # (the views go before the buffer may grow)
    return lean

