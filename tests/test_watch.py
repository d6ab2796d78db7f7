"""pisess watch and the two-writer rule (core/model/follow.py, core/model/writers.py, cli/commands/watch_cmd.py).

The two-writer files and the one-writer files with much /tree navigation were written by pi's own
SessionManager (tests/fixtures/writers/make.mjs); ``*.lines.json`` beside each two-writer file says
which of the two SessionManagers wrote each line, so the expected lines below come from the
writer, not from the rule.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import entry, header
from pisess.cli.app import app
from pisess.core.analyses.validate import validate_file
from pisess.core.model.follow import Watch
from pisess.core.model.writers import find_alternations

HERE = Path(__file__).parent
WRITERS = HERE / "fixtures" / "writers"
TWO = sorted(WRITERS.glob("two-*.jsonl"))
ONE = sorted(WRITERS.glob("one-*.jsonl")) + sorted((WRITERS / "corpus").glob("*.jsonl"))
REPO = HERE.parent


def expected(path: Path) -> dict:
    """Start, end and tips of the alternation, from who wrote which line."""
    who = json.loads(path.with_suffix(".lines.json").read_text())
    writer = {ln: "a" for ln in who["a"]} | {ln: "b" for ln in who["b"]}
    lines = sorted(writer)
    first = writer[lines[0]]
    start = min(ln for ln in lines if writer[ln] != first)
    end = max(ln for prev, ln in zip(lines, lines[1:]) if writer[ln] != writer[prev])
    return {"start": start, "end": end, "tips": {max(who["a"]), max(who["b"])}}


def findings(path: Path, code: str = "concurrent_writers") -> list:
    return [f for f in validate_file(str(path)).findings if f.code == code]


# --- the rule ----------------------------------------------------------------------------------


def test_the_fixtures_are_there():
    """The rule's tests below run over four two-writer and eleven one-writer files."""
    assert len(TWO) == 4 and len(ONE) == 11


@pytest.mark.parametrize("path", TWO, ids=lambda p: p.stem)
def test_every_two_writer_file_warns_with_the_lines_the_writers_wrote(path):
    """Two SessionManagers on one file (in turns and in bursts, pi 0.82.1 and 1.6.0): one
    concurrent_writers warning, starting where the second writer's first append is, ending at the
    last change of writer, naming each writer's last entry as a tip."""
    want = expected(path)
    found = findings(path)
    assert len(found) == 1
    f = found[0]
    assert f.severity == "warning" and f.line == want["start"]
    assert f"lines {want['start']}-{want['end']}:" in f.message
    for tip in want["tips"]:
        assert f"(line {tip})" in f.message
    assert "on the next resume pi continues from the last line" in f.message


@pytest.mark.parametrize("path", ONE, ids=lambda p: p.stem)
def test_no_warning_for_one_writer_with_tree_navigation(path):
    """Branches, branch summaries, new roots, leaf records and going back to an abandoned tip
    (A B A) by one writer are navigation, not two writers."""
    assert findings(path) == []


def test_bursts_switch_mid_turn_and_turns_do_not():
    """Interleaved agent loops switch at tool results and assistant messages (only two writers
    can); whole turns alternating switch at user messages only."""
    bursts = find_alternations(*_entries(WRITERS / "two-bursts-082.jsonl"))
    turns = find_alternations(*_entries(WRITERS / "two-turns-082.jsonl"))
    assert bursts[0].mid_turn >= 5 and turns[0].mid_turn == 0


def _entries(path: Path):
    es, ls = [], []
    for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if raw.strip():
            v = json.loads(raw)
            if v.get("type") != "session":
                es.append(v)
                ls.append(n)
    return es, ls


def _chain(spec: str, gap_ms: int = 1000) -> list:
    """Entries from a spec like ``r a1:r a2:a1 b1:r`` (id:parent, r = previous-less root)."""
    out = []
    for i, item in enumerate(spec.split()):
        eid, parent = item.split(":")
        out.append(entry("message", eid, None if parent == "r" else parent,
                         ts=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_800_000_000 + i * gap_ms / 1000)) + ".000Z",
                         message={"role": "user", "content": "x"}))
    return out


