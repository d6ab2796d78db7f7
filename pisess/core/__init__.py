"""The read-only core: parse, migrate, walk, build context, plan forks, list sessions.

Pure library code: it never imports typer or rich, never prints, and returns plain data.
"""

from .context import Context, State, build_context, convert_to_llm
from .errors import PisessError
from .fork import ForkPlan, entries_to_fork, plan_fork, write_fork
from .paths import active_path, path_to_checkpoint, path_to_root
from .repo import encode_cwd, list_sessions, resolve_session, sessions_root
from .session import Session, choose_reader, open_session
from .validate import FileReport, Finding, validate_file

__all__ = [
    "Context", "State", "build_context", "convert_to_llm", "PisessError", "ForkPlan", "entries_to_fork",
    "plan_fork", "write_fork", "active_path", "path_to_checkpoint", "path_to_root", "encode_cwd",
    "list_sessions", "resolve_session", "sessions_root", "Session", "choose_reader", "open_session",
    "FileReport", "Finding", "validate_file",
]
