"""pisess context: exactly what the model sees at the leaf."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors
from pisess.core import versions
from pisess.core.errors import PisessError
from pisess.core.versions import since


def context_json(ctx) -> dict:
    from pisess.core.js import UNDEF, get

    s = ctx.session
    ids = lambda es: [None if get(e, "id") is UNDEF else get(e, "id") for e in es]  # noqa: E731
    doc = {
        "reader": s.reader,
        "piVersion": s.pi_version,
        "file": s.path,
        "header": s.header_json(),
        "entryCount": len(s.entries),
        "leafId": ctx.leaf_id,
        "pathIds": ids(ctx.path),
        "contextEntryIds": ids(ctx.context_entries),
        "state": ctx.state.to_json(s.reader),
        "labels": s.labels_json(),
        "sessionName": s.session_name(),
        "checkpointId": None if ctx.checkpoint is None else get(ctx.checkpoint, "id"),
        "messages": ctx.messages,
        "llmMessages": ctx.llm_messages,
        "notes": s.notes,
        "droppedLines": s.dropped_lines,
    }
    if s.reader == "cli" or s.migrated_from_version is not None:
        doc["migratedFromVersion"] = s.migrated_from_version
        doc["emptyFileInitialized"] = s.empty_file_initialized
    if s.reader == "cli" and since(s.pi_version, versions.SYSTEM_MESSAGES):
        doc.update(pi16_extras(ctx))
    return doc


def pi16_extras(ctx) -> dict:
    """What pi 1.6 itself derives beside the messages, under the names pi's oracle prints."""
    from pisess.core import js
    from pisess.core.analyses.usage import gathered_usage, may_carry_usage, usage_fold, usage_rows
    from pisess.core.js import UNDEF, get
    from pisess.core.reading import cache

    s = ctx.session

    def eid(e):
        v = get(e, "id")
        return None if v is UNDEF else v

    try:
        breakdown: object = usage_rows(cache.fold(s, "usage", usage_fold, may_carry_usage, gathered_usage(s)))
    except PisessError as err:
        breakdown = {"error": err.to_dict()}
    return {
        "messageEntryIds": [eid(e) for e in ctx.message_sources],
        "appliedEdits": {js.to_string(eid(e)): eid(ctx.edit_of(e)) for e, _ in ctx.projection if ctx.edit_of(e)},
        "omittedEntryIds": [eid(e) for e in ctx.omitted],
        "projection": [[eid(e), n] for e, n in ctx.projection],
        "systemMessage": ctx.system_message(),
        "usageBreakdown": breakdown,
        "finalNewlineRepaired": s.final_newline_repaired(),
    }


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
    from pisess.core.reading.session import open_session

    if old_lines is not None:
        max_lines = old_lines
    reader = common.check_reader(reader, lenient)
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)
    gather = None
    if json_out and since(versions.parse(pi_version), versions.SYSTEM_MESSAGES):
        from pisess.core.analyses.usage import UsageGather

        gather = UsageGather  # the breakdown from the index's one parse, not from reading the file back
    # images: each one's base64 stays in the file; the view draws it as one line, --json copies it out
    s = open_session(path, reader, light=True, pi_version=pi_version, gather=gather,
                     images="lean")
    if not json_out:
        common.report_dropped(s.path, s.dropped_lines)
    ctx = build_context(s, common.leaf_argument(s, leaf), full_path=False)  # only the path's ids are shown
    if json_out:
        common.emit_json(context_json(ctx), images=True)
        return
    from pisess.cli.output import show
    from pisess.cli.views.context import context_view

    show(context_view(ctx, llm=llm, thinking=thinking, full=full, max_lines=max_lines, system=system,
                             original=original), color, pager=pager)
