"""Inline images: a line parsed without the base64 of its images, and the bytes copied back out.

pi writes every image a tool or the user gives inline, as ``{"type":"image","data":"<base64>",
"mimeType":...}`` inside the entry's line: a session of screenshots is gigabytes of base64 in a few
thousand lines.  Most views need an image's kind and size, never its bytes.  ``jsonl.loads_lean`` parses
a long line with each long ``data`` string of an image block cut out first (found with ``find``,
at memory speed, instead of decoding it into a Python string) and put back as a placeholder: a
short string that says where the base64 is in the file and how long it is.  ``image_chars`` and
``padding`` read an image's size from either form; ``expand`` copies the bytes back into a JSON
document written with placeholders, from the file, a block at a time.  The compact index's scan,
which parses each line whole anyway, keeps where each line's images lie (``jsonl.cuts_of``): a line
read back later is read around them (``lean_line``), so a warm read never touches the base64.

A ``data`` value is cut out only where the result is certain to be what a whole parse gives:
``"data"`` opens an object member (``{`` or ``,`` before it, JSON's whitespace between: a quote
inside a string is escaped) and a ``:`` and a string follow it (whitespace around the colon, as
Python's ``json.dumps`` writes it), its characters are ASCII, and after the parse each placeholder
is the ``data`` of an ``image`` block; otherwise the line is parsed whole.  A string without a
backslash is its bytes (the first quote after it ends it); one written with escapes (``\\/``,
``\\u0041``: other tools write them) is decoded once, to know its length, and the placeholder
says how many bytes its escapes add (``Elided.escaped``): what copies it out decodes it.  A control character inside the base64
would make the line invalid JSON, and the cut does not look for one: an entry read back by offset
was parsed whole by the read that found it (the compact index's scan, or the line scan; an index
cache entry stands for the same bytes), which left such a line out, so ``context --json`` prints
only lines checked byte by byte.  The listing's reads (``ls --long``) parse lean at once: a
control character there goes unnoticed.

The placeholder holds a nonce of this process, so a string in a file cannot pass for one.
"""

from __future__ import annotations

import os
from collections import namedtuple
from collections.abc import Iterator, Sequence

from .blocks import copy_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LINE_MIN = 16 * 1024  # shorter lines are parsed whole: nothing to save
DATA_MIN = 4 * 1024  # base64 characters below which an image's data is parsed as it is
_KEY = b'"data"'
_OPENERS = frozenset(b"{,")
_SPACE = frozenset(b" \t\r\n")  # JSON's whitespace
_NONCE = os.urandom(6).hex()
_MARK = f"\x00pisess-image:{_NONCE}:"
MARK_JSON = b"\\u0000pisess-image:" + _NONCE.encode() + b":"  # the mark as JSON writes it
_paths: list[str] = []
_numbers: dict[str, int] = {}


# (collections' named tuples: typing.NamedTuple would import typing, 2 ms of every run)
class Elided(namedtuple("Elided", "path offset length pad escaped")):
    """Where an image's base64 is: ``length`` bytes at ``offset`` of ``path`` (str; the rest are
    ints); ``pad`` its ``=``; ``escaped``: the bytes its JSON escapes add (0: the bytes are the
    characters).  A placeholder writes ``pad + 3 * escaped`` in one field (0-2 where nothing is
    escaped, as before escapes were cut: index entries written then read the same)."""

    __slots__ = ()

    @property
    def chars(self) -> int:
        return self.length - self.escaped


def path_number(path: str) -> int:
    """The number placeholders name ``path`` by (in this process: a forked child's are its parent's)."""
    n = _numbers.get(path)
    if n is None:
        n = _numbers[path] = len(_paths)
        _paths.append(path)
    return n


def elided(value: Any) -> Elided | None:
    """The ``Elided`` a placeholder stands for; ``None`` for any other value."""
    if type(value) is not str or not value.startswith(_MARK):
        return None
    n, offset, length, packed = value[len(_MARK):].split(":")
    escaped, pad = divmod(int(packed), 3)
    return Elided(_paths[int(n)], int(offset), int(length), pad, escaped)


