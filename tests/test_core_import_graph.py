"""The core's modules import one another without a cycle, and pi's line rules sit at the bottom."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "pisess" / "core"


def _module_level_imports(path: Path) -> set[str]:
    """Core modules ``path`` imports at module level (imports inside functions are lazy: they
    run after every module is loaded and cannot make an import cycle)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:  # from .x import y
                out.add(node.module.split(".")[0])
            elif node.level == 1:  # from . import x, y
                out.update(a.name for a in node.names)
            elif node.module and node.module.startswith("pisess.core."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[2] for a in node.names if a.name.startswith("pisess.core."))
    return out


def _all_imports(path: Path) -> set[str]:
    """Core modules ``path`` imports anywhere, lazily inside functions too."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
    return out


def _graph(imports=_module_level_imports) -> dict[str, set[str]]:
    mods = {p.stem: p for p in CORE.glob("*.py")}
    return {name: imports(p) & mods.keys() for name, p in mods.items()}


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


def test_no_import_cycle_among_core_modules():
    """Every module-level import among pisess.core's modules points down a tree: no cycle."""
    graph = _graph()
    assert graph["compact"] and graph["session"]  # the graph is read (a parser bug would make it empty)
    assert _cycles(graph) == []


def test_no_import_cycle_even_through_lazy_imports():
    """A lazy import hides a cycle from the interpreter, not from the design: none either."""
    graph = _graph(_all_imports)
    assert "sessionset" in graph["du"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    """The check itself can fail: a graph with a loop is reported."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_line_rules_import_nothing_of_the_core_but_js_and_errors():
    """pi's line rules are the bottom of the core: every reader imports them, they import no reader."""
    assert _graph()["lines"] <= {"js", "errors"}


def test_compact_and_session_do_not_import_each_other_at_all():
    """Not even lazily: the session opens the compact index, the index knows nothing of sessions."""
    text = (CORE / "compact.py").read_text()
    assert "from .session" not in text and "import session" not in text
