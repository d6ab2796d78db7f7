"""Shared helpers for building small pi session files inline.

The helpers are plain functions so test modules (and Hypothesis strategies, which cannot use
function-scoped fixtures) can ``from conftest import ...`` them; ``session_writer`` wraps
``write_session`` around ``tmp_path`` for tests that prefer a fixture.
"""

from __future__ import annotations

import ast
import atexit
import functools
import json
import os
import shutil
import sys
import time
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from answers_store import store  # noqa: F401 - the hand-written sessions root, a fixture for search, stats and du

# Playwright on the system's Chromium for the HTML page's tests (fixtures browser, page, new_page).
pytest_plugins = ["page_browser"]

TS = "2026-07-25T09:14:03.512Z"
CWD = "/work/proj"
SESSION_ID = "01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e6f"

DROP = object()  # pass as a field value to remove that key from a header/entry


def _apply(base: dict, overrides: dict) -> dict:
    out = dict(base)
    for k, v in overrides.items():
        if v is DROP:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def header(**overrides: Any) -> dict:
    """A valid version-3 session header; keyword overrides replace fields (``DROP`` removes one)."""
    return _apply({"type": "session", "version": 3, "id": SESSION_ID, "timestamp": TS, "cwd": CWD}, overrides)


def entry(type_: str, id_: Any, parent: Any, ts: str = TS, **fields: Any) -> dict:
    """A base entry ``{type, id, parentId, timestamp, **fields}`` (``DROP`` removes a base key)."""
    return _apply({}, {"type": type_, "id": id_, "parentId": parent, "timestamp": ts, **fields})


def user(id_: str, parent: Any, text: Any = "hi", ts: str = TS, **fields: Any) -> dict:
    content = [{"type": "text", "text": text}] if isinstance(text, str) else text
    return entry("message", id_, parent, ts, message={"role": "user", "content": content, "timestamp": 1}, **fields)


def assistant(id_: str, parent: Any, text: str = "ok", provider: str = "anthropic", model: str = "claude-x",
              ts: str = TS, **fields: Any) -> dict:
    msg = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
           "provider": provider, "model": model, "stopReason": "stop", "timestamp": 2}
    return entry("message", id_, parent, ts, message=msg, **fields)


def message(id_: str, parent: Any, msg: dict, ts: str = TS, **fields: Any) -> dict:
    """A ``message`` entry holding an arbitrary AgentMessage."""
    return entry("message", id_, parent, ts, message=msg, **fields)


def encode_line(line: Any) -> bytes:
    """``bytes`` and ``str`` are written verbatim; anything else is compact JSON."""
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode("utf-8")
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def session_bytes(lines: Iterable[Any], trailing_newline: bool = True) -> bytes:
    data = b"\n".join(encode_line(ln) for ln in lines)
    return data + b"\n" if trailing_newline and data else data


