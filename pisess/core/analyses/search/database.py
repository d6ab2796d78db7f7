"""The search index's database: its file, schema, connection, what is done with a damaged one, and
the indexer's lock.

The index file sits in the cache directory (``cache.SEARCH_INDEX``, 0600 in a 0700 directory).  One
that is not an SQLite database of this layout is moved aside (``.damaged``) and built anew; one
written by another version of pisess is emptied and built anew.  Writers take turns (WAL mode, a
busy timeout); a process killed mid-update leaves the index as it was before the file it was at.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from ...reading import cache

FORMAT = 11  # bump when what a row holds, or how, changes
NAME = cache.SEARCH_INDEX
TIMEOUT = 30.0  # seconds a writer waits for another's transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL, dev INT, ino INT, size INT,
    mtime INT, ctime INT, done INT, lines INT, print BLOB, seen INT, bad TEXT, fresh BLOB);
CREATE TABLE IF NOT EXISTS rows(id INTEGER PRIMARY KEY, file INT NOT NULL, off INT, len INT, line INT, field TEXT,
    entry TEXT, skip_at INT, skip_end INT);
CREATE INDEX IF NOT EXISTS rows_file ON rows(file, off);
CREATE INDEX IF NOT EXISTS files_bad ON files(bad) WHERE bad IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize='trigram', detail=none, columnsize=0);
CREATE TABLE IF NOT EXISTS places(file INT NOT NULL, reader TEXT NOT NULL, pi TEXT NOT NULL, part INT NOT NULL,
    size INT, print BLOB, data BLOB, PRIMARY KEY(file, reader, pi, part));
CREATE TABLE IF NOT EXISTS sets(sig BLOB PRIMARY KEY, digest BLOB, made INT);
CREATE TABLE IF NOT EXISTS lists(dir BLOB PRIMARY KEY, given BLOB, stat BLOB, names BLOB, sig BLOB, made INT);
"""
ADDED = "lists"  # (tables added since this FORMAT: made in an index that lacks them, which stays as it is)


def _stamp() -> str:
    from pisess import __version__

    return f"{FORMAT} {__version__}"


# --- the index file ------------------------------------------------------------------------------------


class Damaged(Exception):
    """The index file is not one this pisess can use."""


def index_path(directory: str) -> str:
    return os.path.join(directory, NAME)


_notes: list = []  # said once per process by the CLI (``take_notes``)


def take_notes() -> list[str]:
    """What the index has to say since the last call, each note once (a search the lean path
    handed to the app tried the index twice)."""
    out = list(dict.fromkeys(_notes))
    _notes.clear()
    return out


def unusable(directory: str, why: BaseException | str) -> None:
    """Note that the index in ``directory`` cannot be used (a full or read-only disk, a directory
    that cannot be made, another user's): the search that wanted it reads the files themselves."""
    if isinstance(why, OSError) and why.strerror:
        why = why.strerror[:1].lower() + why.strerror[1:]
    _notes.append(f"the search index in {directory} cannot be used ({why}): searching the files themselves")


def connect(directory: str, create: bool = True) -> sqlite3.Connection | None:
    """The index's connection (made, and the layout created, when missing), or ``None`` when the
    cache directory cannot be used (or, without ``create``, is not there).  A file at the index's
    path that is not an index of this layout is moved aside (a note says so) and a new one made."""
    try:
        if not create and not os.path.isdir(directory):
            return None  # (a background indexer whose cache was removed: it does not make it again)
        if not cache.ready(directory):
            unusable(directory, "the directory belongs to another user")
            return None
    except OSError as e:
        unusable(directory, e)
        return None
    path = index_path(directory)
    for attempt in (0, 1):
        try:
            return _open(path)
        except (sqlite3.Error, Damaged) as e:
            if attempt or not damaged(e):
                unusable(directory, e)
                return None
            move_aside(path, e)
        except (OSError, ValueError) as e:
            unusable(directory, e)
            return None
    return None


def damaged(e: BaseException) -> bool:
    """Whether an error says the file is not a (sound) database, rather than busy or unwritable."""
    if isinstance(e, Damaged):
        return True
    return isinstance(e, sqlite3.DatabaseError) and (
        getattr(e, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB")
        or not isinstance(e, sqlite3.OperationalError))


def move_aside(path: str, why: Exception) -> None:
    aside = path + ".damaged"
    try:
        os.replace(path, aside)
        for suffix in ("-wal", "-shm"):
            try:
                os.unlink(path + suffix)
            except FileNotFoundError:
                pass
    except OSError:
        return
    _notes.append(f"the search index {path} could not be used ({why}): moved aside to {aside}, built anew")


def _open(path: str) -> sqlite3.Connection:
    if not os.path.exists(path):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # (SQLite gives its -wal and -shm the same mode)
        os.close(fd)
    con = sqlite3.connect(path, timeout=TIMEOUT, isolation_level=None, check_same_thread=False)
    try:
        con.execute(f"PRAGMA busy_timeout={int(TIMEOUT * 1000)}")
        if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        if "meta" not in have:
            if have - {"sqlite_sequence"}:
                raise Damaged("not a pisess search index")
            _create(con)
        else:
            got = con.execute("SELECT v FROM meta WHERE k='stamp'").fetchone()
            if got is None or got[0] != _stamp():
                if not {"files", "rows", "fts"} <= have:
                    raise Damaged("not a pisess search index")
                _create(con, reset=True)
            elif ADDED not in have:
                con.execute("PRAGMA busy_timeout=0")
                try:
                    _create(con)
                except sqlite3.OperationalError:  # (busy, a full disk: the index serves without them)
                    pass
                con.execute(f"PRAGMA busy_timeout={int(TIMEOUT * 1000)}")
    except BaseException:
        con.close()
        raise
    return con


def _create(con: sqlite3.Connection, reset: bool = False) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        if reset:
            for t in ("fts", "rows", "files", "places", "sets", "lists", "meta"):
                con.execute(f"DROP TABLE IF EXISTS {t}")
        for statement in _SCHEMA.split(";"):  # (executescript would commit the transaction first)
            if statement.strip():
                con.execute(statement)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (_stamp(),))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def unless_busy(con: sqlite3.Connection, write: Callable[[sqlite3.Connection], object],
                errors: type[Exception] | tuple[type[Exception], ...] = sqlite3.Error) -> bool:
    """``write(con)`` in a transaction of its own, unless another process is writing: then
    nothing (``False``), and the next search keeps what this one would have (a set, a listing,
    places; none of it is what a search answers)."""
    try:
        con.execute("PRAGMA busy_timeout=0")
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                write(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            con.execute(f"PRAGMA busy_timeout={int(TIMEOUT * 1000)}")
    except errors:
        return False
    return True


# --- ahead of time (pisess cache index) ---------------------------------------------------------------------

LOCK = "search.lock"  # the cache directory's indexer lock: one background indexer at a time


def lock_indexer(directory: str) -> int | None:
    """An open descriptor holding the indexer lock of the cache in ``directory`` (an exclusive
    ``flock`` of its ``search.lock``, released when every process holding the descriptor has
    closed it or ended), or ``None`` when another holds it (an indexer runs) or there is no lock
    to be had (no ``fcntl``, no such directory)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fd = os.open(os.path.join(directory, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def indexer_running(directory: str) -> bool:
    """Whether a process holds the indexer lock of the cache in ``directory``."""
    if not os.path.exists(os.path.join(directory, LOCK)):
        return False
    fd = lock_indexer(directory)
    if fd is None:
        return True
    os.close(fd)
    return False


