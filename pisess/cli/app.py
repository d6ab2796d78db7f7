"""The Typer app: one thin module per command, assembled here.

A run imports and builds only the command it runs (``app_for``): the command modules cost about
30 ms to import all together, a sixth of a warm read of a 200 MB session, and click builds every
registered command's parameters before it runs one.  ``app``, the whole app (help, completion,
tests), is built on first use.

Typer itself is imported only when the app is built: the console script (``main``) first offers
``pisess search`` to its lean path (``pisess.cli.lean_search``), which answers a warm search from
the index without Typer, Click or Rich (their imports and the command's building cost more than
the search) and hands every other run back to the app.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterable

from pisess import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # checked against the typer that vendors click (0.26 on, as installed)
    import typer
    from typer._click.exceptions import NoSuchOption

#: Every command, in the order help lists them: its module in
#: pisess.cli.commands, whose function of the command's name it runs.
COMMANDS = {
    "ls": "ls_cmd", "tree": "tree_cmd", "path": "path_cmd", "context": "context_cmd",
    "validate": "validate_cmd", "fork": "fork_cmd", "export": "export_cmd", "secrets": "secrets_cmd",
    "search": "search_cmd", "diff": "diff_cmd", "browse": "browse_cmd", "stats": "stats_cmd", "du": "du_cmd",
    "watch": "watch_cmd",
    "demo": "demo_cmd", "help": "help_cmd",
}
READS_NOTHING = ("help",)  # commands that read no session: no --no-cache
GROUPS = ("cache",)  # pisess cache [clear]

HELP = """Inspect the session files of the pi coding agent, read-only.

pi appends every event of a session as one JSON line; id + parentId make a tree and the last line
decides the current leaf.  pisess shows those trees and checks them, reading each file the way pi
itself does (--reader auto|harness|cli).  No command ever modifies a session file.

Exit codes: 0 ok, 1 findings or not found, 2 usage error or unreadable input.

Try: pisess demo.  The reference: pisess help (topics: pisess help TOPIC).
"""

SETTINGS: dict = {
    "name": "pisess",
    "help": HELP,
    "no_args_is_help": True,
    "add_completion": True,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
    "context_settings": {"help_option_names": ["-h", "--help"]},
}


def _version(value: bool) -> None:
    if value:
        import typer

        from pisess.cli.output import show

        show([f"pisess {__version__}"])
        raise typer.Exit()


@functools.cache
def _root():
    """The root's callback: its one option, ``--version``."""
    import typer

    def root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")) -> None:
        pass

    return root


def build(names: Iterable[str] = (*COMMANDS, *GROUPS)) -> typer.Typer:
    """The root with the commands ``names`` (importing only their modules)."""
    import typer

    from pisess.cli.commands import cache_cmd

    names = list(names)
    one = typer.Typer(**SETTINGS)
    one.callback()(_root())  # (a root callback keeps even one command a group: `pisess NAME ...`)
    for name in names:
        if name in COMMANDS:
            one.command(name)(getattr(importlib.import_module(f"pisess.cli.commands.{COMMANDS[name]}"), name))
    cache_cmd.add_no_cache(one, skip=READS_NOTHING)
    if "cache" in names:
        one.add_typer(cache_cmd.app, name="cache")
    return one


@functools.cache
def whole_app() -> typer.Typer:
    """Every command: built once, on first use (``pisess.cli.app.app`` is this too)."""
    return build()


