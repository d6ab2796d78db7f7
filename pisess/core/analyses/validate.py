"""Every problem in a session file, not just the first one pi trips over.

``validate_file`` answers two questions: what each of pi's readers does with the file (the ``pi``
block: does the SDK open it, what does the ``pi`` command drop), and what is wrong with it
(``findings``: each with a severity, a stable code, the physical line and byte offset).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..model import kinds
from ..model.paths import ancestors, cycle_positions
from ..reading.jsonl import NOT_JSON, RawFile, RawLine, parse_json, scan_bytes, scan_file
from ..reading.lines import glued_entries
from ..reading.migrate import raw_version
from ..reading.sdk_v4 import SDK_V4, is_v4_line
from ..reading.session import (
    Reader,
    check_harness_entry,
    check_harness_header,
    cli_kept_lines,
    harness_first_error,
    open_cli,
    open_harness,
    written_by_sdk,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..reading.compact import CompactIndex
    from ..reading.session import Session
    from ..versions import PiVersion

def known_types(pi_version: str) -> set:
    """The entry types pi ``pi_version`` writes: the kind table's (C.9, C.11: ``usage`` and
    ``context_edit`` from pi 0.86 and 0.87)."""
    return kinds.known_types(pi_version)
SEVERITIES = ("error", "warning", "info")
LIVE_SECONDS = 10.0  # pi appends as it goes: a file this fresh is being written, not crashed


@dataclass(frozen=True)
class Finding:
    severity: str
    code: str
    message: str
    line: int | None = None
    offset: int | None = None
    entry_id: str | None = None
    sessions: tuple = ()  # several_sessions: (line, id) where each session of the file starts

    def to_json(self) -> dict:
        out: dict = {"severity": self.severity, "code": self.code, "message": self.message, "line": self.line,
               "offset": self.offset, "entryId": self.entry_id}
        if self.sessions:
            out["sessions"] = [{"line": line, "id": sid} for line, sid in self.sessions]
        return out


Add = Callable[[Finding], None]  # where a check puts what it finds


@dataclass(frozen=True)
class FileReport:
    path: str
    pi: dict
    findings: list = field(default_factory=list)
    reader: Reader = "cli"

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def ok(self, strict: bool = False) -> bool:
        return not any(f.severity == "error" or (strict and f.severity == "warning") for f in self.findings)

    def to_json(self, strict: bool = False) -> dict:
        return {"path": self.path, "ok": self.ok(strict), "reader": self.reader, "pi": self.pi,
                "findings": [f.to_json() for f in self.findings]}


def _id_str(v: Any) -> str | None:
    return v if isinstance(v, str) else (None if v is None or v is UNDEF else js.to_string(v))


def validate_file(path: str, *, mtime: float | None = None, now: float | None = None,
                  pi_version: str = versions.CURRENT) -> FileReport:
    """Read ``path`` (streamed) and report what pi does with it and everything wrong in it, the
    pi command's answer and the findings following pi ``pi_version``'s rules.

    A file every line of which both readers take as it is (the usual case) is checked on a
    compact index: memory grows with the entries that are not plain messages, not with the
    file.  Any other file is checked line by line (read a second time when the index gave up)."""
    from ..reading import cache

    ix = cache.scan(path)  # scan_compact, from the cached prefix where the file checks out
    if ix is not None and not ix.harness_error and ix.cli_plain:
        report = validate_index(path, ix, versions.parse(pi_version))
        if report is not None:
            return report
    return validate_raw(scan_file(path), mtime=mtime, now=now, pi_version=pi_version)


def validate_bytes(data: bytes, path: str, *, mtime: float | None = None, now: float | None = None,
                   pi_version: str = versions.CURRENT) -> FileReport:
    return validate_raw(scan_bytes(data, path), mtime=mtime, now=now, data=data, pi_version=pi_version)


def validate_raw(raw: RawFile, *, mtime: float | None = None, now: float | None = None,
                 data: bytes | None = None, pi_version: str = versions.CURRENT) -> FileReport:
    version = versions.parse(pi_version)
    harness_session, cli, pi = _reader_answers(raw, version)
    first = next((ln for ln in raw.lines if not ln.blank), None)
    if first is not None and is_v4_line(raw, first):  # C.28: named, its records not reported one by one
        return _report(raw.path, pi, [Finding("error", "harness_v4", f"harness v4 session (unsupported): {SDK_V4}",
                                              first.number, first.offset)], raw)

    def text_at(offset: int, length: int) -> bytes:
        return data[offset: offset + length] if data is not None else raw.read_at(offset, length)

    findings: list[Finding] = []
    add = findings.append
    live = mtime is not None and now is not None and now - mtime < LIVE_SECONDS
    _file_findings(raw, text_at, add)
    _line_findings(raw, text_at, cli, version, live, add)
    if cli is not None and cli.header is not None:
        _header_findings(raw, cli, cli.header, add)
        _session_findings(raw, harness_session, cli, add)
    return _report(raw.path, pi, findings, raw)


def _reader_answers(raw: RawFile, version: PiVersion) -> tuple[Session | None, Session | None, dict]:
    """What pi's two readers do: the SDK's session and the pi command's (``None`` where one
    refuses the file), and the report's ``pi`` block."""
    harness_session = None
    try:
        harness_session = open_harness(raw)
        harness_err = None if harness_session.migrated_from_version is None else harness_first_error(raw)
    except PisessError as e:
        harness_err = e  # pi's own error, or where pi throws a JavaScript error (labels that are not strings)
    pi_harness = _harness_answer(harness_err)
    pi_cli: dict
    cli = None
    try:
        cli = replace(open_cli(raw), pi_version=version)
        pi_cli = _cli_answer(cli)
    except PisessError as e:
        _, dropped = cli_kept_lines(raw)
        pi_cli = {"opens": False, "piVersion": version, "code": e.code, "reason": e.message,
                  "migratedFromVersion": None, "droppedLines": dropped}
    return harness_session, cli, {"harness": pi_harness, "cli": pi_cli}


