"""The listing of a project's directory kept in the search index, so that a warm search of the
project neither lists nor sorts its files again (100,000 sessions: a tenth of a second).

A directory's entries change only with its modification time: making, removing or renaming a
file in it sets the time (POSIX), and its change time moves with anything done to the
directory itself (its permissions too).  So the files ``collect`` listed are kept with the
directory's device, inode, mtime and ctime, and taken as they were while its stat is the same.
As for a file (``update.fresh_key``), a listing is kept only when the directory's last change was
well before it: a file made in the same clock tick as the listing would leave the time equal.
What each file holds is not the listing's business: every file's stat is taken all the same
(``stats.stat_all``, from the names as listed).  Kept with the listing, the set's signature
(``stats.set_sig``): a warm search does not make it again from 100,000 paths.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import time

from ...listing.paths import encode_cwd
from ...listing.sessionset import Scope, collect
from ...reading import cache
from . import stats as ST
from .database import connect, unless_busy
from .stats import Listed

KEPT = 64  # listings the index keeps (the most recently kept)
RACY = 2_000_000_000  # ns: a directory changed this close to its listing is listed again next time
_STAT = struct.Struct("<QQqq")


def project(root: str, cwd: str) -> tuple[Scope, Listed | None]:
    """``collect(None, root, cwd)`` (the project's files), and the listing they are, when it is
    kept: taken from the index when the project's directory is as it was then, else the
    directory listed (and kept, when it can be)."""
    directory = cache.current().directory
    d = os.path.join(root, encode_cwd(cwd))
    try:
        key, st = ST.dir_key(d), _stat_of(d)
    except (OSError, ValueError, struct.error):
        return collect(None, root, cwd), None
    con = connect(directory) if directory is not None else None
    if con is None:
        return collect(None, root, cwd), None
    try:
        try:
            row = con.execute("SELECT given, stat, names, sig FROM lists WHERE dir=?", (key,)).fetchone()
        except sqlite3.Error:
            row = None
        given = d.encode(*ST.FS)
        prefix = os.path.join(d, "")
        if row is not None and row[0] == given and row[1] == st:
            names = row[2].decode(*ST.FS).split("\0")
            return Scope([prefix + n for n in names], "this project", []), Listed(prefix, names, row[3])
        scope = collect(None, root, cwd)
        if not scope.files or scope.unreadable or not _settled(d, st):
            return scope, None
        listed = Listed(prefix, [p[len(prefix):] for p in scope.files],
                        ST.set_sig({prefix: ST.dir_key(prefix)}, scope.files))
        _keep(con, key, given, st, listed)
        return scope, listed
    finally:
        con.close()


def _stat_of(d: str) -> bytes:
    st = os.stat(d)
    return _STAT.pack(st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _settled(d: str, before: bytes) -> bool:
    """Whether the directory, as ``before`` found it, was last changed well before now and is
    the same after its listing."""
    try:
        return _stat_of(d) == before and _STAT.unpack(before)[2] < time.time_ns() - RACY
    except OSError:
        return False


def _keep(con: sqlite3.Connection, key: bytes, given: bytes, st: bytes, listed: Listed) -> None:
    """Keep the listing (of the last ``KEPT``), unless another process is writing: the next
    search keeps it."""
    names = "\0".join(listed.names).encode(*ST.FS)

    def write(con: sqlite3.Connection) -> None:
        con.execute("INSERT OR REPLACE INTO lists VALUES (?,?,?,?,?,?)", (key, given, st, names, listed.sig, time.time_ns()))
        con.execute("DELETE FROM lists WHERE dir NOT IN (SELECT dir FROM lists ORDER BY made DESC LIMIT ?)", (KEPT,))

    unless_busy(con, write)
