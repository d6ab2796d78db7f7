"""pisess diff: two attempts side by side, as the model saw them."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors
from pisess.core import versions
from pisess.core.errors import PisessError

POINTS_HELP = ("SESSION ENTRY_A ENTRY_B (two points of one session), SESSION_A SESSION_B (two sessions at "
               "their leaves) or SESSION_A@ENTRY SESSION_B@ENTRY.")


@handles_errors(failure_exit=common.EXIT_USAGE)  # 1 is the answer "they differ"
def diff(
    points: list[str] = typer.Argument(..., metavar="POINTS...", show_default=False, help=POINTS_HELP,
                                       autocompletion=common.complete_session),
    stat: bool = typer.Option(False, "--stat", help="Only the table: where they part and what each side did."),
    thinking: bool = typer.Option(False, "--thinking", help="Show thinking blocks in full."),
    full: bool = typer.Option(False, "--full", help="Do not shorten tool results and long texts."),
    max_lines: int = common.count_option(12, "--max-lines", help=common.MAX_LINES_HELP),
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output when stdout is a terminal."),
    reader: common.ReaderOpt = "auto",
    lenient: common.LenientOpt = False,
    pi_version: common.PiVersionOpt = versions.CURRENT,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Compare two attempts: where they part, what each did, and what the model sees at each leaf.

    Exit status as `diff`: 0 the two contexts are the same, 1 they differ, 2 they could not be
    compared (a usage error, a session or entry not found or ambiguous, a file that is not a
    session or cannot be read).

    \b
    Examples:
      pisess diff 0195e682 c0ffee12 e0c1d2a3   two branches of one session
      pisess diff 0195e682 019ae0c4            a fork and its source
      pisess diff 0195e682@d00dfeed 019ae0c4 --stat
    """
    from pisess.core.analyses.diff import diff_points
    from pisess.core.reading.session import open_session

    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    a, b = _points(points)
    path_a = common.resolve_session(a[0], w, sessions_dir, pi_version)
    sa = open_session(path_a, reader, light=True, pi_version=pi_version)
    if b[0] is None:
        sb = sa
    else:
        path_b = _second_session(b[0], sa, a[0], w, sessions_dir, pi_version, alone=a[1] is None and b[1] is None)
        sb = sa if _same_file(path_a, path_b) else open_session(path_b, reader, light=True, pi_version=pi_version)
    if not json_out:
        common.report_dropped(sa.path, sa.dropped_lines)
        if sb is not sa:
            common.report_dropped(sb.path, sb.dropped_lines)
    result = diff_points(sa, common.leaf_argument(sa, a[1]), sb, common.leaf_argument(sb, b[1]))
    if json_out:
        common.emit_json(result.to_json(), version=2)
    else:
        from pisess.cli.output import Printer
        from pisess.cli.views.diff import diff_view

        printer = Printer(color)
        printer.show(diff_view(result, stat=stat, thinking=thinking, full=full, max_lines=max_lines,
                               width=printer.width), pager=pager)
    if not result.same_context:
        raise typer.Exit(common.EXIT_FINDINGS)


def _split(arg: str) -> tuple[str, str | None]:
    """``SESSION@ENTRY``: an entry id never holds ``@``, so the last one splits."""
    session, at, entry = arg.rpartition("@")
    if not at or not session or not entry:
        return arg, None
    return session, entry


def _points(points: list[str]) -> tuple[tuple[str, str | None], tuple[str | None, str | None]]:
    """The two points the arguments name: (session, entry or None for its leaf) each; a ``None``
    session on the second is the first's."""
    if len(points) == 3:
        if any("@" in p for p in points[1:]):
            raise PisessError("usage", "with three arguments (SESSION ENTRY_A ENTRY_B) the entries take no @")
        return (points[0], points[1]), (None, points[2])
    if len(points) == 2:
        return _split(points[0]), _split(points[1])
    raise PisessError("usage", f"diff takes two or three arguments ({POINTS_HELP}), not {len(points)}")


def _second_session(name: str, sa, first: str, w, sessions_dir: str | None, pi_version: str, *, alone: bool) -> str:
    """The second session's path; ``diff SESSION ENTRY`` (a third argument forgotten) is told so:
    ENTRY is no session, but an entry of the first one."""
    import shlex

    try:
        return common.resolve_session(name, w, sessions_dir, pi_version)
    except PisessError as err:
        if not alone or err.code != "not_found":
            raise
        try:
            entry = sa.entry_id(name)
        except PisessError:
            raise err from None
        leaf = sa.leaf_id if isinstance(sa.leaf_id, str) and sa.leaf_id != entry else None
        typed = f"pisess diff {shlex.quote(first)} {shlex.quote(entry)} {shlex.quote(leaf) if leaf else 'ENTRY_B'}"
        raise PisessError("usage", f"{name!r} is an entry of {first}, not a session; to compare two points of one "
                          f"session, name both entries: {typed}" + (f" ({leaf}: its current leaf)" if leaf else ""),
                          path=sa.path) from None


def _same_file(a: str, b: str) -> bool:
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
