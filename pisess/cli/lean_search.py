"""``pisess search`` answered from the search index without Typer, Click or Rich.

A warm search of the index costs tens of milliseconds; importing Typer, Click and Rich and building
the command cost more than that (about 60 ms of a run that grep answers in 70).  So the console
script (``app.main``) offers ``search`` here first.  This module takes the argument shapes it fully
understands (``parse``: the command's own options, each as Click reads it) and the runs whose every
step is the ordinary one, and answers them with the command's own code: the core's search through
the index, ``views.search`` and the printer.  Everything else returns ``None`` before anything is
printed, and the Typer app runs the command as it always does: an option it does not know, ``-h``,
completion, an error of any kind (every message is the app's), a name that is not found, a file that
cannot be read or is no session, a note or a skipped line to tell, an index that must be built first
(the app scans, and builds it in the background), a pattern the index cannot narrow (the app scans),
``--no-cache``.  The output is the app's, byte for byte (``tests/test_lean_search.py`` runs both):
plain rows are drawn without Rich where there is no colour, the Rich view wherever colour or a
terminal needs it (``views.search.hit_rows``, as the command).  With ``PISESS_DEBUG=1`` an error
here is raised (a traceback) instead of handed to the app.
"""

from __future__ import annotations

import os
import sys

from pisess.cli.contract import ERROR_VERSION, exit_code_for, say, sdk_rules_note
from pisess.cli.output import isatty

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Options that take no value, and those that take one, as the command names them (``search_cmd``)
FLAGS = {"--all": "all_projects", "-a": "all_projects", "--regex": "regex", "-e": "regex",
         "--ignore-case": "ignore_case", "-i": "ignore_case", "--active-only": "active_only", "--json": "json_out",
         "--no-cache": "no_cache"}
VALUES = {"--in": "fields", "--reader": "reader", "-r": "reader", "--pi-version": "pi_version",
          "--sessions-dir": "sessions_dir", "--cwd": "cwd", "--color": "color"}
#: With a terminal on stderr the app would draw a progress bar once a search takes half a second:
#: this path takes only what cannot (nothing left to index, this many files to look at at most).
TTY_FILES = 20_000


