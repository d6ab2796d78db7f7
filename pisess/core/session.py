"""Opening a session file the way each of pi 0.82.1's readers does.

``harness`` is the SDK's ``JsonlSessionStorage``: every non-blank line is checked, the first bad
one fails the whole file with pi's code and message; ``leaf`` records move the leaf; labels are
trimmed.  ``cli`` is the ``pi`` command's ``SessionManager``: bad lines are dropped, v1/v2 files
are migrated (in memory here; pi rewrites them), the last entry is the leaf.  ``auto`` picks the
reader of the program that wrote the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from . import js, versions
from .errors import JSError, PisessError
from .js import UNDEF, get
from .jsonl import NOT_JSON, Light, RawFile, RawLine, scan_file
from .migrate import migrate_in_memory, needs_migration, raw_version
from .versions import PiVersion

READERS = ("harness", "cli")
SDK_ONLY_TYPES = ("leaf", "active_tools_change")
HEADER_PREFIX = "Invalid JSONL session file {path}: "


@dataclass(frozen=True)
class Session:
    """A session file as one of pi's readers sees it.  Entries stay the raw parsed values, so
    unknown fields survive and nothing is copied per entry."""

    path: str
    reader: str
    header: dict | None
    entries: list
    entry_lines: list[int]  # physical line of each entry
    by_id: dict  # js.key(id) -> entry, last occurrence wins
    leaf_id: Any  # str | None | js.UNDEF
    labels: dict  # js.key(targetId) -> (targetId, label), in JS Map order
    label_timestamps: dict  # js.key(targetId) -> timestamp of the label entry that set it
    raw: RawFile
    migrated_from_version: Any = None
    dropped_lines: list = field(default_factory=list)
    empty_file_initialized: bool = False
    notes: list = field(default_factory=list)
    pi_version: PiVersion = versions.CURRENT  # the pi command's rules (a harness read is always 0.82.1's)

    def line_of(self, entry: Any) -> int | None:
        i = self.position(entry)
        return self.entry_lines[i] if i is not None else None

    def position(self, entry: Any) -> int | None:
        """Index of ``entry`` in ``entries`` (light entries carry it; others are looked up)."""
        if type(entry) is Light:
            i = entry.index
            if 0 <= i < len(self.entries) and self.entries[i] is entry:
                return i
        replaced = self.__dict__.get("_replaced")
        if replaced and id(entry) in replaced:
            return replaced[id(entry)]
        cache = self.__dict__.get("_pos_cache")
        if cache is None:
            cache = {id(e): i for i, e in enumerate(self.entries)}
            object.__setattr__(self, "_pos_cache", cache)
        return cache.get(id(entry))

    def materialize(self, entries: list) -> list:
        """Make ``entries`` complete (a streamed file keeps only structural keys) and return them.

        The complete values replace the light ones in ``entries`` and the id index, so every
        later lookup sees them too.  A light entry read back before gives the same object again."""
        replaced = self.__dict__.get("_replaced")
        if replaced is None:
            replaced = {}
            read: dict = {}  # id(light) -> (light, whole): the light is kept so its id is not reused
            object.__setattr__(self, "_replaced", replaced)
            object.__setattr__(self, "_read", read)
        read = self.__dict__["_read"]
        fresh = list({id(e): e for e in entries if type(e) is Light and id(e) not in read}.values())
        for light, whole in zip(fresh, self.raw.full(fresh)):
            read[id(light)] = (light, whole)
            if light is whole:
                continue
            i = self.position(light)
            if i is not None:
                self.entries[i] = whole
                replaced[id(whole)] = i
            k = js.key(get(light, "id"))
            if self.by_id.get(k) is light:
                self.by_id[k] = whole
        return [read[id(e)][1] if type(e) is Light else e for e in entries]

    def full(self, entry: Any) -> Any:
        """One entry, complete."""
        return self.materialize([entry])[0] if type(entry) is Light else entry

    def lookup(self, entry_id: Any) -> Any:
        """``byId.get(id)`` (``None`` when absent)."""
        return self.by_id.get(js.key(entry_id))

    def labels_json(self) -> dict:
        return {js.to_string(t): lbl for t, lbl in self.labels.values()}

    def label_of(self, entry_id: Any) -> Any:
        hit = self.labels.get(js.key(entry_id))
        return hit[1] if hit else None

    def session_name(self) -> str | None:
        """The last ``session_info`` in file order, trimmed; an empty name clears it."""
        compact = hasattr(self.entries, "extras")  # only its extras can be session_info
        entries: Any = self.entries  # a list or the compact index's CompactEntries
        for e in (e for _, e in entries.extras(reverse=True)) if compact else reversed(entries):
            if get(e, "type") == "session_info":
                name = get(e, "name")
                if name is None or name is UNDEF:
                    return None
                if not isinstance(name, str):
                    raise JSError(
                        f"session_info name is {type(name).__name__}, not a string (pi throws reading it)",
                        path=self.path, line=self.line_of(e),
                    )
                return js.js_trim(name) or None
        return None

    def header_json(self) -> dict | None:
        """harness: pi's session metadata; cli: the header object after migration."""
        h = self.header
        if h is None:
            return None
        if self.reader == "cli":
            return h
        out = {"id": h.get("id"), "createdAt": h.get("timestamp"), "cwd": h.get("cwd"), "path": self.path}
        if "parentSession" in h:
            out["parentSessionPath"] = h["parentSession"]
        if "metadata" in h:
            out["metadata"] = h["metadata"]
        return out


