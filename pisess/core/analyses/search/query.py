"""The query: a search answered through the search index.

The index is a *prefilter*: FTS5's trigram index finds the rows holding every trigram of the
pattern's literal text; each line so found is read back from the file by its offset and matched by
the scan's own code (``scan.match_line``), and the files with hits are placed on their tree as the
scan places them (from their kept places where the index has them: ``places``).  So every answer
is the scan's answer, hit for hit; the index only decides which lines need to be looked at.

What it cannot narrow, it does not try: a literal shorter than 3 characters, a regular expression
without a run of 3 or more literal characters, a case-insensitive pattern without 3 ASCII
characters in a row (the fold of the index is SQLite's, not Python's) are answered by the scan
(``via`` says which).
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from collections.abc import Callable, Iterator

from ... import versions
from ...errors import PisessError
from ...reading import cache
from ...reading.jsonl import storage_error
from ...reading.scan import open_lenient
from . import update
from .codec import encode_places, load_places
from .database import connect, damaged, index_path, move_aside, unless_busy, unusable
from .matcher import Matcher
from .places import Places, placed_by, places_of
from .rows import BAD, TAIL_KEY
from .scan import FileResult, Match, SearchReport, match_line, placed, report_of, search_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .stats import Listed
    from .update import Indexed

# Trigrams a query asks FTS5 for, spread over the literal runs (the whole runs are then checked in
# the same query): each costs its list of rows, and the common ones (" th", "he ") are long. For a
# 24-character literal, 8 of its 22 took 2.4-3.6 ms where all took 4.2 ms (the 200 MB session), and
# 8 of 13 over 10,000 sessions 6.5-9.7 ms where all took 9.5-15 ms; 4 let too many rows through.
MAX_TRIGRAMS = 8


# --- the pattern: what the index can look for -------------------------------------------------------

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
        for part in BAD.split(run):
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


def files_holding(con: sqlite3.Connection, runs: list[str], fields: tuple[str, ...], indexed: Indexed) -> set[str]:
    """The paths (of ``indexed``) with a row of one of ``fields`` holding every trigram of ``runs``
    (case-insensitive): a superset of the files whose text of those fields holds the runs."""
    q = fts_query(runs)
    sql = "SELECT r.file, r.field FROM fts JOIN rows r ON r.id = fts.rowid WHERE fts MATCH ?"
    fids = {fid for fid, fld in con.execute(sql, (q,)) if fld in fields}
    return {p for _, p in indexed.paths_of(con, fids)}


# --- the search -------------------------------------------------------------------------------------------


def candidates(con: sqlite3.Connection, m: Matcher, indexed: Indexed) -> dict[str, tuple[int, list]]:
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


def usable(m: Matcher) -> bool:
    """Whether the index can narrow a search for ``m`` (else it is scanned)."""
    return usable_for(m.pattern, m.ignore_case, m.regex)


def usable_for(pattern: str, ignore_case: bool, regex: bool) -> bool:
    return bool(literal_runs(pattern, ignore_case, regex))


def search_lines(path: str, lines: list[tuple], m: Matcher) -> dict[int, list[Match]]:
    """The scan's matches of the given lines of ``path`` (read back by offset, without what search
    never reads: ``line_back``), keyed by offset."""
    found: dict[int, list[Match]] = {}
    with open(path, "rb") as fh:
        for off, length, number, skip_at, skip_end in lines:
            raw = line_back(fh, off, length, skip_at, skip_end, m.needle, m.ignore_case)
            if raw is not None:
                match_line(raw, off, m, found, functools.partial(int, number))
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


def search_indexed(files: list, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                   tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                   pi_version: str = versions.CURRENT, defer: int | None = None,
                   listed: Listed | None = None) -> SearchReport | None:
    """``search.search_files``' answer through the index, or ``None`` when there is no index to use
    (no cache, a pattern it cannot narrow, a cache directory that cannot be used).  Raises
    ``update.Deferred`` when bringing the index up to date means indexing more than ``defer`` bytes.
    ``listed``: the listing ``files`` are (``listings.project``)."""
    directory = cache.current().directory
    if directory is None or not usable(m):
        return None
    con = connect(directory)
    if con is None:
        return None
    update.carried.clear()
    try:
        try:
            indexed = update.refresh(con, files, tick=tick, defer=defer, listed=listed)
            got = candidates(con, m, indexed)
            bad = _bad(con, indexed)
        except sqlite3.Error as e:  # busy past the timeout, no room, damaged: this search scans
            con.close()
            if damaged(e):
                move_aside(index_path(directory), e)
            else:
                unusable(directory, e)
            return None
        kept = _KeptPlaces(con, reader, pi_version)

        failed = indexed.failed

        def one(path: str) -> FileResult | None:
            if path in failed:
                return search_file(path, m, reader=reader, active_only=active_only, pi_version=pi_version)
            fid, lines = got.get(path, (-1, []))
            return _placed_lines(path, fid, lines, m, reader, active_only, pi_version, bad.get(path), kept)

        # (a file without a line to look at, indexed, with a header, has no hit: only the others are read)
        look = got.keys() | bad.keys() | failed
        among = indexed.in_order(look, files)
        report = report_of(files, one, m, active_only, pi_version, on_hits, via="index", among=among)
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

    def get(self, fid: int) -> tuple[Places | None, tuple | None]:
        """``(places kept for the file as indexed or None, (size, done, print) of the file's row)``."""
        try:
            state = self.con.execute("SELECT size, done, print FROM files WHERE id = ?", (fid,)).fetchone()
            if state is None or state[0] != state[1]:  # (an unterminated last line: placed with it, every time)
                return None, state
            carried = update.carried.get((fid, self.reader, self.pi))
            if carried is not None and carried[:2] == state[1:]:
                return carried[2], state  # (carried over an append by this very search)
            p, size, prt, _parts = load_places(self.con, fid, self.reader, self.pi)
        except sqlite3.Error:
            return None, None
        return (p, state) if p is not None and (size, prt) == state[1:] else (None, state)

    def made_anew(self, fid: int, path: str, p: Places, read: int, state: tuple | None) -> None:
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

        def write(con: sqlite3.Connection) -> None:
            for fid, done, prt, data in rows:
                if con.execute("SELECT 1 FROM files WHERE id = ? AND done = ? AND print = ?",
                               (fid, done, prt)).fetchone() is None:
                    continue  # (indexed anew meanwhile)
                con.execute("DELETE FROM places WHERE file=? AND reader=? AND pi=?", (fid, self.reader, self.pi))
                con.execute("INSERT INTO places VALUES (?,?,?,0,?,?,?)", (fid, self.reader, self.pi, done, prt, data))

        unless_busy(con, write)


def _placed_lines(path: str, fid: int, lines: list, m: Matcher, reader: str, active_only: bool,
                  pi_version: str, bad: str | None, kept: _KeptPlaces) -> FileResult | None:
    try:
        found = search_lines(path, lines, m) if lines else None
    except OSError as e:
        raise storage_error(path, e) from None
    if not found:
        if bad is not None:  # no session header: what the scan says of such a file without hits
            raise PisessError("invalid_session", bad, path=path)
        return None
    p, state = kept.get(fid)
    if p is not None:
        return placed_by(p, path, found, active_only)
    session, note = open_lenient(path, reader, None, pi_version=pi_version)
    p = places_of(session, note)
    if p is None:
        return placed(session, found, active_only, note)
    kept.made_anew(fid, path, p, session.raw.size, state)
    return placed_by(p, path, found, active_only)


