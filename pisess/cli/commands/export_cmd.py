"""pisess export: the active branch as Markdown, HTML or a session file, safe to share."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def export(
    session: str | None = common.session_argument(),
    leaf: common.LeafOpt = None,
    format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT",
                                         autocompletion=common.complete_from("md", "html", "jsonl"),
                                         help="md, html or jsonl (default: from the -o extension, else md)."),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="Write to FILE (created exclusively) instead of stdout ('-': stdout)."),
    force: bool = typer.Option(False, "--force", help="Overwrite FILE if it exists and is not a session file."),
    max_lines: int = common.count_option(200, "--max-lines", help=common.MAX_LINES_HELP),
    images: str = typer.Option("omit", "--images", metavar="omit|inline",
                               autocompletion=common.complete_from("omit", "inline"),
                               help="omit: a placeholder with each image's type and size; inline: embed each (data: URIs)."),
    redact: bool = typer.Option(False, "--redact", help="Replace every secret found with [REDACTED:kind]."),
    system: bool = typer.Option(False, "--system", help="Begin with the system prompt and tools pi 1.x folds from "
                                "the context's system messages (md and html)."),
    no_script: bool = typer.Option(False, "--no-script", help="html: the static page of the leaf's context, no "
                                   "script (what the explorer page shows with scripts off)."),
    open_page: bool = typer.Option(False, "--open", help="Open the page in the default browser (without -o: from a "
                                   "new file in a temporary directory, whose path is printed)."),
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
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
    from pisess.core.analyses.export import ExportOptions, check_export_request, export_session, format_for, write_export
    from pisess.core.errors import PisessError
    from pisess.core.js import now_iso

    if output == "-":  # the usual name for stdout, not a file called "-"
        output = None
    if images not in ("omit", "inline"):
        raise PisessError("usage", f"--images must be omit or inline, not {images!r}")
    fmt = format_for(output, format)
    if open_page and fmt != "html":
        raise PisessError("usage", "--open opens an html page: add --format html")
    if open_page and not output:
        import os
        import tempfile

        output = os.path.join(tempfile.mkdtemp(prefix="pisess-page-"), "session.html")
    check_export_request(fmt, output, force)
    reader = common.check_reader(reader)
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)
    new_id = ""
    if fmt == "jsonl":  # (only pi's /clone is a new session with an id; uuid6 costs 30 ms to import)
        import uuid6

        new_id = str(uuid6.uuid7())
    run = export_session(path, fmt, leaf=leaf, reader=reader, pi_version=pi_version,
                         options=ExportOptions(max_lines=max_lines, images=images == "inline", redact=redact, system=system,
                                               script=not no_script),
                         new_id=new_id, now_iso=now_iso())
    if not json_out:
        common.report_dropped(run.path, run.dropped_lines)
    written = write_export(output, run.export.data, force=force) if output else None
    from pisess.cli.output import Printer, outlive, talk
    from pisess.cli.views.export import export_summary

    outlive(run)  # (the page's working values: never freed one by one, output.outlive)

    if json_out:
        common.emit_json(run.to_json(written), version=2)
    elif written is None:
        Printer().data(run.export.data)
    talk(export_summary(run, written), color)
    if open_page and written:
        import pathlib
        import webbrowser

        webbrowser.open(pathlib.Path(written).resolve().as_uri())
