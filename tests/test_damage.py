"""Damage is never silent: a line a reader drops is told on stderr in every human view
(``file:line: skipped: reason``) and kept as ``droppedLines`` in every ``--json`` document, and
search finds every hit of a damaged file whatever its size."""

from __future__ import annotations

import json

import pytest

from answers_store import invoke
from conftest import assistant, header, user
from pisess.core.analyses.search import make_matcher
from pisess.core.analyses.search.scan import search_file

CUT = '{"type":"message","id":"cut","parentId":"a2","timestamp":"2026-07-25T09:14:03.512Z","mess'
CONFLICT = "<<<<<<< HEAD"


def _write(path, lines) -> str:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return str(path)


def _damaged(tmp_path, name="damaged.jsonl") -> str:
    """Physical lines: 1 header, 2 u1, 3 a conflict marker, 4 a1, 5 null (falsy), 6 u2, 7 a2, 8 a cut-off entry."""
    return _write(tmp_path / name, [header(), user("u1", None, "find me"), CONFLICT, assistant("a1", "u1"), "null",
                                    user("u2", "a1", "find me again"), assistant("a2", "u2"), CUT])


DROPPED = [{"line": 3, "reason": "not valid JSON"}, {"line": 5, "reason": "falsy JSON value"},
           {"line": 8, "reason": "not valid JSON"}]


@pytest.fixture()
def quiet(monkeypatch, tmp_path):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("PISESS_CACHE", "off")
    monkeypatch.chdir(tmp_path)


