"""pisess search: text across sessions, with where each hit sits in the tree."""

from __future__ import annotations

import typer

from pisess.cli import common, sets
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
    active_only: bool = typer.Option(False, "--active-only", help="Only hits the model sees at the current leaf."),
    reader: common.ReaderOpt = "auto",
    pi_version: common.PiVersionOpt = "1.6.0",
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Search message text, thinking, tool calls and results, bash, summaries, labels and names.

    Each hit names its session and entry and where it sits: active (the model sees it),
    compacted (before the checkpoint: the model sees the summary) or branch (abandoned).
    Exit 0 with hits, 1 without, 2 when a file cannot be read.

    Example: pisess search "cache.ts" --all --in user,tool
    """
    from pisess.core.errors import PisessError
    from pisess.core.search import make_matcher, search_file
    from pisess.core.sessionset import created_key

    reader = common.check_reader(reader)
    wanted = [f.strip().lower() for f in fields.split(",") if f.strip()] if fields is not None else None
    if fields is not None and not wanted:
        from pisess.core.search import FIELDS

        raise PisessError("usage", f"--in needs at least one of {', '.join(FIELDS)}")
    matcher = make_matcher(pattern, regex=regex, ignore_case=ignore_case, fields=wanted)
    common.check_color(color)  # before any work
    scope = sets.resolve(sessions, all_projects, sessions_dir, cwd)
    results, skipped, unreadable = [], [], []
    with sets.Progress(scope.files, "searching", color=color) as bar:
        for path in scope.files:
            try:
                r = search_file(path, matcher, reader=reader, active_only=active_only, tick=bar.tick,
                                pi_version=pi_version)
            except PisessError as e:
                (unreadable if e.unreadable else skipped).append(e)
                continue
            if r is not None:
                results.append(r)
                bar.note(f"{sum(len(x.hits) for x in results):,} hits")
    common.note_unreadable(unreadable)
    results.sort(key=lambda r: created_key({"timestamp": r.created_at}))
    hits = sum(len(r.hits) for r in results)
    if json_out:
        common.emit_json({
            "piVersion": pi_version, "pattern": pattern, "regex": regex, "ignoreCase": ignore_case,
            "in": sorted(matcher.fields), "activeOnly": active_only,
            "hits": [h.to_json(r) for r in results for h in r.hits],
            "files": len(scope.files), "sessions": len(results),
            "skipped": [e.to_dict() for e in skipped], "unreadable": common.unreadable_json(),
        })
    elif results:
        from pisess.cli import render_stats
        from pisess.cli.output import Printer

        printer = Printer(color)
        printer.show(render_stats.search_view(results, width=printer.width, searched=len(scope.files),
                                              label=scope.label, active_only=active_only))
    for r in results:
        if r.note:
            common.say(f"{r.path}: {r.note}")
    sets.report_skipped(skipped)
    if not json_out:
        if results:
            import shlex

            first = results[0].hits[0]
            common.say(f"see a hit in context: pisess context {shlex.quote(results[0].path)} --leaf "
                       f"{shlex.quote(str(first.entry_id))}")
        else:
            common.say(f"no hits in {len(scope.files)} file{'s' if len(scope.files) != 1 else ''} ({scope.label})")
    if not hits:
        raise typer.Exit(common.EXIT_FINDINGS)
