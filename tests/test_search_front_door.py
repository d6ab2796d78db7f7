"""Search has one front door (``pisess.core.analyses.search.search_files``), and the console
script's lean path is fenced: the command does not import it, it reaches into no private name of
the printer, and ``PISESS_DEBUG=1`` makes it raise instead of handing the run to the app."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from answers_store import build_store
from conftest import python_nodes
from pisess.cli import lean_search
from pisess.core.analyses import search

PACKAGE = Path(__file__).resolve().parent.parent / "pisess"


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in python_nodes(path.read_text()) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_one_public_search_files():
    """Only the package's ``search_files`` (index or scan) goes by that name; the scan's is
    ``scan_files``, a part of it; the names it exports are its own, none the reader's."""
    holders = [p for p in PACKAGE.rglob("*.py") if "def search_files(" in p.read_text()]
    assert holders == [PACKAGE / "core" / "analyses" / "search" / "__init__.py"]
    for name in search.__all__:
        value = getattr(search, name)
        assert name == "FIELDS" or (value.__module__ + ".").startswith("pisess.core.analyses.search."), name


def test_the_command_does_not_import_the_lean_path():
    for node in _imports(PACKAGE / "cli" / "commands" / "search_cmd.py"):
        names = [a.name for a in node.names]
        module = node.module if isinstance(node, ast.ImportFrom) else None
        assert "lean_search" not in names and "lean_search" not in (module or ""), ast.dump(node)


def test_nothing_imports_a_private_name_of_the_printer():
    for path in PACKAGE.rglob("*.py"):
        for node in _imports(path):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("output"):
                assert not [a.name for a in node.names if a.name.startswith("_")], path
        assert "output._" not in path.read_text(), path


def test_one_spelling_of_the_annotation_only_typing_import():
    """``TYPE_CHECKING = False`` then ``if TYPE_CHECKING:``, with the reason in ``pisess help
    development`` rather than beside each."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if "TYPE_CHECKING" not in text:
            continue
        flags = [line for line in text.splitlines() if line.startswith("TYPE_CHECKING")]
        assert flags == ["TYPE_CHECKING = False"], path
        for node in _imports(path):
            if isinstance(node, ast.ImportFrom) and node.module == "typing":
                assert "TYPE_CHECKING" not in [a.name for a in node.names], path
    assert "TYPE_CHECKING = False" in (PACKAGE / "help" / "development.md").read_text()


@pytest.fixture
def example_root(tmp_path, monkeypatch):
    from pisess.core.reading import cache

    build_store(tmp_path / "sessions")
    monkeypatch.setenv("PISESS_CACHE", "on")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PISESS_DEBUG", raising=False)
    previous = cache.configure(cache.from_environ(os.environ, str(tmp_path)))
    yield tmp_path
    cache.configure(previous)


def test_pisess_debug_raises_in_the_lean_path(example_root, monkeypatch):
    """An error the lean path does not expect hands the run to the app (``None``, nothing printed);
    with ``PISESS_DEBUG=1`` it is raised, to be seen."""
    from pisess.core.analyses.search import query

    def boom(*a, **k):
        raise RuntimeError("a defect in the lean path")

    monkeypatch.setattr(query, "search_indexed", boom)
    args = ["search", "date", "--sessions-dir", str(example_root / "sessions"), "--all"]
    assert lean_search.run(args) is None
    for off in ("0", "", "off"):
        monkeypatch.setenv("PISESS_DEBUG", off)
        assert lean_search.run(args) is None
    monkeypatch.setenv("PISESS_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a defect in the lean path"):
        lean_search.run(args)

