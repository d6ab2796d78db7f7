"""One renderer contract: views return renderables or lines, one printer (pisess.cli.output)
writes them; views never print and never touch files."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import entry, header, message, python_nodes, user, write_session
from pisess.cli.output import Printer, soft
from pisess.cli.views.export import export_summary
from pisess.cli.views.fork import fork_view
from pisess.cli.views.listing import ls_view
from pisess.cli.views.tree import tree_view
from pisess.cli.views.validate import validate_github, validate_text
from pisess.core.analyses.validate import summary_counts, validate_file
from pisess.core.model.fork import plan_fork
from pisess.core.model.tree import build_tree
from pisess.core.reading.session import open_session

CLI = Path(__file__).parent.parent / "pisess" / "cli"


def _writes_to_stdout(nodes: tuple[ast.AST, ...]) -> list[str]:
    found = []
    for node in nodes:
        if isinstance(node, ast.Call):
            f = node.func
            name = ast.unparse(f)
            if name in ("print", "typer.echo", "click.echo") or name.startswith("sys.stdout.write") or \
                    name.startswith("sys.stdout.buffer") or (name.endswith(".print") and "console" in name):
                found.append(f"{name} (line {node.lineno})")
    return found


def test_only_the_printer_writes_to_stdout():
    """No CLI module but output.py calls print, typer.echo, sys.stdout.write or a console's print."""
    offenders = {}
    paths = sorted(CLI.rglob("*.py"))
    assert CLI / "views" / "context.py" in paths and CLI / "commands" / "ls_cmd.py" in paths
    for path in paths:
        if path.name == "output.py":
            continue
        hits = _writes_to_stdout(python_nodes(path.read_text()))  # (parsed once a process: conftest)
        if hits:
            offenders[str(path.relative_to(CLI))] = hits
    assert offenders == {}


@pytest.fixture()
def src(tmp_path) -> str:
    return write_session(tmp_path, [header(), user("u1", None, "hello [bold]x[/bold]"),
                                    message("a1", "u1", {"role": "assistant", "content": [{"type": "text",
                                                                                          "text": "ok"}]}),
                                    entry("label", "l1", "a1", targetId="u1", label="first")])


def test_views_return_items_and_print_nothing(src, capsys):
    """Every view that used to print itself now returns what to print."""
    s = open_session(src, "cli", light=True)
    reports = [validate_file(src)]
    assert validate_text(reports, [], False, quiet=False)
    assert all(isinstance(x, str) for x in validate_github(reports, [], False))
    before, out, after = fork_view(plan_fork(s, "a1", "at", new_id="n1", now_iso="2026-01-01T00:00:00.000Z"),
                                          "/tmp/x.jsonl", dry_run=True)
    assert before and out == [] and after == []
    from pisess.cli.common import Where
    from pisess.core.listing.repo import list_sessions

    listing = list_sessions(str(Path(src).parent), None)
    assert ls_view(listing, Where(str(Path(src).parent), "/"), all_projects=True, details=None, width=80)
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err == ""


def test_the_tree_view_never_reads_the_file(src, monkeypatch):
    """The command reads the rows' whole entries and passes them; the view only draws."""
    s = open_session(src, "cli", light=True)
    view = build_tree(s)
    entries = list(view.complete_entries())

    def refuse(*a, **k):
        raise AssertionError("the view read the session")

    for name in ("materialize", "complete_at", "iter_complete", "full"):
        monkeypatch.setattr(type(s), name, refuse)
    rows = tree_view(view, entries, width=100)
    assert any("hello [bold]x[/bold]" in r.plain for r in rows if hasattr(r, "plain"))


