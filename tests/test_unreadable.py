"""What cannot be read, every command the same way: the rest is read and printed, each path that
could not be read is named on stderr (``path: unreadable: reason``) and listed in ``--json``
(``unreadable``), and the exit code is 2, after the results.

A directory is made unreadable two ways: ``chmod 000`` (only when not running as root, where the
mode stops nothing) and ``os.scandir`` refusing it with ``PermissionError`` (holds for root too).
A symlink loop and a dangling symlink are real in both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import assistant, cli_runner, header, invoke, user, write_session

SECRET = "sk-ant-api03-" + "Q9xA7bZ2" * 11
IDS = {"a": "aaaa1111-0000-7000-8000-000000000001", "b": "bbbb2222-0000-7000-8000-000000000002",
       "c": "cccc3333-0000-7000-8000-000000000003"}


def _project(root: Path, name: str) -> Path:
    d = root / f"--{name}--"
    sid = IDS[name]
    write_session(d, [header(id=sid, cwd=f"/{name}"), user("u1", None, f"hello {SECRET}"), assistant("a1", "u1")],
                  name=f"2026-01-01T00-00-00-000Z_{sid}.jsonl")
    return d


@pytest.fixture()
def runner(monkeypatch):
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return cli_runner(monkeypatch, columns=200, PISESS_CACHE="off")


run = invoke


def _refuse_listing(monkeypatch, blocked: Path) -> None:
    real = os.scandir
    target = os.path.realpath(blocked)

    def scandir(path="."):
        if not isinstance(path, int) and os.path.realpath(os.fspath(path)) == target:  # (an fd: rmtree's)
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture(params=["scandir", "chmod"])
def blocked_root(request, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A sessions root of three projects; the second cannot be listed."""
    root = tmp_path / "sessions"
    a, b, _ = (_project(root, n) for n in "abc")
    if request.param == "chmod":
        if os.geteuid() == 0:
            pytest.skip("chmod 000 stops nothing for root (the scandir case covers it)")
        os.chmod(b, 0)
        request.addfinalizer(lambda: os.chmod(b, 0o755))
    else:
        _refuse_listing(monkeypatch, b)
    monkeypatch.chdir(tmp_path)
    return root, b


def _unreadable_line(r, path: Path) -> bool:
    return f"{path}: unreadable: cannot list: Permission denied" in r.stderr


COMMANDS = {
    "ls --all": ["ls", "--all"],
    "ls --all (pi 0.82.1)": ["ls", "--all", "--pi-version", "0.82.1"],
    "search --all": ["search", "hello", "--all"],
    "stats --all": ["stats", "--all"],
    "du --all": ["du", "--all"],
    "validate": ["validate"],
    "secrets --all": ["secrets", "--all"],
}


@pytest.mark.parametrize("label", list(COMMANDS))
def test_unreadable_directory_is_named_the_rest_is_read(runner, blocked_root, label):
    root, blocked = blocked_root
    r = run(runner, *COMMANDS[label], "--sessions-dir", str(root))
    assert r.exit_code == 2, (r.stdout, r.stderr)
    if label.startswith(("validate", "secrets")):  # compiler-style: listed with the findings, on stdout
        assert f"--b--: error storage: cannot list {blocked}: Permission denied" in r.stdout
        assert "1 unreadable" in r.stdout
    else:
        assert _unreadable_line(r, blocked), r.stderr
    out = r.stdout
    assert IDS["a"][:8] in out or "--a--" in out or "2 sessions" in out or "2 files" in out, out
    if label.startswith(("ls", "search", "du")):
        assert IDS["a"][:8] in out and IDS["c"][:8] in out and IDS["b"][:8] not in out


@pytest.mark.parametrize("label", list(COMMANDS))
def test_unreadable_directory_in_json(runner, blocked_root, label):
    root, blocked = blocked_root
    r = run(runner, *COMMANDS[label], "--sessions-dir", str(root), "--json")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    assert [(u["path"], u["code"], u["reason"]) for u in doc["unreadable"]] == [
        (str(blocked), "storage", "cannot list: Permission denied")]
    assert _unreadable_line(r, blocked)
    assert "error" not in doc or label.startswith("ls")  # results, not an error document
    text = json.dumps(doc)
    assert IDS["a"] in text and IDS["c"] in text


