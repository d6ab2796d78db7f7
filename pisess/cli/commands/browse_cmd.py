"""pisess browse: the whole session, interactively (Textual: pip install 'pisess[tui]')."""

from __future__ import annotations

import sys

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors
from pisess.core import versions
from pisess.core.errors import PisessError

INSTALL = "pisess browse needs Textual, an optional extra: pip install 'pisess[tui]'"


@handles_errors
def browse(
    session: str | None = common.session_argument(
        "File path, session id or unique id prefix; none: the project's sessions to pick from."),
    at: str | None = typer.Option(None, "--at", metavar="ENTRY",
                                  help="Open with this entry selected (an id or a unique prefix)."),
    screen: str | None = typer.Option(None, "--screen", metavar="context|trace",
                                      autocompletion=common.complete_from("context", "trace"),
                                      help="Open that screen for the --at entry (else the leaf)."),
    compare: str | None = typer.Option(None, "--compare", metavar="ENTRY",
                                       help="Open the comparison of the --at entry (else the leaf) with ENTRY."),
    all_projects: bool = typer.Option(False, "--all", "-a", help="List every project's sessions (no SESSION)."),
    reader: common.ReaderOpt = "auto",
    lenient: common.LenientOpt = False,
    pi_version: common.PiVersionOpt = versions.CURRENT,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
) -> None:
    """Explore a session interactively: the tree, any entry in full, what the model saw there (c),
    the turns as a trace (t), two entries compared (d), search (/), fork (f), copy (y), export (e).

    Without SESSION: the project's sessions (Tab: all projects), as ls --long lists them.
    Nothing here writes to an existing session file.  Keys: ? in the app, or pisess help browse.

    Example: pisess browse 0195e682 --at d00dfeed --screen context
    """
    try:
        from pisess.cli.browse.app import BrowseApp
    except ImportError as e:
        if "textual" not in str(e):
            raise
        raise PisessError("usage", INSTALL) from None
    from pisess.core.reading.session import open_session

    reader = common.check_reader(reader, lenient)
    if screen is not None and screen not in ("context", "trace"):
        raise PisessError("usage", f"--screen must be context or trace, not {screen!r}")
    if screen is not None and compare is not None:
        raise PisessError("usage", "--screen and --compare each open a screen: give one")
    if session is None and (screen is not None or compare is not None):
        raise PisessError("usage", f"{'--screen' if screen is not None else '--compare'} needs a SESSION")
    w = common.where(sessions_dir, cwd)
    path = None
    entry = None
    then: tuple | None = None
    if session is not None or at is not None:
        path = common.resolve_session(session, w, sessions_dir, pi_version)
        # read before the app starts: a session that cannot be read is reported as every command does
        s = open_session(path, reader, light=True, pi_version=pi_version)
        common.report_dropped(s.path, s.dropped_lines)
        entry = None if at is None else _entry(s, at, "--at")
        if compare is not None:
            then = ("compare", _entry(s, compare, "--compare"))
        else:
            then = (screen,) if screen is not None else None
    else:
        common.check_root(w, sessions_dir)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # (checked after the session is found and read: a wrong name still gets its own message)
        raise PisessError("usage", "pisess browse needs a terminal (stdin and stdout); for a pipe or a file use "
                          "pisess tree, context or export")
    app = BrowseApp(path=path, at=entry, root=w.root, cwd=w.cwd, reader=reader, pi_version=pi_version,
                    all_projects=all_projects, sessions_dir=sessions_dir, then=then)
    app.run()
    if app.return_code:  # (Ctrl-C: 130, as every command interrupted)
        raise typer.Exit(app.return_code)


def _entry(session, arg: str, option: str) -> str:
    """The entry ``option`` names; one it does not name alone is a usage error here (exit 2): a
    program that opens browse at an entry (pi's package) tells "not opened" by that code."""
    try:
        return session.entry_id(arg, option=option)
    except PisessError as e:
        if e.code != "ambiguous":
            raise
        raise PisessError("usage", e.message, path=e.path) from None
