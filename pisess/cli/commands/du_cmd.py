"""pisess du: where the bytes of session files are, and which entries are the biggest."""

from __future__ import annotations

from pisess.cli import common, output, sets
from pisess.cli.common import handles_errors


@handles_errors
def du(
    sessions: list[str] | None = sets.sessions_argument(),
    all_projects: sets.AllOpt = False,
    top: int = common.count_option(10, "--top", help="How many of the largest entries to list."),
    old_top: int | None = common.count_option(None, "-n", hidden=True),  # the spelling before --top alone
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Bytes per session, by entry type and role, in context vs compacted vs other branches, images.

    Ends with the largest entries and their ids (see one: pisess context SESSION --leaf ID).

    Example: pisess du 0195e682
    """
    from pisess.core.analyses.du import disk_usage

    if old_top is not None:
        top = old_top
    reader = common.check_reader(reader)
    output.check_color(color)  # before any work
    sets.run_report(lambda files, tick, skip: disk_usage(files, reader=reader, top=top, tick=tick, on_skip=skip,
                                                            pi_version=pi_version),
                    "du_view",
                    sessions=sessions, all_projects=all_projects, sessions_dir=sessions_dir, cwd=cwd,
                    json_out=json_out, color=color, pi_version=pi_version, json_version=2)
