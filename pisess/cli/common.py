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

from pisess.cli.contract import (  # noqa: F401 - the commands' names for them
    ERROR_VERSION,
    EXIT_BY_CODE,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    exit_code_for,
    say,
    sdk_rules_note,
)
from pisess.core import versions
from pisess.core.errors import PisessError


def complete_from(*choices: str) -> Callable[[str], list[str]]:
    """Tab completion of an option's value: the ``choices`` that begin with what is typed."""
    def complete(incomplete: str) -> list[str]:
        return [c for c in choices if c.startswith(incomplete.lower())]

    return complete


JsonOpt = Annotated[bool, typer.Option("--json",
                                       help="Print one JSON document (with its \"version\") instead of the view.")]
def _note_sdk_rules(ctx: typer.Context) -> None:
    """``--reader harness`` with another pi's rules asked for (``--pi-version``, its variable):
    the SDK reader exists only with the oldest pi's, so the read follows those; said once on stderr.
    Called by both options' callbacks: the one parsed second sees both."""
    reader, version = ctx.meta.get("pisess.reader"), ctx.meta.get("pisess.pi_version")
    if ctx.resilient_parsing or reader is None or version is None or ctx.meta.get("pisess.sdk_noted"):
        return
    note = sdk_rules_note(str(reader), version)
    if note is not None:
        ctx.meta["pisess.sdk_noted"] = True
        say(note)


def _reader(ctx: typer.Context, value: str) -> str:
    ctx.meta["pisess.reader"] = value
    _note_sdk_rules(ctx)
    return value


ReaderOpt = Annotated[
    str,
    typer.Option("--reader", "-r", metavar="auto|harness|cli",
                 help="Read as pi's SDK (harness), as the pi command (cli), or as the program "
                 "that wrote the file (auto).", case_sensitive=False, callback=_reader,
                 autocompletion=complete_from("auto", "harness", "cli")),
]


def _pi_version(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str:
    """Parsed while the arguments are (a bad version is a usage error before any work)."""
    try:
        version = versions.parse(value)
    except PisessError as e:
        raise typer.BadParameter(e.message.removeprefix("--pi-version ")) from None
    source = ctx.get_parameter_source(param.name or "pi_version")
    if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):  # (asked for, not the default)
        ctx.meta["pisess.pi_version"] = version
        _note_sdk_rules(ctx)
    return version


# The one --pi-version: every command that reads sessions takes ``pi_version: common.PiVersionOpt =
# common.CURRENT_PI``, so the default and the choices come from ``versions`` alone.
CURRENT_PI = versions.CURRENT
PiVersionOpt = Annotated[
    str,
    typer.Option("--pi-version", metavar="VERSION", envvar="PISESS_PI_VERSION", show_envvar=True,
                 callback=_pi_version, autocompletion=complete_from(*map(str, reversed(versions.KNOWN))),
                 help=f"Follow this pi's rules: {versions.choices()}. "
                 f"The SDK reader (--reader harness) exists only with {versions.PI_0_82}'s rules."),
]
SessionsDirOpt = Annotated[
    str | None,
    typer.Option("--sessions-dir", metavar="DIR", envvar=None,
                 help="Sessions root (default: $PI_CODING_AGENT_DIR/sessions or ~/.pi/agent/sessions)."),
]
CwdOpt = Annotated[str | None, typer.Option("--cwd", metavar="DIR",
                                            help="Project directory (default: the current one).")]
ColorOpt = Annotated[str, typer.Option("--color", metavar="auto|always|never",
                                       autocompletion=complete_from("auto", "always", "never"),
                                       help="auto, always or never (NO_COLOR is respected).")]
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


def _seconds_between(minimum: float, maximum: float | None) -> Callable:
    def check(value: float | None) -> float | None:
        import math

        if value is None:
            return value
        if not math.isfinite(value):
            raise typer.BadParameter(f"must be a number of seconds, not {value}")
        if value < minimum or (maximum is not None and value > maximum):
            within = f"from {minimum:g} to {maximum:g}" if maximum is not None else f"{minimum:g} or more"
            raise typer.BadParameter(f"must be {within} seconds, not {value:g}")
        return value

    return check


def seconds_option(default: float | None, *names: str, help: str = "", minimum: float = 0,
                   maximum: float | None = None) -> Any:
    """An option that is a time in seconds (every float option is one): a finite number from
    ``minimum`` to ``maximum``; ``nan``, ``inf`` and anything out of range a usage error (exit 2),
    as count_option's are (click's own range lets ``nan`` through: it compares false)."""
    return typer.Option(default, *names, metavar="SECONDS", help=help, callback=_seconds_between(minimum, maximum))


