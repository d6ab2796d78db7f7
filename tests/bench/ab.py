#!/usr/bin/env python3
"""Compare two copies of pisess (A and B) on the same commands, by interleaved runs.

Why interleaved: on a small shared VM the same command varies by up to 2x from run to run (120-260
ms for one and the same command on the 2-vCPU development VM), and the noise drifts over minutes.
Two bench.py runs one after the other therefore cannot show a 5 % difference: the second run meets
another machine. Here the copies alternate, A B B A A B B A ..., so slow and fast stretches hit
both alike, and each command reports the median wall and CPU time of each copy, their ratio B/A,
and the median of the ratios of the adjacent pairs (the figure least affected by drift). CPU time
(user + system from ``os.wait4``: the child and the helpers it forked and waited for) is steadier
than wall on a busy machine. A run of a copy against itself (``--a X --b X``) shows what noise
remains: on the 2-vCPU VM, 15 runs of one copy against itself still gave ratios from 0.87 to 1.05
(the pair medians 0.92 to 1.04), so a difference under ~10 % needs more runs or repeated A/B runs.

Making the copies (any commit; ``git archive`` takes no uncommitted changes):

    mkdir -p /tmp/pisess-base && git archive 30afc1e pisess | tar -x -C /tmp/pisess-base
    mkdir -p /tmp/pisess-head && git archive HEAD pisess | tar -x -C /tmp/pisess-head
    .venv/bin/python tests/bench/ab.py --a /tmp/pisess-base --b /tmp/pisess-head --runs 15 \\
        [--commands context,validate] [--workdir /tmp/pisess-bench] [--json-out FILE]

A copy is selected by putting its directory first on PYTHONPATH and running the venv's ``pisess``
script with cwd=/tmp (the editable install's finder comes after PYTHONPATH, and nothing in /tmp
shadows the copy, as the checkout would for ``python -c`` run from the repo). Children run without
PYTHONDONTWRITEBYTECODE, so each copy compiles its .pyc files once (in the warm-up) and uses them
after, as an installed copy does; and with PISESS_CACHE=off except for ``warm``, which uses the
cache in an XDG_CACHE_HOME of each copy.

Inputs are bench.py's (generate them with a bench.py run first); a command whose input is missing
is skipped with a note. Commands:

  context    context --json --reader harness  on the 200 MB harness-written file (bench case 1)
  context16  context --json --reader cli --pi-version 1.6.0  on the 200 MB pi 1.6.0 file (case 13)
  entries    context --json --reader harness  on the 1,000,000-entry file (case 3)
  validate   validate FILE --json  on case 1's file
  du         du FILE --json  on case 1's file
  ls         ls --sessions-dir ROOT --cwd CWD --json  over the 10,000 files of case 5
  tree       tree --json  on case 13's file
  search     search LITERAL FILE  on case 1's file, a literal on a few dozen lines (bench case 7)
  images     ls --all --long  over the screenshot session of case 17 (any size bench.py made)
  imagesctx  context --json  on that session
  help       --help
  warm       case 13's command through the cache: on a copy of the file, one cold run per copy
             writes its entry, 10 KB are appended (the same bytes for both: one shared file), then
             every run is a warm read (case 14's warm row)

Each command gets one untimed warm-up per copy (its stdout kept in <workdir>/ab/out/ and compared
byte for byte: pisess's output must not depend on the copy), then ``sync`` once, then the timed
runs (stdout to /dev/null). Max RSS is ru_maxrss of the child (the largest process of its tree),
an upper bound for small figures since it may include pages of this script the child was forked from.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ["context", "context16", "entries", "validate", "du", "ls", "tree", "search", "images", "imagesctx", "help",
            "warm"]
COPIES = ("A", "B")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load_bench() -> ModuleType:
    """bench.py as a module, for its input names and append_messages (one source of truth)."""
    # Importing from a path would otherwise write tests/bench/__pycache__ into the checkout.
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("pisess_bench", Path(__file__).with_name("bench.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


# --- inputs --------------------------------------------------------------------------------------------------


@dataclass
class Inputs:
    harness: Path | None  # case 1
    cli16: Path | None  # case 13
    entries: Path | None  # case 3
    ls_root: Path | None  # case 5
    images: Path | None  # case 17


def _generated(gen: Path, *keys: str) -> Path | None:
    """The first of bench.py's generated directories that was completed (pi's writer before ours)."""
    for key in keys:
        d = gen / key
        if (d / ".complete").exists():
            return d
    return None


def _one_file(d: Path | None) -> Path | None:
    if d is None:
        return None
    files = sorted((d / "sessions").glob("*/*.jsonl"))
    return files[0] if len(files) == 1 else None


def find_inputs(bench: ModuleType, workdir: Path) -> Inputs:
    gen, full, v = workdir / "gen", bench.FULL, bench.GEN_VERSION
    mb = full["big_mb"]
    # The seeds are bench.py's for these cases (1: 200, 13: 216, 3: 3, 5: 5).
    harness = _generated(gen, f"oracle-big-harness-{mb}mb-s200", f"py{v}-big-harness-{mb}mb-s200")
    cli16 = _generated(gen, f"oracle-big-cli-{mb}mb-s216-pi1.6.0")
    entries = _generated(gen, f"py{v}-entries-{full['entries']}-s3")
    files = _generated(gen, f"py{v}-files-{full['files']}-s5")
    done = sorted(gen.glob(f"py{v}-images-*kb-s17/.complete"), key=lambda p: p.stat().st_mtime)
    images = _one_file(done[-1].parent) if done else None
    return Inputs(_one_file(harness), _one_file(cli16), _one_file(entries), files / "sessions" if files else None,
                  images)


# --- running -------------------------------------------------------------------------------------------------


@dataclass
class Copy:
    label: str
    dir: Path
    env: dict
    cache_env: dict
    source_hash: str
    meter: Any  # bench.Meter with env, and with cache_env: wait4's rusage of exactly one child
    cache_meter: Any

    def run(self, argv: list, cached: bool, stdout: Path | None = None) -> Any:
        """One run of ``argv`` (bench.Run: wall, rss_kb, rc, cpu), in /tmp so the checkout shadows no copy."""
        meter = self.cache_meter if cached else self.meter
        return meter.once(argv, cwd="/tmp", stdout=str(stdout) if stdout else None)


def source_hash(pkg: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*.py")):
        h.update(str(p.relative_to(pkg)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def make_copy(label: str, directory: str, python: Path, xdg: Path, bench: ModuleType) -> Copy:
    d = Path(directory).resolve()
    if not (d / "pisess" / "__init__.py").is_file():
        sys.exit(f"--{label.lower()} {d}: no pisess/ package there "
                 f"(make one: mkdir -p {d} && git archive COMMIT pisess | tar -x -C {d})")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(d), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PISESS_CACHE"] = "off"
    cache_env = {**env, "PISESS_CACHE": "on", "XDG_CACHE_HOME": str(xdg)}
    # A copy that silently resolved to the checkout would compare the checkout with itself.
    got = subprocess.run([str(python), "-c", "import pisess; print(pisess.__file__)"], env=env, cwd="/tmp",
                         capture_output=True, text=True, check=True).stdout.strip()
    if not Path(got).resolve().is_relative_to(d):
        sys.exit(f"copy {label}: pisess resolves to {got}, not under {d}")
    return Copy(label, d, env, cache_env, source_hash(d / "pisess"), bench.Meter("wait4", env),
                bench.Meter("wait4", cache_env))


@dataclass
class Command:
    name: str
    argv: list  # after the pisess script
    inputs: list[Path]
    cached: bool = False  # runs with the copy's cache_env
    runs: dict = field(default_factory=lambda: {c: [] for c in COPIES})
    same: bool | None = None
    warmup_rc: dict = field(default_factory=dict)


def build_commands(names: list[str], inp: Inputs, bench: ModuleType, workdir: Path) -> list[Command]:
    h, c16 = inp.harness, inp.cli16
    specs: dict[str, tuple[list, list] | None] = {
        "context": (["context", "--json", "--reader", "harness", h], [h]) if h else None,
        "context16": (["context", "--json", "--reader", "cli", "--pi-version", "1.6.0", c16], [c16]) if c16 else None,
        "entries": (["context", "--json", "--reader", "harness", inp.entries], [inp.entries]) if inp.entries else None,
        "validate": (["validate", h, "--json"], [h]) if h else None,
        "du": (["du", h, "--json"], [h]) if h else None,
        "ls": (["ls", "--sessions-dir", inp.ls_root, "--cwd", bench.LS_CWD, "--json"],
               [inp.ls_root / bench.encode_cwd(bench.LS_CWD)]) if inp.ls_root else None,
        "tree": (["tree", "--json", c16], [c16]) if c16 else None,
        "search": (["search", bench.SEARCH_HIT, h], [h]) if h else None,
        "images": (["ls", "--all", "--long", "--sessions-dir", inp.images.parent.parent], [inp.images])
        if inp.images else None,
        "imagesctx": (["context", "--json", inp.images], [inp.images]) if inp.images else None,
        "help": (["--help"], []),
        # The warm file is made in prepare_warm (it needs the copies); its argv is filled in there.
        "warm": (["context", "--json", "--reader", "cli", "--pi-version", "1.6.0"], []) if c16 else None,
    }
    cmds = []
    for name in names:
        spec = specs[name]
        if spec is None:
            log(f"skipping {name}: its input is not under {workdir}/gen (run bench.py to generate it)")
            continue
        cmds.append(Command(name, *spec, cached=name == "warm"))
    return cmds


def prepare_warm(cmd: Command, src: Path, copies: list[Copy], pisess: Path, bench: ModuleType, abdir: Path) -> bool:
    """One file for both copies (context's output names the file, so the path must be the same), a
    cache entry per copy written by a cold run, then the same 10 KB appended for both."""
    d = abdir / "warm"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    path = d / src.name
    shutil.copyfile(src, path)
    cmd.argv.append(path)
    cmd.inputs.append(path)
    for c in copies:
        shutil.rmtree(c.cache_env["XDG_CACHE_HOME"], ignore_errors=True)
        log(f"warm: cold run of {c.label} (writes its cache entry)")
        if c.run([pisess, *cmd.argv], cached=True).rc != 0:
            return False
    added = bench.append_messages(path, 10 * 1024)
    log(f"warm: appended {added:,} bytes to {path}")
    return True


def median_ratio(b: list[float], a: list[float]) -> float | None:
    pairs = [y / x for x, y in zip(a, b) if x > 0]
    return statistics.median(pairs) if pairs else None


def summary(cmd: Command) -> dict:
    out: dict = {"argv": [str(a) for a in cmd.argv], "identical_stdout": cmd.same}
    for c in COPIES:
        runs = cmd.runs[c]
        out[c] = {"wall_median_s": statistics.median(r.wall for r in runs),
                  "cpu_median_s": statistics.median(r.cpu for r in runs),
                  "max_rss_kb": max(r.rss_kb for r in runs),
                  "failed_runs": sum(r.rc != 0 for r in runs),
                  "walls_s": [round(r.wall, 4) for r in runs],
                  "cpus_s": [round(r.cpu, 4) for r in runs]}
    a, b = out["A"], out["B"]
    out["wall_ratio"] = b["wall_median_s"] / a["wall_median_s"]
    out["cpu_ratio"] = b["cpu_median_s"] / a["cpu_median_s"] if a["cpu_median_s"] else None
    # The k-th runs of A and B are adjacent in time, so their ratio cancels most of the drift.
    out["wall_ratio_paired"] = median_ratio(b["walls_s"], a["walls_s"])
    out["cpu_ratio_paired"] = median_ratio(b["cpus_s"], a["cpus_s"])
    return out


def table(results: dict) -> str:
    def ms(s: float) -> str:
        return f"{s * 1000:.0f}"

    def x(r: float | None) -> str:
        return "-" if r is None else f"{r:.3f}"

    head = ["command", "A wall", "B wall", "B/A", "pair", "A cpu", "B cpu", "B/A", "pair", "A RSS", "B RSS", "same"]
    rows = [head, ["", "ms", "ms", "wall", "wall", "ms", "ms", "cpu", "cpu", "MiB", "MiB", "stdout"]]
    for name, r in results.items():
        a, b = r["A"], r["B"]
        same = {True: "yes", False: "DIFFER", None: "?"}[r["identical_stdout"]]
        if a["failed_runs"] or b["failed_runs"]:
            same += f" (failed A {a['failed_runs']}, B {b['failed_runs']})"
        rows.append([name, ms(a["wall_median_s"]), ms(b["wall_median_s"]), x(r["wall_ratio"]), x(r["wall_ratio_paired"]),
                     ms(a["cpu_median_s"]), ms(b["cpu_median_s"]), x(r["cpu_ratio"]), x(r["cpu_ratio_paired"]),
                     f"{a['max_rss_kb'] / 1024:.0f}", f"{b['max_rss_kb'] / 1024:.0f}", same])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) if i in (0, len(head) - 1) else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows)


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="directory holding copy A's pisess/ package (the baseline)")
    ap.add_argument("--b", required=True, help="directory holding copy B's pisess/ package")
    ap.add_argument("--runs", type=int, default=15, help="timed runs per copy per command (default 15)")
    ap.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated, of: {', '.join(COMMANDS)}")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/pisess-bench"),
                    help="bench.py's workdir: inputs from <workdir>/gen, this script's files in <workdir>/ab")
    ap.add_argument("--pisess", type=Path, default=REPO / ".venv" / "bin" / "pisess",
                    help="the pisess script whose python runs both copies (default: the repo's .venv)")
    ap.add_argument("--json-out", type=Path, help="write the figures (and every run's wall and CPU time) here")
    args = ap.parse_args(argv)
    args.commands = [c.strip() for c in args.commands.split(",") if c.strip()]
    unknown = sorted(set(args.commands) - set(COMMANDS))
    if unknown:
        ap.error(f"unknown command(s) {', '.join(unknown)}; known: {', '.join(COMMANDS)}")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    started = time.strftime("%Y-%m-%d %H:%M:%S %z")
    load_start = load()
    log(f"load average {load_start} on {os.cpu_count()} CPUs")
    if os.getloadavg()[0] > 1.0:
        log("  warning: the machine is busy; the CPU-time ratios are the steadier figures")
    bench = load_bench()
    abdir = args.workdir / "ab"
    outdir = abdir / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    pisess = args.pisess
    python = pisess.parent / "python"
    copies = [make_copy(label, d, python, abdir / f"xdg-{label}", bench) for label, d in zip(COPIES, (args.a, args.b))]
    for c in copies:
        log(f"copy {c.label}: {c.dir} (sources {c.source_hash})")

    inputs = find_inputs(bench, args.workdir)
    cmds = build_commands(args.commands, inputs, bench, args.workdir)
    for cmd in list(cmds):
        if cmd.cached and inputs.cli16 and not prepare_warm(cmd, inputs.cli16, copies, pisess, bench, abdir):
            log("skipping warm: a cold run failed")
            cmds.remove(cmd)

    # Warm-ups for every command before any timing, so the one sync below also flushes what they
    # wrote (.pyc files, cache updates, the kept outputs) and no timed run shares the disk with it.
    for cmd in cmds:
        bench.warm([f for p in cmd.inputs for f in (sorted(p.rglob("*.jsonl")) if p.is_dir() else [p])])
        for c in copies:
            log(f"warm-up {cmd.name} {c.label}")
            r = c.run([pisess, *cmd.argv], cmd.cached, outdir / f"{cmd.name}.{c.label}.out")
            cmd.warmup_rc[c.label] = r.rc
        cmd.same = filecmp.cmp(outdir / f"{cmd.name}.A.out", outdir / f"{cmd.name}.B.out", shallow=False)
    subprocess.run(["sync"], check=False)

    for cmd in cmds:
        log(f"timing {cmd.name}: {args.runs} runs per copy, interleaved")
        for k in range(args.runs):
            order = copies if k % 2 == 0 else copies[::-1]  # A B, B A, A B, ...: each copy leads half the pairs
            for c in order:
                cmd.runs[c.label].append(c.run([pisess, *cmd.argv], cmd.cached))
        s = summary(cmd)
        log(f"  A {s['A']['wall_median_s'] * 1000:.0f} ms, B {s['B']['wall_median_s'] * 1000:.0f} ms, "
            f"wall B/A {s['wall_ratio']:.3f}, cpu B/A {s['cpu_ratio'] or 0:.3f}")

    results = {cmd.name: summary(cmd) for cmd in cmds}
    seconds = time.perf_counter() - t_start
    load_end = load()
    print(f"A: {copies[0].dir} (sources {copies[0].source_hash})")
    print(f"B: {copies[1].dir} (sources {copies[1].source_hash})")
    print(f"{args.runs} runs per copy per command, interleaved A B B A ...; medians; 'pair' = median of the "
          f"adjacent pairs' B/A; RSS = max ru_maxrss")
    print(f"load average: start {load_start}, end {load_end}; {seconds / 60:.1f} min")
    print()
    print(table(results) if results else "(no command ran)")
    if args.json_out:
        doc = {"started": started, "seconds": round(seconds, 1), "argv": sys.argv, "runs": args.runs,
               "load_start": load_start, "load_end": load_end, "cpus": os.cpu_count(),
               "copies": {c.label: {"dir": str(c.dir), "sources": c.source_hash} for c in copies},
               "pisess": str(pisess), "commands": results}
        args.json_out.write_text(json.dumps(doc, indent=2) + "\n")
        log(f"figures written to {args.json_out}")
    failed = any(r[c]["failed_runs"] for r in results.values() for c in COPIES)
    failed = failed or any(rc for cmd in cmds for rc in cmd.warmup_rc.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
