"""pisess tree: the branch tree, the active path and the leaf at a glance."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def tree(
    session: str | None = common.session_argument(),
    full: bool = typer.Option(False, "--full", help="Do not fold long linear runs."),
    depth: int | None = common.count_option(None, "--depth", "-d", help="Show at most N levels of branches."),
    labels_only: bool = typer.Option(False, "--labels-only", help="Only labelled entries."),
    branches_only: bool = typer.Option(False, "--branches-only",
                                       help="Only entries with siblings, and their ancestors."),
    time: bool = typer.Option(False, "--time", "-t", help="Show each entry's timestamp (local time)."),
    leaf: common.LeafOpt = None,
    reader: common.ReaderOpt = "auto",
    lenient: common.LenientOpt = False,
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output when stdout is a terminal."),
) -> None:
    """Show the branch tree: ● on the active path, ○ elsewhere, ◀ the leaf, ◆ the checkpoint.

    Example: pisess tree 0195e682 --branches-only
    """
    from pisess.core.model.tree import build_tree
    from pisess.core.reading.session import open_session

    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    s = open_session(common.resolve_session(session, w, sessions_dir, pi_version), reader, light=True, pi_version=pi_version,
                     images="lean")  # an image is drawn as one line: its base64 stays in the file
    if not json_out:
        common.report_notes(s)
        common.report_dropped(s.path, s.dropped_lines)
    view = build_tree(s, leaf_id=common.leaf_argument(s, leaf), full=full, depth=depth,
                      branches_only=branches_only, labels_only=labels_only)
    if json_out:
        common.emit_json(view.to_json(), version=2)
        return
    from pisess.cli.output import Printer
    from pisess.cli.views.tree import tree_view

    printer = Printer(color)
    printer.show(tree_view(view, view.complete_entries(), width=printer.width, show_time=time), pager=pager)