MAX_LINES_HELP = "Lines of each tool result and command output to keep (0: all)."


def complete_session(ctx: typer.Context, incomplete: str) -> list[str]:
    """Tab completion: session ids of the project, listed as the command would list them (the
    ``--sessions-dir``, ``--cwd`` and ``--pi-version`` already on the line, else their defaults)."""
    try:
        from pisess.core.listing.repo import list_sessions

        given = ctx.params
        w = where(given.get("sessions_dir"), given.get("cwd"))
        version = given.get("pi_version") or CURRENT_PI
        return [s.id for s in list_sessions(w.root, w.cwd, pi_version=version).sessions
                if s.string_id and s.id.startswith(incomplete)]  # (ids pi takes: repo.resolve_session)
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
    from pisess.core.listing.paths import where as where_of

    return Where(*where_of(sessions_dir, cwd, os.environ, os.path.expanduser("~")))


def check_root(w: Where, sessions_dir: str | None, names: list | None = None) -> None:
    """A sessions root that was asked for (``--sessions-dir``, ``PI_CODING_AGENT_DIR``) must be a
    directory when it is needed (no name given, or a name that is not a path): else exit 2
    naming it, not "0 sessions".  The default root may be missing: pi has simply not run yet."""
    from pisess.core.listing.paths import looks_like_path

    if names and all(n is None or looks_like_path(n) or os.path.exists(n) for n in names):
        return
    if (sessions_dir or os.environ.get("PI_CODING_AGENT_DIR")) and not os.path.isdir(w.root):
        what = "is not a directory" if os.path.lexists(w.root) else "does not exist"
        source = "--sessions-dir" if sessions_dir else "PI_CODING_AGENT_DIR"
        raise PisessError("storage", f"sessions root {w.root} {what} (from {source})", path=w.root)


def resolve_session(session: str | None, w: Where, sessions_dir: str | None, pi_version: str) -> str:
    """``repo.resolve_session`` for a command that reads one session: the root checked, and what
    could not be read on the way named on stderr.  A session found is the one pi finds (pi skips
    what it cannot read too): the exit code stays; nothing found is exit 2 (it may be there)."""
    from pisess.core.listing.repo import resolve_session as resolve

    check_root(w, sessions_dir, [session] if session else None)
    met: list = []
    try:
        return resolve(session, w.root, w.cwd, pi_version=pi_version, unreadable=met)
    finally:
        note_unreadable(met, complete=True)


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
    from pisess.core.reading.jsonl import dumps as js_dumps

    return js_dumps(doc, indent=sys.stdout.isatty())


def emit_json(doc: dict, *, version: int, images: bool = False) -> None:
    """The one JSON document of a command, headed by its ``version`` (that document's, see
    ``ERROR_VERSION``); what it could not read is listed in ``unreadable``
    (everything the command noted, ``note_unreadable``: the document's own list and the rest).
    ``images``: the document holds image placeholders (a session read with ``images="lean"``),
    each written as the base64 it stands for, copied from the session file."""
    from pisess.cli.output import Printer

    if _unreadable:
        doc = {**doc, "unreadable": unreadable_json()}
    data = dumps({"version": version, **doc}) + b"\n"
    if images:
        from pisess.core.reading.images import expand

        Printer().data(expand(data, spans=True))
    else:
        Printer().data(data)


def emit_json_line(doc: dict, *, version: int) -> None:
    """One line of an NDJSON stream (``watch --json``), headed by its ``version``, flushed at once."""
    from pisess.cli.output import Printer
    from pisess.core.reading.jsonl import dumps as js_dumps

    Printer().data(js_dumps({"version": version, **doc}) + b"\n")


# What the running command could not read (directories, files): it reads the rest, and the one
# error handler names these on stderr after the results and exits 2.
_unreadable: list = []
_shown: set = set()
_incomplete: list = [False]


def note_unreadable(errors, *, shown: bool = False, complete: bool = False) -> None:
    """Record ``PisessError``s of paths that could not be read (each path once); ``shown``: the
    command's own view lists them already (validate and secrets, compiler-style); ``complete``:
    the result does not depend on them (exit code unchanged)."""
    known = {e.path for e in _unreadable}
    for e in errors:
        if e.path is None or e.path not in known:
            _unreadable.append(e)
            known.add(e.path)
        if shown:
            _shown.add(id(e))
        if not complete:
            _incomplete[0] = True


