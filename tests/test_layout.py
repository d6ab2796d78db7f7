"""``pisess help development``'s layout table names every module of the package, where it lies.

A module added without a word in the table fails here: the table is how a newcomer finds a thing.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pisess"
HELP = PACKAGE / "help" / "development.md"
ROW = re.compile(r"^\| `(pisess/[^`]*)` \| (.*) \|$", re.M)


def layout_rows(text: str) -> dict[str, str]:
    """``{where: what}`` of the layout table (``where`` a directory of the package, ``/`` at its end)."""
    return dict(ROW.findall(text))


def modules() -> list[tuple[str, str]]:
    """``(directory, name)`` of every module and package of pisess, ``directory`` as the table
    spells it (``pisess/core/reading/``); a package is its parent's ``name/``."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.parent.relative_to(ROOT).as_posix() + "/"
        if path.name == "__init__.py":
            if path.parent != PACKAGE:
                out.append((path.parent.parent.relative_to(ROOT).as_posix() + "/", path.parent.name + "/"))
        else:
            out.append((where, path.stem))
    return out


def named(word: str, what: str) -> bool:
    """``word`` in backticks in ``what``, or matched by a pattern there (``*_cmd``)."""
    return any(fnmatch.fnmatchcase(word, w) for w in re.findall(r"`([^`]+)`", what))


def unnamed(rows: dict[str, str]) -> list[str]:
    """The modules the table does not name: each must be named (in backticks) in the row of the
    nearest directory above it that has one, with the packages between them (``search/``); a
    package with a row of its own is named by it."""
    missing = []
    for where, name in modules():
        if name.endswith("/") and where + name in rows:
            continue
        row = max((w for w in rows if where.startswith(w)), key=len, default=None)
        needed = [f"{part}/" for part in where[len(row or ""):].split("/") if part] + [name]
        if row is None or not all(named(word, rows[row]) for word in needed):
            missing.append(where + name)
    return missing


def test_the_layout_table_names_every_module():
    rows = layout_rows(HELP.read_text(encoding="utf-8"))
    assert unnamed(rows) == []
    assert [w for w in rows if not (ROOT / w).is_dir()] == []  # (no row for a directory that is gone)


def test_a_module_missing_from_the_table_is_reported():
    """The check itself: a row without one of its modules, and a new directory with no row."""
    rows = layout_rows(HELP.read_text(encoding="utf-8"))
    where = "pisess/core/reading/"
    assert f"{where}blocks" not in unnamed(rows)
    assert f"{where}blocks" in unnamed({**rows, where: rows[where].replace("`blocks`", "blocks")})
    assert "pisess/core/analyses/search/query" in unnamed({**rows, "pisess/core/analyses/": "validate"})
    assert len(unnamed({})) == len(modules()) > 100