def test_one_return_to_a_tip_is_not_two_writers_but_two_are():
    """A B A (one resume) is what a user going back does; A B A B (two resumes) is reported."""
    aba = _chain("x:r a1:x b1:x a2:a1")
    abab = _chain("x:r a1:x b1:x a2:a1 b2:b1")
    assert find_alternations(aba, range(2, 2 + len(aba))) == []
    alts = find_alternations(abab, range(2, 2 + len(abab)))
    assert [(a.start_line, a.end_line, a.resumes) for a in alts] == [(4, 6, 2)]
    assert {t.id for t in alts[0].tips} == {"a2", "b2"}


def test_switches_far_apart_in_time_are_not_two_writers():
    """A B A B with an hour between the switches: navigation at leisure, not two live writers."""
    slow = _chain("x:r a1:x b1:x a2:a1 b2:b1", gap_ms=3_600_000)
    assert find_alternations(slow, range(2, 7)) == []


def test_a_branch_summary_between_ends_the_pattern():
    """A switch that is a branch_summary is pi's navigation record, not a second writer."""
    es = _chain("x:r a1:x b1:x a2:a1")
    es.append(entry("branch_summary", "b2", "b1", ts=es[-1]["timestamp"], fromId="a2", summary="s"))
    assert find_alternations(es, range(2, 2 + len(es))) == []


def test_tree_marks_the_two_interleaved_conversations():
    """tree --json flags each entry of the two conversations writer_a / writer_b, by who wrote it."""
    path = WRITERS / "two-turns-16.jsonl"
    who = json.loads(path.with_suffix(".lines.json").read_text())
    res = CliRunner().invoke(app, ["tree", str(path), "--json", "--full"])
    assert res.exit_code == 0, res.output
    rows = [r for r in json.loads(res.stdout)["rows"] if r["kind"] == "entry"]
    side = {r["line"]: ("a" if "writer_a" in r["flags"] else "b" if "writer_b" in r["flags"] else None) for r in rows}
    want = expected(path)
    b_lines = [ln for ln in who["b"]]
    a_lines = [ln for ln in who["a"] if ln <= want["end"]]
    assert {side[ln] for ln in b_lines} == {"b"}
    assert {side[ln] for ln in a_lines} == {"a"}
    assert all(side[ln] is None for ln in side if ln < min(who["a"]))  # the shared history is not marked
    human = CliRunner().invoke(app, ["tree", str(path), "--full", "--color", "never"], env={"COLUMNS": "120"})
    assert "\u21c4A" in human.stdout and "\u21c4B" in human.stdout


def test_validate_json_carries_the_warning():
    """validate --json: the warning with its code, line and the start entry's id."""
    path = WRITERS / "two-bursts-16.jsonl"
    res = CliRunner().invoke(app, ["validate", str(path), "--json"])
    doc = json.loads(res.stdout)
    found = [f for f in doc["files"][0]["findings"] if f["code"] == "concurrent_writers"]
    assert res.exit_code == 0 and len(found) == 1 and found[0]["line"] == expected(path)["start"]
    assert found[0]["entryId"] is not None


# --- following a file (no process, explicit clock) -----------------------------------------------


def _line(v: dict) -> bytes:
    return json.dumps(v, separators=(",", ":")).encode() + b"\n"


def _msg(eid, parent, role="user"):
    return entry("message", eid, parent, message={"role": role, "content": "hi"})


