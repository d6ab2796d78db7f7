"""The search index's background indexer.

A search (or ``ls --search``) that finds more of its sessions not indexed yet than it may index
before answering (``DEFER`` bytes: new sessions, big appends) answers by the scan and leaves them to
a detached ``pisess cache index --background LIST`` at low priority (``start``), so the next search
is answered by the index; a small append is indexed by the search itself.  ``PISESS_INDEX_SYNC=1``
makes every search index first, as ``pisess cache index`` always does.  One indexer at a time: the
lock (``search.database.lock_indexer``) is taken before the child starts and held by it until it ends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: bytes of sessions a search indexes before it answers (an append, a few new sessions); when the
#: index lacks more, the search scans and the index is built in the background
DEFER = 8 << 20


def limit(environ: Mapping[str, str]) -> int | None:
    """What a search may index first (``DEFER``), or ``None`` (no limit: ``PISESS_INDEX_SYNC=1``)."""
    value = environ.get("PISESS_INDEX_SYNC", "").strip().lower()
    return None if value not in ("", "0", "no", "false", "off") else DEFER


def start(files: list[str]) -> bool | None:
    """Start indexing ``files`` for search in a detached process at low priority (``pisess cache
    index --background``), unless one runs already: ``True`` when started, ``False`` when one runs,
    ``None`` when none can be (no cache, no lock, the process cannot start).

    The lock is taken here and handed to the child (an inherited descriptor), so it is held from
    before the child starts until it ends: never two at once.  The files are passed in a list
    file in the cache directory (NUL-separated; the child removes it once read)."""
    import subprocess
    import sys
    import tempfile

    from pisess.core.analyses.search.database import indexer_running, lock_indexer
    from pisess.core.reading import cache

    directory = cache.current().directory
    if directory is None:
        return None
    fd = lock_indexer(directory)
    if fd is None:
        return False if indexer_running(directory) else None
    listing = None
    try:
        out, listing = tempfile.mkstemp(prefix=".tmp-", suffix=cache.SUFFIX, dir=directory)
        with os.fdopen(out, "wb") as fh:
            fh.write(b"\0".join(map(os.fsencode, files)))
        subprocess.Popen([sys.executable, "-m", "pisess", "cache", "index", "--background", listing],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, pass_fds=(fd,))
        return True
    except OSError:
        if listing is not None:
            try:
                os.unlink(listing)
            except OSError:
                pass
        return None
    finally:
        os.close(fd)


def say(pending: int, started: bool | None) -> None:
    """What a search that scanned because the index lacked ``pending`` bytes tells the user."""
    from pisess.cli import common  # (here: search's lean path asks ``limit`` without Typer)

    mib = f"{pending / 1048576:,.0f} MiB"
    if started:
        common.say(f"pisess: the search index lacks {mib} of these sessions: this search scanned them, and they are "
                   "being indexed in the background for the next one (pisess cache index: now)")
    elif started is False:
        common.say(f"pisess: the search index lacks {mib} of these sessions (being indexed in the background): "
                   "this search scanned them")


def run(listing: str) -> None:
    """``pisess cache index --background LIST``, the child ``start`` starts: index the files named
    in ``LIST`` (a list file in the cache directory, removed once read) into that directory's search
    index, at low priority, saying nothing.  A cache directory or list that is gone ends it quietly,
    making nothing again."""
    from pisess.core.analyses.search.database import indexer_running
    from pisess.core.analyses.search.update import build
    from pisess.core.reading import cache

    directory = os.path.dirname(os.path.abspath(listing))
    name = os.path.basename(listing)
    # a list ``start`` wrote: named so, in a cache directory whose indexer lock ``start`` took and
    # handed to this process; anything else (a file of the user's given by hand) is neither read
    # nor removed
    if not (name.startswith(".tmp-") and name.endswith(cache.SUFFIX)) or not indexer_running(directory):
        return
    try:
        with open(listing, "rb") as fh:
            data = fh.read()
        os.unlink(listing)
    except OSError:
        return
    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    cache.configure(cache.Settings(directory=directory, cap=cache.current().cap))
    build([os.fsdecode(p) for p in data.split(b"\0") if p], create=False)
