"""``pisess.core`` as a library user meets it: the names it offers for each command, and the
examples of ``pisess help library`` run as written."""

from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

import pisess.core

LIBRARY = Path(pisess.core.__file__).resolve().parent.parent / "help" / "library.md"
CLI_FILE = "--home-you-projects-webapp--/2025-03-03T09-00-00-000Z_01955b3b-ca80-7e01-b12a-849873dde393.jsonl"

#: A command's work, one call each: what a library user reaches for first.
NEEDED = {"open_session", "build_context", "build_tree", "diff_points", "search_files", "make_matcher",
          "compute_stats", "export_session", "write_export", "validate_file", "list_sessions", "resolve_session",
          "plan_fork", "write_fork", "PisessError"}


def test_the_core_offers_a_call_for_each_command():
    """``pisess.core`` names them, each the object its own module defines (imported on first use)."""
    assert NEEDED <= set(pisess.core.__all__)
    for name in pisess.core.__all__:
        value = getattr(pisess.core, name)
        assert getattr(importlib.import_module(value.__module__), name) is value, name
        assert value.__module__.startswith("pisess.core."), name


def test_the_library_topic_names_the_calls_and_its_examples_run(example_sessions, monkeypatch, capsys):
    """Each call a command makes is named in ``pisess help library``, and its Python examples run
    on the example sessions (``session.jsonl`` one of them), printing what they say."""
    text = LIBRARY.read_text(encoding="utf-8")
    assert [name for name in sorted(NEEDED - {"PisessError", "resolve_session", "plan_fork", "write_fork",
                                              "validate_file", "list_sessions"}) if f"{name}(" not in text] == []
    shutil.copy(example_sessions / CLI_FILE, example_sessions.parent / "session.jsonl")
    monkeypatch.chdir(example_sessions.parent)
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, str(LIBRARY), "exec"), {})  # (the topic's own examples)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("{'provider': 'anthropic'")
    assert out[2] == "branches 0.1435985 0.07793325"  # diff_points: the two sides' cost
    assert out[3].startswith("27 [('sessions/")  # search_files: hits in three files