@pytest.fixture
def live(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(_line(header()) + _line(_msg("u1", None)) + _line(_msg("a1", "u1", "assistant")))
    return p


def kinds(events) -> list:
    return [e.kind for e in events]


def test_start_reads_what_is_there_and_polls_return_appends_only(live):
    """The summary's state counts the existing entries; a poll returns only the new one, with its
    physical line and byte offset."""
    w = Watch(str(live))
    assert w.start(0) == [] and w.state.entries == 2 and w.state.leaf == "a1"
    size = live.stat().st_size
    with open(live, "ab") as fh:
        fh.write(_line(_msg("u2", "a1")))
    evs = w.poll(1)
    assert kinds(evs) == ["entry"]
    assert evs[0].to_json() == {"event": "entry", "line": 4, "offset": size, "id": "u2", "parentId": "a1",
                                "type": "message", "role": "user"}
    assert w.poll(2) == []


def test_a_half_line_is_not_an_entry_until_complete_and_damage_when_it_stays(live):
    """A line without its newline is held back; completed, it is one entry; left incomplete for
    LIVE_SECONDS it is reported once as truncated_line."""
    w = Watch(str(live))
    w.start(0)
    data = _line(_msg("u2", "a1"))
    with open(live, "ab") as fh:
        fh.write(data[:20])
    assert w.poll(1) == [] and w.has_pending
    with open(live, "ab") as fh:
        fh.write(data[20:])
    assert kinds(w.poll(2)) == ["entry"]
    with open(live, "ab") as fh:
        fh.write(b'{"type":"mess')
    assert w.poll(3) == []
    assert w.poll(5) == []
    late = w.poll(14)
    assert kinds(late) == ["damage"] and late[0].data["code"] == "truncated_line" and late[0].line == 5
    assert w.poll(30) == []


def test_meaning_events(live):
    """Each append says what it means: new branch, new root, a return to a tip, compaction, model,
    thinking, label, context edit, session name, leaf record; damage with its line."""
    w = Watch(str(live))
    w.start(0)
    lines = [
        _msg("u2", "a1"), _msg("u3", "u1"),  # u3: a second child of u1 -> branch
        _msg("u4", "u2"),  # back to the tip u2
        entry("compaction", "c1", "u4", summary="S", firstKeptEntryId="u2", tokensBefore=1234),
        entry("model_change", "m1", "c1", provider="p", modelId="m"),
        entry("thinking_level_change", "t1", "m1", thinkingLevel="high"),
        entry("label", "l1", "t1", targetId="u1", label="here"),
        entry("context_edit", "e1", "l1", targetId="u4", replacement=None),
        entry("session_info", "n1", "e1", name=" Work "),
        entry("leaf", "f1", "n1", targetId="u1"),
        _msg("u5", "u1"),  # the SDK continuing from the leaf record's target: no branch again
        _msg("r1", None),  # a new root
    ]
    with open(live, "ab") as fh:
        for v in lines:
            fh.write(_line(v))
        fh.write(b"not json\n")
    evs = [e for e in w.poll(1) if e.kind != "entry"]
    got = [(e.kind, e.line) for e in evs]
    assert got == [("branch", 5), ("leaf_moved", 6), ("compaction", 7), ("model", 8), ("thinking", 9), ("label", 10),
                   ("context_edit", 11), ("session_name", 12), ("leaf_moved", 13), ("branch", 15), ("damage", 16)]
    assert evs[2].data["tokensBefore"] == 1234 and evs[7].data["name"] == "Work" and evs[6].data["omits"] is True
    assert evs[9].data["newRoot"] is True and evs[10].data["code"] == "invalid_json"


def test_rewrites_are_noticed_shrink_and_same_size(live):
    """A file that shrinks, or whose bytes before the offset change at the same size, is read again
    from the start and reported rewritten (no entry events for the re-read)."""
    w = Watch(str(live))
    w.start(0)
    live.write_bytes(_line(header()) + _line(_msg("u1", None)))
    evs = w.poll(1)
    assert kinds(evs) == ["rewritten"] and evs[0].data["entryCount"] == 1 and "shrank" in evs[0].data["reason"]
    data = live.read_bytes()
    st = live.stat()
    live.write_bytes(data.replace(b'"hi"', b'"HI"'))
    os.utime(live, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    evs = w.poll(2)
    assert kinds(evs) == ["rewritten"] and "changed" in evs[0].data["reason"]


def test_deleted_then_back(live):
    """Deletion is one event; the file coming back is a rewrite."""
    w = Watch(str(live))
    w.start(0)
    data = live.read_bytes()
    live.unlink()
    assert kinds(w.poll(1)) == ["deleted"]
    assert w.poll(2) == []
    live.write_bytes(data)
    assert kinds(w.poll(3)) == ["rewritten"]


def test_idle_polls_only_stat(live, monkeypatch):
    """While nothing changes a poll is one stat: the file is not opened, whatever its size."""
    import pisess.core.model.follow as follow

    w = Watch(str(live))
    w.start(0)
    opened = []
    monkeypatch.setattr(follow, "open", lambda *a, **k: opened.append(a) or open(*a, **k), raising=False)
    for i in range(20):
        w.poll(i)
    assert opened == []


def test_core_follow_imports_no_ui():
    """The follow and writers modules stay core: no typer, no rich."""
    code = ("import sys, pisess.core.model.follow, pisess.core.model.writers; "
            "print('typer' in sys.modules or 'rich' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "False"


# --- a real appending process ----------------------------------------------------------------------


WRITER = r"""
import sys, time
path, src, first, last, split = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lines = open(src, 'rb').read().split(b'\n')
for n in range(first, last + 1):
    data = lines[n - 1] + b'\n'
    with open(path, 'ab') as fh:
        if n == split:  # pi's line in two writes: the half stays visible for a while
            fh.write(data[:len(data) // 2]); fh.flush(); time.sleep(0.6)
            fh.write(data[len(data) // 2:])
        else:
            fh.write(data)
    time.sleep(0.05)
"""


class Reader:
    def __init__(self, proc):
        self.q: queue.Queue = queue.Queue()
        self.proc = proc
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        for raw in self.proc.stdout:
            self.q.put((time.monotonic(), raw))
        self.q.put((time.monotonic(), None))

    def until(self, pred, timeout=10.0) -> list:
        got, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                at, raw = self.q.get(timeout=end - time.monotonic())
            except queue.Empty:
                break
            if raw is None:
                break
            ev = json.loads(raw)
            ev["_at"] = at
            got.append(ev)
            if pred(ev):
                return got
        raise AssertionError(f"no matching event; got {[(e['event'], e.get('line')) for e in got]}")


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_watch_outlives_its_test():
    """A watch a failed test left running is killed (one that missed its SIGINT ran on for minutes
    after its test, holding up the run's end)."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _watch(path, *args):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # (SIGINT as a terminal gives it: a shell without job control starts its background jobs with
    # SIGINT ignored, children inherit that, and Python then never turns it into KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "pisess", "watch", str(path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _STARTED.append(proc)
    return proc


def _offsets(src: Path) -> dict:
    out, at = {}, 0
    for n, raw in enumerate(src.read_bytes().split(b"\n"), 1):
        out[n] = at
        at += len(raw) + 1
    return out


@pytest.mark.slow
def test_watch_follows_a_process_appending_pi_lines(tmp_path):
    """A writer process appends pi-written lines (one in two writes, 0.6 s apart); watch --json
    prints one entry event per line with its id, parent, type, role, line and byte offset, the
    two-writer event when the alternation is confirmed, nothing for the half line; then a
    rewrite (the file replaced by a shorter one) and a deletion (--exit-on-delete: exit 1)."""
    src = WRITERS / "two-turns-16.jsonl"
    src_lines = src.read_bytes().split(b"\n")
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"\n".join(src_lines[:14]) + b"\n")
    proc = _watch(path, "--json", "--interval", "0.05", "--exit-on-delete")
    r = Reader(proc)
    try:
        start = r.until(lambda e: e["event"] == "start")[-1]
        assert start["entryCount"] == 13 and start["line"] == 14 and start["leafId"] == json.loads(src_lines[13])["id"]
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(src), "15", "22", "18"])
        got = r.until(lambda e: e["event"] == "entry" and e["line"] == 22)
        assert writer.wait(10) == 0
        entries = [e for e in got if e["event"] == "entry"]
        offsets = _offsets(src)
        assert [e["line"] for e in entries] == list(range(15, 23))
        for e in entries:
            v = json.loads(src_lines[e["line"] - 1])
            assert (e["id"], e["parentId"], e["type"], e["role"], e["offset"]) == \
                (v["id"], v["parentId"], v["type"], v["message"]["role"], offsets[e["line"]])
        assert not [e for e in got if e["event"] == "damage"]
        assert [e["line"] for e in got if e["event"] == "concurrent_writers"] == [21]
        cw = next(e for e in got if e["event"] == "concurrent_writers")
        assert cw["startLine"] == expected(src)["start"]
        # the rewrite: pi rewriting the file in place (here: shorter)
        path.write_bytes(b"\n".join(src_lines[:10]) + b"\n")
        rw = r.until(lambda e: e["event"] == "rewritten")[-1]
        assert rw["entryCount"] == 9
        with open(path, "ab") as fh:
            fh.write(src_lines[10] + b"\n")
        again = r.until(lambda e: e["event"] == "entry")[-1]
        assert again["line"] == 11 and again["id"] == json.loads(src_lines[10])["id"]
        path.unlink()
        r.until(lambda e: e["event"] == "deleted")
        assert proc.wait(10) == 1
        assert b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
def test_ctrl_c_ends_with_130_and_count_with_0(tmp_path):
    """SIGINT ends a watch with 130 and no traceback; --count N ends it with 0 after N entries;
    --until-idle ends it with 0 when nothing is appended."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line(header()) + _line(_msg("u1", None)))
    proc = _watch(path, "--interval", "0.05")
    assert proc.stdout.readline()  # the summary's first line: it is running
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 130
    assert b"Traceback" not in proc.stderr.read()

    proc = _watch(path, "--json", "--count", "2", "--interval", "0.05")
    r = Reader(proc)
    r.until(lambda e: e["event"] == "start")
    with open(path, "ab") as fh:
        fh.write(_line(_msg("a1", "u1", "assistant")) + _line(_msg("u2", "a1")))
    r.until(lambda e: e.get("id") == "u2")
    assert proc.wait(10) == 0

    res = subprocess.run([sys.executable, "-m", "pisess", "watch", str(path), "--until-idle", "0.2"],
                         capture_output=True, text=True, cwd=REPO, timeout=20)
    assert res.returncode == 0 and "3 entries" in res.stdout and "u2" in res.stdout


@pytest.mark.parametrize("path", TWO + ONE[:4], ids=lambda p: p.stem)
def test_the_compact_index_path_gives_the_same_alternations(path):
    """validate reads a clean file through the compact index and feeds the rule only switches
    and the entries before them: the answer is the one of feeding every entry."""
    from pisess.core.reading.compact import scan_compact
    from pisess.core.reading.session import index_raw, index_view

    ix = scan_compact(str(path))
    cli = index_view(ix, index_raw(str(path), ix), "cli")
    assert find_alternations(cli.entries, cli.entry_lines) == find_alternations(list(cli.entries),
                                                                                list(cli.entry_lines))


def test_start_summary_counts_cost_as_stats_does():
    """The status line's cost is the session's cost as `pisess stats` sums it."""
    from pisess.cli.commands.watch_cmd import _cost_of

    path = WRITERS / "one-branchy-16.jsonl"
    w = Watch(str(path), cost_of=_cost_of)
    w.start(0)
    res = CliRunner().invoke(app, ["stats", str(path), "--json"])
    assert w.state.cost == pytest.approx(json.loads(res.stdout)["total"]["cost"]) and w.state.cost > 0


def test_after_a_leaf_record_the_compact_path_looks_again(tmp_path):
    """An entry whose parent is the leaf record before it continues in the file but not for the
    rule (after a leaf record the leaf is its target): the compact path must feed it too."""
    from pisess.core.reading.compact import scan_compact
    from pisess.core.reading.session import index_raw, index_view

    es = _chain("x:r a1:x b1:x a2:a1")
    es += [entry("leaf", "L", "a2", ts=es[-1]["timestamp"], targetId="x"), _msg("b2", "L"), _msg("a3", "a2"),
           _msg("b3", "b2")]
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line(header()) + b"".join(_line(v) for v in es))
    ix = scan_compact(str(path))
    cli = index_view(ix, index_raw(str(path), ix), "cli")
    slow = find_alternations(list(cli.entries), list(cli.entry_lines))
    assert find_alternations(cli.entries, cli.entry_lines) == slow


@pytest.mark.slow
def test_follow_new_switches_to_a_newer_session(tmp_path):
    """--follow-new: when a newer session appears in the project, watch says so (switched) and
    follows that file (its start summary)."""
    d = tmp_path / "sessions" / "--work-proj--"
    d.mkdir(parents=True)
    old = d / "2026-01-01T00-00-00-000Z_01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e6f.jsonl"
    old.write_bytes(_line(header(timestamp="2026-01-01T00:00:00.000Z")) + _line(_msg("u1", None)))
    proc = subprocess.Popen([sys.executable, "-m", "pisess", "watch", "--sessions-dir", str(tmp_path / "sessions"),
                             "--cwd", "/work/proj", "--follow-new", "--json", "--interval", "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    r = Reader(proc)
    try:
        assert r.until(lambda e: e["event"] == "start")[-1]["path"].endswith(old.name)
        new = d / "2027-01-01T00-00-00-000Z_01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e70.jsonl"
        new.write_bytes(_line(header(timestamp="2027-01-01T00:00:00.000Z", id="01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e70"))
                        + _line(_msg("n1", None)) + _line(_msg("n2", "n1", "assistant")))
        got = r.until(lambda e: e["event"] == "start" and e["path"].endswith(new.name))
        assert [e["event"] for e in got][-2:] == ["switched", "start"] and got[-1]["entryCount"] == 2
    finally:
        proc.kill()


def _float_options() -> list:
    """(command, option) for every option of the app that takes a float."""
    import typer.main

    from pisess.cli.app import whole_app

    group = typer.main.get_command(whole_app())
    found = []
    for name, cmd in sorted(group.commands.items()):
        for p in getattr(cmd, "params", []):
            if getattr(p.type, "name", "") == "float" or "float" in type(p.type).__name__.lower():
                found.append((name, p.opts[0]))
    return found


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_every_float_option_refuses_nan_and_infinity(monkeypatch, tmp_path, value):
    """NaN and infinity are usage errors (exit 2) for every float option: watch --interval nan
    ended in a traceback, --until-idle nan never ended."""
    from conftest import cli_runner, invoke

    options = _float_options()
    assert ("watch", "--interval") in options and ("watch", "--until-idle") in options
    runner = cli_runner(monkeypatch)
    for command, option in options:
        r = invoke(runner, command, f"{option}={value}", str(tmp_path / "missing.jsonl"))
        assert r.exit_code == 2, (command, option, r.output)
        assert "must be a number of seconds" in r.stderr, (command, option, r.stderr)


@pytest.mark.parametrize("value", ["1e10", "61", "0"])
def test_watch_interval_is_bounded(monkeypatch, tmp_path, value):
    from conftest import cli_runner, invoke

    r = invoke(cli_runner(monkeypatch), "watch", "--interval", value, str(tmp_path / "missing.jsonl"))
    assert r.exit_code == 2 and "from 0.01 to 60 seconds" in r.stderr, r.stderr


def test_watch_with_a_missing_sessions_dir_says_so_as_every_command(monkeypatch, tmp_path):
    """watch said ``no sessions for ...`` and exit 1; every other command names the root, exit 2."""
    from conftest import cli_runner, invoke

    runner = cli_runner(monkeypatch)
    missing = str(tmp_path / "nowhere")
    for command in ("watch", "path"):
        r = invoke(runner, command, "--sessions-dir", missing)
        assert r.exit_code == 2, (command, r.stderr)
        assert f"sessions root {missing} does not exist (from --sessions-dir)" in r.stderr, (command, r.stderr)
