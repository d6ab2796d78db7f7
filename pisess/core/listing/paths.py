"""Where sessions live (spec §1): the sessions root, a project's directory in it, and the files a
command's names name.

``repo`` lists and resolves sessions on top of these.  A command given paths needs nothing more
(``sessionset.collect``), and importing only this spares it the listing's dataclasses and forked
reads (a few milliseconds of a warm ``pisess search``, which answers in tens).

Nothing here creates a directory: pi's CLI ``mkdir -p``s the per-project folder just by computing
it; pisess only looks.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping

from ..errors import PisessError
from ..reading.files import list_dir, os_error


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


def where(sessions_dir: str | None, cwd: str | None, environ: Mapping[str, str], home: str) -> tuple[str, str]:
    """The sessions root and the project directory a command looks at: ``sessions_dir`` or pi's
    (``sessions_root``), and ``cwd`` (relative to the shell's directory) or the shell's directory,
    as the user typed it (``$PWD`` where it is this process's directory: pi names a project by the
    path it was started from, symlinks and all), else the real one."""
    here = environ.get("PWD") or os.getcwd()
    try:
        if not os.path.samefile(here, os.getcwd()):
            here = os.getcwd()
    except OSError:
        here = os.getcwd()
    return (sessions_root(sessions_dir, environ, home),
            absolute_cwd(cwd, here) if cwd else os.path.normpath(here))


def list_children(directory: str, unreadable: list, *, missing_ok: bool = True) -> list[os.DirEntry]:
    """The entries of ``directory``; one that cannot be listed is added to ``unreadable`` (a
    missing one too unless ``missing_ok``: a project without sessions has no directory, but a
    listed child that vanished or a dangling symlink is worth saying) and gives none."""
    try:
        return list_dir(directory)
    except PisessError as e:
        if not (missing_ok and e.code == "not_found") and not _not_a_directory(directory):
            unreadable.append(e)
        return []


def _not_a_directory(path: str) -> bool:
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode) and os.path.exists(path)
    except OSError:
        return False


def root_children(root: str) -> list[os.DirEntry]:
    """The sessions root's entries; none when it does not exist (the command says so when it was
    named); a root that cannot be listed raises: nothing under it can be read."""
    try:
        return list_dir(root)
    except PisessError as e:
        if e.code == "not_found" or _not_a_directory(root):
            return []
        raise PisessError(e.code, f"cannot list the sessions root {root}: {e.reason.removeprefix('cannot list: ')}",
                          path=root, reason=e.reason, unreadable=True) from None


def project_dirs(root: str, unreadable: list | None = None) -> list[str]:
    """Direct children of the root that are real directories (``lstat``: symlinks skipped, as pi
    does).  A root that cannot be listed raises; a child that cannot be ``lstat``ed is added to
    ``unreadable``."""
    names = sorted((e.name for e in root_children(root)), key=os.fsencode)
    out = []
    for name in names:
        p = os.path.join(root, name)
        try:
            if stat.S_ISDIR(os.lstat(p).st_mode):
                out.append(p)
        except OSError as e:
            if unreadable is not None:
                unreadable.append(os_error(p, e, "stat"))
    return out


def iter_jsonl(paths: list[str], empty: list | None = None) -> Iterator[tuple[str, PisessError | None]]:
    """Files named, and ``*.jsonl`` below directories named (recursively, sorted), each with
    ``None``; a name that matches nothing and a directory that cannot be listed come with their
    error (unreadable) instead.  A directory named that holds no ``*.jsonl`` (and could be
    listed) is appended to ``empty``."""
    for p in paths:
        if os.path.isdir(p):
            found: list[str] = []
            failed: list[OSError] = []
            for dirpath, dirnames, filenames in os.walk(p, onerror=failed.append):
                dirnames.sort()
                for f in filenames:
                    if f.endswith(".jsonl"):
                        found.append(os.path.join(dirpath, f))
            yield from ((f, None) for f in sorted(found))
            if not found and not failed and empty is not None:
                empty.append(p)
            for e in failed:
                err = os_error(e.filename or p, e, "list")
                yield err.path or p, err
        elif os.path.lexists(p):
            yield p, None
        elif not p:
            yield p, PisessError("not_found", "an empty path names no file", path=p, unreadable=True)
        else:
            yield p, PisessError("not_found", f"no such file or directory: {p}", path=p, unreadable=True)


def looks_like_path(arg: str) -> bool:
    """pi's ``--session`` rule: a ``/`` or ``\\`` or a ``.jsonl`` ending makes it a path."""
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


def session_path(arg: str | None) -> str | None:
    """``arg`` when it names a file as pi's ``--session`` takes one (a path by its form, or an
    existing file: ``repo.resolve_session``'s first rule); ``None`` for an id, an id prefix or no
    ``arg``.  A path to nothing raises (not found, unreadable)."""
    if arg and (looks_like_path(arg) or os.path.isfile(arg)):
        if not os.path.lexists(arg):
            raise PisessError("not_found", f"no such session file: {arg}", path=arg, unreadable=True)
        return arg
    return None
