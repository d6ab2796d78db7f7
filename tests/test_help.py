"""pisess help [TOPIC]: the list, one topic rendered or plain, JSON, an unknown topic, completion,
and every topic shipped in the package and reachable."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

from conftest import cli_runner, invoke

ROOT = Path(__file__).resolve().parent.parent
HELP = ROOT / "pisess" / "help"
NAMES = sorted(p.stem for p in HELP.glob("*.md"))
NEEDED = ("json", "cache", "exit-codes", "readers", "versions", "watch", "sessions", "ids", "writers")


@pytest.fixture()
def runner(monkeypatch):
    return cli_runner(monkeypatch, columns=80)


def test_the_list_names_every_topic_with_its_title(runner):
    """`pisess help` lists each topic once, with its one line, commands first; exit 0."""
    r = invoke(runner, "help")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "Commands" and "Subjects" in lines
    for name in NAMES:
        title = (HELP / f"{name}.md").read_text().split("\n", 1)[0].removeprefix("# ")
        row = next(line for line in lines if line.split()[:1] == [name])
        assert title.removeprefix(f"pisess {name}:").strip()[:30] in row
    assert lines.index("Subjects") > max(i for i, line in enumerate(lines) if line.split()[:1] == ["watch"])


@pytest.mark.parametrize("name", NEEDED)
def test_the_reference_subjects_exist(name):
    assert name in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_topic_is_reachable_and_piped_is_its_markdown(runner, name):
    """`pisess help NAME` piped (as the runner is) prints the topic's file exactly, as Markdown (with
    the one placeholder, where this installation's pi package is, filled in)."""
    r = invoke(runner, "help", name)
    assert r.exit_code == 0, r.output
    package = str(HELP.parent / "pi_package")
    assert r.stdout == (HELP / f"{name}.md").read_text().replace("@PI_PACKAGE@", package).rstrip("\n") + "\n"


def test_a_topic_on_a_terminal_is_rendered(runner):
    """With colour (as on a terminal) the Markdown is rendered by Rich: no '# ' heading or code
    fence left, the text still there, escape sequences for the styles."""
    r = invoke(runner, "help", "exit-codes", "--color", "always", "--no-pager")
    assert r.exit_code == 0, r.output
    assert "\x1b[" in r.stdout
    assert "# Exit codes" not in r.stdout and "```" not in r.stdout
    assert "interrupted (Ctrl-C)" in r.stdout


def test_names_are_case_insensitive(runner):
    assert invoke(runner, "help", "JSON").stdout == invoke(runner, "help", "json").stdout


def test_an_unknown_topic_is_a_usage_error_listing_the_topics(runner):
    r = invoke(runner, "help", "nope")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "no help topic 'nope'" in r.stderr and "exit-codes" in r.stderr and "json" in r.stderr


def test_an_unknown_topic_with_json_prints_the_error_document(runner):
    r = invoke(runner, "help", "nope", "--json")
    assert r.exit_code == 2
    assert json.loads(r.stdout)["error"]["code"] == "usage"


def test_json_lists_the_topics_and_gives_one_with_its_text(runner):
    listed = json.loads(invoke(runner, "help", "--json").stdout)
    assert listed["version"] == 1
    assert [t["name"] for t in listed["topics"] if not t["command"]] == sorted(
        t["name"] for t in listed["topics"] if not t["command"])
    assert sorted(t["name"] for t in listed["topics"]) == NAMES
    assert {t["name"] for t in listed["topics"] if t["command"]} >= {"ls", "tree", "watch", "cache"}
    one = json.loads(invoke(runner, "help", "cache", "--json").stdout)["topic"]
    assert one["name"] == "cache" and one["text"] == (HELP / "cache.md").read_text()
    assert one["title"].startswith("pisess cache: ")


def test_help_is_not_the_help_option(runner):
    """`pisess help` is a command; `-h`/`--help` still print a command's usage, help's too."""
    root = invoke(runner, "--help")
    assert root.exit_code == 0 and "help" in root.stdout and "Usage: pisess" in root.stdout
    own = invoke(runner, "help", "-h")
    assert own.exit_code == 0 and "Usage: pisess help [OPTIONS] [TOPIC]" in own.stdout
    assert "Example: pisess help cache" in own.stdout


def test_help_reads_no_session_and_has_no_cache_option(runner):
    assert "--no-cache" not in invoke(runner, "help", "--help").stdout


def test_topic_names_complete():
    """Tab after 'pisess help ex' offers the topics that start so."""
    env = {**os.environ, "_PISESS_COMPLETE": "complete_bash", "COMP_WORDS": "pisess help ex", "COMP_CWORD": "2"}
    out = subprocess.run([sys.executable, "-m", "pisess"], env=env, capture_output=True, text=True, timeout=60)
    assert sorted(out.stdout.split()) == sorted(n for n in NAMES if n.startswith("ex"))


def test_the_topics_are_package_data():
    """pyproject ships every topic file (a non-editable install carries them, as the examples)."""
    line = re.search(r"^pisess = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert line is not None
    data = re.findall(r'"([^"]+)"', line.group(1))  # (no tomllib on Python 3.10)
    for name in NAMES:
        assert any(fnmatch(f"help/{name}.md", pattern) for pattern in data), name


def test_the_list_fits_80_columns(runner):
    """A topic's first line is its title ('# '); the list shows each on one line at 80 columns."""
    for name in NAMES:
        assert (HELP / f"{name}.md").read_text().startswith("# "), name
    lines = invoke(runner, "help").stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert len([line for line in lines if line.startswith("  ")]) == len(NAMES)  # (none wrapped)


def test_sessions_topic_says_the_behaviour_without_citing_what_a_user_cannot_read(monkeypatch):
    """``pisess help sessions`` is for users: no spec appendix sections (C.23) and no pi issue
    numbers (#11956), the behaviour said plainly instead."""
    r = invoke(cli_runner(monkeypatch), "help", "sessions")
    assert r.exit_code == 0
    assert not re.search(r"\bC\.\d+|#\d{3,}|\u00a7|\bspec\b", r.stdout), r.stdout
    for said in ("pi --session", "pi --continue", "/resume", "type: \"session\"", "never creates a directory"):
        assert said in r.stdout, said