def image_chars(data: Any) -> tuple[int, int]:
    """``(characters, trailing '=')`` of an image's base64 ``data``, a placeholder or the string."""
    e = elided(data)
    if e is not None:
        return e.chars, e.pad
    if type(data) is not str:
        return 0, 0
    return len(data), len(data) - len(data.rstrip("="))


def cut(raw: bytes, offset: int, path: str) -> tuple[bytes, int]:
    """``raw`` (the line at byte ``offset`` of ``path``) with each long image ``data`` string a
    placeholder, and how many were cut (see the module's note; ``jsonl.loads_lean`` parses it and
    checks with ``placed`` that every cut was an image's data)."""
    return cut_range(raw, 0, len(raw), offset, path)


def cut_range(buf: bytes | bytearray, lo: int, hi: int, offset: int, path: str,
              ascii_buf: bool | None = None) -> tuple[bytes, int]:
    """``cut`` of the line ``buf[lo:hi]`` (at byte ``offset`` of ``path``) where it lies, in a
    buffer of several lines (``ls --long``'s read) or alone: only the pieces around the cuts are
    copied.  ``ascii_buf``: whether all of ``buf`` is ASCII, where the caller knows (else found
    for a line alone, once; a copy of each image tests a piece of a buffer that is not)."""
    whole = lo == 0 and hi == len(buf) and type(buf) is bytes
    if hi - lo < LINE_MIN:
        return buf if whole else copy_out(buf, lo, hi), 0  # type: ignore[return-value]
    pieces: list = []
    last = lo
    find = buf.find
    cuts = 0
    for start, end in data_strings(buf, lo, hi):
        escaped = 0
        if find(b"\\", start, end) >= 0:
            counted = _escaped_chars(buf, start, end)
            if counted is None or counted[0] < DATA_MIN:
                continue
            escaped = end - start - counted[0]
            pad = counted[1]
        else:
            if ascii_buf is None:  # (usually true: then no piece of it needs the test, nor a copy)
                ascii_buf = whole and buf.isascii()
            if not ascii_buf and not buf[start:end].isascii():
                continue
            pad = 2 if buf[end - 2:end] == b"==" else 1 if buf[end - 1] == 61 else 0  # 61: "="
        pieces += (buf[last:start],
                   MARK_JSON + f"{path_number(path)}:{offset + start - lo}:{end - start}:{pad + 3 * escaped}".encode())
        last = end
        cuts += 1
    if not cuts:
        return buf if whole else copy_out(buf, lo, hi), 0  # type: ignore[return-value]
    pieces.append(buf[last:hi])
    return b"".join(pieces), cuts


