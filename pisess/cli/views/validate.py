"""``pisess validate``: findings as text lines or GitHub annotations."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.output import soft
from pisess.cli.views.shared import safe
from pisess.cli.views.text import escape_controls, files_read, plural

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def shown_path(p: str | None) -> str:
    """A path as it was given (a name found under a directory given: that directory's spelling),
    not made relative to here (``../tmp/...``); a name starting with ``-`` as ``./-...`` so it
    does not read as an option, and an empty one as ``''``."""
    if p is None:
        return "?"
    if not p:
        return "''"
    return "./" + p if p.startswith("-") else p


def validate_text(reports: list, unreadable: list, strict: bool, *, quiet: bool) -> list:
    """One line per finding (compiler style, unwrapped), then the summary."""
    from pisess.core.analyses.validate import summary_counts

    out: list = []
    for err in unreadable:
        out.append(soft(safe(f"{shown_path(err.path)}: error {err.code}: {err.message}", "bold red")))
    for r in reports:
        if quiet:
            continue
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            t = Text()
            t.append(escape_controls(shown_path(r.path)) + (f":{f.line}" if f.line else "") + ": ", "bold")
            t.append(f"{sev} {f.code}", SEV_STYLE[sev])
            t.append(": " + escape_controls(f.message))
            out.append(soft(t))
    c = summary_counts(reports, strict)
    errors = c["errorCount"] + len(unreadable)  # each unreadable input is an error line above
    line = Text()
    line.append(files_read(c["fileCount"], "checked", 0))
    if unreadable:
        line.append(f", {len(unreadable):,} unreadable", "bold red")
    line.append(" \u00b7 ")
    line.append(plural(errors, "error"), "bold red" if errors else "green")
    line.append(f" \u00b7 {c['warningCount']} warning{'s' if c['warningCount'] != 1 else ''}",
                "yellow" if c["warningCount"] else "")
    if c["infoCount"]:
        line.append(f" \u00b7 {c['infoCount']} note{'s' if c['infoCount'] != 1 else ''}", "dim")
    line.append(f" \u00b7 {c['sdkRefusedFileCount']} file{'s' if c['sdkRefusedFileCount'] != 1 else ''} pi's SDK would refuse"
                f" \u00b7 {c['dataLossFileCount']} file{'s' if c['dataLossFileCount'] != 1 else ''} the pi command "
                "would lose data from")
    out.append(soft(line))
    return out


def gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return escape_controls(s)


def validate_github(reports: list, unreadable: list, strict: bool) -> list[str]:
    """GitHub workflow commands, one line each."""
    from pisess.core.analyses.validate import summary_counts

    out: list[str] = []
    for err in unreadable:
        out.append(f"::error file={gh_escape(err.path or '?', True)},title={err.code}::{gh_escape(err.message)}")
    for r in reports:
        for f in r.findings:
            sev = "error" if strict and f.severity == "warning" else f.severity
            cmd = {"error": "error", "warning": "warning", "info": "notice"}[sev]
            loc = f"file={gh_escape(r.path, True)}" + (f",line={f.line}" if f.line else "")
            out.append(f"::{cmd} {loc},title={gh_escape(f.code, True)}::{gh_escape(f.message)}")
    c = summary_counts(reports, strict)
    out.append(f"{files_read(c['fileCount'], 'checked', len(unreadable))}, "
               f"{plural(c['errorCount'] + len(unreadable), 'error')}, {plural(c['warningCount'], 'warning')}")
    return out
