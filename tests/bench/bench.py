#!/usr/bin/env python3
"""Benchmark pisess against pi's own session code (the pi-oracle), side by side.

Each measured command runs as a child process; wall time is taken around it, peak RSS comes
from ``/usr/bin/time -v`` when present, else from ``os.wait4`` (the rusage of that one child).
Inputs are generated once under ``--workdir`` (default /tmp/pisess-bench) and reused.

Cases (``--cases``, by number or name; default all):

  1 context   pisess context --json --reader harness  vs  oracle --impl harness --summary context
              on a 200 MB harness-written file; plus the floor (a bare orjson.loads loop)
  2 cli       the same on a 50 MB CLI-written file with --reader cli / --impl cli
  3 entries   the same (harness) on a file of 1,000,000 small entries (generated here)
  4 validate  pisess validate FILE --json  vs  oracle validate FILE  (200 MB file of case 1)
  5 ls        pisess ls --sessions-dir ROOT --cwd CWD --json  vs  oracle list ROOT --cwd CWD
              and vs head -qn1 over the same 10,000 files
  6 cold      pisess --help and pisess ls on an empty root: median of 5 runs
  7 search    pisess search LITERAL FILE  vs  rg -F (grep -F without rg) on the 200 MB file of case 1,
              for a literal on a few dozen lines and for one that is nowhere
  8 du        pisess du FILE --json  vs  pisess validate FILE --json  (200 MB file of case 1)
  9 search10k pisess search LITERAL --cwd C  vs  rg -F / grep -rF over the 10,000 files of case 5
 10 du10k     pisess du --cwd C --json  vs  pisess validate DIR --json  (the same 10,000 files)
 11 entries-cli    case 3's file with --reader cli / --impl cli (no target: the path runs to the root)
 12 validate-entries  pisess validate vs oracle validate on case 3's file (no target)
 13 context16 pisess context --json --reader cli (pi 1.6 rules, the default) on a 200 MB file written
              by pi 1.6.0's own writer  vs  oracle --pi 1.6.0 --summary context and pi 1.6.0's bare
              SessionManager.open + buildSessionContext; plus pisess --pi-version 0.82.1 on the same file
 14 cache     case 13's command through the index cache: cold (no entry, the entry written) vs the
              read without the cache (--no-cache), and warm after a 10 KB append vs pi 1.6.0's bare
              open + buildSessionContext of the appended file (every other case runs with PISESS_CACHE=off)
 15 cache1g   case 14 on a 1 GiB session written by pi 1.6.0 (pi-oracle's big mode): cold vs --no-cache, warm
              after a 10 KB append (pi's own open of 1 GiB is not run: it needs several GB)
 21 index     the search index (issue 24): search LITERAL through the index, warm, over case 5's 10,000 files
              and over 100,000 generated ones beside grep -rF, on case 1's 200 MB file beside grep -F; the first
              search (it scans and starts the background indexer) beside --no-cache (the scan), and the time
              until the background indexer is done (the warm runs wait for it); a search after a 10 KB
              append; warm ls --cwd beside head -qn1; the index's size on disk (MiB per GiB of sessions)
 16 summaries ls --long, stats --all, du --all over the 10,000 files of case 5: --no-cache, cold cache,
              warm cache, beside ls --all --json (first lines only) without a cache
 20 diff      pisess diff FILE LEAF_A LEAF_B --json (two branch tips of case 13's file)  vs  one
              pisess context --json of the file, without the cache and through a warm one

This is a benchmark, not a test: a MISS is printed, never turned into a failing exit code.

    .venv/bin/python tests/bench/bench.py --oracle /tmp/pi-oracle          # full run
    .venv/bin/python tests/bench/bench.py --quick --cases 1,5,6             # small sizes
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GEN_VERSION = 3  # bump when the Python generator changes, so cached inputs are rebuilt
CASES = {"1": "context", "2": "cli", "3": "entries", "4": "validate", "5": "ls", "6": "cold", "7": "search",
         "8": "du", "9": "search10k", "10": "du10k", "11": "entries-cli", "12": "validate-entries",
         "13": "context16", "14": "cache", "15": "cache1g", "16": "summaries", "17": "images", "20": "diff",
         "21": "index", "33": "page"}
SEARCH_HIT = "Summarize the open TODOs"  # a user prompt of both generators: a few dozen lines of the big file
SEARCH_MISS = "no-such-literal-7f3a"
SEARCH_FEW = "retry the cache"  # in a few dozen of the small sessions of case 5
FULL = {"big_mb": 200, "cli_mb": 50, "entries": 1_000_000, "files": 10_000, "huge_mb": 1024, "image_turns": 3_700}
QUICK = {"big_mb": 20, "cli_mb": 10, "entries": 100_000, "files": 1_000, "huge_mb": 100, "image_turns": 100}
IMAGE_KB = 400  # base64 characters of each screenshot, in KiB (case 17)
IMAGE_CWD = "/home/dev/projects/screenshots"
BIG_CWD = "/home/dev/projects/monorepo"  # generate.mjs big writes there
LS_CWD = "/home/dev/projects/many-sessions"

FLOOR_SRC = """\
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            loads(line)
"""
FLOOR_KEEP_SRC = """\
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as f:
    kept = [loads(line) for line in f if line.strip()]
"""

# pi 1.6.0's own `pi --export FILE OUT` (main.js calls exportFromFile with these arguments), run
# directly: node 20 cannot load pi's CLI entry (it imports fs.globSync, node >= 22); the export
# path does not need it.
PI_EXPORT_SRC = """\
import { pathToFileURL } from "node:url";
const [piDir, input, output] = process.argv.slice(2);
const agent = `${piDir}/node_modules/@earendil-works/pi-coding-agent`;
const mod = await import(pathToFileURL(`${agent}/dist/core/export-html/index.js`).href);
await mod.exportFromFile(input, output);
"""

# pi's own code without the oracle's extras (the oracle's cli context also re-reads and re-parses
# the file twice to report the version and dropped lines; its harness context reads it once more
# as a string). Reference only: no target uses it.
PI_BARE_SRC = """\
import { dirname, resolve } from "node:path";
const [lib, impl, file, piVersion] = process.argv.slice(2);
const { loadCli, loadHarness } = await import(lib);
let out;
if (impl === "harness") {
  const H = await loadHarness();
  const fs = new H.NodeExecutionEnv({ cwd: process.cwd() });
  const repo = new H.JsonlSessionRepo({ fs, sessionsRoot: dirname(resolve(file)) });
  const session = await repo.open({ path: resolve(file) });
  const ctx = await session.buildContext();
  const llm = H.convertToLlm(ctx.messages);
  out = { leafId: await session.getLeafId(), messages: ctx.messages.length, llm: llm.length };
} else {
  const C = await (piVersion ? loadCli(piVersion) : loadCli());  // a valid v3 file is not rewritten by open
  const sm = C.SessionManager.open(resolve(file), dirname(resolve(file)));
  const ctx = sm.buildSessionContext();
  const llm = C.convertToLlm(ctx.messages);
  out = { leafId: sm.getLeafId(), messages: ctx.messages.length, llm: llm.length };
}
process.stdout.write(JSON.stringify(out) + "\\n");
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- measuring ---------------------------------------------------------------------------------------


@dataclass
class Run:
    wall: float  # seconds
    rss_kb: int | None
    rc: int
    walls: list = field(default_factory=list)
    cpu: float | None = None  # user + system seconds of the child (less sensitive to a busy machine)


class Meter:
    """Runs a child and reports its wall time and peak RSS."""

    def __init__(self, mode: str = "auto", env: dict | None = None):
        self.env = env
        time_bin = "/usr/bin/time"
        if mode == "auto":
            mode = "time" if os.access(time_bin, os.X_OK) and self._time_works(time_bin) else "wait4"
        self.mode = mode
        self.time_bin = time_bin

    @staticmethod
    def _time_works(time_bin: str) -> bool:
        try:
            r = subprocess.run([time_bin, "-v", "true"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return False
        return "Maximum resident set size" in r.stderr

    def once(self, cmd: list, *, cwd: str | None = None, stdout: str | None = None) -> Run:
        out = open(stdout, "wb") if stdout else subprocess.DEVNULL
        try:
            if self.mode == "time":
                fd, tf = tempfile.mkstemp(prefix="pisess-bench-time-")
                os.close(fd)
                try:
                    t0 = time.perf_counter()
                    p = subprocess.run([self.time_bin, "-v", "-o", tf, *map(str, cmd)], cwd=cwd, stdout=out,
                                       stderr=subprocess.PIPE, env=self.env)
                    wall = time.perf_counter() - t0
                    report = Path(tf).read_text(errors="replace")
                finally:
                    os.unlink(tf)
                rss, rc, cpu = None, p.returncode, 0.0
                for line in report.splitlines():
                    line = line.strip()
                    if line.startswith("Maximum resident set size"):
                        rss = int(line.rsplit(":", 1)[1])
                    elif line.startswith(("User time (seconds)", "System time (seconds)")):
                        cpu += float(line.rsplit(":", 1)[1])
                    elif line.startswith("Exit status:"):
                        rc = int(line.rsplit(":", 1)[1])
                if rc != 0:
                    _show_stderr(cmd, p.stderr)
                return Run(wall, rss, rc, [wall], cpu)
            # wait4: the rusage of exactly this child (getrusage(RUSAGE_CHILDREN) keeps a running
            # maximum over all children, so deltas of ru_maxrss do not work).
            t0 = time.perf_counter()
            p = subprocess.Popen(list(map(str, cmd)), cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=self.env)
            err = p.stderr.read()
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            p.stderr.close()
            if p.returncode != 0:
                _show_stderr(cmd, err)
            rss = ru.ru_maxrss if sys.platform != "darwin" else ru.ru_maxrss // 1024
            return Run(wall, rss, p.returncode, [wall], ru.ru_utime + ru.ru_stime)
        finally:
            if stdout:
                out.close()

    def best(self, cmd: list, repeat: int = 1, *, cwd: str | None = None, stdout: str | None = None,
             warmup: int = 0) -> Run:
        """Median wall over ``repeat`` runs, max RSS, first non-zero exit code."""
        for _ in range(warmup):
            self.once(cmd, cwd=cwd)
        return self.median_of([self.once(cmd, cwd=cwd, stdout=stdout) for _ in range(max(1, repeat))])

    @staticmethod
    def median_of(runs: list) -> Run:
        """Median wall of ``runs``, max RSS, first non-zero exit code."""
        walls = [r.wall for r in runs]
        rsss = [r.rss_kb for r in runs if r.rss_kb is not None]
        cpus = [r.cpu for r in runs if r.cpu is not None]
        rc = next((r.rc for r in runs if r.rc != 0), 0)
        return Run(statistics.median(walls), max(rsss) if rsss else None, rc, walls,
                   statistics.median(cpus) if cpus else None)


def _show_stderr(cmd: list, err: bytes) -> None:
    text = err.decode(errors="replace").strip() if isinstance(err, bytes) else (err or "").strip()
    if text:
        log(f"  [{Path(str(cmd[0])).name} exited non-zero] " + "\n  ".join(text.splitlines()[-5:]))


def warm(paths: list) -> None:
    """Read inputs once so every command sees a warm page cache, after writing back what is still
    dirty: a file copied just before (cases 14 and 15 copy theirs) is otherwise written out to disk
    during the timed runs (case 15's warm read: 294 ms without the sync, 226 ms with it, one run each)."""
    os.sync()
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 22):
                pass


# --- the pi-oracle -------------------------------------------------------------------------------------


def find_oracle(args, workdir: Path) -> Path | None:
    if args.no_oracle:
        return None
    if shutil.which("node") is None:
        log("node not found: pure-Python generator, no pi comparison")
        return None
    src = Path(args.oracle or os.environ.get("PI_ORACLE") or REPO.parent / "shared" / "tools" / "pi-oracle")
    if not (src / "oracle.mjs").is_file():
        log(f"no pi-oracle at {src}: pure-Python generator, no pi comparison")
        return None
    if (src / "node_modules").is_dir():
        return src.resolve()
    dst = workdir / "pi-oracle"
    if not (dst / "node_modules").is_dir():
        if shutil.which("npm") is None:
            log("npm not found and the oracle has no node_modules: no pi comparison")
            return None
        log(f"copying {src} to {dst} and running npm ci ...")
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("node_modules"), dirs_exist_ok=True)
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=dst, stdout=sys.stderr)
        if r.returncode != 0:
            log("npm ci failed: no pi comparison")
            return None
    return dst


