"""The index cache: a read through it is the fresh read, whatever happened to the file or the cache.

Every comparison runs the commands twice, through the cache and with ``--no-cache``, and compares
the whole ``--json`` documents and exit codes of context, tree, path, validate, stats and du.
Other tests check that the cache is used at all (a hit parses only the appended bytes), that it
lives where the README says with the modes it says, and that it stays under its cap.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SHARDS, assistant, encode_line, examples, header, new_runner, user
from pisess.cli.app import app
from pisess.core.reading import cache, compact

VIEWS = (("context", "--json"), ("tree", "--json"), ("path", "--json"), ("validate", "--json"),
         ("stats", "--json"), ("du", "--json"))
ROOT = Path(__file__).resolve().parent.parent


RUNNER = new_runner()


def _views(path: str, *extra: str) -> list:
    out = []
    for cmd, *opts in VIEWS:
        r = RUNNER.invoke(app, [cmd, path, *opts, *extra], catch_exceptions=False)
        out.append((cmd, r.exit_code, r.stdout))
    return out


def assert_same_as_fresh(path: str) -> None:
    """Through the cache (twice: the second read uses what the first wrote) == with --no-cache."""
    fresh = _views(path, "--no-cache")
    assert _views(path) == fresh
    assert _views(path) == fresh


class Using:
    """The cache configured in ``directory`` for the test (the suite's own is put back after)."""

    def __init__(self, directory: Path, cap: int = cache.DEFAULT_CAP) -> None:
        self.settings = cache.Settings(directory=str(directory), cap=cap, smallest=0)  # the tests' files are small

    def __enter__(self) -> Using:
        self.previous = cache.configure(self.settings)
        return self

    def __exit__(self, *exc) -> None:
        cache.configure(self.previous)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    where = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(where))
    with Using(where / "pisess"):
        yield where / "pisess"


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.idx")) if directory.exists() else []


def _line(d) -> bytes:
    return encode_line(d) + b"\n"


def _conversation(n: int, start: int = 0, parent: str | None = None) -> list:
    out = []
    for i in range(start, start + n):
        eid = f"e{i}"
        make = user if i % 2 == 0 else assistant
        out.append(make(eid, parent, text=f"message {i} " + "x" * (i % 7)))
        parent = eid
    return out


def _write(path: Path, lines: list) -> None:
    path.write_bytes(b"".join(_line(x) for x in lines))


# --- the cache is used, and where ----------------------------------------------------------------


def _warm_index(path: Path):
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    s = open_session(str(path), "cli", light=True)
    build_context(s)
    return s.store.ix


def test_a_warm_read_of_distinct_ids_builds_no_id_map(tmp_path, cache_dir):
    """A file whose ids are all distinct is read back from its entry without hashing every id:
    its context (a walk up the recorded parent positions, extras included) needs no map, and is
    the fresh read's."""
    path = tmp_path / "s.jsonl"
    conv = _conversation(30)
    label = {"type": "label", "id": "l1", "parentId": "e29", "timestamp": "2026-07-25T09:14:03.512Z",
             "targetId": "e3", "label": "here"}
    model = {"type": "model_change", "id": "m1", "parentId": "l1", "timestamp": "2026-07-25T09:14:03.512Z",
             "provider": "anthropic", "modelId": "claude-x"}
    _write(path, [header(), *conv, label, model, *_conversation(5, 30, "m1")])
    assert_same_as_fresh(str(path))  # (the entry written)
    with path.open("ab") as fh:
        fh.write(b"".join(_line(x) for x in _conversation(2, 35, "e34")))
    ix = _warm_index(path)
    assert ix.cached is not None and ix.deferred()  # read from the entry, no map built
    assert_same_as_fresh(str(path))


def test_an_appended_entry_that_repeats_a_cached_id_is_read_as_pi_reads_it(tmp_path, cache_dir):
    """The recorded positions hold only while no appended entry repeats an id: one that does
    (byId then finds the later entry) sends the walk back to the map, and every view is still
    the fresh read's."""
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(20)])
    assert_same_as_fresh(str(path))
    with path.open("ab") as fh:  # e5 again (a root), then a child of e5: pi's byId finds the new e5
        fh.write(b"".join(_line(x) for x in [user("e5", None, text="again"), assistant("e20", "e5"),
                                             user("e21", "e20")]))
    ix = _warm_index(path)
    assert ix.cached is not None and not ix.ids_unique()
    assert_same_as_fresh(str(path))
    ctx = json.loads(RUNNER.invoke(app, ["context", str(path), "--json"], catch_exceptions=False).stdout)
    texts = json.dumps(ctx)
    assert "again" in texts and "message 4" not in texts  # the path runs e21, e20, the new e5


