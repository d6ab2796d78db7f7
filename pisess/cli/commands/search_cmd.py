"""pisess search: text across sessions, with where each hit sits in the tree."""

from __future__ import annotations

import typer

from pisess.cli import common, output, sets
from pisess.cli.common import handles_errors


@handles_errors
def search(
    pattern: str = typer.Argument(..., metavar="PATTERN", help="Text to find (a literal unless --regex)."),
    sessions: list[str] | None = sets.sessions_argument(),
    all_projects: sets.AllOpt = False,
    fields: str | None = typer.Option(None, "--in", metavar="FIELDS",
                                         help="Only these, comma separated: user, assistant, thinking, tool (calls, "
                                         "results, bash), summary, custom, label, name, system (pi 1.x prompt "
                                         "sections and tool definitions), edit (context_edit replacements)."),
    regex: bool = typer.Option(False, "--regex", "-e", help="PATTERN is a (Python) regular expression."),
    ignore_case: bool = typer.Option(False, "--ignore-case", "-i", help="Ignore case."),
    active_only: bool = typer.Option(False, "--active-only",
                                     help="Only hits the model sees at the current leaf (active, retained)."),
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Search message text, thinking, tool calls and results, bash, summaries, labels and names.

    Each hit names its session and entry and where it sits: active (the model sees it),
    retained (before the checkpoint, which keeps a copy the model sees: pi's SDK retainedTail),
    compacted (before the checkpoint: the model sees the summary) or branch (abandoned).
    Exit 0 with hits, 1 without, 2 when a file cannot be read.

    Example: pisess search "cache.ts" --all --in user,tool
    """
    import os

    from pisess.cli import search_indexer
    from pisess.cli.views.search import hit_rows, last_word
    from pisess.core.analyses.search import make_matcher, parse_fields, search_files
    from pisess.core.analyses.search.database import take_notes

    reader = common.check_reader(reader)
    matcher = make_matcher(pattern, regex=regex, ignore_case=ignore_case, fields=parse_fields(fields))
    output.check_color(color)  # before any work
    scope = sets.resolve(sessions, all_projects, sessions_dir, cwd, pi_version)
    with sets.Progress(scope.files, "searching", color=color) as bar:
        report = search_files(scope.files, matcher, reader=reader, active_only=active_only, tick=bar.tick,
                              on_hits=lambda n: bar.note(f"{n:,} hits"), pi_version=pi_version,
                              defer=search_indexer.limit(os.environ))
    for note in take_notes():  # (a damaged index moved aside)
        common.say(note)
    if report.deferred:  # (too much to index first: the scan answered, the index is built apart)
        search_indexer.say(report.deferred, search_indexer.start(scope.files))
    common.note_unreadable(report.unreadable)
    results = report.results
    if json_out:
        common.emit_json(report.to_json(), version=2)
    elif results:
        printer = output.Printer(color)
        printer.show(hit_rows(report, scope.label, active_only, color, printer))
    for r in results:
        if r.note:
            common.say(f"{r.path}: {r.note}")
        if not json_out:
            common.report_dropped(r.path, r.dropped_lines)
    sets.report_skipped(report.skipped)
    if not json_out:
        common.say(last_word(report, scope.label))
    if not report.hit_count:
        raise typer.Exit(common.EXIT_FINDINGS)