def test_the_tree_view_keeps_no_entry_whole(tmp_path):
    """``tree`` reads each row's entry back to make its preview and keeps only the preview: the
    store holds the same light entries after the view as before (``tree --full`` of a 200 MB
    session held every entry whole, 489 MB)."""
    from pisess.core.reading.jsonl import Light

    lines = [header(), user("u0", None, "start")]
    for i in range(1, 60):
        lines.append(user(f"u{i}", f"u{i - 1}", f"line {i} " + "x" * 3000))
    s = open_session(write_session(tmp_path, lines), "cli", light=True)
    view = build_tree(s, full=True)
    light_before = sum(type(e) is Light for e in s.entries)
    rows = tree_view(view, view.complete_entries(), width=80)
    assert light_before > 50 and sum(type(e) is Light for e in s.entries) == light_before
    assert sum("line 59 xxx" in r.plain for r in rows if hasattr(r, "plain")) == 1  # the previews are the text's


def test_printer_writes_lines_as_they_are_and_soft_text_unwrapped(capsys, monkeypatch):
    from rich.text import Text

    monkeypatch.setenv("COLUMNS", "20")
    long = "x" * 50
    Printer("never").show(["plain line", soft(Text(long)), Text("y" * 50, no_wrap=True, overflow="ellipsis")])
    out = capsys.readouterr().out.split("\n")
    assert out[0] == "plain line"
    assert out[1] == long  # uncut, unwrapped
    assert out[2] == "y" * 19 + "\u2026"  # a row keeps its own no_wrap inside the chunk


def test_a_failed_write_is_a_storage_error(monkeypatch):
    from pisess.core.errors import PisessError

    class Full:
        def write(self, s):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Full())
    with pytest.raises(PisessError) as e:
        Printer("never").show(["a line"])
    assert e.value.code == "storage" and "No space left" in e.value.message


class _ShortWriter:
    """A binary stream as a filling disk is: each write takes at most ``step`` bytes and returns
    the count; once ``room`` bytes are in, a write raises ``ENOSPC``."""

    def __init__(self, step: int, room: int) -> None:
        self.step, self.room, self.got = step, room, bytearray()

    def write(self, data) -> int:
        data = bytes(data)
        if data and len(self.got) >= self.room:
            raise OSError(28, "No space left on device")
        n = min(len(data), self.step, self.room - len(self.got))
        self.got += data[:n]
        return n

    def flush(self) -> None:
        pass


class _ShortStdout(io.TextIOWrapper):
    """``sys.stdout`` over a ``_ShortWriter`` (write_through, as ``PYTHONUNBUFFERED`` makes it)."""

    def __init__(self, raw: _ShortWriter) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", write_through=True)
        self.raw_writer = raw

    @property
    def buffer(self):
        return self.raw_writer


def _many_rows() -> list:
    from rich.text import Text

    return [Text(f"row {i} " + "x" * 60, no_wrap=True) for i in range(2000)]


@pytest.mark.parametrize("what", ["data", "rows", "rich"])
def test_short_writes_are_written_again_until_all_is_written(monkeypatch, what):
    """A write that takes only part of the bytes (a filling disk, ``PYTHONUNBUFFERED``) is
    repeated with the rest: every byte arrives."""
    from rich.rule import Rule

    raw = _ShortWriter(step=777, room=10**7)
    monkeypatch.setattr(sys, "stdout", _ShortStdout(raw))
    monkeypatch.setenv("COLUMNS", "80")
    if what == "data":
        Printer("never").data(b"0123456789" * 20000)
        assert bytes(raw.got) == b"0123456789" * 20000
    else:
        rows = _many_rows()
        Printer("never").show([Rule("r")] + rows if what == "rich" else rows)
        out = raw.got.decode().splitlines()
        assert out[-1] == "row 1999 " + "x" * 60 and len(out) == 2000 + (what == "rich")


@pytest.mark.parametrize("what", ["data", "rows", "rich"])
def test_a_disk_that_fills_up_is_a_storage_error(monkeypatch, what):
    """The write that finds the disk full raises, whatever the counts before it said: a
    ``storage`` error, not output cut short and exit 0."""
    from rich.rule import Rule

    from pisess.core.errors import PisessError

    raw = _ShortWriter(step=4096, room=65536)
    monkeypatch.setattr(sys, "stdout", _ShortStdout(raw))
    with pytest.raises(PisessError) as e:
        if what == "data":
            Printer("never").data(b"x" * 200000)
        else:
            Printer("never").show(([Rule("r")] if what == "rich" else []) + _many_rows())
    assert e.value.code == "storage" and "No space left" in e.value.message
    assert len(raw.got) == 65536


