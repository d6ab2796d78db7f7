"""``pisess cache``: where the index cache is, what it holds, clearing it; and ``--no-cache``.

The cache itself is ``pisess.core.reading.cache``; this module decides where it lives (``configure``, from
the environment, called once by ``main``) and gives every command that reads sessions the
``--no-cache`` option (``add_no_cache``).  ``pisess cache index --background LIST`` is the search index's background indexer
(``pisess.cli.search_indexer``).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import typer

from pisess.cli import common, output, sets

NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither use nor write the index cache: read every "
                                          "file whole (also PISESS_CACHE=off).")]

app = typer.Typer(
    name="cache",
    help="Show the index cache (where, size, entries); 'pisess cache clear' empties it, 'pisess cache index' "
    "builds the search index ahead of time.\n\n"
    "pisess keeps the index of each session it reads under $XDG_CACHE_HOME/pisess (else ~/.cache/pisess), "
    "so the next read parses only what was appended, and a full-text index of the sessions' text "
    "(search.sqlite) that search answers from: it holds the sessions' text, so it is as private as the "
    "sessions.  PISESS_CACHE=off or --no-cache turns both off.\n\n"
    "Example: pisess cache --json",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
)


def configure(environ: Mapping[str, str]) -> None:
    """The CLI's cache settings, from the environment (``main`` calls this once)."""
    from pisess.core.reading import cache

    cache.configure(cache.from_environ(environ, os.path.expanduser("~")))


def _directory() -> tuple[str, bool]:
    """The cache directory, and whether reads use it (``PISESS_CACHE=off`` shows where it would be)."""
    from pisess.core.reading import cache

    on = cache.current().directory
    return (on, True) if on is not None else (cache.default_directory(os.environ, os.path.expanduser("~")), False)


@app.callback()
@common.handles_errors
def show(ctx: typer.Context, json_out: common.JsonOpt = False) -> None:
    """Where the cache is, how big, how many entries."""
    if ctx.invoked_subcommand is not None:
        return
    from pisess.core.reading import cache_status

    directory, enabled = _directory()
    st = cache_status.status(directory, enabled)
    if json_out:
        common.emit_json(st.to_json(), version=2)
    else:
        state = "on" if enabled else "off (PISESS_CACHE=off)"
        output.show([f"directory  {directory}", f"enabled    {state}", f"entries    {st.usage.entries}",
                     f"search     {st.index_bytes:,} bytes (the full-text index, search.sqlite)",
                     f"size       {st.usage.size:,} bytes (cap {st.cap:,})",
                     *([f"problem    the directory {st.problem}"] if st.problem else [])])
    if st.problem:
        common.say(f"pisess: {directory} {st.problem}: nothing can be cached there (remove it, set XDG_CACHE_HOME, "
                   "or PISESS_CACHE=off)")


@app.command("clear")
@common.handles_errors
def clear(json_out: common.JsonOpt = False) -> None:
    """Remove every entry of the cache.  Example: pisess cache clear"""
    from pisess.core.reading import cache

    directory, _ = _directory()
    removed, kept = cache.clear(directory)
    if json_out:
        common.emit_json(cache.cleared_json(directory, removed, kept), version=2)
    else:
        output.show([f"removed {removed} entries from {directory}"])
    for path, why in kept:
        common.say(f"pisess: {path}: could not be removed ({why})")
    if kept:
        held = any(os.path.basename(p).startswith(cache.SEARCH_INDEX) for p, _ in kept)
        common.say(f"pisess: {len(kept)} file{'s' if len(kept) != 1 else ''} of the cache in {directory} could not be "
                   "removed" + (" (among them the search index, which holds the sessions' text)" if held else ""))
        raise typer.Exit(common.EXIT_USAGE)


@app.command("index")
@common.handles_errors
def index(
    sessions: list[str] | None = sets.sessions_argument(),
    all_projects: sets.AllOpt = False,
    pi_version: common.PiVersionOpt = common.CURRENT_PI,
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
    background: str | None = typer.Option(None, "--background", hidden=True,
                                          help="(a search's background indexer) index the files listed in this file"),
) -> None:
    """Build (or bring up to date) the search index of the project's sessions now, rather than on
    the first search that needs it; indexed files that are gone lose their rows.  A progress bar
    on a terminal.  Example: pisess cache index --all"""
    from pisess.core.analyses.search.database import take_notes
    from pisess.core.analyses.search.update import build
    from pisess.core.errors import PisessError
    from pisess.core.reading import cache

    if background is not None:
        from pisess.cli import search_indexer

        search_indexer.run(background)
        return
    output.check_color(color)
    directory, enabled = _directory()
    if not enabled:
        raise PisessError("usage", "the cache is off (PISESS_CACHE=off): there is no search index to build")
    scope = sets.resolve(sessions, all_projects, sessions_dir, cwd, pi_version)
    with sets.Progress(scope.files, "indexing", color=color) as bar:
        got = build(scope.files, tick=bar.tick)
    for note in take_notes():
        common.say(note)
    if got is None:
        raise PisessError("storage", f"the search index in {directory} cannot be written", path=directory)
    indexed, failed = got
    if json_out:
        common.emit_json(cache.indexed_json(directory, indexed, failed), version=2)
        return
    size = cache.search_index_size(directory)
    output.show([f"indexed {indexed:,} files ({scope.label}); search index {size:,} bytes in {directory}"]
                + ([f"{failed:,} files could not be read: search scans them (and says why)"] if failed else []))


def add_no_cache(typer_app: typer.Typer, skip: tuple[str, ...] = ()) -> None:
    """Give every registered command but ``skip`` the ``--no-cache`` option."""
    for info in typer_app.registered_commands:
        if info.name not in skip and info.callback is not None:
            info.callback = without_cache_option(info.callback)


def without_cache_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with a ``--no-cache`` option: with it, the command runs with the cache off (and
    the settings are put back after it, for a caller that runs several commands in one process)."""
    sig = inspect.signature(fn, eval_str=True)
    params = list(sig.parameters.values())
    params.append(inspect.Parameter("no_cache", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=NoCacheOpt))

    @functools.wraps(fn)
    def run(*args: Any, no_cache: bool = False, **kwargs: Any) -> Any:
        from pisess.core.reading import cache

        if not no_cache:
            try:
                return fn(*args, **kwargs)
            finally:
                cache.flush()  # the per-file summaries the command made (one write per directory)
        previous = cache.configure(cache.Settings(directory=None, cap=cache.current().cap))
        try:
            return fn(*args, **kwargs)
        finally:
            cache.configure(previous)

    run.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    if sig.return_annotation is not inspect.Signature.empty:
        run.__annotations__["return"] = sig.return_annotation
    return run
