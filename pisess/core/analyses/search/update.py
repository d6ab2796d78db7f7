"""Bringing the search index up to date with a set of files: each file's rows (indexed anew, or
only what was appended), the files that are gone, the kept places carried over an append.

A file is known by its path, device, inode, size, mtime and ctime.  Unchanged: used as it is.
Grown: when the bytes it was indexed up to are still the same (``cache.fingerprint``, the compact
index's check), only the lines after them are parsed and added (an unterminated last line is
indexed and indexed again once it is complete); otherwise, and when it shrank or was replaced, its
rows are dropped and it is indexed anew.  A file that is gone loses its rows.  Each file's update
is one transaction: a process killed mid-index leaves the index as it was before that file, and a
second process sees either.  When the file grew by pi's next turns, its kept places are carried
over (``places.extend_places``); anything else drops them.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import os
import sqlite3
import stat as stat_mod
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...errors import PisessError
from ...reading import cache
from ...reading.jsonl import iter_lines
from . import stats as ST
from .codec import encode_places, encode_tail, load_places
from .database import connect, damaged, index_path, move_aside
from .places import extend_places, turn
from .rows import BLANK, line_rows, parsed
from .scan import check_header

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .stats import Listed

BATCH = 32 << 20  # bytes of sessions indexed per transaction when building (one transaction per file at most)
RACY = 2_000_000_000  # ns: a file written this close to its indexing is checked by content next time


@dataclass
class _File:
    id: int
    dev: int
    ino: int
    size: int
    mtime: int
    ctime: int
    done: int  # bytes indexed up to the start of an unterminated last line (or the end)
    lines: int  # newlines before ``done``
    print_: bytes


def _stat_key(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _update(con: sqlite3.Connection, path: bytes, st: os.stat_result) -> int:
    """Bring ``path``'s rows up to date with the file as ``st`` found it (inside the caller's
    transaction); the bytes parsed."""
    row = con.execute("SELECT id, dev, ino, size, mtime, ctime, done, lines, print, bad, fresh FROM files "
                      "WHERE path=?", (path,)).fetchone()
    old = _File(*row[:-2]) if row else None
    if row is not None and row[10] == fresh_key(st):
        return 0  # (another process brought it up to date meanwhile)
    start, lines = 0, 0
    with open(path, "rb") as fh:
        if (old is not None and (old.dev, old.ino) == (st.st_dev, st.st_ino) and st.st_size >= old.size
                and old.print_ and cache.fingerprint(fh, old.done) == old.print_):
            start, lines = old.done, old.lines
    if old is None:
        fid = con.execute("INSERT INTO files(path) VALUES (?)", (path,)).lastrowid
    else:
        fid = old.id
        _drop_rows(con, fid, start)
    rows: list = []
    # (offset, line, places.turn) of the entries of the complete lines appended, while the kept
    # places of the file can go on over them (None: they cannot, or there are none)
    appended: list | None = [] if start and con.execute("SELECT 1 FROM places WHERE file=? LIMIT 1",
                                                         (fid,)).fetchone() else None
    done = start
    n = lines
    for _, off, raw, terminated in iter_lines(path, start=start):  # type: ignore[arg-type]  # (a bytes path opens as well)
        if off >= st.st_size:
            break  # appended since the stat: the next search takes it
        n += 1
        v = parsed(raw)
        rows.extend(line_rows(raw, off, n, v))
        if terminated and off + len(raw) + 1 <= st.st_size:
            done, lines = off + len(raw) + 1, n
            if v is not BLANK and appended is not None:
                t = turn(v)
                if t is None:
                    appended = None
                else:
                    appended.append((off, n, t))
    if rows:
        first = (con.execute("SELECT max(id) FROM rows").fetchone()[0] or 0) + 1
        con.executemany("INSERT INTO rows VALUES (?,?,?,?,?,?,?,?,?)",
                        [(first + k, fid, r[0], r[1], r[2], r[3], r[4], r[6], r[7]) for k, r in enumerate(rows)])
        con.executemany("INSERT INTO fts(rowid, body) VALUES (?,?)", [(first + k, r[5]) for k, r in enumerate(rows)])
    with open(path, "rb") as fh:
        print_ = cache.fingerprint(fh, done)
    bad = None
    if not start or row[9] is not None:  # (a header found before is still the first line that parses)
        try:  # (what the scan says of a file without hits whose first line is no session header)
            check_header(os.fsdecode(path))
        except PisessError as e:
            bad = e.reason
    seen = time.time_ns()
    con.execute("UPDATE files SET dev=?, ino=?, size=?, mtime=?, ctime=?, done=?, lines=?, print=?, seen=?, bad=?, "
                "fresh=? WHERE id=?", (*_stat_key(st), done, lines, print_, seen, bad,
                                       fresh_key(st) if st.st_mtime_ns < seen - RACY else b"", fid))
    if old is not None:
        _carry_places(con, old, start, done, print_, appended)
    return st.st_size - start


def _carry_places(con: sqlite3.Connection, old: _File, start: int, done: int, print_: bytes,
                  appended: list | None) -> None:
    """The file's kept places after its update: those of the part indexed before, with the entries
    appended since added on where they cannot move an earlier one (``places.extend_places``; kept
    as one more part, a few hundred bytes, rather than the whole again); the rest dropped (the
    next search with hits in the file places it anew)."""
    if start and (done, print_) == (old.done, old.print_):
        return  # (nothing appended: the places kept stay those of the file)
    fid = old.id
    for reader, pi in con.execute("SELECT DISTINCT reader, pi FROM places WHERE file=?", (fid,)).fetchall():
        data, part, new = None, 0, None
        if appended is not None:
            p, size, prt, parts = load_places(con, fid, reader, pi)
            if p is not None and (size, prt) == (start, old.print_):
                new = extend_places(p, appended)
                if new is not None:
                    data, part = (encode_tail(new, len(p.offsets)), parts) if parts < MAX_PARTS else \
                        (encode_places(new), 0)
        if data is None or not part:
            con.execute("DELETE FROM places WHERE file=? AND reader=? AND pi=?", (fid, reader, pi))
        if data is not None:
            con.execute("INSERT INTO places VALUES (?,?,?,?,?,?,?)", (fid, reader, pi, part, done, print_, data))
            carried[(fid, reader, pi)] = (done, print_, new)


MAX_PARTS = 64  # parts of a file's kept places before they are written again as one
carried: dict = {}  # (file id, reader, pi) -> (indexed end, print, Places) carried over in this process


def _drop_rows(con: sqlite3.Connection, fid: int, start: int = 0) -> None:
    if not start:
        con.execute("DELETE FROM places WHERE file=?", (fid,))
    con.execute("DELETE FROM fts WHERE rowid IN (SELECT id FROM rows WHERE file=? AND off>=?)", (fid, start))
    con.execute("DELETE FROM rows WHERE file=? AND off>=?", (fid, start))


def _drop_file(con: sqlite3.Connection, fid: int) -> None:
    _drop_rows(con, fid)
    con.execute("DELETE FROM files WHERE id=?", (fid,))


# --- bringing a set of files up to date -----------------------------------------------------------------


_FRESH = struct.Struct("<QQqqq")


def fresh_key(st: os.stat_result) -> bytes:
    """The file's device, inode, size, mtime and ctime, packed: a file whose row holds the same
    (``files.fresh``) is as it was indexed, by its stat alone.  The row holds it only where that
    mtime was well before the indexing (a write in the same clock tick as the indexing leaves the
    stat equal: such a file is checked by its fingerprint next time, as git checks a racily clean
    file); else ``b""``, which no stat packs to."""
    try:
        return _FRESH.pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except struct.error:  # (a value out of range: never taken as unchanged)
        return b"-"


def _known(con: sqlite3.Connection) -> dict[bytes, bytes]:
    """{path key: fresh key} of every indexed file (one C call: 100,000 files are one query)."""
    return dict(con.execute("SELECT path, fresh FROM files"))


class Deferred(Exception):
    """``refresh`` left the files as they were: bringing them up to date meant indexing more than
    it was allowed to (``bytes``), which is left to ``pisess cache index`` (in the background)."""

    def __init__(self, pending: int) -> None:
        super().__init__(f"{pending} bytes to index")
        self.bytes = pending


@dataclass
class Indexed:
    """The files of a search as the index has them after ``refresh``: ``keys`` maps the key of
    each file brought up to date to its path as given (``also``: to its other spellings, where
    the search names a file twice); ``failed``, the paths (as given) that could not be indexed:
    the caller scans them (the scan reports what is wrong).  ``whole``: the search's files as
    ``(files, {directory key: directory as given})``, every one of them but ``failed`` brought up
    to date, a key's path found from them when it is asked for (``keys`` is then empty).
    ``looked``: how many files' rows were looked up (the others were found up to date by the
    digest of a kept set's stats)."""

    keys: dict[bytes, str]
    failed: set[str]
    also: dict[bytes, list] = field(default_factory=dict)
    whole: tuple[list, dict[bytes, str]] | None = None
    looked: int = 0
    _wanted: set | None = None
    _sorted: bool | None = None

    def __len__(self) -> int:
        """How many of the paths given were brought up to date."""
        if self.whole is not None:
            return len(self._given())
        return len(self.keys) + sum(map(len, self.also.values()))

    def add(self, key: bytes, path: str) -> None:
        got = self.keys.setdefault(key, path)
        if got != path:
            self.also.setdefault(key, []).append(path)

    def _given(self) -> set:
        if self._wanted is None:
            self._wanted = set(self.whole[0]) - self.failed if self.whole is not None else set()
        return self._wanted

    def _ordered(self) -> bool:
        """Whether the search's files (``whole``) are in ascending order, each once, as a
        project's listing is: then a path is looked for among them by bisection, without a set
        made of 100,000 paths."""
        if self._sorted is None:
            files = self.whole[0] if self.whole is not None else []
            self._sorted = all(map(operator.lt, files, itertools.islice(files, 1, None)))
        return self._sorted

    def _is_given(self, path: str) -> bool:
        """Whether ``path`` is one of the search's files (``whole``) brought up to date."""
        if not self._ordered():
            return path in self._given()
        files = self.whole[0] if self.whole is not None else []
        i = bisect.bisect_left(files, path)
        return i < len(files) and files[i] == path and path not in self.failed

    def in_order(self, paths: set, files: list[str]) -> list[str]:
        """``paths`` (each one of ``files``, the search's) in the order of ``files``."""
        if self.whole is not None and self._ordered():
            return sorted(paths)
        return [p for p in files if p in paths] if paths else []

    def paths(self, key: bytes) -> list[str]:
        """The paths as given of the file ``key`` (none when it is not this search's)."""
        if self.whole is not None:
            d, _, name = key.rpartition(b"/")
            given = self.whole[1].get(d + b"/")
            if given is None:
                return []
            path = given + name.decode(*ST.FS)
            return [path] if self._is_given(path) else []
        p = self.keys.get(key)
        return [] if p is None else [p, *self.also.get(key, ())]

    def paths_of(self, con: sqlite3.Connection, fids: Iterable[int]) -> list[tuple[int, str]]:
        """``(file id, path as given)`` of the files ``fids`` that are this search's."""
        out: list[tuple[int, str]] = []
        fids = list(fids)
        for k in range(0, len(fids), 500):
            part = fids[k:k + 500]
            for fid, key in con.execute(f"SELECT id, path FROM files WHERE id IN ({','.join('?' * len(part))})", part):
                out.extend((fid, p) for p in self.paths(key))
        return out


