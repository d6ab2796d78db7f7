"""Sessions in the shapes real files carry (issue 34): the same turns written as pi writes them and
written otherwise (Python's separators with spaces and tabs, keys in another order, base64 with
``\\/`` and ``\\u`` escapes, images in user messages, custom messages and tool results' ``details``,
CRLF line ends, message times later than their entries', entries out of time order, no final
newline; ``tests/bench/shapes.py`` writes both).

Every command answers the same on both files (but for what is about the bytes themselves), and
every command's memory stays bounded by a line and a block, not the file: its peak of Python memory
(``tracemalloc``, in a child process, the reads' blocks scaled down to 64 KiB as the files are)
grows by far less than the file when the file grows four times.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import shapes
from conftest import cli_runner, invoke
from pisess.core.listing import summary

ROOT = Path(__file__).resolve().parent.parent

#: label -> argv (FILE and ROOT stand for the session file and the sessions root)
COMMANDS = {
    "ls": ["ls", "--all", "--json", "--sessions-dir", "ROOT"],
    "ls --long": ["ls", "--all", "--long", "--json", "--sessions-dir", "ROOT"],
    "tree": ["tree", "--json", "FILE"],
    "stats": ["stats", "--json", "FILE"],
    "du": ["du", "--json", "FILE"],
    "search": ["search", "--json", "#step-1 (1280", "FILE"],
    "validate": ["validate", "--json", "FILE"],
    "context": ["context", "FILE"],
    "context --json": ["context", "--json", "FILE"],
    "export md": ["export", "--format", "md", "FILE"],
}


def _write(root: Path, turns: int, shape: str, image_kb: int = 24) -> Path:
    """The session of ``turns`` turns in ``shape`` (``pi`` or ``odd``) under ``root/sessions``."""
    d = root / "sessions" / "--home-user-odd-shapes--"
    d.mkdir(parents=True, exist_ok=True)
    path = d / "2025-03-03T11-06-40-000Z_odd.jsonl"
    values = shapes.entries(turns, image_kb=image_kb)
    (shapes.write_pi if shape == "pi" else shapes.write_odd)(str(path), values)
    return path


def _argv(label: str, path: Path) -> list[str]:
    root = str(path.parent.parent)
    return [root if a == "ROOT" else str(path) if a == "FILE" else a for a in COMMANDS[label]]


# --- the same answers -------------------------------------------------------------------------------------------

#: what is about the file's bytes, not its turns: sizes, line ends, the final newline
_BYTES_KEYS = {"size", "bytes", "entryBytes", "headerBytes", "otherBytes", "finalNewlineRepaired", "modified",
               "line", "offset", "path", "root", "where", "top", "largest", "byKind", "fileBytes", "mtime", "modifiedAt"}


def _without_bytes(v):
    if isinstance(v, dict):
        return {k: _without_bytes(x) for k, x in v.items() if k not in _BYTES_KEYS}
    if isinstance(v, list):
        return [_without_bytes(x) for x in v]
    return v


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    pi = _write(tmp_path_factory.mktemp("pi"), 12, "pi")
    odd = _write(tmp_path_factory.mktemp("odd"), 12, "odd")
    assert odd.read_bytes().count(b"\r\n") > 50 and not odd.read_bytes().endswith(b"\n")
    assert b'"data":"' in pi.read_bytes() and b'"data":"' not in odd.read_bytes()
    return pi, odd


@pytest.mark.parametrize("label", ["ls", "ls --long", "tree", "stats", "du", "search", "context --json"])
def test_the_odd_shape_answers_as_the_pi_shape(monkeypatch, both, label):
    """The same turns in either shape: the same answer (JSON values, keys in any order), but for
    the bytes themselves (sizes, offsets, paths, the final newline)."""
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    got = {}
    for shape, path in zip(("pi", "odd"), both):
        r = invoke(runner, *_argv(label, path))
        assert r.exit_code == 0, (shape, r.output)
        got[shape] = _without_bytes(json.loads(r.stdout))
    assert got["odd"] == got["pi"]
    if label == "du":  # every image found and measured in both
        assert got["odd"]["images"]["count"] == 12 + 12 // 5 + 12 // 3 + 12 // 7


@pytest.mark.parametrize("label", ["context", "export md", "tree"])
def test_the_odd_shape_reads_as_the_pi_shape_in_the_views(monkeypatch, both, label):
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    # (pisess's token estimate, a quarter of the JSON's bytes, counts an image left in the file by
    # its placeholder, whose length varies with its offset: not a fact of the turns)
    out = [re.sub(r"~[\d,]+ tokens", "~N tokens", invoke(runner, *_argv(label, p)).stdout.replace(str(p), "FILE"))
           for p in both]
    assert out[0] == out[1]
    assert "#step-11" in out[0] or label == "tree"


def test_validate_names_what_differs_and_nothing_else(monkeypatch, both):
    """The odd file's only finding is its missing final newline (pi 1.6 adds it when it opens
    the file); CRLF, spaces, escapes, key order, skewed and unordered times are no damage."""
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    docs = [json.loads(invoke(runner, *_argv("validate", p)).stdout) for p in both]
    codes = [sorted({f["code"] for f in d["files"][0]["findings"]}) for d in docs]
    assert codes == [[], ["unterminated_line"]]


# --- bounded memory ---------------------------------------------------------------------------------------------

_CHILD = r"""
import os, sys, tracemalloc
from pisess.core.analyses import du
from pisess.core.analyses.search import scan
from pisess.core.listing import summary
from pisess.core.reading import compact, jsonl, wholescan
BLOCK = 64 << 10  # the reads' blocks (and the file search reads whole), scaled down as the files are
jsonl.CHUNK = compact._BLOCK_BYTES = wholescan.BLOCK = summary._BLOCK = scan.BLOCK = du.BLOCK = BLOCK
scan.search_file.__kwdefaults__["small"] = BLOCK
from pisess.cli.app import main
out, sys.argv = sys.argv[1], ["pisess", *sys.argv[2:]]
tracemalloc.start()
try:
    main()
