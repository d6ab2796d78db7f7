"""How pi lists sessions and resolves a session argument (spec §1, §8), on ``paths`` (where
sessions live).

Nothing here creates a directory: pi's CLI ``mkdir -p``s the per-project folder just by computing
it; pisess only looks.
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .. import js, parallel, versions
from ..errors import PisessError
from ..ids import unique_prefix_width
from ..reading.files import first_line_of, open_regular, os_error
from ..reading.jsonl import NOT_JSON, parse_json
from ..reading.lines import check_harness_header
from .paths import encode_cwd, list_children, project_dirs, root_children, session_path

SQLITE_STORE = ("sessions.sqlite", "sessions.sqlite-wal", "sessions.sqlite-shm")


def sqlite_store(root: str) -> str | None:
    """pi's unreleased SQLite session store (``PERSISTENT_STORE=sqlite``) in the agent directory
    above the sessions root: the path of its first file found, or ``None``.  pisess reads JSONL
    files only; sessions kept there are not listed."""
    agent = os.path.dirname(os.path.normpath(root))
    for name in SQLITE_STORE:
        p = os.path.join(agent, name)
        if os.path.lexists(p):
            return p
    return None


@dataclass(frozen=True)
class SessionInfo:
    """One listed session.  ``listing`` says whose listing it comes from: ``harness`` (pi 0.82's
    SDK: first line only) or ``cli`` (the pi command's ``/resume``: also ``created``/``modified``,
    in ms, and ``activity_read``, how pisess found ``modified``: ``tail`` or ``file``)."""

    id: str
    created_at: Any
    cwd: str
    path: str
    parent_session_path: Any = None
    metadata: dict | None = None
    has_metadata: bool = False
    size: int = 0
    listing: str = "harness"
    has_parent: bool = False
    created: float | int | None = None
    modified: float | int | None = None
    activity_read: str | None = None
    mtime_ms: float | None = None
    # the header's id is a string (``id`` shows any other as text): only then does an id argument
    # name the session, as in pi, which compares it with === and calls startsWith on it
    string_id: bool = True
    # ``ls --long``'s details of the file (``summary.summarize_file``'s dict) where the listing read
    # them in its own pass over the file (``list_sessions(details=True)``); ``None`` otherwise
    details: dict | None = None

    def to_json(self) -> dict:
        out: dict = {"id": self.id, "createdAt": self.created_at, "cwd": self.cwd, "path": self.path}
        if self.listing == "cli":
            if self.has_parent:
                out["parentSessionPath"] = self.parent_session_path
            out["created"] = js.iso_utc(self.created) if self.created is not None else None
            if self.activity_read != "header":  # --sort created reads headers only
                out["modified"] = js.iso_utc(self.modified) if self.modified is not None else None
                out["activityRead"] = self.activity_read
            return out
        if self.parent_session_path is not None:
            out["parentSessionPath"] = self.parent_session_path
        if self.has_metadata:
            out["metadata"] = self.metadata
        return out


@dataclass(frozen=True)
class Skipped:
    path: str
    code: str
    reason: str

    def to_json(self) -> dict:
        return {"path": self.path, "code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class Listing:
    """``skipped``: files pi's listing leaves out (``Skipped``); ``unreadable``: the directories and
    files that could not be read at all (``PisessError``, unreadable), so the listing may be
    incomplete."""

    sessions: list
    skipped: list
    directories: list = field(default_factory=list)
    unreadable: list = field(default_factory=list)
    root: str = ""  # what was listed: the sessions root, the project (None: every project) ...
    cwd: str | None = None
    pi_version: str = versions.CURRENT  # ... and whose rules listed it

    def to_json(self, details: Mapping[str, Any] | None = None, *, search: str | None = None) -> dict:
        """The listing document (``pisess ls --json``): what was listed (and the ``search`` that
        filtered it, ``ls --search``), the sessions in pi's order (each with its ``details`` when
        given: ``summary.details_of``),
        the files left out, and what could not be read, with an ``error`` saying the listing is
        incomplete as every command's error does."""
        rows = []
        twins = shared_ids(self.sessions)
        for s in self.sessions:
            row = s.to_json()
            row["sameIdPaths"] = twins.get(s.path, [])
            if details is not None:
                row["details"] = details[s.path]
            rows.append(row)
        doc: dict = {"piVersion": self.pi_version, "root": self.root, "cwd": self.cwd,
                     **({"search": search} if search is not None else {}), "sessions": rows,
                     "skipped": [k.to_json() for k in self.skipped],
                     "unreadable": [e.to_dict() for e in self.unreadable]}
        if self.unreadable:
            n = len(self.unreadable)
            doc["error"] = {"code": self.unreadable[0].code, "path": self.unreadable[0].path,
                            "message": f"{n} file{'s' if n != 1 else ''} could not be read"}
        return doc


