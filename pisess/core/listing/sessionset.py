"""What ``search``, ``stats`` and ``du`` share: which files, one streaming scan, where each entry sits.

* **Which files.** The current project's session files (pi's per-project directory), every
  project's (``all_projects``), or files, ids and directories named by the user.
* **One scan.** ``scan_visit`` reads a file once, in chunks, like ``jsonl.scan_file``: each entry
  line is parsed once, handed complete to a visitor (usage, images...), then kept light.  Memory
  grows with the number of entries, not with bytes.
* **Where an entry sits** (``place``): ``active`` (on the path from the root to the leaf and in
  what the model sees), ``retained`` (on that path before the checkpoint, but kept verbatim by it:
  the model sees the copy in the checkpoint's ``retainedTail``), ``compacted`` (on that path but
  before the compaction checkpoint: the model sees the summary instead) or ``branch`` (anywhere
  else: abandoned branches, ``leaf`` records).
  The leaf, the path and the checkpoint are the ones ``tree`` marks, for the session's reader.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import orjson

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..reading.files import open_file, os_error
from ..reading.jsonl import (
    NOT_JSON,
    RawFile,
    RawLine,
    first_line_value,
    is_blank,
    iter_lines,
    lighten,
    open_fd,
    parse_json,
    storage_error,
)
from ..reading.session import Session, open_read
from ..reading.store import EntryStore
from .repo import encode_cwd, iter_jsonl, list_children, project_dirs, resolve_session

WHERE = ("active", "retained", "compacted", "branch")

# --- which files -----------------------------------------------------------------------------------


def _jsonl_children(directory: str, unreadable: list, *, missing_ok: bool = True) -> list[str]:
    """``*.jsonl`` directly in ``directory`` that are not directories (pi's listing rule), in
    byte-wise name order; what cannot be listed or examined is added to ``unreadable``."""
    out = []
    for d in list_children(directory, unreadable, missing_ok=missing_ok):
        if not d.name.endswith(".jsonl"):
            continue
        try:
            if d.is_dir(follow_symlinks=False):
                continue
        except OSError as e:
            unreadable.append(os_error(d.path, e, "stat"))
            continue
        out.append((os.fsencode(d.name), d.path))
    out.sort()
    return [p for _, p in out]


@dataclass(frozen=True)
class Scope:
    """The files a command reads and how they were chosen."""

    files: list  # paths, no duplicates, in the order given (listing: byte-wise name order)
    label: str  # "this project", "all projects", "3 files"
    missing: list  # PisessError for names that match nothing
    unreadable: list = field(default_factory=list)  # PisessError per directory or file that could not be read
    empty: list = field(default_factory=list)  # directories named that hold no *.jsonl


def collect(names: Iterable[str] | None, root: str, cwd: str, all_projects: bool = False) -> Scope:
    """Files named (paths, ids, id prefixes, directories), else the project's or every project's.

    No header is read for a listing: a directory's ``*.jsonl`` files are taken as they are (files
    that turn out not to be sessions are reported by the command that opens them)."""
    names = [n for n in (names or []) if n is not None]
    if names and all_projects:
        raise PisessError("usage", "name sessions or use --all, not both")
    files: list[str] = []
    missing: list = []
    unreadable: list = []
    empty: list = []
    if not names:
        dirs = project_dirs(root, unreadable) if all_projects else [os.path.join(root, encode_cwd(cwd))]
        for d in dirs:
            files.extend(_jsonl_children(d, unreadable, missing_ok=not all_projects))
        return Scope(files, "all projects" if all_projects else "this project", [], unreadable)
    for n in names:
        if os.path.isdir(n):
            before = len(files)
            for p, err in iter_jsonl([n]):
                if err is None:
                    files.append(p)
                else:
                    (missing if err.code == "not_found" and err.path == n else unreadable).append(err)
            if len(files) == before:
                empty.append(n)
            continue
        try:
            files.append(resolve_session(n, root, cwd, unreadable=unreadable))
        except PisessError as e:
            if e.code not in ("not_found", "ambiguous"):
                raise
            missing.append(e)
    seen: set = set()
    unique = []
    for p in files:
        k = os.path.realpath(p)
        if k not in seen:
            seen.add(k)
            unique.append(p)
    count = len(unique)
    return Scope(unique, f"{count} file{'s' if count != 1 else ''}", missing, _once(unreadable), empty)


def _once(errors: list) -> list:
    """Each unreadable path once (two names may meet the same directory)."""
    seen: set = set()
    out = []
    for e in errors:
        if e.path not in seen:
            seen.add(e.path)
            out.append(e)
    return out


def header_of(path: str) -> dict | None:
    """The first line as a header object (``type: session``), or ``None``; never raises and never
    opens anything but a regular file."""
    v = first_line_value(path)
    return v if isinstance(v, dict) and v.get("type") == "session" else None


def created_key(header: Any, fallback_mtime: float = 0.0) -> tuple:
    """Sort key for "newest first": the header timestamp as pi's listing reads it (``Date``)."""
    ts = header.get("timestamp") if isinstance(header, dict) else None
    ms = js.parse_date(ts) if isinstance(ts, str) else None
    return (0, -ms) if ms is not None else (1, -fallback_mtime)