# --- reader choice -------------------------------------------------------------------------------


def written_by_sdk(raw: RawFile) -> bool:
    """Does the file hold a record only pi's SDK (the harness) writes?"""
    if raw.sdk_marker is not None:  # noted during the streaming pass
        return raw.sdk_marker
    first = True
    for ln in raw.lines:
        v = ln.value
        if not isinstance(v, dict):
            continue
        t = v.get("type")
        if first and t == "session":
            first = False
            if "metadata" in v:
                return True
            continue
        first = False
        if t in SDK_ONLY_TYPES or (t == "compaction" and "retainedTail" in v):
            return True
    return False


def choose_reader(raw: RawFile, reader: str) -> str:
    if reader in READERS:
        return reader
    if reader != "auto":
        raise PisessError("usage", f"unknown reader {reader!r}: use auto, harness or cli")
    return "harness" if written_by_sdk(raw) else "cli"


def open_session(path: str, reader: str = "auto", raw: RawFile | None = None, *, light: bool = False,
                 pi_version: str = versions.CURRENT) -> Session:
    """Read ``path`` with ``reader`` (``auto``, ``harness`` or ``cli``), the pi command's reader
    following pi ``pi_version``'s rules (the SDK reader has only 0.82.1's).

    With ``light``, entries keep only their structural keys (memory grows with the number of
    entries, not bytes); ``Session.materialize``/``full`` read back complete entries on demand
    (``build_context`` and fork planning do that for the entries they use)."""
    version = versions.parse(pi_version)
    owned = raw is None
    if owned and light:
        session = _open_compact(path, reader)
        if session is not None:
            return _with_version(session, version)
    raw = raw if raw is not None else scan_file(path, light=light)
    chosen = choose_reader(raw, reader)
    session = open_harness(raw) if chosen == "harness" else open_cli(raw)
    if owned and light and session.raw is raw:
        raw.lines = []  # per-line records served the checks; entries keep their own offsets
    return _with_version(session, version)


def _with_version(session: Session, version: PiVersion) -> Session:
    rules = versions.of_reader(session.reader, version)
    return session if rules == session.pi_version else replace(session, pi_version=rules)


# --- harness ---------------------------------------------------------------------------------------


def _invalid(code: str, path: str, reason: str, ln: RawLine | None, line_no: int | None) -> PisessError:
    return PisessError(
        code,
        HEADER_PREFIX.format(path=path) + reason,
        path=path,
        line=line_no,
        physical_line=ln.number if ln else None,
        offset=ln.offset if ln else None,
        reason=reason,
        stage="open",
    )


def check_harness_header(v: Any) -> str | None:
    """pi's ``parseHeaderLine``: the reason the header is refused, or ``None``."""
    if type(v) is dict and v.get("type") == "session" and v.get("version") == 3 and type(v.get("version")) is int \
            and type(v.get("id")) is str and v["id"] and type(v.get("timestamp")) is str and v["timestamp"] \
            and type(v.get("cwd")) is str and v["cwd"] and "parentSession" not in v and "metadata" not in v:
        return None  # the common header, in one go
    bad = "first line is not a valid session header"
    if v is NOT_JSON or not isinstance(v, (dict, list)):
        return bad
    if not isinstance(v, dict) or v.get("type") != "session":
        return bad
    version = v.get("version", UNDEF)
    if isinstance(version, bool) or not isinstance(version, (int, float)) or version != 3:
        return "unsupported session version"
    for k in ("id", "timestamp", "cwd"):
        if not isinstance(v.get(k), str) or not v.get(k):
            return f"session header is missing {k}"
    if "parentSession" in v and not isinstance(v["parentSession"], str):
        return "session header parentSession must be a string"
    if "metadata" in v and not isinstance(v["metadata"], dict):
        return "session header metadata must be an object"
    return None