def shared_ids(sessions: list) -> dict[str, list[str]]:
    """path -> the other listed paths whose header holds the same (string) session id: two files
    of one session (pi #11060: ``/import`` of a session whose folder was gone left ``s.jsonl``
    and ``s-1.jsonl``, before pi 1.5.2).  pi lists both; an id names the first by name."""
    by_id: dict[str, list[str]] = {}
    for s in sessions:
        if getattr(s, "string_id", True) and isinstance(s.id, str):
            by_id.setdefault(s.id, []).append(s.path)
    return {p: [q for q in paths if q != p] for paths in by_id.values() if len(paths) > 1 for p in paths}


def unreadable_skip(k: Skipped) -> PisessError:
    """A skipped file that could not be read, as the ``PisessError`` every unreadable is."""
    return PisessError(k.code, f"cannot read {k.path}: {k.reason.removeprefix('cannot read: ')}", path=k.path,
                       reason=k.reason, unreadable=True)


def _is_unreadable(code: str) -> bool:
    return code in ("storage", "not_found")


def read_header_info(path: str, *, regular: bool = False) -> SessionInfo:
    """pi's ``loadJsonlSessionMetadata``: only the first line, validated as a header.

    ``regular``: the directory listing already said this is a regular file (no ``fstat``)."""
    fd, _ = open_regular(path, regular=regular, subject="session header")
    try:
        line = first_line_of(fd)
        size = os.lseek(fd, 0, os.SEEK_END)
    except OSError as e:
        raise os_error(path, e, subject="session header") from None
    finally:
        os.close(fd)
    if line[:1] != b"{" and js.js_blank(line.decode("utf-8", "replace")):
        raise PisessError("invalid_session", "missing session header", path=path, line=1)
    v = parse_json(line)
    reason = check_harness_header(v)
    if reason:
        from ..reading.sdk_v4 import SDK_V4, is_sdk_v4_header

        raise PisessError("invalid_session", f"{reason}: {SDK_V4}" if is_sdk_v4_header(v) else reason,
                          path=path, line=1)
    return SessionInfo(v["id"], v["timestamp"], v["cwd"], path, v.get("parentSession"), v.get("metadata"),
                       "metadata" in v, size)


def _session_files(directory: str, unreadable: list) -> list[tuple[str, bool]]:
    """``*.jsonl`` children that are not directories (symlinked files count), byte-wise name order,
    each with whether the listing says it is a regular file (``d_type``: no ``fstat`` needed)."""
    found = []
    for e in list_children(directory, unreadable):
        if e.name.endswith(".jsonl"):
            try:
                if not e.is_dir(follow_symlinks=False):
                    found.append((e.name, e.is_file(follow_symlinks=False)))
            except OSError as err:
                unreadable.append(os_error(e.path, err))
    if all(name.isascii() for name, _ in found):
        found.sort()  # ASCII names sort the same as their bytes (names are unique: the flag never decides)
    else:
        found.sort(key=lambda f: os.fsencode(f[0]))
    prefix = os.path.join(directory, "")  # what DirEntry.path would be
    return [(prefix + name, regular) for name, regular in found]


def _by_created_desc(a: SessionInfo, b: SessionInfo) -> int:
    # pi: new Date(b).getTime() - new Date(a).getTime(); NaN compares as "not less", like V8.
    ta, tb = js.parse_date(a.created_at), js.parse_date(b.created_at)
    if ta is None or tb is None:
        return 0
    d = tb - ta
    return -1 if d < 0 else (1 if d > 0 else 0)


def _all_canonical_utc(stamps: list) -> bool:
    """Every string is ``YYYY-MM-DDTHH:MM:SS.sssZ`` (what pi writes) and a real instant: such
    strings compare like the times they name, so sorting them needs no date parsing.  (A day past
    the month's end is read by V8 as the next month: ``fromisoformat`` refusing it keeps those on
    the slow path.)"""
    from datetime import datetime

    try:
        for s in stamps:
            if len(s) != 24 or s[-1] != "Z" or s[10] != "T" or s[19] != "." or not s.isascii():
                return False
            datetime.fromisoformat(s)
    except (TypeError, ValueError):
        return False
    return True


