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

from conftest import json_version

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
    assert doc["version"] == json_version(name, doc)
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


@pytest.fixture(scope="module")
def small_disk(tmp_path_factory):
    """A real 64 KiB tmpfs (needs root: CI and the dev container run as root); the monkeypatched
    short writers of test_output run everywhere."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (test_output's short writers cover the rest)")
    where = tmp_path_factory.mktemp("small-disk")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("mount -t tmpfs is not allowed here (test_output's short writers cover the rest)")
    yield where
    subprocess.run(["umount", str(where)], capture_output=True)


def _big_session(directory) -> str:
    """About 180 KB: more than the small disk holds, in every format."""
    lines = [{"type": "session", "version": 3, "id": "01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e6f",
              "timestamp": "2026-07-25T09:14:03.512Z", "cwd": "/work/proj"}]
    parent = None
    for i in range(200):
        lines.append({"type": "message", "id": f"u{i:07d}", "parentId": parent, "timestamp": "2026-07-25T09:14:03.512Z",
                      "message": {"role": "user", "content": [{"type": "text", "text": "hello world " * 60}],
                                  "timestamp": 1}})
        parent = f"u{i:07d}"
    path = os.path.join(str(directory), "big.jsonl")
    with open(path, "w") as fh:
        fh.write("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


FULL_DISK_RUNS = [["export", "--format", "jsonl"], ["export", "--format", "md"], ["export", "--format", "html"],
                  ["context"], ["context", "--json"]]


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("argv", [pytest.param(a, marks=[] if i < 2 else [pytest.mark.slow])
                                  for i, a in enumerate(FULL_DISK_RUNS)], ids=" ".join)
def test_a_disk_that_fills_up_is_a_storage_error(small_disk, tmp_path, argv, unbuffered):
    """Into a filesystem that fills up, output is never cut short with exit 0 (with
    PYTHONUNBUFFERED a write returns a short count instead of raising): the storage message,
    exit 2, and no second failure at exit (``Exception ignored``, exit 120)."""
    big = _big_session(tmp_path)
    out = small_disk / "out"
    try:
        env = {**os.environ, "NO_COLOR": "1", "HOME": "/nonexistent-home", "PYTHONUNBUFFERED": "1"}
        if not unbuffered:
            env.pop("PYTHONUNBUFFERED")
        with open(out, "wb") as fh:
            p = subprocess.run([sys.executable, "-m", "pisess", *argv, big], stdout=fh, stderr=subprocess.PIPE,
                               env=env, timeout=60)
    finally:
        out.unlink()
    assert p.returncode == 2, p.stderr
    assert b"pisess: storage: cannot write to stdout: No space left" in p.stderr
    assert b"Exception ignored" not in p.stderr and b"Traceback" not in p.stderr


def test_export_to_a_disk_that_fills_up_leaves_no_file(small_disk, tmp_path):
    big = _big_session(tmp_path)
    p = pisess(["export", "--format", "jsonl", "-o", str(small_disk / "branch.jsonl"), big])
    assert p.returncode == 2 and b"No space left" in p.stderr, p.stderr
    assert list(small_disk.iterdir()) == []