def __getattr__(name: str) -> typer.Typer:
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return whole_app()


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs ``args``: the root with only the command they name, when they name one
    (a command's help, options and errors do not depend on its siblings).  Anything else (no
    command, a name that is none, shell completion, which lists them all) gets the whole app."""
    name = next((a for a in args if not a.startswith("-")), None)
    if name is None or "_PISESS_COMPLETE" in os.environ or (name not in COMMANDS and name not in GROUPS):
        return whole_app()
    return build([name])


def run(argv: list[str] | None = None) -> int:
    """The app with one error contract: an argument the parser refuses is a usage error (exit
    2) that also prints the JSON error document when ``--json`` was asked for, as every other
    error does (click alone would print only its text)."""
    import sys

    import typer

    from pisess.cli import common

    try:  # typer >= 0.26 vendors click (already imported by typer itself: free)
        from typer._click.exceptions import ClickException, NoSuchOption
    except ImportError:  # pragma: no cover - older typer with click installed beside it
        from click.exceptions import ClickException, NoSuchOption  # type: ignore[no-redef,import-not-found]

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = app_for(args)(args=args, prog_name="pisess", standalone_mode=False)
    except ClickException as e:
        if isinstance(e, NoSuchOption):
            _hint_at_a_path(e, args)
        if "--json" in args[: args.index("--") if "--" in args else len(args)]:
            from pisess.core.errors import PisessError

            common.emit_json({"error": PisessError("usage", e.format_message()).to_dict()}, version=common.ERROR_VERSION)
        e.show()
        return e.exit_code
    except typer.Abort:
        sys.stderr.write("Aborted!\n")
        return 130
    return rv if isinstance(rv, int) else 0


def _hint_at_a_path(e: NoSuchOption, args: list[str]) -> None:
    """An "option" that looks like a path is one: pi names its project folders ``--home-user-proj--``,
    so ``pisess tree --home-user-proj--/x.jsonl`` is a user's path that click took for an option.
    The refusal says how to pass it (click's own suggestions of options are beside the point)."""
    name = e.option_name
    token = next((a for a in args if a == name or a.startswith(name + "=")), name)
    if not token.isprintable():
        return
    if "/" in token or os.sep in token or token.endswith(".jsonl") or os.path.lexists(token):
        e.message = f"{e.message}; if it is a path, write ./{token} or put -- before it"
        e.possibilities = None


def console() -> None:
    """The console script (and ``python -m pisess``): ``main``, a run that returned ended without
    the interpreter's teardown."""
    main(end_at_once=True)


def main(lean: bool = True, end_at_once: bool = False) -> None:
    """Run ``pisess`` with ``sys.argv``.  ``lean``: offer ``pisess search`` to its lean path first
    (the tests run the Typer app alone with ``main(lean=False)``, to compare the two).
    ``end_at_once``: end a run that returned (the lean path's or the app's) with ``os._exit`` once
    its output is flushed (``console``; raised as ``SystemExit`` otherwise, for callers in the
    same process)."""
    import gc
    import signal
    import sys

    # `pisess tree | head`: end quietly on a closed pipe, as cat and grep do (click would exit 1)
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # One short run over JSON trees makes no reference cycles worth collecting, and the cycle
    # collector re-walks every entry a big read keeps: context --reader cli, validate and tree on
    # a million entries took 20-26% longer with it, and peak RSS of 10,000-file runs of search,
    # validate, stats, du and ls --long was the same without it.  The library leaves the
    # collector alone; only this process turns it off.
    gc.disable()
    from pisess.cli import output

    output.ENDS_AT_ONCE[0] = end_at_once  # (output.outlive)
    # The library reads in one process; this one shares big reads among forked children as the
    # CPUs allow (PISESS_JOBS=1 turns that off).
    from pisess.core import parallel
    from pisess.core.reading import cache

    parallel.configure(parallel.from_environ(os.environ))
    # $XDG_CACHE_HOME/pisess, unless PISESS_CACHE=off (cache_cmd.configure, without importing Typer)
    cache.configure(cache.from_environ(os.environ, os.path.expanduser("~")))
    args = sys.argv[1:]
    if lean and args[:1] == ["search"]:
        from pisess.cli import lean_search

        code = lean_search.run(args)
        if code is not None:
            if end_at_once:
                _end_at_once(code)
            raise SystemExit(code)
    code = run(args)
    if end_at_once:
        _end_at_once(code)
    raise SystemExit(code)


def _end_at_once(code: int) -> None:
    """End the process now, with ``code``, as the interpreter would end it after flushing stdout
    and stderr, but without its teardown: freeing every module and object a warm search loaded
    was 7 of its 65 ms, the 200 MB session's page export's 60-80 ms, and nothing of it reaches a
    user.  A command has written and closed what it writes by then (files through ``with``, the
    caches and the index committed and closed); pisess registers no exit handler and leaves no
    thread running (browse's app has stopped its own); a background indexer is a process of its
    own.  Where a flush fails, this returns, and the interpreter ends the run as it always does
    (the error on stderr, exit code 120)."""
    import sys

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the interpreter says it, as for any run
        return
    os._exit(code)