def _file_findings(raw: RawFile, text_at: Callable[[int, int], bytes], add: Add) -> None:
    """What is wrong with the file as a whole: a byte order mark, no bytes, no non-blank line."""
    if raw.size >= 3 and text_at(0, 3) == b"\xef\xbb\xbf":
        add(Finding("error", "bom", "file starts with a UTF-8 byte order mark: pi's SDK refuses the header and "
                    "the pi command cannot read it either", 1, 0))
    if raw.size == 0:
        add(Finding("error", "empty_file", "empty file: pi's SDK refuses it (missing session header); "
                    "the pi command would write a fresh header into it", None, 0))
    if raw.size and not any(not ln.blank for ln in raw.lines):
        add(Finding("error", "missing_header", "no non-blank line: there is no session header", 1, 0))


def _line_findings(raw: RawFile, text_at: Callable[[int, int], bytes], cli: Session | None, version: PiVersion,
                   live: bool, add: Add) -> None:
    """Each non-blank line as pi's readers take it (``n`` counts non-blank lines, as pi's SDK does),
    then an unterminated last line."""
    known = known_types(version)
    nonblank = [ln for ln in raw.lines if not ln.blank]
    last = raw.lines[-1] if raw.lines else None
    header_line = nonblank[0] if nonblank else None
    legacy = cli is not None and cli.migrated_from_version is not None  # entries need no ids before migration
    starts = _session_starts(nonblank, header_line)
    if len(starts) > 1:
        add(_several_sessions(starts, cli))
    for n, ln in enumerate(nonblank, 1):
        if ln.value is NOT_JSON:
            _bad_json(text_at(ln.offset, ln.length), raw, ln, n, last, live, add, version)
        elif not js.truthy(ln.value):
            add(Finding("error", "falsy_line", f"line holds {_short(ln.value)}: pi's SDK refuses the file; "
                        "the pi command silently drops this line", ln.number, ln.offset))
        elif ln is header_line:
            _header_line_findings(ln, nonblank, add)
        else:
            _entry_line_findings(ln, n, nonblank, header_line, legacy, known, add)
    if last is not None and not last.blank and last.value is not NOT_JSON and not raw.ends_with_newline \
            and cli is not None and cli.header is not None:
        add(_unterminated(last, version))


def _header_line_findings(ln: RawLine, nonblank: list[RawLine], add: Add) -> None:
    """The first non-blank line where it is no session header pi's SDK accepts."""
    reason = check_harness_header(ln.value)
    later = _later_header(nonblank) if reason else None
    if later is not None:
        what = _short(ln.value.get("type")) if isinstance(ln.value, dict) else _short(ln.value)
        add(Finding("error", "header_not_first", f"line {ln.number} is a {what} record and the session "
                    f"header comes after it, on line {later.number} (another tool's layout, e.g. "
                    "oh-my-pi's title line): neither of pi's readers reads a session from this file",
                    ln.number, ln.offset))
    elif reason and not (reason == "unsupported session version" and isinstance(ln.value, dict)
                         and ln.value.get("type") == "session"):
        add(Finding("error", "invalid_session", f"{reason} (pi's SDK refuses the file)", ln.number, ln.offset))


def _entry_line_findings(ln: RawLine, n: int, nonblank: list[RawLine], header_line: RawLine | None, legacy: bool,
                         known: set, add: Add) -> None:
    """A later line: a second header, an entry pi's SDK refuses, an unknown type."""
    reason = check_harness_entry(ln.value)
    v = ln.value
    if isinstance(v, dict) and v.get("type") == "session" and ln is _later_header(nonblank) \
            and check_harness_header(header_line.value if header_line else None):
        pass  # the header behind a foreign first line: said once, on that line
    elif isinstance(v, dict) and v.get("type") == "session" and not js.strict_eq(v.get("id"), get(header_line.value, "id")
                                                                              if header_line else UNDEF):
        pass  # another session's start: ``several_sessions`` says it once for the file
    elif isinstance(v, dict) and v.get("type") == "session":
        add(Finding("error", "duplicate_header", "a second session header: pi's SDK refuses the file "
                    f"(line {n} has invalid parentId); the pi command ignores it", ln.number, ln.offset,
                    _id_str(v.get("id"))))
    elif reason and not legacy:
        add(Finding("error", "invalid_entry", f"line {n} {reason} (pi's SDK refuses the file)",
                    ln.number, ln.offset, _id_str(get(v, "id")) if isinstance(v, dict) else None))
    if isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] not in known \
            and v["type"] != "session":
        add(_unknown_type(v["type"], ln.number, ln.offset, v.get("id")))


