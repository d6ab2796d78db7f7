"""Where sessions live and how pi lists them (spec §1, §8).

Nothing here creates a directory: pi's CLI ``mkdir -p``s the per-project folder just by computing
it; pisess only looks.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from . import js, parallel
from .errors import PisessError
from .jsonl import parse_json
from .session import check_harness_header


def encode_cwd(cwd: str) -> str:
    """``/home/u/proj`` → ``--home-u-proj--`` (one leading separator removed, ``/\\:`` → ``-``)."""
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def sessions_root(explicit: str | None, environ: Mapping[str, str], home: str) -> str:
    """``--sessions-dir``, else ``$PI_CODING_AGENT_DIR/sessions``, else ``~/.pi/agent/sessions``."""
    if explicit:
        return os.path.expanduser(explicit)
    agent = environ.get("PI_CODING_AGENT_DIR", "")
    if agent:
        if agent.startswith("file://"):
            from urllib.parse import unquote, urlparse

            agent = unquote(urlparse(agent).path)
        if agent == "~" or agent.startswith("~/"):
            agent = home + agent[1:]
        return os.path.join(agent, "sessions")
    return os.path.join(home, ".pi", "agent", "sessions")


def absolute_cwd(cwd: str, base: str) -> str:
    """``path.resolve``: absolute and normalised, symlinks not resolved."""
    return os.path.normpath(os.path.join(base, os.path.expanduser(cwd)))


@dataclass(frozen=True)
class SessionInfo:
    """One listed session: pi's harness metadata (first line only)."""

    id: str
    created_at: str
    cwd: str
    path: str
    parent_session_path: str | None = None
    metadata: dict | None = None
    has_metadata: bool = False
    size: int = 0

    def to_json(self) -> dict:
        out: dict = {"id": self.id, "createdAt": self.created_at, "cwd": self.cwd, "path": self.path}
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
    sessions: list
    skipped: list
    directories: list = field(default_factory=list)


def _first_line(fd: int) -> bytes:
    """The first physical line as Node's ``readline`` ends it (``\\n``, ``\\r\\n`` or a lone ``\\r``)."""
    chunks = []
    size = 1024  # a header is a few hundred bytes; a bigger first read only copies more
    while True:
        chunk = os.read(fd, size)
        if not chunk:
            break
        n, r = chunk.find(b"\n"), chunk.find(b"\r")
        cut = n if r < 0 else (r if n < 0 else min(n, r))
        if cut >= 0:
            chunks.append(chunk[:cut])
            break
        chunks.append(chunk)
        size = 65536
    return b"".join(chunks)


