"""The README's commands work: every `$ pisess ...` example runs, and the set-up commands are the ones CI uses."""

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
EXAMPLES = re.findall(r"^\$ (pisess .+)$", README, flags=re.M)


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
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", EXAMPLES)
def test_readme_example_runs(home, command):
    """Each example command of the README runs on the shipped examples without a usage error."""
    args = [str(home / a[2:]) if a.startswith("~/") else a for a in shlex.split(command)[1:]]
    args = [a for a in args if "\u2026" not in a] or args
    r = CliRunner().invoke(app, args + (["--no-pager"] if args[0] in ("tree", "context") else []),
                           catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    assert "Traceback" not in r.output


def test_readme_has_examples_for_every_command():
    """One example per command."""
    shown = {c.split()[1] for c in EXAMPLES}
    for cmd in ("ls", "tree", "path", "context", "validate", "fork"):
        assert cmd in shown
