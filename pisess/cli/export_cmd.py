"""pisess export: the active branch as Markdown, HTML or a session file, safe to share."""

from __future__ import annotations

import os

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def export(
    session: str | None = common.session_argument(),
    leaf: common.LeafOpt = None,
    format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT",
                                         help="md, html or jsonl (default: from the -o extension, else md)."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="Write to FILE (created exclusively) instead of stdout."),
    force: bool = typer.Option(False, "--force", help="Overwrite FILE if it exists and is not a session file."),
    max_lines: int = typer.Option(200, "--max-lines", metavar="N",
                                  help="Lines of each tool result and command output to keep (0: all)."),
    images: bool = typer.Option(False, "--images", help="Embed images (data: URIs) instead of references."),
    redact: bool = typer.Option(False, "--redact", help="Replace every secret found with [REDACTED:kind]."),
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = "1.6.0",
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Export what the model sees on the path to the leaf (as pisess context shows it).

    md and html: the messages in reading order, summaries marked, thinking collapsible, tool calls
    and results fenced (results cut to --max-lines), images as references; every piece of session
    text escaped, and the html page runs no script and loads nothing.  jsonl: a new session file
    holding the branch from the root to the leaf, as pi's /clone writes it (new id, parentSession =
    the source).  Secrets are looked for in everything exported: --redact replaces them, otherwise
    they are counted on stderr.

    Example: pisess export 0195e682 --format html -o session.html --redact
    """
    from pisess.core.context import build_context
    from pisess.core.errors import PisessError
    from pisess.core.export import ExportOptions, export_branch, export_context, format_for, write_export
    from pisess.core.js import UNDEF, now_iso
    from pisess.core.paths import leaf_of
    from pisess.core.session import open_session

    fmt = format_for(output, format)
    if max_lines < 0:
        raise PisessError("usage", f"--max-lines must be 0 or more, not {max_lines}")
    if force and not output:
        raise PisessError("usage", "--force needs -o FILE")
    reader = common.check_reader(reader)
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)
    s = open_session(path, reader, light=True, pi_version=pi_version)
    if not json_out:
        common.report_dropped(s.path, s.dropped_lines)
    if fmt == "jsonl":
        import uuid6

        leaf_id = leaf if leaf is not None else leaf_of(s)
        if leaf is not None and s.lookup(leaf) is None:
            raise PisessError("not_found", f"Entry {leaf} not found", path=path, stage="leaf")
        cli = s if s.reader == "cli" else open_session(path, "cli", light=True, pi_version=pi_version)
        result = export_branch(cli, leaf_id, new_id=str(uuid6.uuid7()), now_iso=now_iso(),
                               source_path=os.path.abspath(path), redact=redact)
    else:
        ctx = build_context(s, UNDEF if leaf is None else leaf, full_path=False)
        result = export_context(ctx, fmt, ExportOptions(max_lines=max_lines, images=images, redact=redact))
    written = write_export(output, result.data, force=force) if output else None
    from pisess.cli import render_share
    from pisess.cli.output import Printer, talk

    if json_out:
        doc = {"reader": s.reader, "piVersion": s.pi_version, "file": path, "format": fmt, "leafId": result.leaf_id,
               "checkpointId": result.checkpoint_id, "messages": result.message_count,
               "droppedLines": s.dropped_lines, "output": written,
               "bytes": len(result.data), "secrets": result.secrets, "redacted": result.redacted}
        if fmt == "jsonl":
            doc["id"] = result.session_id
        if written is None:
            doc["content"] = result.data.decode("utf-8", "replace")
        common.emit_json(doc)
    elif written is None:
        Printer().data(result.data)
    talk(render_share.export_summary(result, written), color)
