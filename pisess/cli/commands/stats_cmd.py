"""pisess stats: tokens, cost, messages and tools over sessions, fork-aware and branch-aware."""

from __future__ import annotations

import typer

from pisess.cli import common, output, sets
from pisess.cli.common import handles_errors


@handles_errors
def stats(
    sessions: list[str] | None = sets.sessions_argument(),
    all_projects: sets.AllOpt = False,
    by: str | None = typer.Option(None, "--by", metavar="KEY", help="Also a table by session, model, day (local "
                                     "time) or branch.", case_sensitive=False,
                                  autocompletion=common.complete_from("session", "model", "day", "branch")),
    nested: bool = typer.Option(False, "--nested", help="Also count the sessions nested below each session's "
                                "folder (subagent runs), folded into their parent's figures (--by session)."),
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
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
    from pisess.core.analyses.stats import BY, compute_stats
    from pisess.core.errors import PisessError

    reader = common.check_reader(reader)
    by = by.lower() if by else None
    if by is not None and by not in BY:
        raise PisessError("usage", f"--by must be one of {', '.join(BY)}, not {by!r}")
    output.check_color(color)  # before any work
    sets.run_report(lambda files, tick, skip: compute_stats(files, reader=reader, by=by, tick=tick, on_skip=skip,
                                                                pi_version=pi_version, nested=nested),
                    "stats_view",
                    sessions=sessions, all_projects=all_projects, sessions_dir=sessions_dir, cwd=cwd,
                    json_out=json_out, color=color, pi_version=pi_version, json_version=2)
