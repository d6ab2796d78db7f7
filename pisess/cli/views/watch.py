"""``pisess watch``: the human view of a followed session: a summary, one row per appended entry
saying what it means, and a status line on a terminal."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text

from pisess.cli.views import describe as d
from pisess.cli.views.text import escape_controls, one_line, plural, tilde
from pisess.core.model import kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.live import Live


class HumanView:
    """Rows on stdout; on a terminal a status line below them, updated in place."""

    def __init__(self, color: str, *, exit_on_delete: bool = False) -> None:
        from pisess.cli.output import Printer

        self.exit_on_delete = exit_on_delete  # a deleted file ends the watch: its row says so
        self.printer = Printer(color)
        self.console = self.printer.console  # the live status line is drawn on the printer's console
        self.live: Live | None = None
        self._last_status = 0.0

    def __enter__(self):
        if self.console.is_terminal:
            from rich.live import Live

            live = Live(console=self.console, auto_refresh=False, transient=True, redirect_stdout=False,
                        redirect_stderr=False)
            live.__enter__()
            self.live = live
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def _print(self, *items: Any) -> None:
        self.printer.show(list(items))

    def start(self, watcher, damage: list, recent: list) -> None:
        """The summary, the last entries of the active path (``recent``: (line, entry), oldest first)
        and the damage found so far."""

        s = watcher.state
        h = s.header or {}
        head = Text()
        head.append(escape_controls(d.s(h.get("id")))[:8] if h else "(no header yet)", "bold")
        if s.name:
            head.append(" \u00b7 " + one_line(s.name, 50), "bold")
        head.append(f" \u00b7 {plural(s.entries, 'entry', 'entries')} \u00b7 {plural(s.branch_points, 'branch point')}")
        head.append(f" \u00b7 leaf {escape_controls(d.s(s.leaf)[:s.id_width]) if s.leaf else '(none)'}")
        head.append(f"  watching {escape_controls(tilde(watcher.path))}", "dim")
        self._print(head)
        if recent and s.entries > len(recent):
            self._print(Text(f"  \u2026 {s.entries - len(recent):,} earlier entries \u2026", "dim"))
        for _line, e in recent:
            self._print(_row(e, None, dim=True, width=self.console.width, id_width=s.id_width))
        for ev in damage:
            self._print(_event_row(ev, s.id_width))

    def events(self, watcher, events: list) -> None:
        meaning: dict = {}
        for ev in events:
            if ev.kind not in ("entry", "damage", "rewritten", "deleted", "concurrent_writers") and ev.entry is not None:
                meaning.setdefault(id(ev.entry), []).append(ev)
        w = watcher.state.id_width
        for ev in events:
            if ev.kind == "entry":
                self._print(_row(ev.entry, meaning.get(id(ev.entry), []), line=ev.line, width=self.console.width,
                                 id_width=w))
            elif ev.kind in ("damage", "rewritten", "deleted", "concurrent_writers"):
                self._print(_event_row(ev, w, self.exit_on_delete))
        self._refresh(watcher)

    def switched(self, watcher) -> None:


        self._print(Text(f"\u2192 pi started a new session: now watching {escape_controls(tilde(watcher.path))}",
                         "bold"))

    def status(self, watcher, elapsed: float) -> None:
        if self.live is None:
            return
        now = time.monotonic()
        if now - self._last_status >= 1.0:
            self._refresh(watcher)

    def _refresh(self, watcher) -> None:
        if self.live is None:
            return


        s = watcher.state
        since = "no append yet" if watcher.last_append is None else f"last append {_ago(time.time() - watcher.last_append)} ago"
        parts = [plural(s.entries, "entry", "entries"), plural(s.branch_points, "branch point"),
                 f"context ~{s.context_tokens():,} tokens", f"${s.cost:.4f}", since]
        if watcher.has_pending:
            parts.append("pi is writing a line")
        self.live.update(Text(" \u00b7 ".join(parts), "reverse"), refresh=True)
        self._last_status = time.monotonic()


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


MEANING_STYLE = {"branch": "bold yellow", "leaf_moved": "bold yellow", "compaction": "bold magenta",
                 "branch_summary": "bold magenta", "model": "bold", "thinking": "bold", "label": "bold blue",
                 "context_edit": "bold", "session_name": "bold blue"}


def _meaning_text(ev, id_width: int = 8) -> str:

    def short(v: Any) -> str:
        return d.s(v)[:id_width] if v is not None else "root"

    k, data = ev.kind, ev.data
    if k == "branch":
        return "\u2442 new root" if data.get("newRoot") else f"\u2442 new branch from {short(data.get('from'))}"
    if k == "leaf_moved":
        if data.get("tip"):
            return f"\u21a9 continues the tip {short(data.get('to'))} (not the previous entry)"
        return f"\u21b7 leaf moved to {short(data.get('to'))}"
    if k == "compaction":
        return "\u25c6 compaction"
    if k == "branch_summary":
        return f"\u25c6 branch summary at {short(data.get('at'))}"
    if k == "model":
        return "model changed"
    if k == "thinking":
        return "thinking level changed"
    if k == "label":
        return "label set" if data.get("label") is not None else "label cleared"
    if k == "context_edit":
        return f"context edit: {'omits' if data.get('omits') else 'replaces'} {short(data.get('targetId'))}"
    if k == "session_name":
        return "session named" if data.get("name") else "session name cleared"
    return k


def _row(e: Any, meanings: list | None, *, line: int | None = None, dim: bool = False, width: int = 100,
         id_width: int = 8):

    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(d.local_time(e.get("timestamp"), with_date=False) + " ", "dim")
    moved = any(m.kind in ("branch", "leaf_moved") for m in meanings or ())
    # (the summary's rows are the active path's last entries: ●, as tree marks them, only dimmed)
    t.append(("\u21b1 " if moved else "\u25cf "), "dim" if dim else "bold")
    t.append(escape_controls(d.s(e.get("id"))[:id_width]), "dim" if dim else "bold")
    t.append("  ")

    k, preview = kinds.of_entry(e), kinds.preview(e, id_width)
    t.append(f"{d.word(k):<10} ", "dim" if dim else d.style(k))
    tail = Text()
    for m in meanings or ():
        tail.append("  " + _meaning_text(m, id_width), MEANING_STYLE.get(m.kind, "bold"))
    if line is not None:
        tail.append(f"  :{line}", "dim")
    room = max(10, width - t.cell_len - tail.cell_len - 1)
    t.append(one_line(preview, room), "dim" if dim else "")
    t.append_text(tail)
    return t


def _event_row(ev, id_width: int = 8, exit_on_delete: bool = False):


    data = ev.data
    if ev.kind == "damage":
        return Text(escape_controls(f"\u26a0 line {ev.line}: {data.get('code')}: {data.get('message')}"), "bold red")
    if ev.kind == "rewritten":
        return Text(escape_controls(f"\u21bb rewritten: {data.get('reason')}; read again from the start: "
                                    f"{data.get('entries'):,} entries"), "bold yellow")
    if ev.kind == "deleted":
        if exit_on_delete:
            return Text("\u2717 the file was deleted; ending (--exit-on-delete)", "bold red")
        return Text("\u2717 the file was deleted; waiting for it to come back (--exit-on-delete ends instead)",
                    "bold red")
    tips = data.get("tips") or []
    tip_text = " and ".join(f"{escape_controls(str(t.get('id'))[:id_width])} (line {t.get('line')})" for t in tips)
    return Text(f"\u21c4 two writers: from line {data.get('startLine')} the appends alternate between two growing tips "
                f"({tip_text}): two pi processes are writing this session at once; pi will resume only one of them "
                "(pisess validate: concurrent_writers)", "bold yellow")
