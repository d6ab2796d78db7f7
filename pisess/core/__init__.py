"""The read-only core: parse, migrate, walk, build context, plan forks, list sessions.

Pure library code: it never imports typer or rich, never prints, and returns plain data.

The names below are imported on first use: the command line imports ``pisess.core.errors`` on
every run (completion runs pisess on each Tab) and must not pay for the whole core each time.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "Context": "context", "State": "context", "build_context": "context", "convert_to_llm": "context",
    "PisessError": "errors",
    "ForkPlan": "fork", "entries_to_fork": "fork", "plan_fork": "fork", "write_fork": "fork",
    "active_path": "paths", "path_to_checkpoint": "paths", "path_to_root": "paths",
    "encode_cwd": "repo", "list_sessions": "repo", "resolve_session": "repo", "sessions_root": "repo",
    "Session": "session", "choose_reader": "session", "open_session": "session",
    "FileReport": "validate", "Finding": "validate", "validate_file": "validate",
}

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
