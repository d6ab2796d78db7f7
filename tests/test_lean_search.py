"""search's lean path (``pisess.cli.lean_search``): the console script answers a search from the
index without Typer, Click or Rich, and prints exactly what the Typer app prints.

Equality is the contract: many argument shapes run through both (``main()`` and ``main(lean=False)``),
with the cache cold and warm, in several environments, stdout, stderr and the exit code compared
byte for byte; the arguments the lean path takes are read as Click reads them (against Click
itself, over random argument lists); its plain rows are the printer's (against Rich's rendering
of the view, over random hits).

The matrix runs ``main`` in this process (``run_main``: the environment, the directory and the
arguments of a child, stdout and stderr bytes), a thousand runs in seconds; real processes (``run``)
check what only a process shows: that a warm search imports no Typer, Click or Rich, that the
console script's early end flushes every byte, and that ``run_main`` gets what a child gets.  The
default run keeps one real process of each kind; ``-m ''`` runs them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from answers_store import CWD, CWD_API, build_store
from conftest import examples
from pisess.cli import lean_search
from pisess.cli.views import search as view
from pisess.core import versions
from pisess.core.analyses.search import FileResult, Hit, Match
from pisess.core.errors import PisessError

#: Runs the console script's ``main`` in a fresh process, then writes which of typer, click and
#: rich were imported to the file named by ``_LEAN_PROBE`` (atexit: after SystemExit too), and
#: every module imported to the one named by ``_LEAN_MODULES``, if set.
SLOW = pytest.mark.slow  # (a child process costs about 0.1 s of CPU; the default run keeps one of each kind)

RUNNER = """
import atexit, json, os, sys
def probe():
    mods = sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'rich'})
    with open(os.environ['_LEAN_PROBE'], 'w') as fh:
        json.dump(mods, fh)
    if '_LEAN_MODULES' in os.environ:
        with open(os.environ['_LEAN_MODULES'], 'w') as fh:
            json.dump(sorted(sys.modules), fh)
atexit.register(probe)
from pisess.cli.app import main
sys.argv = ['pisess', *sys.argv[1:]]
main(lean=os.environ['_LEAN'] == '1')
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("lean")
    build_store(base / "sessions")
    return base


#: What a run takes out of the environment it is given: each a setting the lean path or the app reads.
SETTINGS = ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "PISESS_PI_VERSION", "PI_CODING_AGENT_DIR",
            "PISESS_INDEX_SYNC", "LINES")


def run(base: Path, args: list[str], *, lean: bool, env: dict | None = None, cache: str = "xdg") -> tuple:
    """``(exit code, stdout, stderr, imported)`` of ``pisess ARGS`` in ``base``, ``imported`` the
    names of typer, click and rich the run imported."""
    probe = base / f"probe-{os.getpid()}.json"
    e = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    e.update({"XDG_CACHE_HOME": str(base / cache), "PISESS_CACHE": "on", "_LEAN_PROBE": str(probe),
              "_LEAN": "1" if lean else "0", "PWD": str(base), **(env or {})})
    r = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=base, env=e, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    return r.returncode, r.stdout, r.stderr, json.loads(probe.read_text())


