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
again: their originals are, marked ``compacted``.

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

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from . import versions
from .errors import PisessError
from .js import UNDEF, get
from .jsonl import NOT_JSON, is_blank, scan_bytes
from .session import Session
from .sessionset import _value, line_blocks, open_lenient, place, read_small, scan_visit, session_name

FIELDS = ("user", "assistant", "thinking", "tool", "summary", "custom", "label", "name", "system", "edit")
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


def _text_blocks(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                yield b["text"]


def _strings(v: Any) -> Iterator[str]:
    """Every string value inside ``v`` (not keys), depth-first, without recursion."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, list):
            stack.extend(reversed(x))


def entry_texts(e: Any) -> Iterator[tuple[str, str, str, str]]:
    """``(field, kind, prefix, text)`` for each searchable string of a complete entry.  ``kind`` is
    what the hit is (``user``, ``tool call``, ``bash``...); ``prefix`` goes before the snippet."""
    if not isinstance(e, dict):
        return
    t = e.get("type")
    if t == "message":
        m = e.get("message")
        if not isinstance(m, dict):
            return
        role = m.get("role")
        content = m.get("content")
        if role == "user":
            for s in _text_blocks(content):
                yield "user", "user", "", s
        elif role == "assistant":
            for b in content if isinstance(content, list) else [content]:
                if isinstance(b, str):
                    yield "assistant", "assistant", "", b
                if not isinstance(b, dict):
                    continue
                bt = b.get("type")
                if bt == "text" and isinstance(b.get("text"), str):
                    yield "assistant", "assistant", "", b["text"]
                elif bt == "thinking" and isinstance(b.get("thinking"), str):
                    yield "thinking", "thinking", "", b["thinking"]
                elif bt == "toolCall":
                    name = b.get("name")
                    name_s = name if isinstance(name, str) else ""
                    if name_s:
                        yield "tool", "tool call", "", name_s
                    for s in _strings(b.get("arguments")):
                        yield "tool", "tool call", f"{name_s}: " if name_s else "", s
            if isinstance(m.get("errorMessage"), str):
                yield "assistant", "assistant", "error: ", m["errorMessage"]
        elif role == "toolResult":
            for s in _text_blocks(content):
                yield "tool", "tool", "", s
        elif role == "bashExecution":
            cmd = m.get("command")
            for s in [cmd] if isinstance(cmd, str) else _strings(cmd):
                yield "tool", "bash", "$ ", s
            if isinstance(m.get("output"), str):
                yield "tool", "bash", "", m["output"]
        elif role in ("custom", "hookMessage"):
            for s in _text_blocks(content):
                yield "custom", "ext msg", "", s
        elif role in ("compactionSummary", "branchSummary") and isinstance(m.get("summary"), str):
            yield "summary", "compaction" if role == "compactionSummary" else "branch sum", "", m["summary"]
        elif role == "system":
            yield from _system_texts(m)
    elif t == "compaction":
        if isinstance(e.get("summary"), str):
            yield "summary", "compaction", "", e["summary"]
        if isinstance(e.get("systemMessage"), dict):
            yield from _system_texts(e["systemMessage"])
    elif t == "context_edit":
        r = e.get("replacement")
        for s in _text_blocks(r.get("content")) if isinstance(r, dict) else ():
            yield "edit", "edit", "", s
    elif t == "branch_summary" and isinstance(e.get("summary"), str):
        yield "summary", "branch sum", "", e["summary"]
    elif t == "custom_message":
        for s in _text_blocks(e.get("content")):
            yield "custom", "ext msg", "", s
    elif t == "label" and isinstance(e.get("label"), str):
        yield "label", "label", "", e["label"]
    elif t == "session_info" and isinstance(e.get("name"), str):
        yield "name", "name", "", e["name"]


def _system_texts(m: dict) -> Iterator[tuple[str, str, str, str]]:
    """A system message's prompt text, its sections (named) and its tools' names and descriptions."""
    for s in _text_blocks(m.get("content")):
        yield "system", "system", "", s
    sections = m.get("sections")
    for name, value in sections.items() if isinstance(sections, dict) else ():
        if isinstance(value, str):
            yield "system", "system", f"[{name}] ", value
    for tool in m.get("toolsAdded") if isinstance(m.get("toolsAdded"), list) else ():
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") if isinstance(tool.get("name"), str) else ""
        if name:
            yield "system", "tool def", "", name
        if isinstance(tool.get("description"), str):
            yield "system", "tool def", f"{name}: " if name else "", tool["description"]


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
    where: str  # active | compacted | branch
    match: Match

    def to_json(self, result: FileResult) -> dict:
        m = self.match
        return {"session": result.session_id, "path": result.path, "entryId": self.entry_id,
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
    id_width: int = 8  # characters of an entry id the view shows (Session.id_width)


def _match_line(raw: Any, key: int, m: Matcher, found: dict) -> None:
    if is_blank(raw):
        return
    v = _value(raw)
    if v is NOT_JSON or not isinstance(v, dict) or v.get("type") == "session":
        return
    got = value_matches(v, 0, m)
    if got:
        found[key] = got


def _match_lines(buf: Any, end: int, base: int, starts: list[int], m: Matcher, found: dict) -> None:
    """Parse and match the lines of ``buf[:end]`` starting at ``starts``; matches are keyed by
    their line's byte offset in the file (``base`` is the offset of ``buf[0]``)."""
    find = buf.find
    for s in starts:
        e = find(b"\n", s, end)
        _match_line(bytes(buf[s:end if e < 0 else e]), base + s, m, found)


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
    for buf, end, base in line_blocks(path, tick, BLOCK):
        starts = _candidate_starts(buf, end, m)
        if starts:
            _match_lines(buf, end, base, starts, m, found)
    return found


def search_file(path: str, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                tick: Callable[[int], None] | None = None, small: int = SMALL,
                pi_version: str = versions.CURRENT) -> FileResult | None:
    """The hits in one file, or ``None`` when there is none.  Raises ``PisessError`` when the file
    cannot be read, or holds hits but is not a session either of pi's readers opens."""
    data = read_small(path, small)
    if data is not None:
        if tick:
            tick(len(data))
        found = _matches_small(data, m)
        if not found:
            return None
        raw = scan_bytes(data, path)
    elif m.needle is None:
        by_line: dict = {}

        def visit(number: int, v: Any, _raw: bytes) -> None:
            if isinstance(v, dict) and v.get("type") != "session":
                got = value_matches(v, 0, m)
                if got:
                    by_line[number] = got

        raw = scan_visit(path, visit, tick)
        if not by_line:
            return None
        found = {raw.lines[n - 1].offset: got for n, got in by_line.items()}
    else:
        found = _matches_streamed(path, m, tick)
        if not found:
            return None
        raw = None  # read light: the structure, not every value again
    session, note = open_lenient(path, reader, raw, pi_version=pi_version)
    return _placed(session, found, active_only, note)


def _entries_at(session: Session, offsets: dict) -> list[tuple[int, int]]:
    """``(position, offset)`` of the entries whose line starts at one of ``offsets``, in order
    (entry offsets ascend)."""
    from bisect import bisect_left

    at = session.store.spans()[0]
    hits = [(bisect_left(at, off), off) for off in offsets]
    return sorted((i, off) for i, off in hits if i < len(at) and at[i] == off)


def _placed(session: Session, found: dict, active_only: bool, note: str | None) -> FileResult | None:
    """Matches keyed by the byte offset of their line, placed on the entries of ``session``."""
    at = _entries_at(session, found)
    pl = place(session, branches=False, positions=[i for i, _ in at])
    hits: list[Hit] = []
    for i, offset in at:
        line = session.entry_lines[i]
        got = found[offset]
        where = pl.where[i]
        if active_only and where != "active":
            continue
        e = session.entries[i]
        eid = get(e, "id")
        msg = get(e, "message") if get(e, "type") == "message" else UNDEF
        role = get(msg, "role") if isinstance(msg, dict) else UNDEF
        for mt in got:
            mt = replace(mt, line=line)
            hits.append(Hit(None if eid is UNDEF else eid, None if get(e, "type") is UNDEF else get(e, "type"),
                            None if role is UNDEF else role, where, mt))
    if not hits:
        return None
    h = session.header if isinstance(session.header, dict) else {}
    return FileResult(session.path, h.get("id"), session_name(session), h.get("cwd"), h.get("timestamp"),
                      session.reader, hits, note, pl.error, session.id_width)


__all__ = ["FIELDS", "Matcher", "make_matcher", "entry_texts", "value_matches", "search_file", "FileResult", "Hit",
           "Match"]
