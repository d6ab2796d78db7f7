"""pi's ``/resume`` search over a listing (``ls --search``), narrowed by the search index."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ...errors import PisessError
from ...reading import cache
from .database import connect, damaged, index_path, move_aside, unusable
from .query import files_holding
from .update import Deferred, refresh

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def resume_search(sessions: list, query: str, *, defer: int | None = None,
                  on_defer: Callable[[int], None] | None = None) -> list:
    """The sessions of a listing (``SessionInfo``, in its order) that pi 1.6's ``/resume`` search
    keeps for ``query`` (``listing.resume_search``).  The session names are kept in the cache by
    each file's stat; a token's message text is read only for the files whose user and assistant
    text in the search index holds the token's letters (all files without a cache).  ``defer``
    and ``on_defer(bytes)``: as ``search_files``' (every file is read when the index lacks more
    than ``defer`` bytes).  Raises ``PisessError("usage")`` for a regular expression that does not
    compile."""
    from ...listing import resume_search as R
    from ...listing.summary import CliInfo, read_cli_info

    q = R.parse(query)
    if q.error:
        raise PisessError("usage", f"--search {query!r}: {q.error}")
    if q.mode == "tokens" and not q.tokens:
        return list(sessions)
    paths = [s.path for s in sessions]
    read: dict[str, Any] = {}

    def whole(p: str) -> Any:
        if p not in read:
            read[p] = read_cli_info(p, whole=True)
        return read[p]

    names = cache.by_stat(paths, "ls-name", lambda todo: [w.name if isinstance(w := whole(p), CliInfo) else None
                                                          for p in todo])
    holding: list | None = None
    failed: set[str] = set()
    runs = R.message_runs(q)
    directory = cache.current().directory
    if runs is not None and any(runs) and directory is not None:
        con = connect(directory)
        if con is not None:
            try:
                indexed = refresh(con, paths, defer=defer)
                failed = indexed.failed
                holding = [files_holding(con, r, ("user", "assistant"), indexed) if r else None for r in runs]
            except Deferred as d:
                if on_defer is not None:
                    on_defer(d.bytes)
            except sqlite3.Error as e:
                if damaged(e):
                    con.close()
                    move_aside(index_path(directory), e)
                else:
                    unusable(directory, e)
                holding = None
            finally:
                con.close()
    out = []
    for s, name in zip(sessions, names):
        def may(k: int, p: str = s.path) -> bool:
            return holding is None or holding[k] is None or p in holding[k] or p in failed

        def messages(p: str = s.path) -> str:
            w = whole(p)
            return (w.all_messages_text or "") if isinstance(w, CliInfo) else ""

        if R.matches(q, R.Candidate(name, s.id, s.cwd, messages, may)):
            out.append(s)
    return out