# --- one scan --------------------------------------------------------------------------------------

Visitor = Callable[[int, Any, bytes], None]


def line_blocks(path: str, tick: Callable[[int], None] | None, block: int) -> Iterator[tuple[bytearray, int, int]]:
    """``(buffer, end, offset)``: ``buffer[:end]`` holds whole lines (the last one may be
    unterminated at the end of the file) starting at byte ``offset`` of the file.  One buffer is
    reused: use it before taking the next item."""
    buf = bytearray(block)
    keep = 0
    offset = 0
    with open_file(path, subject="session") as fh:
        while True:
            if keep == len(buf):  # one line longer than the buffer
                buf.extend(bytes(len(buf)))
            try:
                n = fh.readinto(memoryview(buf)[keep:])
            except OSError as e:
                raise storage_error(path, e) from None
            if tick and n:
                tick(n)
            end = keep + n
            if not n:
                if keep:
                    yield buf, keep, offset
                return
            cut = buf.rfind(b"\n", 0, end)
            if cut < 0:
                keep = end
                continue
            yield buf, cut + 1, offset
            offset += cut + 1
            keep = end - cut - 1
            buf[:keep] = buf[cut + 1:end]


def read_small(path: str, limit: int) -> bytes | None:
    """The file's ``st_size`` first bytes when that is at most ``limit``, else ``None`` (nothing
    read).  What is appended meanwhile is left for the next run."""
    fd, st = open_fd(path)
    try:
        size = st.st_size
        if size > limit:
            return None
        data = os.read(fd, size) if size else b""
        if len(data) < size:  # a short read: collect the rest
            parts = [data]
            got = len(data)
            while got < size:
                b = os.read(fd, size - got)
                if not b:
                    break
                parts.append(b)
                got += len(b)
            data = b"".join(parts)
        return data
    except OSError as e:
        raise storage_error(path, e) from None
    finally:
        os.close(fd)


def parse_line(raw: bytes) -> Any:
    """The line parsed exactly as ``jsonl.scan_file`` parses it."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return parse_json(raw)
    except RecursionError:
        return NOT_JSON


def scan_visit(path: str, visit: Visitor | None = None, tick: Callable[[int], None] | None = None) -> RawFile:
    """One pass: every non-blank line parsed, ``visit(number, value, raw)`` called on each parsed
    value, then the value kept light (as ``scan_file(path, light=True)`` keeps it)."""
    lines: list[RawLine] = []
    append = lines.append
    size = 0
    last_nl = True
    for number, offset, raw, terminated in iter_lines(path, tick):
        n = len(raw)
        size = offset + n + terminated
        last_nl = terminated
        if is_blank(raw):
            append(RawLine(number, offset, n, True, None))
            continue
        v = parse_line(raw)
        if visit is not None and v is not NOT_JSON:
            visit(number, v, raw)
        append(RawLine(number, offset, n, False, lighten(v, offset, n)))
    return RawFile(path, size, lines, last_nl, True)


def open_lenient(path: str, reader: str, raw: RawFile | None,
                 pi_version: str = versions.CURRENT) -> tuple[Session, str | None]:
    """``open_session``; when the chosen reader refuses the file, the pi command's lenient reader
    (with a note saying so).  Raises when neither reads it.  Without ``raw`` the file is read
    light (structure only, see ``open_session``)."""
    return open_read(path, reader, raw, light=raw is None, lenient=True, pi_version=pi_version)


# --- where each entry sits ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Per entry of ``session.entries`` (same order): where it sits and, off the active path (when
    asked for), the first entry of its abandoned branch: the child of the active path it hangs from."""

    where: list | dict  # "active" | "retained" | "compacted" | "branch" by position (a dict: of the positions asked for)
    branch_root: list | None  # entry or None (None on the active path); None when not asked for
    leaf_id: Any
    checkpoint: Any  # the compaction the context starts at, or None
    branch_points: int | None  # entries with more than one child; None when not asked for
    error: str | None = None  # the leaf or the path cannot be resolved


