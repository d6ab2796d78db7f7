"""Search the text of sessions, and say where each hit sits in the tree: the one front door,
``search_files``, answers through the search index where it can and by the scan otherwise, the
same hits either way.

What is searched, by field (``--in``):

==========  ================================================================================
user        user message text
assistant   assistant text blocks and error messages
thinking    assistant thinking blocks
tool        tool calls (the tool's name and every string in its arguments), tool results,
            ``bashExecution`` commands and output
summary     compaction and branch summaries
custom      ``custom_message`` content (extension messages the model sees), ``custom`` role messages
label       labels
name        session names (``session_info``)
system      pi 1.x system messages and compaction checkpoints: prompt text, sections, tool names
            and descriptions
edit        pi 1.x ``context_edit`` replacements (the text the model sees instead of the target's)
==========  ================================================================================

The parts, by job: ``matcher`` (the pattern), ``scan`` (reading the files themselves; the hits and
reports), and the search index in the cache (SQLite FTS5): ``database`` (its file, schema,
connection, damage, the indexer's lock), ``rows`` (what a line adds to it), ``update`` (bringing it
up to date with a set of files: refresh, prune, build), ``stats`` (the files' stats and the
digests of sets of them), ``listings`` (a project's listing, kept), ``places`` and ``codec``
(every entry of a file placed once, and kept), ``query`` (a search answered through it),
``resume`` (``ls --search``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ... import versions
from ...reading import cache
from .matcher import FIELDS, Matcher, make_matcher, parse_fields
from .scan import FileResult, Hit, Match, SearchReport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def search_files(files: list, m: Matcher, *, reader: str = "auto", active_only: bool = False,
                 tick: Callable[[int], None] | None = None, on_hits: Callable[[int], None] | None = None,
                 pi_version: str = versions.CURRENT, defer: int | None = None) -> SearchReport:
    """The hits of ``m`` in ``files``: through the search index when the cache is on and the
    pattern has literal text the index can look for (``via="index"``), else by the scan
    (``via="scan"``); the same hits either way.  A file that cannot be read or is not a session is
    set aside (``skipped``, ``unreadable``), never the end of the search.  ``on_hits(total)`` is
    called after each file with a hit (a progress bar's status).

    ``defer``: bytes the search may index first (new files, appended lines); when the index lacks
    more than that, the search scans and leaves them be, saying how many (``SearchReport.deferred``:
    the caller has them indexed in the background, ``pisess cache index``).  ``None``: no limit."""
    from .scan import scan_files

    kw: dict[str, Any] = {"reader": reader, "active_only": active_only, "tick": tick, "on_hits": on_hits,
                          "pi_version": pi_version}
    got = None
    if cache.current().directory is not None:
        from .query import search_indexed
        from .update import Deferred

        try:
            got = search_indexed(files, m, defer=defer, **kw)
        except Deferred as d:
            return replace(scan_files(files, m, **kw), deferred=d.bytes)
    return got if got is not None else scan_files(files, m, **kw)


__all__ = ["search_files", "make_matcher", "parse_fields", "Matcher", "FIELDS", "SearchReport", "FileResult", "Hit",
           "Match"]
