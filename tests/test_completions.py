"""Completion scripts: the committed copies match the app, and they complete real things."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pisess.cli.completions import SHELLS, script

ROOT = Path(__file__).resolve().parent.parent


def test_committed_scripts_match_the_app():
    """completions/ is regenerated from the app; a drift fails here."""
    for shell, name in SHELLS.items():
        assert (ROOT / "completions" / name).read_text() == script(shell), f"regenerate completions/{name}"


def _child_completes(words: str, cword: int, env_extra: dict | None = None, cwd: Path | None = None) -> list[str]:
    """What a pisess process prints when bash asks it to complete word ``cword`` of ``words``."""
    env = {**os.environ, "_PISESS_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword),
           **(env_extra or {})}
    out = subprocess.run([sys.executable, "-m", "pisess"], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    return out.stdout.split()


@pytest.fixture
def complete(monkeypatch, capsys):
    """``complete(words, cword, env_extra=None, cwd=None)``: what the app prints for bash's
    completion, the app run in this process as the console script runs it (``app.run``: a child
    costs 0.1 s of CPU, and the process is not what these check; test_a_pisess_process_completes
    runs one)."""
    from pisess.cli.app import run

    def _complete(words: str, cword: int, env_extra: dict | None = None, cwd: Path | None = None) -> list[str]:
        with monkeypatch.context() as m:
            for k, v in {"_PISESS_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword),
                         **(env_extra or {})}.items():
                m.setenv(k, v)
            if cwd is not None:
                m.chdir(cwd)
            capsys.readouterr()
            with pytest.raises(SystemExit) as end:  # (click ends a completion with exit)
                run([])
            assert end.value.code in (0, None)
            return capsys.readouterr().out.split()

    return _complete


def test_a_pisess_process_completes(complete):
    """A real process, as the shell starts it, completes as the app does in this process."""
    for words, cword in (("pisess tr", 1), ("pisess tree --br", 2), ("pisess export --format ", 2)):
        assert _child_completes(words, cword) == complete(words, cword) != []


def test_completes_subcommands_and_options(complete):
    """Tab after 'pisess tr' offers tree; after 'pisess tree --br' offers --branches-only."""
    assert "tree" in complete("pisess tr", 1)
    assert "--branches-only" in complete("pisess tree --br", 2)


def test_completes_session_ids(tmp_path, complete):
    """Tab on SESSION offers the ids of the current project's sessions."""
    work = tmp_path / "work" / "p"
    work.mkdir(parents=True)
    proj = tmp_path / "agent" / "sessions" / ("--" + str(work).lstrip("/").replace("/", "-") + "--")
    proj.mkdir(parents=True)
    (proj / "a.jsonl").write_text('{"type":"session","version":3,"id":"0195abcd-0000",'
                                  '"timestamp":"2025-01-01T00:00:00Z","cwd":"/work/p"}\n')
    got = complete("pisess tree 0195", 2, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PWD": str(work)}, cwd=work)
    assert got == ["0195abcd-0000"]


def test_completes_session_ids_with_the_options_on_the_line(tmp_path, complete):
    """--sessions-dir, --cwd and --pi-version already typed choose what is listed: pi 1.6 lists a
    version-1 file, pi 0.82.1's SDK listing does not."""
    proj = tmp_path / "sessions" / "--work-p--"
    proj.mkdir(parents=True)
    (proj / "a.jsonl").write_text('{"type":"session","version":3,"id":"0195abcd-0003",'
                                  '"timestamp":"2025-01-01T00:00:00Z","cwd":"/work/p"}\n')
    (proj / "b.jsonl").write_text('{"type":"session","id":"0195abcd-0001","timestamp":"2025-01-01T00:00:00Z",'
                                  '"cwd":"/work/p"}\n')
    line = f"pisess tree --sessions-dir {tmp_path / 'sessions'} --cwd /work/p"
    assert sorted(complete(f"{line} 0195", 6)) == ["0195abcd-0001", "0195abcd-0003"]
    assert complete(f"{line} --pi-version 0.82.1 0195", 8) == ["0195abcd-0003"]


OPTION_VALUES = {
    "pisess tree --reader ": ["auto", "harness", "cli"],
    "pisess context --pi-version 0": ["0.82.1"],
    "pisess stats --by m": ["model"],
    "pisess export --format ": ["md", "html", "jsonl"],
    "pisess secrets --format a": ["allowlist"],
    "pisess validate --format ": ["text", "json", "github"],
    "pisess ls --color a": ["auto", "always"],
    "pisess fork --position ": ["before", "at"],
}


# (the default run takes the first two, -m '' (CI) all of them)
@pytest.mark.parametrize("words", [w if i < 2 else pytest.param(w, marks=pytest.mark.slow)
                                   for i, w in enumerate(OPTION_VALUES)])
def test_completes_option_values(words, complete):
    """Tab after an option with a fixed set of values offers them (it offered nothing)."""
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    assert complete(words, cword) == OPTION_VALUES[words], words


def test_completes_diff_sessions_at_each_point(tmp_path, complete):
    """diff's points are sessions (SESSION_A SESSION_B): Tab offers the project's ids at the first
    and at the second (it offered nothing)."""
    proj = tmp_path / "sessions" / "--work-p--"
    proj.mkdir(parents=True)
    (proj / "a.jsonl").write_text('{"type":"session","version":3,"id":"0195abcd-0003",'
                                  '"timestamp":"2025-01-01T00:00:00Z","cwd":"/work/p"}\n')
    line = f"pisess diff --sessions-dir {tmp_path / 'sessions'} --cwd /work/p"
    assert complete(f"{line} 0195", 6) == ["0195abcd-0003"]
    assert complete(f"{line} 0195abcd-0003 0195", 7) == ["0195abcd-0003"]
