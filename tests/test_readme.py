"""The README's and the help topics' commands work: every `$ pisess ...` example runs (and each
example of the README's command table), and the set-up commands are the ones CI uses."""

from __future__ import annotations

import re
import shlex
import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pisess.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
TOPICS = {p.stem: p.read_text() for p in sorted((ROOT / "pisess" / "help").glob("*.md"))}
#: The command table's rows: | `name` | what it does | `pisess ...` |
TABLE = re.findall(r"^\| `([a-z-]+)` \| .+ \| `(pisess [^`]+)` \|$", README, flags=re.M)


def _examples(text: str) -> list[str]:
    return re.findall(r"^\$ (pisess .+)$", text, flags=re.M)


EXAMPLES = _examples(README) + [example for _, example in TABLE]
TOPIC_EXAMPLES = [(name, example) for name, text in TOPICS.items() for example in _examples(text)]


def test_readme_test_command_is_what_ci_runs():
    """The second set-up command in the README is the one .ci/run executes."""
    blocks = re.findall(r"```sh\n(.+?)\n```", README, flags=re.S)
    install_and_test = next(b for b in blocks if "pytest" in b)
    assert install_and_test.replace("-q ", "").replace(" -q", "") in \
        (ROOT / ".ci" / "run").read_text().replace("$PY", "python3").replace("-q ", "").replace(" -q", "")
    assert any("pisess demo" in b for b in blocks)


def test_ci_runs_every_test_and_then_the_gates():
    """The default pytest leaves the slow tests out; the README's command (CI's) selects them all,
    and .ci/run runs ruff and mypy after it, each a gate (a bare command under ``set -e``)."""
    blocks = re.findall(r"```sh\n(.+?)\n```", README, flags=re.S)
    assert next(b for b in blocks if "pytest" in b).endswith("python -m pytest -m ''")
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index("pytest -m ''") < ci.index("\n.venv/bin/ruff check pisess tests\n") < ci.index("\n.venv/bin/mypy\n")


@pytest.fixture()
def home(tmp_path, monkeypatch):
    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as src:
        shutil.copytree(src, tmp_path / ".pi" / "agent" / "sessions")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))  # (an example may clear the cache)
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run_example(home: Path, command: str) -> None:
    args = [str(home / a[2:]) if a.startswith("~/") else a for a in shlex.split(command)[1:]]
    args = [a for a in args if "\u2026" not in a] or args
    r = CliRunner().invoke(app, args + (["--no-pager"] if args[0] in ("tree", "context") else []),
                           catch_exceptions=False)
    if args[0] == "browse":  # interactive: here (no terminal) it stops after finding and reading the session
        assert r.exit_code == 2 and "needs a terminal" in r.output, r.output
        return
    assert r.exit_code in (0, 1), r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("command", EXAMPLES)
def test_readme_example_runs(home, command):
    """Each example command of the README runs on the shipped examples without a usage error."""
    _run_example(home, command)


@pytest.mark.parametrize(("topic", "command"), TOPIC_EXAMPLES, ids=[f"{t}:{c}" for t, c in TOPIC_EXAMPLES])
def test_topic_example_runs(home, topic, command):
    """Each example command of every help topic runs on the shipped examples, as the README's do."""
    _run_example(home, command)


def test_readme_table_has_one_example_for_every_command():
    """The command table names every command of the app, once, each with an example of itself."""
    from pisess.cli.app import COMMANDS, GROUPS

    assert sorted(name for name, _ in TABLE) == sorted([*COMMANDS, *GROUPS])
    for name, example in TABLE:
        assert example.split()[1] == name


def test_every_command_has_a_topic_with_an_example():
    """`pisess help COMMAND` exists for every command, and shows it at work (help: the list)."""
    from pisess.cli.app import COMMANDS, GROUPS

    for name in [*COMMANDS, *GROUPS]:
        assert name == "help" or TOPICS[name].startswith(f"# pisess {name}: "), name
        assert name == "help" or any(c.split()[1] == name for t, c in TOPIC_EXAMPLES if t == name), name


def test_readme_is_a_front_door():
    """The README stays short: the reference lives in the help topics."""
    assert len(README.splitlines()) <= 200


def test_the_repository_tracks_no_link_to_one_machine():
    """A symlink to a path on one machine (``.venv-main`` → /work/main/.venv) means nothing in
    another checkout: none is tracked, and local venvs (``.venv*``) are ignored."""
    import subprocess

    ignored = (ROOT / ".gitignore").read_text().split()
    assert ".venv*" in ignored
    if not (ROOT / ".git").exists():  # (an unpacked sdist: no index to ask)
        return
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    links = [line.split("\t", 1)[1] for line in tracked if line.startswith("120000 ")]
    assert links == []
