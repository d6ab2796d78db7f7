"""Search the text of sessions, and say where each hit sits in the tree.

What is searched, by field (``--in``):

==========  ================================================================================
user        user message text
assistant   assistant text blocks and error messages
thinking    assistant thinking blocks
tool        tool calls (the tool's name and every string in its arguments), tool results,
            ``bashExecution`` commands and output
summary     compaction and branch summaries
custom      ``custom_message`` content (extension messages the model sees), ``custom`` role messages
label       labels
name        session names (``session_info``)
system      pi 1.x system messages and compaction checkpoints: prompt text, sections, tool names
            and descriptions
edit        pi 1.x ``context_edit`` replacements (the text the model sees instead of the target's)
==========  ================================================================================

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
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from .. import versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..model import kinds
from ..reading.jsonl import NOT_JSON, is_blank, scan_bytes, storage_error
from ..reading.scan import line_blocks, open_lenient, parse_line, read_small, scan_visit, session_name

TYPE_CHECKING = False  # (True for mypy: typing is imported for annotations only, not on every run)
if TYPE_CHECKING:
    from typing import Any

    from ..reading.session import Session

FIELDS = kinds.FIELDS
SMALL = 8 << 20  # files up to this size are read whole (one read, exact structure)
BLOCK = 8 << 20
BEFORE, AFTER = 60, 160  # snippet context, in characters

_SAFE_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - set('"\\/<>&\'+`')
_SAFE_RUN = re.compile("[" + re.escape("".join(sorted(_SAFE_CHARS))) + "]+")
# Unicode letters that ``re.IGNORECASE`` folds to an ASCII letter: kept apart for a literal -i search
_FOLD_TO_ASCII = {0x130: 0xE000, 0x131: 0xE001, 0x17F: 0xE002, 0x212A: 0xE003}


# --- the pattern -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matcher:
    pattern: str
    regex: bool
    ignore_case: bool
    fields: frozenset
    rx: Any  # compiled on str
    needle: bytes | None  # looked for in the raw bytes (lower-cased with -i); None: parse every line

    def search_text(self, text: str) -> str:
        """The text the pattern runs on (same length: positions carry over to the original)."""
        if self.ignore_case and not self.regex and not text.isascii():
            return text.translate(_FOLD_TO_ASCII)
        return text


def make_matcher(pattern: str, *, regex: bool = False, ignore_case: bool = False,
                 fields: Any = None) -> Matcher:
    """Raises ``PisessError("usage")`` for an empty pattern, a bad regex or an unknown field."""
    if pattern == "":
        raise PisessError("usage", "the pattern is empty (it would match every line)")
    wanted = frozenset(FIELDS if not fields else fields)
    unknown = sorted(wanted - set(FIELDS))
    if unknown:
        raise PisessError("usage", f"unknown --in value {', '.join(unknown)}: use {','.join(FIELDS)}")
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    source = pattern if regex else re.escape(pattern.translate(_FOLD_TO_ASCII) if ignore_case else pattern)
    try:
        rx = re.compile(source, flags)
    except (re.error, OverflowError, RecursionError) as e:
        raise PisessError("usage", f"invalid regular expression {pattern!r}: {e}") from None
    needle = None
    if not regex:
        best = max(_SAFE_RUN.findall(pattern), key=len, default="")
        if best:
            needle = (best.lower() if ignore_case else best).encode("ascii")
    return Matcher(pattern, regex, ignore_case, wanted, rx, needle)


def _candidate_starts(buf: Any, end: int, m: Matcher) -> list[int]:
    """Start offsets of the lines of ``buf[:end]`` that hold the needle (sorted, no duplicates)."""
    if m.ignore_case:
        hay = buf[:end].lower()
        stop = len(hay)
    else:
        hay, stop = buf, end
    needle = m.needle
    find, rfind, nl = hay.find, buf.rfind, buf.find
    starts = []
    p = find(needle, 0, stop)
    while p >= 0:
        starts.append(rfind(b"\n", 0, p) + 1)
        e = nl(b"\n", p, end)
        if e < 0:
            break
        p = find(needle, e + 1, stop)
    return starts


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
        starts = _candidate_starts(data, len(data), m)
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
    for buf, end, base in line_blocks(path, tick, BLOCK):
        starts = _candidate_starts(buf, end, m)
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
    from ..listing.summary import CliSkip, read_cli_info

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


def _entries_at(offsets: Any, found: dict) -> list[tuple[int, int]]:
    """``(position, offset)`` of the entries whose line starts at one of ``found``'s offsets, in
    order (``offsets``: each entry's, ascending)."""
    from bisect import bisect_left

    hits = [(bisect_left(offsets, off), off) for off in found]
    n = len(offsets)
    return sorted((i, off) for i, off in hits if i < n and offsets[i] == off)


def _entry_fields(e: Any) -> tuple[Any, Any, Any]:
    """What a hit shows of its entry: id, type and role (``None`` where it has none)."""
    eid = get(e, "id")
    t = get(e, "type")
    msg = get(e, "message") if t == "message" else UNDEF
    role = get(msg, "role") if isinstance(msg, dict) else UNDEF
    return None if eid is UNDEF else eid, None if t is UNDEF else t, None if role is UNDEF else role


def _hits(at: list, found: dict, active_only: bool, where_of: Callable[[int], str], line_of: Callable[[int], int],
          entry_of: Callable[[int], tuple]) -> list[Hit]:
    """The hits of ``found`` (matches by line offset) on the entries ``at`` (``_entries_at``), and
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
    from ..model.placement import place

    at = _entries_at(session.store.spans()[0], found)
    pl = place(session, branches=False, positions=[i for i, _ in at])
    entries = session.entries
    hits = _hits(at, found, active_only, pl.where.__getitem__, session.entry_lines.__getitem__,
                 lambda i: _entry_fields(entries[i]))
    if not hits:
        return None
    h = session.header if isinstance(session.header, dict) else {}
    return FileResult(session.path, h.get("id"), session_name(session), h.get("cwd"), h.get("timestamp"),
                      session.reader, hits, note, pl.error, list(session.dropped_lines), session.id_width)


# --- placements kept: every entry of a file placed once, for its current leaf ----------------------------

WHERE = ("active", "edited", "retained", "compacted", "branch")  # model.placement.WHERE (a test keeps them equal)
_WHERE_CODE = {w: k for k, w in enumerate(WHERE)}
_ACTIVE = _WHERE_CODE["active"]


@dataclass(frozen=True)
class Places:
    """Where every entry of one file sits at its current leaf, and what a hit on it shows: per
    entry, in file order, its line's byte offset, physical line, place (an index into ``WHERE``),
    id, and kind (an index into ``kind_table``, of ``(type, role)``); and the fields of the file's
    ``FileResult``.  Made once from the session (``places_of``) and kept by the search index while
    the file is unchanged (``extend_places`` after an append that cannot move an earlier entry),
    so a warm search places its hits without reading the file's tree.

    ``ext``: ``(leaf id, ids the file names but no entry has, length of the longest id)`` where
    appended entries can be added on (``extend_places``), else ``None``."""

    offsets: Any  # array("q")
    lines: Any  # array("q")
    where: bytes
    ids: list
    kinds: bytes
    kind_table: list
    session_id: Any
    name: str | None
    cwd: Any
    created_at: Any
    reader: str
    note: str | None
    placement_error: str | None
    dropped_lines: list
    id_width: int
    ext: tuple | None = None


def placed_by(p: Places, path: str, found: dict, active_only: bool) -> FileResult | None:
    """``placed``'s answer from kept placements: the same hits, in the same order."""
    table, where, kinds, ids = p.kind_table, p.where, p.kinds, p.ids
    hits = _hits(_entries_at(p.offsets, found), found, active_only, lambda i: WHERE[where[i]], p.lines.__getitem__,
                 lambda i: (ids[i], *table[kinds[i]]))
    if not hits:
        return None
    return FileResult(path, p.session_id, p.name, p.cwd, p.created_at, p.reader, hits, p.note, p.placement_error,
                      list(p.dropped_lines), p.id_width)


def places_of(session: Session, note: str | None) -> Places | None:
    """Every entry of ``session`` placed (``placed``'s work for all of them at once), or ``None``
    when an entry's type or role cannot be kept (a value that is not a string or a number)."""
    from array import array

    from ..model.placement import place

    pl = place(session, branches=False)
    store = session.store
    got = _entry_columns(store)
    if got is None:
        return None
    ids, kinds, table = got
    where = bytes(map(_WHERE_CODE.__getitem__, pl.where))
    h = session.header if isinstance(session.header, dict) else {}
    return Places(array("q", store.spans()[0]), array("q", session.entry_lines), where, ids, bytes(kinds), table,
                  h.get("id"), session_name(session), h.get("cwd"), h.get("timestamp"), session.reader, note,
                  pl.error, list(session.dropped_lines), session.id_width, _extension(session, pl, note, where))


_KINDS = 255  # kinds a file's places can tell apart (one byte each)


def _entry_columns(store: Any) -> tuple[list, bytearray, list] | None:
    """Each entry's id, and its ``(type, role)`` as a code into a table of them."""
    table: list = []
    code: dict = {}

    def code_of(k: tuple) -> int | None:
        c = code.get(k)
        if c is None:
            if len(table) >= _KINDS:
                return None
            c = code[k] = len(table)
            table.append(k)
        return c

    ix = getattr(store, "ix", None)
    try:
        if ix is not None and hasattr(ix, "role_stubs"):  # the compact store: plain messages from its columns
            for stub in ix.role_stubs:  # (role code k is table entry k)
                code_of(("message", stub["role"]))
            ids = list(ix.ids)
            kinds = bytearray(ix.roles)
            at = ix.extras
        else:
            ids = [None] * len(store)
            kinds = bytearray(len(store))
            at = range(len(store))
        for p in at:
            eid, t, role = _entry_fields(store[p])
            c = code_of((t, role))
            if c is None:
                return None
            ids[p] = eid
            kinds[p] = c
    except TypeError:  # an unhashable type or role (an object): placed anew each time
        return None
    return ids, kinds, table


_REFS = ("parentId", "targetId", "firstKeptEntryId", "fromId")


def _extension(session: Session, pl: Any, note: str | None, where: bytes) -> tuple | None:
    """``(leaf id, ids named by no entry, length of the longest id)`` when entries appended to the
    file's leaf can be placed without placing the file again (``extend_places``), else ``None``.

    That holds for a well-formed v3 file read by the compact index (nothing dropped, no other
    reader's note, no placement error) whose ids are distinct, whose every parent precedes its
    child, without a ``context_edit`` (an old edit may name a new entry), and whose leaf is its
    last entry, a message on the active path (so the leaf of either reader is the last entry
    appended).  The ids its entries name that no entry has are kept: a new entry with one of them
    would be found by an old reference."""
    store = session.store
    n = len(store)
    if (not n or note is not None or session.dropped_lines or session.migrated_from_version is not None
            or pl.error is not None or getattr(store, "ix", None) is None or not store.parents_precede()
            or where[n - 1] != _ACTIVE):
        return None
    last = store[n - 1]
    leaf = get(last, "id")
    if get(last, "type") != "message" or type(leaf) is not str or pl.leaf_id != leaf:
        return None
    find = store.find
    refs = set()
    for _, e in store.extras():
        if get(e, "type") == "context_edit":
            return None
        for k in _REFS:
            v = get(e, k)
            if type(v) is str and v and find(v) is None:
                refs.add(v)
    for v in store.ix.other_parents.values():  # type: ignore[attr-defined]  # (a compact store: checked above)
        if type(v) is str and v and find(v) is None:
            refs.add(v)
    longest = max((len(i) for i in store.string_ids() if type(i) is str), default=0)
    return leaf, sorted(refs), longest


def turn(v: Any) -> tuple[str, Any, str] | None:
    """``(id, parentId, role)`` of a line's value that is a message entry both readers keep as it
    is (a string id without a newline, a string or null parent), else ``None``: what
    ``extend_places`` needs of an appended line."""
    if type(v) is not dict or v.get("type") != "message":
        return None
    eid, ts, msg, pid = v.get("id"), v.get("timestamp"), v.get("message"), v.get("parentId", 0)
    if (type(eid) is str and eid != "" and "\n" not in eid and type(ts) is str and ts != ""
            and type(msg) is dict and type(msg.get("role")) is str and (pid is None or type(pid) is str)):
        return eid, pid, msg["role"]
    return None


def extend_places(p: Places, appended: list[tuple[int, int, tuple]]) -> Places | None:
    """``p`` with the entries of appended lines placed (``(offset, physical line, turn(value))``
    of each line, blank lines left out), when they are plain messages each the child of the one
    before, the first the child of the leaf, with new ids: they are then the new end of the active
    path and no earlier entry moves.  ``None`` when anything else was appended (the file is placed
    anew)."""
    from array import array

    if p.ext is None:
        return None
    if not appended:
        return p
    leaf, refs, longest = p.ext
    parent = leaf
    new_ids: list[str] = []
    roles: list[str] = []
    for _off, _number, t in appended:
        if t is None or t[1] != parent:
            return None
        parent = t[0]
        new_ids.append(parent)
        roles.append(t[2])
    fresh = set(new_ids)
    if len(fresh) != len(new_ids) or not fresh.isdisjoint(refs) or _any_in(new_ids, p.ids):
        return None
    table = list(p.kind_table)
    code = {k: c for c, k in enumerate(table)}
    kinds = bytearray(p.kinds)
    for role in roles:
        c = code.get(("message", role))
        if c is None:
            if len(table) >= _KINDS:
                return None
            c = code[("message", role)] = len(table)
            table.append(("message", role))
        kinds.append(c)
    offsets = array("q", p.offsets)
    offsets.extend(a[0] for a in appended)
    lines = array("q", p.lines)
    lines.extend(a[1] for a in appended)
    return replace(p, offsets=offsets, lines=lines, where=p.where + bytes([_ACTIVE]) * len(new_ids),
                   ids=[*p.ids, *new_ids], kinds=bytes(kinds), kind_table=table,
                   id_width=_width_with(p.id_width, longest, p.ids, new_ids),
                   ext=(parent, refs, max(longest, *map(len, new_ids))))


def _any_in(new: list, ids: list) -> bool:
    """Whether one of ``new`` is among ``ids``."""
    try:
        return not set(new).isdisjoint(ids)
    except TypeError:  # (an id that is an object)
        return any(i in ids for i in new)


def _width_with(width: int, longest: int, ids: list, new_ids: list[str]) -> int:
    """``unique_prefix_width`` of ``ids`` (``width``; their longest string ``longest``
    characters) and of ``new_ids``, which are none of them: the same while no new id shares its
    first ``width`` characters with another id (then no fewer ever did)."""
    from ..ids import unique_prefix_width

    mine = [i[:width] for i in new_ids]
    if len(set(mine)) == len(mine):
        if longest <= width and max(map(len, new_ids)) <= width:
            return width  # (every id is its own prefix: distinct ids, distinct prefixes)
        if {i[:width] for i in ids if type(i) is str}.isdisjoint(mine):
            return width
    return unique_prefix_width([*(i for i in ids if type(i) is str), *new_ids])


# --- a set of files ---------------------------------------------------------------------------------


def parse_fields(text: str | None) -> list[str] | None:
    """``--in``'s value (comma separated field names; ``None``: every field).  Raises
    ``PisessError("usage")`` when it names none."""
    if text is None:
        return None
    wanted = [f.strip().lower() for f in text.split(",") if f.strip()]
    if not wanted:
        raise PisessError("usage", f"--in needs at least one of {', '.join(FIELDS)}")
    return wanted


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
    deferred: int = 0  # bytes the search index lacked, left to be indexed apart (searchindex.search_files)

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


def search_files(files: list, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                 tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                 pi_version: str = versions.CURRENT) -> SearchReport:
    """``search_file`` over ``files``; a file that cannot be read or is not a session is set aside
    (``skipped``, ``unreadable``), never the end of the search.  ``on_hits(total)`` is called after
    each file with a hit (a progress bar's status).  This is the scan; ``searchindex.search_files``
    answers the same through the search index where it can."""
    return report_of(files, lambda path: search_file(path, m, reader=reader, active_only=active_only, tick=tick,
                                                     pi_version=pi_version), m, active_only, pi_version, on_hits)


def report_of(files: list, one: Callable[[str], FileResult | None], m: Matcher, active_only: bool, pi_version: str,
              on_hits: Callable[[int], None] | None = None, via: str = "scan", among: list | None = None) -> SearchReport:
    """``one(path)`` over ``files`` as a report: a file that cannot be read or is not a session
    (``one`` raised) set aside, the results newest session first.  ``among``: the files (of
    ``files``, in their order) ``one`` is asked about; the others have no hit."""
    from ..listing.sessionset import created_key

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


__all__ = ["FIELDS", "Matcher", "make_matcher", "entry_texts", "value_matches", "search_file", "FileResult", "Hit",
           "Match", "parse_fields", "search_files", "report_of", "SearchReport", "Places", "places_of", "placed_by",
           "extend_places", "turn"]
