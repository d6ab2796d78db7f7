"""The Typer app: one thin module per command, assembled here."""

from __future__ import annotations

import os

import typer

from pisess import __version__
from pisess.cli.commands import (
    cache_cmd,
    context_cmd,
    demo_cmd,
    du_cmd,
    export_cmd,
    fork_cmd,
    ls_cmd,
    path_cmd,
    search_cmd,
    secrets_cmd,
    stats_cmd,
    tree_cmd,
    validate_cmd,
    watch_cmd,
)

HELP = """Inspect the session files of the pi coding agent, read-only.

pi appends every event of a session as one JSON line; id + parentId make a tree and the last line
decides the current leaf.  pisess shows those trees and checks them, reading each file the way pi
itself does (--reader auto|harness|cli).  No command ever modifies a session file.

Exit codes: 0 ok, 1 findings or not found, 2 usage error or unreadable input.

Try: pisess demo
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

app = typer.Typer(**SETTINGS)


def _version(value: bool) -> None:
    if value:
        from pisess.cli.output import show

        show([f"pisess {__version__}"])
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    pass


app.command("ls")(ls_cmd.ls)
app.command("tree")(tree_cmd.tree)
app.command("path")(path_cmd.path)
app.command("context")(context_cmd.context)
app.command("validate")(validate_cmd.validate)
app.command("fork")(fork_cmd.fork)
app.command("export")(export_cmd.export)
app.command("secrets")(secrets_cmd.secrets)
app.command("search")(search_cmd.search)
app.command("stats")(stats_cmd.stats)
app.command("du")(du_cmd.du)
app.command("watch")(watch_cmd.watch)
app.command("demo")(demo_cmd.demo)
cache_cmd.add_no_cache(app)  # every command above reads sessions
app.add_typer(cache_cmd.app, name="cache")


def _click_exception() -> type:
    try:  # typer >= 0.26 vendors click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover - older typer with click installed beside it
        from click.exceptions import ClickException
    return ClickException


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs ``args``: the root with only the command they name, when they name one.
    Click builds every command's parameters before it runs one (6 ms of a 100 ms warm read); a
    command's help, options and errors do not depend on its siblings.  Anything else (no command,
    a name that is none, shell completion, which lists them all) gets the whole app."""
    name = next((a for a in args if not a.startswith("-")), None)
    if name is None or "_PISESS_COMPLETE" in os.environ:
        return app
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = typer.Typer(**SETTINGS)
    one.registered_callback = app.registered_callback  # (a root callback keeps it a group of one)
    one.registered_commands, one.registered_groups = commands, groups
    return one


def run(argv: list[str] | None = None) -> int:
    """The app with one error contract: an argument the parser refuses is a usage error (exit
    2) that also prints the JSON error document when ``--json`` was asked for, as every other
    error does (click alone would print only its text)."""
    import sys

    from pisess.cli import common

    args = list(sys.argv[1:] if argv is None else argv)
    ClickException = _click_exception()
    try:
        rv = app_for(args)(args=args, prog_name="pisess", standalone_mode=False)
    except ClickException as e:
        if "--json" in args[: args.index("--") if "--" in args else len(args)]:
            from pisess.core.errors import PisessError

            common.emit_json({"error": PisessError("usage", e.format_message()).to_dict()})
        e.show()
        return e.exit_code
    except typer.Abort:
        sys.stderr.write("Aborted!\n")
        return 130
    return rv if isinstance(rv, int) else 0


def main() -> None:
    import gc
    import signal

    # `pisess tree | head`: end quietly on a closed pipe, as cat and grep do (click would exit 1)
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # One short run over JSON trees makes no reference cycles worth collecting, and the cycle
    # collector re-walks every entry a big read keeps: context --reader cli, validate and tree on
    # a million entries took 20-26% longer with it, and peak RSS of 10,000-file runs of search,
    # validate, stats, du and ls --long was the same without it.  The library leaves the
    # collector alone; only this process turns it off.
    gc.disable()
    # The library reads in one process; this one shares big reads among forked children as the
    # CPUs allow (PISESS_JOBS=1 turns that off).
    from pisess.core import parallel

    parallel.configure(parallel.from_environ(os.environ))
    cache_cmd.configure(os.environ)  # $XDG_CACHE_HOME/pisess, unless PISESS_CACHE=off
    raise SystemExit(run())
