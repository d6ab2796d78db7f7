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
    at: str | None = typer.Option(None, "--at", metavar="ID", help="Open at this entry (an id or a unique prefix)."),
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

    Example: pisess browse 0195e682 --at d00dfeed
    """
    try:
        from pisess.cli.browse.app import BrowseApp
    except ImportError as e:
        if "textual" not in str(e):
            raise
        raise PisessError("usage", INSTALL) from None
    from pisess.core.reading.session import open_session

    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    path = None
    entry = None
    if session is not None or at is not None:
        path = common.resolve_session(session, w, sessions_dir, pi_version)
        # read before the app starts: a session that cannot be read is reported as every command does
        s = open_session(path, reader, light=True, pi_version=pi_version)
        common.report_dropped(s.path, s.dropped_lines)
        entry = None if at is None else s.entry_id(at, option="--at")
    else:
        common.check_root(w, sessions_dir)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # (checked after the session is found and read: a wrong name still gets its own message)
        raise PisessError("usage", "pisess browse needs a terminal (stdin and stdout); for a pipe or a file use "
                          "pisess tree, context or export")
    app = BrowseApp(path=path, at=entry, root=w.root, cwd=w.cwd, reader=reader, pi_version=pi_version,
                    all_projects=all_projects, sessions_dir=sessions_dir)
    app.run()
    if app.return_code:  # (Ctrl-C: 130, as every command interrupted)
        raise typer.Exit(app.return_code)
