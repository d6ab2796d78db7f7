"""A cache that cannot be written: ``cache clear`` names what it could not remove and exits 2,
``cache`` says what is wrong, and a search that cannot use its index says so once instead of
scanning silently; ``cache`` and ``cache clear`` count entries alike.

Tests run as root, whom a directory's mode does not stop: a directory that cannot be written is
made here by the operating system's own refusal, raised from ``os.unlink`` and ``os.open`` for
the paths under it (as a read-only or full disk raises it), or by a path that lies under a file."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import encode_line, header, user
from pisess.cli.app import app
from test_cache import RUNNER, Using


def _line(d) -> bytes:
    return encode_line(d) + b"\n"


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "s" / "p").mkdir(parents=True)
    for k in range(3):
        (tmp_path / "s" / "p" / f"{k}.jsonl").write_bytes(
            _line(header(id=f"s{k}", cwd="/w")) + _line(user("u1", None, text=f"find the needle {k}")))
    return tmp_path / "s"


def _fill(root: Path) -> None:
    """Entries of every kind: compact indexes, summaries, the search index."""
    r = RUNNER.invoke(app, ["search", "needle", "--sessions-dir", str(root), "--all", "--json"], catch_exceptions=False)
    assert json.loads(r.stdout)["via"] == "index"
    for f in sorted((root / "p").iterdir()):
        RUNNER.invoke(app, ["context", str(f), "--json"], catch_exceptions=False)
    RUNNER.invoke(app, ["ls", "--sessions-dir", str(root), "--all", "--long"], catch_exceptions=False)


def _refused(monkeypatch, under: Path, err: int, *names: str) -> None:
    """``os.<names>`` refuse every path under ``under`` with ``err`` (EROFS: a read-only disk)."""
    for name in names:
        real = getattr(os, name)

        def refuse(path, *a, _real=real, **k):
            if str(path).startswith(str(under)):
                raise OSError(err, os.strerror(err), str(path))
            return _real(path, *a, **k)

        monkeypatch.setattr(os, name, refuse)


def _entry_count() -> int:
    return json.loads(RUNNER.invoke(app, ["cache", "--json"], catch_exceptions=False).stdout)["cache"]["entryCount"]


def test_cache_and_cache_clear_count_entries_alike(tmp_path, root, monkeypatch):
    where = tmp_path / "xdg" / "pisess"
    monkeypatch.setenv("XDG_CACHE_HOME", str(where.parent))
    with Using(where):
        _fill(root)
        shown = _entry_count()
        kinds = {p.suffix for p in where.iterdir()}
        assert shown >= 7 and {".idx", ".sqlite"} <= kinds, sorted(kinds)  # (3 indexes, 3 summaries, the search index)
        r = RUNNER.invoke(app, ["cache", "clear", "--json"], catch_exceptions=False)
        assert r.exit_code == 0
        assert json.loads(r.stdout)["cache"] == {"directory": str(where), "removedEntryCount": shown, "notRemoved": []}
        assert _entry_count() == 0 and not [p for p in where.iterdir() if not p.name.startswith(".")]


def test_cache_clear_on_a_read_only_cache_names_what_stays_and_exits_2(tmp_path, root, monkeypatch):
    where = tmp_path / "xdg" / "pisess"
    monkeypatch.setenv("XDG_CACHE_HOME", str(where.parent))
    with Using(where):
        _fill(root)
        before = sorted(p.name for p in where.iterdir())
        shown = _entry_count()
        _refused(monkeypatch, where, errno.EROFS, "unlink")
        r = RUNNER.invoke(app, ["cache", "clear"], catch_exceptions=False)
        assert r.exit_code == 2, r.stdout
        assert sorted(p.name for p in where.iterdir()) == before  # (nothing was removed)
        assert r.stdout == f"removed 0 entries from {where}\n"
        said = r.stderr.splitlines()
        assert f"pisess: {where / 'search.sqlite'}: could not be removed (Read-only file system)" in said
        named = [line for line in said if line.endswith("could not be removed (Read-only file system)")]
        assert len(named) >= shown and all(Path(line.split(": ")[1]).exists() for line in named)
        assert said[-1] == (f"pisess: {len(named)} files of the cache in {where} could not be removed (among them "
                            "the search index, which holds the sessions' text)")
        r = RUNNER.invoke(app, ["cache", "clear", "--json"], catch_exceptions=False)
        doc = json.loads(r.stdout)["cache"]
        assert r.exit_code == 2 and doc["removedEntryCount"] == 0 and len(doc["notRemoved"]) == len(named)
        assert {d["reason"] for d in doc["notRemoved"]} == {"Read-only file system"}


def test_cache_shows_a_problem_line_for_a_cache_it_cannot_write(tmp_path, monkeypatch):
    where = tmp_path / "xdg" / "pisess"
    where.mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(where.parent))
    with Using(where):
        assert not [line for line in RUNNER.invoke(app, ["cache"], catch_exceptions=False).stdout.splitlines()
                    if line.startswith("problem")]
        _refused(monkeypatch, where, errno.EROFS, "open")
        r = RUNNER.invoke(app, ["cache"], catch_exceptions=False)
        assert "problem    the directory cannot be written (Read-only file system)" in r.stdout.splitlines()
        assert "cannot be written" in r.stderr
        doc = json.loads(RUNNER.invoke(app, ["cache", "--json"], catch_exceptions=False).stdout)["cache"]
        assert doc["problem"] == "cannot be written (Read-only file system)"
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "xdg"))
    with Using(blocker / "xdg" / "pisess"):
        r = RUNNER.invoke(app, ["cache"], catch_exceptions=False)
    assert f"problem    the directory cannot be made: {blocker} is not a directory" in r.stdout.splitlines()


def _searched(root: Path, *extra: str):
    return RUNNER.invoke(app, ["search", "needle", "--sessions-dir", str(root), "--all", "--json", *extra],
                         catch_exceptions=False)


def test_a_search_that_cannot_use_its_index_says_so_once(tmp_path, root, monkeypatch):
    """A cache directory that cannot be made (under a file), and a disk that fills up while the
    index is brought up to date: the search answers by the scan, the same hits, and says once why."""
    want = json.loads(_searched(root, "--no-cache").stdout)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with Using(blocker / "pisess"):
        r = _searched(root)
    assert r.exit_code == 0 and json.loads(r.stdout) == want
    assert r.stderr.splitlines() == [f"the search index in {blocker / 'pisess'} cannot be used (not a directory): "
                                     "searching the files themselves"]

    from pisess.core.analyses.search import update

    def full(*a, **k):
        raise sqlite3.OperationalError("database or disk is full")

    with Using(tmp_path / "cache"):
        monkeypatch.setattr(update, "refresh", full)
        r = _searched(root)
    assert r.exit_code == 0 and json.loads(r.stdout) == want
    assert r.stderr.splitlines() == [f"the search index in {tmp_path / 'cache'} cannot be used (database or "
                                     "disk is full): searching the files themselves"]


def test_the_console_script_says_it_once_too(tmp_path, root):
    """The lean path tries the index, hands the run to the app, which tries it again: one line."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = {**os.environ, "XDG_CACHE_HOME": str(blocker), "PISESS_CACHE": "on"}
    out = subprocess.run([sys.executable, "-m", "pisess", "search", "needle", "--sessions-dir", str(root), "--all"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "needle" in out.stdout
    assert out.stderr.count("cannot be used") == 1, out.stderr
