"""pisess fork: a new session file holding the path to an entry, as pi's fork writes it."""

from __future__ import annotations

import os

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def fork(
    session: str = typer.Argument(..., metavar="SESSION", help="File path, session id or unique id prefix.",
                                  autocompletion=common.complete_session),
    entry: str = typer.Argument(..., metavar="ENTRY", help="Entry id to fork at (see pisess tree)."),
    position: str = typer.Option("before", "--position", "-p", metavar="before|at",
                                 autocompletion=common.complete_from("before", "at"),
                                 help="before: the new session ends before this user message (pi's /fork); "
                                      "at: it ends at this entry (pi's /clone)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be written; write nothing."),
    old_dry_run: bool = typer.Option(False, "-n", hidden=True),  # the spelling before --dry-run alone
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Write a new session forked from SESSION at ENTRY; the source is never touched.

    The file is created in the project's session directory (--cwd, else the source's cwd) under a
    new UUIDv7, exclusively (never overwriting) and atomically; its path is printed.

    Example: pisess fork 0195e682 d00dfeed --position before
    """
    from pisess.core.errors import PisessError
    from pisess.core.js import now_iso
    from pisess.core.listing.repo import default_fork_dir
    from pisess.core.model.fork import check_fork_directory, plan_fork, write_fork
    from pisess.core.reading.session import open_session

    dry_run = dry_run or old_dry_run
    if position not in ("before", "at"):
        raise PisessError("usage", f"--position must be before or at, not {position!r}")
    reader = common.check_reader(reader)
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)
    s = open_session(path, reader, light=True, pi_version=pi_version)
    if not json_out:
        common.report_dropped(s.path, s.dropped_lines)
    import uuid6

    target_cwd = w.cwd if cwd else None
    # a prefix of one entry id names it; an id no entry has or starts with gets pi's own answer
    entry = s.entry_id(entry, option="ENTRY", keep_unknown=True)
    plan = plan_fork(s, entry, position, new_id=str(uuid6.uuid7()), now_iso=now_iso(), cwd=target_cwd,
                     source_path=os.path.abspath(path))
    directory = (default_fork_dir(w.root, plan.header["cwd"]) if plan.header["cwd"]
                 else os.path.dirname(os.path.abspath(path)))
    target = os.path.join(directory, plan.file_name)
    written = None
    if not dry_run:
        try:
            check_fork_directory(directory)
        except PisessError as e:  # (the core's words, and the option only this command has)
            if e.code != "not_found":
                raise
            raise PisessError(e.code, e.message.removesuffix(")") + ", or pass --cwd)", path=e.path) from None
        written = write_fork(plan, directory)
    if json_out:
        common.emit_json(plan.to_json(written or target, dry_run=dry_run), version=1)
        return
    from pisess.cli.output import show, talk
    from pisess.cli.views.fork import fork_view

    before, out, after = fork_view(plan, written or target, dry_run=dry_run,
                                   resume=_resume_with(written, directory, plan.header["id"]) if written else None)
    talk(before, color)
    show(out, color)
    talk(after, color)


def _resume_with(written: str, directory: str, session_id: str) -> str:
    """What to give ``pi --session``: a prefix of the id where pi looks for sessions (its root:
    ``PI_CODING_AGENT_DIR``'s or the default), else the file's path, quoted for the shell (pi
    finds no id under another ``--sessions-dir``)."""
    import shlex

    from pisess.core.listing.repo import resume_prefix

    pi_root = os.path.realpath(common.where(None, None).root)
    here = os.path.realpath(directory)
    if os.path.commonpath([pi_root, here]) == pi_root:
        return resume_prefix(session_id, directory)
    return shlex.quote(os.path.abspath(written))
