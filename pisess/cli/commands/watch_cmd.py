"""pisess watch: follow a live session as pi appends to it, one row (or NDJSON event) per append."""

from __future__ import annotations

import os
import time
from typing import Any

import typer

from pisess.cli import common, output
from pisess.cli.common import handles_errors

NEW_SESSION_EVERY = 1.0  # seconds between looks for a newer session (--follow-new)
RECENT = 5  # entries of the active path shown on start
MAX_INTERVAL = 60.0  # seconds: --interval (time.sleep refuses some 1e10 s with a traceback)


@handles_errors
def watch(
    session: str | None = common.session_argument(),
    json_out: common.JsonOpt = False,
    follow_new: bool = typer.Option(False, "--follow-new", help="Without SESSION: switch to a newer session when pi "
                                    "starts one in the project."),
    until_idle: float | None = common.seconds_option(None, "--until-idle",
                                                     help="End (exit 0) after SECONDS without an append."),
    count: int | None = common.count_option(None, "--count", minimum=1, help="End (exit 0) after N appended entries."),
    exit_on_delete: bool = typer.Option(False, "--exit-on-delete", help="End (exit 1) when the file is deleted "
                                        "instead of waiting for it to come back."),
    interval: float = common.seconds_option(0.1, "--interval", minimum=0.01, maximum=MAX_INTERVAL,
                                            help="Seconds between two looks at the file (at most 60)."),
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Follow a session as pi appends to it: a summary, then one row per appended entry saying what
    it means (new branch, leaf moved, compaction, model change, two writers, damage, ...).

    --json prints NDJSON, one event per line.  Ctrl-C ends it (exit 130).

    Example: pisess watch --follow-new --json | jq -c 'select(.event=="entry")'
    """
    from pisess.cli.views.watch import HumanView
    from pisess.core.errors import PisessError
    from pisess.core.model.follow import Watch

    output.check_color(color)
    if follow_new and session:
        raise PisessError("usage", "--follow-new follows the project's newest session: give no SESSION")
    w = common.where(sessions_dir, cwd)
    path = common.resolve_session(session, w, sessions_dir, pi_version)  # the root checked: exit 2, as every command
    view = JsonView() if json_out else HumanView(color, exit_on_delete=exit_on_delete)
    started = time.monotonic()
    entries = 0
    watcher = Watch(path, cost_of=_cost_of)
    with view:
        view.start(watcher, watcher.start(time.time()), [] if json_out else _active_tail(watcher, RECENT))
        last_new_look = time.monotonic()
        idle_from = time.monotonic()
        while True:
            now = time.monotonic()
            events = watcher.poll(time.time())
            if events:
                view.events(watcher, events)
            for e in events:
                if e.kind == "entry":
                    entries += 1
                    idle_from = now
                if e.kind == "deleted" and exit_on_delete:
                    raise typer.Exit(common.EXIT_FINDINGS)
            if count is not None and entries >= count:
                return
            if until_idle is not None and now - idle_from >= until_idle:
                return
            if follow_new and now - last_new_look >= NEW_SESSION_EVERY:
                last_new_look = now
                newer = _newest(w, pi_version)
                if newer and os.path.abspath(newer) != os.path.abspath(watcher.path):
                    watcher = Watch(newer, cost_of=_cost_of)
                    view.switched(watcher)
                    view.start(watcher, watcher.start(time.time()), [] if json_out else _active_tail(watcher, RECENT))
                    idle_from = now
            view.status(watcher, now - started)
            time.sleep(interval)


def _newest(w, pi_version: str) -> str | None:
    """The session a command given no SESSION opens now (the one ``common.resolve_session`` picks)."""
    from pisess.core.errors import PisessError
    from pisess.core.listing.repo import resolve_session

    try:
        return resolve_session(None, w.root, w.cwd, pi_version=pi_version)
    except (PisessError, OSError):  # a look that fails now may work at the next one
        return None


def _cost_of(e: dict) -> float | None:
    """What an entry adds to the session's cost, as pi 1.6 counts it (spec C.12): the one rule
    ``stats`` uses."""
    from pisess.core.analyses.stats import fact_of

    fact = fact_of(e) if isinstance(e, dict) else None
    return fact.usage[4] if fact is not None and fact.usage is not None else None


class JsonView:
    """NDJSON on stdout: ``{"version": 2, "event": ...}`` per line, flushed at once."""

    VERSION = 2  # the events' version (pisess help json): 2 since their names are one per idea

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def _emit(self, doc: dict) -> None:
        common.emit_json_line(doc, version=self.VERSION)

    def start(self, watcher, damage: list, recent: list) -> None:
        self._emit(watcher.start_json())
        for e in damage:
            self._emit(e.to_json())

    def events(self, watcher, events: list) -> None:
        for e in events:
            self._emit(e.to_json())

    def switched(self, watcher) -> None:
        self._emit(watcher.switched_json())

    def status(self, watcher, elapsed: float) -> None:
        return None


def _active_tail(watcher, n: int) -> list[tuple[int, dict]]:
    """The last ``n`` entries of the active path (the leaf and its ancestors), oldest first."""
    from pisess.core.reading.jsonl import parse_json

    s = watcher.state
    recent = {id_of(e): (line, e) for line, e in s.recent}
    out: list[tuple[int, dict]] = []
    cur = s.leaf
    with open(watcher.path, "rb") as fh:
        while isinstance(cur, str) and len(out) < n:
            if cur in recent:
                out.append(recent[cur])
            else:
                node = s.nodes.get(cur)
                if node is None:
                    break
                fh.seek(node.offset)
                v = parse_json(fh.readline().rstrip(b"\n"))
                if not isinstance(v, dict):
                    break
                out.append((node.line, v))
            node = s.nodes.get(cur)
            cur = node.parent if node is not None else None
    out.reverse()
    return out


def id_of(e: Any) -> Any:
    return e.get("id") if isinstance(e, dict) else None