# --- pure-Python session generator -------------------------------------------------------------------------

WORDS = ("the build fails on the date parser so I traced the call sites and renamed the helper then reran "
         "the tests which now pass except for one flaky case in the cache layer that needs a retry").split()
CODE = [
    "import { ts } from \"./ts\";", "export function processTs(ts: Input): Output {", "  return { id: result.id, value };",
    "}", "  if (!result) return undefined;", "  logger.debug({ item }, \"processed\");", "def handle(row):",
    "    return transform(row, factor=2)", "fn main() -> Result<(), Error> {", "    let value = input.value * factor;",
    "  const cache = new Map<string, Entry>();", "error[E0308]: mismatched types", "PASS tests/users.test.ts (12 ms)",
    "", "    at Object.<anonymous> (src/index.ts:42:13)", "warning: unused variable `tmp`",
]
PROMPTS = ["Summarize the open TODOs in the repo.", "Fix the failing date test.", "Why is the cache slow?",
           "Rename parseDate to parseIsoDate everywhere.", "Add a --verbose flag to the CLI.",
           "Write a test for the retry logic.", "Explain what transform() does.", "Run the linter and fix it."]
FILES = ["src/index.ts", "src/lib/cache.ts", "src/main.rs", "pipeline/transform.py", "tests/users.test.ts",
         "README.md", "Cargo.toml", "docs/ARCHITECTURE.md"]
MODELS = [("anthropic", "claude-sonnet-4-5", "anthropic-messages"), ("openai", "gpt-5", "openai-responses"),
          ("google", "gemini-3-pro-preview", "google-generative-ai")]
THINKING = ["off", "low", "medium", "high"]


