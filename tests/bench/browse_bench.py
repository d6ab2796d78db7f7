#!/usr/bin/env python3
"""pisess browse on a big session, driven headless: the time to open it (the app started, the tree
read and the first screen drawn) beside `pisess tree FILE` on the same file, cold (no cache) and
warm (through the index cache), and the latency of a keypress that moves the selection.

    .venv/bin/python tests/bench/browse_bench.py FILE [--keys 200]

FILE: e.g. the 200 MB session bench.py's case 13 generates (pi 1.6.0's writer) under
/tmp/pisess-bench.  Each open runs in a child process of its own (a fresh interpreter, as a user's
`pisess browse` is), so the cold and warm figures are comparable with `pisess tree`'s.  pisess's
modules are compiled to bytecode first, as an installed pisess has them (an editable install run
with PYTHONDONTWRITEBYTECODE compiles every module on every start: 0.1 s more of each figure).

Each time is given with the CPU time it took (user + system, the process and its children): on a
machine shared with other work the wall time grows with the load, the CPU time much less.  The
load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PISESS = os.path.join(os.path.dirname(sys.executable), "pisess")


def child(path: str, keys: int) -> None:
    """In a fresh process: open the app headless, draw, press keys; print the figures."""
    t0 = time.perf_counter()
    c0 = _cpu()
    from pisess.cli.browse.app import BrowseApp
    from pisess.cli.commands import cache_cmd

    cache_cmd.configure(os.environ)  # as `pisess browse` starts: the cache of $XDG_CACHE_HOME unless PISESS_CACHE=off

    async def go() -> tuple[float, float, list[float], float]:
        app = BrowseApp(path=path, at=None, root=os.path.dirname(os.path.dirname(path)), cwd="/", reader="auto",
                        pi_version="1.6.0")
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            opened = time.perf_counter() - t0
            opened_cpu = _cpu() - c0
            lat = []
            cpu = time.process_time()
            for i in range(keys):
                k = time.perf_counter()
                await pilot.press("k" if i % 2 == 0 else "k")
                await pilot.pause()
                lat.append(time.perf_counter() - k)
            return opened, opened_cpu, lat, (time.process_time() - cpu) / keys

    opened, opened_cpu, lat, cpu = asyncio.run(go())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{opened:.3f} {statistics.median(lat) * 1000:.1f} {max(lat) * 1000:.1f} {rss} {cpu * 1000:.1f} "
          f"{opened_cpu:.3f}")


def _cpu() -> float:
    """CPU seconds of this process and its finished children (a compact scan forks one)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_child(path: str, keys: int, env: dict) -> tuple[float, float, float, int, float, float]:
    """(open s, key median ms, key max ms, RSS KiB, CPU ms per key, open CPU s): the key's wall
    time is the pilot's press and pause (Textual's frame pacing included), its CPU time the work it
    costs; the open's CPU time counts from the interpreter's start (its imports included)."""
    out = subprocess.run([sys.executable, __file__, "--child", path, "--keys", str(keys)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2]), int(out[3]), float(out[4]), float(out[5])


def timed(cmd: list, env: dict) -> tuple[float, int, float]:
    """(wall s, peak RSS KiB, CPU s) of one command."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def compile_pisess() -> None:
    """Bytecode for pisess's modules, as an installed pisess has it (a pip install compiles it)."""
    import compileall

    import pisess

    compileall.compile_dir(os.path.dirname(pisess.__file__), quiet=1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--keys", type=int, default=200)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.child:
        child(a.file, a.keys)
        return 0
    compile_pisess()
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory() as xdg:
        off = {**os.environ, "PISESS_CACHE": "off", "NO_COLOR": "1"}
        on = {**os.environ, "PISESS_CACHE": "on", "XDG_CACHE_HOME": xdg, "NO_COLOR": "1"}
        size = os.path.getsize(a.file)
        print(f"file: {a.file} ({size / 1048576:.0f} MiB)")
        rows = []
        for label, env in (("cold (PISESS_CACHE=off)", off), ("warm (cache)", on)):
            if env is on:
                timed([PISESS, "tree", a.file, "--no-pager"], on)  # the cache entry written
            tree = [timed([PISESS, "tree", a.file, "--no-pager"], env) for _ in range(a.repeat)]
            ctx = [timed([PISESS, "context", a.file, "--json"], env) for _ in range(a.repeat)]
            br = [run_child(a.file, a.keys, env) for _ in range(a.repeat)]
            t = statistics.median(x[0] for x in tree)
            o = statistics.median(x[0] for x in br)
            rows.append((label, t, o, o / t, statistics.median(x[1] for x in br), max(x[2] for x in br),
                         max(x[3] for x in br) / 1024, max(x[1] for x in ctx) / 1024,
                         statistics.median(x[4] for x in br), statistics.median(x[2] for x in tree),
                         statistics.median(x[5] for x in br)))
        print(f"{'':24} {'tree':>8} {'browse open':>12} {'ratio':>6} {'key median':>11} {'key max':>8} "
              f"{'key CPU':>8} {'browse RSS':>11} {'context --json RSS':>19}")
        for label, t, o, r, km, kx, rss, crss, kc, tc, oc in rows:
            print(f"{label:24} {t:7.2f}s {o:11.2f}s {r:6.2f} {km:9.1f}ms {kx:6.1f}ms {kc:6.1f}ms {rss:9.0f}MB "
                  f"{crss:17.0f}MB")
            print(f"{'  CPU time':24} {tc:7.2f}s {oc:11.2f}s {oc / tc:6.2f}")
        print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        print("targets: open <= 1.5x tree cold; warm open < 0.5 s; keypress < 50 ms; RSS <= 2x context --json's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