def test_resolution_names_what_it_could_not_read(runner, blocked_root):
    """An id found among what can be read is the one pi finds (pi skips what it cannot read):
    shown, exit 0, the unreadable directory named.  One only the unreadable directory could hold:
    exit 2, not "no session matches"."""
    root, blocked = blocked_root
    for version in ("1.6.0", "0.82.1"):
        r = run(runner, "path", IDS["c"][:8], "--sessions-dir", str(root), "--cwd", "/a", "--pi-version", version)
        assert r.exit_code == 0 and "u1" in r.stdout and _unreadable_line(r, blocked), (version, r.stderr)
        r = run(runner, "tree", IDS["b"][:8], "--sessions-dir", str(root), "--cwd", "/a", "--pi-version", version,
                "--json")
        assert r.exit_code == 2, (version, r.stdout, r.stderr)
        doc = json.loads(r.stdout)
        assert doc["error"]["code"] == "not_found" and "could not be read" in doc["error"]["message"]
        assert [u["path"] for u in doc["unreadable"]] == [str(blocked)]
        assert _unreadable_line(r, blocked)


def test_search_and_stats_with_a_named_directory_that_cannot_be_listed_below(runner, blocked_root):
    root, blocked = blocked_root
    for command in (["search", "hello"], ["stats"], ["du"]):
        r = run(runner, *command, str(root))
        assert r.exit_code == 2 and _unreadable_line(r, blocked), (command, r.stderr)
        assert r.stdout.strip(), command  # the results of what could be read