def test_a_hit_parses_only_the_appended_bytes(tmp_path, cache_dir, monkeypatch):
    """After a first read writes the entry, the next read scans from the cached end, not from 0."""
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(40)])
    assert_same_as_fresh(str(path))
    cached_size = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"".join(_line(x) for x in _conversation(3, 40, "e39")))
    starts: list = []
    real = compact.scan_part
    monkeypatch.setattr(compact, "scan_part", lambda p, start=0, **k: starts.append(start) or real(p, start=start, **k))
    runner_out = RUNNER.invoke(app, ["context", str(path), "--json"], catch_exceptions=False)
    assert starts == [cached_size]
    fresh = RUNNER.invoke(app, ["context", str(path), "--json", "--no-cache"], catch_exceptions=False)
    assert runner_out.stdout == fresh.stdout and '"e42"' in fresh.stdout
    assert starts == [cached_size, 0]  # --no-cache reads the whole file


def test_the_usage_breakdown_is_folded_from_the_cached_prefix(tmp_path, cache_dir, monkeypatch):
    """context --json's usage figures: the prefix's sums come from beside the entry; only the
    appended entries are read back, and the sums are those of one pass."""
    path = tmp_path / "s.jsonl"
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
             "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.30000000000000004}}
    lines = [header()]
    parent = None
    for i in range(30):
        eid = f"a{i}"
        lines.append(assistant(eid, parent, text="t") if i % 3 else user(eid, parent))
        if i % 3:
            lines[-1]["message"]["usage"] = usage
        parent = eid
    _write(path, lines)
    first = RUNNER.invoke(app, ["context", str(path), "--json"], catch_exceptions=False).stdout
    assert json.loads(first)["usageBreakdown"][0]["tokens"] == 60
    with path.open("ab") as fh:
        more = assistant("tail", parent)
        more["message"]["usage"] = usage
        fh.write(_line(more))
    from pisess.core.reading import session as session_mod

    read: list = []
    real = session_mod.Session.iter_complete

    def counting(self, wanted=None, batch=2048, start=0, stop=None):
        for e in real(self, wanted, batch, start, stop):
            read.append(e)
            yield e

    monkeypatch.setattr(session_mod.Session, "iter_complete", counting)
    warm = RUNNER.invoke(app, ["context", str(path), "--json"], catch_exceptions=False).stdout
    assert [e["id"] for e in read] == ["tail"]
    monkeypatch.setattr(session_mod.Session, "iter_complete", real)
    assert warm == RUNNER.invoke(app, ["context", str(path), "--json", "--no-cache"], catch_exceptions=False).stdout
    assert json.loads(warm)["usageBreakdown"][0]["tokens"] == 63


def test_where_the_cache_lives_and_its_modes(tmp_path):
    """$XDG_CACHE_HOME/pisess (absolute only), else ~/.cache/pisess; PISESS_CACHE=off: none; the
    directory 0700 and its files 0600, whatever the umask."""
    assert cache.default_directory({"XDG_CACHE_HOME": "/x/c"}, "/home/u") == "/x/c/pisess"
    assert cache.default_directory({"XDG_CACHE_HOME": "rel"}, "/home/u") == "/home/u/.cache/pisess"
    assert cache.default_directory({}, "/home/u") == "/home/u/.cache/pisess"
    assert cache.from_environ({"PISESS_CACHE": "off"}, "/h").directory is None
    assert cache.from_environ({"PISESS_CACHE": "on"}, "/h").directory == "/h/.cache/pisess"
    assert cache.from_environ({"PISESS_CACHE": "on"}, "/h").smallest == cache.WHOLE_PRINT  # small files: no entry
    assert cache.from_environ({"PISESS_CACHE": "all"}, "/h").smallest == 0
    where = tmp_path / "c" / "pisess"
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(5)])
    old = os.umask(0)
    try:
        with Using(where):
            RUNNER.invoke(app, ["tree", str(path), "--json"], catch_exceptions=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    files = list(where.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert not any(p.name != "s.jsonl" for p in tmp_path.iterdir() if p.is_file())  # nothing beside the session


def test_off_and_no_cache_write_nothing(tmp_path, cache_dir):
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(5)])
    for cmd, *opts in VIEWS:
        RUNNER.invoke(app, [cmd, str(path), *opts, "--no-cache"], catch_exceptions=False)
    assert not _entries(cache_dir)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "x"), "PISESS_CACHE": "off"}
    subprocess.run([sys.executable, "-m", "pisess", "tree", str(path), "--json"], env=env, check=True,
                   capture_output=True)
    assert not (tmp_path / "x").exists()
    RUNNER.invoke(app, ["tree", str(path), "--json"], catch_exceptions=False)
    assert len(_entries(cache_dir)) == 1  # (the same run through the cache writes its entry)


