"""pisess path: the entries from the root (or the checkpoint) to the leaf."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def path(
    session: str | None = common.session_argument(),
    leaf: common.LeafOpt = None,
    time: bool = typer.Option(False, "--time", "-t", help="Show each entry's timestamp (local time)."),
    reader: common.ReaderOpt = "auto",
    lenient: common.LenientOpt = False,
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output when stdout is a terminal."),
) -> None:
    """The current leaf path, one entry per line, marking where the compaction stop rule cut it.

    Example: pisess path --leaf e0c1d2a3 --reader harness
    """
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    s = open_session(common.resolve_session(session, w, sessions_dir, pi_version), reader, light=True, pi_version=pi_version,
                     images="lean")  # an image is drawn as one line: its base64 stays in the file
    if not json_out:
        common.report_notes(s)
        common.report_dropped(s.path, s.dropped_lines)
    ctx = build_context(s, common.leaf_argument(s, leaf))
    if json_out:
        common.emit_json(ctx.path_json(), version=2)
        return
    from pisess.cli.output import Printer
    from pisess.cli.views.path import path_view

    printer = Printer(color)
    printer.show(path_view(ctx, width=printer.width, show_time=time), pager=pager)