def _session_starts(nonblank: list[RawLine], header_line: RawLine | None) -> list[tuple[int, Any]]:
    """(line, id) of the file's session header and of each later header with another id: where
    each session of the file starts (pi's ``/new`` before pi PR #649 appended the new session to
    the file it had open)."""
    first = header_line.value if header_line is not None else None
    if not (isinstance(first, dict) and first.get("type") == "session"):
        return []
    starts = [(header_line.number, first.get("id"))] if header_line is not None else []
    for ln in nonblank:
        v = ln.value
        if ln is not header_line and isinstance(v, dict) and v.get("type") == "session" \
                and not js.strict_eq(v.get("id"), first.get("id")):
            starts.append((ln.number, v.get("id")))
    return starts


def _several_sessions(starts: list[tuple[int, Any]], cli: Session | None) -> Finding:
    n = len(starts)
    lines = ", ".join(str(line) for line, _ in starts[:-1]) + f" and {starts[-1][0]}"
    from ..ids import unique_prefix_width

    w = unique_prefix_width([sid for _, sid in starts if isinstance(sid, str)])
    ids = ", ".join(js.to_string(sid)[:w] for _, sid in starts[:6]) + (", \u2026" if n > 6 else "")
    leaf = ""
    if cli is not None and js.truthy(cli.leaf_id):
        last = next((i for i, (line, _) in enumerate(starts) if line > (cli.line_of(cli.lookup(cli.leaf_id)) or 0)), n)
        leaf = f" (its leaf, where pi goes on, is in session {last} of {n})"
    return Finding("error", "several_sessions",
                   f"the file holds {n} sessions, starting at lines {lines} (ids {ids}): pi's /new before pi PR "
                   "#649 (January 2026) appended each new session to the file it had open; the pi command ignores "
                   f"the later headers and reads them as one tree with a root for each{leaf}, which /resume lists once, under "
                   "the first header's id, with every session's messages; pi's SDK refuses the file",
                   starts[1][0], None, _id_str(starts[1][1]), tuple(starts))


def _header_findings(raw: RawFile, cli: Session, header: dict, add: Add) -> None:
    """A legacy or unsupported version in the header the pi command read."""
    version = raw_version(header) if cli.migrated_from_version is None else cli.migrated_from_version
    hdr_line = next((ln for ln in raw.lines if ln.value is not NOT_JSON and not ln.blank
                     and js.truthy(ln.value)), None)
    if cli.migrated_from_version is not None:
        add(Finding("warning", "legacy_version", f"version {js.to_string(version)} file: the pi command migrates it "
                    "on open and rewrites the file; pi's SDK refuses it", hdr_line.number if hdr_line else 1,
                    hdr_line.offset if hdr_line else 0))
    elif not (isinstance(version, (int, float)) and not isinstance(version, bool) and version == 3):
        add(Finding("error", "unsupported_version", f"version {js.to_string(version)}: pi's SDK refuses it; the "
                    "pi command reads it as version 3", hdr_line.number if hdr_line else 1,
                    hdr_line.offset if hdr_line else 0))


def _session_findings(raw: RawFile, harness_session: Session | None, cli: Session, add: Add) -> None:
    """The tree, the writers, missing ids, pi 1.x's records and the context, on the session the pi
    command read."""
    _tree_findings(cli, add)
    _writer_findings(cli, add)
    if cli.migrated_from_version is None:
        _without_ids(sum(1 for e in cli.entries if not isinstance(get(e, "id"), str)), add)
    _pi16_findings(cli, range(len(cli.entries)), add)
    walked = _walk_once(cli)
    not_made = _not_made(cli, walked=walked)
    _tool_call_findings(cli, add, not_made=not_made)
    _pairing_findings(cli, add, not_made, walked)
    _context_findings(raw, {"harness": harness_session, "cli": cli}, add)


def _cli_answer(cli: Session) -> dict:
    """What the pi command of the session's version does on open."""
    return {"opens": True, "piVersion": cli.pi_version, "migratedFromVersion": cli.migrated_from_version,
            "droppedLines": cli.dropped_lines, "emptyFileInitialized": cli.empty_file_initialized,
            "finalNewlineRepaired": cli.final_newline_repaired()}


def _unterminated(last: RawLine, version: str) -> Finding:
    if versions.since(version, versions.REPAIRS_FINAL_NEWLINE):
        then = f"{versions.short(version)} appends the newline when it opens the file"
    else:
        then = f"{versions.short(version)} would glue its next entry onto this line and lose both"
    return Finding("warning", "unterminated_line", f"the last line is complete but has no newline: {then}",
                   last.number, last.offset)


EDITABLE_KINDS = ("user", "assistant", "toolResult")


