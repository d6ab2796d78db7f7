"""pisess ls: the sessions of this project (or all), newest first."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def ls(
    all_projects: bool = typer.Option(False, "--all", "-a", help="Every project under the sessions root."),
    long: bool = typer.Option(False, "--long", "-l", help="Read whole files: name, messages, branches, last activity."),
    pi_version: common.PiVersionOpt = "1.6.0",
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """List sessions, newest first (header line only, so it stays fast on thousands of files).

    Example: pisess ls --all --long
    """
    pi_version = common.check_pi_version(pi_version)
    from pisess.core.repo import list_sessions

    w = common.where(sessions_dir, cwd)
    listing = list_sessions(w.root, None if all_projects else w.cwd)
    details = None
    if long:
        from pisess.core.summary import summarize_file

        details = {s.path: summarize_file(s.path) for s in listing.sessions}
    if json_out:
        rows = []
        for s in listing.sessions:
            row = s.to_json()
            if details is not None:
                row["details"] = details[s.path]
            rows.append(row)
        common.emit_json({"piVersion": pi_version, "root": w.root, "cwd": None if all_projects else w.cwd, "sessions": rows,
                          "skipped": [k.to_json() for k in listing.skipped]})
    elif not listing.sessions and common.check_color(color) != "always":
        # nothing to align or colour: plain text, without loading Rich (a fresh project's first ls)
        from pisess.cli.text import NO_SESSIONS_HINT, ls_heading

        typer.echo("".join(piece for piece, _ in ls_heading(listing, w, all_projects)) + "\n" + NO_SESSIONS_HINT)
    else:
        from pisess.cli import render

        render.ls_view(listing, w, all_projects=all_projects, details=details, color=color)
    if listing.skipped:
        n = len(listing.skipped)
        common.say(f"{n} file{'s are' if n != 1 else ' is'} not a session; run pisess validate for details")