def data_strings(buf: bytes | bytearray, lo: int, hi: int, escapes: bool = False) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the characters of each string of ``DATA_MIN`` bytes or more that is the
    value of a ``data`` member of an object in the line ``buf[lo:hi]`` (see the module's note).
    The string ends at its first quote, or with ``escapes`` at its first quote that no backslash
    escapes (else a caller that decodes it finds the escaped quote)."""
    find = buf.find
    pos = lo
    while True:
        k = find(_KEY, pos, hi)
        if k < 0:
            return
        start = _string_after(buf, k + len(_KEY), hi)
        if start < 0:
            pos = k + len(_KEY)
            continue
        end = find(b'"', start, hi)
        while escapes and end >= 0 and buf[end - 1] == 0x5C:  # "\\": escaped after an odd run of them
            j = end - 1
            while j > start and buf[j - 1] == 0x5C:
                j -= 1
            if (end - j) % 2 == 0:
                break
            end = find(b'"', end + 1, hi)
        if end < 0:
            return
        pos = end + 1
        if end - start >= DATA_MIN and _opens_member(buf, k, lo):
            yield start, end


def _string_after(buf: bytes | bytearray, pos: int, hi: int) -> int:
    """Where the string starts that follows a key ending at ``pos`` (``:`` and JSON's whitespace
    around it), else -1.  pi writes ``"data":"``: the first two bytes tell."""
    if buf[pos:pos + 2] == b':"':
        return pos + 2
    while pos < hi and buf[pos] in _SPACE:
        pos += 1
    if pos >= hi or buf[pos] != 58:  # ":"
        return -1
    pos += 1
    while pos < hi and buf[pos] in _SPACE:
        pos += 1
    return pos + 1 if pos < hi and buf[pos] == 34 else -1  # '"'


def _opens_member(buf: bytes | bytearray, k: int, lo: int) -> bool:
    """Is the quote at ``k`` the start of an object member's key (``{`` or ``,`` before it, JSON's
    whitespace between)?"""
    k -= 1
    while k >= lo and buf[k] in _SPACE:
        k -= 1
    return k >= lo and buf[k] in _OPENERS


_PIECE = 1 << 20  # bytes of an escaped string decoded at once


def _escaped_chars(buf: bytes | bytearray, start: int, end: int) -> tuple[int, int] | None:
    """``(characters, trailing '=')`` of the JSON string ``buf[start:end]`` (escapes in it, no
    quotes), decoded a piece at a time (``_decoded``'s test of each: a string of 100 MB is never
    held twice), else ``None``.  A piece ends before a run of backslashes near its end: such a
    run starts an escape, and an escape is never cut in two."""
    chars = pad = 0
    i = start
    while i < end:
        j = min(end, i + _PIECE)
        if j < end:
            k = buf.rfind(b"\\", j - 6, j)  # (an escape is at most 6 bytes: \uXXXX)
            if k >= 0:
                while k > i and buf[k - 1] == 0x5C:
                    k -= 1
                if k == i:  # the run opens the piece: end it after the run's escapes instead
                    k = _escapes_end(buf, k, end)
                j = k
        text = _decoded(buf[i:j])
        if text is None:
            return None
        chars += len(text)
        kept = len(text.rstrip("="))
        pad = pad + len(text) if kept == 0 else len(text) - kept
        i = j
    return chars, pad


def _escapes_end(buf: bytes | bytearray, k: int, end: int) -> int:
    """Where the escapes end that the run of backslashes at ``k`` opens: after the run's pairs
    (``\\\\``) and the escape its last odd backslash opens (``\\uXXXX`` or two bytes)."""
    r = k
    while r < end and buf[r] == 0x5C:
        r += 1
    if (r - k) % 2:
        r += 5 if buf[r:r + 1] == b"u" else 1
    return min(r, end)


def _decoded(raw: bytes | bytearray) -> str | None:
    """The ASCII string a JSON string's bytes (without quotes, escapes in them) stand for, else
    ``None`` (an escaped quote ends it elsewhere, or not ASCII)."""
    import orjson

    try:
        text = orjson.loads(b'"' + raw + b'"')
    except orjson.JSONDecodeError:
        return None
    return text if type(text) is str and text.isascii() else None


def lean_line(fh: Any, offset: int, length: int, cuts: Sequence[int], path: str) -> bytes:
    """The line of ``length`` bytes at ``offset`` of the open file ``fh`` (of ``path``) as ``cut``
    makes it, read without the image bytes ``cuts`` (``jsonl.cuts_of``) names: what ``cut`` of the
    whole line gives, for a line unchanged since the cuts were found."""
    pieces: list = []
    n = path_number(path)
    last = 0
    read, seek = fh.read, fh.seek
    for i in range(0, len(cuts), 3):
        start, size, pad = cuts[i], cuts[i + 1], cuts[i + 2]
        seek(offset + last)
        pieces += (read(start - last), MARK_JSON + f"{n}:{offset + start}:{size}:{pad}".encode())
        last = start + size
    seek(offset + last)
    pieces.append(read(length - last))
    return b"".join(pieces)


def placed(v: Any) -> int:
    """How many placeholders are the ``data`` of an ``image`` block in ``v`` (-1: one is elsewhere)."""
    found = placed = 0
    stack = [v]
    while stack:
        x = stack.pop()
        if type(x) is dict:
            for key, y in x.items():
                if type(y) is str:
                    if y.startswith(_MARK):
                        found += 1
                        placed += key == "data" and x.get("type") == "image"
                elif type(y) in (dict, list):
                    stack.append(y)
        elif type(x) is list:
            for y in x:
                if type(y) is str:
                    found += y.startswith(_MARK)
                elif type(y) in (dict, list):
                    stack.append(y)
    return placed if placed == found else -1


def read_data(e: Elided) -> str:
    """The base64 a placeholder stands for (an export that embeds images)."""
    with open(e.path, "rb") as fh:
        fh.seek(e.offset)
        raw = fh.read(e.length)
    if e.escaped:
        text = _decoded(raw)
        if text is None or len(raw) < e.length:
            raise Span(None, e.path, e.offset, e.length)._shorter()
        return text
    return raw.decode("ascii")


_BLOCK = 1 << 20


class Span(namedtuple("Span", "fh path offset length")):
    """``length`` bytes at ``offset`` of the open file ``fh`` (of ``path``): an image's base64, to be
    copied out as it is."""

    __slots__ = ()

    def chunks(self) -> Iterator[bytes]:
        """The bytes, a block at a time (read at their offset: the file's position is left as it
        is, for whoever reads the same file meanwhile: the page's table reads its spools)."""
        fd = self.fh.fileno()
        offset, length = self.offset, self.length
        while length > 0:
            chunk = os.pread(fd, min(_BLOCK, length), offset)
            if not chunk:
                raise self._shorter()
            offset += len(chunk)
            length -= len(chunk)
            yield chunk

    def send(self, fd: int) -> None:
        """Copy the bytes to descriptor ``fd`` inside the kernel (``sendfile``: no trip through this
        process's memory, the most of ``context --json``'s time on a session of screenshots), else,
        where the kernel cannot (an ``fd`` it does not take), through ``chunks``.  A short or
        failed write raises ``OSError`` as ``files.write_all`` does."""
        import errno

        src, offset, left = self.fh.fileno(), self.offset, self.length
        while left > 0:
            try:
                n = os.sendfile(fd, src, offset, min(left, 1 << 30))
            except BlockingIOError:  # a non-blocking stream that is full for now
                import select

                select.select([], [fd], [])
                continue
            except OSError as e:
                if e.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ESPIPE):
                    raise
                from .files import write_all

                for chunk in Span(self.fh, self.path, offset, left).chunks():
                    write_all(fd, chunk)
                return
            if n == 0:
                raise self._shorter()
            offset += n
            left -= n

    def _shorter(self) -> Exception:
        from ..errors import PisessError

        return PisessError("storage", f"{self.path} changed while it was being read (it is shorter than before); "
                           "run the command again", path=self.path)


