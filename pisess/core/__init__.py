"""The read-only core: parse, migrate, walk, build context, plan forks, list sessions.

Pure library code: it never imports typer or rich, never prints, and returns plain data.

Laid out as the pipeline runs, each layer importing only the ones above it in this list (never
one below it, lazily neither; ``tests/test_import_graph.py`` checks):

- the base: ``errors`` (the one ``PisessError`` family), ``js`` (JavaScript's values and rules),
  ``versions`` (which pi's rules), ``ids`` (ids as people type them), ``parallel`` (forked reads);
- ``reading``: pi's line rules (``lines``), the line scan (``jsonl``), the compact index and its
  cache, migration, the entry stores, ``session`` (a file as one of pi's readers sees it), ``scan``
  (one streaming pass over a file, for the analyses);
- ``model``: paths, context, tree, fork planning, the message model (``messages``, ``text``,
  ``system``), the two-writer rule, following appends, ``placement`` (where each entry sits);
- ``listing``: where sessions live (``paths``), how pi lists them (``repo``), sets of sessions,
  per-file summaries;
- ``analyses``: validate, search, stats, usage, du, secrets, export.

The names below are imported on first use: the command line imports ``pisess.core.errors`` on
every run (completion runs pisess on each Tab) and must not pay for the whole core each time.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PUBLIC = {
    "model.context": ("Context", "State", "build_context", "convert_to_llm"),
    "errors": ("PisessError",),
    "model.fork": ("ForkPlan", "entries_to_fork", "plan_fork", "write_fork"),
    "model.paths": ("active_path", "path_to_checkpoint", "path_to_root"),
    "listing.paths": ("encode_cwd", "sessions_root"),
    "listing.repo": ("list_sessions", "resolve_session"),
    "reading.session": ("Session", "choose_reader", "open_session"),
    "analyses.validate": ("FileReport", "Finding", "validate_file"),
    "model.tree": ("TreeView", "build_tree"),
    "analyses.diff": ("Diff", "diff_points"),
    "analyses.search": ("SearchReport", "make_matcher", "search_files"),
    "analyses.stats": ("StatsReport", "compute_stats"),
    "analyses.export": ("ExportOptions", "ExportRun", "export_session", "write_export"),
}
_WHERE = {name: module for module, names in _PUBLIC.items() for name in names}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pisess.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_WHERE))