def check_harness_entry(v: Any) -> str | None:
    """pi's ``parseEntryLine``: the reason the entry line is refused, or ``None``."""
    if type(v) is Light or type(v) is dict:  # the common case, in one go
        t, i, p, ts = v.get("type"), v.get("id"), v.get("parentId", 0), v.get("timestamp")
        if type(t) is str and type(i) is str and i and (p is None or type(p) is str) \
                and type(ts) is str and ts and t != "leaf":
            return None
    if v is NOT_JSON:
        return "is not valid JSON"
    if not isinstance(v, (dict, list)):
        return "is not a valid session entry"
    if not isinstance(v, dict) or not isinstance(v.get("type"), str):
        return "is missing entry type"
    if not isinstance(v.get("id"), str) or not v["id"]:
        return "is missing entry id"
    if "parentId" not in v or not (v["parentId"] is None or isinstance(v["parentId"], str)):
        return "has invalid parentId"
    if not isinstance(v.get("timestamp"), str) or not v["timestamp"]:
        return "is missing timestamp"
    if v["type"] == "leaf" and ("targetId" not in v or not (v["targetId"] is None or isinstance(v["targetId"], str))):
        return "has invalid targetId"
    return None


def harness_first_error(raw: RawFile) -> PisessError | None:
    """The error pi's SDK raises opening this file, or ``None`` when it opens."""
    nb = raw.nonblank
    if not nb:
        return _invalid("invalid_session", raw.path, "missing session header", None, None)
    reason = check_harness_header(nb[0].value)
    if reason:
        return _invalid("invalid_session", raw.path, reason, nb[0], 1)
    for n, ln in enumerate(nb[1:], 2):
        reason = check_harness_entry(ln.value)
        if reason:
            return _invalid("invalid_entry", raw.path, f"line {n} {reason}", ln, n)
    return None


def open_harness(raw: RawFile) -> Session:
    nb = raw.nonblank
    header = nb[0].value if nb else None
    if isinstance(header, dict) and header.get("type") == "session" and needs_migration(header) \
            and check_harness_header(header) == "unsupported session version":
        # A v1/v2 file: pi's SDK refuses it; pisess reads it migrated, as the pi command would.
        cli = open_cli(raw if not raw.light else scan_file(raw.path, light=False))
        return _harness_view(cli.header, cli.entries, cli.entry_lines, raw,
                             migrated=cli.migrated_from_version, dropped=cli.dropped_lines,
                             notes=[f"version {js.to_string(cli.migrated_from_version)} file: pi's SDK refuses it "
                                    "(unsupported session version); read after migrating it in memory"])
    err = harness_first_error(raw)
    if err:
        raise err
    entries = [ln.value for ln in nb[1:]]
    lines = [ln.number for ln in nb[1:]]
    return _harness_view(header, entries, lines, raw)


def _open_compact(path: str, reader: str) -> Session | None:
    """A well-formed v3 file read through a ``CompactIndex``; ``None`` sends it to the line scan."""
    from .compact import scan_compact

    ix = scan_compact(path)
    if ix is None:
        return None
    raw = index_raw(path, ix)
    chosen = choose_reader(raw, reader)
    if (ix.harness_error if chosen == "harness" else not ix.cli_plain):
        return None  # pi fails or drops lines here: the line scan says how
    return index_view(ix, raw, chosen)


def index_raw(path: str, ix: Any) -> RawFile:
    """The ``RawFile`` of an indexed file: its size and ending, no per-line records."""
    return RawFile(path, ix.size, [], ix.ends_with_newline, light=True, sdk_marker=ix.sdk_marker)


def index_view(ix: Any, raw: RawFile, reader: str) -> Session:
    """The ``harness`` or ``cli`` session over a ``CompactIndex`` (each with its own entry cache)."""
    from .compact import CompactById, CompactEntries

    entries = CompactEntries(ix)
    view = _harness_view if reader == "harness" else _cli_view
    return view(ix.header, entries, ix.line_numbers(), raw, by_id=CompactById(entries))


def _walk(entries, by_id: dict):
    """``(i, entry, id, type)`` of the entries labels and names can come from.  A compact index
    already knows ids and positions and holds no label among its plain messages."""
    if hasattr(entries, "extras"):
        for i, e in entries.extras():
            yield i, e, get(e, "id"), get(e, "type")
        return
    yield from _indexed(entries, by_id)


def _indexed(entries: list, by_id: dict):
    """Yield ``(i, entry, id, type)`` while filling ``by_id`` (last occurrence wins) and telling
    light entries their position."""
    for i, e in enumerate(entries):
        te = type(e)
        if te is Light:
            e.index = i
        if te is Light or te is dict:
            eid = e.get("id", UNDEF)
            t = e.get("type")
        else:
            eid, t = get(e, "id"), get(e, "type")
        by_id[eid if type(eid) is str else js.key(eid)] = e
        yield i, e, eid, t


