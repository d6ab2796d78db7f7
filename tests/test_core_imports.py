"""The core is pure library code: importing it must not pull in the CLI's dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "pisess" / "core"
#: every module of the core, found on disk (a module added later is checked too)
CORE_MODULES = ["pisess.core"] + sorted(
    ".".join(("pisess", "core", *p.relative_to(CORE).with_suffix("").parts)).removesuffix(".__init__")
    for p in CORE.rglob("*.py"))

PROBE = """
import importlib, json, sys
for name in {modules!r}:
    importlib.import_module(name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("typer", "rich", "click", "pisess") and
               not m.startswith("pisess.core") and m != "pisess")
print(json.dumps(heavy))
"""


def _loaded(modules: list) -> list:
    out = subprocess.run([sys.executable, "-I", "-c", PROBE.format(modules=modules)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_import_core_pulls_in_neither_typer_nor_rich():
    """A clean interpreter importing pisess.core and all its modules loads no typer, rich, click or pisess.cli."""
    assert "pisess.core.reading.session" in CORE_MODULES and "pisess.core.analyses" in CORE_MODULES
    assert _loaded(CORE_MODULES) == []


@pytest.mark.parametrize("module", ["pisess.core.reading.session", "pisess.core.analyses.validate"])
def test_single_module_import_is_clean(module):
    """Importing one core module on its own loads no CLI dependency either."""
    assert _loaded([module]) == []


def test_probe_detects_heavy_imports():
    """Sanity check of the probe itself: importing rich directly is reported."""
    pytest.importorskip("rich")
    assert "rich" in _loaded(["rich"])
