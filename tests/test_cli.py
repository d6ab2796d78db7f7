"""Commands through Typer's CliRunner: options, exit codes, JSON shapes, stdout vs stderr."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from conftest import entry, invoke, user
from pisess.cli.app import app

CWD = "/home/you/projects/webapp"


run = invoke


def sessions(root: Path) -> list[Path]:
    return sorted(root.rglob("*.jsonl"))


def write(path: Path, lines: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def header(sid="s1", cwd=CWD, **kw):
    return {"type": "session", "version": 3, "id": sid, "timestamp": "2025-03-03T09:00:00.000Z", "cwd": cwd, **kw}


def msg(eid, parent, role="user", text="hi", ts="2025-03-03T09:00:01.000Z"):
    m = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        m.update(provider="anthropic", model="claude-x", stopReason="stop")
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": m}


def test_help_lists_every_command(runner):
    """--help names every command, each with an example in its own help."""
    r = run(runner, "--help")
    assert r.exit_code == 0
    for cmd in ("ls", "tree", "path", "context", "validate", "fork", "demo"):
        assert cmd in r.stdout
        sub = run(runner, cmd, "--help")
        assert sub.exit_code == 0 and "Example: pisess" in sub.stdout


def test_ls_json_shape_and_order(runner, example_sessions):
    """ls --json lists the project's sessions with pi's harness metadata and a version field."""
    r = run(runner, "ls", "--sessions-dir", str(example_sessions), "--cwd", CWD, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["version"] == 2
    assert len(doc["sessions"]) == 2
    assert {"id", "createdAt", "cwd", "path"} <= set(doc["sessions"][0])
    assert doc["skipped"] == []


def test_ls_reports_skipped_on_stderr(runner, example_sessions):
    """A file that is not a session is listed in skipped and counted on stderr, not stdout."""
    (example_sessions / "--home-you-projects-webapp--" / "junk.jsonl").write_text("not json\n")
    r = run(runner, "ls", "--sessions-dir", str(example_sessions), "--cwd", CWD)
    assert r.exit_code == 0
    assert "1 file is not a session" in r.stderr
    assert "not a session" not in r.stdout


def test_ls_empty_project_is_fine(runner, tmp_path):
    """ls of a project without sessions prints an empty listing and creates nothing."""
    root = tmp_path / "sessions"
    root.mkdir()
    r = run(runner, "ls", "--sessions-dir", str(root), "--cwd", "/x")
    assert r.exit_code == 0
    assert r.stdout == (f"/x \u00b7 0 sessions \u00b7 {root}/--x--\n"
                        "  (no sessions here; try --all, --cwd DIR or --sessions-dir DIR)\n")
    assert os.listdir(root) == []
    assert run(runner, "ls", "--sessions-dir", str(root), "--color", "pink").exit_code == 2


@pytest.mark.parametrize("make, what", [(None, "does not exist"), ("file", "is not a directory")])
def test_ls_sessions_root_that_is_not_a_directory_fails(runner, tmp_path, monkeypatch, make, what):
    """A --sessions-dir or PI_CODING_AGENT_DIR that does not exist (or is a file) is said so, exit 2,
    never "0 sessions"; nothing is created."""
    missing = tmp_path / "nope"
    if make == "file":
        missing.write_text("")
    r = run(runner, "ls", "--sessions-dir", str(missing), "--cwd", "/x")
    assert r.exit_code == 2
    assert f"sessions root {missing} {what}" in r.stderr and "0 sessions" not in r.stdout
    r = run(runner, "ls", "--sessions-dir", str(missing), "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "storage"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    r = run(runner, "ls")
    assert r.exit_code == 2 and f"sessions root {tmp_path / 'agent' / 'sessions'} does not exist" in r.stderr
    assert not (tmp_path / "agent").exists()


def test_ls_empty_listing_does_not_load_rich(tmp_path):
    """A fresh project's ls (and completion's every Tab) must not pay for importing Rich."""
    import subprocess
    import sys

    code = ("import sys\nfrom pisess.cli.app import main\nsys.argv = ['pisess', 'ls', '--sessions-dir', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if m.startswith('rich')))")
    (tmp_path / "sessions").mkdir()
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "sessions")], capture_output=True, text=True,
                         env={**os.environ, "HOME": str(tmp_path)}, check=True).stdout
    assert "0 sessions" in out and out.strip().endswith("[]")


def test_context_json_contract(runner, example_sessions):
    """context --json carries the keys conformance checks, and names the reader it used."""
    f = sessions(example_sessions)[0]
    r = run(runner, "context", str(f), "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    for k in ("version", "reader", "path", "header", "entryCount", "leafId", "pathIds", "contextEntryIds",
              "state", "labels", "sessionName", "messages", "llmMessages"):
        assert k in doc
    assert doc["reader"] in ("harness", "cli")


def test_reader_auto_picks_harness_for_sdk_files(runner, tmp_path):
    """A file with a leaf record is read with the harness reader under --reader auto."""
    f = write(tmp_path / "a.jsonl", [header(), msg("a", None), msg("b", "a", "assistant"),
                                     {"type": "leaf", "id": "l", "parentId": "b", "timestamp": "t", "targetId": "a"}])
    doc = json.loads(run(runner, "context", str(f), "--json").stdout)
    assert doc["reader"] == "harness" and doc["leafId"] == "a"
    doc = json.loads(run(runner, "context", str(f), "--json", "--reader", "cli").stdout)
    assert doc["reader"] == "cli" and doc["leafId"] == "l"


def test_invalid_file_errors_with_file_and_line(runner, tmp_path):
    """A bad line: exit 1, JSON error object on stdout, file:line: code: message on stderr."""
    f = write(tmp_path / "bad.jsonl", [header(), msg("a", None), "{oops"])
    r = run(runner, "context", str(f), "--json", "--reader", "harness")
    assert r.exit_code == 1
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "invalid_entry" and err["line"] == 3 and err["reason"] == "line 3 is not valid JSON"
    assert f"{f}:3: invalid_entry:" in r.stderr
    assert "Traceback" not in r.stderr


def test_lenient_lists_skipped_lines(runner, tmp_path):
    """--lenient reads past a bad line and names it on stderr."""
    f = write(tmp_path / "bad.jsonl", [header(), msg("a", None), "{oops", msg("b", "a", "assistant")])
    r = run(runner, "tree", str(f), "--lenient", "--no-pager")
    assert r.exit_code == 0
    assert f"{f}:3: skipped: not valid JSON" in r.stderr
    assert "b" in r.stdout


def test_usage_errors_exit_2(runner, tmp_path):
    """Bad option values are usage errors: exit 2."""
    f = write(tmp_path / "a.jsonl", [header(), msg("a", None)])
    assert run(runner, "context", str(f), "--reader", "nope").exit_code == 2
    assert run(runner, "validate", str(f), "--format", "xml").exit_code == 2
    assert run(runner, "tree", str(f), "--color", "pink").exit_code == 2


def test_missing_session_is_not_found(runner, example_sessions):
    """An id that matches nothing: exit 1 with a clear message."""
    r = run(runner, "tree", "zzzz", "--sessions-dir", str(example_sessions), "--cwd", CWD)
    assert r.exit_code == 1
    assert "no session matches" in r.stderr


def test_ambiguous_prefix_lists_candidates(runner, example_sessions):
    """A prefix matching two sessions: exit 1 listing both."""
    r = run(runner, "tree", "01955b3b", "--sessions-dir", str(example_sessions), "--cwd", CWD)
    assert r.exit_code == 1
    assert "matches 2 sessions" in r.stderr


def test_default_session_is_newest_of_project(runner, example_sessions):
    """Without SESSION, the newest session of the --cwd project is used."""
    r = run(runner, "path", "--sessions-dir", str(example_sessions), "--cwd", CWD, "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["entries"]


def test_validate_exit_codes_and_formats(runner, tmp_path, monkeypatch):
    """validate: 0 clean, 1 errors, --strict promotes warnings; github format emits annotations."""
    monkeypatch.chdir(tmp_path)  # findings name files as given: a relative name stays relative
    good = write(tmp_path / "good.jsonl", [header(), msg("a", None), msg("b", "a", "assistant")])
    dup = write(tmp_path / "dup.jsonl", [header(), msg("a", None), msg("a", None, "assistant")])
    bad = write(tmp_path / "bad.jsonl", [header(), "{oops"])
    assert run(runner, "validate", str(good)).exit_code == 0
    assert run(runner, "validate", str(dup)).exit_code == 0
    assert run(runner, "validate", str(dup), "--strict").exit_code == 1
    r = run(runner, "validate", str(bad))
    assert r.exit_code == 1 and "bad.jsonl:2: error" in r.stdout.splitlines()[0]
    assert r.stdout.startswith(f"{bad}:2: error")
    assert run(runner, "validate", "bad.jsonl").stdout.startswith("bad.jsonl:2: error")
    r = run(runner, "validate", str(bad), "--format", "github")
    assert "::error file=" in r.stdout and ",line=2," in r.stdout
    doc = json.loads(run(runner, "validate", str(bad), "--json").stdout)
    assert doc["files"][0]["pi"]["harness"]["opens"] is False
    assert doc["files"][0]["findings"][0]["code"] == "truncated_line" or doc["files"][0]["findings"]


def test_validate_unreadable_path_exits_2(runner, tmp_path):
    """A path that does not exist: exit 2."""
    assert run(runner, "validate", str(tmp_path / "missing.jsonl")).exit_code == 2


def test_validate_github_auto(runner, tmp_path, monkeypatch):
    """GITHUB_ACTIONS=true picks the github format by itself."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    bad = write(tmp_path / "bad.jsonl", [header(), "{oops"])
    assert "::error" in run(runner, "validate", str(bad)).stdout


def test_fork_writes_new_file_and_leaves_source(runner, example_sessions):
    """fork creates one new file in the project dir, prints its path on stdout, source untouched."""
    src = sessions(example_sessions)[0]
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    doc = json.loads(run(runner, "context", str(src), "--json").stdout)
    target = doc["pathIds"][-1]
    r = run(runner, "fork", str(src), target, "--position", "at", "--sessions-dir", str(example_sessions))
    assert r.exit_code == 0, r.stderr
    new = Path(r.stdout.strip())
    assert new.exists() and new.parent == src.parent  # the source's project directory
    lines = [json.loads(ln) for ln in new.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["parentSession"] == str(src)
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    check = run(runner, "validate", str(new), "--json")
    assert json.loads(check.stdout)["files"][0]["pi"]["harness"]["opens"] in (True, False)
    assert not list(new.parent.glob(".pisess-fork-*"))


def test_fork_dry_run_writes_nothing(runner, example_sessions):
    """--dry-run --json shows the entries and writes no file."""
    src = sessions(example_sessions)[0]
    before = set(example_sessions.rglob("*"))
    doc = json.loads(run(runner, "context", str(src), "--json").stdout)
    r = run(runner, "fork", str(src), doc["pathIds"][-1], "--position", "at", "--dry-run", "--json",
            "--sessions-dir", str(example_sessions))
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert [e["id"] for e in out["entries"]][: len(doc["pathIds"])] == doc["pathIds"] or out["entries"]
    assert set(example_sessions.rglob("*")) == before


def test_fork_bad_target(runner, example_sessions):
    """Forking before an entry that is not a user message fails with invalid_fork_target."""
    src = sessions(example_sessions)[0]
    doc = json.loads(run(runner, "context", str(src), "--json", "--reader", "harness").stdout)
    r = run(runner, "fork", str(src), doc["pathIds"][-1], "--dry-run", "--json", "--reader", "harness")
    assert r.exit_code == 1
    assert json.loads(r.stdout)["error"]["code"] == "invalid_fork_target"


def test_fork_into_unwritable_dir_fails_cleanly(runner, tmp_path, monkeypatch):
    """A target directory that refuses new files: a clear storage error, exit 2, nothing left behind."""
    import tempfile as tf

    proj = tmp_path / "sessions" / "--p--"
    f = write(proj / "a.jsonl", [header(cwd="/p"), msg("a", None), msg("b", "a", "assistant")])

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tf, "mkstemp", refuse)
    r = run(runner, "fork", str(f), "b", "--position", "at", "--sessions-dir", str(tmp_path / "sessions"))
    assert r.exit_code == 2 and "storage" in r.stderr and "Permission denied" in r.stderr
    assert sorted(p.name for p in proj.iterdir()) == ["a.jsonl"]


def test_markup_and_escapes_are_shown_as_text(runner, tmp_path):
    """Rich markup prints literally and ESC is shown as \\x1b in human views; JSON keeps the raw text."""
    evil = "[bold red]boom[/] \x1b[2J\x1b]0;pwned\x07 done"
    f = write(tmp_path / "e.jsonl", [header(), msg("a", None, text=evil), msg("b", "a", "assistant", text="ok")])
    for cmd in ("tree", "context", "path"):
        args = [cmd, str(f)] + (["--no-pager"] if cmd != "path" else [])
        r = run(runner, *args)
        assert r.exit_code == 0
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout
        assert "[bold red]boom[/]" in r.stdout and "\\x1b[2J" in r.stdout
    doc = json.loads(run(runner, "context", str(f), "--json").stdout)
    assert doc["messages"][0]["content"][0]["text"] == evil


def test_a_joiner_that_joins_nothing_is_shown_and_every_view_lays_the_text_out(runner, tmp_path, monkeypatch):
    """Two zero-width joiners before a wide character at the start of a word made Rich 15 raise
    while wrapping (``context`` at 120 columns); a joiner that joins nothing is shown as ``\\u200d``,
    and those of an emoji sequence are kept."""
    text = "hello \u200d\u200d" + "\u5b57" * 60 + "a and \U0001f468\u200d\U0001f469 \u200dx"
    f = write(tmp_path / "z.jsonl", [header(), msg("a", None, text=text), msg("b", "a", "assistant", text=text)])
    for columns in ("120", "80", "3"):
        monkeypatch.setenv("COLUMNS", columns)
        for cmd in ("tree", "context", "path"):
            r = run(runner, cmd, str(f), *(["--no-pager"] if cmd != "path" else []))
            assert r.exit_code == 0, (cmd, columns, r.stderr)
            if columns == "120" and cmd == "context":
                out = r.stdout
                assert "\\u200d\\u200d\u5b57" in out and "\U0001f468\u200d\U0001f469" in out
                assert "\\u200dx" in out
    doc = json.loads(run(runner, "context", str(f), "--json").stdout)
    assert doc["messages"][0]["content"][0]["text"] == text


def test_color_always_emits_ansi_never_does_not(runner, tmp_path):
    """--color always styles output; --color never and NO_COLOR do not."""
    f = write(tmp_path / "a.jsonl", [header(), msg("a", None), msg("b", "a", "assistant")])
    assert "\x1b[" in run(runner, "tree", str(f), "--color", "always", "--no-pager").stdout
    assert "\x1b[" not in run(runner, "tree", str(f), "--color", "never", "--no-pager").stdout


def test_demo_runs(runner):
    """pisess demo shows every view on the bundled examples and exits 0."""
    r = run(runner, "demo")
    assert r.exit_code == 0
    for marker in ("$ pisess ls", "$ pisess tree", "$ pisess context", "$ pisess validate", "files checked"):
        assert marker in r.stdout


def test_demo_json_is_one_document_of_the_examples(runner):
    """demo --json: the example sessions as data (as ls lists them, their trees, validate's answer)."""
    r = run(runner, "demo", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["version"] == 2 and len(doc["sessions"]) >= 2
    for s in doc["sessions"]:
        assert s["path"].endswith(".jsonl") and s["entryCount"] > 0
        # the pi 1.6 example hides an assistant with tool calls by a context edit: pi sends their
        # results without the calls (tool_result_without_call); the others are clean
        codes = {f["code"] for f in s["validate"]["findings"] if f["severity"] == "error"}
        assert codes == ({"tool_result_without_call"} if "agent" in s["path"] else set())
        assert s["validate"]["ok"] is (not codes)


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_validate_json_with_another_format_is_a_usage_error(runner, example_sessions, fmt):
    """--json and --format text/github ask for two outputs: refused (exit 2, a JSON error), never
    one silently winning."""
    r = run(runner, "validate", str(example_sessions), "--format", fmt, "--json")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["error"]["code"] == "usage"
    assert run(runner, "validate", str(example_sessions), "--format", "json", "--json").exit_code in (0, 1)


def test_closed_pipe_ends_quietly(example_sessions):
    """`pisess tree | head`: a closed stdout ends the process quietly (SIGPIPE, as cat does), not with exit 1."""
    import subprocess
    import sys

    f = sessions(example_sessions)[0]
    p = subprocess.Popen([sys.executable, "-m", "pisess", "tree", str(f), "--no-pager", "--full"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"})
    p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) in (0, -13)
    assert err == b""


@pytest.mark.parametrize("command", ["tree", "path"])
def test_tree_and_path_rows_stay_on_one_line(runner, tmp_path, monkeypatch, command):
    """A row too long for the width is cut with an ellipsis; it does not spill onto a line of its
    own (which looked like another entry without a marker)."""
    monkeypatch.setenv("COLUMNS", "60")
    f = write(tmp_path / "s.jsonl", [header(), user("u1", None, "word " * 40),
                                     entry("label", "l1", "u1", targetId="u1", label="a-long-label-" * 3),
                                     user("u2", "l1", "x")])
    r = run(runner, command, str(f))
    assert r.exit_code == 0, r.output
    rows = [ln for ln in r.stdout.splitlines() if "u1" in ln and "user" in ln]
    assert len(rows) == 1 and rows[0].rstrip().endswith("\u2026")
    assert not any(ln.lstrip().startswith("word") for ln in r.stdout.splitlines())


def test_tree_indentation_stops_at_a_third_of_the_width(runner, tmp_path, monkeypatch):
    """Each side branch indents; side branches nested hundreds of levels deep keep their rows
    readable: the outer levels collapse into one mark.  The active path stays in the first column."""
    monkeypatch.setenv("COLUMNS", "60")
    lines, parent = [header(), user("r", None, "root")], "r"
    for i in range(60):  # a side branch in which every branch point's earlier child branches again
        lines += [user(f"s{i:03d}", parent, f"side {i}"), user(f"t{i:03d}", parent, f"tip {i}")]
        parent = f"s{i:03d}"
    lines.append(user("main", "r", "main line"))  # the last entry: the leaf
    r = run(runner, "tree", "--full", str(write(tmp_path / "deep.jsonl", lines)))
    assert r.exit_code == 0, r.output
    rows = [ln for ln in r.stdout.splitlines() if "side " in ln or "tip " in ln or "main line" in ln]
    assert len(rows) == 121 and all(len(ln) <= 60 for ln in rows)
    deepest = next(ln for ln in rows if "side 59" in ln)
    assert deepest.startswith("\u22ef ") and deepest.index("\u25cb") <= 60 // 3 + 2
    assert rows[-1].startswith("\u25cf main")


@pytest.mark.parametrize("argv", [["ls", "--bogus", "--json"], ["context", "-n", "abc", "--json"],
                                  ["fork", "x", "--json"], ["tree", "--pi-version", "9", "--json"]])
def test_parser_errors_keep_the_json_promise(argv, capsys):
    """A usage error the argument parser catches still prints one JSON error document, exit 2."""
    from pisess.cli.app import run

    assert run(argv) == 2
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["version"] == 1 and doc["error"]["code"] == "usage"
    assert out.err.strip()
    assert run([a for a in argv if a != "--json"]) == 2
    assert capsys.readouterr().out == ""


def test_the_app_built_for_one_command_answers_as_the_whole_app(monkeypatch):
    """``run`` builds only the command it runs: each command's help, and its refusal of an option
    it does not have, are the whole app's, word for word."""
    from conftest import cli_runner
    from pisess.cli.app import app_for

    runner = cli_runner(monkeypatch)
    names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert "context" in names and "cache" in names
    for name in names:
        one = app_for([name, "--help"])
        assert one is not app and len(one.registered_commands) + len(one.registered_groups) == 1
        for args in ([name, "--help"], [name, "--no-such-option"]):
            whole, alone = runner.invoke(app, args), runner.invoke(one, args)
            assert (alone.exit_code, alone.stdout, alone.stderr) == (whole.exit_code, whole.stdout, whole.stderr)
    assert app_for(["ctx"]) is app and app_for(["--version"]) is app and app_for([]) is app
    monkeypatch.setenv("_PISESS_COMPLETE", "complete_bash")
    assert app_for(["context"]) is app  # completion lists every command


def test_a_run_imports_only_the_command_it_runs(tmp_path):
    """``pisess context ...`` imports context's module (and cache's, which gives every command
    ``--no-cache``), not the other twelve: they cost ~30 ms of every run."""
    import subprocess
    import sys

    code = ("import sys\nfrom pisess.cli.app import run\nrun(['context', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('pisess.cli.commands.')), file=sys.stderr)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "--no-cache" in p.stdout and "--reader" in p.stdout
    assert p.stderr.strip() == "['pisess.cli.commands.cache_cmd', 'pisess.cli.commands.context_cmd']"


# The console script, and the same run ended as the interpreter ends it, an exit handler beside
# each: the console's run must not reach the handler (it ends without the interpreter's teardown,
# ``app._end_at_once``) and must print every byte all the same.
_ENDED_BY = """import atexit, sys
atexit.register(lambda: sys.stderr.write("torn down\\n"))
from pisess.cli.app import console, main
end, sys.argv = sys.argv[1], ["pisess", *sys.argv[2:]]
console() if end == "console" else main()
"""


# (the default run: the printed view, into a pipe and a full disk; the exit codes 1 and 2 the full run)
@pytest.mark.parametrize("args", [["context", "EXAMPLE"],
                                  pytest.param(["validate", "EXAMPLES", "--json"], marks=pytest.mark.slow),
                                  pytest.param(["tree", "/nonexistent/x.jsonl"], marks=pytest.mark.slow)],
                         ids=["long output", "exit 1", "error"])
def test_the_console_script_ends_a_run_at_once_with_every_byte_printed(args):
    """A run of the app (not only search's lean path) ends at once: the same stdout, stderr and exit
    code as the run the interpreter ends, without its teardown; into a full disk, the same error
    and exit code (the flush that fails leaves the ending to the interpreter)."""
    examples = Path(__file__).resolve().parent.parent / "pisess" / "examples" / "sessions"
    args = [str(next(examples.rglob("*.jsonl"))) if a == "EXAMPLE" else str(examples) if a == "EXAMPLES" else a
            for a in args]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONUNBUFFERED")}
    env.update(PISESS_CACHE="off", NO_COLOR="1")
    import subprocess
    import sys

    def ended_by(how: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", _ENDED_BY, how, *args], env=env, stdin=subprocess.DEVNULL,
                              timeout=120, **({"capture_output": True} | kw))

    console, interpreter = ended_by("console"), ended_by("main")
    assert interpreter.stderr.endswith(b"torn down\n") and b"torn down" not in console.stderr
    assert (console.returncode, console.stdout, console.stderr) == \
        (interpreter.returncode, interpreter.stdout, interpreter.stderr.removesuffix(b"torn down\n"))
    assert console.stdout or args[0] == "tree"  # (an equality of two empty outputs would say little)
    if os.path.exists("/dev/full") and args[0] == "context":
        full = []
        for how in ("console", "main"):
            with open("/dev/full", "wb") as out:
                got = ended_by(how, capture_output=False, stdout=out, stderr=subprocess.PIPE)
            full.append((got.returncode, got.stderr.removesuffix(b"torn down\n")))
        assert full[0] == full[1] and full[0][0] != 0 and b"No space left" in full[0][1]