def _harness_view(header, entries, lines, raw, migrated=None, dropped=(), notes=(), by_id=None) -> Session:
    by_id = {} if by_id is None else by_id
    labels: dict = {}
    for i, e, _, t in _walk(entries, by_id):
        if t == "label":
            lbl = get(e, "label")
            if lbl is not None and lbl is not UNDEF and not isinstance(lbl, str):
                raise JSError(f"label is {type(lbl).__name__}, not a string (pi's SDK throws indexing labels)",
                              path=raw.path, line=lines[i], stage="open")
            tid = get(e, "targetId")
            text = js.js_trim(lbl) if isinstance(lbl, str) else ""
            if text:
                labels[js.key(tid)] = (tid, text)
            else:
                labels.pop(js.key(tid), None)
    leaf: Any = None
    if entries:
        last = entries[-1]
        leaf = get(last, "targetId") if get(last, "type") == "leaf" else get(last, "id")
    return Session(raw.path, "harness", header, entries, lines, by_id, leaf, labels, {}, raw,
                   migrated_from_version=migrated, dropped_lines=list(dropped), notes=list(notes),
                   pi_version=versions.PI_0_82)


# --- cli ---------------------------------------------------------------------------------------------


def cli_kept_lines(raw: RawFile) -> tuple[list[RawLine], list[dict]]:
    """pi's ``loadEntriesFromFile``: truthy parsed values are kept; the rest is dropped silently."""
    kept, dropped = [], []
    for ln in raw.lines:
        if ln.blank:
            continue
        if ln.value is NOT_JSON:
            dropped.append({"line": ln.number, "reason": "not valid JSON"})
        elif not js.truthy(ln.value):
            dropped.append({"line": ln.number, "reason": "falsy JSON value"})
        else:
            kept.append(ln)
    return kept, dropped


def _is_cli_header(v: Any) -> bool:
    return isinstance(v, dict) and v.get("type") == "session" and isinstance(v.get("id"), str)


def open_cli(raw: RawFile) -> Session:
    kept, dropped = cli_kept_lines(raw)
    if not kept or not _is_cli_header(kept[0].value):
        if raw.size == 0:
            return Session(raw.path, "cli", None, [], [], {}, None, {}, {}, raw, empty_file_initialized=True,
                           notes=["empty file: pi would write a fresh header into it on open"])
        first = kept[0] if kept else None
        raise PisessError(
            "invalid_session",
            f"Session file is not a valid pi session: {raw.path}",
            path=raw.path, line=1 if first else None, physical_line=first.number if first else None,
            offset=first.offset if first else None,
            reason="first parsed line is not a session header" if kept else "no JSON line in the file",
            stage="open",
        )
    values = [ln.value for ln in kept]
    migrated = None
    if needs_migration(values[0]) and raw.light:
        return open_cli(scan_file(raw.path, light=False))  # migration rewrites whole entries
    if needs_migration(values[0]):
        migrated = raw_version(values[0])
        try:
            values = migrate_in_memory(values)
        except TypeError as e:
            raise JSError(f"migration fails: {e} (pi cannot open this file)", path=raw.path, stage="open") from None
    header = values[0]
    entries, lines = [], []
    for v, ln in zip(values, kept):
        if v is header:
            continue
        if isinstance(v, dict) and v.get("type") == "session":
            continue  # pi skips every later header
        entries.append(v)
        lines.append(ln.number)
    return _cli_view(header, entries, lines, raw, migrated=migrated, dropped=dropped)


def _cli_view(header, entries, lines, raw, migrated=None, dropped=(), by_id=None) -> Session:
    by_id = {} if by_id is None else by_id
    labels: dict = {}
    stamps: dict = {}
    for _, e, _eid, t in _walk(entries, by_id):
        if t == "label":
            tid = get(e, "targetId")
            k = js.key(tid)
            lbl = get(e, "label")
            if js.truthy(lbl):
                labels[k] = (tid, lbl)
                stamps[k] = get(e, "timestamp")
            else:
                labels.pop(k, None)
                stamps.pop(k, None)
    leaf: Any = get(entries[-1], "id") if entries else None
    return Session(raw.path, "cli", header, entries, lines, by_id, leaf, labels, stamps, raw,
                   migrated_from_version=migrated, dropped_lines=list(dropped))


def iter_entries(session: Session) -> Iterable[tuple[int, Any]]:
    return zip(session.entry_lines, session.entries)


Projector = Callable[[Any, int, list], list]