def _dumps(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def iso(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def uuid7(rng: random.Random, ms: int) -> str:
    r = rng.getrandbits(74)
    n = (ms & (2**48 - 1)) << 80 | 0x7 << 76 | (r >> 62) << 64 | 0b10 << 62 | (r & (2**62 - 1))
    return str(uuid.UUID(int=n))


class SessionGen:
    """Writes one v3 session like pi does: messages (text, thinking, tool calls, tool results),
    model and thinking changes, labels, a name, branches and compactions.

    ``writer="harness"``: branches are ``leaf`` records, compactions carry ``retainedTail``.
    ``writer="cli"``: branches are implicit (the next entry's parentId), compactions keep
    ``firstKeptEntryId`` only.  ``small=True`` keeps every entry short (for entry-count tests).
    """

    def __init__(self, fh, rng: random.Random, *, writer: str = "harness", cwd: str = BIG_CWD,
                 start_ms: int = 1_740_992_400_000, small: bool = False, tool_output: int = 12_000):
        self.fh, self.rng, self.writer, self.small, self.tool_output = fh, rng, writer, small, tool_output
        self.ms = start_ms
        self.ids: set = set()
        self.leaf: str | None = None
        self.branch: list = []  # (id, type, message|None) on the current path since the last boundary
        self.entries = 0
        self.bytes = 0
        self.turns = 0
        self.calls = 0
        self.model = rng.choice(MODELS)
        self.session_id = uuid7(rng, self.ms)
        self._line({"type": "session", "version": 3, "id": self.session_id, "timestamp": iso(self.ms), "cwd": cwd})

    # low level
    def _line(self, obj: dict) -> None:
        s = _dumps(obj) + "\n"
        self.fh.write(s)
        self.bytes += len(s.encode()) if not s.isascii() else len(s)

    def _id(self) -> str:
        for _ in range(100):
            c = f"{self.rng.getrandbits(32):08x}"
            if c not in self.ids:
                self.ids.add(c)
                return c
        c = uuid7(self.rng, self.ms)
        self.ids.add(c)
        return c

    def _tick(self, lo: int = 50, hi: int = 20_000) -> int:
        self.ms += self.rng.randint(lo, hi)
        return self.ms

    def append(self, type_: str, fields: dict, *, parent: Any = "leaf", move: bool = True, message=None) -> str:
        eid = self._id()
        parent_id = self.leaf if parent == "leaf" else parent
        entry = {"type": type_, "id": eid, "parentId": parent_id, "timestamp": iso(self._tick()), **fields}
        self._line(entry)
        self.entries += 1
        if move:
            self.leaf = eid
            self.branch.append((eid, type_, message))
        return eid

    # content
    def _text(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def _output(self) -> str:
        if self.small:
            n = self.rng.randint(0, 3)
        else:
            n = int(self.rng.expovariate(1.0) * self.tool_output / 40) + 1
        return "\n".join(f"{i + 1:4d}\t{self.rng.choice(CODE)}" for i in range(n)) or "(no output)"

    def _usage(self) -> dict:
        i, o = self.rng.randint(200, 60_000), self.rng.randint(10, 2_000)
        if self.small:  # same keys, shorter numbers
            return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
        cr = self.rng.choice([0, self.rng.randint(0, 40_000)])
        return {"input": i, "output": o, "cacheRead": cr, "cacheWrite": 0, "totalTokens": i + o + cr,
                "cost": {"input": i * 2e-6, "output": o * 1.2e-5, "cacheRead": cr * 2e-7, "cacheWrite": 0,
                         "total": i * 2e-6 + o * 1.2e-5 + cr * 2e-7}}

    def message(self, msg: dict) -> str:
        msg["timestamp"] = self.ms
        return self.append("message", {"message": msg}, message=msg)

    def turn(self) -> None:
        self.turns += 1
        prompt = self.rng.choice(PROMPTS) if self.small or self.rng.random() < 0.7 else self._text(8, 60)
        self.message({"role": "user", "content": [{"type": "text", "text": prompt}]})
        provider, model, api = self.model
        for _ in range(0 if self.small and self.rng.random() < 0.5 else self.rng.randint(1, 4)):
            content = []
            if not self.small and self.rng.random() < 0.5:
                content.append({"type": "thinking", "thinking": self._text(5, 40)})
            calls = []
            for _ in range(self.rng.randint(1, 1 if self.small else 3)):
                self.calls += 1
                name = self.rng.choice(["bash", "read", "edit", "write"])
                args = ({"command": "cargo build 2>&1 | tail -20"} if name == "bash" else {"path": self.rng.choice(FILES)})
                calls.append((f"call-{self.calls}", name))
                content.append({"type": "toolCall", "id": f"call-{self.calls}", "name": name, "arguments": args})
            self.message({"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
                          "usage": self._usage(), "stopReason": "toolUse"})
            for cid, name in calls:
                self.message({"role": "toolResult", "toolCallId": cid, "toolName": name,
                              "content": [{"type": "text", "text": self._output()}], "isError": self.rng.random() < 0.05})
        self.message({"role": "assistant", "content": [{"type": "text", "text": self._text(3, 12 if self.small else 120)}],
                      "api": api, "provider": provider, "model": model, "usage": self._usage(), "stopReason": "stop"})

    def model_change(self) -> None:
        self.model = self.rng.choice(MODELS)
        self.append("model_change", {"provider": self.model[0], "modelId": self.model[1]})

    def thinking_change(self) -> None:
        self.append("thinking_level_change", {"thinkingLevel": self.rng.choice(THINKING)})

    def label(self) -> None:
        targets = [e for e in self.branch if e[1] == "message"]
        if targets:
            self.append("label", {"targetId": self.rng.choice(targets)[0], "label": f"checkpoint-{self.entries}"})

    def name(self) -> None:
        self.append("session_info", {"name": self._text(2, 5)})

    def branch_off(self) -> None:
        """Go back to an earlier assistant message on the current path and continue from there."""
        cands = [i for i, e in enumerate(self.branch[:-2]) if e[2] is not None and e[2].get("role") == "assistant"]
        if not cands:
            return
        i = self.rng.choice(cands)
        target = self.branch[i][0]
        if self.writer == "harness":
            self.append("leaf", {"targetId": target}, move=False)
        del self.branch[i + 1:]
        self.leaf = target
        if self.rng.random() < 0.3:
            self.append("branch_summary", {"fromId": target, "summary": self._text(10, 40),
                                           "details": {"readFiles": [self.rng.choice(FILES)], "modifiedFiles": []},
                                           "usage": self._usage(), "fromHook": False}, parent=target)

    def compact(self) -> None:
        msgs = [e for e in self.branch if e[2] is not None]
        if len(msgs) < 4:
            return
        keep = msgs[-self.rng.randint(2, min(6 if self.small else 20, len(msgs) - 1)):]
        fields: dict = {"summary": "## Goal\n" + self._text(20, 60 if self.small else 300),
                        "firstKeptEntryId": keep[0][0], "tokensBefore": self.rng.randint(20_000, 180_000)}
        if self.writer == "harness":
            fields["retainedTail"] = [e[2] for e in keep]
        fields.update({"details": {"readFiles": self.rng.sample(FILES, 2), "modifiedFiles": self.rng.sample(FILES, 1)},
                       "usage": self._usage(), "fromHook": False})
        eid = self.append("compaction", fields)
        if self.writer == "harness":
            self.branch = [(eid, "compaction", None)]

    def run(self, *, target_bytes: int | None = None, target_entries: int | None = None, max_turns: int | None = None,
            compact_every: int = 8, branch_every: int = 25) -> None:
        self.model_change()
        self.thinking_change()
        while True:
            if target_bytes is not None and self.bytes >= target_bytes:
                break
            if target_entries is not None and self.entries >= target_entries:
                break
            if max_turns is not None and self.turns >= max_turns:
                break
            self.turn()
            r = self.rng.random()
            if self.turns % compact_every == 0:
                self.compact()
            if self.turns % branch_every == 0:
                self.branch_off()
            if r < 0.02:
                self.model_change()
            elif r < 0.03:
                self.thinking_change()
            elif r < 0.06:
                self.label()
            elif r < 0.065:
                self.name()


def encode_cwd(cwd: str) -> str:
    return "--" + cwd.lstrip("/").replace("/", "-").replace("\\", "-").replace(":", "-") + "--"


def file_name(ms: int, sid: str) -> str:
    return iso(ms).replace(":", "-").replace(".", "-") + f"_{sid}.jsonl"


def py_session(out_dir: Path, seed: int, *, writer: str, cwd: str = BIG_CWD, start_ms: int = 1_740_992_400_000,
               **run_kw) -> Path:
    rng = random.Random(seed)
    d = out_dir / "sessions" / encode_cwd(cwd)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".writing.jsonl.part"
    small = run_kw.pop("small", False)
    with open(tmp, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
        g = SessionGen(fh, rng, writer=writer, cwd=cwd, start_ms=start_ms, small=small)
        g.run(**run_kw)
    final = d / file_name(start_ms, g.session_id)
    tmp.rename(final)
    return final


def image_session(out_dir: Path, seed: int, turns: int, image_kb: int = IMAGE_KB,
                  start_ms: int = 1_741_000_000_000) -> Path:
    """A pi 1.6.0-style session of ``turns`` screenshot turns: a prompt, an assistant call of the
    ``screenshot`` tool, its result (a line of text and one PNG of ``image_kb`` KiB of base64,
    random bytes behind a PNG signature, different in each turn) and the assistant's answer.  No
    compaction: every image is on the path and in the context, as in pi #9613's session."""
    import base64
    rng = random.Random(seed)
    d = out_dir / "sessions" / encode_cwd(IMAGE_CWD)
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / ".writing.jsonl.part"
    raw_len = image_kb * 1024 * 3 // 4
    sig = bytes.fromhex("89504e470d0a1a0a0000000d49484452")
    with open(tmp, "w", encoding="utf-8", newline="\n", buffering=1 << 22) as fh:
        g = SessionGen(fh, rng, writer="cli", cwd=IMAGE_CWD, start_ms=start_ms)
        g.model = MODELS[0]
        g.model_change()
        g.thinking_change()
        g.append("session_info", {"name": "screenshot session"})
        provider, model, api = g.model
        for t in range(turns):
            g.message({"role": "user", "content": [{"type": "text", "text": g.rng.choice(PROMPTS)}]})
            g.calls += 1
            cid = f"call-{g.calls}"
            g.message({"role": "assistant", "content": [
                {"type": "text", "text": g._text(3, 20)},
                {"type": "toolCall", "id": cid, "name": "screenshot", "arguments": {"selector": f"#step-{t}"}}],
                "api": api, "provider": provider, "model": model, "usage": g._usage(), "stopReason": "toolUse"})
            data = base64.b64encode(sig + rng.randbytes(raw_len - len(sig))).decode("ascii")
            g.message({"role": "toolResult", "toolCallId": cid, "toolName": "screenshot",
                       "content": [{"type": "text", "text": f"Screenshot of #step-{t} (1280x800)"},
                                   {"type": "image", "data": data, "mimeType": "image/png"}], "isError": False})
            g.message({"role": "assistant", "content": [{"type": "text", "text": g._text(5, 60)}],
                       "api": api, "provider": provider, "model": model, "usage": g._usage(), "stopReason": "stop"})
    final = d / file_name(start_ms, g.session_id)
    tmp.rename(final)
    return final


# --- inputs -----------------------------------------------------------------------------------------------------


class Inputs:
    def __init__(self, workdir: Path, oracle: Path | None, regen: bool):
        self.dir = workdir / "gen"
        self.oracle = oracle
        self.regen = regen
        self.dir.mkdir(parents=True, exist_ok=True)

    def _cached(self, key: str, make: Callable[[Path], Any]) -> Path:
        d = self.dir / key
        done = d / ".complete"
        if done.exists() and not self.regen:
            return d
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        t0 = time.perf_counter()
        log(f"generating {key} ...")
        make(d)
        done.write_text(f"{time.perf_counter() - t0:.1f}s\n")
        log(f"  done in {time.perf_counter() - t0:.1f} s")
        return d

    @staticmethod
    def _one_file(d: Path) -> Path:
        files = sorted((d / "sessions").glob("*/*.jsonl"))
        if len(files) != 1:
            raise RuntimeError(f"expected one session file under {d}, found {len(files)}")
        return files[0]

    def big(self, mb: int, writer: str, seed: int, pi_version: str | None = None) -> tuple[Path, str]:
        """A session of ``mb`` MiB: pi's own writer when the oracle is there, else ours."""
        if self.oracle is not None:
            pi = ["--pi", pi_version] if pi_version else []
            tag = f"-pi{pi_version}" if pi_version else ""
            d = self._cached(f"oracle-big-{writer}-{mb}mb-s{seed}{tag}", lambda d: subprocess.run(
                ["node", "generate.mjs", "big", "--out", str(d), "--seed", str(seed), "--mb", str(mb), "--writer", writer,
                 *pi], cwd=self.oracle, check=True))
            return self._one_file(d), f"pi {pi_version or ''} {writer} writer".replace("  ", " ")
        d = self._cached(f"py{GEN_VERSION}-big-{writer}-{mb}mb-s{seed}",
                         lambda d: py_session(d, seed, writer=writer, target_bytes=mb * 1024 * 1024))
        return self._one_file(d), f"py {writer} writer"

    def many_entries(self, n: int, seed: int = 3) -> tuple[Path, str]:
        d = self._cached(f"py{GEN_VERSION}-entries-{n}-s{seed}",
                         lambda d: py_session(d, seed, writer="harness", target_entries=n, small=True,
                                              compact_every=40, branch_every=60))
        return self._one_file(d), "py harness, small"

    def many_files(self, n: int, seed: int = 5) -> tuple[Path, str]:
        def make(d: Path) -> None:
            rng = random.Random(seed)
            ms = 1_735_689_600_000
            for k in range(n):
                ms += rng.randint(60_000, 6 * 3_600_000)
                py_session(d, seed * 1_000_003 + k, writer=rng.choice(["harness", "cli"]), cwd=LS_CWD, start_ms=ms,
                           small=True, max_turns=rng.randint(1, 8))

        return self._cached(f"py{GEN_VERSION}-files-{n}-s{seed}", make) / "sessions", "py, small"

    def images(self, turns: int, seed: int = 17) -> tuple[Path, str]:
        d = self._cached(f"py{GEN_VERSION}-images-{turns}-{IMAGE_KB}kb-s{seed}",
                         lambda d: image_session(d, seed, turns))
        return self._one_file(d), f"{turns:,} screenshot turns, {IMAGE_KB} KB PNG each"

    def images_odd(self, turns: int, seed: int = 17) -> tuple[Path, str]:
        """``images``'s session rewritten in the shapes of ``shapes.write_odd`` (issue 34): the
        same values, Python's separators, keys in another order, escaped base64, CRLF, no final
        newline; message times made five minutes later than their entries' (a clock skew)."""
        pi_path, origin = self.images(turns, seed)

        def make(d: Path) -> None:
            import shapes

            out = d / pi_path.relative_to(pi_path.parent.parent.parent)
            out.parent.mkdir(parents=True)
            with open(pi_path, encoding="utf-8") as src, open(out, "w", encoding="utf-8", newline="") as dst:
                for k, line in enumerate(src):
                    v = json.loads(line)
                    m = v.get("message")
                    if isinstance(m, dict) and isinstance(m.get("timestamp"), int):
                        m["timestamp"] += shapes.SKEW_MS
                    dst.write(("\r\n" if k else "") + shapes.odd_line(v, k))

        d = self._cached(f"py{GEN_VERSION}-images-odd-{turns}-{IMAGE_KB}kb-s{seed}", make)
        return self._one_file(d), origin + ", odd-shaped"

    def empty_root(self) -> Path:
        return self._cached("empty-root", lambda d: (d / "sessions").mkdir()) / "sessions"


# --- cases ------------------------------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    command: str
    input: str
    size: str
    a: Run
    ref: str
    b: Run | None


@dataclass
class Target:
    case: str
    what: str
    limit: float
    value: float | None
    unit: str = "x"

    @property
    def verdict(self) -> str:
        if self.value is None:
            return "n/a"
        return "PASS" if self.value <= self.limit else "MISS"


def wait_for_indexer(cache_dir: Path, timeout: float = 1800) -> float:
    """Seconds until no process holds the search index's indexer lock in ``cache_dir`` (pisess's
    background indexer, started by a first search that scanned): the warm runs start after it."""
    import fcntl

    start = time.perf_counter()
    lock = cache_dir / "search.lock"
    while time.perf_counter() - start < timeout:
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            return time.perf_counter() - start  # (none was started)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return time.perf_counter() - start
        except OSError:
            time.sleep(0.05)
        finally:
            os.close(fd)
    raise RuntimeError(f"the background indexer in {cache_dir} still runs after {timeout:.0f} s")


def append_messages(path: Path, nbytes: int) -> int:
    """Append about ``nbytes`` of user/assistant messages continuing from the last entry (as pi's
    next turns would); the bytes written."""
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - (1 << 20)))
        leaf = json.loads(fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1])["id"]
    out, size, i = [], 0, 0
    while size < nbytes:
        eid = uuid.uuid4().hex[:8]
        role = "user" if i % 2 == 0 else "assistant"
        msg: dict = {"role": role, "content": [{"type": "text", "text": "appended turn " + "x" * 900}],
                     "timestamp": 1741000000000 + i}
        if role == "assistant":
            msg.update(api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stopReason="stop",
                       usage={"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30,
                              "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}})
        line = json.dumps({"type": "message", "id": eid, "parentId": leaf, "timestamp": "2025-03-04T09:00:00.000Z",
                           "message": msg}, separators=(",", ":")) + "\n"
        out.append(line)
        size += len(line.encode())
        leaf, i = eid, i + 1
    with open(path, "a") as fh:
        fh.write("".join(out))
    return size


def _two_leaves(path: Path) -> list[str] | None:
    """The tips of the two branches that part furthest from the root: the current leaf and the
    tip of the longest other branch (a diff worth timing: long paths on both sides)."""
    parents: dict = {}
    order: list = []
    with open(path, "rb") as f:
        next(f)
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict) and isinstance(e.get("id"), str) and e.get("type") != "label":
                parents[e["id"]] = e.get("parentId")
                order.append(e["id"])
    if not order:
        return None
    has_child = {p for p in parents.values() if p}
    tips = [i for i in order if i not in has_child]
    leaf = order[-1]

    def depth(i: str) -> int:
        n = 0
        while i in parents and n < 10_000_000:
            i, n = parents[i], n + 1
        return n

    others = sorted((t for t in tips if t != leaf), key=depth, reverse=True)
    return [others[0], leaf] if others else None


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fmt_size(n: int) -> str:
    return f"{n / 1048576:.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


class Bench:
    def __init__(self, args):
        self.args = args
        self.workdir = Path(args.workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.outdir = self.workdir / "out"
        self.outdir.mkdir(exist_ok=True)
        env = dict(os.environ)
        if not args.keep_env:
            # A user's pisess has its .pyc files; without this, every run recompiles edited modules.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PISESS_CACHE"] = "off"  # the cases measure whole reads; case 14 turns the cache on
        self.meter = Meter(args.timer, env)
        self.load_start = _load()
        self.oracle = find_oracle(args, self.workdir)
        self.inputs = Inputs(self.workdir, self.oracle, args.regen)
        self.sizes = dict(QUICK if args.quick else FULL)
        for k in self.sizes:
            if getattr(args, k) is not None:
                self.sizes[k] = getattr(args, k)
        venv = REPO / ".venv" / "bin"
        self.python = args.python or (str(venv / "python") if (venv / "python").exists() else sys.executable)
        pis = venv / "pisess"
        self.pisess = args.pisess.split() if args.pisess else ([str(pis)] if pis.exists() else [self.python, "-m", "pisess"])
        self.speed = _python_speed(self.python)
        self.rows: list[Row] = []
        self.targets: list[Target] = []
        self.checks: list[str] = []
        self.breakdowns: list[str] = []  # (case 21: where a warm search's time goes)
        self.pi_bare = None
        if self.oracle is not None and not args.no_pi_bare:
            self.pi_bare = self.workdir / "pi-bare.mjs"
            self.pi_bare.write_text(PI_BARE_SRC)

    def node(self, *argv) -> list:
        return ["node", str(self.oracle / "oracle.mjs"), *argv]

    def bare(self, impl: str, path: Path, pi_version: str | None = None) -> list:
        return ["node", str(self.pi_bare), (self.oracle / "lib" / "pi.mjs").as_uri(), impl, str(path),
                *([pi_version] if pi_version else [])]

    def out(self, name: str) -> str:
        return str(self.outdir / name)

    # context-like cases share one shape
    def _context_case(self, case: str, path: Path, origin: str, reader: str, targets: bool = True) -> None:
        rep = self.args.repeat
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        cmd = f"context --json --reader {reader}"
        log(f"[{case}] pisess {cmd} {path.name}")
        a = self.meter.best([*self.pisess, "context", "--json", "--reader", reader, path], rep,
                            stdout=self.out(f"{case}-pisess.json"))
        log(f"    {a.wall:.2f} s {kb(a.rss_kb)}")
        log(f"[{case}] floor (orjson.loads loop)")
        fl = self.meter.best([self.python, "-c", FLOOR_SRC, path], rep)
        log(f"    {fl.wall:.2f} s {kb(fl.rss_kb)}")
        b = None
        if self.oracle is not None:
            log(f"[{case}] pi: oracle --impl {reader} --summary context")
            b = self.meter.best(self.node("--impl", reader, "--summary", "--compact", "context", path), rep,
                                stdout=self.out(f"{case}-pi.json"))
            log(f"    {b.wall:.2f} s {kb(b.rss_kb)}")
            self.rows.append(Row(case, cmd, label, fmt_size(size), a, f"pi oracle --impl {reader}", b))
            self._agree(case)
            if self.pi_bare:
                log(f"[{case}] pi bare open+buildContext ({reader})")
                c = self.meter.best(self.bare(reader, path), rep)
                log(f"    {c.wall:.2f} s {kb(c.rss_kb)}")
                self.rows.append(Row(case, cmd, label, fmt_size(size), a, f"pi bare {reader} (ref)", c))
        self.rows.append(Row(case, cmd, label, fmt_size(size), a, "floor: orjson loop", fl))
        if case == "1" and not self.args.no_floor_keep:
            log(f"[{case}] floor+keep (all parsed values kept)")
            fk = self.meter.best([self.python, "-c", FLOOR_KEEP_SRC, path], rep)
            log(f"    {fk.wall:.2f} s {kb(fk.rss_kb)}")
            self.rows.append(Row(case, cmd, label, fmt_size(size), a, "floor+keep (ref)", fk))
        if targets:
            self.targets += [
                Target(case, "pisess wall <= 0.20x pi", 0.20, ratio(a.wall, b.wall) if b else None),
                Target(case, "pisess RSS  <= 0.15x pi", 0.15, ratio(a.rss_kb, b.rss_kb) if b else None),
                Target(case, "pisess wall <= 2x floor", 2.0, ratio(a.wall, fl.wall)),
            ]

    def _agree(self, case: str) -> None:
        try:
            mine = json.loads(Path(self.out(f"{case}-pisess.json")).read_bytes())
            pi = json.loads(Path(self.out(f"{case}-pi.json")).read_bytes())
        except (OSError, ValueError) as e:
            self.checks.append(f"[{case}] could not compare outputs: {e}")
            return
        same = {k: mine.get(k) == pi.get(k) for k in ("leafId", "pathIds", "contextEntryIds", "entryCount")}
        if pi.get("messages") and isinstance(mine.get("messages"), list):
            same["messages.count"] = len(mine["messages"]) == pi["messages"].get("count")
        bad = [k for k, ok in same.items() if not ok]
        self.checks.append(f"[{case}] pisess vs pi output: " + ("agree on " + ", ".join(same) if not bad
                                                               else "DIFFER on " + ", ".join(bad)))

    def case_context(self) -> None:
        path, origin = self.inputs.big(self.sizes["big_mb"], "harness", 200)
        self._context_case("1", path, origin, "harness")

    def case_cli(self) -> None:
        path, origin = self.inputs.big(self.sizes["cli_mb"], "cli", 50)
        self._context_case("2", path, origin, "cli")

    def case_entries(self) -> None:
        path, origin = self.inputs.many_entries(self.sizes["entries"])
        n = self.sizes["entries"]
        self._context_case("3", path, f"{n:,} entries, {origin}", "harness")

    def case_entries_cli(self) -> None:
        """No target: the pi command's path runs to the root (every entry), its context from the
        last compaction; shown so that case 3's other reader is not left unmeasured."""
        path, origin = self.inputs.many_entries(self.sizes["entries"])
        n = self.sizes["entries"]
        self._context_case("11", path, f"{n:,} entries, {origin}", "cli", targets=False)

    def case_context16(self) -> None:
        """A pi 1.6.0-written session read with 1.6's rules, beside pi 1.6.0's own open, and the
        same file with 0.82.1's rules (what the 1.6 work costs)."""
        path, origin = self.inputs.big(self.sizes["big_mb"], "cli", 216, pi_version="1.6.0")
        case, rep = "13", self.args.repeat
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        cmd = "context --json --reader cli"
        log(f"[{case}] pisess {cmd} (pi 1.6 rules) {path.name}")
        a = self.meter.best([*self.pisess, "context", "--json", "--reader", "cli", "--pi-version", "1.6.0", path], rep,
                            stdout=self.out(f"{case}-pisess.json"))
        log(f"    {a.wall:.2f} s {kb(a.rss_kb)}")
        log(f"[{case}] pisess {cmd} --pi-version 0.82.1")
        old = self.meter.best([*self.pisess, "context", "--json", "--reader", "cli", "--pi-version", "0.82.1", path],
                              rep)
        log(f"    {old.wall:.2f} s {kb(old.rss_kb)}")
        self.rows.append(Row(case, cmd, label, fmt_size(size), a, "pisess --pi-version 0.82.1 (ref)", old))
        b = None
        if self.oracle is not None:
            log(f"[{case}] pi: oracle --pi 1.6.0 --summary context")
            b = self.meter.best(self.node("--pi", "1.6.0", "--summary", "--compact", "context", path), rep,
                                stdout=self.out(f"{case}-pi.json"))
            log(f"    {b.wall:.2f} s {kb(b.rss_kb)}")
            self.rows.append(Row(case, cmd, label, fmt_size(size), a, "pi 1.6.0 oracle", b))
            self._agree(case)
            if self.pi_bare:
                log(f"[{case}] pi 1.6.0 bare open+buildSessionContext")
                c = self.meter.best(self.bare("cli", path, "1.6.0"), rep)
                log(f"    {c.wall:.2f} s {kb(c.rss_kb)}")
                self.rows.append(Row(case, cmd, label, fmt_size(size), a, "pi 1.6.0 bare (ref)", c))
        self.targets += [
            Target(case, "pisess wall <= 0.20x pi 1.6", 0.20, ratio(a.wall, b.wall) if b else None),
            Target(case, "pisess RSS  <= 0.15x pi 1.6", 0.15, ratio(a.rss_kb, b.rss_kb) if b else None),
        ]

    def case_cache(self) -> None:
        """Case 13's file through the index cache (in a directory of the bench's own): the cold
        read that writes the entry beside today's read, and the warm read after a 10 KB append
        (the cached prefix, then only the new lines) beside pi 1.6.0's own open of that file."""
        src, origin = self.inputs.big(self.sizes["big_mb"], "cli", 216, pi_version="1.6.0")
        case, rep = "14", self.args.repeat
        d = self.workdir / "cache-case"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        path = d / src.name
        shutil.copyfile(src, path)
        xdg = d / "xdg"
        cmd = [*self.pisess, "context", "--json", "--reader", "cli", "--pi-version", "1.6.0", path]
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        log(f"[{case}] pisess context --json: --no-cache (today's read), then a cold cache (the entry written)")
        meter, off, cold = self._cache_runs(case, path, xdg, cmd, rep)
        log(f"    --no-cache {off.wall:.2f} s {kb(off.rss_kb)}; cold {cold.wall:.2f} s {kb(cold.rss_kb)}")
        hot = self._warm_after_append(case, path, meter, cmd, rep)
        self.rows.append(Row(case, "context --json (cache cold)", label, fmt_size(size), cold,
                             "pisess --no-cache", off))
        c = None
        if self.oracle is not None and self.pi_bare:
            log(f"[{case}] pi 1.6.0 bare open+buildSessionContext (appended file)")
            c = self.meter.best(self.bare("cli", path, "1.6.0"), rep)
            log(f"    {c.wall:.2f} s {kb(c.rss_kb)}")
        self.rows.append(Row(case, "context --json (cache warm, +10 KB)", label, fmt_size(size), hot,
                             "pi 1.6.0 bare open+build" if c else "pisess --no-cache", c or off))
        self.targets += [
            Target(case, "warm wall <= 150 ms", 150, hot.wall * 1000, unit="ms"),
            Target(case, "warm wall <= 0.07x pi 1.6 open+build", 0.07, ratio(hot.wall, c.wall) if c else None),
            Target(case, "warm RSS <= today's cold read", 1.0, ratio(hot.rss_kb, off.rss_kb)),
            Target(case, "cold (entry written) <= 1.10x today's read", 1.10, ratio(cold.wall, off.wall)),
        ]

    def _cache_runs(self, case: str, path: Path, xdg: Path, cmd: list, rep: int) -> tuple:
        """(--no-cache, cold with the entry written, warm) runs of ``cmd`` with the cache in ``xdg``."""
        meter = Meter(self.meter.mode, {**(self.meter.env or os.environ), "XDG_CACHE_HOME": str(xdg),
                                        "PISESS_CACHE": "on"})
        off = self.meter.best([*cmd, "--no-cache"], rep, stdout=self.out(f"{case}-fresh.json"))
        colds = []
        for _ in range(max(1, rep)):
            shutil.rmtree(xdg, ignore_errors=True)
            colds.append(meter.once(cmd))
        cold = Run(statistics.median(r.wall for r in colds), max((r.rss_kb or 0) for r in colds) or None,
                   next((r.rc for r in colds if r.rc), 0), [r.wall for r in colds])
        return meter, off, cold

    def _warm_after_append(self, case: str, path: Path, meter: Meter, cmd: list, rep: int) -> Run:
        """The warm run after a 10 KB append, its output checked against a --no-cache read."""
        added = append_messages(path, 10 * 1024)
        warm([path])
        hot = meter.best(cmd, rep, stdout=self.out(f"{case}-warm.json"), warmup=0)
        log(f"[{case}] warm after a {added / 1024:.1f} KB append: {hot.wall * 1000:.0f} ms {kb(hot.rss_kb)}")
        self.meter.once([*cmd, "--no-cache"], stdout=self.out(f"{case}-fresh.json"))
        same = Path(self.out(f"{case}-warm.json")).read_bytes() == Path(self.out(f"{case}-fresh.json")).read_bytes()
        self.checks.append(f"[{case}] warm output vs --no-cache: " + ("identical" if same else "DIFFER"))
        return hot

    def case_cache1g(self) -> None:
        """A 1 GiB pi 1.6.0 session through the cache: warm context after a 10 KB append (target
        250 ms), cold beside the read without the cache."""
        mb = self.sizes["huge_mb"]
        src, origin = self.inputs.big(mb, "cli", mb, pi_version="1.6.0")
        case, rep = "15", self.args.repeat
        d = self.workdir / "cache1g-case"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        path = d / src.name
        shutil.copyfile(src, path)
        xdg = d / "xdg"
        cmd = [*self.pisess, "context", "--json", "--reader", "cli", "--pi-version", "1.6.0", path]
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        log(f"[{case}] pisess context --json: --no-cache, then a cold cache")
        meter, off, cold = self._cache_runs(case, path, xdg, cmd, rep)
        log(f"    --no-cache {off.wall:.2f} s {kb(off.rss_kb)}; cold {cold.wall:.2f} s {kb(cold.rss_kb)}")
        hot = self._warm_after_append(case, path, meter, cmd, rep)
        self.rows.append(Row(case, "context --json (cache cold)", label, fmt_size(size), cold, "pisess --no-cache", off))
        self.rows.append(Row(case, "context --json (cache warm, +10 KB)", label, fmt_size(size), hot,
                             "pisess --no-cache", off))
        self.targets += [
            Target(case, "1 GiB warm wall <= 250 ms", 250, hot.wall * 1000, unit="ms"),
            Target(case, "cold (entry written) <= 1.10x today's read", 1.10, ratio(cold.wall, off.wall)),
        ]
        shutil.rmtree(d, ignore_errors=True)

    def case_summaries(self) -> None:
        """ls --long, stats --all, du --all over case 5's files: through the per-file summaries
        (warm) within 3x of ls --all --json without a cache (first lines only)."""
        root, origin = self.inputs.many_files(self.sizes["files"])
        d = root / encode_cwd(LS_CWD)
        names = sorted(os.listdir(d))
        total = sum((d / n).stat().st_size for n in names)
        warm([d / n for n in names])
        label = f"{len(names):,} files, 1 project"
        rep = max(self.args.repeat, 1)
        base = [*self.pisess, "ls", "--all", "--json", "--sessions-dir", root]
        log("[16] pisess ls --all --json (no cache)")
        ls = self.meter.best(base, max(rep, 3), warmup=1)
        log(f"    {ls.wall:.2f} s {kb(ls.rss_kb)}")
        for what, argv in (("ls --all --long --json", ["ls", "--all", "--long", "--json"]),
                           ("stats --all --json", ["stats", "--all", "--json"]),
                           ("du --all --json", ["du", "--all", "--json"])):
            xdg = self.workdir / "summaries-xdg"
            cmd = [*self.pisess, *argv, "--sessions-dir", root]
            log(f"[16] pisess {what}: --no-cache, cold, warm")
            meter, off, cold = self._cache_runs("16", root, xdg, cmd, rep)
            hot = meter.best(cmd, rep, stdout=self.out("16-warm.json"), warmup=0)
            log(f"    --no-cache {off.wall:.2f} s; cold {cold.wall:.2f} s; warm {hot.wall:.2f} s {kb(hot.rss_kb)}")
            same = Path(self.out("16-warm.json")).read_bytes() == Path(self.out("16-fresh.json")).read_bytes()
            self.checks.append(f"[16] {what} warm vs --no-cache: " + ("identical" if same else "DIFFER"))
            self.rows.append(Row("16", f"{what} (cache cold)", label, fmt_size(total), cold, "pisess --no-cache", off))
            self.rows.append(Row("16", f"{what} (cache warm)", label, fmt_size(total), hot, "ls --all --json", ls))
            self.targets.append(Target("16", f"{what.split()[0]} warm <= 3x ls --all --json", 3.0, ratio(hot.wall, ls.wall)))
            shutil.rmtree(xdg, ignore_errors=True)

    def case_diff(self) -> None:
        """Two leaves of case 13's 200 MB file: one read of the file, two walks, two contexts and
        the summaries of each side; within 2.5x of one ``pisess context --json``."""
        path, origin = self.inputs.big(self.sizes["big_mb"], "cli", 216, pi_version="1.6.0")
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        leaves = _two_leaves(path)
        if leaves is None:
            log("[20] the file has one leaf only: no diff to time")
            return
        warm([path])
        rep = self.args.repeat
        ctx_cmd = [*self.pisess, "context", "--json", path]
        diff_cmd = [*self.pisess, "diff", path, *leaves, "--json"]
        log(f"[20] pisess diff {leaves[0]} {leaves[1]} vs pisess context --json (no cache)")
        a = self.meter.best(diff_cmd, rep, stdout=self.out("20-diff.json"))
        b = self.meter.best(ctx_cmd, rep)
        log(f"    diff {a.wall:.2f} s {kb(a.rss_kb)}; context {b.wall:.2f} s {kb(b.rss_kb)}")
        self.rows.append(Row("20", "diff A B --json", label, fmt_size(size), a, "pisess context --json", b))
        xdg = self.workdir / "diff-xdg"
        shutil.rmtree(xdg, ignore_errors=True)
        meter = Meter(self.meter.mode, {**(self.meter.env or os.environ), "XDG_CACHE_HOME": str(xdg),
                                        "PISESS_CACHE": "on"})
        meter.once(ctx_cmd)  # the cache entry written
        wa = meter.best(diff_cmd, rep, warmup=0)
        wb = meter.best(ctx_cmd, rep, warmup=0)
        log(f"    warm: diff {wa.wall:.2f} s {kb(wa.rss_kb)}; context {wb.wall:.2f} s {kb(wb.rss_kb)}")
        self.rows.append(Row("20", "diff A B --json (cache warm)", label, fmt_size(size), wa,
                             "pisess context --json (warm)", wb))
        shutil.rmtree(xdg, ignore_errors=True)
        self.targets += [Target("20", "diff <= 2.5x context (no cache)", 2.5, ratio(a.wall, b.wall)),
                         Target("20", "diff <= 2.5x context (warm cache)", 2.5, ratio(wa.wall, wb.wall))]

    def case_images(self) -> None:
        """A session of inline screenshots (issue 23): every command cold beside pi 1.6.0's own
        open + buildSessionContext + convertToLlm of the same file.  ``--image-turns`` sets the size
        (3,700 turns: 1.4 GB; 6,700: pi #9613's 2.6 GB).  ``--image-shape both`` (issue 34) runs
        each command on the pi-shaped file and, just after it, on the same turns in the odd shapes,
        and sets the odd-shaped run beside the pi-shaped one (wall, RSS, cpu)."""
        shape = self.args.image_shape
        turns = self.sizes["image_turns"]
        shapes_run = ["pi", "odd"] if shape == "both" else [shape]
        files = {s: (self.inputs.images_odd if s == "odd" else self.inputs.images)(turns) for s in shapes_run}
        rep = self.args.repeat
        warm([path for path, _ in files.values()])
        with_pi = self.oracle is not None and self.pi_bare is not None

        def labelled(s: str) -> tuple[str, str, str, int]:
            path, origin = files[s]
            size = path.stat().st_size
            return "17" + ("odd" if s == "odd" else ""), str(path), f"{origin}, {size / 1048576:.0f} MiB", size

        def pi_run() -> Run | None:
            if not with_pi:
                return None
            path = files[shapes_run[0]][0]
            log(f"[17] pi 1.6.0 bare open+buildSessionContext+convertToLlm of {path.parent.parent.parent.name}")
            got = self.meter.best(self.bare("cli", path, "1.6.0"), rep)
            log(f"    {got.wall:.2f} s {kb(got.rss_kb)}")
            return got

        pi = pi_run()
        commands = [  # (label, argv (FILE and ROOT replaced), wall limit x pi, RSS limit MiB)
            ("ls --all --long", ["ls", "--all", "--long", "--sessions-dir", "ROOT"], 0.2, 150),
            ("ls --all --json", ["ls", "--all", "--json", "--sessions-dir", "ROOT"], 0.2, 150),
            ("ls --all --long --json", ["ls", "--all", "--long", "--json", "--sessions-dir", "ROOT"], 0.2, 150),
            ("context", ["context", "FILE"], 0.5, 250),
            ("context --json", ["context", "--json", "FILE"], 1.0, 400),
            ("export --format md", ["export", "--format", "md", "FILE"], 0.5, 250),
            ("export --format html", ["export", "--format", "html", "FILE"], 0.5, 250),
            ("tree", ["tree", "FILE"], 0.5, 150),
            ("path", ["path", "FILE"], 0.5, 150),
            ("stats", ["stats", "FILE"], 0.5, 150),
            ("du", ["du", "FILE"], 0.5, 150),
            ("search", ["search", "#step-7 (1280", "FILE"], 0.5, 150),
            ("validate", ["validate", "FILE"], 0.5, 150),
        ]
        only = [c.strip() for c in (self.args.image_commands or "").split(",") if c.strip()]
        for what, argv, wall_x, rss_mb in commands:
            if only and what not in only:
                continue
            if self.args.image_pairs and pi is None:
                pi = pi_run()  # each command beside a run of pi just before it: the load here drifts
            runs: dict[str, Run] = {}
            for s in shapes_run:
                case, path, label, size = labelled(s)
                root = str(Path(path).parent.parent)
                log(f"[{case}] pisess {what}")
                out = self.out(f"{case}-{what.replace(' ', '').replace('-', '')}.out")
                cmd = [*self.pisess, *[path if a == "FILE" else root if a == "ROOT" else a for a in argv]]
                a = runs[s] = self.meter.best(cmd, rep, stdout=out)
                log(f"    {a.wall:.2f} s {kb(a.rss_kb)} cpu {a.cpu or 0:.2f} s rc={a.rc}")
                if s == "odd" and "pi" in runs:  # beside the pi-shaped file, run just before
                    self.rows.append(Row(case, what, label, fmt_size(size), a, "the pi-shaped file", runs["pi"]))
                    self.targets.append(Target(case, f"{what} wall <= 2x pi-shaped", 2.0, ratio(a.wall, runs["pi"].wall)))
                    self.targets.append(Target(case, f"{what} cpu <= 2x pi-shaped", 2.0,
                                               ratio(a.cpu, runs["pi"].cpu) if a.cpu and runs["pi"].cpu else None))
                else:
                    self.rows.append(Row(case, what, label, fmt_size(size), a,
                                         "pi 1.6.0 open+build+convertToLlm" if pi else "-", pi))
                    self.targets.append(Target(case, f"{what} wall <= {wall_x}x pi", wall_x,
                                               ratio(a.wall, pi.wall) if pi else None))
                self.targets.append(Target(case, f"{what} RSS <= {rss_mb} MiB", rss_mb,
                                           a.rss_kb / 1024 if a.rss_kb else None, unit="MiB"))
            if self.args.image_pairs:
                pi = None

    def case_page(self) -> None:
        """Issue 33: ``export --format html`` (the explorer page) beside pi 1.6.0's ``pi --export`` of
        the same file, both pages then opened in the same headless Chromium (tests/bench/page_bench.py,
        a fresh browser per page): export time and peak RSS, page size, first paint, selecting
        another node, a search.  The 200 MB pi 1.6.0-written file (case 13's), case 17's
        screenshots with ``--images omit`` (beside pi's own open of the file), 10,000 entries."""
        case, rep = "33", self.args.repeat
        pi_dir = self.oracle / "pi-1.6.0" if self.oracle is not None else None
        with_pi = pi_dir is not None and (pi_dir / "node_modules").is_dir()
        pi_export = self.workdir / "pi-export.mjs"
        pi_export.write_text(PI_EXPORT_SRC)
        driver = [self.python, str(Path(__file__).with_name("page_bench.py"))]
        only = [c.strip() for c in (self.args.page_inputs or "big,images,entries").split(",") if c.strip()]

        def browse(kind: str, page: str, label: str) -> dict | None:
            log(f"[{case}] {kind} page in chromium: {Path(page).name}")
            argv = [*driver, kind, page] + (["--search", SEARCH_HIT] if kind == "pisess" else [])
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.returncode != 0:
                self.checks.append(f"[{case}] {kind} page of {label}: the browser run failed: {p.stderr.strip()[-300:]}")
                return None
            got = json.loads(p.stdout.strip().splitlines()[-1])
            log(f"    {got}")
            if got.get("page_errors"):
                self.checks.append(f"[{case}] {kind} page of {label}: script errors {got['page_errors']}")
            return got

        def heap_run(got: dict) -> Run:  # the page's first paint, with its JS heap in the RSS column
            return Run(got["first_paint_s"], int(got["js_heap_mb"] * 1024), 0)

        def page_row(what: str, label: str, page: str, got: dict | None, theirs: dict | None) -> None:
            if got:
                self.rows.append(Row(case, what, label, fmt_size(Path(page).stat().st_size), heap_run(got),
                                     "pi's page: tree drawn (JS heap)" if theirs else "-", heap_run(theirs) if theirs else None))

        def export_pair(key: str, path: Path, origin: str, pisess_opts: list, pi_ref: str) -> tuple:
            size = path.stat().st_size
            label = f"{origin}, {size / 1048576:.0f} MiB"
            warm([path])
            mine = self.out(f"{case}-{key}-pisess.html")
            log(f"[{case}] pisess export --format html {' '.join(pisess_opts)} {path.name}")
            theirs = self.out(f"{case}-{key}-pi.html") if with_pi and pi_ref == "export" else None
            if theirs:
                theirs_cmd = ["node", pi_export, pi_dir, path, theirs]
                log(f"[{case}] ... alternated with pi 1.6.0 --export {path.name}")
            elif with_pi and self.pi_bare is not None:
                theirs_cmd = self.bare("cli", path, "1.6.0")
                log(f"[{case}] ... alternated with pi 1.6.0 bare open+buildSessionContext+convertToLlm")
            else:
                theirs_cmd = None
            # The two sides run in turn, a run of each per pair, and the ratio is the median of the
            # pairs' ratios: this machine's speed drifts over tens of seconds (pi's export took
            # 5.1-9.7 s here across an evening), and three runs of one side then three of the other
            # can fall in different spells.
            runs, their_runs = [], []
            for _ in range(max(1, rep)):  # export -o never overwrites: each run writes a new file
                Path(mine).unlink(missing_ok=True)
                runs.append(self.meter.once([*self.pisess, "export", path, "--format", "html", "-o", mine, *pisess_opts]))
                if theirs_cmd is not None:
                    their_runs.append(self.meter.once(theirs_cmd))
            a = Meter.median_of(runs)
            log(f"    pisess {a.wall:.2f} s {kb(a.rss_kb)} rc={a.rc}")
            b = Meter.median_of(their_runs) if their_runs else None
            paired = statistics.median(x.wall / y.wall for x, y in zip(runs, their_runs)) if their_runs else None
            if b is not None:
                log(f"    pi {b.wall:.2f} s {kb(b.rss_kb)} rc={b.rc}; ratio per pair "
                    f"{', '.join(f'{x.wall / y.wall:.3f}' for x, y in zip(runs, their_runs))}")
            ref = {"export": "pi 1.6.0 --export", "open": "pi 1.6.0 open+build+convertToLlm"}[pi_ref] if b else "-"
            self.rows.append(Row(case, f"export --format html {' '.join(pisess_opts)}".strip(), label, fmt_size(size), a, ref, b))
            return size, label, a, b, mine, theirs, paired

        if "big" in only:
            path, origin = self.inputs.big(self.sizes["big_mb"], "cli", 216, pi_version="1.6.0")
            size, label, a, b, mine, theirs, paired = export_pair("big", path, origin, [], "export")
            page_size = Path(mine).stat().st_size if Path(mine).exists() else None
            pi_size = Path(theirs).stat().st_size if theirs and Path(theirs).exists() else None
            self.checks.append(f"[{case}] page size / file: pisess {page_size / size if page_size else float('nan'):.2f}, "
                               f"pi {pi_size / size if pi_size else float('nan'):.2f}")
            got = browse("pisess", mine, label) if page_size else None
            theirs_got = browse("pi", theirs, label) if pi_size else None
            page_row("page first paint (tree + leaf context; JS heap)", label, mine, got, theirs_got)
            self.targets += [
                Target(case, "200 MB: export wall <= 0.25x pi --export (median of pairs)", 0.25, paired),
                Target(case, "200 MB: export RSS <= 300 MiB", 300, a.rss_kb / 1024 if a.rss_kb else None, unit="MiB"),
                Target(case, "200 MB: page <= 1.0x the file", 1.0, page_size / size if page_size else None),
                Target(case, "200 MB: first paint <= 0.15x pi's tree", 0.15,
                       ratio(got["first_paint_s"], theirs_got["first_paint_s"]) if got and theirs_got else None),
                Target(case, "200 MB: select a node <= 100 ms", 100, got.get("select_ms") if got else None, unit="ms"),
                Target(case, "200 MB: search answers <= 500 ms", 500, got.get("search_ms") if got else None, unit="ms"),
            ]
        if "images" in only:
            path, origin = self.inputs.images(self.sizes["image_turns"])
            size, label, a, b, mine, _, paired = export_pair("images", path, origin, ["--images", "omit"], "open")
            page_size = Path(mine).stat().st_size if Path(mine).exists() else None
            got = browse("pisess", mine, label) if page_size else None
            page_row("page first paint (JS heap)", label, mine, got, None)
            self.targets += [
                Target(case, "images: export wall <= 0.5x pi's open (median of pairs)", 0.5, paired),
                Target(case, "images: export RSS <= 250 MiB", 250, a.rss_kb / 1024 if a.rss_kb else None, unit="MiB"),
                Target(case, "images: page < 2% of the file", 0.02, page_size / size if page_size else None),
            ]
        if "entries" in only:
            path, origin = self.inputs.many_entries(10_000)
            size, label, a, b, mine, theirs, _ = export_pair("entries", path, origin, [], "export")
            got = browse("pisess", mine, label) if Path(mine).exists() else None
            theirs_got = browse("pi", theirs, label) if theirs and Path(theirs).exists() else None
            page_row("page first paint (JS heap)", label, mine, got, theirs_got)
            self.targets.append(Target(case, "10,000 entries: first paint < 1 s", 1000,
                                       got["first_paint_s"] * 1000 if got else None, unit="ms"))

    def case_validate(self) -> None:
        path, origin = self.inputs.big(self.sizes["big_mb"], "harness", 200)
        self._validate_case("4", path, origin, target=True)

    def case_validate_entries(self) -> None:
        path, origin = self.inputs.many_entries(self.sizes["entries"])
        self._validate_case("12", path, f"{self.sizes['entries']:,} entries, {origin}", target=False)

    def _validate_case(self, case: str, path: Path, origin: str, target: bool) -> None:
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        rep = self.args.repeat
        log(f"[{case}] pisess validate --json")
        a = self.meter.best([*self.pisess, "validate", path, "--json"], rep, stdout=self.out(f"{case}-pisess.json"))
        log(f"    {a.wall:.2f} s {kb(a.rss_kb)} rc={a.rc}")
        b = None
        if self.oracle is not None:
            log(f"[{case}] pi: oracle validate (harness open)")
            b = self.meter.best(self.node("--compact", "validate", path), rep, stdout=self.out(f"{case}-pi.json"))
            log(f"    {b.wall:.2f} s {kb(b.rss_kb)}")
        self.rows.append(Row(case, "validate --json", label, fmt_size(size), a, "pi oracle validate" if b else "-", b))
        if target:
            self.targets.append(Target(case, "pisess wall <= 0.25x pi", 0.25, ratio(a.wall, b.wall) if b else None))

    def case_ls(self) -> None:
        root, origin = self.inputs.many_files(self.sizes["files"])
        d = root / encode_cwd(LS_CWD)
        names = sorted(os.listdir(d))
        total = sum((d / n).stat().st_size for n in names)
        warm([d / n for n in names])
        label = f"{len(names):,} files, 1 project"
        rep = max(self.args.repeat, 3)
        cmd = "ls --cwd C --json"
        log("[5] pisess ls")
        a = self.meter.best([*self.pisess, "ls", "--sessions-dir", root, "--cwd", LS_CWD, "--json"], rep,
                            stdout=self.out("5-pisess.json"), warmup=1)
        log(f"    {a.wall:.3f} s {kb(a.rss_kb)}")
        arg_bytes = sum(len(n) + 1 for n in names)
        if arg_bytes < os.sysconf("SC_ARG_MAX") // 2:
            head = ["head", "-qn1", "--", *names]
        else:  # very long lists: let xargs split them
            head = ["sh", "-c", "ls | grep '\\.jsonl$' | xargs head -qn1 --"]
        log("[5] head -qn1")
        h = self.meter.best(head, rep, cwd=str(d), warmup=1)
        log(f"    {h.wall:.3f} s {kb(h.rss_kb)}")
        b = None
        if self.oracle is not None:
            # pi 1.6.0's listing (/resume's: last activity first), the one `pisess ls` follows by
            # default; pi 0.82.1's SDK listing (newest header first) orders them otherwise
            log("[5] pi: oracle --pi 1.6.0 list")
            b = self.meter.best(self.node("--compact", "--pi", "1.6.0", "list", root, "--cwd", LS_CWD), rep,
                                stdout=self.out("5-pi.json"), warmup=1)
            log(f"    {b.wall:.3f} s {kb(b.rss_kb)}")
            self.rows.append(Row("5", cmd, label, fmt_size(total), a, "pi 1.6.0 oracle list", b))
            try:
                mine = json.loads(Path(self.out("5-pisess.json")).read_bytes())
                pi = json.loads(Path(self.out("5-pi.json")).read_bytes())
                ok = [s["id"] for s in mine["sessions"]] == [s["id"] for s in pi["sessions"]]
                self.checks.append(f"[5] pisess vs pi listing: {len(mine['sessions'])} vs {len(pi['sessions'])} "
                                   f"sessions, same order: {ok}")
            except (OSError, ValueError, KeyError) as e:
                self.checks.append(f"[5] could not compare listings: {e}")
        self.rows.append(Row("5", cmd, label, fmt_size(total), a, "head -qn1", h))
        self.targets += [
            Target("5", "pisess wall <= 0.20x pi", 0.20, ratio(a.wall, b.wall) if b else None),
            Target("5", "pisess wall <= 3x head -qn1", 3.0, ratio(a.wall, h.wall)),
        ]

    def case_cold(self) -> None:
        empty = self.inputs.empty_root()
        n = self.args.cold_runs
        base = self.meter.best([self.python, "-c", "pass"], n, warmup=1)
        for label, argv in (("--help", ["--help"]),
                            ("ls (empty root)", ["ls", "--sessions-dir", empty, "--cwd", "/nowhere/project"])):
            log(f"[6] pisess {label}")
            a = self.meter.best([*self.pisess, *argv], n, warmup=1)
            log(f"    median {a.wall * 1000:.0f} ms of {[round(w * 1000) for w in a.walls]}")
            self.rows.append(Row("6", label, f"median of {n}", "-", a, "python -c pass", base))
            self.targets.append(Target("6", f"pisess {label} <= 150 ms", 150, a.wall * 1000, unit="ms"))

    def _grep(self, literal: str, target: Path, recursive: bool = False) -> tuple[list, str]:
        rg = shutil.which("rg")
        if rg:
            return [rg, "-F", "--no-messages", "--", literal, str(target)], "rg -F"
        return ["grep", *(["-r"] if recursive else []), "-F", "--", literal, str(target)], "grep -F" + (
            " -r" if recursive else "")

    @staticmethod
    def _count_hits(path: str) -> str:
        try:
            doc = json.loads(Path(path).read_bytes())
        except (OSError, ValueError):
            return "?"
        hits = doc.get("hits", [])
        return f"{len(hits)} hits in {len({(h['path'], h['entryId']) for h in hits})} entries"

    def case_search(self) -> None:
        path, origin = self.inputs.big(self.sizes["big_mb"], "harness", 200)
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        rep = max(self.args.repeat, 3)
        for literal, what in ((SEARCH_HIT, "hits"), (SEARCH_MISS, "no hit")):
            grep, gname = self._grep(literal, path)
            log(f"[7] pisess search {literal!r} ({what})")
            a = self.meter.best([*self.pisess, "search", literal, path], rep, stdout=self.out("7-pisess.txt"),
                                warmup=1)
            log(f"    {a.wall:.3f} s {kb(a.rss_kb)} rc={a.rc}")
            log(f"[7] {gname}")
            g = self.meter.best(grep, rep, stdout=self.out("7-grep.txt"), warmup=1)
            log(f"    {g.wall:.3f} s {kb(g.rss_kb)}")
            self.rows.append(Row("7", f"search ({what})", label, fmt_size(size), a, gname, g))
            self.targets.append(Target("7", f"search ({what}) <= 2x {gname}", 2.0, ratio(a.wall, g.wall)))
            if what == "hits":
                self.meter.once([*self.pisess, "search", literal, path, "--json"], stdout=self.out("7-pisess.json"))
                lines = sum(1 for _ in open(self.out("7-grep.txt"), "rb"))
                self.checks.append(f"[7] {gname}: {lines} lines hold {literal!r}; pisess: "
                                   f"{self._count_hits(self.out('7-pisess.json'))} (copies in retainedTail are "
                                   "not searched twice)")

    def case_du(self) -> None:
        path, origin = self.inputs.big(self.sizes["big_mb"], "harness", 200)
        size = path.stat().st_size
        label = f"{origin}, {size / 1048576:.0f} MiB"
        warm([path])
        rep = self.args.repeat
        log("[8] pisess du --json")
        a = self.meter.best([*self.pisess, "du", path, "--json"], rep, stdout=self.out("8-pisess.json"))
        log(f"    {a.wall:.2f} s {kb(a.rss_kb)} rc={a.rc}")
        log("[8] pisess validate --json")
        v = self.meter.best([*self.pisess, "validate", path, "--json"], rep, stdout=self.out("8-validate.json"))
        log(f"    {v.wall:.2f} s {kb(v.rss_kb)}")
        self.rows.append(Row("8", "du --json", label, fmt_size(size), a, "pisess validate --json", v))
        self.targets.append(Target("8", "du wall <= 1.5x validate", 1.5, ratio(a.wall, v.wall)))

    def case_search10k(self) -> None:
        root, origin = self.inputs.many_files(self.sizes["files"])
        d = root / encode_cwd(LS_CWD)
        names = sorted(os.listdir(d))
        total = sum((d / n).stat().st_size for n in names)
        warm([d / n for n in names])
        label = f"{len(names):,} files, 1 project"
        rep = max(self.args.repeat, 3)
        grep, gname = self._grep(SEARCH_FEW, d, recursive=True)
        log(f"[9] pisess search {SEARCH_FEW!r} over {len(names):,} files")
        a = self.meter.best([*self.pisess, "search", SEARCH_FEW, "--sessions-dir", root, "--cwd", LS_CWD], rep,
                            stdout=self.out("9-pisess.txt"), warmup=1)
        log(f"    {a.wall:.3f} s {kb(a.rss_kb)} rc={a.rc}")
        log(f"[9] {gname}")
        g = self.meter.best(grep, rep, stdout=self.out("9-grep.txt"), warmup=1)
        log(f"    {g.wall:.3f} s {kb(g.rss_kb)}")
        self.rows.append(Row("9", "search --cwd C", label, fmt_size(total), a, gname, g))
        self.targets.append(Target("9", f"search <= 2x {gname}", 2.0, ratio(a.wall, g.wall)))
        lines = sum(1 for _ in open(self.out("9-grep.txt"), "rb"))
        self.checks.append(f"[9] {gname}: {lines} lines hold {SEARCH_FEW!r}")

    def case_index(self) -> None:
        """The search index: cold (built by the search), warm, after a 10 KB append, beside the scan
        (--no-cache) and grep in the same run; every answer checked against the scan's."""
        rep = max(self.args.repeat, 3)
        many = self.sizes["files"]
        sets = [("10k", *self.inputs.many_files(many), LS_CWD)]
        if not self.args.no_100k:
            sets.append(("100k", *self.inputs.many_files(many * 10, seed=6), LS_CWD))
        for tag, root, _origin, cwd in sets:
            d = root / encode_cwd(cwd)
            names = sorted(os.listdir(d))
            self._index_case(f"21/{tag}", [*self.pisess, "search", SEARCH_FEW, "--sessions-dir", root, "--cwd", cwd],
                             [d / n for n in names], f"{len(names):,} files, 1 project",
                             self._grep(SEARCH_FEW, d, recursive=True), rep, ls_root=root if tag == "10k" else None)
        big, origin = self.inputs.big(self.sizes["big_mb"], "harness", 200)
        dd = self.workdir / "index-big"
        shutil.rmtree(dd, ignore_errors=True)
        dd.mkdir()
        path = dd / big.name
        shutil.copyfile(big, path)
        self._index_case("21/200M", [*self.pisess, "search", SEARCH_HIT, path], [path],
                         f"{origin}, {path.stat().st_size / 1048576:.0f} MiB", self._grep(SEARCH_HIT, path), rep)
        shutil.rmtree(dd, ignore_errors=True)

    def _phases(self, case: str, cmd: list, env: dict | None, rep: int) -> None:
        """The breakdown of a warm search of ``cmd`` (``search PATTERN --sessions-dir ROOT --cwd
        CWD``) by phase, run in the Python of the pisess measured (``search_phases.py``)."""
        exe = Path(self.pisess[0])
        python = str(exe.with_name("python")) if exe.name == "pisess" and exe.with_name("python").exists() \
            else self.pisess[0] if self.pisess[1:3] == ["-m", "pisess"] else self.python
        at = cmd.index("search")
        pattern, root, cwd = cmd[at + 1], cmd[cmd.index("--sessions-dir") + 1], cmd[cmd.index("--cwd") + 1]
        got = subprocess.run([python, str(Path(__file__).with_name("search_phases.py")), str(root), cwd, pattern,
                              str(max(rep, 3))], env=env, capture_output=True, text=True)
        if got.returncode != 0:
            self.breakdowns.append(f"[{case}] no breakdown: {got.stderr.strip()[-200:]}")
            return
        doc = json.loads(got.stdout)
        self.breakdowns.append(f"[{case}] {doc['files']:,} files; imports {doc['imports']['wall_ms']:.0f} / "
                               f"{doc['imports']['cpu_ms']:.0f}")
        for name, v in doc["phases"].items():
            self.breakdowns.append(f"[{case}]   {name:58s} {v['wall_ms']:7.1f} / {v['cpu_ms']:7.1f}")
        log("\n".join(self.breakdowns[-len(doc["phases"]) - 1:]))

    def _index_case(self, case: str, cmd: list, files: list, label: str, grep: tuple, rep: int,
                    ls_root: Path | None = None) -> None:
        total = sum(p.stat().st_size for p in files)
        xdg = self.workdir / "index-xdg"
        warm(files)
        gcmd, gname = grep
        meter = Meter(self.meter.mode, {**(self.meter.env or os.environ), "XDG_CACHE_HOME": str(xdg),
                                        "PISESS_CACHE": "on"})
        log(f"[{case}] --no-cache (the scan), cold (the index built), warm, {gname}")
        off = self.meter.best([*cmd, "--no-cache", "--json"], 1, stdout=self.out("21-scan.json"))
        off = self.meter.best([*cmd, "--no-cache"], rep)
        shutil.rmtree(xdg, ignore_errors=True)
        cold = meter.once(cmd)
        built = wait_for_indexer(xdg / "pisess")  # (the first search scanned and started it)
        log(f"    the index built in the background {built:.1f} s after the first search")
        hot = meter.best(cmd, rep, warmup=1)
        g = self.meter.best(gcmd, rep, stdout=self.out("21-grep.txt"), warmup=1)
        meter.once([*cmd, "--json"], stdout=self.out("21-index.json"))
        same = self._same_hits(self.out("21-index.json"), self.out("21-scan.json"))
        index_bytes = sum(f.stat().st_size for f in (xdg / "pisess").glob("search.sqlite*"))
        log(f"    scan {off.wall:.3f} s; cold {cold.wall:.3f} s; warm {hot.wall:.3f} s {kb(hot.rss_kb)}; "
            f"{gname} {g.wall:.3f} s; index {index_bytes / 1048576:.1f} MiB")
        target = files[len(files) // 2]
        before = target.stat()
        afters = []
        for _ in range(max(1, rep)):  # (each the first search after an append of its own: one run is noise)
            added = append_messages(target, 10 * 1024)
            afters.append(meter.once(cmd))
        after = Meter.median_of(afters)
        hot2 = meter.best(cmd, rep)
        with open(target, "r+b") as fh:  # the input as it was (other cases read it)
            fh.truncate(before.st_size)
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        log(f"    after a {added / 1024:.1f} KB append: {after.wall:.3f} s, median of {len(afters)} of "
            f"{[round(r.wall * 1000) for r in afters]} ms (then {hot2.wall:.3f} s)")
        self.rows += [Row(case, "search (index warm)", label, fmt_size(total), hot, gname, g),
                      Row(case, "first search (index cold)", label, fmt_size(total), cold, "--no-cache (scan)", off),
                      Row(case, "(the index built in the background)", label, fmt_size(total), Run(built, None, 0),
                          "--no-cache (scan)", off),
                      Row(case, "search after a 10 KB append", label, fmt_size(total), after, "index warm", hot)]
        limit = {"21/10k": 1.5, "21/100k": 0.5, "21/200M": 1.0}.get(case, 1.5)
        self.targets += [
            Target(case, f"warm search <= {limit}x {gname}", limit, ratio(hot.wall, g.wall)),
            Target(case, "first search (building) <= 2x the scan", 2.0, ratio(cold.wall, off.wall)),
            Target(case, "after a 10 KB append <= 1.2x warm", 1.2, ratio(after.wall, hot.wall)),
        ]
        if ls_root is not None or case == "21/100k":
            self._phases(case, cmd, meter.env, rep)
        self.checks.append(f"[{case}] index {index_bytes / 1048576:.1f} MiB for {total / 1048576:.0f} MiB of sessions "
                           f"({index_bytes / max(total, 1) * 1024:.0f} MiB per GiB); index answer vs scan: "
                           + ("same hits" if same else "DIFFER"))
        if ls_root is not None:
            d = ls_root / encode_cwd(LS_CWD)
            names = sorted(os.listdir(d))
            ls_cmd = [*self.pisess, "ls", "--sessions-dir", ls_root, "--cwd", LS_CWD, "--json"]
            lw = meter.best(ls_cmd, rep, warmup=1)
            head = ["sh", "-c", "ls | grep '\\.jsonl$' | xargs head -qn1 --"]
            h = self.meter.best(head, rep, cwd=str(d), warmup=1)
            log(f"[{case}] ls --cwd warm {lw.wall:.3f} s; head -qn1 {h.wall:.3f} s")
            self.rows.append(Row(case, "ls --cwd C --json (cache warm)", f"{len(names):,} files", fmt_size(total), lw,
                                 "head -qn1", h))
            self.targets.append(Target(case, "warm ls --cwd <= 3x head -qn1", 3.0, ratio(lw.wall, h.wall)))
        shutil.rmtree(xdg, ignore_errors=True)

    @staticmethod
    def _same_hits(a: str, b: str) -> bool:
        try:
            x, y = json.loads(Path(a).read_bytes()), json.loads(Path(b).read_bytes())
        except (OSError, ValueError):
            return False
        x.pop("via", None), y.pop("via", None)
        return x == y

    def case_du10k(self) -> None:
        root, origin = self.inputs.many_files(self.sizes["files"])
        d = root / encode_cwd(LS_CWD)
        names = sorted(os.listdir(d))
        total = sum((d / n).stat().st_size for n in names)
        warm([d / n for n in names])
        label = f"{len(names):,} files, 1 project"
        rep = self.args.repeat
        log(f"[10] pisess du over {len(names):,} files")
        a = self.meter.best([*self.pisess, "du", "--sessions-dir", root, "--cwd", LS_CWD, "--json"], rep,
                            stdout=self.out("10-pisess.json"))
        log(f"    {a.wall:.2f} s {kb(a.rss_kb)} rc={a.rc}")
        log("[10] pisess validate DIR --json")
        v = self.meter.best([*self.pisess, "validate", d, "--json"], rep, stdout=self.out("10-validate.json"))
        log(f"    {v.wall:.2f} s {kb(v.rss_kb)}")
        self.rows.append(Row("10", "du --cwd C --json", label, fmt_size(total), a, "pisess validate DIR --json", v))
        self.targets.append(Target("10", "du wall <= 1.5x validate", 1.5, ratio(a.wall, v.wall)))

    # output
    def report(self) -> str:
        self.rows.sort(key=lambda r: r.case)
        lines = []
        hdr = ("#", "command (pisess ...)", "input", "size", "pisess wall", "pisess RSS", "compared with",
               "its wall", "its RSS", "wall x", "RSS x", "cpu x")
        body = []
        for r in self.rows:
            body.append((r.case, r.command, r.input, r.size, secs(r.a.wall), kb(r.a.rss_kb), r.ref,
                         secs(r.b.wall) if r.b else "-", kb(r.b.rss_kb) if r.b else "-",
                         f"{ratio(r.a.wall, r.b.wall):.2f}" if r.b else "-",
                         f"{ratio(r.a.rss_kb, r.b.rss_kb):.2f}" if r.b and r.a.rss_kb and r.b.rss_kb else "-",
                         f"{ratio(r.a.cpu, r.b.cpu):.2f}" if r.b and r.a.cpu and r.b.cpu else "-"))
            if r.a.rc or (r.b and r.b.rc):
                body[-1] = (*body[-1][:-1], body[-1][-1] + f"  (rc {r.a.rc}/{r.b.rc if r.b else '-'})")
        widths = [max(len(str(x[i])) for x in [hdr, *body]) for i in range(len(hdr))]
        right = {4, 5, 7, 8, 9, 10, 11}

        def fmt(row):
            return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths)))

        lines.append(fmt(hdr))
        lines.append("  ".join("-" * w for w in widths))
        lines += [fmt(b) for b in body]
        lines.append("")
        lines.append("Targets")
        for t in self.targets:
            val = "-" if t.value is None else (f"{t.value:.0f} {t.unit}" if t.unit != "x" else f"{t.value:.2f}x")
            lines.append(f"  [{t.case}] {t.what:34s} {val:>9s}  {t.verdict}")
        if self.checks:
            lines.append("")
            lines.append("Cross-checks")
            lines += [f"  {c}" for c in self.checks]
        if self.breakdowns:
            lines.append("")
            lines.append("Where a warm search's time goes (median ms, wall / CPU: tests/bench/search_phases.py)")
            lines += [f"  {b}" for b in self.breakdowns]
        return "\n".join(lines)


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


_SPEED_LOOP = ("import time\nt = time.perf_counter()\ns = 0\nfor i in range(3_000_000):\n    s += i\n"
               "print(time.perf_counter() - t)")


def _python_speed(python: str) -> str:
    """The machine's speed for Python, to set figures of two machines side by side: the best of
    three runs of a loop of 3 million additions in the ``python`` the pisess runs use (timed inside
    the process: its start is not in it)."""
    got = []
    for _ in range(3):
        try:
            out = subprocess.run([python, "-c", _SPEED_LOOP], capture_output=True, text=True, timeout=60).stdout
            got.append(float(out.strip()))
        except (OSError, ValueError, subprocess.SubprocessError):
            return "?"
    return f"{min(got):.2f} s"


def _busy() -> bool:
    try:
        return os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1) + 0.5
    except OSError:
        return False


