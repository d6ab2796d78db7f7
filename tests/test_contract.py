"""The one output contract, command by command, through the real entry point (a subprocess):
with ``--json`` a usage error and a missing file each print one JSON error document; a missing
file exits 2 (cannot read), a usage error 2; a stdout that cannot be written (``/dev/full``) is a
clean ``pisess: storage`` message and exit 2.  Never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources

import pytest

MISSING = "/nonexistent-dir/none.jsonl"
COMMANDS = {  # argv with a missing input; every command that reads sessions
    "ls": ["ls", "--sessions-dir", "/nonexistent-dir"],
    "tree": ["tree", MISSING],
    "path": ["path", MISSING],
    "context": ["context", MISSING],
    "validate": ["validate", MISSING],
    "fork": ["fork", MISSING, "abc", "--dry-run"],
    "export": ["export", MISSING],
    "secrets": ["secrets", MISSING],
    "search": ["search", "needle", MISSING],
    "stats": ["stats", MISSING],
    "du": ["du", MISSING],
}


#: The default run's share of each command matrix (a subprocess each, 130 ms): a file command, the
#: directory command and fork (its human view talks on stderr); CI runs every command (``-m ''``).
QUICK = {"context", "ls", "fork"}


def commands() -> list:
    return [name if name in QUICK else pytest.param(name, marks=pytest.mark.slow) for name in sorted(COMMANDS)]


def pisess(argv: list[str], stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "HOME": "/nonexistent-home"}
    env.pop("PI_CODING_AGENT_DIR", None)
    return subprocess.run([sys.executable, "-m", "pisess", *argv], stdout=stdout, stderr=subprocess.PIPE,
                          env=env, timeout=60)


@pytest.mark.parametrize("name", commands())
def test_missing_input_is_one_json_error_and_exit_2(name):
    p = pisess([*COMMANDS[name], "--json"])
    assert p.returncode == 2, p.stderr
    doc = json.loads(p.stdout)
    assert doc["version"] == 1
    assert doc.get("error") or doc.get("unreadable"), doc
    assert b"Traceback" not in p.stderr and p.stderr.strip()


@pytest.mark.parametrize("name", commands())
def test_usage_error_keeps_the_json_promise(name):
    p = pisess([name, "--no-such-option", "--json"])
    assert p.returncode == 2
    assert json.loads(p.stdout)["error"]["code"] == "usage"
    assert b"Traceback" not in p.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("name", commands())
@pytest.mark.parametrize("as_json", [False, True])
def test_a_full_stdout_is_a_clean_storage_error(name, as_json):
    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as root:
        example = next(str(p) for p in sorted(root.rglob("*.jsonl")))
        with open(example, "rb") as fh:
            fh.readline()
            first = json.loads(fh.readline())["id"]
        argv = {"ls": ["ls", "--sessions-dir", str(root), "--all"],
                "fork": ["fork", example, first, "--position", "at", "--dry-run"],
                "search": ["search", "the", example]}.get(name) or [example if a == MISSING else a
                                                                    for a in COMMANDS[name]]
        # (fork's human view talks on stderr and writes nothing to stdout with --dry-run)
        flags = ["--json"] if as_json or name == "fork" else []
        with open("/dev/full", "wb") as full:
            p = pisess([*argv, *flags], stdout=full)
    assert b"Traceback" not in p.stderr
    assert p.returncode == 2, p.stderr
    assert b"pisess: storage" in p.stderr and b"No space left" in p.stderr
