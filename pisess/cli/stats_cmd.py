"""pisess stats: tokens, cost, messages and tools over sessions, fork-aware and branch-aware."""

from __future__ import annotations

from typing import List, Optional

import typer

from pisess.cli import common, sets
from pisess.cli.common import handles_errors


@handles_errors
def stats(
    sessions: Optional[List[str]] = sets.sessions_argument(),
    all_projects: sets.AllOpt = False,
    by: Optional[str] = typer.Option(None, "--by", metavar="KEY", help="Also a table by session, model, day (local "
                                     "time) or branch.", case_sensitive=False),
    reader: common.ReaderOpt = "auto",
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Tokens (input, output, cache read/write), cost, messages, tool calls, errors, compactions, branches.

    Split by where the usage sits: in context, compacted, or on abandoned branches.  Entries a
    fork copied from its parent are counted once when the parent is in the set too.

    Example: pisess stats --all --by model
    """
    from pisess.core.errors import PisessError
    from pisess.core.stats import BY, compute_stats

    reader = common.check_reader(reader)
    by = by.lower() if by else None
    if by is not None and by not in BY:
        raise PisessError("usage", f"--by must be one of {', '.join(BY)}, not {by!r}")
    sets.check_color(color)
    scope = sets.resolve(sessions, all_projects, sessions_dir, cwd)
    unreadable = []

    def skip(e: PisessError) -> None:
        if e.code in ("storage", "not_found"):
            unreadable.append(e)

    with sets.Progress(scope.files, "reading", color=color) as bar:
        report = compute_stats(scope.files, reader=reader, by=by, tick=bar.tick, on_skip=skip)
    if json_out:
        common.emit_json({"scope": scope.label, **report.to_json()})
    else:
        from pisess.cli import render_stats

        render_stats.print_all(render_stats.stats_view(report, label=scope.label), color)
    for s in report.sessions:
        if s.note:
            common.say(f"{s.path}: {s.note}")
    sets.report_skipped(report.skipped)
    if unreadable:
        raise typer.Exit(common.EXIT_USAGE)
    if not report.sessions:
        raise typer.Exit(common.EXIT_FINDINGS)