S = ["--sessions-dir", "sessions"]
#: Shapes the lean path answers once the index is warm (no typer, click or rich imported).
LEAN = [
    ["search", "date", *S, "--cwd", CWD],
    ["search", "UTC", "--all", *S],
    ["search", "utc", "-i", "-a", *S, "--in", "user,summary"],
    ["search", "date", *S, "--cwd", CWD, "--json"],
    ["search", "date", *S, "--cwd", CWD, "--active-only"],
    ["search", "date", "--sessions-dir=sessions", "--cwd=" + CWD, "--in=user"],
    ["search", "screenshot", "--all", *S, "--reader", "CLI"],
    ["search", "screenshot", "--all", *S, "-r", "harness", "--pi-version", "0.82"],
    ["search", "-e", "dat.", *S, "--cwd", CWD],
    ["search", "the", "--all", *S, "--color", "never"],
    ["search", "zzzqqq", "--all", *S],
    ["search", "zzzqqq", "--all", *S, "--json"],
    ["search", "date", *S, "--cwd", CWD, "--cwd", CWD_API],
    ["search", "date", "--all", *S, "--", ],
    ["search", "date", "sessions/--home-you-projects-webapp--"],
    ["search", "date", "01955000", *S, "--cwd", CWD],
]
#: Shapes the Typer app answers (errors, help, scans, ...): the lean path must hand them over.
APP = [
    ["search"],
    ["search", "--help"],
    ["search", "date", *S, "--cwd", CWD, "-h"],
    ["search", "date", *S, "--cwd", CWD, "--bogus"],
    ["search", "date", *S, "--cwd"],
    ["search", "date", *S, "--cwd", CWD, "--json=1"],
    ["search", "date", "-ai", *S],
    ["search", "", "--all", *S],
    ["search", "date", *S, "--cwd", CWD, "--in", "bogus"],
    ["search", "date", *S, "--cwd", CWD, "--reader", "nope"],
    ["search", "date", *S, "--cwd", CWD, "--pi-version", "9.9"],
    ["search", "date", *S, "--cwd", CWD, "--color", "bogus"],
    ["search", "-e", "(", "--all", *S],
    ["search", "a", "--all", *S],  # (too short for the index: scanned)
    ["search", "date", *S, "--cwd", CWD, "--no-cache"],
    ["search", "date", *S, "--cwd", "/nowhere"],
    ["search", "date", "--sessions-dir", "/nonexistent", "--all"],
    ["search", "date", "/nonexistent/x.jsonl"],
    ["search", "date", "0195", *S, "--cwd", CWD],  # (an ambiguous prefix)
    ["search", "date", "--all", "x", *S],
    ["search", "--", "-date", *S],
    ["--version"],
]
#: The default run takes a plain, a narrow and a coloured run (0.35 s of CPU each); the other
#: settings in the slow run.
ENVS = [{}, pytest.param({"COLUMNS": "40"}, marks=SLOW), {"COLUMNS": "12"}, pytest.param({"NO_COLOR": "1"}, marks=SLOW),
        {"FORCE_COLOR": "1"}, pytest.param({"PISESS_PI_VERSION": "0.82"}, marks=SLOW),
        pytest.param({"TTY_COMPATIBLE": "1"}, marks=SLOW)]


def test_the_lean_path_imports_no_typer_click_or_rich(root):
    """A warm search through the console script: hits printed, and not one of typer, click, rich
    (or any module of theirs) imported."""
    args = ["search", "date", *S, "--cwd", CWD]
    run_main(root, args, lean=True, cache="probe")  # (the index built: in this process, as a child builds it)
    code, out, err, imported = run(root, args, lean=True, cache="probe")
    assert code == 0 and "\u00bbdate\u00ab".encode() in out and b"see a hit in context" in err
    assert imported == []
    code, out2, err2, imported = run(root, args, lean=False, cache="probe")
    assert (code, out2, err2) == (0, out, err) and imported  # (the app imports them)


#: The console script itself (``console``: a run the lean path answered ends with ``os._exit``).
CONSOLE = "import sys\nfrom pisess.cli.app import console\nsys.argv = ['pisess', *sys.argv[1:]]\nconsole()\n"


@pytest.mark.parametrize("args", [LEAN[0], pytest.param(LEAN[6], marks=SLOW), pytest.param(LEAN[10], marks=SLOW),
                                  pytest.param(APP[7], marks=SLOW)], ids=["hits", "json", "none", "app"])
