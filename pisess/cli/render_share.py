"""Human output of the sharing commands (export, secrets).  Rich ``Text`` only, never markup;
every string that came from a session file is escaped first."""

from __future__ import annotations

import sys

from rich.text import Text

from pisess.cli.render import _gh_escape, _rel, make_console
from pisess.cli.text import escape_controls, plural


def _kinds(counts: dict) -> str:
    return ", ".join(f"{k} \u00d7{n}" for k, n in counts.items())


# --- export --------------------------------------------------------------------------------------


def export_summary(result, written: str | None, session, *, color: str) -> None:
    """What was exported and what the secret scan saw, on stderr."""
    err = make_console(color, stderr=True)
    if written:
        t = Text()
        what = "entries" if result.format == "jsonl" else "messages"
        t.append(f"Exported {result.message_count:,} {what} ({result.format}, {result.reader} reader, leaf ")
        t.append(escape_controls(str(result.leaf_id))[:8] if result.leaf_id is not None else "(none)")
        t.append(") \u2192 ")
        t.append(escape_controls(written), "bold")
        err.print(t, soft_wrap=True)
    total = sum(result.secrets.values())
    if not total:
        return
    if result.redacted:
        err.print(Text(f"redacted {plural(total, 'secret')}: {_kinds(result.secrets)}", "yellow"), soft_wrap=True)
    else:
        err.print(Text(f"warning: {plural(total, 'possible secret')} in this export ({_kinds(result.secrets)}); "
                       "--redact replaces them, pisess secrets FILE shows where they are", "bold yellow"),
                  soft_wrap=True)


# --- secrets -------------------------------------------------------------------------------------


def _where(f) -> str:
    parts = []
    if f.entry_id:
        parts.append(f"entry {f.entry_id[:8]}")
    who = f.role or f.type
    if who:
        parts.append(who if f.type != "session" else "header")
    parts.append(f.field)
    return escape_controls(" \u00b7 ".join(parts))


def secrets_summary(files: list, findings: list, allowed: frozenset) -> dict:
    shown = [f for f in findings if f.fingerprint not in allowed]
    return {"files": len(files), "findings": len(shown), "allowlisted": len(findings) - len(shown),
            "filesWithFindings": len({f.path for f in shown}),
            "kinds": dict(sorted(_count(f.kind for f in shown).items()))}


def _count(kinds) -> dict:
    out: dict = {}
    for k in kinds:
        out[k] = out.get(k, 0) + 1
    return out


def secrets_report(fmt: str, files: list, findings: list, allowed: frozenset, unreadable: list,
                   allow_path: str | None, *, color: str) -> None:
    c = secrets_summary(files, findings, allowed)
    if fmt == "json":
        from pisess.cli.common import emit_json

        by_file: dict = {p: [] for p in files}
        for f in findings:
            by_file.setdefault(f.path, []).append(f.to_json(f.fingerprint in allowed))
        emit_json({"files": [{"path": p, "findings": fs} for p, fs in by_file.items()],
                   "unreadable": [e.to_dict() for e in unreadable], "allowlist": allow_path, "summary": c})
        return
    shown = [f for f in findings if f.fingerprint not in allowed]
    if fmt == "github":
        out = sys.stdout
        for e in unreadable:
            out.write(f"::error file={_gh_escape(e.path or '?', True)},title={e.code}::{_gh_escape(e.message)}\n")
        for f in shown:
            title = _gh_escape("secret " + f.kind, True)
            out.write(f"::error file={_gh_escape(f.path, True)},line={f.line},title={title}"
                      f"::{_gh_escape(f.preview + ' (' + _where(f) + ')')}\n")
        out.write(f"{plural(c['files'], 'file')} scanned, {plural(c['findings'], 'secret')} found, "
                  f"{c['allowlisted']:,} allowlisted\n")
        return
    if fmt == "allowlist":
        out = sys.stdout
        seen: set = set()
        for f in shown:
            if f.fingerprint in seen:
                continue
            seen.add(f.fingerprint)
            note = escape_controls(f"{f.kind} {f.preview} {_rel(f.path)}:{f.line}").replace("#", "%23")
            out.write(f"{f.fingerprint}  # {note}\n")
        return
    console = make_console(color)
    for e in unreadable:
        console.print(Text(escape_controls(f"{_rel(e.path or '?')}: error {e.code}: {e.message}"), "bold red"),
                      soft_wrap=True)
    for f in shown:
        t = Text()
        t.append(escape_controls(_rel(f.path)) + f":{f.line}: ", "bold")
        t.append(f.kind, "bold red")
        t.append(" " + escape_controls(f.preview))
        t.append(f"  ({_where(f)} \u00b7 fp {f.fingerprint[:12]})", "dim")
        console.print(t, soft_wrap=True)
    line = Text()
    line.append(f"{plural(c['files'], 'file')} scanned \u00b7 ")
    if c["findings"]:
        line.append(f"{plural(c['findings'], 'secret')} found in {plural(c['filesWithFindings'], 'file')}",
                    "bold red")
    else:
        line.append("no secrets found", "green")
    if c["allowlisted"]:
        line.append(f" \u00b7 {c['allowlisted']:,} allowlisted ({escape_controls(allow_path or '')})", "dim")
    if unreadable:
        line.append(f" \u00b7 {len(unreadable)} unreadable", "bold red")
    console.print(line, soft_wrap=True)
    if c["findings"]:
        hint = "accept a finding: pisess secrets --format allowlist >> .pisess-secrets-allow (then review the file)"
        make_console(color, stderr=True).print(Text(hint, "dim"), soft_wrap=True)
