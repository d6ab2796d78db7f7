"""pisess context: exactly what the model sees at the leaf."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def context(
    session: str | None = common.session_argument(),
    leaf: common.LeafOpt = None,
    llm: bool = typer.Option(False, "--llm", help="Show llmMessages: what is sent to the provider after convertToLlm."),
    thinking: bool = typer.Option(False, "--thinking", help="Show thinking blocks in full."),
    full: bool = typer.Option(False, "--full", help="Do not shorten tool results and long texts (a block still stops at "
                              "200,000 characters; --json has everything)."),
    max_lines: int = common.count_option(12, "--max-lines", help=common.MAX_LINES_HELP
                                         + " Long texts keep 4x as many, summaries 2x."),
    old_lines: int | None = common.count_option(None, "--lines", "-n", hidden=True),  # the spelling before --max-lines
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output when stdout is a terminal."),
    system: bool = typer.Option(False, "--system", help="Show the system prompt and tools pi 1.x folds from the "
                                "context's system messages."),
    original: bool = typer.Option(False, "--original", help="Also show what context edits replaced or hid "
                                  "(pi 1.x), marked as such."),
    reader: common.ReaderOpt = "auto",
    lenient: common.LenientOpt = False,
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """What the model sees at the leaf: model, thinking level, tools, checkpoint, then each message.

    With pi 1.x's rules (the default) edited messages show what the model sees and name the edit;
    --original adds what the edits replaced or hid, --system the prompt and tools.

    Example: pisess context 0195e682 --leaf d00dfeed --llm
    """
    from pisess.core.model.context import build_context
    from pisess.core.model.usage import gather_for
    from pisess.core.reading.session import open_session

    if old_lines is not None:
        max_lines = old_lines
    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)
    # images: each one's base64 stays in the file; the view draws it as one line, --json copies it out
    s = open_session(path, reader, light=True, pi_version=pi_version,
                     gather=gather_for(pi_version) if json_out else None, images="lean")
    if not json_out:
        common.report_dropped(s.path, s.dropped_lines)
    ctx = build_context(s, common.leaf_argument(s, leaf), full_path=False)  # only the path's ids are shown
    if json_out:
        common.emit_json(ctx.to_json(), version=2, images=True)
        return
    from pisess.cli.output import show
    from pisess.cli.views.context import context_view

    show(context_view(ctx, llm=llm, thinking=thinking, full=full, max_lines=max_lines, system=system,
                             original=original, lines=True), color, pager=pager)