def test_cache_command_shows_and_clears(tmp_path, cache_dir):
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(5)])
    RUNNER.invoke(app, ["context", str(path), "--json"], catch_exceptions=False)
    doc = json.loads(RUNNER.invoke(app, ["cache", "--json"], catch_exceptions=False).stdout)["cache"]
    n = len(list(cache_dir.iterdir()))  # (the file's compact index, and its summaries)
    assert doc["directory"] == str(cache_dir) and doc["enabled"] and doc["entryCount"] == n >= 1 and doc["bytes"] > 0
    text = RUNNER.invoke(app, ["cache"], catch_exceptions=False).stdout
    assert str(cache_dir) in text and f"entries    {n}" in text
    r = RUNNER.invoke(app, ["cache", "clear"], catch_exceptions=False)
    assert r.exit_code == 0 and r.stdout == f"removed {n} entries from {cache_dir}\n" and not _entries(cache_dir)
    assert json.loads(RUNNER.invoke(app, ["cache", "--json"], catch_exceptions=False).stdout)["cache"]["entryCount"] == 0


def test_the_cap_evicts_the_least_recently_used(tmp_path):
    """Past the cap the entries used longest ago go first; the one just written stays."""
    where = tmp_path / "c"
    paths = []
    for k in range(4):
        p = tmp_path / f"s{k}.jsonl"
        _write(p, [header(), *_conversation(30)])
        paths.append(p)
    with Using(where):
        for p in paths[:3]:
            RUNNER.invoke(app, ["tree", str(p), "--json"], catch_exceptions=False)
    entries = {e.stat().st_size for e in _entries(where)}
    one = max(entries)
    by_path = {}
    for k, p in enumerate(paths[:3]):
        e = Path(cache.entry_path(str(where), str(p), os.stat(p)))
        os.utime(e, (1000 + k, 1000 + k))  # s0 used longest ago
        by_path[k] = e
    os.utime(by_path[0], (5000, 5000))  # ... until it is used again: now s1 is the oldest
    with Using(where, cap=3 * one + one // 2):
        RUNNER.invoke(app, ["tree", str(paths[3]), "--json"], catch_exceptions=False)
    left = {e.name for e in _entries(where)}
    assert by_path[1].name not in left
    assert {by_path[0].name, by_path[2].name} <= left and len(left) == 3


# --- a damaged, foreign or raced cache -----------------------------------------------------------


def _one_entry(directory: Path) -> Path:
    (e,) = _entries(directory)
    return e


@pytest.mark.parametrize("damage", ["cut", "garbage", "empty", "flipped", "older-format", "other-version"])
def test_a_damaged_or_foreign_entry_is_a_miss_and_replaced(tmp_path, cache_dir, damage):
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(60)])
    fresh = _views(str(path), "--no-cache")
    assert _views(str(path)) == fresh
    e = _one_entry(cache_dir)
    good = e.read_bytes()
    if damage == "cut":
        e.write_bytes(good[: len(good) // 2])
    elif damage == "garbage":
        e.write_bytes(os.urandom(len(good)))
    elif damage == "empty":
        e.write_bytes(b"")
    elif damage == "flipped":
        mid = len(good) // 2
        e.write_bytes(good[:mid] + bytes([good[mid] ^ 0xFF]) + good[mid + 1:])
    else:
        stamp = cache._stamp()
        fmt, version, rest = stamp.split(b" ", 2)
        if damage == "older-format":
            fmt = str(cache.FORMAT - 1).encode()
        else:
            version = b"0.0.1"
        e.write_bytes(good.replace(stamp, b" ".join((fmt, version, rest)), 1))
    with path.open("ab") as fh:  # and the file grew meanwhile
        fh.write(b"".join(_line(x) for x in _conversation(2, 60, "e59")))
    fresh = _views(str(path), "--no-cache")
    assert _views(str(path)) == fresh
    assert _one_entry(cache_dir).read_bytes().startswith(cache.MAGIC + cache._stamp())  # written anew


@pytest.mark.slow  # two forked pisess processes racing, 1.6 s
def test_two_processes_refreshing_one_entry_at_once(tmp_path):
    """Two pisess processes miss at once and both write the entry: each answers the fresh read,
    and so does the next one, from whichever entry won."""
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(3000)])
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("PISESS_CACHE", None)
    cmd = [sys.executable, "-m", "pisess", "context", str(path), "--json"]
    for round_ in range(3):
        with path.open("ab") as fh:
            fh.write(b"".join(_line(x) for x in _conversation(1, 3000 + round_, f"e{2999 + round_}")))
        # (the fresh read in this process: the processes that race are the point, not this one)
        fresh = RUNNER.invoke(app, ["context", str(path), "--json", "--no-cache"], catch_exceptions=False).stdout_bytes
        assert fresh.startswith(b'{"version":')
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE) for _ in range(2)]
        outs = [p.communicate()[0] for p in procs]
        assert outs == [fresh, fresh]
        assert subprocess.run(cmd, env=env, capture_output=True, check=True).stdout == fresh
        # and the cache of the round before was replaced whole: one entry, of this version
        (e,) = (tmp_path / "xdg" / "pisess").glob("*.idx")
        assert e.read_bytes().startswith(cache.MAGIC + cache._stamp())