def test_symlink_loop_and_dangling_symlink(runner, tmp_path, monkeypatch):
    """A project directory that is a symlink loop (pi 1.6 lists symlinked projects) and a dangling
    ``*.jsonl``: the other projects are listed, both named, exit 2."""
    root = tmp_path / "sessions"
    _project(root, "a")
    _project(root, "c")
    (root / "--loop--").symlink_to("--loop--")
    (root / "--c--" / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    monkeypatch.chdir(tmp_path)
    r = run(runner, "ls", "--all", "--sessions-dir", str(root), "--json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert {s["id"] for s in doc["sessions"]} == {IDS["a"], IDS["c"]}
    got = {u["path"]: u["reason"] for u in doc["unreadable"]}
    assert got == {str(root / "--loop--"): "cannot list: Too many levels of symbolic links",
                   str(root / "--c--" / "gone.jsonl"): "cannot read: No such file or directory"}
    for path, reason in got.items():
        assert f"{path}: unreadable: {reason}" in r.stderr
    # the loop named as an argument
    for command in (["stats"], ["search", "hello"], ["du"], ["validate"], ["secrets"]):
        r = run(runner, *command, str(root / "--loop--"), str(root / "--a--"), "--json")
        assert r.exit_code == 2, (command, r.stdout, r.stderr)
        doc = json.loads(r.stdout)
        assert [u["path"] for u in doc["unreadable"]] == [str(root / "--loop--")], (command, doc)
        assert "Too many levels of symbolic links" in doc["unreadable"][0]["reason"]
        assert IDS["a"] in r.stdout
    # resolution passes the loop by (pi 1.6 lists it as a project)
    r = run(runner, "path", IDS["a"][:8], "--sessions-dir", str(root), "--cwd", "/c")
    assert r.exit_code == 0 and f"{root / '--loop--'}: unreadable:" in r.stderr


def test_unreadable_file_in_a_named_directory(runner, tmp_path, monkeypatch):
    """A file that cannot be opened, below a directory named on the command line: exit 2, named."""
    root = tmp_path / "sessions"
    a = _project(root, "a")
    bad = next(a.glob("*.jsonl"))
    real = os.open

    def refuse(path, flags, *args, **kw):
        if os.fspath(path) == str(bad):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, flags, *args, **kw)

    _project(root, "c")
    monkeypatch.setattr(os, "open", refuse)
    monkeypatch.chdir(tmp_path)
    for command in (["stats"], ["search", "hello"], ["du"], ["validate"], ["secrets"], ["ls", "--all"]):
        args = [*command, "--sessions-dir", str(root)] if command[0] == "ls" else [*command, str(root)]
        r = run(runner, *args, "--json")
        assert r.exit_code == 2, (command, r.stdout, r.stderr)
        doc = json.loads(r.stdout)
        assert [(u["path"], u["reason"]) for u in doc["unreadable"]] == [(str(bad), "cannot read: Permission denied")]
        assert IDS["c"] in r.stdout
        if command[0] not in ("validate", "secrets"):
            assert f"{bad}: unreadable: cannot read: Permission denied" in r.stderr


def test_core_listing_lists_unreadable_directories(tmp_path, monkeypatch):
    from pisess.core.listing.repo import list_sessions
    from pisess.core.listing.sessionset import collect

    root = tmp_path / "sessions"
    _, b, _ = (_project(root, n) for n in "abc")
    _refuse_listing(monkeypatch, b)
    for version in ("1.6.0", "0.82.1"):
        got = list_sessions(str(root), None, pi_version=version)
        assert len(got.sessions) == 2 and [(e.path, e.unreadable) for e in got.unreadable] == [(str(b), True)]
    scope = collect(None, str(root), "/a", all_projects=True)
    assert len(scope.files) == 2 and [e.path for e in scope.unreadable] == [str(b)]


# --- nothing to read, and a root that is not there ---------------------------------------------------


@pytest.mark.parametrize("command", [["stats"], ["du"], ["search", "hello"]])
def test_empty_directory_argument_is_named(runner, tmp_path, monkeypatch, command):
    """A directory with no ``*.jsonl``: named, and said so (nothing found: exit 1), not "no sessions
    for <project>"."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(tmp_path)
    r = run(runner, *command, str(empty), "--sessions-dir", str(tmp_path))
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert f"{empty} holds no *.jsonl files" in r.stderr and "no sessions for" not in r.stderr
    r = run(runner, *command, str(empty), "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["path"] == str(empty)


ROOT_COMMANDS = [["ls"], ["ls", "--all"], ["stats"], ["du", "--all"], ["search", "x"], ["validate"], ["secrets"],
                 ["secrets", "--all"], ["tree"], ["context", "abcd1234"], ["path"], ["export", "abcd1234"]]


@pytest.mark.parametrize("how", ["option", "env"])
@pytest.mark.parametrize("kind", ["missing", "file"])
@pytest.mark.parametrize("command", ROOT_COMMANDS, ids=" ".join)
def test_sessions_root_that_is_not_a_directory_is_exit_2(runner, tmp_path, monkeypatch, command, kind, how):
    agent = tmp_path / "agent"
    root = agent / "sessions"
    if kind == "file":
        root.parent.mkdir()
        root.write_text("")
    args = list(command)
    if how == "option":
        args += ["--sessions-dir", str(root)]
    else:
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.chdir(tmp_path)
    r = run(runner, *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    what = "does not exist" if kind == "missing" else "is not a directory"
    assert f"sessions root {root} {what}" in r.stderr
    assert not (kind == "missing" and root.exists())  # nothing created


def test_an_unreadable_file_is_one_unbroken_line_at_any_width(monkeypatch, tmp_path):
    """validate's line for a file it cannot read is compiler style like its findings: the path is
    never broken by the terminal's width (grep and copy-paste find it whole), however long."""
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    fifo = deep / "pipe.jsonl"
    os.mkfifo(fifo)
    # the path is shown as given (relative here)
    monkeypatch.chdir(tmp_path)
    r = run(cli_runner(monkeypatch, columns=60, PISESS_CACHE="off"), "validate", str(fifo.relative_to(tmp_path)))
    assert r.exit_code == 2
    lines = [ln for ln in r.stdout.splitlines() if "error storage" in ln]
    shown = f"{'d' * 90}/pipe.jsonl"
    assert len(lines) == 1 and lines[0].startswith(shown + ":") and len(lines[0]) > 60, r.stdout