except SystemExit:
    pass
finally:
    peak = tracemalloc.get_traced_memory()[1]
    with open(out, "w") as fh:
        fh.write(str(peak))
"""


def _peak(path: Path, label: str, tmp: Path) -> int:
    out = tmp / "peak"
    env = {**os.environ, "PISESS_CACHE": "off", "PISESS_JOBS": "1", "COLUMNS": "100", "NO_COLOR": "1"}
    with open(os.devnull, "wb") as sink:
        subprocess.run([sys.executable, "-c", _CHILD, str(out), *_argv(label, path)], stdout=sink,
                       stderr=subprocess.PIPE, env=env, cwd=ROOT, check=True)
    return int(out.read_text())


def _growth(tmp_path: Path, label: str, small: int, big: int, image_kb: int, shape: str = "odd") -> tuple[int, int, list[int]]:
    """How much the command's peak grows, and the file, from ``small`` to ``big`` turns."""
    peaks, sizes = [], []
    for turns in (small, big):
        path = _write(tmp_path / f"{shape}{turns}", turns, shape, image_kb)
        sizes.append(path.stat().st_size)
        peaks.append(_peak(path, label, tmp_path))
    return peaks[1] - peaks[0], sizes[1] - sizes[0], peaks


#: The default run's commands (two processes each, 0.6 s of CPU): one of each way a file is read,
#: through the index (tree), by the search's scan, into entries (context); the slow run all ten.
MEMORY_QUICK = ("tree", "search", "context --json")


@pytest.mark.parametrize("label", [pytest.param(c, marks=() if c in MEMORY_QUICK else pytest.mark.slow)
                                   for c in COMMANDS])
def test_memory_is_bounded_by_a_line_not_by_the_file(tmp_path, label):
    """The odd-shaped file grown from 6 to 24 turns of 64 KB images (0.7 to 2.7 MB, 98% of it
    images' base64): the command's peak grows by less than half of what the file grows by: it
    holds no image, and no block of the file beyond one (what grows is the entries' text and
    structure, as on a file written by pi)."""
    grown, bigger, peaks = _growth(tmp_path, label, 6, 24, 64)
    assert grown < bigger // 2, (label, peaks, bigger)


@pytest.mark.slow
@pytest.mark.parametrize("label", list(COMMANDS))
def test_memory_on_the_odd_shape_grows_as_on_pi_s(tmp_path, label):
    """From 20 to 160 turns (2.3 to 18 MB): the odd shape's peak grows by no more than the pi
    shape's does (the entries), plus a tenth of what the file grows by."""
    grown, bigger, peaks = _growth(tmp_path, label, 20, 160, 64)
    pi_grown, _, pi_peaks = _growth(tmp_path, label, 20, 160, 64, shape="pi")
    assert grown < pi_grown + bigger // 10, (label, peaks, pi_peaks, bigger)
    assert grown < bigger // 4, (label, peaks, bigger)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=24).map(lambda b: bytes(b"ab\r\n"[x % 4] for x in b)))
def test_the_listing_splits_lines_where_node_s_readline_does(data):
    """``summary._lines`` (``\\n`` first, then ``\\r`` in the pieces that hold one) is the regular
    expression's split, for any mix of line ends."""
    assert summary._lines(data) == summary._EOL.split(data)