def _pi16_findings(cli: Session, positions: Iterable[int], add: Add) -> None:
    """C.29: context edits, compaction checkpoints, section names and usage entries pi 1.6 would
    trip over (nothing with pi 0.82's rules, which ignore them)."""
    if not versions.since(cli.pi_version, versions.SYSTEM_MESSAGES):
        return
    edits = versions.since(cli.pi_version, versions.CONTEXT_EDITS)
    lines = cli.entry_lines
    types: dict = {}
    for pos in positions:
        light = cli.entries[pos]
        t = get(light, "type")
        if t in ("context_edit", "compaction", "usage") or t == "message" and _role(light) == "system":
            types[pos] = t
    # complete in the store, as later checks find them (one read of the file for all of them)
    wholes = cli.materialize([cli.entries[pos] for pos in types])
    for (pos, t), e in zip(types.items(), wholes):
        is_system = t == "message"
        if not isinstance(e, dict):
            continue
        eid, line = _id_str(e.get("id")), lines[pos]
        if t == "context_edit" and edits:
            _edit_findings(cli, e, eid, line, add)
        elif t == "compaction" and "systemMessage" in e and js.truthy(e["systemMessage"]):
            sm = e["systemMessage"]
            if not isinstance(sm, dict) or sm.get("role") != "system" or not isinstance(sm.get("content"), (str, list)):
                add(Finding("error", "bad_checkpoint_system", f"compaction {eid} carries a systemMessage that is not a "
                            "system message with string or list content: pi's prompt replay throws on it", line, None, eid))
            else:
                _section_findings(sm, eid, line, add)
        elif t == "usage" and not isinstance(e.get("usage"), dict):
            add(Finding("warning", "usage_without_usage", f"usage entry {eid} has no usage object: pi's /session "
                        "totals throw on it", line, None, eid))
        elif is_system:
            if get(e.get("message"), "content") in (None, UNDEF):
                add(Finding("info", "system_without_content", f"system message {eid} has no content: pi 1.6 reads "
                            "it as an empty prompt text (its sections and tools still count)", line, None, eid))
            _section_findings(e.get("message"), eid, line, add)


def _role(e: Any) -> Any:
    m = get(e, "message") if isinstance(e, dict) else None
    return m.get("role") if isinstance(m, dict) else None


def _section_findings(sm: Any, eid: str | None, line: int, add: Add) -> None:
    from ..model.system import is_array_index

    sections = sm.get("sections") if isinstance(sm, dict) else None
    names = [k for k in sections if is_array_index(k)] if isinstance(sections, dict) else []
    if names:
        add(Finding("warning", "index_section_name", f"system message {eid} names sections {', '.join(names)}: "
                    "JavaScript moves integer-like names to the front, so the prompt's order is not the file's",
                    line, None, eid))


def _edit_findings(cli: Session, e: dict, eid: str | None, line: int, add: Add) -> None:
    if "replacement" not in e:
        add(Finding("error", "edit_without_replacement", f"context_edit {eid} has no replacement: pi throws when it "
                    "applies the edit", line, None, eid))
    else:
        r = e["replacement"]
        if r is not None and not (isinstance(r, dict) and isinstance(r.get("content"), (str, list))):
            add(Finding("warning", "edit_bad_replacement", f"context_edit {eid}'s replacement is neither null nor "
                        "an object with string or list content: the target loses its content", line, None, eid))
    tid = e.get("targetId", UNDEF)
    target = cli.lookup(tid)
    what = js.to_string(tid)
    if target is None:
        add(Finding("warning", "edit_target_missing", f"context_edit {eid} targets {what}, which is not in the file: "
                    "it changes nothing", line, None, eid))
        return
    if not _is_ancestor(cli, e, tid):
        add(Finding("warning", "edit_target_off_path", f"context_edit {eid} targets {what}, which is not among its "
                    "ancestors: it changes nothing on this branch", line, None, eid))
    target = cli.full(target)
    kind = get(target, "type")
    role = _role(target) if kind == "message" else None
    if kind != "custom_message" and role not in EDITABLE_KINDS:
        shown = f"a {role} message" if kind == "message" else f"a {js.to_string(kind)} entry"
        add(Finding("info", "edit_target_not_editable", f"context_edit {eid} targets {what}, {shown}: pi refuses to "
                    "write such an edit; " + ("it hides the target" if e.get("replacement", UNDEF) is None
                                              else "the content stays as it is"), line, None, eid))


def _role_at(store: Any, pos: int) -> str | None:
    """The role of the message at ``pos``; ``""`` for an entry that is no message."""
    role = store.plain_role(pos)
    if role is not None:
        return role
    e = store[pos]
    if not isinstance(e, dict) or e.get("type") != "message":
        return ""
    role = _role(e)
    return role if isinstance(role, str) else None


def _turn_of(store: Any, pos: int, known: dict) -> int | None:
    """The position of the assistant message a tool result at ``pos`` answers: up its parents
    through other tool results and entries that are no messages (``known``: the answers so far)."""
    p = store.parent(pos)
    for _ in range(len(store)):  # (a parentId cycle ends the walk: reported as ``cycle``)
        if p is None:
            return None
        if p in known:
            return known[p]
        role = _role_at(store, p)
        if role == "assistant":
            return p
        if role not in ("toolResult", ""):
            return None
        p = store.parent(p)
    return None


