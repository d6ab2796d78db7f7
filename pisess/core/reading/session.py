"""Opening a session file the way each of pi 0.82's readers does.

``harness`` is the SDK's ``JsonlSessionStorage``: every non-blank line is checked, the first bad
one fails the whole file with pi's code and message; ``leaf`` records move the leaf; labels are
trimmed.  ``cli`` is the ``pi`` command's ``SessionManager``: bad lines are dropped, v1/v2 files
are migrated (in memory here; pi rewrites them), the last entry is the leaf.  ``auto`` picks the
reader of the program that wrote the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from typing import Any, Literal

from .. import js, versions
from ..errors import JSError, PisessError
from ..ids import resolve_entry_id, unique_prefix_width
from ..js import UNDEF, get
from . import cache, lines
from .compact import CompactEntries, CompactIndex, Gathering, scan_compact
from .jsonl import Light, RawFile, RawLine, first_line_value, scan_file
from .lines import NOT_JSON, check_harness_entry, check_harness_header  # noqa: F401 - re-exported
from .migrate import migrate_in_memory, needs_migration, raw_version
from .sdk_v4 import SDK_V4, is_v4_line
from .store import EntryStore, ListStore, spans_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..versions import PiVersion

Reader = Literal["harness", "cli"]
READERS: tuple[Reader, ...] = ("harness", "cli")
HEADER_PREFIX = "Invalid JSONL session file {path}: "
_RUN_BLOCK = 1 << 20  # bytes of a run of lines read at once (``Session.complete_at``)


@dataclass(frozen=True)
class Session:
    """A session file as one of pi's readers sees it.  Entries stay the raw parsed values (in
    ``store``, see ``store.EntryStore``), so unknown fields survive and nothing is copied per entry."""

    path: str
    reader: Reader
    header: dict | None
    store: EntryStore
    leaf_id: Any  # str | None | js.UNDEF
    labels: dict  # js.key(targetId) -> (targetId, label), in JS Map order
    label_timestamps: dict  # js.key(targetId) -> timestamp of the label entry that set it
    raw: RawFile
    migrated_from_version: Any = None
    dropped_lines: list = field(default_factory=list)
    empty_file_initialized: bool = False
    notes: list = field(default_factory=list)
    pi_version: PiVersion = versions.CURRENT  # the pi command's rules (a harness read is always pi 0.82's)

    @property
    def entries(self) -> EntryStore:
        """The entries in file order (the store itself: a sequence)."""
        return self.store

    @property
    def entry_lines(self) -> Sequence[int]:
        """The physical line of each entry."""
        return self.store.lines

    @property
    def by_id(self) -> Mapping[Any, Any]:
        """``js.key(id)`` -> entry, last occurrence wins."""
        return self.store.by_id

    def line_of(self, entry: Any) -> int | None:
        i = self.store.position(entry)
        return self.store.line(i) if i is not None else None

    def position(self, entry: Any) -> int | None:
        """Index of ``entry`` in ``entries``."""
        return self.store.position(entry)

    def materialize(self, entries: list) -> list:
        """Make ``entries`` complete (a streamed file keeps only structural keys) and return them.

        The complete values replace the light ones in the store, so every later access and
        lookup sees them too.  A light entry read back before gives the same object again."""
        return self.store.complete(entries)

    def full(self, entry: Any) -> Any:
        """One entry, complete."""
        return self.store.complete([entry])[0]

    def lookup(self, entry_id: Any) -> Any:
        """``byId.get(id)`` (``None`` when absent)."""
        return self.store.by_id.get(js.key(entry_id))

    @cached_property
    def id_width(self) -> int:
        """How many characters of an entry id every view shows: the fewest, at least 8, at which
        no two ids of this file look alike (worked out once, when a view first asks)."""
        return unique_prefix_width(self.store.string_ids())

    def entry_id(self, arg: str, *, option: str = "entry id", keep_unknown: bool = False) -> str:
        """The entry id an argument names: an id, or a prefix of exactly one (``ids.resolve_entry_id``)."""
        return resolve_entry_id(self, arg, option=option, keep_unknown=keep_unknown)

    def iter_complete(self, wanted: Callable[[Any], bool | bytes] | None = None, batch: int = 2048,
                      start: int = 0, stop: int | None = None) -> Iterator[Any]:
        """Entries complete, in file order, without keeping them (read back in batches).

        ``wanted(entry)`` (on the light entry) says which: ``True``, ``False``, or a byte string
        the line must contain to be worth parsing (a streamed file's bytes are searched first).
        ``start``/``stop``: the entries at those positions only."""
        pending: list = []
        needs: list = []

        def flush() -> Iterator[Any]:
            for (light, data), need in zip(self.raw.lines_of(pending), needs):
                if need is True or need in data:
                    yield self.raw.parse_back(light, data)
            pending.clear()
            needs.clear()

        store = self.store
        every = start == 0 and stop is None
        for e in store if every else (store[i] for i in range(start, len(store) if stop is None else stop)):
            need = True if wanted is None else wanted(e)
            if need is False:
                continue
            if type(e) is Light:
                pending.append(e)
                needs.append(need)
                if len(pending) >= batch:
                    yield from flush()
                continue
            if pending:
                yield from flush()
            yield e
        if pending:
            yield from flush()

    def complete_at(self, positions: Sequence[int], worth: Callable[[int, bytes], bool] | None = None,
                    batch: int = 2048) -> Iterator[tuple[int, Any]]:
        """``(position, entry complete)`` for ``positions`` (ascending), without keeping them;
        with ``worth``, only the entries for which ``worth(position, bytes of the line)`` holds
        (asked before a parse; an entry held complete already is taken as it is)."""
        if worth is None and type(positions) is range and positions.step == 1 and len(positions) > 1:
            return self._complete_run(positions)
        return self._complete_each(positions, worth, batch)

    def _complete_run(self, positions: range) -> Iterator[tuple[int, Any]]:
        """``complete_at`` of a run of positions (a page's pass over every entry): their lines lie
        one after the other, so they are read a block at a time (not a seek and a read a line), a
        line shorter than ``LINE_MIN`` parsed where it lies in the block as ``parse_back`` parses it
        (``parse_json``: such a line has no image to cut) and checked as it checks it, and no light
        entry is made for an entry the store has not built (its id is the store's).  Longer lines,
        and a line the block does not hold whole, are read as ``complete_at`` reads each one."""
        from orjson import JSONDecodeError, loads

        from .images import LINE_MIN
        from .jsonl import parse_json, storage_error

        store, raw = self.store, self.raw
        offsets, lengths = store.spans()
        peek = store._peek  # (the entry if the store built it: a light one is not made here)
        ids: Sequence[Any] | None = None
        cuts = raw.cuts if raw.images == "lean" else None
        view = memoryview(bytearray(_RUN_BLOCK))
        base = held = 0  # the block holds the file's bytes base:base + held
        try:
            fh = open(raw.path, "rb", buffering=0)
        except OSError as err:
            raise storage_error(raw.path, err, "re-read") from None
        with fh:
            for pos in positions:
                e = peek(pos)
                if e is None:
                    if ids is None:
                        ids = store.string_ids()
                    expect = ids[pos]
                    if expect is None:  # (an id that is no string: its light entry says what it is)
                        e = store[pos]
                if e is not None:
                    if type(e) is not Light:
                        yield pos, e
                        continue
                    expect = e.get("id", None)
                    offset, length = e.offset, e.length
                else:
                    offset, length = offsets[pos], lengths[pos]
                end = offset + length
                if length < LINE_MIN and not (cuts and offset in cuts):
                    if offset < base or end > base + held:
                        fh.seek(offset)
                        base, held = offset, fh.readinto(view) or 0
                    if end <= base + held:
                        line = view[offset - base:end - base]
                        try:
                            v = loads(line)
                        except (JSONDecodeError, RecursionError):  # (what JSON.parse reads and orjson refuses)
                            v = parse_json(bytes(line))
                        if type(v) is not dict or v.get("id", None) != expect:
                            v = raw.parse_back(store[pos] if e is None else e, bytes(line))  # (raises as it does)
                        yield pos, v
                        continue
                light = store[pos] if e is None else e
                for _, data in raw.lines_of([light]):
                    yield pos, raw.parse_back(light, data)

    def _complete_each(self, positions: Sequence[int], worth: Callable[[int, bytes], bool] | None,
                       batch: int) -> Iterator[tuple[int, Any]]:
        store = self.store
        pending: list = []

        def flush() -> Iterator[tuple[int, Any]]:
            for (pos, light), (_, data) in zip(pending, self.raw.lines_of([x for _, x in pending])):
                if worth is None or worth(pos, data):
                    yield pos, self.raw.parse_back(light, data)
            pending.clear()

        for pos in positions:
            e = store[pos]
            if type(e) is Light:
                pending.append((pos, e))
                if len(pending) >= batch:
                    yield from flush()
                continue
            if pending:
                yield from flush()
            yield pos, e
        if pending:
            yield from flush()

    def final_newline_repaired(self) -> bool:
        """pi >= 0.84.4 appends a missing final newline when it opens a file with a valid header (C.17)."""
        return (self.reader == "cli" and versions.since(self.pi_version, versions.REPAIRS_FINAL_NEWLINE)
                and self.header is not None and self.raw.size > 0 and not self.raw.ends_with_newline)

    def labels_json(self) -> dict:
        return {js.to_string(t): lbl for t, lbl in self.labels.values()}

    def label_of(self, entry_id: Any) -> Any:
        hit = self.labels.get(js.key(entry_id))
        return hit[1] if hit else None

    def session_name(self) -> str | None:
        """The last ``session_info`` in file order, trimmed; an empty name clears it."""
        for i, e in self.store.extras(reverse=True):  # a session_info is never a plain message
            if get(e, "type") == "session_info":
                name = get(e, "name")
                if name is None or name is UNDEF:
                    return None
                if not isinstance(name, str):
                    raise JSError(
                        f"session_info name is {type(name).__name__}, not a string (pi throws reading it)",
                        path=self.path, line=self.store.line(i),
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
    return lines.written_by_sdk(ln.value for ln in raw.lines)


def choose_reader(raw: RawFile, reader: str) -> Reader:
    if reader == "harness":
        return "harness"
    if reader == "cli":
        return "cli"
    _check_reader(reader)
    return "harness" if written_by_sdk(raw) else "cli"


def _check_reader(reader: str) -> None:
    if reader not in READERS and reader != "auto":
        raise PisessError("usage", f"unknown reader {reader!r}: use auto, harness or cli")


def open_session(path: str, reader: str = "auto", raw: RawFile | None = None, *, light: bool = False,
                 pi_version: str = versions.CURRENT, gather: Gathering | None = None,
                 images: str = "whole") -> Session:
    """Read ``path`` with ``reader`` (``auto``, ``harness`` or ``cli``), the pi command's reader
    following pi ``pi_version``'s rules (the SDK reader has only pi 0.82's).

    With ``light``, entries keep only their structural keys (memory grows with the number of
    entries, not bytes); ``Session.materialize``/``full`` read back complete entries on demand
    (``build_context`` and fork planning do that for the entries they use).

    ``gather``: a summary of whole entries to take during the compact index's one parse (see
    ``compact.scan_compact``); ``session.store.gathered()`` has it where the index read the file.

    ``images``: how entries read back treat inline images (``RawFile.images``): ``lean`` leaves
    each image's base64 in the file, a placeholder in the value (``images``)."""
    session = open_read(path, reader, raw, light=light, pi_version=pi_version, gather=gather)[0]
    if images != "whole" and light:
        session.raw.images = images
    return session


def open_read(path: str, reader: str = "auto", raw: RawFile | None = None, *, light: bool = False,
              lenient: bool = False, pi_version: str = versions.CURRENT,
              gather: Gathering | None = None) -> tuple[Session, str | None]:
    """``open_session``, and with ``lenient`` the pi command's reader where the chosen one refuses
    the file (with a note saying so; raises when neither reads it).

    How the file is read is decided once: a legacy header (a migration rewrites whole entries) is
    scanned whole; a v3 one goes to the compact index, and only where the index says damage or a
    reader that drops or refuses lines, to the line scan, which says how."""
    version = versions.parse(pi_version)
    _check_reader(reader)
    if raw is None:
        if light and not _legacy(path):
            session = open_indexed(path, reader, pi_version=version, gather=gather)
            if session is not None:
                return session, None
            raw = scan_file(path, light=True)  # pi fails or drops lines here: the line scan says how
        else:
            raw = scan_file(path, light=False)
        owned = light
    else:
        owned = False
    chosen = choose_reader(raw, reader)
    try:
        session, note = (open_harness(raw) if chosen == "harness" else open_cli(raw)), None
    except PisessError as e:
        if not lenient or chosen == "cli" or e.code in ("storage", "not_found", "usage"):
            raise
        try:
            session = open_cli(raw)
        except PisessError:
            raise e from None
        note = f"pi's SDK refuses it ({e.reason}); read as the pi command reads it"
    if owned and session.raw is raw:
        raw.lines = []  # per-line records served the checks; entries keep their own offsets
    return _with_version(session, version), note


def open_indexed(path: str, reader: str = "auto", *, pi_version: str = versions.CURRENT,
                 gather: Gathering | None = None) -> Session | None:
    """The session over a ``CompactIndex`` of ``path``; ``None`` where the index leaves the file to
    the line scan (not a well-formed v3 file, or the chosen reader refuses or drops a line)."""
    scan = scan_compact if gather is None else partial(scan_compact, gather=gather)
    ix = cache.scan(path, scan)  # from the cached prefix where the file checks out
    if ix is None:
        return None
    raw = index_raw(path, ix)
    chosen = choose_reader(raw, reader)
    if ix.harness_error if chosen == "harness" else not ix.cli_plain:
        return None
    return _with_version(index_view(ix, raw, chosen), versions.parse(pi_version))


def _legacy(path: str) -> bool:
    """Is the first line a v1/v2 header (read whole: the migration rewrites every entry)?"""
    v = first_line_value(path)
    return isinstance(v, dict) and v.get("type") == "session" and needs_migration(v)


def _with_version(session: Session, version: PiVersion) -> Session:
    rules = versions.of_reader(session.reader, version)
    return session if rules == session.pi_version else replace(session, pi_version=rules)


# --- harness ---------------------------------------------------------------------------------------


def _invalid(code: str, path: str, reason: str, ln: RawLine | None, line_no: int | None) -> PisessError:
    """pi's SDK refusing the file (``refused_by`` says so)."""
    err = PisessError(
        code,
        HEADER_PREFIX.format(path=path) + reason,
        path=path,
        line=line_no,
        physical_line=ln.number if ln else None,
        offset=ln.offset if ln else None,
        reason=reason,
        stage="open",
    )
    err.refused_by = "harness"
    return err


def harness_first_error(raw: RawFile) -> PisessError | None:
    """The error pi's SDK raises opening this file, or ``None`` when it opens."""
    nb = raw.nonblank
    if not nb:
        return _invalid("invalid_session", raw.path, "missing session header", None, None)
    reason = check_harness_header(nb[0].value)
    if reason:
        if is_v4_line(raw, nb[0]):
            reason = f"{reason}: {SDK_V4}"
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
        cli = open_cli(raw)
        return _harness_view(cli.header, cli.store, raw,
                             migrated=cli.migrated_from_version, dropped=cli.dropped_lines,
                             notes=[f"version {js.to_string(cli.migrated_from_version)} file: pi's SDK refuses it "
                                    "(unsupported session version); read after migrating it in memory"])
    err = harness_first_error(raw)
    if err:
        raise err
    kept = nb[1:]
    return _harness_view(header, _list_store([ln.value for ln in kept], kept, raw), raw)


def index_raw(path: str, ix: CompactIndex) -> RawFile:
    """The ``RawFile`` of an indexed file: its size and ending, no per-line records."""
    return RawFile(path, ix.size, [], ix.ends_with_newline, light=True, sdk_marker=ix.sdk_marker, cuts=ix.cuts)


def index_view(ix: CompactIndex, raw: RawFile, reader: Reader) -> Session:
    """The ``harness`` or ``cli`` session over a ``CompactIndex`` (each with its own store)."""
    store = CompactEntries(ix, raw.full)
    return _harness_view(ix.header, store, raw) if reader == "harness" else _cli_view(ix.header, store, raw)


def _list_store(entries: list, kept: list, raw: RawFile) -> ListStore:
    """The list store of ``entries`` read from the lines ``kept``."""
    return ListStore(entries, [ln.number for ln in kept], raw.full, spans_of(kept))


def _harness_view(header: Any, store: EntryStore, raw: RawFile, migrated: Any = None, dropped: Any = (),
                  notes: Any = ()) -> Session:
    labels: dict = {}
    for i, e in store.extras():  # a label is never a plain message
        if get(e, "type") == "label":
            lbl = get(e, "label")
            if lbl is not None and lbl is not UNDEF and not isinstance(lbl, str):
                err = JSError(f"label is {type(lbl).__name__}, not a string (pi's SDK throws indexing labels)",
                              path=raw.path, line=store.line(i), stage="open")
                err.refused_by = "harness"
                raise err
            tid = get(e, "targetId")
            text = js.js_trim(lbl) if isinstance(lbl, str) else ""
            if text:
                labels[js.key(tid)] = (tid, text)
            else:
                labels.pop(js.key(tid), None)
    leaf: Any = None
    if len(store):
        last = store[-1]
        leaf = get(last, "targetId") if get(last, "type") == "leaf" else get(last, "id")
    return Session(raw.path, "harness", header, store, leaf, labels, {}, raw,
                   migrated_from_version=migrated, dropped_lines=list(dropped), notes=list(notes),
                   pi_version=versions.PI_0_82)


# --- cli ---------------------------------------------------------------------------------------------


GLUED_CHECKED = 50  # dropped lines read back to tell glued entries from other damage


def cli_kept_lines(raw: RawFile) -> tuple[list[RawLine], list[dict]]:
    """pi's ``loadEntriesFromFile``: truthy parsed values are kept; the rest is dropped silently."""
    kept: list[RawLine] = []
    dropped: list[dict] = []
    for ln in raw.lines:
        if ln.blank:
            continue
        reason = lines.cli_drop_reason(ln.value)
        if reason is None:
            kept.append(ln)
        else:
            if ln.value is NOT_JSON and len(dropped) < GLUED_CHECKED:  # as validate says: glued_line
                reason = lines.glued_reason(raw.path, ln.offset, ln.length) or reason
            dropped.append({"line": ln.number, "reason": reason})
    return kept, dropped


def open_cli(raw: RawFile) -> Session:
    kept, dropped = cli_kept_lines(raw)
    if not kept or not lines.is_cli_header(kept[0].value):
        if raw.size == 0:
            return Session(raw.path, "cli", None, ListStore([], [], raw.full), None, {}, {}, raw,
                           empty_file_initialized=True,
                           notes=["empty file: pi would write a fresh header into it on open"])
        first = kept[0] if kept else None
        raise PisessError(
            "invalid_session",
            f"Session file is not a valid pi session: {raw.path}",
            path=raw.path, line=1 if first else None, physical_line=first.number if first else None,
            offset=first.offset if first else None,
            reason=("first parsed line is " + SDK_V4 if is_v4_line(raw, first) else
                    "first parsed line is not a session header") if first else "no JSON line in the file",
            stage="open",
        )
    values = [ln.value for ln in kept]
    migrated = None
    if needs_migration(values[0]) and raw.light:
        # migration rewrites whole entries (open_read scans a legacy file whole from the start;
        # a caller's light scan is read again)
        return open_cli(scan_file(raw.path, light=False))
    if needs_migration(values[0]):
        migrated = raw_version(values[0])
        try:
            values = migrate_in_memory(values)
        except TypeError as e:
            raise JSError(f"migration fails: {e} (pi cannot open this file)", path=raw.path, stage="open") from None
    header = values[0]
    entries, where = [], []
    for v, ln in zip(values, kept):
        if v is header or lines.cli_skips(v):
            continue  # pi skips every later header
        entries.append(v)
        where.append(ln)
    return _cli_view(header, _list_store(entries, where, raw), raw, migrated=migrated, dropped=dropped)


def _cli_view(header: Any, store: EntryStore, raw: RawFile, migrated: Any = None, dropped: Any = ()) -> Session:
    labels: dict = {}
    stamps: dict = {}
    for _, e in store.extras():  # a label is never a plain message
        if get(e, "type") == "label":
            tid = get(e, "targetId")
            k = js.key(tid)
            lbl = get(e, "label")
            if js.truthy(lbl):
                labels[k] = (tid, lbl)
                stamps[k] = get(e, "timestamp")
            else:
                labels.pop(k, None)
                stamps.pop(k, None)
    leaf: Any = get(store[-1], "id") if len(store) else None
    return Session(raw.path, "cli", header, store, leaf, labels, stamps, raw,
                   migrated_from_version=migrated, dropped_lines=list(dropped))
