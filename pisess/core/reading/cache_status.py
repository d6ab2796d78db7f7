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
    return Status(usage(directory), enabled, cache.search_index_size(directory), cache.current().cap, location_problem(directory))


def location_problem(directory: str) -> str | None:
    """Why ``directory`` cannot hold a cache (a file, a link to nothing), or ``None``."""
    if os.path.islink(directory) and not os.path.exists(directory):
        return f"is a link to {os.readlink(directory)}, which does not exist"
    if os.path.lexists(directory) and not os.path.isdir(directory):
        return "is not a directory"
    return None


def usage(directory: str) -> Usage:
    files = [f for f in cache.files_of(directory) if not os.path.basename(f[2]).startswith(".tmp-")]
    return Usage(directory, os.path.isdir(directory), sum(1 for f in files if f[2].endswith(cache.SUFFIX)),
                 sum(f[1] for f in files))
