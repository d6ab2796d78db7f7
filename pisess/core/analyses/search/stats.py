"""The stats of a search's files, and the digests of sets of them the search index keeps.

To know that a file has not changed since it was indexed takes its stat: 100,000 sessions cost
their 100,000 stats (each looked up from its directory's open descriptor).  A set of files found
up to date every one is kept as the digest of each ``CHUNK`` of their stats (``keep_set``), so the
next search of the same set compares one digest per chunk instead of each file's row
(``kept_set``); only the chunks whose stats changed (the session pi is writing to) are looked up.
"""

from __future__ import annotations

import itertools
import operator
import os
import sqlite3
import struct
import sys
import time
from dataclasses import dataclass

from ...reading import cache
from .database import unless_busy


def path_key(path: str) -> bytes:
    """The file's key in the index: its absolute path's bytes."""
    return os.fsencode(path if path.startswith("/") and "/." not in path and "//" not in path
                       else os.path.abspath(path))


FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # (os.fsencode's, without its call)


_BY_FD = os.stat in os.supports_dir_fd and os.sep == "/"
_STATS = struct.Struct("<QQqqqQ")  # device, inode, size, mtime, ctime, mode: one file's part of a set's digest
CHUNK = 256  # files per digest of a kept set
DIGEST = 16  # bytes of each
KEPT_SETS = 64  # sets the index keeps (the most recently kept)


def dir_key(where: str) -> bytes:
    """The key of the directory ``where`` (its files' keys begin with it), ending in ``/``."""
    prefix = path_key(where)
    return prefix if prefix.endswith(b"/") else prefix + b"/"


def set_sig(prefixes: dict[str, bytes], files: list[str]) -> bytes:
    """The signature of a set of files: its names, and their directories' keys."""
    return cache.blake2b(repr(sorted(prefixes.items())).encode("utf-8", "surrogatepass") + b"\0"
                         + "\0".join(files).encode("utf-8", "surrogatepass"), digest_size=DIGEST).digest()


@dataclass(frozen=True)
class Listed:
    """A project's files as its listing has them: ``directory`` (as given, with its ``/``) joined
    to each of ``names``, in order; ``sig``, the set's signature (``set_sig``)."""

    directory: str
    names: list[str]
    sig: bytes


@dataclass
class Stated:
    """The stats of a search's files (``stat_all``).

    ``stats``: each file's stat, in order (``None``: it cannot be stat'ed, or its chunk is as the
    kept set has it: not needed, and not kept); ``prefixes``: the key of each directory as given
    (with its ``/``, the key ending in one too); ``sig``: the set's signature (its names and their
    directories' keys), ``None`` for a set that cannot be kept (a name that is no file's, a
    directory named two ways, a file that cannot be stat'ed); ``digests``: the digest of each
    ``CHUNK`` of stats, one after the other; ``stale``: the chunks whose stats are not those of
    the set kept (``None``: no such set kept: every file is to be looked at); ``fresh``: the bytes
    of the files of the other chunks."""

    stats: list
    prefixes: dict[str, bytes]
    sig: bytes | None
    digests: bytes
    stale: list[int] | None
    fresh: int


def stat_all(files: list[str], listed: Listed | None = None, con: sqlite3.Connection | None = None) -> Stated:
    """Every file's stat, each looked up from its directory (an open descriptor: each stat walks
    one name, not the whole path: 100,000 files cost their 100,000 stats and little more), the
    digests of the set, and with the index's connection ``con``, its chunks compared with the set
    kept (``kept_set``).  ``listed``: the listing ``files`` are (``listings.project``: its
    directory joined to each of its names), whose signature is not made again.

    Where every file is a name in one directory (a project's listing), the stats of a chunk found
    as kept are dropped as soon as its digest is made: 100,000 stats kept to the end took 30 MB
    and 25 ms to free."""
    if con is not None:
        got = _one_directory(files, listed, con)
        if got is not None:
            return got
    stats, parts, prefixes, whole = _each(files)
    if not whole or len(set(prefixes.values())) != len(prefixes):
        return Stated(stats, prefixes, None, b"", None, 0)
    blake2b = cache.blake2b
    sig = listed.sig if listed is not None and len(listed.names) == len(files) else set_sig(prefixes, files)
    digests = b"".join(blake2b(b"".join(parts[k:k + CHUNK]), digest_size=DIGEST).digest()
                       for k in range(0, len(parts), CHUNK))
    stale = kept_set(con, sig, digests) if con is not None else None
    fresh = 0
    if stale is not None:
        look = {i for c in stale for i in range(c * CHUNK, min((c + 1) * CHUNK, len(files)))}
        fresh = sum(st.st_size for i, st in enumerate(stats) if i not in look)
    return Stated(stats, prefixes, sig, digests, stale, fresh)


_FIELDS = operator.attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns", "st_mode")
_SIZE = operator.attrgetter("st_size")