def unreadable_errors() -> list:
    return list(_unreadable)


def unreadable_json() -> list:
    return [e.to_dict() for e in _unreadable]


def report_unreadable() -> None:
    """``path: unreadable: reason``, one line each, on stderr."""
    for e in _unreadable:
        if id(e) not in _shown:
            say(f"{e.path}: unreadable: {e.reason}" if e.path else f"unreadable: {e.reason}")


def output_format(format: str | None, json_out: bool, formats: tuple) -> str:
    """``--format`` of a command that has one (validate, secrets), ``--json`` being ``--format
    json``: both naming different outputs is a usage error; the default is github when
    ``GITHUB_ACTIONS=true``, else text."""
    if json_out and format is not None and format.lower() != "json":
        raise PisessError("usage", f"--json and --format {format} ask for two outputs: use one (--json is --format json)")
    default = "json" if json_out else ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    fmt = (format or default).lower()
    if fmt not in formats:
        raise PisessError("usage", f"--format must be {', '.join(formats[:-1])} or {formats[-1]}, not {fmt!r}")
    return fmt


def handles_errors(fn: Callable | None = None, *, failure_exit: int | None = None) -> Callable:
    """The one place a ``PisessError`` becomes output: JSON on stdout when ``--json``, the
    located message on stderr always, and the exit code from one table.  ``failure_exit``: for a
    command whose 1 is an answer (``diff``: they differ), the code of every failure instead."""
    if fn is None:
        return functools.partial(handles_errors, failure_exit=failure_exit)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _reset_unreadable()
        try:
            fn(*args, **kwargs)
        except typer.Exit as done:
            _end_unreadable(done.exit_code)
            raise
        except PisessError as err:
            if kwargs.get("json_out"):
                try:
                    emit_json({"error": err.to_dict()}, version=ERROR_VERSION)
                except PisessError:  # stdout itself failed: the message below still says why
                    pass
            say(f"pisess: {err.located()}")
            hint = refused_hint(err, kwargs)
            if hint:
                say(hint)
            code = exit_code_for(err) if failure_exit is None else failure_exit
            _end_unreadable(code)
            raise typer.Exit(code) from None
        except BrokenPipeError:
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            raise typer.Exit(EXIT_OK) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        _end_unreadable(EXIT_OK)

    return wrapper


def refused_hint(err: PisessError, options: dict) -> str | None:
    """When pi's SDK reader refused the file and the command can read it as the pi command
    does: the option that does (``--lenient`` where there is one, else ``--reader cli``)."""
    if err.refused_by != "harness" or "reader" not in options:
        return None
    how = "--lenient" if "lenient" in options else "--reader cli"
    return (f"pi's SDK refuses this file; {how} reads it as the pi command does "
            "(skipping the lines it cannot read): pisess validate says what is wrong")


def _end_unreadable(code: int) -> None:
    """After the results: name what could not be read, and exit 2 (unless worse already)."""
    if not _unreadable:
        return
    report_unreadable()
    incomplete = _incomplete[0]
    _reset_unreadable()
    if incomplete and code in (EXIT_OK, EXIT_FINDINGS):
        raise typer.Exit(EXIT_USAGE)


def _reset_unreadable() -> None:
    _unreadable.clear()
    _shown.clear()
    _incomplete[0] = False


def report_notes(session) -> None:
    """What the reader says of the whole file (a v1 file the SDK refuses, read migrated; an
    empty file), ``file: note: ...`` on stderr, as context shows them in its header."""
    for note in session.notes:
        say(f"{session.path}: note: {note}")


DROPPED_SHOWN = 10  # dropped lines named one by one on stderr; the rest are counted


def report_dropped(path: str, dropped: list) -> None:
    """The one place a reader's dropped lines are told (every human view of a session, whatever
    the reader): ``file:line: skipped: reason`` on stderr, the first ``DROPPED_SHOWN`` of them,
    then how many more.  ``--json`` documents carry the same list as ``droppedLines``."""
    for d in dropped[:DROPPED_SHOWN]:
        say(f"{path}:{d['line']}: skipped: {d['reason']}")
    more = len(dropped) - DROPPED_SHOWN
    if more > 0:
        say(f"{path}: and {more} more skipped line{'s' if more != 1 else ''} ({len(dropped)} in all)")
