"""pisess ls: the sessions of this project (or all), as pi lists them."""

from __future__ import annotations

import os

import typer

from pisess.cli import common, output
from pisess.cli.common import handles_errors


@handles_errors
def ls(
    all_projects: bool = typer.Option(False, "--all", "-a", help="Every project under the sessions root."),
    long: bool = typer.Option(False, "--long", "-l", help="Read whole files: name, messages, branches, last activity."),
    sort: str | None = typer.Option(None, "--sort", metavar="activity|created",
                                       help="activity: last activity first, as pi's /resume lists (default with "
                                            "pi 1.6); created: newest header first (pi 0.82's SDK listing)."),
    search: str | None = typer.Option(None, "--search", "-s", metavar="QUERY",
                                      help="Only the sessions pi 1.6's /resume search keeps: words (each in the "
                                      "name, id, message text or cwd; or its letters in order in the name or cwd), "
                                      "\"quoted phrases\", or re:REGEX. Answered from the search index."),
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """List sessions as pi lists them: with pi 1.6, last activity first (read from the end of
    each file, so it stays fast on thousands of files); with pi 0.82, newest header first.

    Example: pisess ls --all --long
    """
    from pisess.core.listing.repo import list_sessions

    w = common.where(sessions_dir, cwd)
    common.check_root(w, sessions_dir)
    listing = list_sessions(w.root, None if all_projects else w.cwd, pi_version=pi_version,
                            sort=sort.lower() if sort else None, whole=long, details=long)
    from pisess.core.listing.repo import sqlite_store

    store = sqlite_store(w.root)
    if store:  # once per run, so nobody takes sessions kept there for lost ones
        common.say(f"pisess: {store} is pi's SQLite session store (PERSISTENT_STORE=sqlite, unreleased): "
                   "pisess reads the JSONL files only, and does not list sessions kept there")
    if search is not None:
        from dataclasses import replace

        from pisess.cli import search_indexer
        from pisess.core.analyses.search.database import take_notes
        from pisess.core.analyses.search.resume import resume_search

        deferred: list = []
        listed = [s.path for s in listing.sessions]
        listing = replace(listing, sessions=resume_search(listing.sessions, search,
                                                          defer=search_indexer.limit(os.environ),
                                                          on_defer=deferred.append))
        if deferred:  # (the index lacked too much: every file's text was read, the index is built apart)
            search_indexer.say(deferred[0], search_indexer.start(listed))
        for note in take_notes():
            common.say(note)
    details = None
    if long:
        from pisess.core.listing.nested import with_nested_counts
        from pisess.core.listing.summary import details_of

        details = with_nested_counts(details_of(listing.sessions))
    common.note_unreadable(listing.unreadable)
    if json_out:
        common.emit_json(listing.to_json(details, search=search), version=2)
    elif not listing.sessions and output.check_color(color) != "always":
        # nothing to align or colour: plain lines, without loading Rich (a fresh project's first ls)
        from pisess.cli.output import Printer
        from pisess.cli.views.text import ls_heading, no_sessions_hint

        Printer(color).show(["".join(piece for piece, _ in ls_heading(listing, w, all_projects)),
                             no_sessions_hint(all_projects)])
    else:
        from pisess.cli.output import Printer
        from pisess.cli.views.listing import ls_view

        printer = Printer(color)
        printer.show(ls_view(listing, w, all_projects=all_projects, details=details, width=printer.width))
    _report_skipped(listing.skipped)


def _report_skipped(skipped: list) -> None:
    """What was left out, on stderr: v4 files named, the rest counted (those that cannot be read are
    named at the end, as every command names them)."""
    if not skipped:
        return
    from pisess.core.listing.summary import SDK_V4

    v4 = [k for k in skipped if SDK_V4 in k.reason]
    unreadable = [k for k in skipped if k.code in ("storage", "not_found")]
    rest = len(skipped) - len(v4) - len(unreadable)
    if v4:
        common.say(f"{len(v4)} file{'s are' if len(v4) != 1 else ' is'} {'' if len(v4) == 1 else 'each '}{SDK_V4}")
    if rest:
        common.say(f"{rest} file{'s are' if rest != 1 else ' is'} not a session; run pisess validate for details")