def _settled(con: sqlite3.Connection, todo: list[tuple[str, bytes, os.stat_result]]) -> bool:
    """Whether each file just indexed is up to date by its stat (its row keeps the stat's
    ``fresh_key``: not written in the clock tick of its indexing)."""
    known = _known_of(con, [key for _, key, _ in todo])
    return all(known.get(key) == fresh_key(st) for _, key, st in todo)


def _known_of(con: sqlite3.Connection, keys: list[bytes]) -> dict[bytes, bytes]:
    """``_known`` of these keys only."""
    out: dict[bytes, bytes] = {}
    for k in range(0, len(keys), 500):
        part = keys[k:k + 500]
        out.update(con.execute(f"SELECT path, fresh FROM files WHERE path IN ({','.join('?' * len(part))})", part))
    return out


def refresh(con: sqlite3.Connection, files: list[str], *, prune_dirs: bool = True,
            tick: Callable[[int], None] | None = None, defer: int | None = None, listed: Listed | None = None) -> Indexed:
    """Bring the rows of ``files`` up to date; which are (``Indexed``).  With ``prune_dirs`` the
    indexed files of the same directories that are gone lose their rows.  With ``defer``, raises
    ``Deferred`` (having changed nothing) when that would mean indexing more than ``defer`` bytes
    (new files, and what was appended to the others since).

    A file is up to date when its stat is the one its row keeps (``fresh_key``).  A set of files
    found up to date every one is kept as digests of their stats (``_keep_set``, one per
    ``CHUNK`` of files): the next search of the same files takes each chunk whose stats are the
    same as up to date at once, and looks up the rows of the others' files only (the session pi
    is writing to: one chunk).  The stats are taken all the same: that is what keeps the answer
    exact.  ``listed``: the listing ``files`` are (``listings.project``)."""
    stated = ST.stat_all(files, listed, con)
    stats, prefixes, sig, digests, stale = stated.stats, stated.prefixes, stated.sig, stated.digests, stated.stale
    if stale == [] and sig is not None:
        if tick:
            tick(stated.fresh)
        return Indexed({}, set(), whole=(files, {k: d for d, k in prefixes.items()}))
    chunk = ST.CHUNK
    look = range(len(files)) if stale is None else [i for c in stale for i in range(c * chunk, min((c + 1) * chunk,
                                                                                                len(files)))]
    keys: dict[bytes, str] = {}
    also: dict[bytes, list] = {}
    failed: set[str] = set()
    todo: list[tuple[str, bytes, os.stat_result]] = []
    isreg, fresh, enc = stat_mod.S_ISREG, _FRESH.pack, ST.FS
    found = 0
    pending = 0  # bytes to index
    ready = stated.fresh
    looked: list[tuple[str, bytes, os.stat_result | None]] = []
    for i in look:
        p, st = files[i], stats[i]
        d, sep, name = p.rpartition("/")
        prefix = prefixes.get(d + sep) if name not in ("", ".", "..") else None
        looked.append((p, ST.path_key(p) if prefix is None else prefix + name.encode(*enc), st))
    known = _known(con) if stale is None else _known_of(con, [k for _, k, _ in looked])
    for p, key, st in looked:
        if st is None or not isreg(st.st_mode):
            failed.add(p)
            continue
        k = known.get(key)
        if k is not None:
            found += 1
            try:  # (fresh_key, inlined)
                same = k == fresh(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            except struct.error:
                same = False
            if same:
                if keys.setdefault(key, p) != p:
                    also.setdefault(key, []).append(p)
                ready += st.st_size
                continue
            if defer is not None:
                pending += _pending(con, key, st)
        else:
            pending += st.st_size
        todo.append((p, key, st))
    if defer is not None and pending > defer:
        raise Deferred(pending)
    if tick and ready:
        tick(ready)
    gone = []
    if stale is None and prune_dirs and len(known) > found:  # (an indexed file not in this search: is it gone?)
        wanted = {*keys, *(t[1] for t in todo)}
        dirs = {k.rpartition(b"/")[0] for k in wanted}
        gone = [k for k in known if k not in wanted and k.rpartition(b"/")[0] in dirs and not os.path.exists(k)]
    i = 0
    while i < len(todo) or gone:
        con.execute("BEGIN IMMEDIATE")
        try:
            for k in gone:
                got = con.execute("SELECT id FROM files WHERE path=?", (k,)).fetchone()
                if got is not None:
                    _drop_file(con, got[0])
            gone = []
            budget = BATCH
            while i < len(todo) and budget > 0:
                p, key, st = todo[i]
                i += 1
                con.execute("SAVEPOINT f")
                try:
                    budget -= _update(con, key, st) + 4096
                except (OSError, PisessError, RecursionError, MemoryError):
                    con.execute("ROLLBACK TO f")  # this file's changes only: it is scanned instead
                    con.execute("RELEASE f")
                    failed.add(p)
                    continue
                con.execute("RELEASE f")
                if tick:
                    tick(st.st_size)
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
    if sig is not None:  # (every file of the search but those that failed is up to date)
        if not failed and (not todo or _settled(con, todo)):  # (what changed indexed, each written well before)
            ST.keep_set(con, sig, digests)
        return Indexed({}, failed, whole=(files, {k: d for d, k in prefixes.items()}), looked=len(looked))
    out = Indexed(keys, failed, also, looked=len(looked))
    for p, key, _st in todo:
        if p not in failed:
            out.add(key, p)
    return out


def _pending(con: sqlite3.Connection, key: bytes, st: os.stat_result) -> int:
    """The bytes of an indexed file that changed that its update would parse: what was appended
    where it grew, all of it otherwise."""
    row = con.execute("SELECT dev, ino, size, done FROM files WHERE path=?", (key,)).fetchone()
    if row is not None and row[:2] == (st.st_dev, st.st_ino) and st.st_size >= row[2] and row[3] is not None:
        return st.st_size - row[3]
    return st.st_size


def prune(con: sqlite3.Connection) -> int:
    """Drop the rows of every indexed file that is gone; how many files."""
    gone = [fid for fid, k in con.execute("SELECT id, path FROM files").fetchall() if not os.path.exists(k)]
    if gone:
        con.execute("BEGIN IMMEDIATE")
        try:
            for fid in gone:
                _drop_file(con, fid)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return len(gone)


def build(files: list, tick: Callable[[int], None] | None = None, create: bool = True) -> tuple[int, int] | None:
    """Index ``files`` now; ``(files indexed, files that could not be)``, or ``None`` without a cache
    (or, without ``create``, when the cache directory is not there)."""
    directory = cache.current().directory
    if directory is None:
        return None
    con = connect(directory, create)
    if con is None:
        return None
    try:
        indexed = refresh(con, files, tick=tick)
        prune(con)
    except sqlite3.Error as e:
        if damaged(e):
            con.close()
            move_aside(index_path(directory), e)
        return None
    finally:
        con.close()
    return len(indexed), len(indexed.failed)


