"""pisess validate: every problem in session files, compiler style, for people and CI."""

from __future__ import annotations

import os
import time

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
    from pisess.core.analyses.validate import validate_file
    from pisess.core.errors import PisessError
    from pisess.core.listing.repo import iter_jsonl
    from pisess.core.reading.files import os_error

    fmt = common.output_format(format, json_out, ("text", "json", "github"))
    targets = list(paths or [])
    if not targets:
        w = common.where(sessions_dir, None)
        common.check_root(w, sessions_dir)
        targets = [w.root]
        if not os.path.isdir(targets[0]):
            raise PisessError("not_found", f"no sessions root at {targets[0]} (pass files or --sessions-dir)")
    reports, unreadable = [], []
    now = time.time()
    empty: list = []
    for path, err in iter_jsonl(targets, empty):
        if err is None:
            try:
                mtime = os.stat(path).st_mtime
                reports.append(validate_file(path, mtime=mtime, now=now, pi_version=pi_version))
                continue
            except PisessError as e:
                err = e
            except OSError as e:
                err = os_error(path, e)
        unreadable.append(err)
    from pisess.cli import sets

    sets.check_empty(empty, bool(reports) or bool(unreadable))
    # the text and github views list them with the findings; the JSON document in "unreadable"
    common.note_unreadable(unreadable, shown=fmt != "json")
    if fmt == "json":
        from pisess.core.analyses.validate import summary_counts

        common.emit_json({
            "piVersion": pi_version,
            "files": [r.to_json(strict) for r in reports],
            "unreadable": [e.to_dict() for e in unreadable],
            "summary": summary_counts(reports, strict),
        })
    else:
        from pisess.cli.output import show
        from pisess.cli.views.validate import validate_github, validate_text

        show(validate_github(reports, unreadable, strict) if fmt == "github"
             else validate_text(reports, unreadable, strict, quiet=quiet), color)
    if any(not r.ok(strict) for r in reports):
        raise typer.Exit(common.EXIT_FINDINGS)
