"""Where a warm ``pisess search`` spends its time (bench case 21's breakdown).

Run with the Python of the pisess being measured (a regular install), with the cache settings of
the search (``XDG_CACHE_HOME``, ``PISESS_CACHE``), after the index is built:

    python search_phases.py ROOT CWD PATTERN [REPEAT]

It runs the console script's lean path (``pisess.cli.lean_search.run``, what a warm search runs)
REPEAT times in this process (the cycle collector off, as in the console script), its output
thrown away, with each phase timed by wrapping the function that does it: the listing
(``listings.project``: the project's files, kept in the index or listed by ``collect``), the
stats and the digests of the set compared with the set kept (``stats.stat_all``), the rest of
bringing the index up to date (``update.refresh`` less ``stat_all``: the files of changed chunks
looked up), the query (``query.candidates``), the hits (lines read back, matched and placed:
``report_of``) and the printing (``_answer``).  A bare loop of the same stats (``os.stat`` from
each directory's descriptor, nothing else) is timed apart: ``stat_all`` less that is the
digests' Python.  Imports are timed once (the first run's).
Prints one JSON object: each phase's median wall and CPU milliseconds.
"""

from __future__ import annotations

import gc
import io
import json
import os
import statistics
import sys
import time

root, cwd, pattern = sys.argv[1:4]
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 5
clock = time.perf_counter
cpu = time.process_time

t0, c0 = clock(), cpu()
from pisess.cli import lean_search  # noqa: E402
from pisess.core.analyses.search import listings, query, stats, update  # noqa: E402
from pisess.core.listing import sessionset  # noqa: E402
from pisess.core.reading import cache  # noqa: E402

imports = ((clock() - t0) * 1000, (cpu() - c0) * 1000)
cache.configure(cache.from_environ(os.environ, os.path.expanduser("~")))
gc.disable()  # (as the console script runs: app.main turns the cycle collector off)

spent: dict[str, list[float]] = {}


def timed(name: str, fn):
    def run(*a, **k):
        w, c = clock(), cpu()
        try:
            return fn(*a, **k)
        finally:
            spent.setdefault(name, [0.0, 0.0])
            spent[name][0] += clock() - w
            spent[name][1] += cpu() - c
    return run


listings.project = timed("listing", listings.project)
stats.stat_all = timed("stats and digests", stats.stat_all)
update.refresh = timed("refresh", update.refresh)
query.candidates = timed("query", query.candidates)
query.report_of = timed("hits", query.report_of)
lean_search._answer = timed("printing", lean_search._answer)  # type: ignore[attr-defined]


def bare_stats(files: list[str]) -> None:
    """One ``os.stat`` per file from its directory's descriptor: the floor of ``stat_all``."""
    last, fd = None, None
    for p in files:
        d, _, name = p.rpartition("/")
        if d != last:
            if fd is not None:
                os.close(fd)
            fd, last = os.open(d or ".", os.O_RDONLY | os.O_DIRECTORY), d
        os.stat(name, dir_fd=fd)
    if fd is not None:
        os.close(fd)


args = ["search", pattern, "--sessions-dir", root, "--cwd", cwd]
files = sessionset.collect(None, root, cwd).files
rounds: list[dict] = []
for _ in range(repeat):
    spent.clear()
    w, c = clock(), cpu()
    bare_stats(files)
    bare = (clock() - w, cpu() - c)
    out, sys.stdout = sys.stdout, io.StringIO()
    err, sys.stderr = sys.stderr, io.StringIO()
    w, c = clock(), cpu()
    try:
        code = lean_search.run(args)
    finally:
        sys.stdout, sys.stderr = out, err
    total = (clock() - w, cpu() - c)
    if code is None:
        sys.exit("the lean path did not answer (is the index built, the cache on?)")
    s = {k: tuple(v) for k, v in spent.items()}
    sd = s.get("stats and digests", (0.0, 0.0))
    row = {
        "listing": s.get("listing", (0.0, 0.0)),
        "stats (bare loop, apart)": bare,
        "digests, kept set compared (stat_all less the bare loop)": (sd[0] - bare[0], sd[1] - bare[1]),
        "refresh less stat_all (changed files looked up)": tuple(a - b for a, b in zip(s["refresh"], sd)),
        "query (candidates)": s.get("query", (0.0, 0.0)),
        "hits (read back, matched, placed)": s.get("hits", (0.0, 0.0)),
        "printing": s.get("printing", (0.0, 0.0)),
        "the search, in all (lean_search.run)": total,
    }
    parts = ("listing", "refresh less stat_all (changed files looked up)", "query (candidates)",
             "hits (read back, matched, placed)", "printing")
    row["other (matcher, checks, notes)"] = tuple(total[i] - sd[i] - sum(row[k][i] for k in parts) for i in (0, 1))
    rounds.append(row)

report = {"files": len(files), "repeat": repeat, "imports": {"wall_ms": round(imports[0], 1), "cpu_ms": round(imports[1], 1)},
          "phases": {k: {"wall_ms": round(statistics.median(r[k][0] for r in rounds) * 1000, 1),
                         "cpu_ms": round(statistics.median(r[k][1] for r in rounds) * 1000, 1)} for k in rounds[0]}}
print(json.dumps(report))