@dataclass(frozen=True)
class BranchPlacement(Placement):
    """A placement with the branches asked for (``place``'s default)."""

    branch_root: list
    branch_points: int


@overload
def place(session: Session, *, branches: Literal[True] = ..., positions: list | None = None) -> BranchPlacement: ...
@overload
def place(session: Session, *, branches: bool, positions: list | None = None) -> Placement: ...
def place(session: Session, *, branches: bool = True, positions: list | None = None) -> Placement:
    """Where each entry sits for the session's reader; with ``branches`` also the branch points
    and each abandoned branch's first entry.  With ``positions`` (and no ``branches``) ``where``
    maps only those entry positions (a search places its hits, not a million entries).  Placed on
    the store's positions: entries are built only for the context."""
    from ..model.context import retained_positions, select_entries
    from ..model.paths import cli_context_path, path_to_checkpoint
    from ..model.tree import current_leaf

    store = session.store
    leaf_id, leaf, error = current_leaf(session)
    active_at = _active_positions(session, leaf) or set()
    chosen: list | None = None  # None: the context could not be built, all of the path counts
    checkpoint = None
    if leaf is not None:
        try:
            if session.reader == "harness":
                walk = path_to_checkpoint(session, get(leaf, "id"))
            else:
                walk = cli_context_path(session, get(leaf, "id"))
            chosen = select_entries(session, walk)
            if chosen and get(chosen[0], "type") == "compaction":
                checkpoint = chosen[0]
        except PisessError as e:
            error = error or e.message
    where = _where_by_position(store, active_at, chosen, retained_positions(session, chosen))
    if not branches:
        if positions is not None:
            return Placement({i: where[i] for i in positions}, None, leaf_id, checkpoint, None, error)
        return Placement(where, None, leaf_id, checkpoint, None, error)
    parent = store.parent
    parent_of: list = [None] * len(store)
    kids: dict[int, int] = {}
    for i in range(len(store)):
        q = parent(i)
        if q is not None and q != i:
            parent_of[i] = q
            kids[q] = kids.get(q, 0) + 1
    root_of: dict[int, int] = {}
    roots = [None if w != "branch" else store[_branch_root(i, active_at, parent_of, root_of)]
             for i, w in enumerate(where)]
    return BranchPlacement(where, roots, leaf_id, checkpoint, sum(1 for n in kids.values() if n > 1), error)


def _where_by_position(store: EntryStore, active_at: set, chosen: list | None, retained: set) -> list:
    """``where`` of every position: ``branch`` off the active path, on it ``active`` when the
    context holds it (``chosen``; ``None``: the context could not be built, all of the path
    counts), ``retained`` when a checkpoint holds its copy (``retained``), else ``compacted``."""
    where = ["branch"] * len(store)
    if chosen is None:
        for i in active_at:
            where[i] = "active"
        return where
    position = store.position
    in_context = {position(e) for e in chosen}
    for i in active_at:
        where[i] = "active" if i in in_context else "retained" if i in retained else "compacted"
    return where


def _active_positions(session: Session, leaf: Any) -> set | None:
    """The positions on the path from ``leaf`` to its root (``None``: ``leaf`` is not one of the
    session's entries, see ``paths.walk_positions``)."""
    from ..model.paths import walk_positions

    got = walk_positions(session, leaf)
    return None if got is None else set(got[0])


def _branch_root(pos: int, active: set, parent_of: list, memo: dict) -> int:
    """Walk up until the parent is on the active path (or missing); memoised, cycle-safe."""
    chain = []
    seen: set = set()
    cur = pos
    while True:
        if cur in memo:
            root = memo[cur]
            break
        if cur in seen:  # a parentId cycle off the active path: its first member stands for it
            root = cur
            break
        seen.add(cur)
        chain.append(cur)
        p = parent_of[cur]
        if p is None or p in active:
            root = cur
            break
        cur = p
    for k in chain:
        memo[k] = root
    return root


def entry_id(e: Any) -> Any:
    v = get(e, "id") if isinstance(e, dict) else UNDEF
    return None if v is UNDEF else v


def session_name(session: Session) -> str | None:
    try:
        return session.session_name()
    except PisessError:
        return None
