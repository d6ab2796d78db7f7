"""The scan: a search that reads the files themselves (``--no-cache``, and whatever the search
index cannot narrow), and the hits and reports both ways of searching return.

A match is looked for in each decoded string, line by line (``^``/``$`` are line anchors); each
line with a match is one hit.  Copies held in a compaction's ``retainedTail`` are not searched
again: their originals are, marked ``retained``.  A line that is not JSON (cut off, two entries
glued together, a conflict marker) is searched as raw text: no reader keeps it, but its hits are
there (``dropped``, field ``raw``), as grep would find them.

Streaming.  A file larger than ``SMALL`` is read in blocks into one reused buffer and only the
lines whose bytes could hold the pattern are parsed: a literal's longest run of characters that no
JSON writer escapes (printable ASCII other than ``" \\ / < > & ' + ```) is looked for in the raw
bytes first (lower-cased for ``-i``).  A pattern without such a run, and a regular expression,
parse every line.  Escapes of plain letters and digits (``\\u0061``, which no JSON writer
produces) are therefore not seen through by a literal search.  With ``-i`` a literal matches case
insensitively except for the four non-ASCII letters Unicode folds to ASCII (``İ ı ſ K``), which
then match only themselves, so the raw-byte check stays exact.

Only files with a hit are read a second time, light, for their structure (leaf, active path,
checkpoint), exactly as the other commands read them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from ... import versions
from ...errors import PisessError
from ...js import UNDEF, get
from ...model import kinds
from ...reading.jsonl import NOT_JSON, is_blank, scan_bytes, storage_error
from ...reading.scan import file_blocks, open_lenient, parse_line, read_small, scan_visit, session_name
from .matcher import Matcher, candidate_starts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ...reading.session import Session

SMALL = 8 << 20  # files up to this size are read whole (one read, exact structure)
BLOCK = 8 << 20
BEFORE, AFTER = 60, 160  # snippet context, in characters


# --- the text of an entry ---------------------------------------------------------------------------


def entry_texts(e: Any) -> Iterator[tuple[str, str, str, str]]:
    """``(field, kind, prefix, text)`` for each searchable string of a complete entry.  ``kind`` is
    what the hit is (``user``, ``tool call``, ``bash``...); ``prefix`` goes before the snippet.
    The kind table says which: ``pisess.core.model.kinds``."""
    return kinds.texts(e)


@dataclass(frozen=True)
class Match:
    """One matching line of one string of an entry (before the entry is placed in the tree)."""

    line: int  # physical line of the entry in the file
    field: str
    kind: str
    snippet: str
    start: int  # the match in ``snippet`` (code points)
    end: int
    clipped_left: bool
    clipped_right: bool


def _line_matches(m: Matcher, text: str, prefix: str) -> Iterator[tuple[str, int, int, bool, bool]]:
    """For each line of ``text`` with a match: (snippet, start, end, clipped left, clipped right)."""
    hay = m.search_text(text)
    search = m.rx.search
    pos = 0
    n = len(text)
    while pos <= n:
        mo = search(hay, pos)
        if mo is None:
            return
        s, e = mo.span()
        ls = text.rfind("\n", 0, s) + 1
        le = text.find("\n", s)
        if le < 0:
            le = n
        line = text[ls:le]
        if line.endswith("\r"):
            line = line[:-1]
        rs, re_ = s - ls, min(e, ls + len(line)) - ls
        a = max(0, rs - BEFORE)
        b = min(len(line), max(re_, rs) + AFTER)
        lead = line[a:rs]
        clipped_left = a > 0
        if not clipped_left or not line[:a].strip():
            a += len(lead) - len(lead.lstrip())  # no indentation before the match
            clipped_left = False
        snippet = prefix + line[a:b]
        yield snippet, len(prefix) + rs - a, len(prefix) + re_ - a, clipped_left, b < len(line)
        pos = le + 1


def value_matches(value: Any, line: int, m: Matcher) -> list[Match]:
    """The matches in one complete entry (``line`` is its physical line)."""
    out: list[Match] = []
    if not isinstance(value, dict):
        return out
    for fld, kind, prefix, text in entry_texts(value):
        if fld not in m.fields or not text:
            continue
        for snippet, s, e, cl, cr in _line_matches(m, text, prefix):
            out.append(Match(line, fld, kind, snippet, s, e, cl, cr))
    return out


# --- one file ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    entry_id: Any
    entry_type: Any
    role: Any
    where: str  # active | edited | retained | compacted | branch | dropped (a line no reader keeps)
    match: Match

    def to_json(self, result: FileResult) -> dict:
        m = self.match
        return {"sessionId": result.session_id, "path": result.path, "entryId": self.entry_id,
                "type": self.entry_type, "role": self.role, "where": self.where, "field": m.field,
                "line": m.line, "snippet": m.snippet, "start": m.start, "end": m.end}


@dataclass(frozen=True)
class FileResult:
    path: str
    session_id: Any
    name: str | None
    cwd: Any
    created_at: Any
    reader: str
    hits: list
    note: str | None = None  # read with another reader than asked, and why
    placement_error: str | None = None
    dropped_lines: list = field(default_factory=list)  # {line, reason} of each line the reader dropped
    id_width: int = 8  # characters of an entry id the view shows (Session.id_width)


def match_line(raw: Any, key: int, m: Matcher, found: dict, line: Callable[[], int]) -> None:
    if is_blank(raw):
        return
    v = parse_line(raw)
    if v is NOT_JSON:
        got = damaged_matches(raw, line(), m)
        if got:
            found[key] = got
        return
    if not isinstance(v, dict) or v.get("type") == "session":
        return
    got = value_matches(v, 0, m)
    if got:
        found[key] = got


def damaged_matches(raw: bytes, line: int, m: Matcher) -> list[Match]:
    """The matches in the raw text of a line that is not JSON (a cut-off entry, two entries glued
    together, a conflict marker): no reader keeps it, grep still finds it, and so does search
    (field ``raw``, escapes as written).  ``line`` is its physical line."""
    text = raw.decode("utf-8", "replace")
    return [Match(line, "raw", "damaged", snippet, s, e, cl, cr) for snippet, s, e, cl, cr in _line_matches(m, text, "")]


def _match_lines(buf: Any, end: int, base: int, starts: list[int], m: Matcher, found: dict,
                 lines_before: int = 0) -> None:
    """Parse and match the lines of ``buf[:end]`` starting at ``starts``; matches are keyed by
    their line's byte offset in the file (``base`` is the offset of ``buf[0]``, ``lines_before``
    the number of lines before it)."""
    find = buf.find
    for s in starts:
        e = find(b"\n", s, end)
        match_line(bytes(buf[s:end if e < 0 else e]), base + s, m, found,
                    functools.partial(_line_number, buf, s, lines_before))  # only asked for a damaged line


def _line_number(buf: Any, start: int, lines_before: int) -> int:
    return lines_before + buf.count(b"\n", 0, start) + 1


def _matches_small(data: bytes, m: Matcher) -> dict[int, list[Match]]:
    found: dict[int, list[Match]] = {}
    if m.needle is None:
        starts = list(_all_starts(data))
    else:
        starts = candidate_starts(data, len(data), m)
    if starts:
        _match_lines(data, len(data), 0, starts, m, found)
    return found


def _all_starts(data: bytes) -> Iterator[int]:
    s = 0
    n = len(data)
    while s < n:
        yield s
        e = data.find(b"\n", s)
        if e < 0:
            return
        s = e + 1


def _matches_streamed(path: str, m: Matcher, tick) -> dict[int, list[Match]]:
    found: dict[int, list[Match]] = {}
    lines_before = 0
    for buf, end, base in file_blocks(path, tick, BLOCK):
        starts = candidate_starts(buf, end, m)
        if starts:
            _match_lines(buf, end, base, starts, m, found, lines_before)
        lines_before += buf.count(b"\n", 0, end)
    return found


def _damaged_lines_matches(raw: Any, m: Matcher) -> dict[int, list[Match]]:
    """``damaged_matches`` of each line of a line scan that is not JSON, read back by offset."""
    found: dict[int, list[Match]] = {}
    bad = [ln for ln in raw.lines if not ln.blank and ln.value is NOT_JSON]
    if not bad:
        return found
    with open(raw.path, "rb") as fh:
        for ln in bad:
            fh.seek(ln.offset)
            got = damaged_matches(fh.read(ln.length), ln.number, m)
            if got:
                found[ln.offset] = got
    return found


def search_file(path: str, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                tick: Callable[[int], None] | None = None, small: int = SMALL,
                pi_version: str = versions.CURRENT) -> FileResult | None:
    """The hits in one file, or ``None`` when there is none.  Raises ``PisessError`` when the file
    cannot be read, or is not a session either of pi's readers opens (without a hit, its first
    line is looked at: no session header is ``invalid_session``, as the other commands say)."""
    found = _found(path, m, tick, small)
    if not found:
        check_header(path)
        return None
    raw, found = found
    session, note = open_lenient(path, reader, raw, pi_version=pi_version)
    return placed(session, found, active_only, note)


def check_header(path: str) -> None:
    """Raise ``invalid_session`` when a non-empty file has no session header (pi's listing's
    test: the first line that parses); the pi command opens an empty file as a new session."""
    from ...listing.summary import CliSkip, read_cli_info

    info = read_cli_info(path, activity=False)
    if isinstance(info, CliSkip) and info.code == "invalid_session" and info.reason != "empty file":
        raise PisessError("invalid_session", info.reason, path=path)


def _found(path: str, m: Matcher, tick: Callable[[int], None] | None, small: int) -> tuple | None:
    """``(raw or None, matches by line offset)``, or ``None`` without a match."""
    data = read_small(path, small)
    if data is not None:
        if tick:
            tick(len(data))
        found = _matches_small(data, m)
        if not found:
            return None
        raw: Any = scan_bytes(data, path)
    elif m.needle is None:
        by_line: dict = {}

        def visit(number: int, v: Any, _raw: bytes) -> None:
            if isinstance(v, dict) and v.get("type") != "session":
                got = value_matches(v, 0, m)
                if got:
                    by_line[number] = got

        raw = scan_visit(path, visit, tick)
        found = {raw.lines[n - 1].offset: got for n, got in by_line.items()}
        try:
            found.update(_damaged_lines_matches(raw, m))
        except OSError as e:
            raise storage_error(path, e) from None
        if not found:
            return None
    else:
        found = _matches_streamed(path, m, tick)
        if not found:
            return None
        raw = None  # read light: the structure, not every value again
    return raw, found


def entries_at(offsets: Any, found: dict) -> list[tuple[int, int]]:
    """``(position, offset)`` of the entries whose line starts at one of ``found``'s offsets, in
    order (``offsets``: each entry's, ascending)."""
    from bisect import bisect_left

    hits = [(bisect_left(offsets, off), off) for off in found]
    n = len(offsets)
    return sorted((i, off) for i, off in hits if i < n and offsets[i] == off)


def entry_fields(e: Any) -> tuple[Any, Any, Any]:
    """What a hit shows of its entry: id, type and role (``None`` where it has none)."""
    eid = get(e, "id")
    t = get(e, "type")
    msg = get(e, "message") if t == "message" else UNDEF
    role = get(msg, "role") if isinstance(msg, dict) else UNDEF
    return None if eid is UNDEF else eid, None if t is UNDEF else t, None if role is UNDEF else role


def hits_of(at: list, found: dict, active_only: bool, where_of: Callable[[int], str], line_of: Callable[[int], int],
            entry_of: Callable[[int], tuple]) -> list[Hit]:
    """The hits of ``found`` (matches by line offset) on the entries ``at`` (``entries_at``), and
    those of damaged lines (``dropped``), in the order the view lists them."""
    hits: list[Hit] = []
    for i, offset in at:
        where = where_of(i)
        if active_only and where not in ("active", "retained"):  # a retained entry's copy is in the context
            continue
        line = line_of(i)
        eid, etype, role = entry_of(i)
        for mt in found[offset]:
            hits.append(Hit(eid, etype, role, where, replace(mt, line=line)))
    if not active_only:  # no reader keeps a damaged line: its hits are where no context reaches
        placed = {off for _, off in at}
        damaged = [Hit(None, None, None, "dropped", mt) for off, got in found.items() if off not in placed
                   for mt in got if mt.field == "raw"]
        if damaged:
            hits = sorted(hits + damaged, key=lambda h: h.match.line)
    return hits


def placed(session: Session, found: dict, active_only: bool, note: str | None) -> FileResult | None:
    """Matches keyed by the byte offset of their line, placed on the entries of ``session``."""
    from ...model.placement import place

    at = entries_at(session.store.spans()[0], found)
    pl = place(session, branches=False, positions=[i for i, _ in at])
    entries = session.entries
    hits = hits_of(at, found, active_only, pl.where.__getitem__, session.entry_lines.__getitem__,
                   lambda i: entry_fields(entries[i]))
    if not hits:
        return None
    h = session.header if isinstance(session.header, dict) else {}
    return FileResult(session.path, h.get("id"), session_name(session), h.get("cwd"), h.get("timestamp"),
                      session.reader, hits, note, pl.error, list(session.dropped_lines), session.id_width)


@dataclass(frozen=True)
class SearchReport:
    """The hits in a set of files: one ``FileResult`` per file with a hit (newest session first),
    the files that are not sessions either reader opens (``skipped``) and those that cannot be
    read at all (``unreadable``)."""

    matcher: Matcher
    active_only: bool
    pi_version: str
    files: int
    results: list
    skipped: list
    unreadable: list
    via: str = "scan"  # index | scan: whether the search index narrowed the lines read
    deferred: int = 0  # bytes the search index lacked, left to be indexed apart (search.search_files)

    @property
    def hit_count(self) -> int:
        return sum(len(r.hits) for r in self.results)

    def to_json(self) -> dict:
        m = self.matcher
        return {
            "piVersion": self.pi_version, "pattern": m.pattern, "regex": m.regex, "ignoreCase": m.ignore_case,
            "in": sorted(m.fields), "activeOnly": self.active_only, "via": self.via,
            "hits": [h.to_json(r) for r in self.results for h in r.hits],
            "fileCount": self.files, "sessionCount": len(self.results),
            "droppedLines": [{"path": r.path, **d} for r in self.results for d in r.dropped_lines],
            "skipped": [e.to_dict() for e in self.skipped], "unreadable": [e.to_dict() for e in self.unreadable],
        }


def scan_files(files: list, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                 tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                 pi_version: str = versions.CURRENT) -> SearchReport:
    """``search_file`` over ``files``; a file that cannot be read or is not a session is set aside
    (``skipped``, ``unreadable``), never the end of the search.  ``on_hits(total)`` is called after
    each file with a hit (a progress bar's status).  The front door (``search.search_files``)
    answers the same through the search index where it can."""
    return report_of(files, lambda path: search_file(path, m, reader=reader, active_only=active_only, tick=tick,
                                                     pi_version=pi_version), m, active_only, pi_version, on_hits)


def report_of(files: list, one: Callable[[str], FileResult | None], m: Matcher, active_only: bool, pi_version: str,
              on_hits: Callable[[int], None] | None = None, via: str = "scan", among: list | None = None) -> SearchReport:
    """``one(path)`` over ``files`` as a report: a file that cannot be read or is not a session
    (``one`` raised) set aside, the results newest session first.  ``among``: the files (of
    ``files``, in their order) ``one`` is asked about; the others have no hit."""
    from ...listing.sessionset import created_key

    results: list = []
    skipped: list = []
    unreadable: list = []
    total = 0
    for path in files if among is None else among:
        try:
            r = one(path)
        except PisessError as e:
            (unreadable if e.unreadable or e.code in ("storage", "not_found") else skipped).append(e)
            continue
        if r is not None:
            results.append(r)
            total += len(r.hits)
            if on_hits:
                on_hits(total)
    results.sort(key=lambda r: created_key({"timestamp": r.created_at}))
    return SearchReport(m, active_only, pi_version, len(files), results, skipped, unreadable, via)


