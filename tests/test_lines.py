"""Lines a view writes without Rich's layout (``pisess.cli.views.lines``): the same bytes as Rich's.

``pisess context`` hands the printer its messages as parts (a text, a line of styled pieces, a rule
with a title) and the printer writes those that fit as Rich would; these tests hold the two ways to
the same output, in colour and without, at many widths, and that the command no longer lays its
messages out with Rich.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import cli_runner, examples, invoke, write_session
from pisess.cli.output import Printer
from pisess.cli.views.lines import Heading, Line, Lines, Para, to_rich
from pisess.core.model.text import LOOSE_JOINER
from test_images import screenshots

# one-cell ASCII, one-cell non-ASCII (· … → ─ and a no-break space), wide, combining, joiner and
# variation selector, a tab, a line break, and runs of spaces (where Rich's word wrap decides)
ALPHABET = ["a", "b", "x", "Z", "1", " ", "  ", "-", "(", "\u00b7", "\u2026", "\u2192", "\u2500", "\xa0", "\u5b57",
            "\U0001f600", "e\u0301", "\u200d", "\ufe0f", "\t", "\n", "word ", "longerwordhere", " end   "]
STYLES = ["", "dim", "bold", "yellow", "bold red", "dim italic", "cyan"]

# (as the views hand text over, escape_controls: a joiner that joins nothing is shown as \\u200d;
# Rich 15 raises on two of them before a wide character at the start of a line)
texts = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join).map(
    lambda s: re.sub(LOOSE_JOINER, lambda m: "\\u200d", s))
pieces = st.lists(st.tuples(texts, st.sampled_from(STYLES)), max_size=5).map(tuple)
parts = st.one_of(st.builds(Para, texts, st.sampled_from(STYLES)), st.builds(Line, pieces),
                  st.builds(Heading, pieces, st.sampled_from(STYLES)))


def _both(part, columns: str | None, color: str) -> tuple[str, str]:
    """``part`` written by ``Lines`` and by Rich, with the same printer."""
    env = {"COLUMNS": columns} if columns else {}
    with mock.patch.dict(os.environ, env, clear=False):
        if not columns:
            os.environ.pop("COLUMNS", None)
        os.environ.pop("NO_COLOR", None)
        printer = Printer(color)
        ours = "".join(Lines([part]).print_lines(printer))
        rich = printer.rendered(to_rich(part))
    return ours, rich


@settings(max_examples=examples(400), deadline=None)
@given(part=parts, width=st.integers(1, 70), color=st.sampled_from(["never", "always"]))
def test_a_part_is_written_as_rich_writes_it(part, width, color):
    ours, rich = _both(part, str(width), color)
    assert ours == rich


@settings(max_examples=examples(100), deadline=None)
@given(part=parts)
def test_in_a_pipe_texts_are_as_wide_as_rich_lays_them_and_rules_as_narrow(part):
    """No ``COLUMNS`` and not a terminal: texts at the pipe's 200 columns, rules at 80 (the printer's
    ``rule_width``), as Rich draws them through the printer."""
    ours, rich = _both(part, None, "never")
    assert ours == rich


def test_the_cases_that_matter_most_are_among_them():
    """A few by hand: a long heading cut with an ellipsis in its piece's style, spaces at the end, a
    word longer than the row, a wide character (Rich's)."""
    for part, width in [(Heading((("assistant", "bold"), (" (abc) \u00b7 12:00", "dim"), (" \u00b7 facts" * 9, "dim")),
                                 "dim"), 40),
                        (Heading((("tool result", "yellow"), (" \u00b7 read", "dim")), "dim"), 12),
                        (Para("one two   \n\n  three" + " x" * 60 + "   ", "red"), 30),
                        (Para("a" * 95 + " b", ""), 30),
                        (Line((("names: ", "dim"), ("a, b, \u5b57\u5b57", ""))), 12)]:
        for color in ("never", "always"):
            ours, rich = _both(part, str(width), color)
            assert ours == rich, (part, width, color)


@pytest.mark.parametrize("columns", ["100", "37"])
@pytest.mark.parametrize("opts", [{}, {"llm": True}, {"thinking": True, "full": True},
                                  {"original": True, "system": True}, {"max_lines": 2}])
def test_the_context_view_is_the_same_in_lines_and_in_rich_objects(capsysbinary, monkeypatch, columns, opts):
    """Each example session's context, in colour: the command's lines (``lines=True``) and the
    view as Rich's objects (what the browser lays out) print the same bytes."""
    from pisess.cli.views.context import context_view
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as root:
        paths = sorted(str(p) for p in root.rglob("*.jsonl"))
        assert len(paths) == 3
        for path in paths:
            ctx = build_context(open_session(path, "auto"))
            got = []
            for lines in (True, False):
                Printer("always").show(context_view(ctx, lines=lines, **opts))
                got.append(capsysbinary.readouterr().out)
            assert got[0] == got[1], path
            assert b"\x1b[" in got[0] and got[0].count(b"\n") > 20


def test_the_context_command_lays_out_no_message_with_rich(tmp_path, monkeypatch):
    """800 messages (200 screenshot turns): the command makes a few dozen Rich ``Text`` objects (its
    panel, the style codes' probes), not several per message (over 6,000 before)."""
    from rich import text as rich_text

    lines = screenshots(200, chars=400)
    for e in lines[4::4]:  # each answer on three lines, one of them longer than the narrower width
        e["message"]["content"][0]["text"] += "\nsecond line\n" + "a third line, longer than thirty columns"
    path = write_session(tmp_path, lines)
    made = []
    init = rich_text.Text.__init__

    def counting(self, *a, **k):
        made.append(1)
        init(self, *a, **k)

    monkeypatch.setattr(rich_text.Text, "__init__", counting)
    for columns in (100, 30):  # (at 30 columns the headings are cut, and still written here)
        made.clear()
        out = invoke(cli_runner(monkeypatch, columns, PISESS_CACHE="off"), "context", path)
        assert out.exit_code == 0, out.stderr
        assert out.stdout.count("[image image/png, 300 B]") == 200
        assert out.stdout.count("second line\n") == 200
        assert len(made) < 100, len(made)