def test_an_atomic_write_checks_the_count(tmp_path, monkeypatch):
    """``export -o`` and fork write through ``write_all``: a short count is written again."""
    from pisess.core.reading import files

    raw = _ShortWriter(step=100, room=10**6)
    files.write_all(raw, b"y" * 1234)
    assert bytes(raw.got) == b"y" * 1234
    full = _ShortWriter(step=100, room=500)
    with pytest.raises(OSError):
        files.write_all(full, b"y" * 1234)


def test_validate_json_does_not_load_rich(src):
    """The summary count lives in the core: --json needs no renderer."""
    code = ("import sys\nfrom pisess.cli.app import main\nsys.argv = ['pisess', 'validate', '--json', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('RICH' if 'rich' in sys.modules else 'NO-RICH', file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, src], capture_output=True, text=True, timeout=60)
    assert r.stderr.strip().endswith("NO-RICH"), r.stderr
    assert '"summary"' in r.stdout


def test_summary_counts_in_the_core(src):
    c = summary_counts([validate_file(src)], strict=False)
    assert c["fileCount"] == 1 and c["errorCount"] == 0


def test_export_summary_is_talk_not_output(src):
    from pisess.core.analyses.export import export_session

    run = export_session(src, "md", reader="cli", new_id="x", now_iso="2026-01-01T00:00:00.000Z")
    items = export_summary(run, "/tmp/out.md")
    assert len(items) == 1 and "Exported 2 messages" in items[0].plain


def _paging_printer(monkeypatch):
    """A printer on a (fake) 5-row terminal with a terminal on stdin: ``show(pager=True)`` pages."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    p = Printer("never")
    p._console = Console(file=buf, force_terminal=True, no_color=True, width=80, height=5, color_system=None)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    return p, buf


@pytest.mark.parametrize("pager", ["pisess-no-such-pager-xyz", "pisess-no-such-pager-xyz -R",
                                   "sh -c 'exit 127'"])
def test_a_pager_that_cannot_start_falls_back_to_printing(monkeypatch, pager):
    """As git does: a PAGER that does not exist (or that the shell cannot run) prints the output
    instead of swallowing it."""
    monkeypatch.setenv("PAGER", pager)
    p, buf = _paging_printer(monkeypatch)
    rows = [f"row {i}" for i in range(40)]
    p.show(rows, pager=True)
    assert buf.getvalue().splitlines() == rows


def test_a_pager_that_exists_gets_the_output(monkeypatch, tmp_path):
    out = tmp_path / "paged.txt"
    monkeypatch.setenv("PAGER", f"cat > {out}")
    p, buf = _paging_printer(monkeypatch)
    rows = [f"row {i}" for i in range(40)]
    p.show(rows, pager=True)
    assert buf.getvalue() == "" and out.read_text().splitlines() == rows


def test_rules_and_boxes_in_a_pipe_are_80_wide_rows_stay_whole(capsys, monkeypatch):
    """Piped (no terminal, no COLUMNS) rows are laid out wide and stay unbroken, but a rule or a
    box as wide folded onto three lines in less or an editor at 80 columns: they take 80."""
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    monkeypatch.delenv("COLUMNS", raising=False)
    row = "r" * 150
    Printer("never").show([Panel(Text("box")), Rule("rule"), Text(row, no_wrap=True), Text("word " * 30)])
    out = capsys.readouterr().out.splitlines()
    assert [len(x) for x in out[:4]] == [80, 80, 80, 80]  # the box's three lines, the rule
    assert out[4] == row
    assert out[5] == ("word " * 30).strip()  # prose is not folded at 80 either
    monkeypatch.setenv("COLUMNS", "120")
    Printer("never").show([Rule("rule")])
    assert len(capsys.readouterr().out.rstrip("\n")) == 120  # COLUMNS says the width
