"""pisess watch: time from append to row, and CPU while idle over a big file.

Not a test (pytest does not collect it).  Standard library only; runs ``pisess watch --json`` as
a child process and appends to the file it follows.

    .venv/bin/python tests/bench/watch_bench.py [--big FILE] [--idle 30] [--appends 40] [--interval 0.1]

latency: a small session; ``--appends`` lines appended one by one at random moments, each timed
from the ``write`` to the moment its ``entry`` event is read from watch's stdout (target: every
one under 0.5 s with the default ``--interval 0.1``).
idle: ``--big FILE`` (e.g. ``node /tmp/pi-oracle/generate.mjs big --out DIR --seed 1 --mb 1000``,
about a minute) is followed; after watch's start event (its start-up time is printed) the child's
CPU time is read from ``/proc`` over ``--idle`` seconds in which nothing is appended (target:
under 1% of one core), then one line is appended and its latency printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "tests" / "fixtures" / "writers" / "one-branchy-16.jsonl"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Follow:
    def __init__(self, path: Path, interval: float) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "pisess", "watch", str(path), "--json", "--interval",
                                      str(interval)], stdout=subprocess.PIPE, cwd=REPO,
                                     env={**os.environ, "PYTHONPATH": str(REPO)})
        self.events: list = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            ev = json.loads(raw)
            with self.cond:
                self.events.append((time.monotonic(), ev))
                self.cond.notify_all()

    def wait(self, pred, timeout: float = 600.0) -> tuple:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for at, ev in self.events:
                    if pred(ev):
                        return at, ev
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no such event")
                self.cond.wait(left)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def latency(path: Path, src_lines: list, interval: float, n: int) -> list:
    w = Follow(path, interval)
    try:
        w.wait(lambda e: e["event"] == "start")
        out = []
        rng = random.Random(1)
        for _k, raw in enumerate(src_lines[:n]):
            time.sleep(rng.uniform(0.05, 0.3))
            eid = json.loads(raw)["id"]
            t0 = time.monotonic()
            with open(path, "ab") as fh:
                fh.write(raw + b"\n")
            at, _ = w.wait(lambda e, eid=eid: e["event"] == "entry" and e["id"] == eid, 10)
            out.append(at - t0)
        return out
    finally:
        w.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", type=Path)
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--appends", type=int, default=40)
    ap.add_argument("--interval", type=float, default=0.1)
    args = ap.parse_args()
    lines = SMALL.read_bytes().rstrip(b"\n").split(b"\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.jsonl"
        path.write_bytes(b"\n".join(lines[:5]) + b"\n")
        # ids of a pi-written file appended again after its own lines are new entries for watch
        more = lines[5:] + [json.dumps({**json.loads(r), "id": f"x{k:07d}"}).encode() for k, r in enumerate(lines[5:])]
        lat = latency(path, more, args.interval, args.appends)
        print(f"latency append->row ({len(lat)} appends, --interval {args.interval}): "
              f"median {statistics.median(lat) * 1000:.0f} ms,"
              f" max {max(lat) * 1000:.0f} ms, target < 500 ms: {'PASS' if max(lat) < 0.5 else 'MISS'}")
        if args.big:
            big = Path(tmp) / "big.jsonl"
            try:
                os.link(args.big, big)
            except OSError:
                shutil.copyfile(args.big, big)
            size = big.stat().st_size
            t0 = time.monotonic()
            w = Follow(big, args.interval)
            try:
                at, start = w.wait(lambda e: e["event"] == "start")
                print(f"big file {size / 1e9:.2f} GB, {start['entries']:,} entries: start (summary) after {at - t0:.1f} s")
                c0, t1 = cpu_seconds(w.proc.pid), time.monotonic()
                time.sleep(args.idle)
                used, spent = cpu_seconds(w.proc.pid) - c0, time.monotonic() - t1
                pct = 100 * used / spent
                print(f"idle CPU over {spent:.0f} s: {used:.2f} s = {pct:.2f}% of one core, target < 1%: "
                      f"{'PASS' if pct < 1 else 'MISS'}")
                last = json.loads(big.read_bytes()[-200_000:].rstrip(b"\n").rsplit(b"\n", 1)[-1])
                probe = {**json.loads(lines[6]), "id": "bigprobe", "parentId": last["id"]}
                t2 = time.monotonic()
                with open(big, "ab") as fh:
                    fh.write(json.dumps(probe).encode() + b"\n")
                at, _ = w.wait(lambda e: e.get("id") == "bigprobe", 10)
                print(f"append->row on the big file: {(at - t2) * 1000:.0f} ms")
            finally:
                w.stop()
                if big.stat().st_nlink > 1:
                    big.unlink()


if __name__ == "__main__":
    main()
