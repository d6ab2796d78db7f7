"""Ids as people read them in a view and type them back: the shortest prefix that tells them apart.

pi's own ids are 8 hex characters, so 8 is always enough for them; other writers make longer ids
that share their first 8 characters (``oc-custom-a``, ``oc-custom-b``), and session ids made in
the same minute share 8 too.  Every view shows ids at one width per session (or listing), the
fewest characters at which no two of its ids look alike, and every argument that takes an id
accepts any prefix that names one.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from .errors import PisessError

MIN_PREFIX = 8
MAX_CANDIDATES = 10  # an ambiguous prefix's error names this many


def unique_prefix_width(ids: Iterable[Any], minimum: int = MIN_PREFIX) -> int:
    """The fewest characters, at least ``minimum``, at which no two distinct string ids of
    ``ids`` have the same prefix (``None`` and anything else that is not a string is ignored);
    an id shorter than that is shown whole."""
    seq = ids if isinstance(ids, (list, tuple)) else list(ids)
    try:
        longest = max(map(len, filter(None, seq)), default=0)
    except TypeError:  # numbers, objects: never shown as typed
        seq = [i for i in seq if type(i) is str]
        longest = max(map(len, seq), default=0)
    if longest <= minimum:  # pi's own ids (8 characters): one pass, nothing to compare
        return minimum
    distinct = set(seq)
    distinct.discard(None)
    n = len(distinct)
    # prefixes that differ at one width differ at every greater one: search the least
    lo, hi = minimum, longest
    while lo < hi:
        mid = (lo + hi) // 2
        if len(set(map(itemgetter(slice(0, mid)), distinct))) == n:
            hi = mid
        else:
            lo = mid + 1
    return lo


class PrefixWidth:
    """``unique_prefix_width`` of a growing set of ids (a followed session), updated per id."""

    def __init__(self, minimum: int = MIN_PREFIX) -> None:
        self.minimum = minimum
        self.width = minimum
        self._ids: set = set()
        self._prefixes: set = set()

    def add(self, eid: Any) -> None:
        if type(eid) is not str or eid in self._ids:
            return
        self._ids.add(eid)
        p = eid[:self.width]
        if p in self._prefixes:  # a new clash: the width grows, the prefixes are taken again
            self.width = unique_prefix_width(self._ids, self.minimum)
            self._prefixes = {i[:self.width] for i in self._ids}
        else:
            self._prefixes.add(p)


def matching_ids(prefix: str, ids: Iterable[Any]) -> list[str]:
    """The distinct string ids starting with ``prefix``, sorted."""
    if not prefix:
        return []
    return sorted({i for i in ids if type(i) is str and i.startswith(prefix)})


def resolve_entry_id(session: Any, arg: str, *, option: str = "entry id", keep_unknown: bool = False) -> str:
    """The entry id ``arg`` names in ``session``: itself when an entry has that id, else the one
    id it is a prefix of.  Several: ``ambiguous`` naming them (exit 1); none: a usage error
    naming the file (exit 2), or with ``keep_unknown`` ``arg`` itself (fork: pi's own error for
    an entry that is not there is the answer pi gives)."""
    if session.lookup(arg) is not None:
        return arg
    found = matching_ids(arg, session.store.string_ids())
    if len(found) == 1:
        return found[0]
    if found:
        store = session.store
        first_line = {}
        for pos, eid in enumerate(store.string_ids()):
            if eid in found and eid not in first_line:
                first_line[eid] = store.line(pos)
        listed = "\n".join(f"  {eid}  (line {first_line.get(eid, '?')})" for eid in found[:MAX_CANDIDATES])
        more = f"\n  \u2026 and {len(found) - MAX_CANDIDATES} more" if len(found) > MAX_CANDIDATES else ""
        raise PisessError("ambiguous", f"{option} {arg!r} is the prefix of {len(found)} entry ids; give more "
                          f"characters:\n{listed}{more}", path=session.path)
    if keep_unknown:
        return arg
    raise PisessError("usage", f"{option} {arg!r}: no entry has this id or an id starting with it",
                      path=session.path)


__all__ = ["MIN_PREFIX", "PrefixWidth", "matching_ids", "resolve_entry_id", "unique_prefix_width"]
