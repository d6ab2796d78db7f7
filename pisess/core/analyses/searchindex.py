"""The search index: a full-text index of the sessions' text in pisess's cache (SQLite FTS5).

The index answers exactly what the scan (``search.search_file``) answers, only faster: it is a
*prefilter*.  It holds, for each line of each indexed file, the searchable text of that line's
entry, one row per field (``search.entry_texts``, the strings of a field joined by newlines; a line
that is not JSON is one row of field ``raw``, its bytes decoded as the scan decodes them), keyed
by file, byte offset, length, physical line, field and entry id.  FTS5's trigram tokenizer
(case-insensitive, positions not kept: ``detail=none``) finds the rows holding every trigram of
the pattern's literal text; each line so found is read back from the file by its offset and
matched by the scan's own code (``search.match_line``), and the files with hits are placed on
their tree as the scan places them.  So every answer is the scan's answer, hit for hit; the index
only decides which lines need to be looked at.

Placing a hit needs the file's tree at its current leaf; reading that (the compact index) and
walking the path cost more than the rest of a warm search of a big file.  So the first search with
hits in a file places every entry of it at once (``search.places_of``: each entry's offset, line,
place, id, type and role) and keeps that beside the file's rows (table ``places``, per reader and
pi version), valid for the very bytes indexed (the file row's indexed end and fingerprint); later
searches place their hits from it (``search.placed_by``, the same hits as ``search.placed``).
When the file grows by pi's next turns (plain messages, each the child of the one before, the
first the child of the leaf, new ids), the update that indexes them adds them to the kept places
(``search.extend_places``: nothing earlier moves); anything else appended, or a file indexed
anew, drops them, and the next search with hits there places the file again.

What it cannot narrow, it does not try: a literal shorter than 3 characters, a regular expression
without a run of 3 or more literal characters (``regex_runs``), a case-insensitive pattern without
3 ASCII characters in a row (the fold of the index is SQLite's, not Python's) are answered by the
scan (``via`` says which).

Incremental as the compact index is: a file is known by its path, device, inode, size, mtime and
ctime.  Unchanged: used as it is.  Grown: when the bytes it was indexed up to are still the same
(``cache.fingerprint``, the compact index's check), only the lines after them are parsed and
added (an unterminated last line is indexed and indexed again once it is complete); otherwise,
and when it shrank or was replaced, its rows are dropped and it is indexed anew.  A file that is
gone loses its rows.  Each file's update is one transaction (WAL mode, a busy timeout): a process
killed mid-index leaves the index as it was before that file, and a second process sees either.

The index file sits in the cache directory (``cache.INDEX``, 0600 in a 0700 directory).  One that
is not an SQLite database of this layout is moved aside (``.damaged``) and built anew; one written
by another version of pisess is emptied and built anew.
"""

from __future__ import annotations

import functools
import marshal
import os
import re
import sqlite3
import stat as stat_mod
import struct
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import orjson

from .. import js, versions
from ..errors import PisessError
from ..reading import cache
from . import search as S

TYPE_CHECKING = False  # (True for mypy: typing is imported for annotations only, not on every run)
if TYPE_CHECKING:
    from typing import Any