def _one_directory(files: list[str], listed: Listed | None, con: sqlite3.Connection) -> Stated | None:
    """``stat_all`` where every file is a name in one directory, spelled as the first file
    spells it (a project's listing), and each can be stat'ed: a chunk at a time, the per-file
    work the stat alone.  ``None`` otherwise (``_each`` takes them one by one)."""
    if not _BY_FD or not files:
        return None
    if listed is not None and len(listed.names) == len(files):
        prefix, names, sig = listed.directory, listed.names, listed.sig
    else:
        d, sep, _ = files[0].rpartition("/")
        prefix = d + sep
        k = len(prefix)
        if (not sep or not all(map(str.startswith, files, itertools.repeat(prefix)))
                or not all(map((k - 1).__eq__, map(str.rfind, files, itertools.repeat("/"))))
                or prefix in files or prefix + "." in files or prefix + ".." in files):
            return None
        names = [p[k:] for p in files]
        sig = None
    prefixes = {prefix: dir_key(prefix)}
    if sig is None:
        sig = set_sig(prefixes, files)
    kept = _kept_digests(con, sig, len(files))
    fd = cache.open_dir(prefix)
    if fd is None:
        return None
    stat, blake2b, pack = os.stat, cache.blake2b, _STATS.pack
    stats: list = []
    digests: list[bytes] = []
    stale: list[int] = []
    fresh = 0
    try:
        for c, i in enumerate(range(0, len(files), CHUNK)):
            chunk = [stat(n, dir_fd=fd) for n in names[i:i + CHUNK]]
            digest = blake2b(b"".join(itertools.starmap(pack, map(_FIELDS, chunk))), digest_size=DIGEST).digest()
            digests.append(digest)
            if kept is not None and kept[c * DIGEST:(c + 1) * DIGEST] == digest:
                fresh += sum(map(_SIZE, chunk))
                stats += itertools.repeat(None, len(chunk))
            else:
                stale.append(c)
                stats += chunk
    except (OSError, struct.error):  # (a file gone, a value out of range: one by one)
        return None
    finally:
        os.close(fd)
    return Stated(stats, prefixes, sig, b"".join(digests), None if kept is None else stale, fresh)


def _kept_digests(con: sqlite3.Connection, sig: bytes, count: int) -> bytes | None:
    """The digests of the set ``sig`` kept, for ``count`` files (``None``: none such)."""
    row = con.execute("SELECT digest FROM sets WHERE sig=?", (sig,)).fetchone()
    if row is None or len(row[0]) != -(-count // CHUNK) * DIGEST:
        return None
    return row[0]


def _each(files: list[str]) -> tuple[list, list[bytes], dict[str, bytes], bool]:
    """``stat_all``'s stats, parts and directories' keys, file by file; and whether the set can be
    kept."""
    stats: list = []
    parts: list[bytes] = []
    prefixes: dict[str, bytes] = {}
    whole = _BY_FD
    stat, pack = os.stat, _STATS.pack
    last = None
    fd: int | None = None
    try:
        for p in files:
            d, sep, name = p.rpartition("/")
            if not _BY_FD or name in ("", ".", ".."):
                whole = False
                stats.append(_stat(p, None))
                continue
            if d != last:
                last = d
                if fd is not None:
                    os.close(fd)
                where = d + sep or "."
                fd = cache.open_dir(where)
                if d + sep not in prefixes:
                    prefixes[d + sep] = dir_key(where)
            try:
                st = stat(name, dir_fd=fd) if fd is not None else stat(p)
            except OSError:
                stats.append(None)
                whole = False
                continue
            stats.append(st)
            parts.append(pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode))
    except struct.error:  # (a value out of range: the set is not kept)
        whole = False
        stats += [_stat(p, None) for p in files[len(stats):]]
    finally:
        if fd is not None:
            os.close(fd)
    return stats, parts, prefixes, whole


def kept_set(con: sqlite3.Connection, sig: bytes | None, digests: bytes) -> list[int] | None:
    """The chunks of a kept set whose stats are no longer those it was kept with (``keep_set``):
    the files of the others are all up to date.  ``None``: no such set kept (every file is
    looked at)."""
    if sig is None:
        return None
    row = con.execute("SELECT digest FROM sets WHERE sig=?", (sig,)).fetchone()
    if row is None or len(row[0]) != len(digests):
        return None
    kept = row[0]
    return [k // DIGEST for k in range(0, len(digests), DIGEST) if kept[k:k + DIGEST] != digests[k:k + DIGEST]]


def keep_set(con: sqlite3.Connection, sig: bytes | None, digests: bytes) -> None:
    """Remember that every file of this set was up to date with these stats (each its ``fresh``
    key: not written in the clock tick of its indexing), so the next search of the set compares a
    digest of each ``CHUNK`` of stats instead of each file's key (of the last ``KEPT_SETS``
    sets).  Not when another process is writing: the next search keeps it."""
    if sig is None:
        return

    def write(con: sqlite3.Connection) -> None:
        con.execute("INSERT OR REPLACE INTO sets VALUES (?,?,?)", (sig, digests, time.time_ns()))
        con.execute("DELETE FROM sets WHERE sig NOT IN (SELECT sig FROM sets ORDER BY made DESC LIMIT ?)", (KEPT_SETS,))

    unless_busy(con, write, sqlite3.OperationalError)


def _stat(path: str, fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(path, dir_fd=fd)
    except OSError:
        return None
