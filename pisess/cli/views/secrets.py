"""``pisess secrets``: findings as text, an allowlist or GitHub annotations."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.output import soft
from pisess.cli.views.text import escape_controls, files_read, plural
from pisess.cli.views.validate import gh_escape, shown_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pisess.core.analyses.secrets import SecretsScan


def _where(f) -> str:
    parts = []
    if f.entry_id:
        parts.append(f"entry {f.entry_id[:8]}")
    who = f.role or f.type
    if who:
        parts.append(who if f.type != "session" else "header")
    parts.append(f.field)
    return escape_controls(" \u00b7 ".join(parts))


def secrets_report(fmt: str, scan: SecretsScan, allowed: frozenset, allow_path: str | None, scope: tuple = (),
                   allow_file: str = ".pisess-secrets-allow") -> tuple[list, list]:
    """``(out, talk)`` of ``text``, ``github`` or ``allowlist``: the findings of ``scan`` for
    stdout, a hint for stderr (the same scan, ``scope`` its arguments, as allowlist lines appended
    to ``allow_file``)."""
    c = scan.summary(allowed)
    shown = scan.unaccepted(allowed)
    unreadable = scan.unreadable
    lines: list = []
    if fmt == "github":
        for e in unreadable:
            lines.append(f"::error file={gh_escape(e.path or '?', True)},title={e.code}::{gh_escape(e.message)}")
        for f in shown:
            title = gh_escape("secret " + f.kind, True)
            lines.append(f"::error file={gh_escape(f.path, True)},line={f.line},title={title}"
                         f"::{gh_escape(f.preview + ' (' + _where(f) + ')')}")
        lines.append(f"{files_read(c['fileCount'], 'scanned', len(unreadable))}, "
                     f"{plural(c['findingCount'], 'secret')} found, {c['allowlistedCount']:,} allowlisted")
        return lines, []
    if fmt == "allowlist":
        seen: set = set()
        for f in shown:
            if f.fingerprint in seen:
                continue
            seen.add(f.fingerprint)
            note = escape_controls(f"{f.kind} {f.preview} {shown_path(f.path)}:{f.line}").replace("#", "%23")
            lines.append(f"{f.fingerprint}  # {note}")
        return lines, []
    out: list = []
    for e in unreadable:
        out.append(soft(Text(escape_controls(f"{shown_path(e.path)}: error {e.code}: {e.message}"), "bold red")))
    for f in shown:
        t = Text()
        t.append(escape_controls(shown_path(f.path)) + f":{f.line}: ", "bold")
        t.append(f.kind, "bold red")
        t.append(" " + escape_controls(f.preview))
        t.append(f"  ({_where(f)} \u00b7 fp {f.fingerprint[:12]})", "dim")
        out.append(soft(t))
    line = Text()
    line.append(files_read(c["fileCount"], "scanned", 0))
    if unreadable:
        line.append(f", {len(unreadable):,} unreadable", "bold red")
    line.append(" \u00b7 ")
    if c["findingCount"]:
        line.append(f"{plural(c['findingCount'], 'secret')} found in {plural(c['fileWithFindingsCount'], 'file')}",
                    "bold red")
    else:
        line.append("no secrets found", "green")
    if c["allowlistedCount"]:
        line.append(f" \u00b7 {c['allowlistedCount']:,} allowlisted ({escape_controls(allow_path or '')})", "dim")
    out.append(soft(line))
    import shlex

    again = " ".join(shlex.quote(a) for a in ("pisess", "secrets", *scope, "--format", "allowlist"))
    hint = f"accept a finding: {escape_controls(again)} >> {escape_controls(shlex.quote(allow_file))} (then review the file)"
    return out, [soft(Text(hint, "dim"))] if c["findingCount"] else []