# --- the file changes: property tests -------------------------------------------------------------

_IDS = [f"n{i}" for i in range(12)]


@st.composite
def _entry_line(draw) -> bytes:
    """One line: mostly messages of a random tree (ids from a small pool: duplicates and parents
    not seen yet happen), some labels, names, and odd lines pi's readers treat apart."""
    kind = draw(st.sampled_from(["user", "assistant", "assistant", "label", "name", "odd"]))
    eid = draw(st.sampled_from(_IDS))
    parent = draw(st.one_of(st.none(), st.sampled_from(_IDS)))
    if kind == "user":
        return _line(user(eid, parent, text=draw(st.text("ab \n\"é", max_size=8))))
    if kind == "assistant":
        a = assistant(eid, parent)
        if draw(st.booleans()):
            a["message"]["usage"] = {"input": draw(st.integers(0, 9)), "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                     "totalTokens": 1, "cost": {"total": draw(st.sampled_from([0.1, 0.2, 1e-17, 3]))}}
        return _line(a)
    if kind == "label":
        return _line({"type": "label", "id": eid + "L", "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
                      "targetId": draw(st.sampled_from(_IDS)), "label": draw(st.sampled_from(["x", "", " y "]))})
    if kind == "name":
        return _line({"type": "session_info", "id": eid + "I", "parentId": parent,
                      "timestamp": "2026-01-01T00:00:00.000Z", "name": draw(st.sampled_from(["one", "two"]))})
    return draw(st.sampled_from([b"\n", b"1\n", b"{}\n", b"[]\n", b"{oops\n", b"null\n",
                                 _line(header(id="later"))]))


_OPS = st.one_of(
    st.tuples(st.just("append"), st.lists(_entry_line(), min_size=1, max_size=4)),
    st.tuples(st.just("half"), _entry_line(), st.floats(0.05, 0.95)),  # half a line, completed by the next op
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("rewrite"), st.floats(0, 1)),  # same size, one byte changed
    st.tuples(st.just("rename"), st.lists(_entry_line(), max_size=3)),  # replaced by a new file
    st.tuples(st.just("damage"), st.sampled_from(["cut", "garbage"])),
)


