"""The core's modules import one another without a cycle, pi's line rules sit at the bottom, and
the packages read like the pipeline: reading knows nothing of what is built on it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "pisess" / "core"
#: Each layer and what it may import at all (lazily too); the base is errors, js, versions, ids, parallel.
LAYERS = {"reading": set(), "model": {"reading"}, "listing": {"reading", "model"},
          "analyses": {"reading", "model", "listing"}}


def _name(path: Path) -> str:
    """``reading.compact`` for pisess/core/reading/compact.py, ``js`` for pisess/core/js.py."""
    return ".".join(path.relative_to(CORE).with_suffix("").parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(CORE.rglob("*.py")) if p.name != "__init__.py"}


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _targets(name: str, node: ast.AST) -> set[str]:
    """The core modules an import statement in module ``name`` names."""
    mods = _modules()
    if isinstance(node, ast.Import):
        return {a.name.removeprefix("pisess.core.") for a in node.names if a.name.removeprefix("pisess.core.") in mods}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        package = name.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]  # level 1: the module's own package
    elif node.module and node.module.startswith("pisess.core"):
        return _resolve([], node.module.removeprefix("pisess.core").lstrip("."), node.names)
    else:
        return set()
    return _resolve(base, node.module or "", node.names)


def _resolve(base: list[str], module: str, names: list[ast.alias]) -> set[str]:
    mods = _modules()
    prefix = ".".join([*base, *([module] if module else [])])
    if prefix in mods:  # from .x import y
        return {prefix}
    # from . import x, y / from ..reading import x: the names are modules
    return {f"{prefix}.{a.name}" if prefix else a.name for a in names} & mods.keys()


def _module_level_imports(name: str) -> set[str]:
    """Core modules ``name`` imports at module level (imports inside functions are lazy: they run
    after every module is loaded and cannot make an import cycle)."""
    return set().union(*(_targets(name, node) for node in _tree(_modules()[name]).body))


def _all_imports(name: str) -> set[str]:
    """Core modules ``name`` imports anywhere, lazily inside functions too."""
    return set().union(*(_targets(name, node) for node in ast.walk(_tree(_modules()[name]))))


def _graph(imports=_module_level_imports) -> dict[str, set[str]]:
    return {name: imports(name) for name in _modules()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                found.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_the_graph_is_read_across_packages():
    """The reader of imports resolves every form the core uses (a parser bug would make the
    checks below pass on an empty graph)."""
    graph, lazy = _graph(), _graph(_all_imports)
    assert {"reading.compact", "reading.session", "model.paths", "listing.repo", "analyses.validate",
            "errors", "js"} <= _modules().keys()
    assert {"reading.lines", "reading.store", "errors"} <= graph["reading.compact"]  # from .x / from ..x
    assert "js" in graph["reading.session"]  # from .. import js
    assert "listing.sessionset" in lazy["analyses.du"]  # from ..listing.sessionset import
    assert "reading.cache" in lazy["analyses.du"]  # from ..reading import cache, inside a function


def test_no_import_cycle_among_core_modules():
    """Every module-level import among pisess.core's modules points down a tree: no cycle."""
    assert _cycles(_graph()) == []


def test_no_import_cycle_even_through_lazy_imports():
    """A lazy import hides a cycle from the interpreter, not from the design: none either."""
    assert _cycles(_graph(_all_imports)) == []


def test_the_cycle_finder_finds_a_cycle():
    """The check itself can fail: a graph with a loop is reported."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_each_layer_imports_only_what_lies_under_it():
    """reading imports only the base; analyses are imported by nothing in the core (lazily
    neither): the packages read as the pipeline runs."""
    wrong = {}
    for name, targets in _graph(_all_imports).items():
        layer = name.split(".")[0] if "." in name else None
        for t in targets:
            other = t.split(".")[0] if "." in t else None
            if other is None or other == layer:
                continue
            if layer is None or other not in LAYERS[layer]:
                wrong.setdefault(name, []).append(t)
    assert wrong == {}


def test_line_rules_import_nothing_of_the_core_but_js_and_errors():
    """pi's line rules are the bottom of the core: every reader imports them, they import no reader."""
    assert _graph(_all_imports)["reading.lines"] <= {"js", "errors"}


def test_compact_and_session_do_not_import_each_other_at_all():
    """Not even lazily: the session opens the compact index, the index knows nothing of sessions."""
    assert "reading.session" not in _graph(_all_imports)["reading.compact"]