def first_line(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return _first_line(fd)
    finally:
        os.close(fd)


_OPEN_HEADER = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the listing


def read_header_info(path: str, *, regular: bool = False) -> SessionInfo:
    """pi's ``loadJsonlSessionMetadata``: only the first line, validated as a header.

    ``regular``: the directory listing already said this is a regular file (no ``fstat``)."""
    try:
        fd = os.open(path, _OPEN_HEADER)
        try:
            if not regular:
                mode = os.fstat(fd).st_mode
                if stat.S_ISDIR(mode):
                    raise IsADirectoryError(21, "Is a directory")
                if not stat.S_ISREG(mode):
                    raise OSError(0, "not a regular file")
            line = _first_line(fd)
            size = os.lseek(fd, 0, os.SEEK_END)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise PisessError("not_found", f"Failed to read session header {path}: not found", path=path) from None
    except OSError as e:
        raise PisessError("storage", f"Failed to read session header {path}: {e.strerror or e}", path=path) from None
    if line[:1] != b"{" and js.js_blank(line.decode("utf-8", "replace")):
        raise PisessError("invalid_session", "missing session header", path=path, line=1)
    v = parse_json(line)
    reason = check_harness_header(v)
    if reason:
        raise PisessError("invalid_session", reason, path=path, line=1)
    return SessionInfo(v["id"], v["timestamp"], v["cwd"], path, v.get("parentSession"), v.get("metadata"),
                       "metadata" in v, size)


def _session_files(directory: str) -> list[tuple[str, bool]]:
    """``*.jsonl`` children that are not directories (symlinked files count), byte-wise name order,
    each with whether the listing says it is a regular file (``d_type``: no ``fstat`` needed)."""
    try:
        with os.scandir(directory) as it:
            found = [(e.name, e.is_file(follow_symlinks=False)) for e in it
                     if e.name.endswith(".jsonl") and not e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise PisessError("storage", f"Failed to list sessions in {directory}: {e.strerror or e}",
                          path=directory) from None
    if all(name.isascii() for name, _ in found):
        found.sort()  # ASCII names sort the same as their bytes (names are unique: the flag never decides)
    else:
        found.sort(key=lambda f: os.fsencode(f[0]))
    prefix = os.path.join(directory, "")  # what DirEntry.path would be
    return [(prefix + name, regular) for name, regular in found]


def project_dirs(root: str) -> list[str]:
    """Direct children of the root that are real directories (``lstat``: symlinks skipped, as pi does)."""
    try:
        names = sorted(os.listdir(root), key=os.fsencode)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as e:
        raise PisessError("storage", f"Failed to list sessions root {root}: {e.strerror or e}", path=root) from None
    out = []
    for name in names:
        p = os.path.join(root, name)
        try:
            if stat.S_ISDIR(os.lstat(p).st_mode):
                out.append(p)
        except OSError:
            continue
    return out


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


def list_sessions(root: str, cwd: str | None = None, *, keep_going: bool = False) -> Listing:
    """HARNESS ``JsonlSessionRepo.list``: first line of each file, newest header first.

    Files whose header is invalid are skipped (and reported); any other I/O error fails the
    listing naming the file, unless ``keep_going`` (then it is reported as skipped too).
    """
    dirs = [os.path.join(root, encode_cwd(cwd))] if cwd is not None else project_dirs(root)
    files = [f for d in dirs for f in _session_files(d)]
    sessions, skipped = [], []
    for (p, _), got in zip(files, _headers(files)):
        if type(got) is SessionInfo:
            sessions.append(got)
        elif got.code != "invalid_session" and not keep_going:
            raise got
        else:
            skipped.append(Skipped(p, got.code, got.message))
    if _all_canonical_utc([x.created_at for x in sessions]):
        # the same order, found without parsing: these strings sort as their instants do
        order = sorted(range(len(sessions)), key=lambda i: sessions[i].created_at, reverse=True)
        return Listing([sessions[i] for i in order], skipped, dirs)
    times = [js.parse_date(x.created_at) for x in sessions]
    if all(t is not None for t in times):
        # a stable sort, newest first: the same order as pi's comparator when every date parses
        order = sorted(range(len(sessions)), key=cast("list[float]", times).__getitem__, reverse=True)
        sessions = [sessions[i] for i in order]
    else:
        sessions.sort(key=functools.cmp_to_key(_by_created_desc))
    return Listing(sessions, skipped, dirs)


SHARE_MIN = 1000  # headers per process: with fewer, a fork and sending the headers back cost more than they save


def _headers(files: list[tuple[str, bool]]) -> list:
    """``read_header_info`` of each ``(path, regular)``: its ``SessionInfo``, or the ``PisessError``
    it raised.

    Thousands of files are shared among forked processes (``parallel.workers``): the time goes
    to open/read/close, and each CPU makes its own."""
    import gc

    enabled = gc.isenabled()
    gc.disable()  # thousands of small objects, none in a cycle
    try:
        n = len(files)
        parts = min(parallel.workers(limit=8), n // SHARE_MIN) if n >= 2 * SHARE_MIN else 1
        if parts < 2:
            return _read_headers(files)
        # the parent also rebuilds what the children send: a slightly smaller share for it
        cuts = [0, n * 9 // (10 * parts)]
        cuts += [cuts[1] + (n - cuts[1]) * k // (parts - 1) for k in range(1, parts)]
        shares = list(zip(cuts[1:], cuts[2:]))
        children = []
        try:
            for a, b in shares:
                children.append(parallel.Child(_sent_headers, files[a:b]))
            out = _read_headers(files[:cuts[1]])
            for child, (a, b) in zip(children, shares):
                out += _received_headers(files[a:b], child.result())
            return out
        finally:
            for child in children:
                child.cancel()
    finally:
        if enabled:
            gc.enable()


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
    a header's fields after its path, or ``None`` and an error's code, message and line."""
    return [(s.id, s.created_at, s.cwd, s.parent_session_path, s.metadata, s.has_metadata, s.size)
            if type(s) is SessionInfo else (None, s.code, s.message, s.line) for s in _read_headers(files)]


def _received_headers(files: list[tuple[str, bool]], sent: list[tuple] | None) -> list:
    if sent is None or len(sent) != len(files):
        return _read_headers(files)  # the child failed: read its share here
    return [SessionInfo(t[0], t[1], t[2], p, *t[3:]) if t[0] is not None else
            PisessError(t[1], t[2], path=p, line=t[3]) for (p, _), t in zip(files, sent)]


def iter_jsonl(paths: list[str]) -> Iterator[tuple[str, PisessError | None]]:
    """Files named, and ``*.jsonl`` below directories named (recursively, sorted)."""
    for p in paths:
        if os.path.isdir(p):
            found = []
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                for f in filenames:
                    if f.endswith(".jsonl"):
                        found.append(os.path.join(dirpath, f))
            yield from ((f, None) for f in sorted(found))
        elif os.path.lexists(p):
            yield p, None
        else:
            yield p, PisessError("not_found", f"no such file or directory: {p}", path=p)


def looks_like_path(arg: str) -> bool:
    """pi's ``--session`` rule: a ``/`` or ``\\`` or a ``.jsonl`` ending makes it a path."""
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def resolve_session(arg: str | None, root: str, cwd: str) -> str:
    """A file path, a full id, a unique id prefix (current project first, then all), or the
    newest session of the current project when ``arg`` is empty."""
    if arg and (looks_like_path(arg) or os.path.isfile(arg)):
        if not os.path.lexists(arg):
            raise PisessError("not_found", f"no such session file: {arg}", path=arg)
        return arg
    here = list_sessions(root, cwd, keep_going=True).sessions
    if not arg:
        if not here:
            raise PisessError("not_found", f"no sessions for {cwd} in {os.path.join(root, encode_cwd(cwd))}")
        return here[0].path
    for scope in (here, None):
        pool = here if scope is not None else list_sessions(root, None, keep_going=True).sessions
        exact = [s for s in pool if s.id == arg]
        if exact:
            return exact[0].path
        matches = [s for s in pool if s.id.startswith(arg)]
        if len(matches) == 1:
            return matches[0].path
        if len(matches) > 1:
            listed = "\n".join(f"  {s.id}  {s.path}" for s in matches[:20])
            raise PisessError("ambiguous", f"session id prefix {arg!r} matches {len(matches)} sessions:\n{listed}")
    raise PisessError("not_found", f"no session matches {arg!r} (looked in {root})")


def default_fork_dir(root: str, cwd: str) -> str:
    return os.path.join(root, encode_cwd(cwd))


def file_info(path: str) -> dict[str, Any]:
    st = os.stat(path)
    return {"size": st.st_size, "mtime": st.st_mtime}
