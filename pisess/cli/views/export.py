"""``pisess export``: what an export wrote (on stderr)."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.output import soft
from pisess.cli.views.text import escape_controls, plural, short_id


def _kinds(counts: dict) -> str:
    return ", ".join(f"{k} \u00d7{n}" for k, n in counts.items())


def export_summary(run, written: str | None, redact_hint: str = "--redact replaces them") -> list:
    """What was exported (an ``ExportRun``) and what the secret scan saw (talk, for stderr).
    ``redact_hint``: how to redact, for a caller that does not take ``--redact`` (browse)."""
    out: list = []
    result = run.export
    if written:
        t = Text()
        what = "entries" if result.format == "jsonl" else "messages"
        t.append(f"Exported {result.message_count:,} {what} ({result.format}, {result.reader} reader, leaf ")
        t.append(short_id(result.leaf_id, run.id_width) if result.leaf_id is not None else "(none)")
        t.append(") \u2192 ")
        t.append(escape_controls(written), "bold")
        out.append(soft(t))
    total = sum(result.secrets.values())
    if not total:
        return out
    if result.redacted:
        out.append(soft(Text(f"redacted {plural(total, 'secret')}: {_kinds(result.secrets)}", "yellow")))
    else:
        out.append(soft(Text(f"warning: {plural(total, 'possible secret')} in this export ({_kinds(result.secrets)}); "
                             f"{redact_hint}, pisess secrets FILE shows where they are", "bold yellow")))
    return out