SORTS = ("activity", "created")


def list_sessions(root: str, cwd: str | None = None, *, pi_version: str = versions.CURRENT,
                  sort: str | None = None, whole: bool = False, details: bool = False) -> Listing:
    """The sessions of one project (``cwd``) or of every project under ``root``, as pi lists them.

    ``sort`` is ``activity`` (the pi command's ``/resume``: last activity first, pi
    ``pi_version``'s tie rules, v1/v2 files included) or ``created`` (newest header first).
    Without it: ``activity`` for pi 1.6, and for pi 0.82 the SDK's own listing
    (``JsonlSessionRepo.list``: the first line only, newest header first), whose sessions
    are v3 headers only.  ``whole``: read every file completely (pi's answer even where the
    end of a file does not prove it, see ``summary.tail_activity``); with ``details`` too, each
    session read whole also carries its ``ls --long`` details (``SessionInfo.details``), read in
    the same pass (``summary.details_of`` takes them).

    What cannot be read (a project directory, a file) is left out and listed in ``unreadable``;
    a root that cannot be listed raises.
    """
    if sort is not None and sort not in SORTS:
        raise PisessError("usage", f"--sort must be {' or '.join(SORTS)}, not {sort!r}")
    version = versions.parse(pi_version)
    if sort is None:
        sort = "activity" if versions.since(version, versions.LISTING_ORDER) else "created"
    if sort == "created" and not versions.since(version, versions.LISTING_ORDER):
        listing = _sdk_listing(root, cwd)
    else:
        listing = _cli_listing(root, cwd, version, sort, whole, details and whole)
    return replace(listing, root=root, cwd=cwd, pi_version=version)


def _sdk_listing(root: str, cwd: str | None = None) -> Listing:
    """HARNESS ``JsonlSessionRepo.list``: first line of each file, newest header first.

    Files whose header is invalid are skipped; a file or directory that cannot be read is
    skipped and listed in ``unreadable`` (pi's SDK would fail the whole listing).
    """
    unreadable: list = []
    dirs = [os.path.join(root, encode_cwd(cwd))] if cwd is not None else project_dirs(root, unreadable)
    files = [f for d in dirs for f in _session_files(d, unreadable)]
    sessions, skipped = [], []
    for (p, _), got in zip(files, _headers(files)):
        if type(got) is SessionInfo:
            sessions.append(got)
        else:
            skipped.append(Skipped(p, got.code, got.message))
            if _is_unreadable(got.code):
                unreadable.append(got)
    return Listing(_newest_created_first(sessions), skipped, dirs, unreadable)


def _newest_created_first(sessions: list) -> list:
    """A stable sort by header time, newest first, with pi's comparator (an invalid date compares
    equal to everything, Appendix B #19)."""
    if _all_canonical_utc([x.created_at for x in sessions]):
        # the same order, found without parsing: these strings sort as their instants do
        order = sorted(range(len(sessions)), key=lambda i: sessions[i].created_at, reverse=True)
        return [sessions[i] for i in order]
    times = [js.parse_date(x.created_at) if isinstance(x.created_at, str) else None for x in sessions]
    dates = [t for t in times if t is not None]
    if len(dates) == len(times):
        # a stable sort, newest first: the same order as pi's comparator when every date parses
        order = sorted(range(len(sessions)), key=dates.__getitem__, reverse=True)
        return [sessions[i] for i in order]
    return sorted(sessions, key=functools.cmp_to_key(_by_created_desc))


# --- the pi command's listing (/resume, --session, --continue) ---------------------------------------------