FORMAT = 11  # bump when what a row holds, or how, changes
NAME = cache.INDEX
TIMEOUT = 30.0  # seconds a writer waits for another's transaction
BATCH = 32 << 20  # bytes of sessions indexed per transaction when building (one transaction per file at most)
# Trigrams a query asks FTS5 for, spread over the literal runs (the whole runs are then checked in
# the same query): each costs its list of rows, and the common ones (" th", "he ") are long. For a
# 24-character literal, 8 of its 22 took 2.4-3.6 ms where all took 4.2 ms (the 200 MB session), and
# 8 of 13 over 10,000 sessions 6.5-9.7 ms where all took 9.5-15 ms; 4 let too many rows through.
MAX_TRIGRAMS = 8
RACY = 2_000_000_000  # ns: a file written this close to its indexing is checked by content next time

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
"""


def _stamp() -> str:
    from pisess import __version__

    return f"{FORMAT} {__version__}"


# --- the pattern: what the index can look for -------------------------------------------------------

_BAD = re.compile("[\x00\ud800-\udfff]")  # no trigram holds these (SQLite stops at NUL; no UTF-8 for a surrogate)
_ASCII_RUN = re.compile("[\x01-\x7f]{3,}")
_ISK = re.compile("[^iIsSkK]{3,}")  # ASCII letters Python's re.IGNORECASE also folds from non-ASCII ones


def literal_runs(pattern: str, ignore_case: bool, regex: bool) -> list[str]:
    """Runs of 3+ characters every match of the pattern holds (under the index's case folding),
    longest first; empty when the index cannot narrow the search."""
    return runs_of(pattern, ignore_case, regex)[0]


def runs_of(pattern: str, ignore_case: bool, regex: bool) -> tuple[list[str], bool]:
    """``literal_runs``, and whether they hold case-insensitively (``-i``, or a regex's ``(?i)``):
    then they are ASCII only, and matched in any ASCII case."""
    if regex:
        import importlib

        sre: Any = importlib.import_module("re._parser" if hasattr(re, "_parser") else "sre_parse")
        try:
            parsed = sre.parse(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
        except Exception:  # noqa: BLE001 - make_matcher has already refused a bad pattern
            return [], ignore_case
        ignore_case = ignore_case or bool(parsed.state.flags & re.IGNORECASE)
        runs, cur = [], []
        for op, arg in parsed:
            if str(op) == "LITERAL":
                cur.append(chr(arg))
            else:
                runs.append("".join(cur))
                cur = []
        runs.append("".join(cur))
    else:
        runs = [pattern]
    out: list[str] = []
    for run in runs:
        for part in _BAD.split(run):
            if ignore_case:
                for a in _ASCII_RUN.findall(part):
                    out.extend(_ISK.findall(a) if regex else [a])
            elif len(part) >= 3:
                out.append(part)
    return sorted({r for r in out if len(r) >= 3}, key=len, reverse=True), ignore_case


def fts_query(runs: list[str]) -> str:
    """The FTS5 query: every distinct trigram of the runs (a superset of the lines that match)."""
    grams: list[str] = []
    seen: set = set()
    for r in runs:
        for i in range(len(r) - 2):
            g = r[i:i + 3]
            key = g.lower() if g.isascii() else g
            if key not in seen:
                seen.add(key)
                grams.append(g)
    if len(grams) > MAX_TRIGRAMS:  # spread over the runs: enough to be selective, few enough to be quick
        step = len(grams) / MAX_TRIGRAMS
        grams = [grams[int(k * step)] for k in range(MAX_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


# --- the index file ------------------------------------------------------------------------------------


class Damaged(Exception):
    """The index file is not one this pisess can use."""


def index_path(directory: str) -> str:
    return os.path.join(directory, NAME)


_notes: list = []  # said once per process by the CLI (``take_notes``)


def take_notes() -> list[str]:
    out = list(_notes)
    _notes.clear()
    return out


def connect(directory: str, create: bool = True) -> sqlite3.Connection | None:
    """The index's connection (made, and the layout created, when missing), or ``None`` when the
    cache directory cannot be used (or, without ``create``, is not there).  A file at the index's
    path that is not an index of this layout is moved aside (a note says so) and a new one made."""
    try:
        if not create and not os.path.isdir(directory):
            return None  # (a background indexer whose cache was removed: it does not make it again)
        if not cache.ready(directory):
            return None
    except OSError:
        return None
    path = index_path(directory)
    for attempt in (0, 1):
        try:
            return _open(path)
        except (sqlite3.Error, Damaged) as e:
            if attempt or not damaged(e):
                return None
            _move_aside(path, e)
        except (OSError, ValueError):
            return None
    return None


def damaged(e: BaseException) -> bool:
    """Whether an error says the file is not a (sound) database, rather than busy or unwritable."""
    if isinstance(e, Damaged):
        return True
    return isinstance(e, sqlite3.DatabaseError) and (
        getattr(e, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB")
        or not isinstance(e, sqlite3.OperationalError))


def _move_aside(path: str, why: Exception) -> None:
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
    except BaseException:
        con.close()
        raise
    return con


def _create(con: sqlite3.Connection, reset: bool = False) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        if reset:
            for t in ("fts", "rows", "files", "places", "sets", "meta"):
                con.execute(f"DROP TABLE IF EXISTS {t}")
        for statement in _SCHEMA.split(";"):  # (executescript would commit the transaction first)
            if statement.strip():
                con.execute(statement)
        con.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (_stamp(),))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


# --- indexing one file -----------------------------------------------------------------------------------


def _clean(text: str) -> str:
    return _BAD.sub("\ufffd", text) if not text.isascii() or "\x00" in text else text


BLANK = object()  # a blank line's value (``parsed``): no entry


def parsed(raw: bytes) -> Any:
    """The line's value as the scan parses it; ``BLANK`` for a blank line."""
    return BLANK if S.is_blank(raw) else S.parse_line(raw)


def line_rows(raw: bytes, off: int, number: int, v: Any) -> list[tuple]:
    """``(off, len, line, field, entry id, text, skip_at, skip_end)`` of one line whose value is
    ``v`` (``parsed``): the rows it adds to the index (``skip_*``: ``unread_span``, or ``None``)."""
    if v is BLANK:
        return []
    if v is S.NOT_JSON:
        return [(off, len(raw), number, "raw", None, _clean(raw.decode("utf-8", "replace")), None, None)]
    if not isinstance(v, dict) or v.get("type") == "session":
        return []
    by_field: dict[str, list[str]] = {}
    for fld, _kind, prefix, text in S.entry_texts(v):
        if text:
            by_field.setdefault(fld, []).append(prefix + text if prefix else text)
    for fld, text in _listed_extras(v):  # (what pi's /resume search reads of a message that search does not)
        by_field.setdefault(fld, []).append(text)
    if not by_field:
        return []
    eid = v.get("id")
    eid = _clean(eid) if isinstance(eid, str) else None
    at, end = unread_span(raw, v) or (None, None)
    return [(off, len(raw), number, fld, eid, _clean("\n".join(texts)), at, end) for fld, texts in by_field.items()]


TAIL_KEY = b'"retainedTail":'


def unread_span(raw: bytes, v: Any) -> tuple[int, int] | None:
    """``(start, end)`` in ``raw`` of the bytes of a compaction's ``retainedTail`` (the copies of
    the kept messages pi's harness writes with its compactions): bytes search never reads (copies
    are not searched again), and most of the line, hundreds of KB beside a summary of a few
    hundred bytes.  The index keeps the span with the line's rows, so a line read back for a hit
    is read and parsed without them (``line_back``): the 56 compaction lines with hits of a
    200 MB session hold 7 MB of copies, 9 of a warm search's 23 ms to parse.

    The list is looked for as compact JSON (as pi's ``JSON.stringify`` and orjson write it), once
    in the line, and kept only where the line with ``[]`` in its place parses to an entry with the
    same searchable texts, so a search of either finds the same; else ``None`` (parsed whole)."""
    if type(v) is not dict or v.get("type") != "compaction":
        return None
    tail = v.get("retainedTail")
    if type(tail) is not list or not tail:
        return None
    try:
        written = TAIL_KEY + orjson.dumps(tail)
    except (TypeError, orjson.JSONEncodeError):
        return None
    at = raw.find(written)
    if at < 0 or raw.find(written, at + 1) >= 0:
        return None
    start, end = at + len(TAIL_KEY), at + len(written)
    lean = S.parse_line(raw[:start] + b"[]" + raw[end:])
    if type(lean) is not dict or list(S.entry_texts(lean)) != list(S.entry_texts(v)):
        return None
    return start, end


def _listed_extras(v: dict) -> list[tuple[str, str]]:
    """Text blocks of user and assistant messages whose ``text`` is not a string: pi's listing
    makes text of it (``ls --search`` reads it), search does not."""
    m = v.get("message") if v.get("type") == "message" else None
    if type(m) is not dict or m.get("role") not in ("user", "assistant") or type(m.get("content")) is not list:
        return []
    out = []
    for b in m["content"]:
        if type(b) is dict and b.get("type") == "text":
            t = b.get("text")
            if t is not None and type(t) is not str:
                out.append((m["role"], js.to_string(t)))
    return out


def files_holding(con: sqlite3.Connection, runs: list[str], fields: tuple[str, ...], indexed: Indexed) -> set[str]:
    """The paths (of ``indexed``) with a row of one of ``fields`` holding every trigram of ``runs``
    (case-insensitive): a superset of the files whose text of those fields holds the runs."""
    q = fts_query(runs)
    sql = "SELECT r.file, r.field FROM fts JOIN rows r ON r.id = fts.rowid WHERE fts MATCH ?"
    fids = {fid for fid, fld in con.execute(sql, (q,)) if fld in fields}
    return {p for _, p in indexed.paths_of(con, fids)}


def _lines(path: str | bytes, start: int) -> Iterator[tuple[bytes, int, bool]]:
    """``(raw line, offset, terminated)`` of the file from byte ``start`` (a line start)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        off = start
        rest = b""
        while True:
            block = fh.read(S.BLOCK)
            if not block:
                break
            data = rest + block if rest else block
            s = 0
            find = data.find
            while True:
                e = find(b"\n", s)
                if e < 0:
                    break
                yield data[s:e], off + s, True
                s = e + 1
            off += s
            rest = data[s:]
        if rest:
            yield rest, off, False


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
    # (offset, line, search.turn) of the entries of the complete lines appended, while the kept
    # places of the file can go on over them (None: they cannot, or there are none)
    appended: list | None = [] if start and con.execute("SELECT 1 FROM places WHERE file=? LIMIT 1",
                                                         (fid,)).fetchone() else None
    done = start
    n = lines
    for raw, off, terminated in _lines(path, start):
        if off >= st.st_size:
            break  # appended since the stat: the next search takes it
        n += 1
        v = parsed(raw)
        rows.extend(line_rows(raw, off, n, v))
        if terminated and off + len(raw) + 1 <= st.st_size:
            done, lines = off + len(raw) + 1, n
            if v is not BLANK and appended is not None:
                t = S.turn(v)
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
            S.check_header(os.fsdecode(path))
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
    appended since added on where they cannot move an earlier one (``search.extend_places``; kept
    as one more part, a few hundred bytes, rather than the whole again); the rest dropped (the
    next search with hits in the file places it anew)."""
    if start and (done, print_) == (old.done, old.print_):
        return  # (nothing appended: the places kept stay those of the file)
    fid = old.id
    for reader, pi in con.execute("SELECT DISTINCT reader, pi FROM places WHERE file=?", (fid,)).fetchall():
        data, part, new = None, 0, None
        if appended is not None:
            p, size, prt, parts = _load_places(con, fid, reader, pi)
            if p is not None and (size, prt) == (start, old.print_):
                new = S.extend_places(p, appended)
                if new is not None:
                    data, part = (encode_tail(new, len(p.offsets)), parts) if parts < MAX_PARTS else \
                        (encode_places(new), 0)
        if data is None or not part:
            con.execute("DELETE FROM places WHERE file=? AND reader=? AND pi=?", (fid, reader, pi))
        if data is not None:
            con.execute("INSERT INTO places VALUES (?,?,?,?,?,?,?)", (fid, reader, pi, part, done, print_, data))
            _carried[(fid, reader, pi)] = (done, print_, new)


MAX_PARTS = 64  # parts of a file's kept places before they are written again as one
_carried: dict = {}  # (file id, reader, pi) -> (indexed end, print, Places) carried over in this process


def _load_places(con: sqlite3.Connection, fid: int, reader: str, pi: str) -> tuple[S.Places | None, int, bytes, int]:
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


# --- kept places: the placement of every entry of a file at its current leaf ----------------------------


def encode_places(p: S.Places) -> bytes | None:
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


def encode_tail(p: S.Places, start: int) -> bytes | None:
    """The entries of ``p`` from ``start`` on, and what else changed with them (``extend_places``):
    one more part of a file's kept places (``decode_tail``)."""
    try:
        return marshal.dumps((p.offsets[start:].tobytes(), p.lines[start:].tobytes(), p.where[start:],
                              p.ids[start:], p.kinds[start:], p.kind_table, p.id_width, p.ext))
    except ValueError:
        return None


def decode_tail(p: S.Places, data: bytes) -> S.Places | None:
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


def decode_places(data: bytes) -> S.Places | None:
    """``encode_places``' ``Places`` again, or ``None`` for anything else (damaged, another version's)."""
    try:
        offs, lines, where, ids, kinds, table, *rest = marshal.loads(data)
        offsets, numbers = array("q"), array("q")
        offsets.frombytes(offs)
        numbers.frombytes(lines)
        ids = ids.split("\n") if type(ids) is str else ids
        if not _columns_agree(offsets, numbers, where, ids, kinds, table):
            return None
        return S.Places(offsets, numbers, where, ids, kinds, [tuple(k) for k in table], *rest)
    except Exception:  # noqa: BLE001 - a damaged row of any shape is no answer: the file is placed anew
        return None


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


def _key(path: str) -> bytes:
    """The file's key in the index: its absolute path's bytes."""
    return os.fsencode(path if path.startswith("/") and "/." not in path and "//" not in path
                       else os.path.abspath(path))


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

    def paths(self, key: bytes) -> list[str]:
        """The paths as given of the file ``key`` (none when it is not this search's)."""
        if self.whole is not None:
            d, _, name = key.rpartition(b"/")
            given = self.whole[1].get(d + b"/")
            if given is None:
                return []
            path = given + name.decode(*_FS)
            return [path] if path in self._given() else []
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


_FS = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())  # (os.fsencode's, without its call)


_BY_FD = os.stat in os.supports_dir_fd and os.sep == "/"
_STATS = struct.Struct("<QQqqqQ")  # device, inode, size, mtime, ctime, mode: one file's part of a set's digest
CHUNK = 256  # files per digest of a kept set
DIGEST = 16  # bytes of each
KEPT_SETS = 64  # sets the index keeps (the most recently kept)


def _stat_all(files: list[str]) -> tuple[list, dict[str, bytes], bytes | None, bytes]:
    """``(stats, prefixes, sig, digests)``: every file's stat in order (``None``: cannot be
    stat'ed), each looked up from its directory (an open descriptor: each stat walks one name,
    not the whole path: 100,000 files cost their 100,000 stats and little more); the key of each
    directory as given (with its ``/``, the key ending in one too); the set's signature (its names
    and their directories' keys) and the digest of each ``CHUNK`` of stats, one after the other.
    ``sig`` is ``None`` for a set that cannot be kept (a name that is no file's, a directory
    named two ways, a file that cannot be stat'ed)."""
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
                    prefix = _key(where)
                    prefixes[d + sep] = prefix if prefix.endswith(b"/") else prefix + b"/"
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
    if not whole or len(set(prefixes.values())) != len(prefixes):
        return stats, prefixes, None, b""
    blake2b = cache.blake2b
    sig = blake2b(repr(sorted(prefixes.items())).encode("utf-8", "surrogatepass") + b"\0"
                  + "\0".join(files).encode("utf-8", "surrogatepass"), digest_size=DIGEST).digest()
    digests = b"".join(blake2b(b"".join(parts[k:k + CHUNK]), digest_size=DIGEST).digest()
                       for k in range(0, len(parts), CHUNK))
    return stats, prefixes, sig, digests


def _kept_set(con: sqlite3.Connection, sig: bytes | None, digests: bytes) -> list[int] | None:
    """The chunks of a kept set whose stats are no longer those it was kept with (``_keep_set``):
    the files of the others are all up to date.  ``None``: no such set kept (every file is
    looked at)."""
    if sig is None:
        return None
    row = con.execute("SELECT digest FROM sets WHERE sig=?", (sig,)).fetchone()
    if row is None or len(row[0]) != len(digests):
        return None
    kept = row[0]
    return [k // DIGEST for k in range(0, len(digests), DIGEST) if kept[k:k + DIGEST] != digests[k:k + DIGEST]]


def _keep_set(con: sqlite3.Connection, sig: bytes | None, digests: bytes) -> None:
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
            tick: Callable[[int], None] | None = None, defer: int | None = None) -> Indexed:
    """Bring the rows of ``files`` up to date; which are (``Indexed``).  With ``prune_dirs`` the
    indexed files of the same directories that are gone lose their rows.  With ``defer``, raises
    ``Deferred`` (having changed nothing) when that would mean indexing more than ``defer`` bytes
    (new files, and what was appended to the others since).

    A file is up to date when its stat is the one its row keeps (``fresh_key``).  A set of files
    found up to date every one is kept as digests of their stats (``_keep_set``, one per
    ``CHUNK`` of files): the next search of the same files takes each chunk whose stats are the
    same as up to date at once, and looks up the rows of the others' files only (the session pi
    is writing to: one chunk).  The stats are taken all the same: that is what keeps the answer
    exact."""
    stats, prefixes, sig, digests = _stat_all(files)
    stale = _kept_set(con, sig, digests)
    if stale == [] and sig is not None:
        if tick:
            tick(sum(st.st_size for st in stats))
        return Indexed({}, set(), whole=(files, {k: d for d, k in prefixes.items()}))
    look = range(len(files)) if stale is None else [i for c in stale for i in range(c * CHUNK, min((c + 1) * CHUNK,
                                                                                                len(files)))]
    keys: dict[bytes, str] = {}
    also: dict[bytes, list] = {}
    failed: set[str] = set()
    todo: list[tuple[str, bytes, os.stat_result]] = []
    isreg, fresh, enc = stat_mod.S_ISREG, _FRESH.pack, _FS
    found = 0
    pending = 0  # bytes to index
    ready = 0 if stale is None else sum(st.st_size for st in stats) - sum(stats[i].st_size for i in look)
    looked: list[tuple[str, bytes, os.stat_result | None]] = []
    for i in look:
        p, st = files[i], stats[i]
        d, sep, name = p.rpartition("/")
        prefix = prefixes.get(d + sep) if name not in ("", ".", "..") else None
        looked.append((p, _key(p) if prefix is None else prefix + name.encode(*enc), st))
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
            _keep_set(con, sig, digests)
        return Indexed({}, failed, whole=(files, {k: d for d, k in prefixes.items()}), looked=len(looked))
    out = Indexed(keys, failed, also, looked=len(looked))
    for p, key, _st in todo:
        if p not in failed:
            out.add(key, p)
    return out


def _stat(path: str, fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(path, dir_fd=fd)
    except OSError:
        return None


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


# --- the search -------------------------------------------------------------------------------------------


def candidates(con: sqlite3.Connection, m: S.Matcher, indexed: Indexed) -> dict[str, tuple[int, list]]:
    """``{path: (file id, [(offset, length, line, skip_at, skip_end), ...])}`` of the lines the
    index says may match (sorted), in the files of ``indexed``: their rows hold every trigram of
    the pattern's runs (FTS5's trigram index) and every run whole (in its case, or in any ASCII
    case for a case-insensitive pattern), as every row of a line with a match does."""
    runs, folded = runs_of(m.pattern, m.ignore_case, m.regex)
    fields = set(m.fields) | {"raw"}
    out: dict[int, set] = {}
    sql = ("SELECT r.file, r.off, r.len, r.line, r.field, r.skip_at, r.skip_end FROM fts JOIN rows r ON r.id = fts.rowid "
           "WHERE fts MATCH ?")
    whole = " AND fts.body LIKE ? ESCAPE '\\'" if folded else " AND instr(fts.body, ?) > 0"
    args = [fts_query(runs), *(_like(r) if folded else r for r in runs)]
    for fid, off, length, line, fld, skip_at, skip_end in con.execute(sql + whole * len(runs), args):
        if fld in fields:
            out.setdefault(fid, set()).add((off, length, line, skip_at, skip_end))
    return {p: (fid, sorted(out[fid])) for fid, p in indexed.paths_of(con, out)}


def _like(run: str) -> str:
    """A LIKE pattern holding ``run`` (SQLite's LIKE: ASCII letters in any case)."""
    return "%" + run.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _bad(con: sqlite3.Connection, indexed: Indexed) -> dict[str, str]:
    """``{path: reason}`` of the files of ``indexed`` without a session header."""
    return {p: why for k, why in con.execute("SELECT path, bad FROM files WHERE bad IS NOT NULL")
            for p in indexed.paths(k)}


def usable(m: S.Matcher) -> bool:
    """Whether the index can narrow a search for ``m`` (else it is scanned)."""
    return usable_for(m.pattern, m.ignore_case, m.regex)


def usable_for(pattern: str, ignore_case: bool, regex: bool) -> bool:
    return bool(literal_runs(pattern, ignore_case, regex))


def search_lines(path: str, lines: list[tuple], m: S.Matcher) -> dict[int, list[S.Match]]:
    """The scan's matches of the given lines of ``path`` (read back by offset, without what search
    never reads: ``line_back``), keyed by offset."""
    found: dict[int, list[S.Match]] = {}
    with open(path, "rb") as fh:
        for off, length, number, skip_at, skip_end in lines:
            raw = line_back(fh, off, length, skip_at, skip_end, m.needle, m.ignore_case)
            if raw is not None:
                S.match_line(raw, off, m, found, functools.partial(int, number))
    return found


def line_back(fh: Any, off: int, length: int, skip_at: int | None, skip_end: int | None, needle: bytes | None,
              fold: bool) -> bytes | None:
    """The line at ``off`` as search parses it: its unread span (``unread_span``) read as ``[]``
    where the bytes still frame a ``retainedTail`` list there (the line is the one indexed), else
    whole; ``None`` when the whole line lacks a literal's ``needle`` (lower-cased for ``fold``),
    as the scan's raw-byte check requires."""
    if skip_at is not None and skip_end is not None:
        head = _read(fh, off, skip_at + 1)  # (up to the list's "[")
        rest = _read(fh, off + skip_end - 1, length - skip_end + 1)  # (from its "]")
        if (head.endswith(TAIL_KEY + b"[") and len(head) == skip_at + 1 and rest[:1] == b"]"
                and len(rest) == length - skip_end + 1):
            if needle is None or any(needle in (b.lower() if fold else b) for b in _parts(fh, off, length, head, rest)):
                return head + rest
            return None
    raw = _read(fh, off, length)
    return raw if needle is None or needle in (raw.lower() if fold else raw) else None


def _parts(fh: Any, off: int, length: int, head: bytes, rest: bytes) -> Iterator[bytes]:
    """Where a needle is looked for, the whole line last (read only when needed: a needle in
    neither end may lie in the span, or across its edges)."""
    yield head
    yield rest
    yield _read(fh, off, length)


def _read(fh: Any, off: int, length: int) -> bytes:
    fh.seek(off)
    return fh.read(length)


def search_indexed(files: list, m: S.Matcher, *, reader: str = "auto", active_only: bool = False,
                   tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                   pi_version: str = versions.CURRENT, defer: int | None = None) -> S.SearchReport | None:
    """``search.search_files`` through the index, or ``None`` when there is no index to use (no
    cache, a pattern it cannot narrow, a cache directory that cannot be used).  Raises
    ``Deferred`` when bringing the index up to date means indexing more than ``defer`` bytes."""
    directory = cache.current().directory
    if directory is None or not usable(m):
        return None
    con = connect(directory)
    if con is None:
        return None
    _carried.clear()
    try:
        try:
            indexed = refresh(con, files, tick=tick, defer=defer)
            got = candidates(con, m, indexed)
            bad = _bad(con, indexed)
        except sqlite3.Error as e:  # busy past the timeout, no room, damaged: this search scans
            con.close()
            if damaged(e):
                _move_aside(index_path(directory), e)
            return None
        kept = _KeptPlaces(con, reader, pi_version)

        failed = indexed.failed

        def one(path: str) -> S.FileResult | None:
            if path in failed:
                return S.search_file(path, m, reader=reader, active_only=active_only, pi_version=pi_version)
            fid, lines = got.get(path, (-1, []))
            return _placed_lines(path, fid, lines, m, reader, active_only, pi_version, bad.get(path), kept)

        # (a file without a line to look at, indexed, with a header, has no hit: only the others are read)
        look = got.keys() | bad.keys() | failed
        among = [p for p in files if p in look] if look else []
        report = S.report_of(files, one, m, active_only, pi_version, on_hits, via="index", among=among)
        kept.store()
    finally:
        try:
            con.close()
        except sqlite3.Error:
            pass
    try:
        os.utime(index_path(directory))  # recently used (the cap removes the oldest first)
    except OSError:
        pass
    return report


class _KeptPlaces:
    """The places kept for the files of one search (read when a file has hits), and those placed
    anew, kept at the end of the search (``store``) for the file as it was indexed."""

    def __init__(self, con: sqlite3.Connection, reader: str, pi_version: str) -> None:
        self.con, self.reader, self.pi = con, reader, pi_version
        self.made: list = []

    def get(self, fid: int) -> tuple[S.Places | None, tuple | None]:
        """``(places kept for the file as indexed or None, (size, done, print) of the file's row)``."""
        try:
            state = self.con.execute("SELECT size, done, print FROM files WHERE id = ?", (fid,)).fetchone()
            if state is None or state[0] != state[1]:  # (an unterminated last line: placed with it, every time)
                return None, state
            carried = _carried.get((fid, self.reader, self.pi))
            if carried is not None and carried[:2] == state[1:]:
                return carried[2], state  # (carried over an append by this very search)
            p, size, prt, _parts = _load_places(self.con, fid, self.reader, self.pi)
        except sqlite3.Error:
            return None, None
        return (p, state) if p is not None and (size, prt) == state[1:] else (None, state)

    def made_anew(self, fid: int, path: str, p: S.Places, read: int, state: tuple | None) -> None:
        """Keep ``p``, made of the file's first ``read`` bytes, when those are what the index holds."""
        if state is None or not (read == state[0] == state[1]) or not state[2]:
            return
        self.made.append((fid, path, p, state))

    def store(self) -> None:
        """Keep what was placed anew, unless the index is busy (another process writing): then the
        next search places those files again."""
        if not self.made:
            return
        con = self.con
        rows = []
        for fid, path, p, (_size, done, prt) in self.made:
            try:
                with open(path, "rb") as fh:
                    if cache.fingerprint(fh, done) != prt:
                        continue  # (changed since it was read)
            except OSError:
                continue
            data = encode_places(p)
            if data is not None:
                rows.append((fid, done, prt, data))
        if not rows:
            return
        try:
            con.execute("PRAGMA busy_timeout=0")
            con.execute("BEGIN IMMEDIATE")
            try:
                for fid, done, prt, data in rows:
                    if con.execute("SELECT 1 FROM files WHERE id = ? AND done = ? AND print = ?",
                                   (fid, done, prt)).fetchone() is None:
                        continue  # (indexed anew meanwhile)
                    con.execute("DELETE FROM places WHERE file=? AND reader=? AND pi=?", (fid, self.reader, self.pi))
                    con.execute("INSERT INTO places VALUES (?,?,?,0,?,?,?)", (fid, self.reader, self.pi, done, prt, data))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.Error:
            pass


def _placed_lines(path: str, fid: int, lines: list, m: S.Matcher, reader: str, active_only: bool,
                  pi_version: str, bad: str | None, kept: _KeptPlaces) -> S.FileResult | None:
    try:
        found = search_lines(path, lines, m) if lines else None
    except OSError as e:
        raise S.storage_error(path, e) from None
    if not found:
        if bad is not None:  # no session header: what the scan says of such a file without hits
            raise PisessError("invalid_session", bad, path=path)
        return None
    p, state = kept.get(fid)
    if p is not None:
        return S.placed_by(p, path, found, active_only)
    session, note = S.open_lenient(path, reader, None, pi_version=pi_version)
    p = S.places_of(session, note)
    if p is None:
        return S.placed(session, found, active_only, note)
    kept.made_anew(fid, path, p, session.raw.size, state)
    return S.placed_by(p, path, found, active_only)


def search_files(files: list, m: S.Matcher, *, reader: str = "auto", active_only: bool = False,
                 tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                 pi_version: str = versions.CURRENT, defer: int | None = None) -> S.SearchReport:
    """``search.search_files``'s answer: through the index when the cache is on and the pattern has
    literal text the index can look for (``via="index"``), else the scan (``via="scan"``).

    ``defer``: bytes the search may index first (new files, appended lines); when the index lacks
    more than that, the search scans and leaves them be, saying how many (``SearchReport.deferred``:
    the caller has them indexed in the background, ``pisess cache index``).  ``None``: no limit."""
    kw: dict[str, Any] = {"reader": reader, "active_only": active_only, "tick": tick, "on_hits": on_hits,
                          "pi_version": pi_version}
    got = None
    if cache.current().directory is not None:
        try:
            got = search_indexed(files, m, defer=defer, **kw)
        except Deferred as d:
            return replace(S.search_files(files, m, **kw), deferred=d.bytes)
    return got if got is not None else S.search_files(files, m, **kw)


# --- pi's /resume search over a listing (ls --search) ---------------------------------------------------------


def resume_search(sessions: list, query: str, *, defer: int | None = None,
                  on_defer: Callable[[int], None] | None = None) -> list:
    """The sessions of a listing (``SessionInfo``, in its order) that pi 1.6's ``/resume`` search
    keeps for ``query`` (``listing.resume_search``).  The session names are kept in the cache by
    each file's stat; a token's message text is read only for the files whose user and assistant
    text in the search index holds the token's letters (all files without a cache).  ``defer``
    and ``on_defer(bytes)``: as ``search_files``' (every file is read when the index lacks more
    than ``defer`` bytes).  Raises ``PisessError("usage")`` for a regular expression that does not
    compile."""
    from ..listing import resume_search as R
    from ..listing.summary import CliInfo, read_cli_info

    q = R.parse(query)
    if q.error:
        raise PisessError("usage", f"--search {query!r}: {q.error}")
    if q.mode == "tokens" and not q.tokens:
        return list(sessions)
    paths = [s.path for s in sessions]
    read: dict[str, Any] = {}

    def whole(p: str) -> Any:
        if p not in read:
            read[p] = read_cli_info(p, whole=True)
        return read[p]

    names = cache.by_stat(paths, "ls-name", lambda todo: [w.name if isinstance(w := whole(p), CliInfo) else None
                                                          for p in todo])
    holding: list | None = None
    failed: set[str] = set()
    runs = R.message_runs(q)
    directory = cache.current().directory
    if runs is not None and any(runs) and directory is not None:
        con = connect(directory)
        if con is not None:
            try:
                indexed = refresh(con, paths, defer=defer)
                failed = indexed.failed
                holding = [files_holding(con, r, ("user", "assistant"), indexed) if r else None for r in runs]
            except Deferred as d:
                if on_defer is not None:
                    on_defer(d.bytes)
            except sqlite3.Error as e:
                if damaged(e):
                    con.close()
                    _move_aside(index_path(directory), e)
                holding = None
            finally:
                con.close()
    out = []
    for s, name in zip(sessions, names):
        def may(k: int, p: str = s.path) -> bool:
            return holding is None or holding[k] is None or p in holding[k] or p in failed

        def messages(p: str = s.path) -> str:
            w = whole(p)
            return (w.all_messages_text or "") if isinstance(w, CliInfo) else ""

        if R.matches(q, R.Candidate(name, s.id, s.cwd, messages, may)):
            out.append(s)
    return out


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
            _move_aside(index_path(directory), e)
        return None
    finally:
        con.close()
    return len(indexed), len(indexed.failed)


__all__ = ["search_files", "literal_runs", "fts_query", "connect", "refresh", "prune", "search_indexed", "build", "usable",
           "take_notes", "index_path", "Deferred", "lock_indexer", "indexer_running", "LOCK"]