def parse(args: list[str]) -> dict[str, Any] | None:
    """``search``'s arguments (``args[0] == "search"``) as the command's parameters, read as Click
    reads them (options anywhere, ``--opt=value`` or ``--opt value``, the last of an option given
    twice, ``--`` ending the options, ``-`` a name); ``None`` for anything else (an unknown option,
    short options run together, a flag given a value, a missing value or pattern, help)."""
    if args[:1] != ["search"]:
        return None
    got: dict[str, Any] = {"all_projects": False, "regex": False, "ignore_case": False, "active_only": False,
                           "json_out": False, "no_cache": False, "fields": None, "reader": "auto",
                           "pi_version": None, "sessions_dir": None, "cwd": None, "color": "auto"}
    names: list[str] = []
    rest = args[1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if a == "--":
            names += rest[i:]
            break
        if a[:1] != "-" or len(a) == 1:
            names.append(a)
            continue
        opt, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        if opt in FLAGS and not eq:
            got[FLAGS[opt]] = True
        elif opt in VALUES:
            if not eq:
                if i == len(rest):
                    return None
                value = rest[i]
                i += 1
            got[VALUES[opt]] = value
        else:
            return None
    if not names:
        return None
    got["pattern"], got["sessions"] = names[0], names[1:] or None
    return got


def run(args: list[str]) -> int | None:
    """The exit code of ``pisess ARGS`` answered here, or ``None`` (nothing printed) for the app."""
    a = parse(args)
    if a is None or a.get("no_cache"):
        return None
    try:
        got = _search(a)
    except KeyboardInterrupt:
        return 130
    except Exception:  # noqa: BLE001 - whatever went wrong, the app says it in its words
        if debugging(os.environ):
            raise
        return None
    if got is None:
        return None
    report, label = got
    try:
        return _answer(a, report, label)
    finally:
        from pisess.core.reading import cache

        cache.flush()  # (as the app does after every command: cache_cmd.without_cache_option)


def debugging(environ: Any) -> bool:
    """``PISESS_DEBUG`` is set to something other than empty, ``0``, ``no``, ``false`` or ``off``."""
    return environ.get("PISESS_DEBUG", "").strip().lower() not in ("", "0", "no", "false", "off")


def where(sessions_dir: str | None, cwd: str | None) -> tuple[str, str]:
    """``common.where``: the sessions root and the project directory."""
    from pisess.core.listing.paths import where as where_of

    return where_of(sessions_dir, cwd, os.environ, os.path.expanduser("~"))


def _search(a: dict[str, Any]) -> tuple[Any, str] | None:
    """The report and the scope's label, when the index answers and nothing in the run is out of
    the ordinary (else ``None``, having printed nothing)."""
    from pisess.cli.search_indexer import limit
    from pisess.core.analyses.search import listings, make_matcher, parse_fields, query
    from pisess.core.analyses.search.update import Deferred
    from pisess.core.listing.sessionset import collect
    from pisess.core.reading import cache

    reader = (a["reader"] or "auto").lower()  # (common.check_reader)
    color = (a["color"] or "auto").lower()  # (output.check_color)
    if reader not in ("auto", "harness", "cli") or color not in ("auto", "always", "never"):
        return None
    pi_version = pi_version_of(a["pi_version"])
    m = make_matcher(a["pattern"], regex=a["regex"], ignore_case=a["ignore_case"], fields=parse_fields(a["fields"]))
    if cache.current().directory is None or not query.usable(m):
        return None  # (the app scans)
    sessions = a["sessions"]
    root, cwd = where(a["sessions_dir"], a["cwd"])
    if (a["sessions_dir"] or os.environ.get("PI_CODING_AGENT_DIR")) and not os.path.isdir(root):
        return None  # (common.check_root may refuse it)
    if sessions or a["all_projects"]:
        scope, listed = collect(sessions, root, cwd, a["all_projects"], pi_version=pi_version), None
    else:  # (the project's files, as collect lists them: kept in the index while its directory is the same)
        scope, listed = listings.project(root, cwd)
    if scope.missing or scope.unreadable or scope.empty or not scope.files:
        return None
    tty = isatty(sys.stderr)
    if tty and len(scope.files) > TTY_FILES:
        return None
    try:
        report = query.search_indexed(scope.files, m, reader=reader, active_only=a["active_only"],
                                      pi_version=pi_version, defer=0 if tty else limit(os.environ), listed=listed)
    except Deferred:
        return None  # (the app scans them, and has them indexed in the background)
    if (report is None or report.unreadable or report.skipped
            or any(r.note or r.dropped_lines for r in report.results)):
        return None
    return report, scope.label


def pi_version_of(given: str | None) -> str:
    """``--pi-version`` as the option reads it: given, else ``PISESS_PI_VERSION`` when it is not
    empty, else the current pi; parsed (``versions.parse``: raises for one pisess does not know)."""
    from pisess.core import versions

    value = given if given is not None else os.environ.get("PISESS_PI_VERSION") or versions.CURRENT
    return versions.parse(value)


def _answer(a: dict[str, Any], report: Any, label: str) -> int:
    """Print what the command prints of ``report`` (as ``search_cmd`` does, and ``common.handles_errors``
    where stdout cannot be written); the exit code."""
    from pisess.core.analyses.search.database import take_notes
    from pisess.core.errors import PisessError

    json_out = a["json_out"]
    asked = a["pi_version"] is not None or os.environ.get("PISESS_PI_VERSION")  # (not the default: the option's rule)
    sdk = sdk_rules_note(a["reader"] or "auto", pi_version_of(a["pi_version"])) if asked else None
    try:
        if sdk is not None:  # (said as the option is read: before anything else)
            say(sdk)
        for note in take_notes():  # (a damaged index moved aside)
            say(note)
        if json_out:
            from pisess.cli.output import Printer
            from pisess.core.reading.jsonl import dumps

            Printer().data(dumps({"version": 2, **report.to_json()}, indent=sys.stdout.isatty()) + b"\n")
        elif report.results:
            from pisess.cli.output import Printer
            from pisess.cli.views.search import hit_rows

            printer = Printer(a["color"])
            printer.show(hit_rows(report, label, a["active_only"], a["color"], printer))
        if not json_out:
            from pisess.cli.views.search import last_word

            say(last_word(report, label))
    except PisessError as err:
        if json_out:
            try:
                from pisess.cli.output import Printer
                from pisess.core.reading.jsonl import dumps

                Printer().data(dumps({"version": ERROR_VERSION, "error": err.to_dict()},
                                     indent=sys.stdout.isatty()) + b"\n")
            except PisessError:
                pass
        say(f"pisess: {err.located()}")
        return exit_code_for(err)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter's last flush goes there
        except OSError:
            pass
        return 0
    return 0 if report.hit_count else 1
