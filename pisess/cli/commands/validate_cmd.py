"""pisess validate: every problem in session files, compiler style, for people and CI."""

from __future__ import annotations

import os

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def validate(
    paths: list[str] | None = typer.Argument(
        None, metavar="[PATH]...",
        help="Files or directories (searched for *.jsonl); default: the whole sessions root."),
    format: str | None = typer.Option(
        None, "--format", "-f", metavar="FORMAT", autocompletion=common.complete_from("text", "json", "github"),
        help="text, json or github (default: github when GITHUB_ACTIONS=true, else text)."),
    strict: bool = typer.Option(False, "--strict", help="Treat warnings as errors."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the summary line."),
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Check session files: what pi's SDK and the pi command do with each, and every problem found.

    One finding per line: FILE:LINE: SEVERITY CODE: MESSAGE, then a summary.
    Exit 0 when clean, 1 when an error (or with --strict a warning) was found, 2 when a path cannot be read.

    Example: pisess validate ~/.pi/agent/sessions --format github
    """
    from pisess.core.analyses.validate import validate_paths
    from pisess.core.errors import PisessError

    fmt = common.output_format(format, json_out, ("text", "json", "github"))
    targets = list(paths or [])
    if not targets:
        w = common.where(sessions_dir, None)
        common.check_root(w, sessions_dir)
        targets = [w.root]
        if not os.path.isdir(targets[0]):
            raise PisessError("not_found", f"no sessions root at {targets[0]} (pass files or --sessions-dir)")
    run = validate_paths(targets, pi_version=pi_version)
    from pisess.cli import sets

    sets.check_empty(run.empty, bool(run.reports) or bool(run.unreadable))
    # the text and github views list them with the findings; the JSON document in "unreadable"
    common.note_unreadable(run.unreadable, shown=fmt != "json")
    if fmt == "json":
        common.emit_json(run.to_json(strict), version=2)
    else:
        from pisess.cli.output import show
        from pisess.cli.views.validate import validate_github, validate_text

        show(validate_github(run.reports, run.unreadable, strict) if fmt == "github"
             else validate_text(run.reports, run.unreadable, strict, quiet=quiet), color)
    if not run.ok(strict):
        raise typer.Exit(common.EXIT_FINDINGS)