COMMANDS = {
    "context": ["context", "{f}", "--no-pager"],
    "tree": ["tree", "{f}", "--no-pager"],
    "path": ["path", "{f}"],
    "export": ["export", "{f}", "--format", "md"],
    "fork": ["fork", "{f}", "u2", "--dry-run"],
    "stats": ["stats", "{f}"],
    "du": ["du", "{f}"],
    "search": ["search", "find", "{f}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_human_view_names_each_dropped_line_on_stderr(quiet, tmp_path, command):
    f = _damaged(tmp_path)
    r = invoke(*[a.format(f=f) for a in COMMANDS[command]])
    assert r.exit_code == 0, r.stderr
    for d in DROPPED:
        assert f"{f}:{d['line']}: skipped: {d['reason']}\n" in r.stderr
    assert "skipped:" not in r.stdout


def _dropped_of(command: str, doc: dict) -> list:
    if command in ("stats", "du"):
        return [d for s in doc["sessions"] for d in s["droppedLines"]]
    if command == "search":
        return [{"line": d["line"], "reason": d["reason"]} for d in doc["droppedLines"]]
    return doc["droppedLines"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_json_document_keeps_dropped_lines(quiet, tmp_path, command):
    f = _damaged(tmp_path)
    r = invoke(*[a.format(f=f) for a in COMMANDS[command]], "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert _dropped_of(command, doc) == DROPPED
    assert "skipped:" not in r.stderr  # the document says it; stderr does not repeat it line by line


def test_dropped_lines_with_the_sdk_reader_that_falls_back(quiet, tmp_path):
    """A file with a leaf record (written by pi's SDK) and damage: the SDK refuses it, the pi
    command's reader drops the line, and search says both."""
    leaf = {"type": "leaf", "id": "l1", "parentId": "a1", "timestamp": "2026-07-25T09:14:03.512Z", "targetId": "a1"}
    f = _write(tmp_path / "sdk.jsonl", [header(), user("u1", None, "find me"), assistant("a1", "u1"), leaf, CONFLICT])
    r = invoke("search", "find", f)
    assert r.exit_code == 0
    assert f"{f}:5: skipped: not valid JSON" in r.stderr and "pi's SDK refuses it" in r.stderr


def test_a_clean_file_says_nothing(quiet, tmp_path):
    f = _write(tmp_path / "clean.jsonl", [header(), user("u1", None, "find me"), assistant("a1", "u1")])
    for args in (["context", f, "--no-pager"], ["search", "find", f], ["stats", f]):
        r = invoke(*args)
        assert r.exit_code == 0 and "skipped" not in r.stderr
    assert json.loads(invoke("tree", f, "--json").stdout)["droppedLines"] == []


def test_the_list_is_capped_with_a_count(quiet, tmp_path):
    f = _write(tmp_path / "many.jsonl", [header(), user("u1", None, "find me")] + [CONFLICT] * 25)
    r = invoke("tree", f, "--no-pager")
    assert r.exit_code == 0
    named = [ln for ln in r.stderr.splitlines() if ": skipped: " in ln]
    assert named == [f"{f}:{n}: skipped: not valid JSON" for n in range(3, 13)]
    assert f"{f}: and 15 more skipped lines (25 in all)" in r.stderr
    assert len(json.loads(invoke("tree", f, "--json").stdout)["droppedLines"]) == 25


# --- search over the whole-file limit -----------------------------------------------------------------


@pytest.mark.parametrize("reader", ["auto", "cli", "harness"])
def test_streamed_search_of_a_damaged_file_finds_every_hit(tmp_path, reader):
    """The block reader (``small=0``) and the whole-file read give the same hits and dropped lines."""
    f = _damaged(tmp_path)
    whole = search_file(f, make_matcher("find"), reader=reader)
    streamed = search_file(f, make_matcher("find"), reader=reader, small=0)
    for r in (whole, streamed):
        assert [(h.entry_id, h.match.line) for h in r.hits] == [("u1", 2), ("u2", 6)]
        assert r.dropped_lines == DROPPED


# (the default run writes one 9 MiB file, a cut-off line; the conflict marker's, in the full run,
# is a second file as big, and test_streamed_search_of_a_damaged_file_finds_every_hit has it small)
@pytest.mark.parametrize("damage", ["cut", pytest.param("conflict", marks=pytest.mark.slow)])
def test_search_of_a_damaged_file_over_8_mib_finds_every_hit(quiet, tmp_path, damage):
    """A real >8 MiB file (the whole-file limit) with a cut-off last line or a conflict marker:
    the default reader finds what --reader harness and grep find, and says what it dropped."""
    pad = {"type": "custom", "customType": "pad", "data": "z" * (9 << 20), "id": "p1", "parentId": None,
           "timestamp": "2026-07-25T09:14:03.512Z"}
    lines = [header(), pad, user("u1", None, "find me"), assistant("a1", "u1"), user("u2", "a1", "find me again")]
    lines.insert(3, CONFLICT) if damage == "conflict" else lines.append(CUT)
    f = _write(tmp_path / "big.jsonl", lines)
    bad = 4 if damage == "conflict" else 6
    grep = [n for n, ln in enumerate(open(f, encoding="utf-8"), 1) if "find" in ln and ln.startswith('{"type": "message"')]
    for reader in ("auto", "harness"):
        r = invoke("search", "find", f, "--reader", reader, "--json")
        assert r.exit_code == 0, r.stderr
        doc = json.loads(r.stdout)
        assert [h["line"] for h in doc["hits"]] == grep
        assert doc["droppedLines"] == [{"path": f, "line": bad, "reason": "not valid JSON"}]
    human = invoke("search", "find", f)
    assert human.exit_code == 0 and f"{f}:{bad}: skipped: not valid JSON" in human.stderr


def test_search_view_says_beside_the_hits_that_lines_were_skipped(quiet, tmp_path):
    f = _damaged(tmp_path)
    r = invoke("search", "find", f)
    assert r.exit_code == 0
    assert "3 lines skipped" in r.stdout.splitlines()[0]


def test_search_files_in_the_core(tmp_path):
    """The command's loop is core: unreadable and non-session files set aside, results newest
    first, the JSON document with droppedLines beside the hits."""
    from pisess.core.analyses.search import parse_fields, search_files

    f = _damaged(tmp_path)
    newer = _write(tmp_path / "newer.jsonl", [header(id="n", timestamp="2027-01-01T00:00:00.000Z"),
                                              user("x1", None, "find this")])
    junk = _write(tmp_path / "junk.jsonl", [user("j1", None, "find me, no header")])
    report = search_files([newer, str(tmp_path / "missing.jsonl"), junk, f], make_matcher("find"))
    assert [r.path for r in report.results] == [newer, f]
    assert report.hit_count == 3 and report.files == 4
    assert [e.code for e in report.unreadable] == ["not_found"] and len(report.skipped) == 1
    doc = report.to_json()
    assert doc["droppedLines"] == [{"path": f, **d} for d in DROPPED]
    assert doc["sessionCount"] == 2 and len(doc["hits"]) == 3
    assert parse_fields(None) is None and parse_fields(" User, tool ") == ["user", "tool"]
    with pytest.raises(Exception, match="--in needs"):
        parse_fields(" , ")


GLUED_TWO = (json.dumps(user("g1", "u1", "find glued")) + json.dumps(user("g2", "g1", "and more")))


@pytest.mark.parametrize("regex", [False, True])
@pytest.mark.parametrize("small", [0, 1 << 20])
def test_hits_on_lines_no_reader_keeps_are_found(tmp_path, small, regex):
    """grep finds a match on a glued or cut-off line; so does search (where: dropped, field raw,
    the physical line), whichever way the file is read."""
    f = _write(tmp_path / "glued.jsonl", [header(), user("u1", None, "find one"), GLUED_TWO, assistant("a1", "u1"),
                                          CUT[:-4] + '"find me, cut'])
    r = search_file(f, make_matcher("find", regex=regex), small=small)
    assert [(h.entry_id, h.where, h.match.field, h.match.line) for h in r.hits] == [
        ("u1", "active", "user", 2), (None, "dropped", "raw", 3), (None, "dropped", "raw", 5)]
    assert "find glued" in r.hits[1].match.snippet
    assert r.hits[2].match.snippet.endswith('"find me, cut')
    assert [d["line"] for d in r.dropped_lines] == [3, 5]
    only = search_file(f, make_matcher("find", regex=regex), small=small, active_only=True)
    assert [h.entry_id for h in only.hits] == ["u1"]


def test_a_file_whose_only_hit_is_damaged(quiet, tmp_path):
    f = _write(tmp_path / "cut.jsonl", [header(), user("u1", None, "nothing"), CUT[:-4] + '"find me, cut'])
    r = invoke("search", "find", f)
    assert r.exit_code == 0
    assert "dropped" in r.stdout and "dropped: on a line no reader keeps" in r.stdout
    assert f"pisess validate {f}" in r.stderr and "--leaf None" not in r.stderr
    doc = json.loads(invoke("search", "find", f, "--json").stdout)
    assert [(h["entryId"], h["where"], h["line"]) for h in doc["hits"]] == [(None, "dropped", 3)]