def _apply(path: Path, directory: Path, op: tuple, pending: list) -> None:
    kind = op[0]
    data = path.read_bytes()
    if pending:  # complete the half line first, as pi's next write would
        with path.open("ab") as fh:
            fh.write(pending.pop())
    if kind == "append":
        with path.open("ab") as fh:
            fh.write(b"".join(op[1]))
    elif kind == "half":
        line, cut = op[1], max(1, int(len(op[1]) * op[2]))
        with path.open("ab") as fh:
            fh.write(line[:cut])
        pending.append(line[cut:])
    elif kind == "truncate":
        with path.open("r+b") as fh:
            fh.truncate(int(len(data) * op[1]))
    elif kind == "rewrite" and data:
        at = min(len(data) - 1, int(len(data) * op[1]))
        old = data[at:at + 1]
        new = b"x" if old != b"x" else b"y"
        with path.open("r+b") as fh:
            fh.seek(at)
            fh.write(new)
    elif kind == "rename":
        tmp = path.with_suffix(".new")
        tmp.write_bytes(_line(header()) + b"".join(op[1]))
        os.replace(tmp, path)
    elif kind == "damage":
        for e in [*_entries(directory), *sorted(directory.glob("*.sum"))]:
            good = e.read_bytes()
            e.write_bytes(good[: len(good) // 3] if op[1] == "cut" else os.urandom(len(good)))


def _run_ops(tmp: Path, first: list, ops: list) -> None:
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    path = tmp / "s.jsonl"
    path.write_bytes(_line(header()) + b"".join(first))
    directory = tmp / "cache"
    with Using(directory):
        assert_same_as_fresh(str(path))
        pending: list = []
        for op in ops:
            _apply(path, directory, op, pending)
            assert_same_as_fresh(str(path))


@settings(max_examples=examples(40))
@given(first=st.lists(_entry_line(), max_size=8), ops=st.lists(_OPS, min_size=1, max_size=4))
def test_every_view_through_the_cache_is_the_fresh_read(tmp_path, first, ops):
    """Appends (whole lines, half lines completed later), truncations, same-size rewrites,
    replacement by rename and a damaged cache, in any order: context, tree, path, validate,
    stats and du say through the cache what they say without it."""
    _run_ops(tmp_path / "case", first, ops)


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=examples(120) // SHARDS)
@given(first=st.lists(_entry_line(), max_size=30), ops=st.lists(_OPS, min_size=1, max_size=10))
def test_every_view_through_the_cache_is_the_fresh_read_long(tmp_path, shard, first, ops):
    """The same, longer files and longer histories (``-m slow``): 120 examples in ``SHARDS`` runs
    (300 took about 40 CPU-s, the full run's largest family; what the long ones add is the length
    of a history, which every example has)."""
    _run_ops(tmp_path / "case", first, ops)


def test_a_big_file_read_in_two_halves_then_appended(tmp_path, cache_dir, monkeypatch):
    """The cold read of a file split between two processes writes an entry a warm read joins on."""
    from pisess.core import parallel

    monkeypatch.setattr(compact, "SPLIT_MIN", 1 << 10)
    monkeypatch.setattr(parallel, "cpus", lambda: 2)
    path = tmp_path / "s.jsonl"
    _write(path, [header(), *_conversation(400)])
    assert_same_as_fresh(str(path))
    with path.open("ab") as fh:
        fh.write(b"".join(_line(x) for x in _conversation(5, 400, "e399")))
    assert_same_as_fresh(str(path))


def test_blank_lines_appended_after_entries_that_do_not_follow_one_another(tmp_path, cache_dir):
    """A blank line between entries spells the cached index's lines out; blank lines appended
    after it add no entry, and the joined read is still the fresh one (it used to raise)."""
    path = tmp_path / "s.jsonl"
    conversation = _conversation(4)
    path.write_bytes(_line(header()) + _line(conversation[0]) + b"\n" + b"".join(map(_line, conversation[1:])))
    assert_same_as_fresh(str(path))
    assert _entries(cache_dir)
    with path.open("ab") as fh:
        fh.write(b"\n\n")
    assert_same_as_fresh(str(path))


# --- per-file summaries: ls --long, stats --all, du --all -------------------------------------------

SET_VIEWS = (("ls", "--all", "--long", "--json"), ("stats", "--all", "--json"), ("du", "--all", "--json"),
             ("du", "--all", "--top", "3", "--json"), ("search", "message 1", "--all", "--json"))


def _set_views(root: Path, *extra: str) -> list:
    out = []
    for cmd, *opts in SET_VIEWS:
        r = RUNNER.invoke(app, [cmd, *opts, "--sessions-dir", str(root), *extra], catch_exceptions=False)
        # (search says whether the search index answered: the answer is the same either way)
        out.append((cmd, r.exit_code, r.stdout.replace('"via":"index"', '"via":"scan"')))
    return out


def _a_set(root: Path) -> list[Path]:
    """Four sessions of one project, one of them a fork of another (counted apart by stats)."""
    d = root / "--work-project--"
    d.mkdir(parents=True)
    paths = []
    for k in range(4):
        p = d / f"2026-01-0{k + 1}T00-00-00-000Z_s{k}.jsonl"
        h = header(id=f"s{k}", timestamp=f"2026-01-0{k + 1}T00:00:00.000Z", cwd="/work/project")
        if k == 3:
            h["parentSession"] = str(paths[0])
        lines = [h, *_conversation(6 + 3 * k)]
        for j, x in enumerate(lines[2::2]):
            x["message"]["usage"] = {"input": j + k, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                                     "cost": {"total": 0.1 * (j + 1)}}
        _write(p, lines)
        paths.append(p)
    return paths


def test_many_file_views_through_the_summaries_are_the_fresh_read(tmp_path, cache_dir):
    """ls --long, stats --all, du --all (and search's placing) through the cache say what they say
    without it: cold, warm, and after appends, a same-size rewrite, a truncation and a replacement."""
    root = tmp_path / "sessions"
    paths = _a_set(root)

    def same() -> None:
        fresh = _set_views(root, "--no-cache")
        assert _set_views(root) == fresh
        assert _set_views(root) == fresh

    same()
    assert list(cache_dir.glob("*.sum"))  # the summaries were kept
    with paths[1].open("ab") as fh:
        fh.write(b"".join(_line(x) for x in _conversation(2, 20, "e8")))
    same()
    data = bytearray(paths[2].read_bytes())
    at = data.rindex(b"message ")
    data[at] = ord("M")  # same size, a changed byte
    paths[2].write_bytes(bytes(data))
    same()
    with paths[0].open("r+b") as fh:
        fh.truncate(paths[0].stat().st_size // 2)
    same()
    tmp = paths[3].with_suffix(".new")
    tmp.write_bytes(_line(header(id="s3b")) + b"".join(_line(x) for x in _conversation(3)))
    os.replace(tmp, paths[3])
    same()
    for b in cache_dir.glob("*.sum"):
        b.write_bytes(b.read_bytes()[:50])  # cut short: a miss, made again
    same()


def test_a_warm_set_reads_no_session_whole(tmp_path, cache_dir, monkeypatch):
    """Warm, ls --long, du --all and stats --all (of the sessions without forks) take each file's
    figures from the cache: none of them is read whole again."""
    from pisess.core.analyses import du, stats
    from pisess.core.listing import summary

    root = tmp_path / "sessions"
    for p in _a_set(root):  # (written well before they are read: a file written in the same clock tick is read again)
        os.utime(p, (p.stat().st_atime - 3600, p.stat().st_mtime - 3600))
    views = [v for v in SET_VIEWS if v[0] != "search"]
    cold = [x for x in _set_views(root) if x[0] != "search"]
    calls: list = []
    for mod, name in ((summary, "summarize_file"), (du, "_file_usage"), (stats, "scan_visit")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _real=real, _n=name, **k: calls.append((_n, a[0])) or _real(*a, **k))
    warm = []
    for cmd, *opts in views:
        r = RUNNER.invoke(app, [cmd, *opts, "--sessions-dir", str(root)], catch_exceptions=False)
        warm.append((cmd, r.exit_code, r.stdout))
    assert warm == cold
    # only the fork pair is read again, by stats (its copies are matched entry by entry)
    assert sorted(n for n, _ in calls) == ["scan_visit", "scan_visit"]
    assert {Path(p).name[-8:] for _, p in calls} == {"s0.jsonl", "s3.jsonl"}


# --- watch resumes from the cached end -----------------------------------------------------------------


def _watch_picture(w) -> tuple:
    s = w.state
    return (s.entries, s.branches, s.context_tokens(), s.cost, s.name, s.model, s.thinking, s.leaf, s.last_line,
            s.damaged, [(n, e) for n, e in s.recent], w.tail.offset, w.tail.line)


def test_watch_resumes_from_the_kept_state(tmp_path, cache_dir, monkeypatch):
    """A second watch of a grown file reads only the appended bytes, and then sees what a watch
    that read the whole file sees: the same state, the same damage, the same events next."""
    from pisess.core.model import follow

    path = tmp_path / "s.jsonl"
    lines = [header(), *_conversation(30), b"{oops", {"type": "session_info", "id": "i1", "parentId": "e29",
                                                        "timestamp": "2026-01-01T00:00:00.000Z", "name": "n"}]
    lines[5]["parentId"] = "e1"  # a branch
    _write(path, lines)
    first = follow.Watch(str(path))
    first_damage = first.start(0.0)
    assert first_damage and list(cache_dir.glob("*.state-watch"))
    with path.open("ab") as fh:
        fh.write(b"".join(_line(x) for x in _conversation(4, 30, "i1")))
    reads: list = []
    real = follow.Tail._read_lines
    monkeypatch.setattr(follow.Tail, "_read_lines", lambda self, *a: reads.append(self.offset) or real(self, *a))
    resumed = follow.Watch(str(path))
    damage = resumed.start(1.0)
    assert reads == [first.tail.offset]  # from the kept end, not from 0
    previous = cache.configure(cache.Settings())
    try:
        fresh = follow.Watch(str(path))
        fresh_damage = fresh.start(1.0)
    finally:
        cache.configure(previous)
    assert [e.to_json() for e in damage] == [e.to_json() for e in fresh_damage]
    assert _watch_picture(resumed) == _watch_picture(fresh)
    with path.open("ab") as fh:
        fh.write(_line(user("z", "e3")) + _line(assistant("z2", "z")))
    assert [e.to_json() for e in resumed.poll(2.0)] == [e.to_json() for e in fresh.poll(2.0)]
    assert _watch_picture(resumed) == _watch_picture(fresh)
    # a rewritten file is read from the start
    _write(path, [header(id="other"), *_conversation(3)])
    reads.clear()
    again = follow.Watch(str(path))
    again.start(3.0)
    assert reads == [0] and again.state.entries == 3


def test_a_warm_ls_stats_each_file_and_reads_only_the_changed_ones(tmp_path, cache_dir, monkeypatch):
    """ls and ls --long, warm: one bundle per directory, a stat per file; a file that grew, was
    rewritten in place or replaced is read again, and the listing is the one without a cache."""
    from pisess.core.listing import summary

    root = tmp_path / "sessions"
    paths = _a_set(root)
    for p in paths:
        os.utime(p, (p.stat().st_atime - 3600, p.stat().st_mtime - 3600))
    args = [["ls", "--json", "--sessions-dir", str(root), "--all"], ["ls", "--long", "--json", "--sessions-dir",
                                                                      str(root), "--all"]]
    first = [RUNNER.invoke(app, a, catch_exceptions=False).stdout for a in args]
    calls: list = []
    real = summary.read_cli_info
    monkeypatch.setattr(summary, "read_cli_info", lambda p, **k: calls.append(p) or real(p, **k))
    assert [RUNNER.invoke(app, a, catch_exceptions=False).stdout for a in args] == first
    assert calls == []
    with paths[1].open("ab") as fh:
        fh.write(_line(user("later", "e5", text="more")))
    got = [RUNNER.invoke(app, a, catch_exceptions=False).stdout for a in args]
    assert {Path(p).name for p in calls} == {paths[1].name}
    assert got == [RUNNER.invoke(app, [*a, "--no-cache"], catch_exceptions=False).stdout for a in args]


def test_the_cache_digests_are_hashlibs_without_importing_it(tmp_path):
    """Fingerprints and entry names are hashlib's blake2b, taken from the interpreter's _blake2:
    importing hashlib loads OpenSSL, milliseconds of every run that checks a cached file."""
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"x" * 300_000)
    code = ("import json, os, sys\nfrom pisess.core.reading import cache\n"
            f"p = {str(f)!r}\nwith open(p, 'rb') as fh:\n"
            "    small, big = cache.fingerprint(fh, 100), cache.fingerprint(fh, 300_000)\n"
            "name = cache.entry_path('/c', p, os.stat(p))\n"
            "print(json.dumps(['hashlib' in sys.modules, small.hex(), big.hex(), name]))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, small, big, name = json.loads(r.stdout)
    assert not imported
    import hashlib

    with open(f, "rb") as fh:
        assert small == cache.fingerprint(fh, 100).hex()
        h = hashlib.blake2b(digest_size=16)
        h.update((100).to_bytes(8, "little"))
        h.update(b"x" * 100)
        assert small == h.hexdigest()
        assert big == cache.fingerprint(fh, 300_000).hex()
    st = os.stat(f)
    key = f"{st.st_dev}:{st.st_ino}:{os.path.abspath(f)}".encode()
    assert name == os.path.join("/c", hashlib.blake2b(key, digest_size=16).hexdigest() + cache.SUFFIX)