def secs(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def kb(k: int | None) -> str:
    if k is None:
        return "-"
    return f"{k / 1024:.0f} MiB" if k >= 10 * 1024 else f"{k / 1024:.1f} MiB"


def environment(b: Bench) -> str:
    def ver(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "?"

    commit = ver(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    dirty = ver(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "pisess"])
    src = ver([b.python, "-c", "import hashlib, os, pisess; d = os.path.dirname(pisess.__file__); h = hashlib.sha1()\n"
               "for r, ds, fs in sorted(os.walk(d)):\n ds.sort()\n for f in sorted(fs):\n"
               "  if f.endswith('.py'): h.update(open(os.path.join(r, f), 'rb').read())\n"
               "print(d, h.hexdigest()[:12])"])
    return (f"pisess bench  {time.strftime('%Y-%m-%d %H:%M')}  commit {commit}"
            f"{' (pisess/ modified)' if dirty not in ('', '?') else ''}  source {src}\n"
            f"machine: {platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}\n"
            f"python: {ver([b.python, '--version'])} ({b.python}; 3M additions in {b.speed})   "
            f"node: {ver(['node', '--version']) if b.oracle else '-'}\n"
            f"pisess: {' '.join(b.pisess)}   oracle: {b.oracle or 'none (pure-Python generator)'}\n"
            f"peak RSS via: {'/usr/bin/time -v' if b.meter.mode == 'time' else 'os.wait4 rusage'}   "
            f"repeat: {b.args.repeat} (median wall, max RSS)   sizes: {b.sizes}\n"
            f"load average (1/5/15 min) at start: {b.load_start}, now: {_load()}"
            f"{'   WARNING: the machine is busy, wall times are inflated; compare cpu x' if _busy() else ''}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--cases", default="all", help="comma list of numbers or names: "
                   + ", ".join(f"{k}={v}" for k, v in CASES.items()) + " (default all)")
    p.add_argument("--quick", action="store_true", help=f"small sizes {QUICK}")
    p.add_argument("--oracle", help="pi-oracle checkout (default: $PI_ORACLE, else ../shared/tools/pi-oracle, copied "
                   "to the workdir and npm ci'd when it has no node_modules)")
    p.add_argument("--no-oracle", action="store_true", help="pure-Python generator only, no pi columns")
    p.add_argument("--no-pi-bare", action="store_true", help="skip the reference rows of pi without the oracle's extras")
    p.add_argument("--no-floor-keep", action="store_true", help="skip the floor+keep reference row of case 1")
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "pisess-bench"),
                   help="generated inputs and outputs (default /tmp/pisess-bench); reused between runs")
    p.add_argument("--regen", action="store_true", help="regenerate inputs even when cached")
    p.add_argument("--repeat", type=int, default=1, help="runs per measurement of cases 1-4 (median wall); ls uses >= 3")
    p.add_argument("--cold-runs", type=int, default=5, help="runs for case 6 (median)")
    p.add_argument("--big-mb", dest="big_mb", type=int, help="size of the harness file (cases 1, 4)")
    p.add_argument("--cli-mb", dest="cli_mb", type=int, help="size of the CLI file (case 2)")
    p.add_argument("--entries", type=int, help="entries of case 3")
    p.add_argument("--files", type=int, help="session files of case 5")
    p.add_argument("--no-100k", dest="no_100k", action="store_true", help="case 21 without its 100,000 files")
    p.add_argument("--huge-mb", dest="huge_mb", type=int, help="size of the pi 1.6.0 file of case 15 (default 1024)")
    p.add_argument("--image-turns", dest="image_turns", type=int,
                   help="screenshot turns of case 17 (default 3,700: 1.4 GB; 6,700: 2.6 GB)")
    p.add_argument("--image-pairs", action="store_true",
                   help="case 17: run pi before each command and take each ratio from that pair (a busy machine)")
    p.add_argument("--image-shape", choices=["pi", "odd", "both"], default="pi",
                   help="case 17: the session as pi writes it, or the same turns in the odd shapes of issue 34 "
                        "(tests/bench/shapes.py: separators with spaces, keys reordered, escaped base64, CRLF, "
                        "clock skew, no final newline), or both: each command on one then the other, the odd "
                        "beside the pi-shaped (target: at most 2x)")
    p.add_argument("--image-commands", help="case 17: only these commands, comma separated labels (default all)")
    p.add_argument("--page-inputs", dest="page_inputs",
                   help="case 33: only these inputs, comma separated: big, images, entries (default all)")
    p.add_argument("--python", help="python with orjson for the floor (default: the repo's .venv)")
    p.add_argument("--pisess", help="pisess command line (default: .venv/bin/pisess)")
    p.add_argument("--timer", choices=["auto", "time", "wait4"], default="auto")
    p.add_argument("--keep-env", action="store_true",
                   help="pass PYTHONDONTWRITEBYTECODE on to the children (default: dropped, so .pyc files are used)")
    p.add_argument("--json-out", help="also write the results as JSON here")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    wanted = list(CASES.values()) if args.cases == "all" else [CASES.get(c.strip(), c.strip()) for c in args.cases.split(",")]
    unknown = [c for c in wanted if c not in CASES.values()]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    b = Bench(args)
    log(environment(b))
    for name in CASES.values():
        if name in wanted:
            getattr(b, f"case_{name.replace('-', '_')}")()
    print()
    print(environment(b))
    print()
    print(b.report())
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            "rows": [{"case": r.case, "command": r.command, "input": r.input, "size": r.size,
                      "pisess": vars(r.a), "ref": r.ref, "other": vars(r.b) if r.b else None} for r in b.rows],
            "targets": [{**vars(t), "verdict": t.verdict} for t in b.targets],
            "checks": b.checks, "sizes": b.sizes,
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
