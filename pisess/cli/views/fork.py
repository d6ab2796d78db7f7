"""``pisess fork``: what was (or would be) copied, and how to resume it."""

from __future__ import annotations

from rich.text import Text

from pisess.cli.output import soft
from pisess.cli.views import describe as d
from pisess.cli.views.text import escape_controls, one_line
from pisess.cli.views.text import short_id as _sid
from pisess.core.js import get


def fork_view(plan, path: str, *, dry_run: bool, resume: str | None = None) -> tuple[list, list, list]:
    """``(talk, out, more talk)``: what was (or would be) written on stderr, the new file's path on
    stdout (nothing with ``dry_run``), then how to resume it (``resume``: a prefix of the new id
    that no other session of its directory has, ``repo.resume_prefix``, or the new file's path
    where pi would not find the id)."""

    src = plan.source
    n = len(plan.entries)
    start = ""
    if plan.cut_at is not None:
        start = f" (path from checkpoint {_sid(get(plan.cut_at, 'id'), src.id_width)})"
    verb = "Would fork" if dry_run else "Forked"
    msg = Text()
    msg.append(f"{verb} {_sid((src.header or {}).get('id'))} {plan.position} {escape_controls(plan.entry_id or '')}: ")
    if plan.new_empty_session:
        msg.append("nothing before it, so pi starts an empty session with parentSession set")
    else:
        msg.append(f"{n} entr{'ies' if n != 1 else 'y'} {'would be ' if dry_run else ''}copied{start}")
    msg.append(f" ({src.reader} reader)", "dim")
    talk: list = [soft(msg)]
    if dry_run:
        for e in plan.entries[-5:]:
            talk.append(Text(f"  {_sid(get(e, 'id'), src.id_width)}  {d.entry_kind(e):<10} "
                             + one_line(d.entry_preview(e, src.id_width), 60), "dim"))
        talk.append(soft(Text(f"\u2192 {escape_controls(path)} (not written: --dry-run)", "dim")))
        return talk, [], []
    # a command to copy: one line, never broken (a path may hold spaces)
    resume_with = soft(Text(f"  resume it with: pi --session {escape_controls(resume or plan.header['id'])}", "dim"))
    return talk, [escape_controls(path)], [resume_with]