def test_the_console_script_ends_as_the_app_ends(root, args):
    """``console`` ends a run the lean path answered at once, without the interpreter's teardown:
    the same stdout, stderr and exit code as the app (every byte flushed); into a full disk, the
    same error and exit code."""
    cache = "console"
    run_main(root, args, lean=True, cache=cache)  # (the index built: in this process, as a child builds it)
    _, app_out, app_err, _ = want = run(root, args, lean=False, cache=cache)
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "PYTHONUNBUFFERED")}  # (buffered, as most run)
    env.update({"XDG_CACHE_HOME": str(root / cache), "PISESS_CACHE": "on", "PWD": str(root)})
    r = subprocess.run([sys.executable, "-c", CONSOLE, *args], cwd=root, env=env, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == want[:3]
    if os.path.exists("/dev/full"):
        full = []
        for code in (CONSOLE, RUNNER.replace("main(lean=os.environ['_LEAN'] == '1')", "main(lean=False)")):
            with open("/dev/full", "wb") as out:
                got = subprocess.run([sys.executable, "-c", code, *args], cwd=root, env={**env, "_LEAN_PROBE": os.devnull},
                                     stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
            full.append((got.returncode, got.stderr))
        assert full[0] == full[1] and full[0][0] != 0


#: What a warm search through the index has no use for, each a millisecond or more of a run that
#: answers in tens (issue 24): typing (modules import it for annotations only: ``TYPE_CHECKING``),
#: the listing (a project, every project or a path named needs only ``listing.paths``), ``pisess
#: cache``'s answer (``cache_status``) and zlib (the cache's entries, which this search never reads).
NOT_ON_THE_WARM_PATH = {"typing", "pisess.core.listing.repo", "pisess.core.reading.cache_status", "zlib"}


@pytest.mark.parametrize("names", [["--cwd", CWD], pytest.param(["--all"], marks=SLOW),
                                   pytest.param(["sessions/--home-you-projects-webapp--"], marks=SLOW),
                                   pytest.param(["FILE"], marks=SLOW)], ids=["project", "all", "directory", "file"])
def test_a_warm_search_imports_nothing_it_does_not_use(root, names):
    """Through the console script, once the index is warm: hits printed by the lean path, and none
    of ``NOT_ON_THE_WARM_PATH`` imported; the app, which imports them (typer does typing), prints
    the same."""
    if names == ["FILE"]:
        names = [str(next((root / "sessions" / "--home-you-projects-webapp--").glob("*.jsonl")).relative_to(root))]
    args = ["search", "date", *S, *names]
    cache = "warm-" + "-".join(n.strip("-/") for n in names[:1]).replace("/", "_")
    run_main(root, args, lean=True, cache=cache)  # (the index built: in this process, as a child builds it)
    probe = root / f"modules-{os.getpid()}.json"
    code, out, err, imported = run(root, args, lean=True, cache=cache, env={"_LEAN_MODULES": str(probe)})
    assert code == 0 and "\u00bbdate\u00ab".encode() in out and imported == []
    assert NOT_ON_THE_WARM_PATH.isdisjoint(json.loads(probe.read_text()))
    assert "pisess.core.analyses.search.query" in json.loads(probe.read_text())  # (the probe sees the run's modules)
    code, out2, err2, _ = run(root, args, lean=False, cache=cache, env={"_LEAN_MODULES": str(probe)})
    assert (code, out2, err2) == (0, out, err) and "typing" in json.loads(probe.read_text())


#: The apps ``run_main`` builds (by the names of their commands) and their click commands: each
#: built once, as in a long-lived process, not on each of the matrix's thousand runs (click makes a
#: new context for every run; conftest's ``_one_click_command_per_app`` does the same for CliRunner).
_BUILT: dict = {}
_COMMANDS: dict = {}


def _built(names: tuple, build):
    if names not in _BUILT:
        _BUILT[names] = build(names)
    return _BUILT[names]


def _command(one, get_command):
    if id(one) not in _COMMANDS:
        _COMMANDS[id(one)] = (one, get_command(one))  # (the app kept: its id stays its own)
    return _COMMANDS[id(one)][1]


def run_main(base: Path, args: list[str], *, lean: bool, env: dict | None = None, cache: str = "xdg") -> tuple:
    """``(exit code, stdout, stderr, answered by the lean path)`` of the console script's ``main``
    run in this process as ``run`` runs it in a child: ``sys.argv``, the environment and the
    directory set alike, stdout and stderr pipes of bytes (text over them as the interpreter
    makes it for a pipe).  What ``main`` sets for its process (the collector, SIGPIPE, the read
    and cache settings) is put back after.  A run the lean path hands over must have printed
    nothing."""
    import gc
    import io
    import signal

    import typer.main

    from pisess.cli import app as app_module
    from pisess.cli.app import main
    from pisess.core import parallel
    from pisess.core.reading import cache as cache_mod

    class Pipe(io.BytesIO):
        def close(self) -> None:  # (kept open when its text wrapper goes)
            pass

    out, err = Pipe(), Pipe()
    answered = []

    def offered(argv: list[str], run=lean_search.run) -> int | None:
        code = run(argv)
        answered.append(code is not None)
        if code is None:
            assert out.getvalue() == err.getvalue() == b"", argv  # (handed over before printing anything)
        return code

    streams, collecting = (sys.stdout, sys.stderr), gc.isenabled()
    sigpipe = signal.getsignal(signal.SIGPIPE) if hasattr(signal, "SIGPIPE") else None
    settings = parallel.current(), cache_mod.current()
    with pytest.MonkeyPatch.context() as m:
        for k in SETTINGS:
            m.delenv(k, raising=False)
        for k, v in {"XDG_CACHE_HOME": str(base / cache), "PISESS_CACHE": "on", "PWD": str(base), **(env or {})}.items():
            m.setenv(k, v)
        m.chdir(base)
        m.setattr(sys, "argv", ["pisess", *args])
        m.setattr(lean_search, "run", offered)
        m.setattr(app_module, "build", lambda names=(*app_module.COMMANDS, *app_module.GROUPS), build=app_module.build:
                  _built(tuple(names), build))
        m.setattr(typer.main, "get_command", lambda one, get=typer.main.get_command: _command(one, get))
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
        try:
            try:
                main(lean=lean)
                code = 0  # pragma: no cover - main always ends with SystemExit
            except SystemExit as end:
                code = end.code if isinstance(end.code, int) else 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            sys.stdout, sys.stderr = streams
            parallel.configure(settings[0])
            cache_mod.configure(settings[1])
            if sigpipe is not None:
                signal.signal(signal.SIGPIPE, sigpipe)
            if collecting:
                gc.enable()
    assert len(answered) == (1 if lean and args[:1] == ["search"] else 0), args  # (offered once, when lean)
    return code, out.getvalue(), err.getvalue(), answered == [True]


@pytest.mark.parametrize("env", ENVS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()) or "plain")
def test_the_lean_path_prints_what_the_app_prints(root, env, tmp_path):
    """Every shape, cold (a fresh cache: the index built by the search) then warm, through the
    console script's ``main`` with and without its lean path: the same bytes on stdout and stderr,
    the same exit code; the lean shapes answered by the lean path when warm, the others by the app."""
    cache = f"cache-{tmp_path.name}"
    for warm in (False, True):
        for args in LEAN + APP:
            lean = run_main(root, args, lean=True, env=env, cache=cache)
            app = run_main(root, args, lean=False, env=env, cache=cache)
            assert lean[:3] == app[:3], (args, warm, lean[1:3], app[1:3])
            if warm and args in LEAN:
                assert lean[3], args
            if args in APP:
                assert not lean[3], args


def test_the_in_process_run_sees_what_a_child_sees(root):
    """``run_main`` stands in for a process faithfully: for hits the lean path prints and an error
    the app prints, the same bytes and exit code as ``run`` gets from a child, the index warm."""
    for args in (LEAN[0], APP[-7]):
        cache = "same-" + str(abs(hash(tuple(args))))
        run_main(root, args, lean=True, cache=cache)  # (the index built)
        here = run_main(root, args, lean=True, cache=cache)
        assert here[:3] == run(root, args, lean=True, cache=cache)[:3], args
        assert here[3] == (args in LEAN)


@pytest.mark.parametrize("args", [pytest.param(a, marks=SLOW) for a in LEAN[:4] + APP[:3] + APP[-8:-6]], ids=" ".join)
def test_the_console_script_prints_what_the_app_prints(root, args):
    """The same through the console script's ``main``, each run a process of its own (the lean
    shapes answered without importing Typer, Click or Rich once the index is warm): the in-process
    matrix above, checked against real processes (slow: four children a shape)."""
    cache = "script-" + str(abs(hash(tuple(args))))
    for warm in (False, True):
        lean = run(root, args, lean=True, cache=cache)
        app = run(root, args, lean=False, cache=cache)
        assert lean[:3] == app[:3], (args, warm, lean[1:3], app[1:3])
        if warm and args in LEAN:
            assert lean[3] == [], args


@SLOW
def test_a_terminal_or_colour_draws_the_rich_view_without_typer(root):
    """``--color always``: the Rich view (colour), still without Typer or Click."""
    args = ["search", "date", *S, "--cwd", CWD, "--color", "always"]
    run_main(root, args, lean=True, cache="colour")  # (the index built: in this process, as a child builds it)
    code, out, err, imported = run(root, args, lean=True, cache="colour")
    assert code == 0 and b"\x1b[" in out and imported == ["rich"]
    assert run(root, args, lean=False, cache="colour")[:3] == (code, out, err)


# --- the arguments, as Click reads them ---------------------------------------------------------------


def click_params(args: list[str]) -> dict | None:
    """The search command's parameters as Click parses ``args`` (``None``: Click refuses them)."""
    import typer.main

    from pisess.cli.app import build

    sub = typer.main.get_command(build(["search"])).get_command(None, "search")  # type: ignore[attr-defined]
    try:
        return sub.make_context("search", list(args)).params
    except Exception:  # noqa: BLE001 - any refusal (a usage error, help's exit)
        return None


def same_as_click(args: list[str]) -> None:
    got = lean_search.parse(["search", *args])
    if got is None:
        return
    want = click_params(args)
    if want is None:  # (Click checks one value as it parses: the pi version; the lean path then)
        with pytest.raises(PisessError):
            lean_search.pi_version_of(got["pi_version"])
        return
    mine = {k: v for k, v in got.items() if k not in ("sessions", "pi_version")}
    assert mine == {k: v for k, v in want.items() if k not in ("sessions", "pi_version")}, args
    assert tuple(got["sessions"] or ()) == tuple(want["sessions"] or ()), args
    assert lean_search.pi_version_of(got["pi_version"]) == want["pi_version"], args


@pytest.mark.parametrize("args", [a[1:] for a in LEAN + APP if a[:1] == ["search"]]
                         + [["x", "--in", "--json"], ["x", "--cwd", "--"], ["x", "-"], ["-", "x"], ["x", "--all", "--all"],
                            ["x", "--reader=cli", "-r", "harness"], ["x", "--color="], ["--json", "x", "y", "z"]])
def test_arguments_are_read_as_click_reads_them(args):
    same_as_click(args)


WORDS = st.sampled_from(["date", "x", "-", "--", "", "-i", "-e", "-a", "-r", "-ai", "-h", "--all", "--regex",
                         "--ignore-case", "--active-only", "--json", "--no-cache", "--in", "--in=user", "--reader",
                         "--reader=cli", "--pi-version", "--pi-version=0.82", "--sessions-dir", "--cwd", "--cwd=/x",
                         "--color", "--color=never", "--json=", "--help", "--bogus", "-x", "user,tool", "cli", "0.82"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(WORDS, max_size=8))
def test_any_arguments_the_lean_path_takes_click_reads_the_same(args):
    same_as_click(args)


def test_pi_version_comes_from_the_option_then_the_environment(monkeypatch):
    monkeypatch.delenv("PISESS_PI_VERSION", raising=False)
    assert lean_search.pi_version_of(None) == versions.CURRENT
    monkeypatch.setenv("PISESS_PI_VERSION", "0.82")
    assert lean_search.pi_version_of(None) == versions.parse("0.82")
    assert lean_search.pi_version_of("1.6") == versions.parse("1.6")
    monkeypatch.setenv("PISESS_PI_VERSION", "")
    assert lean_search.pi_version_of(None) == versions.CURRENT


@pytest.mark.parametrize(("args", "env", "noted"), [
    (["-r", "harness", "--pi-version", "1.6"], {}, True),
    (["--reader=HARNESS"], {"PISESS_PI_VERSION": "1.6.0"}, True),
    (["-r", "harness", "--json"], {"PISESS_PI_VERSION": "1.6"}, True),
    (["-r", "harness"], {"PISESS_PI_VERSION": ""}, False),  # (the default: not asked for)
    (["-r", "harness", "--pi-version", "0.82"], {"PISESS_PI_VERSION": "1.6"}, False),  # (the SDK's own)
], ids=["option", "variable", "json", "empty-variable", "sdk-rules"])
def test_the_lean_path_notes_the_sdk_rules_as_the_app_does(root, args, env, noted, tmp_path):
    """``--reader harness`` with another pi's rules asked for (the option, else its variable): the
    app's one-line note on stderr, first, from the lean path too (which answers the run, warm);
    nothing said when those rules were not asked for or are the SDK's own."""
    args = ["search", "screenshot", "--all", *S, *args]
    cache = f"sdk-{tmp_path.name}"
    run_main(root, args, lean=True, env=env, cache=cache)  # (the index built)
    lean = run_main(root, args, lean=True, env=env, cache=cache)
    app = run_main(root, args, lean=False, env=env, cache=cache)
    assert lean[3] and lean[:3] == app[:3], (lean[1:3], app[1:3])
    note = b"pisess: note: --reader harness reads with pi 0.82.1's rules, not 1.6.0's (pi's SDK reader exists only there)\n"
    assert lean[2].startswith(note) == noted and lean[2].count(b"pisess: note:") == noted


def test_a_project_listed_from_the_index_prints_what_the_app_prints(tmp_path, monkeypatch):
    """A project's directory last changed well before (its listing kept in the index): the lean
    path takes the listing from the index, not the directory, and prints what the app prints;
    a session made in the directory since is found, by both."""
    import shutil
    import time

    from pisess.core.analyses.search import listings
    from pisess.core.listing.paths import encode_cwd

    build_store(tmp_path / "sessions")
    project = tmp_path / "sessions" / encode_cwd(CWD)
    listed: list = []
    monkeypatch.setattr(listings, "collect", lambda *a, real=listings.collect: listed.append(a) or real(*a))
    args = ["search", "date", *S, "--cwd", CWD]

    def both(n_listed: int) -> tuple:
        lean = run_main(tmp_path, args, lean=True, cache="xdg")
        assert len(listed) == n_listed
        app = run_main(tmp_path, args, lean=False, cache="xdg")
        assert lean[3] and lean[:3] == app[:3], (lean[1:3], app[1:3])
        return lean

    run_main(tmp_path, args, lean=True, cache="xdg")  # (the index built)
    listed.clear()
    past = time.time() - 3600
    os.utime(project, (past, past))  # (last changed an hour ago: settled)
    first = both(1)  # (listed, and kept)
    assert both(1) == first  # (from the index: not listed)
    one = sorted(project.glob("*.jsonl"))[0]
    shutil.copyfile(one, project / "2030-01-01T00-00-00-000Z_copy.jsonl")  # (the directory changed)
    os.utime(project, (past, past))
    after = both(2)
    assert after[1] != first[1]
    doc = json.loads(run_main(tmp_path, [*args, "--json"], lean=True, cache="xdg")[1])
    assert len(listed) == 2  # (the listing kept again)
    assert doc["fileCount"] == len(list(project.glob("*.jsonl")))
    assert any(h["path"].endswith("_copy.jsonl") for h in doc["hits"])


# --- the plain rows, as the printer writes them -------------------------------------------------------


def test_narrow_characters_are_one_cell_wide_in_rich():
    """Every character the plain rows measure by ``len`` is one cell in the installed Rich."""
    from rich.cells import cell_len

    wide = [hex(c) for c in range(0x110000) if view._NARROW.fullmatch(chr(c)) and cell_len(chr(c)) != 1]
    assert wide == []


def printed(results: list, width: int, label: str, active_only: bool) -> str:
    """What the printer writes of ``search_view`` where there is no colour (a pipe), at ``width``."""
    import io

    from pisess.cli.output import Printer

    class Pipe(io.StringIO):
        def isatty(self) -> bool:
            return False

    pipe = Pipe()
    p = Printer("never")
    p._stream = pipe
    p.console.file = pipe
    p.console.width = width
    p.show(view.search_view(results, width=width, searched=7, label=label, active_only=active_only, marked=True))
    return pipe.getvalue()


#: characters the plain rows measure (escapes become ASCII), and those only Rich can
NARROW = st.text(st.sampled_from("ab  é·…»«↵\x1b\nΩж-"), max_size=90)
ANY = st.text(st.sampled_from("ab  é·\t\x1bd\u0301中😀"), max_size=90)


@st.composite
def results(draw):
    TEXT = draw(st.sampled_from([NARROW, NARROW, ANY]))  # noqa: N806 - one alphabet per example
    out = []
    for k in range(draw(st.integers(1, 3))):
        hits = []
        for _ in range(draw(st.integers(1, 3))):
            snippet = draw(TEXT) or "x"
            s = draw(st.integers(0, len(snippet) - 1))
            e = draw(st.integers(s + 1, len(snippet)))
            m = Match(3, "user", draw(st.sampled_from(["user", "assistant", "tool result", "bash", "ωeird"])), snippet,
                      s, e, draw(st.booleans()), draw(st.booleans()))
            hits.append(Hit(draw(st.sampled_from(["a1b2c3d4", "u1", None, "é1"])), "message", "user",
                            draw(st.sampled_from(["active", "branch", "compacted", "retained", "edited", "dropped"])), m))
        out.append(FileResult(f"/s/{k}.jsonl", draw(st.sampled_from(["0195a1f0-bbbb", "é", None])),
                              draw(st.sampled_from([None, "a name", draw(TEXT)])), draw(st.sampled_from([None, "/p", "/é"])),
                              None, "cli", hits, id_width=8))
    return out


@settings(max_examples=examples(300), deadline=None)
@given(results(), st.sampled_from([200, 150, 120, 100, 80, 40, 12, 1]), st.sampled_from(["this project", "2 files"]),
       st.booleans())
def test_plain_rows_are_what_the_printer_writes(rs, width, label, active_only):
    """``search_lines`` is the printer's plain output of ``search_view``, byte for byte, whenever
    it answers (``None``: a character only Rich can measure, a row that wraps)."""
    lines = view.search_lines(rs, width=width, searched=7, label=label, active_only=active_only)
    if lines is not None:
        assert "".join(line + "\n" for line in lines) == printed(rs, width, label, active_only)


def test_plain_rows_answer_for_plain_text():
    """ASCII hits at the pipe's width: drawn without Rich (not ``None``)."""
    m = Match(3, "user", "user", "find the date here", 9, 13, False, False)
    rs = [FileResult("/s/a.jsonl", "0195a1f0", "a name", "/p", None, "cli", [Hit("u1", "message", "user", "active", m)])]
    lines = view.search_lines(rs, width=200, searched=7, label="this project", active_only=False)
    assert lines is not None and "".join(f"{x}\n" for x in lines) == printed(rs, 200, "this project", False)
