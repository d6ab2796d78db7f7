"""The sets of sessions ``search``, ``stats`` and ``du`` read: the current project's session files
(pi's per-project directory), every project's (``all_projects``), or files, ids and directories
named by the user.  Reading them is ``reading.scan``'s; where each entry sits, ``model.placement``'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from .. import js, versions
from ..errors import PisessError
from ..reading.files import os_error
from .paths import encode_cwd, iter_jsonl, list_children, project_dirs, session_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _jsonl_children(directory: str, unreadable: list, *, missing_ok: bool = True) -> list[str]:
    """``*.jsonl`` directly in ``directory`` that are not directories (pi's listing rule), in
    byte-wise name order; what cannot be listed or examined is added to ``unreadable``."""
    names = []
    for d in list_children(directory, unreadable, missing_ok=missing_ok):
        if not d.name.endswith(".jsonl"):
            continue
        try:
            if d.is_dir(follow_symlinks=False):
                continue
        except OSError as e:
            unreadable.append(os_error(d.path, e, "stat"))
            continue
        names.append(d.name)
    # (ASCII names sort as their bytes do; 100,000 of them are one sort of strings)
    names.sort(key=None if "".join(names).isascii() else os.fsencode)
    prefix = os.path.join(directory, "")  # (each entry's path: the directory listed, joined to its name)
    return [prefix + n for n in names]


@dataclass(frozen=True)
class Scope:
    """The files a command reads and how they were chosen."""

    files: list  # paths, no duplicates, in the order given (listing: byte-wise name order)
    label: str  # "this project", "all projects", "3 files"
    missing: list  # PisessError for names that match nothing
    unreadable: list = field(default_factory=list)  # PisessError per directory or file that could not be read
    empty: list = field(default_factory=list)  # directories named that hold no *.jsonl


def collect(names: Iterable[str] | None, root: str, cwd: str, all_projects: bool = False, *,
            pi_version: str = versions.CURRENT) -> Scope:
    """Files named (paths, ids, id prefixes, directories), else the project's or every project's.
    An id or prefix is looked up as pi ``pi_version`` looks it up (``repo.resolve_session``).

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
            path = session_path(n)
            if path is None:  # an id or a prefix: the listing's (imported for it alone: a path needs none of it)
                from .repo import resolve_session

                path = resolve_session(n, root, cwd, pi_version=pi_version, unreadable=unreadable)
            files.append(path)
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


def created_key(header: Any, fallback_mtime: float = 0.0) -> tuple:
    """Sort key for "newest first": the header timestamp as pi's listing reads it (``Date``)."""
    ts = header.get("timestamp") if isinstance(header, dict) else None
    ms = js.parse_date(ts) if isinstance(ts, str) else None
    return (0, -ms) if ms is not None else (1, -fallback_mtime)
