"""Files at the bottom of the core: the one way to open a file for reading, to read its first line,
to list a directory, and to turn an ``OSError`` into a ``PisessError``; and the one place pisess
creates files (fork, export -o).

Reading: a file is opened non-blocking (a FIFO would wait for a writer; ``O_NONBLOCK`` means
nothing to a regular file) and refused unless it is a regular file (``/dev/zero`` never ends).
Every I/O failure becomes a ``PisessError`` with ``unreadable=True`` (exit 2), its ``reason``
without the path (``cannot read: Permission denied``) so a list of unreadable paths reads
``path: unreadable: reason``.

Writing: the bytes go to a temporary file in the target directory, are fsynced, and only then get
their name: ``os.link`` for a new name (it fails if the name exists, so nothing is overwritten, not
even by a race), ``os.replace`` when the caller has decided an existing file may be replaced.  A
failure leaves no partial file.  Permissions follow the umask, like any file pi writes.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
from itertools import chain

from .. import parallel
from ..errors import PisessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

_OPEN_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def os_error(path: str, e: OSError, doing: str = "read", *, subject: str = "", code: str | None = None) -> PisessError:
    """The ``PisessError`` of ``e``, met trying to ``doing`` ``path`` (``subject`` names what the
    path is: ``session``, ``allowlist``...).  Reading, a missing file is ``not_found``, anything
    else ``storage`` (writing passes ``code="storage"``: pi's word for any failed write); both
    are unreadable (exit 2)."""
    why = e.strerror or str(e) or type(e).__name__
    if isinstance(e, IsADirectoryError):
        why = "is a directory"
    what = f"{subject} {path}" if subject else path
    if code is None:
        code = "not_found" if isinstance(e, FileNotFoundError) else "storage"
    return PisessError(code, f"cannot {doing} {what}: {why}", path=path, reason=f"cannot {doing}: {why}",
                       unreadable=True)


def not_regular(path: str, mode: int, subject: str = "") -> PisessError:
    what = "is a directory" if stat.S_ISDIR(mode) else "not a regular file (a pipe, socket or device)"
    return PisessError("storage", f"cannot read {subject + ' ' if subject else ''}{path}: {what}", path=path,
                       reason=f"cannot read: {what}", unreadable=True)


def open_regular(path: str, *, regular: bool = False, subject: str = "") -> tuple[int, os.stat_result | None]:
    """A read-only descriptor on ``path`` and its ``fstat``; opening never blocks, and anything but a
    regular file is refused.  ``regular``: a directory listing already said it is one (no
    ``fstat``: the stat is ``None``).  Raises ``PisessError`` (see ``os_error``)."""
    try:
        fd = os.open(path, _OPEN_READ)
    except OSError as e:
        raise os_error(path, e, subject=subject) from None
    if regular:
        return fd, None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        raise os_error(path, e, subject=subject) from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise not_regular(path, st.st_mode, subject)
    return fd, st


def open_file(path: str, *, subject: str = "") -> io.BufferedReader:
    """``open_regular`` as a binary file object."""
    return os.fdopen(open_regular(path, subject=subject)[0], "rb")


def first_line_of(fd: int) -> bytes:
    """The bytes before the first ``\n`` or ``\r`` (Node's ``readline`` ends a line at either; a
    header never holds one), read from ``fd``'s position."""
    chunks = []
    size = 1024  # a header is a few hundred bytes; a bigger first read only copies more
    while True:
        chunk = os.read(fd, size)
        if not chunk:
            break
        n, r = chunk.find(b"\n"), chunk.find(b"\r")
        cut = n if r < 0 else (r if n < 0 else min(n, r))
        if cut >= 0:
            chunks.append(chunk[:cut])
            break
        chunks.append(chunk)
        size = 65536
    return b"".join(chunks)


def read_first_line(path: str, *, subject: str = "") -> bytes:
    """The first line of a regular file (see ``first_line_of``); raises ``PisessError``."""
    fd, _ = open_regular(path, subject=subject)
    try:
        return first_line_of(fd)
    except OSError as e:
        raise os_error(path, e, subject=subject) from None
    finally:
        os.close(fd)


def list_dir(path: str) -> list[os.DirEntry]:
    """The entries of a directory, in the order the OS gives them; raises ``PisessError`` (a
    directory that cannot be listed: permissions, a symlink loop, an I/O error)."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError as e:
        raise os_error(path, e, "list") from None


def write_all(out: Any, data: bytes | bytearray) -> None:
    """Write every byte of ``data`` to the binary stream or descriptor ``out`` (an ``int`` is a
    descriptor), or raise ``OSError``.  A write into a filesystem that fills up returns a short
    count instead of raising (an unbuffered stdout under ``PYTHONUNBUFFERED``, and even a
    ``BufferedWriter`` given more than its buffer holds); the next write raises ``ENOSPC``."""
    view = memoryview(data)
    while view:
        n = os.write(out, view) if isinstance(out, int) else out.write(view)
        if n is None:  # a non-blocking stream that is full for now: wait until it takes more
            import select

            select.select([], [out if isinstance(out, int) else out.fileno()], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, "the write took no bytes")
        view = view[n:]


class _EarlyWriteback:
    """Starts the disk's writing of a big file's bytes while the rest is written
    (``POSIX_FADV_DONTNEED`` on what was written: Linux starts writing those pages back at once, and
    keeps them cached while they are dirty), so the fsync that ends ``write_atomically`` waits for
    the last ``EVERY`` bytes, not all of them.  The 200 MB session's page: its fsync took 0.07-0.09 s
    after the writes, now 0.003 s; the writes take longer (the kernel's part of the writing back is
    done in them), the whole 0.233-0.267 s against 0.236-0.273 s (4 runs each).  (The tail's helper
    writes back every ``EVERY`` bytes too: 16 MB, 40 ms of a 400 MB/s disk, are left to its sync.)"""

    EVERY = 16 << 20

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.done = self.written = 0
        self.able = hasattr(os, "posix_fadvise")

    def wrote(self, length: int) -> None:
        self.written += length
        if self.able and self.written - self.done >= self.EVERY:
            try:
                self.fh.flush()
                os.posix_fadvise(self.fh.fileno(), self.done, self.written - self.done, os.POSIX_FADV_DONTNEED)
            except OSError:
                self.able = False  # (a file system that refuses the advice: the fsync writes it all)
            self.done = self.written


def piece_length(piece: Any) -> int:
    """The bytes of a piece of an output: bytes, or an ``images.Span`` to be copied."""
    return len(piece) if isinstance(piece, (bytes, bytearray)) else piece.length


def _write_pieces(fh: Any, pieces: Iterable[Any], early: bool = True) -> int:
    """Write ``pieces`` (bytes, or ``images.Span``s the kernel copies) to ``fh`` where it stands;
    returns how many bytes.  ``early``: start the disk's writing as it goes (``_EarlyWriteback``)."""
    writeback = _EarlyWriteback(fh) if early else None
    total = 0
    for piece in pieces:
        if isinstance(piece, (bytes, bytearray)):
            write_all(fh, piece)
            n = len(piece)
        else:
            fh.flush()
            piece.send(fh.fileno())
            n = piece.length
        total += n
        if writeback is not None:
            writeback.wrote(n)
    return total


def _tail_first(fh: Any, head: Iterable[Any], tail: Sequence[Any]) -> bool:
    """``tail`` written from the file's start by a helper process (``_TAIL_COPIER``) while
    ``head``'s pieces are made here, then ``head`` put in front of it: by
    ``FALLOC_FL_INSERT_RANGE`` where its length is whole blocks, else by moving the tail up.
    Whether the helper wrote the tail (otherwise all is written here, in order).

    The helper is a new interpreter given the descriptors, not a fork of this one: a fork of the
    200 MB session's export shares its 220 MB, and each page this process wrote while the child
    lived was copied (the page's JSON took 0.20-0.26 s beside it, 0.16 s alone; the whole export
    0.04 s more, alternated).  Not a thread either: one with a piece to write waits up to the
    interpreter's switch interval, 5 ms, for each, and the tail is a thousand pieces."""
    import marshal
    import subprocess

    out = fh.fileno()
    plan: list = []
    sources: set = set()
    for p in tail:
        if isinstance(p, (bytes, bytearray)):
            plan.append(bytes(p))
        else:
            sources.add(p.fh.fileno())
            plan.append((p.fh.fileno(), p.offset, p.length))
    fh.flush()
    try:
        helper = subprocess.Popen(_copier_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, pass_fds=(out, *sorted(sources)))
    except (OSError, ValueError):  # (no interpreter to start: all in order here)
        _write_pieces(fh, chain(head, tail))
        return False
    try:
        try:
            helper.stdin.write(marshal.dumps((out, _EarlyWriteback.EVERY, plan)))  # type: ignore[union-attr]
            helper.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass  # (a helper that died: its answer says so below)
        pieces = list(head)  # (the pieces are made here: the page's last work, while the tail is written)
        answer = helper.stdout.read()  # type: ignore[union-attr]
    except BaseException:
        helper.kill()
        helper.wait()
        raise
    copied = int(answer) if helper.wait() == 0 and answer.isdigit() else None
    if copied is None:  # (the helper failed: what it wrote goes)
        os.ftruncate(out, 0)
        fh.seek(0)
        _write_pieces(fh, chain(pieces, tail))
        return False
    length = sum(map(piece_length, pieces))
    if not (length % INSERT_ALIGN == 0 and _insert_range(out, 0, length)):
        _move_up(out, copied, length)
    fh.seek(0)
    if _write_pieces(fh, pieces, early=False) != length:
        raise OSError(errno.EIO, "the head changed length as it was written")
    return True


# The helper ``_tail_first`` starts: it reads ``(descriptor, every, pieces)`` (``marshal``; a piece
# is bytes, or ``(source descriptor, offset, length)`` for the kernel to copy), writes the pieces
# where the descriptor stands, syncs them to disk (the insert of the head waits for that: better in
# the helper's time than in the head's), and prints how many bytes it wrote.  It starts the disk's
# writing every ``_EarlyWriteback.EVERY`` bytes it copied (``POSIX_FADV_DONTNEED``): on a disk
# that writes 400 MB/s with its syncs, the sync after the whole copy took the 200 MB page's
# helper 0.42-0.5 s more, and the page's JSON waited 0.01-0.25 s for it (4 runs); writing back
# beside the copy, the helper took 0.50-0.62 s in all (0.57-0.73 s before) and the wait was
# 0.01-0.04 s.  (On a disk ten times as fast the sync was 0.03 s, and the writing back beside
# the copy cost 0.1 CPU-s on two busy CPUs: the disk decides, and the slow one costs more.)
_TAIL_COPIER = """
import marshal, os, sys
out, every, pieces = marshal.load(sys.stdin.buffer)
total = 0
start = os.lseek(out, 0, os.SEEK_CUR)
done = 0
early = hasattr(os, "posix_fadvise")
for p in pieces:
    if early and total - done >= every:
        try:
            os.posix_fadvise(out, start + done, total - done, os.POSIX_FADV_DONTNEED)
        except OSError:
            early = False
        done = total
    if type(p) is bytes:
        view = memoryview(p)
        while view:
            n = os.write(out, view)
            if n <= 0:
                sys.exit(1)
            view = view[n:]
            total += n
    else:
        src, offset, left = p
        while left > 0:
            n = os.sendfile(out, src, offset, min(left, 1 << 30))
            if n <= 0:
                sys.exit(1)
            offset += n
            left -= n
            total += n
os.fdatasync(out)
sys.stdout.write(str(total))
"""


def _copier_command() -> list:
    """The helper's command line: this interpreter, isolated, without ``site`` (10 ms, not 20)."""
    return [sys.executable, "-I", "-S", "-c", _TAIL_COPIER]


_IOV_MAX = 1024  # (Linux's limit of pieces in one call)


def write_pieces_at(fd: int, pieces: list, offset: int) -> None:
    """``pieces`` written one after the other at ``offset`` of ``fd`` with ``pwritev`` (the page's
    message spool: no joined copy of a megabyte of stored forms before the kernel copies it; a
    block moved up in a file), the descriptor's position not used; or ``OSError``."""
    i = 0
    while i < len(pieces):
        batch = pieces[i:i + _IOV_MAX]
        n = os.pwritev(fd, batch, offset)
        if n <= 0:
            raise OSError(errno.EIO, "the write took no bytes")
        offset += n
        for piece in batch:  # (the pieces written whole; a piece written in part goes again from where it stopped)
            if n < len(piece):
                pieces = [*pieces[:i], memoryview(piece)[n:], *pieces[i + 1:]] if n else pieces
                break
            n -= len(piece)
            i += 1


def _move_up(fd: int, length: int, by: int) -> None:
    """Bytes ``0:length`` of ``fd`` moved to ``by:by + length``, from the last (no byte is written
    over before it is read)."""
    step = max(1, min(by, 1 << 20))
    end = length
    while end > 0:
        start = max(0, end - step)
        block = os.pread(fd, end - start, start)
        if len(block) != end - start:
            raise OSError(errno.EIO, "the file was shorter than written")
        write_pieces_at(fd, [block], start + by)
        end = start


def _insert_range(fd: int, offset: int, length: int) -> bool:
    """``length`` bytes (whole blocks) put in the file at ``offset``, the bytes after it moved up
    (Linux's ``fallocate`` with ``FALLOC_FL_INSERT_RANGE``): whether the file system did."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return False
    fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    fallocate.restype = ctypes.c_int
    return fallocate(fd, _FALLOC_FL_INSERT_RANGE, offset, length) == 0


def _can_insert(fd: int) -> bool:
    """Can the file system of ``fd`` (a new empty file) insert blocks at its start (``_insert_range``)?"""
    try:
        os.pwrite(fd, bytes(INSERT_ALIGN), 0)
        able = _insert_range(fd, 0, INSERT_ALIGN)
        os.ftruncate(fd, 0)
    except OSError:
        return False
    return able


INSERT_ALIGN = 4096  # the head ``write_atomically`` puts in front of a tail written first is a multiple of this
_FALLOC_FL_INSERT_RANGE = 0x20  # (linux/falloc.h)


def write_atomically(path: str, data: bytes | Iterable[Any], *, replace: bool = False, prefix: str = ".pisess-",
                     tail: Sequence[Any] | None = None) -> str:
    """Create ``path`` with ``data`` (bytes, or pieces written as they come: bytes, or an
    ``images.Span`` of a file, copied by the kernel) through a temporary file in its directory,
    fsynced, then linked (or with ``replace`` renamed) into place.

    ``tail``: pieces that end the file, to be written after ``data``'s.  Where the file system can
    put a range of blocks in front of a file's bytes (``FALLOC_FL_INSERT_RANGE``: Linux's ext4 and
    XFS) they are written first, by a helper process, while ``data``'s pieces are made here (the explorer
    page: its messages while its JSON is made); ``data``'s bytes then go in front, and must be a
    multiple of ``INSERT_ALIGN`` long (otherwise the tail is moved up for them: the same file)."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if not replace and os.path.lexists(path):
        raise PisessError("storage", f"refusing to overwrite existing file {path}", path=path)
    import tempfile  # (only a write needs it: 1.5 ms of every read's start-up)

    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    except OSError as e:
        raise os_error(directory, e, "create a file in", code="storage") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            pieces = (data,) if isinstance(data, (bytes, bytearray)) else data
            if tail is not None and tail and parallel.workers() > 1 and _can_insert(fh.fileno()):
                _tail_first(fh, pieces, tail)
            else:
                _write_pieces(fh, pieces if tail is None else chain(pieces, tail))
            fh.flush()
            os.fsync(fh.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise PisessError("storage", f"refusing to overwrite existing file {path}", path=path) from None
    except OSError as e:
        raise os_error(path, e, "write", code="storage") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass
    return path
