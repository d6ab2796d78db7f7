"""What search, stats and du share on the command line: the set of sessions they read, and a
progress bar (drawn by ``views.shared``, imported only when the bar shows)."""

from __future__ import annotations

import os
import sys
import time
from typing import Annotated

import typer

from pisess.cli import common

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

AllOpt = Annotated[bool, typer.Option("--all", "-a", help="Every project under the sessions root.")]


def sessions_argument():
    return typer.Argument(None, metavar="[SESSION]...", show_default=False,
                          help="Files, directories, session ids or unique id prefixes; default: every session of the "
                          "project (--cwd), or of every project with --all.",
                          autocompletion=common.complete_session)


def resolve(sessions: list[str] | None, all_projects: bool, sessions_dir: str | None, cwd: str | None,
            pi_version: str):
    """The files to read (ids looked up with pi ``pi_version``'s rules, as every command does);
    raises ``not_found`` when a name matches nothing or there is nothing to read.  What cannot be
    read is noted (``common.note_unreadable``): the rest is read."""
    from pisess.core.errors import PisessError
    from pisess.core.listing.paths import encode_cwd
    from pisess.core.listing.sessionset import collect

    w = common.where(sessions_dir, cwd)
    common.check_root(w, sessions_dir, sessions)
    scope = collect(sessions, w.root, w.cwd, all_projects, pi_version=pi_version)
    common.note_unreadable(scope.unreadable)
    if scope.missing:
        for e in scope.missing[1:]:
            common.say(f"pisess: {e.located()}")
        raise scope.missing[0]
    check_empty(scope.empty, bool(scope.files))
    if not scope.files:
        here = w.root if all_projects else os.path.join(w.root, encode_cwd(w.cwd))
        what = "no sessions" if all_projects else f"no sessions for {w.cwd}"
        if scope.unreadable:
            raise PisessError("not_found", f"{what} that can be read in {here}", path=here, unreadable=True)
        tries = "--sessions-dir DIR" if all_projects else "--all, --cwd DIR or --sessions-dir DIR"
        raise PisessError("not_found", f"{what} in {here} (try {tries})")
    return scope


def check_empty(empty: list[str], found: bool) -> None:
    """Directories named that hold no ``*.jsonl``: each named on stderr, and when nothing at all
    is left to read, a ``not_found`` error naming the first (exit 1 in every command: a mistyped
    path must not pass CI as "0 files checked")."""
    from pisess.core.errors import PisessError

    if not empty:
        return
    for d in empty[0 if found else 1:]:
        common.say(f"pisess: {d}: no *.jsonl files in it")
    if not found:
        raise PisessError("not_found", f"{empty[0]} holds no *.jsonl files (a directory is searched "
                          "for session files, recursively)", path=empty[0])


def total_bytes(files: list[str]) -> int:
    total = 0
    for p in files:
        try:
            total += os.stat(p).st_size
        except OSError:
            pass
    return total


def report_skipped(skipped: list) -> None:
    """Files that are not sessions either reader opens: named on stderr (those that cannot be
    read are noted as unreadable instead, and named at the end)."""
    unreadable = [e for e in skipped if e.unreadable]
    common.note_unreadable(unreadable)
    for e in skipped:
        if not e.unreadable:
            common.say(f"pisess: skipped {e.located()}")


class Progress:
    """Bytes read so far of ``files``, on stderr: only on a terminal and only once a run takes
    more than ``delay`` seconds.  ``tick(n)`` is cheap when nothing is shown."""

    def __init__(self, files: list, label: str, *, color: str = "auto", delay: float = 0.5,
                 enabled: bool | None = None) -> None:
        self.files = files  # their sizes are added up only if the bar shows
        self.total = 1
        self.label = label
        self.color = color
        self.delay = delay
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done = 0
        self.t0 = time.monotonic()
        self.last = 0.0
        self._bar: tuple[Bar, TaskID] | None = None  # the bar and its one task, once shown
        self.status = ""

    def tick(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1:
            return
        self.last = now
        if self._bar is None:
            if now - self.t0 < self.delay:
                return
            from pisess.cli.views.shared import progress_bar

            self.total = max(total_bytes(self.files), self.done, 1)
            bar = progress_bar(self.color)
            self._bar = (bar, bar.add_task(self._desc(), total=self.total))
            bar.start()
        bar, task = self._bar
        bar.update(task, completed=min(self.done, self.total), description=self._desc())

    def note(self, status: str) -> None:
        self.status = status

    def _desc(self) -> str:
        return self.label + (f" \u00b7 {self.status}" if self.status else "")

    def close(self) -> None:
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_report(compute, view: str, *, sessions, all_projects: bool, sessions_dir, cwd, json_out: bool, color: str,
               pi_version: str, json_version: int) -> None:
    """The shape stats and du share: resolve the set, read it under a progress bar, print the
    report (JSON or view), name notes and skipped files on stderr, and exit 2 when a file could not
    be read or 1 when no session was read.  ``compute(files, tick, on_skip)`` returns the report;
    ``view`` names the view that draws it, ``stats_view`` in ``pisess.cli.views.stats`` (Rich is
    imported only for it); ``json_version``: the ``--json`` document's version."""
    from pisess.core.errors import PisessError

    scope = resolve(sessions, all_projects, sessions_dir, cwd, pi_version)

    def skip(e: PisessError) -> None:
        if e.unreadable:
            common.note_unreadable([e])

    with Progress(scope.files, "reading", color=color) as bar:
        report = compute(scope.files, bar.tick, skip)
    if json_out:
        doc = report.to_json()
        # what could not be read is listed once, in "unreadable"; "skipped" keeps the files that are not sessions
        doc["skipped"] = [e.to_dict() for e in report.skipped if not e.unreadable]
        common.emit_json({"scope": scope.label, "piVersion": pi_version, **doc, "unreadable": common.unreadable_json()},
                         version=json_version)
    else:
        from pisess.cli.output import Printer

        printer = Printer(color)  # the view is laid out for the printer's width
        import importlib

        draw = getattr(importlib.import_module(f"pisess.cli.views.{view.removesuffix('_view')}"), view)
        printer.show(draw(report, label=scope.label, width=printer.width))
    for s in report.sessions:
        if s.note:
            common.say(f"{s.path}: {s.note}")
        if not json_out:
            common.report_dropped(s.path, s.dropped_lines)
    report_skipped(report.skipped)
    if not report.sessions:
        raise typer.Exit(common.EXIT_FINDINGS)
