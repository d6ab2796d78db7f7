"""What every command shares: options, locating sessions, JSON output, the one error handler.

Exit codes (documented in the README, same meaning in every command):
  0  ok
  1  findings, a session pi cannot read, or something not found
  2  usage error, or input that cannot be read at all (permissions, I/O)
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from pisess.core.errors import PisessError

JSON_VERSION = 1
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_BY_CODE = {"usage": EXIT_USAGE, "storage": EXIT_USAGE}

JsonOpt = Annotated[bool, typer.Option("--json",
                                       help="Print one JSON document (with \"version\": 1) instead of the view.")]
ReaderOpt = Annotated[
    str,
    typer.Option("--reader", "-r", help="Read as pi's SDK (harness), as the pi command (cli), or as the program "
                 "that wrote the file (auto).", case_sensitive=False),
]
def _pi_version(value: str | None) -> str:
    """Parsed while the arguments are (a bad version is a usage error before any work)."""
    from pisess.core.versions import parse

    try:
        return parse(value)
    except PisessError as e:
        raise typer.BadParameter(e.message.removeprefix("--pi-version ")) from None


PiVersionOpt = Annotated[
    str,
    typer.Option("--pi-version", metavar="VERSION", envvar="PISESS_PI_VERSION", show_envvar=True,
                 callback=_pi_version,
                 help="Follow this pi's rules: 1.6.0 (the current pi; also 1.6) or 0.82.1 (also 0.82). "
                 "The SDK reader (--reader harness) exists only with 0.82.1's rules."),
]
SessionsDirOpt = Annotated[
    str | None,
    typer.Option("--sessions-dir", metavar="DIR", envvar=None,
                 help="Sessions root (default: $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions)."),
]
CwdOpt = Annotated[str | None, typer.Option("--cwd", metavar="DIR",
                                            help="Project directory (default: the current one).")]
ColorOpt = Annotated[str, typer.Option("--color", help="auto, always or never (NO_COLOR is respected).")]
LeafOpt = Annotated[str | None, typer.Option("--leaf", metavar="ID",
                                             help="Use this entry (an id or a unique prefix, as the views show "
                                                  "them) as the leaf instead of the current one.")]
LenientOpt = Annotated[bool, typer.Option("--lenient",
                                          help="Read with the pi command's lenient rules (= --reader cli): "
                                               "skip invalid lines, list them on stderr, show the rest.")]


def leaf_argument(session, leaf: str | None) -> Any:
    """``--leaf`` as the core takes it: ``UNDEF`` for the current leaf, else the entry id it names
    (a prefix of exactly one id does, as the views show them)."""
    from pisess.core.js import UNDEF

    return UNDEF if leaf is None else session.entry_id(leaf, option="--leaf")


def _at_least(minimum: int) -> Callable:
    def check(value: int | None) -> int | None:
        if value is not None and value < minimum:
            raise typer.BadParameter(f"must be {minimum} or more, not {value}")
        return value

    return check


def count_option(default: int | None, *names: str, help: str = "", minimum: int = 0, hidden: bool = False) -> Any:
    """An option that counts something (lines, entries, levels): an integer of at least
    ``minimum``, anything less a usage error (exit 2; with ``--json`` the JSON error document) in
    every command alike.  The names of one idea are the same in every command: ``--max-lines``
    (lines of each message's tool output and long text), ``--top`` (the N largest), ``--depth``,
    ``--count``; ``--dry-run`` is fork's only dry run."""
    return typer.Option(default, *names, metavar="N", help=help, hidden=hidden, callback=_at_least(minimum))


MAX_LINES_HELP = "Lines of each tool result and command output to keep (0: all)."


def complete_session(incomplete: str) -> list[str]:
    """Tab completion: session ids of the current project (header lines only, so it is quick)."""
    try:
        from pisess.core.repo import list_sessions

        w = where(None, None)
        return [s.id for s in list_sessions(w.root, w.cwd, keep_going=True).sessions if s.id.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


def session_argument(
        help_text: str = "File path, session id or unique id prefix; default: the newest session of the project."):
    return typer.Argument(None, metavar="[SESSION]", help=help_text, show_default=False,
                          autocompletion=complete_session)


@dataclass(frozen=True)
class Where:
    root: str
    cwd: str


def where(sessions_dir: str | None, cwd: str | None) -> Where:
    from pisess.core.repo import absolute_cwd, sessions_root

    here = os.environ.get("PWD") or os.getcwd()
    try:
        if not os.path.samefile(here, os.getcwd()):
            here = os.getcwd()
    except OSError:
        here = os.getcwd()
    return Where(sessions_root(sessions_dir, os.environ, os.path.expanduser("~")),
                 absolute_cwd(cwd, here) if cwd else os.path.normpath(here))


def check_color(color: str) -> str:
    color = (color or "auto").lower()
    if color not in ("auto", "always", "never"):
        raise PisessError("usage", f"--color must be auto, always or never, not {color!r}")
    return color


def check_reader(reader: str, lenient: bool = False) -> str:
    reader = (reader or "auto").lower()
    if reader not in ("auto", "harness", "cli"):
        raise PisessError("usage", f"--reader must be auto, harness or cli, not {reader!r}")
    if lenient:
        if reader == "harness":
            raise PisessError("usage",
                              "--lenient reads with the cli reader; it cannot be combined with --reader harness")
        return "cli"
    return reader


def dumps(doc: Any) -> bytes:
    from pisess.core.jsonl import dumps as js_dumps

    return js_dumps(doc, indent=sys.stdout.isatty())


def emit_json(doc: dict) -> None:
    from pisess.cli.output import Printer

    Printer().data(dumps({"version": JSON_VERSION, **doc}) + b"\n")


def say(message: str) -> None:
    """Talk goes to stderr, escaped so file content cannot drive the terminal."""
    from pisess.cli.text import escape_controls

    sys.stderr.write(escape_controls(message, keep_newlines=True) + "\n")


def exit_code_for(err: PisessError) -> int:
    """One table for every command: 2 for usage errors and input that cannot be read (a missing
    file, permissions, I/O; also an entry id ``--leaf`` names none of), 1 for findings, no hits,
    not found (a session id; the entry fork is given, as pi says) and ambiguity (an id prefix)."""
    return EXIT_USAGE if err.unreadable else EXIT_BY_CODE.get(err.code, EXIT_FINDINGS)


def handles_errors(fn: Callable) -> Callable:
    """The one place a ``PisessError`` becomes output: JSON on stdout when ``--json``, the
    located message on stderr always, and the exit code from one table."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except PisessError as err:
            if kwargs.get("json_out"):
                try:
                    emit_json({"error": err.to_dict()})
                except PisessError:  # stdout itself failed: the message below still says why
                    pass
            say(f"pisess: {err.located()}")
            raise typer.Exit(exit_code_for(err)) from None
        except BrokenPipeError:
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            raise typer.Exit(EXIT_OK) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None

    return wrapper


def report_dropped(session) -> None:
    """``--lenient``: what was skipped, on stderr."""
    for d in session.dropped_lines:
        say(f"{session.path}:{d['line']}: skipped: {d['reason']}")
