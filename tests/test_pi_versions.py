"""Which pi's rules: one owner (``pisess.core.versions``), one default, every command alike."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import DROP, assistant, cli_runner, header, invoke, user, write_session
from pisess.core import versions
from pisess.core.listing.paths import encode_cwd

PACKAGE = Path(__file__).resolve().parent.parent / "pisess"
CWD = "/work/proj"
NEW_HEADER = "01984a3c-5b1c-7d3e-8f00-00000000000a"  # the newer header, the older file
NEW_MTIME = "01984a3c-5b1c-7d3e-8f00-00000000000b"  # the older header, the newer file


@pytest.fixture
def two_sessions(tmp_path):
    """Two sessions of one project where the newer header has the older mtime: pi 1.6 continues
    the newest file (mtime), pi 0.82.1's SDK listing puts the newest header first."""
    d = tmp_path / "sessions" / encode_cwd(CWD)
    newer_header = write_session(d, [header(id=NEW_HEADER, timestamp="2026-06-01T00:00:00.000Z"),
                                     user("a1", None), assistant("a2", "a1")], name="b.jsonl")
    newer_mtime = write_session(d, [header(id=NEW_MTIME, timestamp="2026-01-01T00:00:00.000Z"),
                                    user("b1", None), assistant("b2", "b1")], name="a.jsonl")
    os.utime(newer_header, (1_700_000_000, 1_700_000_000))
    os.utime(newer_mtime, (1_800_000_000, 1_800_000_000))
    return str(tmp_path / "sessions"), {NEW_HEADER: newer_header, NEW_MTIME: newer_mtime}


# Each command that opens one session, and how its --json says which file it opened.
def _opened_by_document(doc: dict) -> str:
    return doc["path"]


ONE_SESSION = {
    "context": ([], _opened_by_document),
    "tree": ([], _opened_by_document),
    "path": ([], _opened_by_document),
    "export": (["--format", "md"], _opened_by_document),
    "watch": (["--until-idle", "0"], _opened_by_document),
}


@pytest.mark.parametrize("version, expected", [(None, NEW_MTIME), ("1.6.0", NEW_MTIME), ("0.82.1", NEW_HEADER)])
def test_every_command_given_no_session_opens_the_same_file(two_sessions, monkeypatch, version, expected):
    """Without SESSION every command opens the session pi would continue under the same rules:
    the newest file with pi 1.6 (the default), the newest header with pi 0.82.1; watch too (it
    called the listing bare and opened the 0.82.1 answer while the rest opened pi 1.6's)."""
    root, paths = two_sessions
    runner = cli_runner(monkeypatch)
    opened = {}
    for command, (extra, which) in ONE_SESSION.items():
        args = [command, "--json", "--sessions-dir", root, "--cwd", CWD, *extra]
        if version:
            args += ["--pi-version", version]
        res = invoke(runner, *args)
        assert res.exit_code == 0, (command, res.output)
        first = json.loads(res.stdout.splitlines()[0])
        opened[command] = os.path.realpath(which(first))
    assert opened == dict.fromkeys(ONE_SESSION, os.path.realpath(paths[expected]))


def test_completion_lists_as_the_command_would(two_sessions, monkeypatch):
    """Completion takes --sessions-dir, --cwd and --pi-version from the line and lists as the
    command would: pi 1.6 lists a version-1 file, pi 0.82.1's SDK listing (v3 headers) does not."""
    from pisess.cli.common import complete_session

    root, _ = two_sessions
    old = "01984a3c-5b1c-7d3e-8f00-00000000000c"
    write_session(Path(root) / encode_cwd(CWD), [header(id=old, version=DROP), user("c1", None)], name="c.jsonl")
    given = SimpleNamespace(params={"sessions_dir": root, "cwd": CWD})
    assert sorted(complete_session(given, "01984a3c")) == [NEW_HEADER, NEW_MTIME, old]
    assert complete_session(given, "01984a3c-5b1c-7d3e-8f00-00000000000c") == [old]
    given.params["pi_version"] = "0.82.1"
    assert sorted(complete_session(given, "01984a3c")) == [NEW_HEADER, NEW_MTIME]
    given.params["cwd"] = "/elsewhere"
    assert complete_session(given, "") == []


def test_every_reading_command_takes_pi_version():
    """Every command that reads sessions declares --pi-version, with the one default."""
    import typer.main

    from pisess.cli.app import whole_app

    group = typer.main.get_command(whole_app())
    reading = {"context", "tree", "path", "export", "fork", "watch", "ls", "search", "stats", "du", "validate"}
    for name in sorted(reading):
        options = {o.name: o for o in group.commands[name].params}
        assert "pi_version" in options, name
        assert options["pi_version"].default == versions.CURRENT, name


VERSION_LITERAL = re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(v) for v in versions.KNOWN) + r")(?![\w.])")


def test_pi_version_numbers_live_in_versions_py_only():
    """The numbers of the known pi releases are written in ``core/versions.py`` alone: defaults,
    choices and help text all come from it, so a new pi is one number there (plus its rules)."""
    assert versions.KNOWN  # the pattern below matches something
    found = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f == PACKAGE / "core" / "versions.py":
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if VERSION_LITERAL.search(line):
                found.append(f"{f.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert found == []


def test_the_option_help_names_the_versions_from_versions_py(monkeypatch):
    res = invoke(cli_runner(monkeypatch, columns=200), "context", "--help")
    text = " ".join(res.stdout.split())
    for v in versions.KNOWN:
        assert v in text
    assert f"{versions.CURRENT} (the current pi" in text


@pytest.mark.parametrize("given,env,noted", [
    (["--pi-version", "1.6"], {}, True),
    (["--pi-version", "1.6.0", "--json"], {}, True),
    ([], {"PISESS_PI_VERSION": "1.6"}, True),
    ([], {}, False),  # (no version asked for: the SDK reader's own rules are no surprise)
    (["--pi-version", "0.82"], {}, False),
])
def test_the_sdk_reader_says_once_that_it_reads_with_0_82_rules(tmp_path, monkeypatch, given, env, noted):
    """``--pi-version 1.6 --reader harness``: the SDK reader exists only with 0.82.1's rules, so the
    read falls back to them, and says so once on stderr; nothing is said when no other was asked for."""
    f = write_session(tmp_path, [header(), user("u1", None, "x"), assistant("a1", "u1", "y")])
    for env_name, value in env.items():
        monkeypatch.setenv(env_name, value)
    r = invoke(cli_runner(monkeypatch), "tree", f, "--reader", "harness", *given)
    assert r.exit_code == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "0.82.1" in line]
    assert len(lines) == (1 if noted else 0), r.stderr
    if noted:
        assert lines[0] == ("pisess: note: --reader harness reads with pi 0.82.1's rules, not 1.6.0's "
                            "(pi's SDK reader exists only there)")