def unanswered_tool_calls(session: Session, not_made: list[int] = ()) -> Iterator[tuple[int, list]]:  # type: ignore[assignment]
    """``(position, [(call id, tool name)])`` of each assistant message with tool calls that no
    tool result below it answers (up to the next message of another role).  Messages pi's
    provider layer drops (``stopReason`` error or aborted) are left out: their calls never ran.
    A turn's results are counted on the index; only an assistant with more calls than its turn
    has results (as the read counted them, ``store.tool_call_counts``, else as often as its line
    mentions ``"toolCall"``) is parsed, and those results then (their ids), or one with a result
    whose id is none of its calls (``not_made``: ``unpaired.results_not_made``)."""
    store = session.store
    known: dict = {}
    answers: dict = {}
    for q in store.role_positions("toolResult"):
        turn = known[q] = _turn_of(store, q, known)
        if turn is not None:
            answers.setdefault(turn, []).append(q)
    unsure = {known.get(q) for q in not_made}

    def worth(pos: int, line: bytes) -> bool:
        return pos in unsure or line.count(b'"toolCall"') > len(answers.get(pos, ()))

    assistants = store.role_positions("assistant")
    counted = store.tool_call_counts()
    if counted:  # (the read counted their calls: only an assistant with more than its results is read back)
        assistants = [p for p in assistants if p in unsure or counted.get(p, 1 << 30) > len(answers.get(p, ()))]
    for pos, e in session.complete_at(assistants, worth):
        m = e.get("message") if isinstance(e, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(m, dict) or m.get("stopReason") in ("error", "aborted") or not isinstance(content, list):
            continue
        calls = [(b.get("id"), b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
        results = answers.get(pos, [])
        if len(results) >= len(calls) and pos not in unsure:
            continue
        ids = {js.key(r["message"].get("toolCallId")) for _, r in session.complete_at(results)
               if isinstance(r, dict) and isinstance(r.get("message"), dict)}
        missing = [c for c in calls if js.key(c[0]) not in ids]
        if missing:
            yield pos, missing


def _walk_once(cli: Session) -> Callable[[], tuple]:
    """``unpaired.walk(cli)``, made on the first call and shared by the findings that need it."""
    from functools import cache

    from .unpaired import walk

    return cache(lambda: walk(cli))


def _not_made(cli: Session, path: str | None = None, walked: Callable[[], tuple] | None = None) -> list[int]:
    """``unpaired.results_not_made``: the tool results whose assistant made no call of their id
    (read once for both findings that need it; the index cache keeps them for the file)."""
    from ..reading import cache
    from .unpaired import results_not_made

    if path is None:
        return results_not_made(cli, walked() if walked else None)
    return cache.summary(path, f"notmade1:{cli.pi_version}", lambda: results_not_made(cli, walked() if walked else None))


def _tool_call_findings(cli: Session, add: Add, path: str | None = None, not_made: list[int] = ()) -> None:  # type: ignore[assignment]
    """pi #9986: before pi 1.6, Esc during a batch of tool calls left the calls that had not
    started without a result; pi 1.6 writes an "Operation aborted" result for each.  The provider
    layer sends the model a "No result provided" error result in place of a missing one (spec §7),
    so a call without result is a note, whichever pi wrote the file.  ``path``: the file the
    session was read from, whose answer the index cache keeps (it reads the assistant lines)."""
    from ..reading import cache

    def compute() -> list:
        return [[pos, ", ".join(f"{js.to_string(c)} ({js.to_string(n)})" for c, n in missing), len(missing)]
                for pos, missing in unanswered_tool_calls(cli, not_made)]

    store = cli.store
    found = compute() if path is None else cache.summary(path, f"toolcalls2:{cli.pi_version}", compute)
    for pos, calls, n in found:
        e = store[pos]
        eid = _id_str(e.get("id")) if isinstance(e, dict) else None
        if versions.since(cli.pi_version, versions.RECORDS_ABORTED_CALLS):
            why = ("pi before 1.6 did not record tool calls that never started (Esc during a batch, pi #9986; pi 1.6 "
                   "records \"Operation aborted\" for each), or pi stopped while the tools ran")
        else:
            why = (f"{versions.short(cli.pi_version)} does not record tool calls that never started (Esc during a "
                   "batch, pi #9986; pi 1.6 records \"Operation aborted\" for each)")
        last = " (the file's last entry: pi may still be running them)" if pos == len(store) - 1 else ""
        add(Finding("info", "tool_call_without_result",
                    f"assistant {eid}'s tool call{'s' if n > 1 else ''} {calls} "
                    f"{'have' if n > 1 else 'has'} no result{last}: {why}; pi's provider layer sends the "
                    "model a \"No result provided\" error result in its place", store.line(pos), None, eid))


def _pairing_findings(cli: Session, add: Add, not_made: list[int] | None = None,
                      walked: Callable[[], tuple] | None = None) -> None:
    """``tool_result_without_call``: a tool result the provider gets without its call refuses
    every request (pi #4570).  An error where it is in the context at the leaf (pi cannot go on
    from there), a warning where it is on another path only (going on there would fail); each
    result once, whatever left it without its call (``not_made``: ``_not_made``)."""
    from .unpaired import unpaired_results

    found = unpaired_results(cli, not_made, walked() if walked else None)
    at_leaf = {u.position for u in found if u.at_leaf}
    store = cli.store
    for u in found:
        eid, w = _id_str(u.entry_id), cli.id_width
        call = f"{js.to_string(u.tool_call_id)} ({js.to_string(u.tool_name)})"
        if u.at_leaf:
            above = store.parent(u.position)
            while above is not None and above in at_leaf:  # fork before the first of a run of them
                above = store.parent(above)
            parent = _id_str(get(store[above], "id")) if above is not None else None
            fork = (f"fork at {parent[:w]}, the entry before it (pisess fork FILE {parent[:w]} --position at)"
                    if parent else "start a new session")
            add(Finding("error", "tool_result_without_call",
                        f"tool result {eid} answers call {call}, which is not in the context at the leaf: {u.why}. "
                        "pi sends the result to the provider without the call it answers, and the provider rejects "
                        "that request and every later one: the session cannot go on from its leaf. To go on, "
                        f"{fork}, or hide the result with a context edit of {eid} (replacement null, pi 1.x) "
                        "(pi #4570)", store.line(u.position), None, eid))
        else:
            n = len(u.tips)
            tip = _id_str(u.tips[0]) or "?"
            add(Finding("warning", "tool_result_without_call",
                        f"tool result {eid} answers call {call}, which is not in the context on the path to "
                        f"{tip[:w]}" + (f" (and {n - 1} other path{'s' if n > 2 else ''})" if n > 1 else "")
                        + f": {u.why}. Going on from there, pi would send the result without its call and the "
                        "provider would reject every request; the leaf's context does not hold it",
                        store.line(u.position), None, eid))


def validate_index(path: str, ix: CompactIndex, version: PiVersion) -> FileReport | None:
    """``validate_raw``'s report for a clean file, from its ``CompactIndex``: every line is JSON,
    truthy and accepted by the harness, the header a valid v3 one, so the line findings left are
    unknown types, and the tree findings are computed on positions (``None``: the line scan decides)."""
    from ..reading.session import index_raw, index_view

    raw = index_raw(path, ix)
    findings: list[Finding] = []
    add = findings.append
    harness_session: Session | None = None
    harness_err: PisessError | None = None
    try:
        harness_session = index_view(ix, raw, "harness")
    except PisessError as e:
        harness_err = e
    try:
        cli = replace(index_view(ix, raw, "cli"), pi_version=version)
    except PisessError:
        return None
    pi = {"harness": _harness_answer(harness_err), "cli": _cli_answer(cli)}
    known = known_types(version)
    # plain messages are known, accepted entries: only the other lines can hold line findings
    store = cli.store
    extras = []
    for pos, entry in store.extras():
        extras.append(pos)
        v = entry.get("type") if isinstance(entry, dict) else None
        if isinstance(v, str) and v not in known:
            add(_unknown_type(v, store.line(pos), store.span(pos)[0], entry.get("id")))
    if not raw.ends_with_newline and len(store):
        last = len(store) - 1
        add(_unterminated(RawLine(store.line(last), store.span(last)[0], 0, False, None), version))
    _tree_findings(cli, add)
    _writer_findings(cli, add)
    _without_ids(sum(1 for _, e in store.extras() if not isinstance(get(e, "id"), str)), add)
    _pi16_findings(cli, _system_positions(cli, extras), add)
    walked = _walk_once(cli)
    not_made = _not_made(cli, path, walked)
    _tool_call_findings(cli, add, path, not_made)
    _pairing_findings(cli, add, not_made, walked)
    _context_findings(raw, {"harness": harness_session, "cli": cli}, add)
    return _report(path, pi, findings, raw)


def _system_positions(cli: Session, extras: list) -> list:
    """The positions C.29's checks look at: the store's extras and its system messages, in file order."""
    return sorted({*extras, *cli.store.role_positions("system")})


def _harness_answer(err: PisessError | None) -> dict:
    out: dict = {"opens": err is None}
    if err:
        out.update(code=err.code, reason=err.reason, line=err.line, physicalLine=err.physical_line)
    return out


def _report(path: str, pi: dict, findings: list, raw: RawFile) -> FileReport:
    findings.sort(key=lambda f: (f.line if f.line is not None else 0, SEVERITIES.index(f.severity)))
    return FileReport(path, pi, findings, "harness" if written_by_sdk(raw) else "cli")


def _unknown_type(t: str, line: int, offset: int, eid: Any) -> Finding:
    return Finding("info", "unknown_type", f"unknown entry type {t!r}: both readers keep it in the tree; it adds "
                   "nothing to the context", line, offset, _id_str(eid))


def _without_ids(n: int, add: Add) -> None:
    if n:
        add(Finding("error", "entries_without_ids", f"{n} entries have no id under a version-3 header (a legacy "
                    "file copied without migration): they are not part of any tree", None, None))


def _duplicate_id(eid: str, first: int, line: int) -> Finding:
    return Finding("warning", "duplicate_id", f"id {eid} was already used on line {first}: lookups take this later "
                   "entry", line, None, eid)


def _short(v: Any) -> str:
    s = js.to_string(v) if not isinstance(v, str) else repr(v)
    return s if len(s) < 40 else s[:37] + "..."


def _bad_json(text: bytes, raw: RawFile, ln: RawLine, n: int, last: RawLine | None, live: bool, add: Add,
              version: str = versions.CURRENT) -> None:
    if ln.offset == 0 and text.startswith(b"\xef\xbb\xbf") and parse_json(text[3:]) is not NOT_JSON:
        return  # a whole line behind a byte order mark: the ``bom`` finding says it
    is_tail = ln is last and not raw.ends_with_newline
    salvage = _salvage(text)
    if is_tail and live:
        add(Finding("warning", "in_progress_tail", "last line is incomplete and the file was modified moments ago: "
                    "pi is probably still writing it; the complete lines are read", ln.number, ln.offset))
        return
    if is_tail:
        then = ("appends a newline on open, so its next entry starts a line of its own"
                if versions.since(version, versions.REPAIRS_FINAL_NEWLINE) else "will glue its next entry onto it")
        add(Finding("error", "truncated_line", f"last line is cut off mid-JSON ({ln.length} bytes, no newline): a "
                    f"crash while appending; pi's SDK refuses the file, {versions.short(version)} drops the line and "
                    f"{then}", ln.number, ln.offset))
        return
    whole = glued_entries(text)
    if whole is not None:
        kinds = ", ".join(_kind_word(v) for _, v in whole)
        add(Finding("error", "glued_line", f"line {n} holds {len(whole)} complete entries with no newline between them "
                    f"({kinds}): pi's SDK refuses the file, the pi command drops the whole line (all of them)",
                    ln.number, ln.offset, _id_str(get(whole[0][1], "id"))))
        return
    if salvage is not None:
        cut, v = salvage
        eid = _id_str(v.get("id")) if isinstance(v, dict) else None
        add(Finding("error", "glued_line", f"line {n} is a cut-off fragment with a complete {_kind_word(v)} entry "
                    f"{eid or '(no id)'} glued on at byte {cut}: a crash mid-write followed by an append; pi's SDK "
                    "refuses the file, the pi command loses both", ln.number, ln.offset + cut, eid))
        return
    add(Finding("error", "invalid_json", f"line {n} is not valid JSON: pi's SDK refuses the file; the pi command "
                "silently drops this line", ln.number, ln.offset))


def _later_header(nonblank: list) -> RawLine | None:
    """The first session header after a first line that is an object of another type."""
    first = nonblank[0].value if nonblank else None
    if not isinstance(first, dict) or first.get("type") == "session":
        return None
    return next((ln for ln in nonblank[1:] if isinstance(ln.value, dict) and ln.value.get("type") == "session"), None)


def _kind_word(v: Any) -> str:
    t = get(v, "type") if isinstance(v, dict) else None
    if t == "message":
        m = v.get("message")
        role = m.get("role") if isinstance(m, dict) else None
        return role if isinstance(role, str) else "message"
    return t if isinstance(t, str) else "value"


def _salvage(text: bytes) -> tuple[int, Any] | None:
    """A complete JSON object after a fragment: ``{"type":"mess{"type":"message",...}``."""
    start = 1
    while True:
        i = text.find(b'{"', start)
        if i < 0:
            return None
        v = parse_json(text[i:])
        if isinstance(v, dict):
            return i, v
        start = i + 1


def _tree_findings(cli: Session, add: Add) -> None:
    """Duplicate ids, then each suspect entry's parent, targets and kept entry, then one entry per
    cycle: found on the store's ids and parent positions (a compact store builds entries only
    for the lines that can hold a finding)."""
    store = cli.store
    ids, lines = store.string_ids(), store.lines
    if store.distinct_ids() != len(ids) - ids.count(None):
        first_line: dict = {}
        for pos, eid in enumerate(ids):
            if eid is None:
                continue
            if eid in first_line:
                add(_duplicate_id(eid, first_line[eid], lines[pos]))
            else:
                first_line[eid] = lines[pos]
    _entry_findings(cli, [(p, lines[p]) for p in store.suspects()], add)
    for p in cycle_positions(store):
        add(_cycle_finding(store[p], lines[p]))


def _writer_findings(cli: Session, add: Add) -> None:
    """``concurrent_writers``: two processes appended to the file in turn (``writers.py`` has the
    rule and its limits)."""
    from ..model.writers import find_alternations, pi_resumes_text

    for alt in find_alternations(cli.entries, cli.entry_lines, role_of=lambda e: _role(cli.full(e)),
                                 candidates=cli.store.not_following()):
        add(Finding("warning", "concurrent_writers", f"lines {alt.start_line}-{alt.end_line}: appends alternate "
                    f"between two growing tips ({alt.switches} switches"
                    + (f", {alt.mid_turn} of them mid-turn" if alt.mid_turn else "")
                    + "): two pi processes wrote this file at once (two `pi -c` in one directory, or a session "
                    f"resumed while still open elsewhere); the conversations end at {alt.tips[0].id} (line "
                    f"{alt.tips[0].line}) and {alt.tips[1].id} (line {alt.tips[1].line}); {pi_resumes_text(alt, cli)}",
                    alt.start_line, None, alt.start_id))


def _cycle_finding(e: Any, line: int | None) -> Finding:
    eid = _id_str(get(e, "id"))
    return Finding("error", "cycle", f"entry {eid} is on a parentId cycle: pi hangs walking it", line, None, eid)


def _entry_findings(cli: Session, where: Iterable[tuple[int, int]], add: Add) -> None:
    """Parents, leaf and label targets, compactions' kept entries, of the entries at ``where``
    (``(position, line)`` pairs)."""
    entries = cli.store
    first_entry = entries[0] if len(entries) else None
    ids = None  # (the store's string ids, taken at the first kept entry looked for)
    for pos, line in where:
        e = entries[pos]
        if not isinstance(e, dict):
            continue
        eid = _id_str(e.get("id"))
        pid = e.get("parentId", UNDEF)
        if js.truthy(pid) and cli.lookup(pid) is None:
            sev = "info" if e is first_entry else "warning"
            why = ("the first entry of a forked copy (the walk stops before it)" if sev == "info"
                   else "pi's SDK fails if its walk reaches it; the pi command treats it as a root")
            if isinstance(cli.header, dict) and js.strict_eq(pid, cli.header.get("id")):
                why = ("it is the session header's id (a layout of other tools, e.g. OpenClaw's): pi does not "
                       "index the header, so the pi command treats the entry as a root and pi's SDK fails at it")
            add(Finding(sev, "dangling_parent", f"entry {eid} has parent {js.to_string(pid)}, which is not in the "
                        f"file: {why}", line, None, eid))
        t = e.get("type")
        if t == "leaf":
            tid = e.get("targetId", UNDEF)
            if tid is not None and tid is not UNDEF and cli.lookup(tid) is None:
                add(Finding("warning", "leaf_target_missing", f"leaf record {eid} points to {js.to_string(tid)}, "
                            "which is not in the file", line, None, eid))
        elif t == "label":
            tid = e.get("targetId", UNDEF)
            if cli.lookup(tid) is None:
                add(Finding("warning", "label_target_missing", f"label {eid} targets {js.to_string(tid)}, which is "
                            "not in the file", line, None, eid))
        elif t == "compaction":
            fk = e.get("firstKeptEntryId", UNDEF)
            if not js.truthy(fk) or js.strict_eq(fk, e.get("id", UNDEF)):
                continue
            if ids is None:
                ids = entries.string_ids()
            if not _is_ancestor(cli, e, fk, ids):
                add(Finding("warning", "first_kept_not_on_path", f"compaction {eid} keeps from {js.to_string(fk)}, "
                            "which is not among its ancestors: nothing before it is kept", line, None, eid))


def _is_ancestor(cli: Session, entry: Any, target_id: Any, ids: Sequence[Any] | None = None) -> bool:
    """Is an entry above ``entry`` (not ``entry`` itself) the one with id ``target_id``?  ``ids``:
    the store's ``string_ids``, where the caller has them (a string id is then compared without
    building the entries on the way: a compaction's walk up a long path made one each)."""
    store = cli.store
    pos = store.position(entry)
    if pos is None:  # not one of the session's entries: its parent is looked up
        pid = get(entry, "parentId")
        up = store.find(pid) if js.truthy(pid) else None
        above: Iterable[int] = [] if up is None else [up, *ancestors(store, up)]
    else:
        above = ancestors(store, pos)
    if ids is not None and type(target_id) is str:  # (=== a string: only that string, never an id of another type)
        return any(p != pos and ids[p] == target_id for p in above)
    return any(p != pos and js.strict_eq(get(store[p], "id"), target_id) for p in above)


def _context_findings(raw: RawFile, sessions: dict, add: Add) -> None:
    """Build the context with each reader the way pi would and report where pi fails."""
    from ..model.context import build_context

    for reader in ("harness", "cli"):
        session = sessions.get(reader)
        if session is None:
            continue  # the file does not open: already reported as line findings
        try:
            build_context(session, complete=False)
        except PisessError as e:
            if e.code == "storage":
                raise  # the file changed or vanished while it was read: an I/O condition, not a defect
            if e.code == "cycle":
                continue  # reported once, from the tree
            who = "pi's SDK" if reader == "harness" else "the pi command"
            sev = "error" if reader == "harness" and written_by_sdk(raw) or reader == "cli" and not written_by_sdk(raw) \
                else "warning"
            add(Finding(sev, f"{e.stage or 'context'}_fails", f"{who} cannot build the context ({e.code}: {e.message})",
                        e.physical_line, None))


def summary_counts(reports: list, strict: bool) -> dict:
    """The summary of a validate run (``--json``'s ``summary``; the text view's last line): the
    files checked, the findings by severity, the files pi's SDK refuses, those the pi command
    would lose data from (refuses, or drops lines of) and those with an error."""
    return {
        "fileCount": len(reports),
        "errorCount": sum(r.count("error") for r in reports) + (sum(r.count("warning") for r in reports) if strict else 0),
        "warningCount": 0 if strict else sum(r.count("warning") for r in reports),
        "infoCount": sum(r.count("info") for r in reports),
        "sdkRefusedFileCount": sum(1 for r in reports if not r.pi["harness"]["opens"]),
        "dataLossFileCount": sum(1 for r in reports if not r.pi["cli"]["opens"] or r.pi["cli"].get("droppedLines")),
        "fileWithErrorsCount": sum(1 for r in reports if not r.ok(strict)),
    }


@dataclass(frozen=True)
class ValidationRun:
    """What ``validate_paths`` read: one report per session file (in the order found) and what
    could not be read (``PisessError``, unreadable), under pi ``pi_version``'s rules."""

    reports: list
    unreadable: list
    pi_version: str
    empty: list = field(default_factory=list)  # directories named that hold no *.jsonl

    def to_json(self, strict: bool) -> dict:
        """The validate document (``pisess validate --json``, without its ``version``)."""
        return {"piVersion": self.pi_version, "files": [r.to_json(strict) for r in self.reports],
                "unreadable": [e.to_dict() for e in self.unreadable], "summary": summary_counts(self.reports, strict)}

    def ok(self, strict: bool) -> bool:
        return all(r.ok(strict) for r in self.reports)


def validate_paths(targets: Iterable[str], *, pi_version: str = versions.CURRENT,
                   now: float | None = None) -> ValidationRun:
    """Every ``*.jsonl`` named or below a named directory, validated (``validate_file``, each
    file's mtime against ``now``); what cannot be read is listed and the rest still read
    (``empty``: the directories named that hold no ``*.jsonl``)."""
    import os
    import time

    from ..listing.paths import iter_jsonl
    from ..reading.files import os_error

    now = time.time() if now is None else now
    reports, unreadable = [], []
    empty: list[str] = []
    for path, err in iter_jsonl(list(targets), empty):
        if err is None:
            try:
                reports.append(validate_file(path, mtime=os.stat(path).st_mtime, now=now, pi_version=pi_version))
                continue
            except PisessError as e:
                err = e
            except OSError as e:
                err = os_error(path, e)
        unreadable.append(err)
    return ValidationRun(reports, unreadable, versions.parse(pi_version), empty)
