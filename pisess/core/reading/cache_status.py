"""What the cache directory holds and whether reads can use it: ``pisess cache``'s answer.

Apart from ``cache``, which every run imports (the CLI configures it, every read goes through it):
a run that only reads through the cache does not create these dataclasses (a millisecond of a
warm ``pisess search``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import cache


@dataclass(frozen=True)
class Usage:
    """What the cache directory holds."""

    directory: str
    exists: bool
    entries: int
    size: int  # bytes


@dataclass(frozen=True)
class Status:
    """``pisess cache``: where the cache is, whether reads use it, what it holds, and why nothing
    can be cached there (``problem``), if so."""

    usage: Usage
    enabled: bool
    index_bytes: int  # the search index (``cache.SEARCH_INDEX`` and SQLite's files beside it)
    cap: int
    problem: str | None

    def to_json(self) -> dict:
        u = self.usage
        return {"cache": {"directory": u.directory, "enabled": self.enabled, "exists": u.exists,
                          "entryCount": u.entries, "bytes": u.size, "searchIndexBytes": self.index_bytes,
                          "cap": self.cap, "problem": self.problem}}


def status(directory: str, enabled: bool) -> Status:
    return Status(usage(directory), enabled, cache.search_index_size(directory), cache.current().cap,
                  location_problem(directory))


def location_problem(directory: str) -> str | None:
    """Why ``directory`` cannot hold a cache (a file, a link to nothing, another user's, a
    directory that cannot be written or made), or ``None``.  Whether it can be written is tried
    (a temporary file made and removed): permissions do not tell a read-only disk, nor stop root."""
    if os.path.islink(directory) and not os.path.exists(directory):
        return f"is a link to {os.readlink(directory)}, which does not exist"
    if os.path.lexists(directory) and not os.path.isdir(directory):
        return "is not a directory"
    if not os.path.isdir(directory):
        parent = os.path.dirname(os.path.abspath(directory))
        while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            return f"cannot be made: {parent} is not a directory"
        return None if os.access(parent, os.W_OK | os.X_OK) else f"cannot be made: {parent} is not writable"
    if hasattr(os, "getuid") and os.stat(directory).st_uid != os.getuid():
        return "belongs to another user"
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".tmp-probe-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"cannot be written ({e.strerror or e})"
    return None


def usage(directory: str) -> Usage:
    """What ``directory`` holds: its entries as ``cache clear`` counts them (``cache.entries_of``),
    and the bytes of every file of the cache in it."""
    return Usage(directory, os.path.isdir(directory), len(cache.entries_of(directory)),
                 sum(f[1] for f in cache.files_of(directory) if not os.path.basename(f[2]).startswith(".tmp-")))
