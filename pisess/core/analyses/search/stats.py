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

from ...reading import cache
from .database import TIMEOUT


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


def stat_all(files: list[str], sig: bytes | None = None) -> tuple[list, dict[str, bytes], bytes | None, bytes]:
    """``(stats, prefixes, sig, digests)``: every file's stat in order (``None``: cannot be
    stat'ed), each looked up from its directory (an open descriptor: each stat walks one name,
    not the whole path: 100,000 files cost their 100,000 stats and little more); the key of each
    directory as given (with its ``/``, the key ending in one too); the set's signature (its names
    and their directories' keys) and the digest of each ``CHUNK`` of stats, one after the other.
    ``sig`` is ``None`` for a set that cannot be kept (a name that is no file's, a directory
    named two ways, a file that cannot be stat'ed).  A ``sig`` given is the set's (``set_sig`` of
    these files, kept with their listing: ``listings``), not made again."""
    got = _one_directory(files)
    if got is not None:
        stats, parts, prefixes = got
        whole = True
    else:
        stats, parts, prefixes, whole = _each(files)
    if not whole or len(set(prefixes.values())) != len(prefixes):
        return stats, prefixes, None, b""
    blake2b = cache.blake2b
    if sig is None:
        sig = set_sig(prefixes, files)
    digests = b"".join(blake2b(b"".join(parts[k:k + CHUNK]), digest_size=DIGEST).digest()
                       for k in range(0, len(parts), CHUNK))
    return stats, prefixes, sig, digests


_FIELDS = operator.attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns", "st_mode")


def _one_directory(files: list[str]) -> tuple[list, list[bytes], dict[str, bytes]] | None:
    """``stat_all``'s stats, their parts of the digests and the directory's key, when every file
    is a name in one directory, spelled as the first file spells it (a project's listing), and
    each can be stat'ed: the per-file work is the stat alone.  ``None`` otherwise (``_each``)."""
    if not _BY_FD or not files:
        return None
    d, sep, _ = files[0].rpartition("/")
    prefix = d + sep
    k = len(prefix)
    if (not sep or not all(map(str.startswith, files, itertools.repeat(prefix)))
            or not all(map((k - 1).__eq__, map(str.rfind, files, itertools.repeat("/"))))
            or prefix in files or prefix + "." in files or prefix + ".." in files):
        return None
    fd = cache.open_dir(prefix)
    if fd is None:
        return None
    stat = os.stat
    try:
        stats = [stat(p[k:], dir_fd=fd) for p in files]
        parts = list(itertools.starmap(_STATS.pack, map(_FIELDS, stats)))
    except (OSError, struct.error):  # (a file gone, a value out of range: one by one)
        return None
    finally:
        os.close(fd)
    return stats, parts, {prefix: dir_key(prefix)}


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
    try:
        con.execute("PRAGMA busy_timeout=0")
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("INSERT OR REPLACE INTO sets VALUES (?,?,?)", (sig, digests, time.time_ns()))
                con.execute("DELETE FROM sets WHERE sig NOT IN (SELECT sig FROM sets ORDER BY made DESC LIMIT ?)",
                            (KEPT_SETS,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.execute(f"PRAGMA busy_timeout={int(TIMEOUT * 1000)}")
    except sqlite3.OperationalError:
        pass




def _stat(path: str, fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(path, dir_fd=fd)
    except OSError:
        return None
