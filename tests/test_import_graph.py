"""pisess's modules import one another without a cycle (lazily neither), floor by floor.

The core reads like the pipeline: the base, then reading, model, listing, analyses, each importing
only what lies under it; reading knows nothing of what is built on it, and the core knows nothing of
the command line.  The command line stands on the core in floors of its own: the printer, the
views, what commands share, the commands (which never import one another), the app."""

from __future__ import annotations

import ast
import functools
import shutil
from pathlib import Path

import pytest

from conftest import python_nodes, python_tree

PACKAGE = Path(__file__).resolve().parent.parent / "pisess"
#: Each core layer and the layers it may import at all (lazily too); every layer imports the base
#: (errors, js, versions, ids, parallel), which imports no layer.
CORE_LAYERS = {"reading": set(), "model": {"reading"}, "listing": {"reading"},
               "analyses": {"reading", "model", "listing"}}
#: The command line's floors, bottom up: a module imports its own floor and those under it (and the
#: core), never one above; the commands, one floor, never import one another.
CLI_FLOORS = {"output": 0, "topics": 0, "views": 1, "contract": 1, "common": 2, "sets": 2, "browse": 2, "search_indexer": 2,
              "lean_search": 2, "commands": 3, "app": 4, "completions": 4}


def _name(root: Path, path: Path) -> str:
    """``pisess.core.reading.compact`` for core/reading/compact.py, ``pisess.cli`` for cli/__init__.py."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {_name(root, p): p for p in sorted(root.rglob("*.py"))}


def _targets(mods: dict[str, Path], name: str, node: ast.AST) -> set[str]:
    """The pisess modules one import statement of module ``name`` names (a package's own
    ``__init__`` when a name is no module of it)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in mods}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        package = name.split(".") if mods[name].name == "__init__.py" else name.split(".")[:-1]
        prefix = ".".join([*package[: len(package) - (node.level - 1)], *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    # from pisess.cli import common: a module; from pisess.core.js import UNDEF: a name in one
    return {f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names} & mods.keys()


@functools.cache
def _imports(source: str, lazy: bool) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of a module's text, at module level or anywhere (by text: a planted
    copy reads again only the file it changed)."""
    nodes = python_nodes(source) if lazy else python_tree(source).body
    return tuple(n for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom)))


def graph(root: Path = PACKAGE, *, lazy: bool = False) -> dict[str, set[str]]:
    """Each module's imports of pisess modules: at module level, or (``lazy``) anywhere, inside
    functions too.  A lazy import runs after every module is loaded, so it cannot make an import
    fail, but it hides a cycle from the interpreter, not from the design."""
    mods = modules(root)
    return {name: set().union(*(_targets(mods, name, n) for n in _imports(path.read_text(), lazy))) - {name}
            for name, path in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g[m]):
            if state.get(n) == 1:
                found.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    return found


def _core_layer(name: str) -> str | None:
    """``model`` for pisess.core.model.paths; ``None`` for the base (pisess.core.js, the package)."""
    parts = name.split(".")
    return parts[2] if len(parts) > 3 else None


def _cli_floor(name: str) -> tuple[str, int]:
    part = name.split(".")[2] if name.count(".") >= 2 else "output"  # the empty pisess.cli package: the bottom
    if part not in CLI_FLOORS:
        raise AssertionError(f"{name}: give it a floor in CLI_FLOORS")
    return part, CLI_FLOORS[part]


def _why_not(m: str, t: str) -> str | None:
    """Why module ``m`` may not import ``t`` (``None``: it may)."""
    inside = lambda n, pkg: n == pkg or n.startswith(pkg + ".")  # noqa: E731
    if inside(m, "pisess.core") and inside(t, "pisess.cli"):
        return "the core imports nothing of the command line"
    if inside(m, "pisess.core") and inside(t, "pisess.core"):
        lm, lt = _core_layer(m), _core_layer(t)
        if lt is None or lt == lm:
            return None
        if lm is None:
            return "the base imports no layer"
        return None if lt in CORE_LAYERS[lm] else f"{lm} imports only {sorted(CORE_LAYERS[lm]) or 'the base'}"
    if inside(m, "pisess.cli") and inside(t, "pisess.cli"):
        (pm, fm), (pt, ft) = _cli_floor(m), _cli_floor(t)
        if pm == pt == "commands":
            return "commands never import one another"
        return f"{pm} never imports {pt}, a floor up" if ft > fm else None
    return None


def violations(g: dict[str, set[str]]) -> list[str]:
    return [f"{m} -> {t}: {why}" for m in sorted(g) for t in sorted(g[m]) if (why := _why_not(m, t))]


def test_the_graph_is_read_across_packages():
    """The reader of imports resolves every form pisess uses (a parser bug would make the checks
    below pass on an empty graph)."""
    g, lazy = graph(), graph(lazy=True)
    assert {"pisess.core.reading.compact", "pisess.core.reading.session", "pisess.core.model.paths",
            "pisess.core.listing.repo", "pisess.core.analyses.validate", "pisess.core.errors", "pisess.core.js",
            "pisess.cli.common", "pisess.cli.views.tree", "pisess.cli.commands.tree_cmd"} <= modules().keys()
    assert {"pisess.core.reading.lines", "pisess.core.reading.store", "pisess.core.errors"} <= g["pisess.core.reading.compact"]
    assert "pisess.core.js" in g["pisess.core.reading.session"]  # from .. import js
    assert "pisess.core.listing.sessionset" in g["pisess.core.analyses.du"]  # from ..listing.sessionset import
    assert "pisess.core.reading.cache" in lazy["pisess.core.analyses.du"]  # from ..reading import cache, in a function
    assert "pisess.core.reading.cache" not in g["pisess.core.analyses.du"]
    assert "pisess.cli.common" in g["pisess.cli.commands.tree_cmd"]  # from pisess.cli import common
    assert "pisess.cli.views.tree" in lazy["pisess.cli.commands.tree_cmd"]  # from pisess.cli.views.tree import
    assert "pisess.core.errors" in g["pisess.cli.common"]  # from pisess.core.errors import PisessError
    assert "pisess" in g["pisess.cli.app"]  # from pisess import __version__: the package itself


def test_no_import_cycle():
    """Every module-level import among pisess's modules points down a tree: no cycle."""
    assert cycles(graph()) == []


def test_no_import_cycle_even_through_lazy_imports():
    """Imports inside functions included: none either."""
    assert cycles(graph(lazy=True)) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_each_module_imports_only_what_lies_under_it():
    """Core layers as the pipeline runs, the core under the command line, the command line's floors,
    commands apart (lazy imports included)."""
    assert violations(graph(lazy=True)) == []


def test_line_rules_import_nothing_of_the_core_but_js_and_errors():
    """pi's line rules are the bottom of the core: every reader imports them, they import no reader."""
    assert graph(lazy=True)["pisess.core.reading.lines"] <= {"pisess.core.js", "pisess.core.errors"}


def test_compact_and_session_do_not_import_each_other_at_all():
    """Not even lazily: the session opens the compact index, the index knows nothing of sessions."""
    assert "pisess.core.reading.session" not in graph(lazy=True)["pisess.core.reading.compact"]


# --- the checks can fail: each planted import, in a copy of the package, is reported --------------

PLANTED = [
    ("cli/commands/ls_cmd.py", "from pisess.cli.commands import tree_cmd",
     "pisess.cli.commands.ls_cmd -> pisess.cli.commands.tree_cmd: commands never import one another"),
    ("cli/views/text.py", "from pisess.cli.commands.ls_cmd import ls",
     "pisess.cli.views.text -> pisess.cli.commands.ls_cmd: views never imports commands, a floor up"),
    ("cli/views/tree.py", "from pisess.cli import common",
     "pisess.cli.views.tree -> pisess.cli.common: views never imports common, a floor up"),
    ("cli/output.py", "from pisess.cli.views.shared import T",
     "pisess.cli.output -> pisess.cli.views.shared: output never imports views, a floor up"),
    ("core/model/fork.py", "from ..listing import repo",
     "pisess.core.model.fork -> pisess.core.listing.repo: model imports only ['reading']"),
    ("core/reading/lines.py", "from ..model.paths import active_path",
     "pisess.core.reading.lines -> pisess.core.model.paths: reading imports only the base"),
    ("core/js.py", "from pisess.cli import output",
     "pisess.core.js -> pisess.cli.output: the core imports nothing of the command line"),
    ("core/versions.py", "from .reading import lines",
     "pisess.core.versions -> pisess.core.reading.lines: the base imports no layer"),
]


def _plant(tmp_path: Path, file: str, statement: str) -> Path:
    root = tmp_path / "pisess"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.jsonl"))
    target = root / file
    target.write_text(target.read_text() + f"\n\ndef _planted():\n    {statement}\n")  # lazy: the harder case
    return root


@pytest.mark.parametrize(("file", "statement", "reported"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_import_up_a_floor_is_reported(tmp_path, file, statement, reported):
    root = _plant(tmp_path, file, statement)
    assert violations(graph(root, lazy=True)) == [reported]
    assert violations(graph(root)) == []  # inside a function: only the lazy graph holds it


def test_a_planted_lazy_cycle_is_reported(tmp_path):
    """text is imported by tree at module level; text importing tree back, even inside a
    function, closes a circle on one floor (no floor rule sees it: only the cycle check)."""
    root = _plant(tmp_path, "cli/views/text.py", "from pisess.cli.views import tree")
    g = graph(root, lazy=True)
    assert violations(g) == []
    assert ["pisess.cli.views.text", "pisess.cli.views.tree", "pisess.cli.views.text"] in cycles(g)
    assert cycles(graph(root)) == []


def test_a_module_without_a_floor_is_reported(tmp_path):
    """A new module of the command line must be given a floor: the check does not guess."""
    root = _plant(tmp_path, "cli/views/text.py", "from pisess.cli import newcomer")
    (root / "cli" / "newcomer.py").write_text("")
    with pytest.raises(AssertionError, match="pisess.cli.newcomer: give it a floor"):
        violations(graph(root, lazy=True))


def private_names_imported(root: Path = PACKAGE) -> list[str]:
    """``module: from X import _name`` for every import of another module's private name (a name
    with one leading underscore) anywhere in the package, lazy imports included."""
    found = []
    for name, path in modules(root).items():
        for node in python_nodes(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{name}: from {'.' * node.level}{node.module or ''} import {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_name():
    """A name with a leading underscore is its module's own: what another module needs gets a public
    name where it lives (the wings added last reached into eight)."""
    assert private_names_imported() == []


def test_a_planted_private_import_is_reported(tmp_path):
    root = tmp_path / "pisess"
    shutil.copytree(PACKAGE / "core" / "reading", root / "core" / "reading")
    (root / "core" / "reading" / "planted.py").write_text("def f():\n    from .images import _MARK\n    return _MARK\n")
    assert private_names_imported(root) == ["pisess.core.reading.planted: from .images import _MARK"]