# ICU's root collation (what pi 1.6's localeCompare uses) ranks ASCII punctuation and symbols in
# this order, all before digits, digits before letters; case counts only when nothing else differs.
_ICU_PUNCT = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_ICU_RANK = {c: (1, i) for i, c in enumerate(_ICU_PUNCT)}
_ICU_RANK.update({c: (2, ord(c)) for c in "0123456789"})
_ICU_RANK.update({c: (3, ord(c.lower())) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"})


def collation_key(name: str) -> tuple:
    """An approximation of ICU root collation (``a.localeCompare(b)`` in pi 1.6, en-US): first by
    character class and letter ignoring case (``_`` < ``-`` < ``.`` < digits < letters), then
    lower case before upper case.  Exact for pi's own names (``<ISO time>_<uuid>.jsonl``, where
    it equals byte order) and for ASCII ids; characters beyond ASCII rank after the letters by
    code point (ICU would interleave accented letters with their base letters)."""
    prim = tuple(_ICU_RANK.get(c) or ((0, ord(c)) if c <= " " else (4, ord(c.casefold()[0]))) for c in name)
    tert = tuple(c.isupper() for c in name)
    return prim, tert


# pi's own file names: for these, byte order is ICU's order (C.20)
_PI_NAME = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]*\.jsonl")


_PI_NAMES = re.compile(f"(?:{_PI_NAME.pattern}/)*")  # ("/" is in no file name)


def pi_file_name(name: str) -> bool:
    """A name pi gave its file (``<ISO time>_<uuid>.jsonl``), whose time and id are the header's;
    any other (a file renamed by another tool) tells nothing of the session."""
    return _PI_NAME.fullmatch(name) is not None


def parent_ids(sessions: list) -> dict[str, str | None]:
    """path -> the session id of the parent each forked session's header names (``parentSession``):
    the header id of the listed file at that path, else of the one listed file of that name (a
    copied root), else the id in a name pi gave; ``None`` when none says it (a renamed parent
    that is not listed)."""
    by_real: dict[str, str] = {}
    by_name: dict[str, list[str]] = {}
    for s in sessions:
        if getattr(s, "string_id", True) and isinstance(s.id, str):
            by_real[os.path.realpath(s.path)] = s.id
            by_name.setdefault(os.path.basename(s.path), []).append(s.id)
    out: dict[str, str | None] = {}
    for s in sessions:
        written = s.parent_session_path
        if not isinstance(written, str) or not written:
            continue
        name = os.path.basename(written)
        named = by_name.get(name, [])
        out[s.path] = by_real.get(os.path.realpath(written)) or (named[0] if len(named) == 1 else None) or \
            (name[:-len(".jsonl")].partition("_")[2] if pi_file_name(name) else None)
    return out


def _name_order(names: list[str]) -> Any:
    """A sort key giving ``localeCompare``'s order of these names."""
    if _PI_NAMES.fullmatch("/".join(names) + "/" if names else ""):  # (one match for thousands of names)
        return None
    return collation_key


def _names_desc(names: list[str]) -> list[str]:
    """``names.sort((a, b) => b.localeCompare(a))``."""
    return sorted(names, key=_name_order(names), reverse=True)


def _jsonl_names(directory: str, unreadable: list, *, missing_ok: bool = True) -> list[str]:
    """``readdir(dir).filter(f => f.endsWith(".jsonl"))`` (any kind of entry), in code-unit order
    (the order the oracle's readdir gives; pi itself gets the OS's order).  pi returns an empty
    list on error; the directory is also added to ``unreadable``."""
    names = [e.name for e in list_children(directory, unreadable, missing_ok=missing_ok) if e.name.endswith(".jsonl")]
    return sorted(names, key=_utf16_key(names))


def _utf16(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def _utf16_key(names: list[str]) -> Any:
    """A sort key giving the code-unit order of these names: none when no name holds a character
    beyond U+FFFF (a surrogate pair in UTF-16), where it is the code-point order."""
    text = "".join(names)
    if text.isascii() or len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text):  # (no pair)
        return None
    return _utf16


def _cli_project_dirs(root: str, version: str) -> list[str]:
    """``listAll``'s project directories: children that are directories (0.84: or symlinks).  A
    root that cannot be listed raises (pi would list nothing)."""
    found = [(e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in root_children(root)]
    links = versions.since(version, versions.LIST_ALL_SYMLINKS)
    return [os.path.join(root, n) for n, is_dir, is_link in sorted(found, key=lambda f: _utf16(f[0]))
            if is_dir or (links and is_link)]


def _mtime_ms(path: str) -> float | None:
    try:
        ns = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return ns // 1_000_000_000 * 1e3 + (ns % 1_000_000_000) / 1e6


def _cli_listing(root: str, cwd: str | None, version: str, sort: str, whole: bool, details: bool = False) -> Listing:
    """``SessionManager.list(cwd)`` / ``listAll()`` of pi ``version`` with the default layout
    (a project's folder, no header-cwd filter), or, for ``sort="created"``, the same sessions
    newest header first."""
    ordered = versions.since(version, versions.LISTING_ORDER)
    unreadable: list = []
    if cwd is not None:
        d = os.path.join(root, encode_cwd(cwd))
        dirs = [d]
        names = _jsonl_names(d, unreadable)
        prefix = os.path.join(d, "")  # (d + "/": a name holds no separator)
        files = [prefix + n for n in (_names_desc(names) if ordered and sort == "activity" else names)]
    else:
        dirs = _cli_project_dirs(root, version)
        files = [os.path.join(d, n) for d in dirs for n in _jsonl_names(d, unreadable, missing_ok=False)]
        if ordered and sort == "activity":
            # by mtime, newest first (files that cannot be stat'ed last), then by name, descending
            base = [os.path.basename(p) for p in files]
            name_key = _name_order(base) or (lambda n: n)
            keyed = sorted(((_mtime_ms(p), name_key(b), p) for p, b in zip(files, base)),
                           key=lambda f: (f[0] if f[0] is not None else -math.inf, f[1]), reverse=True)
            files = [p for *_, p in keyed]
    sessions: list = []
    skipped: list = []
    for _p, got in zip(files, _cli_infos(files, whole, sort == "activity", details)):
        (sessions if type(got) is SessionInfo else skipped).append(got)
    unreadable += [unreadable_skip(k) for k in skipped if _is_unreadable(k.code)]
    if sort == "created":
        return Listing(_newest_created_first(sessions), skipped, dirs, unreadable)
    return Listing(_newest_modified_first(sessions), skipped, dirs, unreadable)


def _newest_modified_first(sessions: list) -> list:
    """``sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime())`` (stable)."""
    if all(s.modified is not None for s in sessions):
        return sorted(sessions, key=lambda s: s.modified, reverse=True)

    def cmp(a: SessionInfo, b: SessionInfo) -> int:
        if a.modified is None or b.modified is None:
            return 0  # NaN: neither before the other
        d = b.modified - a.modified
        return -1 if d < 0 else (1 if d > 0 else 0)

    return sorted(sessions, key=functools.cmp_to_key(cmp))


def _cli_info(path: str, whole: bool, activity: bool = True, details: bool = False) -> SessionInfo | Skipped:
    from .summary import CliSkip, line_time, read_cli_info

    got = read_cli_info(path, whole=whole, activity=activity, details=details)
    if isinstance(got, CliSkip):
        return Skipped(path, got.code, got.reason)
    h = got.header
    sid = h.get("id")
    ts = h.get("timestamp", None)
    return SessionInfo(sid if isinstance(sid, str) else js.to_string(sid), ts,
                       h["cwd"] if isinstance(h.get("cwd"), str) else "", path,
                       h.get("parentSession"), None, False, got.size, "cli", "parentSession" in h,
                       line_time(ts) if type(ts) is str else js.date_ms(h.get("timestamp", js.UNDEF)),
                       got.modified_ms() if activity else None,
                       got.read, got.mtime_ms, isinstance(sid, str), got.details)


def _cli_infos(files: list[str], whole: bool, activity: bool, details: bool = False) -> list:
    """``_cli_info`` of each file, thousands shared among forked processes like the headers.  With
    the cache on, what was read of a file is kept in its directory's bundle and used again while
    the file's stat is unchanged (``cache.by_stat``): a warm listing reads one bundle per
    directory and stats each file; only changed files are read."""
    from ..reading import cache

    items = [(p, whole, activity, details) if details else (p, whole, activity) for p in files]
    if cache.current().directory is None:
        return _shared(items, _read_cli_infos, _sent_cli_infos, _received_cli_infos)

    def compute(paths: list[str]) -> list:
        sub = [(p, whole, activity, details) if details else (p, whole, activity) for p in paths]
        return _shared(sub, _sent_cli_infos, _sent_cli_infos, _sent_again)

    sent = cache.by_stat(files, f"ls-info2 {int(whole)}{int(activity)}" + (" details" if details else ""), compute,
                         keep=lambda t: t[0] is not None or not _is_unreadable(t[1]))
    return _received_cli_infos(items, sent)


def _sent_again(files: list, sent: list | None) -> list:
    return sent if sent is not None and len(sent) == len(files) else _sent_cli_infos(files)


def _read_cli_infos(files: list) -> list:
    return [_cli_info(*f) for f in files]


def _sent_cli_infos(files: list) -> list[tuple]:
    # (the project's cwd, one string for all: the cache's bundle keeps it once, and loads it once)
    return [(s.id, s.created_at, sys.intern(s.cwd), s.parent_session_path, s.size, s.has_parent, s.created,
             s.modified, s.activity_read, s.mtime_ms, s.string_id, s.details) if type(s) is SessionInfo
            else (None, s.code, s.reason) for s in _read_cli_infos(files)]


def _received_cli_infos(files: list, sent: list | None) -> list:
    if sent is None or len(sent) != len(files):
        return _read_cli_infos(files)
    new, names = object.__new__, _SENT_FIELDS
    out: list = []
    for f, t in zip(files, sent):
        if t[0] is None:
            out.append(Skipped(f[0], t[1], t[2]))
            continue
        # (SessionInfo(*fields) without its __init__'s setattr per field: a warm listing of
        # 10,000 sessions builds them all from the cache, and the frozen init was a tenth of it)
        s = new(SessionInfo)
        s.__dict__.update(zip(names, (*t[:3], f[0], t[3], None, False, t[4], "cli", *t[5:])))
        out.append(s)
    return out


_SENT_FIELDS = tuple(f.name for f in fields(SessionInfo))


SHARE_MIN = 1000  # headers per process: with fewer, a fork and sending the headers back cost more than they save


def _headers(files: list[tuple[str, bool]]) -> list:
    """``read_header_info`` of each ``(path, regular)``: its ``SessionInfo``, or the ``PisessError``
    it raised."""
    return _shared(files, _read_headers, _sent_headers, _received_headers)


def _shared(items: list, read: Any, send: Any, receive: Any) -> list:
    """``read(items)``, thousands of items shared among forked processes (``parallel.workers``):
    the time goes to open/read/close, and each CPU makes its own.  ``send`` is a child's ``read``
    as plain tuples (they pickle several times faster than objects), ``receive`` rebuilds them
    (or reads the share itself when the child failed)."""
    n = len(items)
    parts = min(parallel.workers(limit=8), n // SHARE_MIN) if n >= 2 * SHARE_MIN else 1
    if parts < 2:
        return read(items)
    # the parent also rebuilds what the children send: a slightly smaller share for it
    cuts = [0, n * 9 // (10 * parts)]
    cuts += [cuts[1] + (n - cuts[1]) * k // (parts - 1) for k in range(1, parts)]
    shares = list(zip(cuts[1:], cuts[2:]))
    children = []
    try:
        for a, b in shares:
            children.append(parallel.Child(send, items[a:b]))
        out = read(items[:cuts[1]])
        for child, (a, b) in zip(children, shares):
            out += receive(items[a:b], child.result())
        return out
    finally:
        for child in children:
            child.cancel()


def _read_headers(files: list[tuple[str, bool]]) -> list:
    out: list = []
    for path, regular in files:
        try:
            out.append(read_header_info(path, regular=regular))
        except PisessError as e:
            out.append(e)
    return out


def _sent_headers(files: list[tuple[str, bool]]) -> list[tuple]:
    """A child's headers as plain tuples (they pickle several times faster than the objects):
    a header's fields after its path, or ``None`` and an error's code, message, line, reason and
    whether it is unreadable."""
    return [(s.id, s.created_at, s.cwd, s.parent_session_path, s.metadata, s.has_metadata, s.size)
            if type(s) is SessionInfo else (None, s.code, s.message, s.line, s.reason, s.unreadable)
            for s in _read_headers(files)]


def _received_headers(files: list[tuple[str, bool]], sent: list[tuple] | None) -> list:
    if sent is None or len(sent) != len(files):
        return _read_headers(files)  # the child failed: read its share here
    return [SessionInfo(t[0], t[1], t[2], p, *t[3:]) if t[0] is not None else
            PisessError(t[1], t[2], path=p, line=t[3], reason=t[4], unreadable=t[5]) for (p, _), t in zip(files, sent)]


def resolve_session(arg: str | None, root: str, cwd: str, *, pi_version: str = versions.CURRENT,
                    unreadable: list | None = None) -> str:
    """A file path, a session id or a unique id prefix, or, when ``arg`` is empty, the session
    pi would continue.

    pi 1.6 (C.23, C.24): an exact id is looked up in the project's headers first (the first file
    by name holding it), then a prefix among the project's sessions (``/resume`` order), then all
    projects' sessions, exact before prefix; no ``arg`` is ``pi --continue``'s choice (newest file
    mtime with a session header).  pi 0.82: the SDK listing's sessions, newest header first.
    A prefix that several sessions share is an error (pi would open the first: the message says
    which).

    What could not be read on the way (a directory, a file: a match may hide there) is added to
    ``unreadable``; when nothing matches and something could not be read, the error is an
    unreadable one (exit 2): the answer is not known."""
    path = session_path(arg)
    if path is not None:
        return path
    met: list = []
    try:
        return _resolve(arg, root, cwd, versions.parse(pi_version), met)
    except PisessError as e:
        if met and e.code == "not_found" and not e.unreadable:
            n = len(met)
            raise PisessError("not_found", f"{e.message}; {n} director{'ies' if n != 1 else 'y'} or file"
                              f"{'s' if n != 1 else ''} could not be read, it may be there", path=e.path,
                              unreadable=True) from None
        raise
    finally:
        if unreadable is not None:
            unreadable.extend(met)


def _resolve(arg: str | None, root: str, cwd: str, version: str, unreadable: list) -> str:
    if versions.since(version, versions.LISTING_ORDER):
        return _resolve_cli(arg, root, cwd, version, unreadable)

    def listed(scope: str | None) -> list:
        got = list_sessions(root, scope, pi_version=version)
        unreadable.extend(got.unreadable)
        return got.sessions

    here = listed(cwd)
    if not arg:
        if not here:
            raise PisessError("not_found", f"no sessions for {cwd} in {os.path.join(root, encode_cwd(cwd))}")
        return here[0].path
    for scope in (here, None):
        pool = here if scope is not None else listed(None)
        exact = [s for s in pool if s.id == arg and s.string_id]
        if len(exact) > 1:
            raise _same_id(arg, [s.path for s in exact])
        if exact:
            return exact[0].path
        found = _by_prefix(arg, pool)
        if found:
            return found
    raise PisessError("not_found", f"no session matches {arg!r} (looked in {root})")


def _by_prefix(arg: str, pool: list) -> str | None:
    """The one session of ``pool`` whose id starts with ``arg`` (a header id that is no string
    names nothing: pi's ``startsWith`` throws on it)."""
    matches = [s for s in pool if s.string_id and s.id.startswith(arg)]
    if len(matches) == 1:
        return matches[0].path
    if len(matches) > 1:
        listed = "\n".join(f"  {s.id}  {s.path}" for s in matches[:20])
        ids = len({s.id for s in matches})
        what = f"{len(matches)} sessions" if ids == len(matches) else \
            f"{len(matches)} files of {ids} session{'s' if ids != 1 else ''} (one id in several files: pi #11060)"
        raise PisessError("ambiguous", f"session id prefix {arg!r} matches {what} "
                          f"(pi would open the first):\n{listed}")
    return None


def _resolve_cli(arg: str | None, root: str, cwd: str, version: str, unreadable: list) -> str:
    """``main.ts: resolveSessionPath`` and ``continueRecent`` of pi ``version`` (default layout)."""
    project = os.path.join(root, encode_cwd(cwd))
    if not arg:
        return most_recent_session(project, unreadable)
    found = find_by_id(project, arg, unreadable)
    if found:
        return found
    for scope in (cwd, None):
        listing = list_sessions(root, scope, pi_version=version)
        # the project's own were met already by find_by_id
        unreadable.extend(e for e in listing.unreadable if e.path not in {u.path for u in unreadable})
        pool = listing.sessions
        if scope is None:
            exact = [s for s in pool if s.id == arg and s.string_id]
            if len(exact) > 1:
                raise _same_id(arg, sorted((s.path for s in exact), key=_utf16))
            if exact:
                return exact[0].path
        found = _by_prefix(arg, pool)
        if found:
            return found
    raise PisessError("not_found", f"no session matches {arg!r} (looked in {root})")


HEADER_SCAN = 1 << 20  # pi's discovery reads at most 1 MiB looking for the header


def discovery_header(path: str, unreadable: list | None = None) -> dict | None:
    """pi 1.6's ``readSessionHeaderForDiscovery``: the first value parsed from a ``\n``-ended line
    (blank and malformed lines skipped) if it is a session header (``type: "session"``, a string
    ``id``); ``None`` for anything else, an unreadable file (added to ``unreadable``), or no answer
    within 1 MiB."""
    try:
        fd, _ = open_regular(path)
    except PisessError as e:
        if unreadable is not None and not os.path.isdir(path):  # a directory is no session, as in pi's listing
            unreadable.append(e)
        return None
    try:
        data, scanned = b"", 0
        while scanned < HEADER_SCAN:
            chunk = os.read(fd, min(4096, HEADER_SCAN - scanned))
            if not chunk:
                got = _header_candidate(data)
                return None if got is _KEEP else got
            scanned += len(chunk)
            *complete, data = (data + chunk).split(b"\n")
            for line in complete:
                got = _header_candidate(line)
                if got is not _KEEP:
                    return got
        if os.read(fd, 1):
            return None  # pi: "Session header exceeds 1048576-byte scan limit"
        got = _header_candidate(data)
        return None if got is _KEEP else got
    except OSError as e:
        if unreadable is not None:
            unreadable.append(os_error(path, e))
        return None
    finally:
        os.close(fd)


_KEEP = object()


def _header_candidate(line: bytes) -> Any:
    """``parseSessionHeaderCandidate``: ``_KEEP`` to read on, ``None`` for a first value that is not
    a header, or the header."""
    if js.js_blank(line.decode("utf-8", "replace")):
        return _KEEP
    v = parse_json(line)
    if v is NOT_JSON or not js.truthy(v):
        return _KEEP
    return v if isinstance(v, dict) and v.get("type") == "session" and isinstance(v.get("id"), str) else None


def find_by_id(directory: str, session_id: str, unreadable: list | None = None) -> str | None:
    """``SessionManager.findById`` (C.23): headers only, files in name order, the first match.
    Two files holding the id (pi #11060) are an error naming both (pi would open the first).
    What cannot be read is added to ``unreadable``."""
    met: list = [] if unreadable is None else unreadable
    found = []
    for name in _jsonl_names(directory, met):
        p = os.path.join(directory, name)
        h = discovery_header(p, met)
        if h is not None and h.get("id") == session_id:
            found.append(p)
    if len(found) > 1:
        raise _same_id(session_id, found)
    return found[0] if found else None


def _same_id(session_id: str, paths: list[str]) -> PisessError:
    listed = "\n".join(f"  {p}" for p in paths[:20])
    return PisessError("ambiguous", f"session id {session_id} is held by {len(paths)} files (one session copied, "
                       f"pi #11060: /import before pi 1.5.2; pi would open the first by name):\n{listed}\n"
                       "give the file's path instead")


def most_recent_session(directory: str, unreadable: list | None = None) -> str:
    """``findMostRecentSession`` (C.24): the ``.jsonl`` with the newest mtime whose header pi
    accepts.  pi finds nothing (and starts a new session) when any ``.jsonl`` cannot be
    stat'ed: that is reported, naming the file, instead of skipping it."""
    stamped = []
    for name in _jsonl_names(directory, [] if unreadable is None else unreadable):
        p = os.path.join(directory, name)
        t = _mtime_ms(p)
        if t is None:
            raise PisessError("storage", f"{p} cannot be stat'ed: pi --continue finds no session in "
                              f"{directory} then (it starts a new one)", path=p)
        stamped.append((t, p))
    stamped.sort(key=lambda f: f[0], reverse=True)
    for _, p in stamped:
        if discovery_header(p, unreadable) is not None:
            return p
    raise PisessError("not_found", f"no sessions in {directory} (pi --continue would start a new one)")


def default_fork_dir(root: str, cwd: str) -> str:
    return os.path.join(root, encode_cwd(cwd))


def resume_prefix(session_id: str, directory: str) -> str:
    """The shortest prefix of ``session_id`` (at least 8 characters) that no other session in
    ``directory`` has now: what to give ``pi --session`` (pi matches a prefix against the
    project's sessions first).  Two forks made in the same minute share their first 8."""
    try:
        names = [n for n in os.listdir(directory) if n.endswith(".jsonl")]
    except OSError:  # the hint is only a hint: the full id then
        return session_id
    ids = [session_id]
    for name in names:
        h = discovery_header(os.path.join(directory, name))
        if h is not None:
            ids.append(h["id"])
    return session_id[:unique_prefix_width(ids)]