def write_session(directory: Any, lines: Iterable[Any], name: str = "session.jsonl",
                  trailing_newline: bool = True) -> str:
    """Write ``lines`` (dicts/lists/values as JSON, ``str``/``bytes`` verbatim) one per line into
    ``directory/name`` and return the path as a ``str``."""
    path = os.path.join(str(directory), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(session_bytes(lines, trailing_newline))
    return path


def write_bytes(directory: Any, data: bytes, name: str = "session.jsonl") -> str:
    path = os.path.join(str(directory), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def ids(entries: Iterable[Any]) -> list:
    """The ``id`` of each entry (``None`` for non-objects)."""
    return [e.get("id") if isinstance(e, dict) else None for e in entries]


# --- JSON documents ---------------------------------------------------------------------------------

# The "version" of each command's --json document, as ``pisess help json`` lists them (test_json_names
# checks that table against what every command prints); 2: the keys renamed to one name per idea.
JSON_VERSIONS = {"ls": 2, "tree": 2, "path": 2, "context": 2, "validate": 2, "fork": 1, "export": 2, "secrets": 2,
                 "search": 2, "diff": 2, "stats": 2, "du": 2, "watch": 2, "demo": 2, "cache": 2, "cache clear": 2,
                 "cache index": 2, "help": 1}
ERROR_VERSION = 1  # {version, error}: the same document whatever the command


def json_version(command: str, doc: dict) -> int:
    """The version ``doc``, printed by ``command`` (``"cache index"``: a subcommand), must say: the
    error document's when it is one (``unreadable`` beside the error), else the command's."""
    return ERROR_VERSION if "error" in doc and set(doc) <= {"version", "error", "unreadable"} else JSON_VERSIONS[command]


# --- the package's source, as the tests that read its imports see it --------------------------------


@functools.cache
def python_tree(source: str) -> ast.Module:
    """A module's text parsed, once a process (the tests that read the package's imports parsed
    every module of it again each: a second and a half of the default run).  Shared: read it, never
    change it."""
    return ast.parse(source)


@functools.cache
def python_nodes(source: str) -> tuple[ast.AST, ...]:
    """Every node of a module's text, in ``ast.walk``'s order, once a process (shared as
    ``python_tree``)."""
    return tuple(ast.walk(python_tree(source)))


# --- golden files ----------------------------------------------------------------------------------

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, got: str) -> None:
    """``got`` is byte for byte the reviewed file ``tests/golden/<name>``.  After an intended
    change, ``PISESS_UPDATE_GOLDEN=1 pytest ...`` writes it there first: review the diff."""
    path = GOLDEN / name
    if os.environ.get("PISESS_UPDATE_GOLDEN"):
        path.write_text(got, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with PISESS_UPDATE_GOLDEN=1"
    assert got == path.read_text(encoding="utf-8")


@pytest.fixture()
def golden_env(monkeypatch):
    """The settings golden views are made with: 100 columns, no colour, no GitHub annotations,
    UTC, a fixed "now" (2025-03-10T12:00Z)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("PISESS_NOW", "2025-03-10T12:00:00.000Z")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def session_writer(tmp_path):
    """``session_writer(lines, name=..., trailing_newline=...)`` writes into ``tmp_path``."""

    def _write(lines: Iterable[Any], name: str = "session.jsonl", trailing_newline: bool = True) -> str:
        return write_session(tmp_path, lines, name, trailing_newline)

    return _write


@pytest.fixture(autouse=True, scope="session")
def _reads_as_the_cli_reads():
    """The suite reads as the CLI does: a big read may fork where the CPUs allow (tests patch
    ``parallel.cpus`` and ``compact.SPLIT_MIN`` to read small files in two halves); the library's
    own default is one process, which ``test_core_compact`` checks."""
    from pisess.core import parallel

    previous = parallel.configure(parallel.Settings(jobs=None))
    yield
    parallel.configure(previous)


# --- how big a property test runs ------------------------------------------------------------------
# One mechanism: each property states its full size, ``@settings(max_examples=examples(N))``, and
# the Hypothesis profile of the run takes its share: ``full`` all N (``pytest -m ''`` and CI, which
# select the slow tests too), ``quick`` a tenth, at least 5 (the default run, which leaves them
# out).  ``--hypothesis-profile full`` gives the default run the full sizes.  Both profiles drop
# the deadline and the too-slow check: the reads a property makes vary in time with the machine.



def pytest_configure(config: pytest.Config) -> None:
    _compile_once_for_every_run(config)
    _temporary_files_in_memory(config)
    if hasattr(config, "workerinput") and "coverage" not in sys.modules:
        atexit.register(_leave_at_once)
    if config.getoption("dist", "no") != "no" and not hasattr(config, "workerinput") \
            and config.getoption("hypothesis_profile", None) is None:
        return  # (xdist's controller runs no test: Hypothesis, 0.3-0.9 s of its start before the workers', is the
        #          workers'; unless a profile is named, which Hypothesis' plugin loads here too)
    # Hypothesis imported only now, after the line above: pytest rewrites the asserts of every
    # module of a plugin's distribution (Hypothesis' 70 modules), and keeps the result only where it
    # may write compiled files: imported at the top, each run rewrote it anew (a second of CPU).
    from hypothesis import HealthCheck, settings

    settings.register_profile("full", max_examples=100, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    settings.register_profile("quick", settings.get_profile("full"), max_examples=10)
    settings.load_profile("quick" if "not slow" in (config.getoption("markexpr") or "") else "full")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker a CPU for the default run, one more for the full run (``-m ''``), whose
    workers wait on browser frames, installs and children (idle, 2 CPUs were 1.3 busy; loaded, 5-9,
    3 workers took 574 s where 2 took 610 s, at the same CPU).  ``PYTEST_XDIST_AUTO_NUM_WORKERS``
    is left to xdist."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or "not slow" in (config.getoption("markexpr") or ""):
        return None
    return len(os.sched_getaffinity(0)) + 1


#: The environment ``_compile_once_for_every_run`` changed, to put back at the end of the run.
_BYTECODE_ENV: dict[str, str | None] = {}


def _compile_once_for_every_run(config: pytest.Config) -> None:
    """Where ``PYTHONDONTWRITEBYTECODE`` is set (our shared machine sets it), every process of a
    run compiled what it imported anew: each xdist worker rewrote the asserts of every test module
    and compiled pisess (4 s of CPU a worker, a fifth of the default run), each pisess a test
    starts compiled pisess, typer and rich.  The run keeps them under ``.pytest_cache/pycache``
    instead, from run to run: never beside the sources, which is what the variable is for.  Set
    here, before the test modules are imported; the workers and the children inherit it."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    where = str(config.rootpath / ".pytest_cache" / "pycache")
    _BYTECODE_ENV.update({k: os.environ.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")})
    sys.dont_write_bytecode, sys.pycache_prefix = False, where
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = where


#: The memory file system the tests' temporary files go to (``_temporary_files_in_memory``).
MEMORY_FS = "/dev/shm"
#: What it must have free: the full run holds up to ~600 MB at once (the default run ~110 MB).
MEMORY_FS_FREE = 2 << 30


def _file_systems_of(*paths: str) -> list[tuple[str, set[str]] | None]:
    """The type and mount options of the file system each path is on (``/proc/self/mounts``,
    read once: Linux), ``None`` where it cannot tell."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            mounts = [f[1:4] for f in map(str.split, fh) if len(f) >= 4]
    except OSError:
        return [None] * len(paths)
    out: list = []
    for path in paths:
        real, best = os.path.realpath(path), None
        for point, kind, options in mounts:  # (the longest mount point holding it; of equal ones, the last mounted)
            point = point.replace("\\040", " ")
            if (real == point or real.startswith(point.rstrip("/") + "/")) and (best is None or len(point) >= len(best[0])):
                best = (point, kind, options)
        out.append((best[1], set(best[2].split(","))) if best else None)
    return out


def _temporary_files_in_memory(config: pytest.Config) -> None:
    """The run's temporary files (every ``tmp_path``, the spools and caches of the pisess processes
    it starts) go to a memory file system when the temporary directory is on a disk.  A run
    creates thousands of files and deletes as many (the default run ~7,500): on this machine's
    ext4, mounted without a journal, the kernel looks past every inode deleted in the last minutes
    for each new one (``find_inode_bit``, ``recently_deleted``: 17% of a default run's samples
    under ``perf``), so each run slowed the ones after it (the default run's kernel time 5 s on a
    fresh machine, 13 s after a dozen runs; on ``/dev/shm`` 4.6-5.2 s whatever came before; the
    full run 232 s on the disk, 176 s there).  What a run leaves is pytest's to keep
    (``tmp_path_retention_policy = "failed"``: a run that passed, nothing).  Not where ``TMPDIR``,
    ``--basetemp`` or ``PYTEST_DEBUG_TEMPROOT`` says where they go, nor where that file system is
    small (a container's 64 MB) or runs no program; the workers and the children inherit the choice."""
    if hasattr(config, "workerinput") or config.getoption("basetemp", None) \
            or any(os.environ.get(k) for k in ("TMPDIR", "TEMP", "TMP", "PYTEST_DEBUG_TEMPROOT")):
        return
    import tempfile

    here, memory = _file_systems_of(tempfile.gettempdir(), MEMORY_FS)
    if here is None or here[0] in ("tmpfs", "ramfs") or memory is None or memory[0] != "tmpfs" \
            or "noexec" in memory[1] or not os.access(MEMORY_FS, os.W_OK | os.X_OK):
        return  # (noexec: tests run what they write there, a venv's Python, a recording script)
    try:
        st = os.statvfs(MEMORY_FS)
    except OSError:
        return
    if st.f_bavail * st.f_frsize < MEMORY_FS_FREE:
        return
    _TEMP_ENV["TMPDIR"] = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = MEMORY_FS
    tempfile.tempdir = None  # (worked out again from TMPDIR at its next use)


#: The environment ``_temporary_files_in_memory`` changed, to put back at the end of the run.
_TEMP_ENV: dict[str, str | None] = {}


#: Set when a worker's run has ended cleanly (its last hook): ``_leave_at_once`` may then skip the teardown.
_ENDED: list = []


def _leave_at_once() -> None:
    """A worker's interpreter, at its exit, frees one by one the objects its tests left (the
    collection, frozen; parsed sessions, Hypothesis's data): 0.7 s that the controller waits for
    after the last test (measured: from the worker's atexit to the controller's end of session,
    0.74 s; ended here, 0.02 s).  The operating system frees them at once.  Only once the run has
    ended cleanly (xdist's messages, all sent by then, say how it went, not the exit status), and
    never under coverage, which writes at exit.  Registered at configure, so the exit handlers
    registered later (the tests' and their libraries') run before it."""
    if not _ENDED:
        return
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        _ENDED.append(True)
    for k, v in (*_BYTECODE_ENV.items(), *_TEMP_ENV.items()):
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    if _TEMP_ENV:
        import tempfile

        tempfile.tempdir = None


#: Modules whose tests share what costs seconds to build once per process (the hostile corpora;
#: every module of the package parsed, ``python_nodes``: 0.8 s of CPU): their tests run first, in
#: one worker's share, then the tests that use the browser (a Chromium started once for them:
#: ``page_browser``).  xdist hands each worker a run of consecutive tests and steals from the end
#: of a queue, so a module where the collection splits in two (or two modules that share a
#: build, far apart) would have both workers build it; and the long page tests of the full run
#: are not left for the end.
SHARED_FIRST = ("test_hostile", "test_import_graph", "test_search_front_door", "test_output")

#: The full run's long poles (10-20 s each, the longest ones that use no browser): first of all, so
#: that no worker starts one while the others are out of work.
LONG_FIRST = ("test_core_paths.py::test_million_entry_chain_builds_path_and_context", "test_installs.py::test_pipx_install")


#: The default run (seconds, for working) keeps this many cases of these tests, the first ones
#: collected, and leaves the rest to the full run (``-m ''``, CI's), as if marked ``slow``: each
#: costs a second or more (a browser page, a Textual app, a filled disk), and what it checks stays
#: in the default run by the cases kept, or by the test named beside a 0.
QUICK_CASES = {
    # browse: a Textual app each (0.5-2 s)
    "test_browse.py::test_the_sessions_screen_opens_the_highlighted_session": 0,  # the filter test opens with Enter
    "test_browse.py::test_no_message_names_an_option_browse_does_not_take": 0,  # the screens' goldens, full run
    "test_browse.py::test_fork_writes_a_new_file_that_validates": 0,  # ..._outside_the_root_goes_beside_it
    "test_browse.py::test_the_app_opens_on_the_screen_asked_for": 0,  # test_browse_at_screen_and_compare_reach_the_app
    "test_browse.py::test_live_appends_keep_the_selection_and_the_scroll": 0,  # test_cli's watch, the followed session
    "test_browse.py::test_the_trace_folds_a_path_into_turns_and_steps": 0,  # test_context_trace_compare_and_help_screens
    "test_browse.py::test_a_damaged_append_is_not_called_a_rewrite": 0,  # the followed session test
    "test_browse.py::test_the_help_keeps_its_columns_at_80": 0,  # the key table test, both ways
    "test_browse.py::test_tab_gives_j_and_k_to_the_entry_pane": 0,  # the session screen's moves
    "test_browse.py::test_a_text_pages_bar_says_j_and_k_scroll": 0,  # the key bar at 80
    "test_browse.py::test_a_confirmation_takes_no_key_typed_before_it_was_drawn": 0,  # fast keys: slash, the filter
    # the page: a Chromium page each
    "test_page.py::test_search_folds_case_as_the_page_says": 0,  # the query in the URL is searched on open
    "test_page.py::test_counts_of_one_are_singular": 0,  # (the header's words: the full run)
    "test_page.py::test_changing_the_hash_navigates_without_reload": 0,  # the deep link opens the node on the tab
    "test_page.py::test_search_hits_placements_marks_and_n": 0,  # the query in the URL, the folding
    "test_page.py::test_search_placements_cover_compacted_and_edited": 0,  # (the same, on a second session)
    "test_page.py::test_a_long_context_is_drawn_a_window_at_a_time": 0,  # the leaf's messages first, the rest once read
    "test_page.py::test_keys_move_jump_and_switch_tabs": 0,  # brackets and slash: the keys
    "test_page.py::test_no_script_page_is_readable_and_runs_nothing": 0,  # the scripted page with scripts off
    "test_page.py::test_branch_costs_are_stats_by_branch": 1,
    "test_page.py::test_narrow_window_puts_the_tree_in_a_drawer": 0,  # print: the other layout
    "test_page.py::test_print_shows_the_selected_context": 1,
    "test_page.py::test_screenshot_of_the_page": 0,  # the README's picture: the full run checks it
    "test_page.py::test_original_toggle_shows_what_edits_hide": 0,  # the context of every node marks the edited
    "test_page.py::test_scripted_page_is_readable_with_scripts_off": 0,  # noscript holds the static page (test_explorer_page)
    "test_page.py::test_messages_of_the_leaf_come_first_and_the_rest_is_drawn_once_read": 0,  # ..._come_before_the_script
    "test_page.py::test_deep_links_open_the_node_on_the_tab": 1,
    "test_page_security.py::test_pages_of_hostile_sessions_are_inert": 0,  # the payloads page, every payload
    "test_page_security.py::test_no_script_page_of_payloads_runs_nothing": 0,  # (the scripted page of them)
    # a filled disk, a full stdout: a child process each
    "test_contract.py::test_a_disk_that_fills_up_is_a_storage_error": 1,
    "test_contract.py::test_a_full_stdout_is_a_clean_storage_error": 2,
    "test_contract.py::test_export_to_a_disk_that_fills_up_leaves_no_file": 1,
    # the hostile corpus read every way
    "test_hostile.py::test_file": 4,
    "test_hostile.py::test_file_readonly": 2,
    "test_hostile.py::test_file_warm_cache": 0,  # test_cache: every view through the cache is the fresh read
    "test_core_compact.py::test_du_on_the_index_reports_what_the_line_scan_reports": 0,  # validate's twin stays
    "test_import_graph.py::test_a_planted_import_up_a_floor_is_reported": 3,
    "test_odd_shapes.py::test_one_long_line_costs_a_few_times_the_line": 0,  # ..._bounded_by_a_line_not_by_the_file
    "test_lean_search.py::test_the_console_script_ends_as_the_app_ends": 0,  # the in-process run sees what a child sees
    "test_lean_search.py::test_the_lean_path_prints_what_the_app_prints": 1,  # every shape, plain; the settings: full run
    "test_explorer_page.py::test_the_pass_shared_with_a_forked_child_writes_the_same_page": 6,
}


@pytest.hookimpl(tryfirst=True)  # (before -m deselects by marks)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seen: dict[str, int] = {}
    for item in items:
        key = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if key in QUICK_CASES:
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > QUICK_CASES[key]:
                item.add_marker(pytest.mark.slow)
    # (by the modules' functions, not the items: ``pytest tests/test_x.py::test_y`` collects one)
    modules = {item.path.name: item.module for item in items if getattr(item, "module", None) is not None}
    stale = [k for k in QUICK_CASES if k.split("::")[0] in modules and not hasattr(modules[k.split("::")[0]], k.split("::")[1])]
    if stale:  # (a renamed test would run whole in the default run, and nobody would know)
        raise pytest.UsageError(f"QUICK_CASES names tests that are not there: {', '.join(stale)}")
    from page_browser import uses_browser  # (here: imported first as the plugin below, asserts rewritten)

    items.sort(key=lambda item: (f"{item.path.name}::{getattr(item, 'originalname', item.name)}" not in LONG_FIRST,
                                 getattr(getattr(item, "module", None), "__name__", "") not in SHARED_FIRST,
                                 not uses_browser(item)))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (the test modules, their parameters, Hypothesis and the imports: most
    of a worker's objects) lives to the end of the run: frozen out of the garbage collector's full
    passes, which otherwise walk it again at every one (the browse, cache, search index and lean
    search modules in one process: 13.8 -> 12.8 CPU-s)."""
    import gc

    gc.collect()
    gc.freeze()
    # The tests then allocate much and keep much (parsed sessions, pages, corpora, Hypothesis's
    # data): at the default thresholds (700, 10, 10) a worker of the default run collected 2,750
    # times, 15 of them full passes over half a million objects, 2.4 CPU-s.  Fewer, larger passes
    # find the same cycles: 480 collections, 4 full, 0.7-0.9 CPU-s; the run 2.5 s shorter idle.
    gc.set_threshold(10_000, 20, 100)


#: A long property (hundreds of examples, each reading files many ways) is tried in this many runs
#: of its own, ``@pytest.mark.parametrize("shard", range(SHARDS))`` with ``examples(N) // SHARDS``
#: each, which xdist spreads over the CPUs: in one run the cache's was the full suite's long pole.
SHARDS = 6


def examples(full: int) -> int:
    """A property's number of examples in this run: ``full`` under the full profile, a tenth (at
    least 5) under the quick one (the profile's ``max_examples``, out of Hypothesis' default 100)."""
    from hypothesis import settings

    return max(min(full, 5), full * settings.default.max_examples // 100)


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """The suite reads through the index cache as the CLI does, in a directory of its own: never
    the user's real cache (``XDG_CACHE_HOME`` points there too, for the pisess processes tests
    start).  Tests of the cache itself configure their own directory."""
    from pisess.core.reading import cache

    where = tmp_path_factory.mktemp("xdg-cache")
    old = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "PISESS_CACHE", "PISESS_INDEX_SYNC")}
    os.environ["XDG_CACHE_HOME"] = str(where)
    os.environ.pop("PISESS_CACHE", None)
    # a search builds the index it needs before answering (no background indexer outliving a test
    # in a temporary directory); the tests of the background indexer turn this off
    os.environ["PISESS_INDEX_SYNC"] = "1"
    previous = cache.configure(cache.from_environ(os.environ, str(where)))
    yield
    cache.configure(previous)
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(autouse=True, scope="session")
def _children_compile_once():
    """What the pisess processes the tests start import is compiled here, in the worker, into the
    run's compiled files (``_compile_once_for_every_run``), not in the first child a test starts:
    a test may time its child."""
    import rich.console  # noqa: F401
    import typer  # noqa: F401

    import pisess.cli.app  # noqa: F401
    import pisess.cli.lean_search  # noqa: F401

    yield


@pytest.fixture(autouse=True, scope="session")
def _one_click_command_per_app():
    """typer's ``CliRunner.invoke`` builds the click command from the app on every call (20 ms: a
    third of the default run went there).  An app is the same object from test to test and click
    makes a new context for each invocation, so each app's command is built once."""
    import typer.testing

    build = getattr(typer.testing, "_get_command", None)
    if build is None:  # a typer that builds it elsewhere: slower, not different
        yield
        return
    built: dict[int, tuple] = {}

    def command_of(app):
        if id(app) not in built:
            built[id(app)] = (app, build(app))  # (the app kept alive: its id stays its own)
        return built[id(app)][1]

    typer.testing._get_command = command_of
    yield
    typer.testing._get_command = build


# --- the commands, as tests run them ---------------------------------------------------------------


def new_runner():
    """A typer ``CliRunner`` with stderr kept apart from stdout (``result.stderr``)."""
    from typer.testing import CliRunner

    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 keeps them apart always
        return CliRunner()


def cli_runner(monkeypatch, columns: int = 100, **env: str):
    """A ``CliRunner`` for the commands as a user's plain terminal runs them: no colour, ``columns``
    wide, no GitHub annotations, the environment ``env`` adds; stderr kept apart where click can."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return new_runner()


@pytest.fixture
def runner(monkeypatch):
    """``cli_runner`` at 100 columns, for ``invoke``.  A module whose views are checked at another
    width overrides it: ``def runner(monkeypatch): return cli_runner(monkeypatch, columns=80)``."""
    return cli_runner(monkeypatch)


def invoke(runner, *args: str):
    """``pisess ARGS`` through ``runner``, exceptions raised (a traceback is a failure)."""
    from pisess.cli.app import app

    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def copy_examples(directory: Path) -> Path:
    """The example sessions shipped in the package (``pisess demo``'s) copied into
    ``directory/sessions``, which is returned: a sessions root tests may write next to."""
    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as src:
        shutil.copytree(src, directory / "sessions")
    return directory / "sessions"


@pytest.fixture
def example_sessions(tmp_path) -> Path:
    """``copy_examples(tmp_path)``: ``tmp_path / "sessions"``, a copy of the example sessions."""
    return copy_examples(tmp_path)