def expand(doc: bytes, *, spans: bool = False) -> Iterator[Any]:
    """``doc`` (JSON written with placeholders) in pieces, each placeholder replaced by the
    base64 it stands for, read from its file a block at a time: the document as it would be
    written from the whole values, without holding an image.  With ``spans`` an image is one
    ``Span`` for the writer to copy (``Span.send``) before it asks for the next piece."""
    if MARK_JSON not in doc:
        yield doc
        return
    last = 0
    files: dict[str, Any] = {}
    try:
        while True:
            k = doc.find(MARK_JSON, last)
            if k < 0:
                break
            end = doc.index(b'"', k)
            n, offset, length, packed = doc[k + len(MARK_JSON):end].split(b":")
            yield doc[last:k]
            path = _paths[int(n)]
            fh = files.get(path)
            if fh is None:
                fh = files[path] = open(path, "rb")
            span = Span(fh, path, int(offset), int(length))
            if int(packed) >= 3:  # written with escapes: decoded, then written as JSON writes it
                import orjson

                yield orjson.dumps(read_data(Elided(path, span.offset, span.length, 0, 1)))[1:-1]
            elif spans:
                yield span
            else:
                yield from span.chunks()
            last = end
        yield doc[last:]
    finally:
        for fh in files.values():
            fh.close()
