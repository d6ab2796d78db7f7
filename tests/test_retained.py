"""Entries a compaction keeps verbatim in its ``retainedTail`` (pi's SDK) have their own placement,
``retained``: the model sees their copy, so they are neither ``compacted`` (replaced by the summary)
nor left out by ``--active-only``.  The pi command ignores ``retainedTail`` and keeps the originals
through ``firstKeptEntryId`` (pi 1.6.0's oracle: contextEntryIds [c1, u2, a2, u3]): ``active`` there."""

from __future__ import annotations

import json

import pytest

from answers_store import invoke
from conftest import assistant, entry, header, user
from pisess.core.analyses.search import make_matcher
from pisess.core.analyses.search.scan import search_file
from pisess.core.model.context import build_context
from pisess.core.model.placement import place
from pisess.core.reading.session import open_session


def _tail_of(*entries):
    return [e["message"] for e in entries]


def _write(path, lines) -> str:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return str(path)


def _file(tmp_path, first_kept="u2") -> str:
    u1, a1 = user("u1", None, "old question"), assistant("a1", "u1", "old answer")
    u2, a2 = user("u2", "a1", "kept question"), assistant("a2", "u2", "kept answer")
    c1 = entry("compaction", "c1", "a2", summary="SUM", firstKeptEntryId=first_kept, tokensBefore=10,
               retainedTail=_tail_of(u2, a2))
    u3 = user("u3", "c1", "new question")
    return _write(tmp_path / "retained.jsonl", [header(), u1, a1, u2, a2, c1, u3])


@pytest.fixture()
def quiet(monkeypatch, tmp_path):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("PISESS_CACHE", "off")
    monkeypatch.chdir(tmp_path)


def _where(path, reader, **kw):
    s = open_session(path, reader, light=True, **kw)
    pl = place(s, branches=False)
    return {e["id"]: w for e, w in zip(s.entries, pl.where)}


def test_placement_of_retained_originals(tmp_path):
    f = _file(tmp_path)
    assert _where(f, "harness") == {"u1": "compacted", "a1": "compacted", "u2": "retained", "a2": "retained",
                                    "c1": "active", "u3": "active"}
    # what the harness's context holds: the summary, then the copies of u2 and a2, then u3
    ctx = build_context(open_session(f, "harness"))
    assert [m["role"] for m in ctx.messages] == ["compactionSummary", "user", "assistant", "user"]
    seen = json.dumps(ctx.messages)
    assert "kept question" in seen and "kept answer" in seen and "old question" not in seen


@pytest.mark.parametrize("pi_version", ["1.6.0", "0.82.1"])
def test_the_pi_command_keeps_the_originals_themselves(tmp_path, pi_version):
    f = _file(tmp_path)
    assert _where(f, "cli", pi_version=pi_version) == {"u1": "compacted", "a1": "compacted", "u2": "active",
                                                       "a2": "active", "c1": "active", "u3": "active"}


def test_a_first_kept_id_off_the_path_retains_nothing(tmp_path):
    f = _file(tmp_path, first_kept="nowhere")
    assert set(_where(f, "harness").values()) == {"compacted", "active"}


@pytest.mark.parametrize("small", [0, 1 << 20])
def test_search_and_active_only(tmp_path, small):
    f = _file(tmp_path)
    got = search_file(f, make_matcher("question"), small=small)
    assert [(h.entry_id, h.where) for h in got.hits] == [("u1", "compacted"), ("u2", "retained"), ("u3", "active")]
    kept = search_file(f, make_matcher("question"), active_only=True, small=small)
    assert [(h.entry_id, h.where) for h in kept.hits] == [("u2", "retained"), ("u3", "active")]


def test_cli_views_and_json(quiet, tmp_path):
    f = _file(tmp_path)
    r = invoke("search", "question", f)
    assert r.exit_code == 0
    assert any("u2" in ln and "retained" in ln for ln in r.stdout.splitlines())
    assert "retained: a copy in the checkpoint" in r.stdout
    doc = json.loads(invoke("search", "question", f, "--active-only", "--json").stdout)
    assert [(h["entryId"], h["where"]) for h in doc["hits"]] == [("u2", "retained"), ("u3", "active")]
    du = json.loads(invoke("du", f, "--json").stdout)
    assert du["entryCountByWhere"] == {"active": 2, "edited": 0, "retained": 2, "compacted": 2, "branch": 0}
    st = json.loads(invoke("stats", f, "--json").stdout)
    assert {k: v["entryCount"] for k, v in st["where"].items()} == {"active": 2, "edited": 0, "retained": 2, "compacted": 2,
                                                                 "branch": 0}
    assert "RETAINED" in invoke("stats", f).stdout
    assert "retained" in invoke("du", f).stdout


def test_no_retained_column_without_a_retained_tail(quiet, tmp_path):
    f = _write(tmp_path / "plain.jsonl", [header(), user("u1", None, "q"), assistant("a1", "u1")])
    out = invoke("stats", f).stdout
    assert "IN CONTEXT" in out and "RETAINED" not in out


def test_tree_flags_retained_entries_apart(quiet, tmp_path):
    f = _file(tmp_path)
    rows = {r["id"]: r["flags"] for r in json.loads(invoke("tree", f, "--json").stdout)["rows"]}
    assert rows["u1"] == ["compacted"] and rows["a1"] == ["compacted"]
    assert rows["u2"] == ["retained"] and rows["a2"] == ["retained"]
    marks = [ln.split()[0] for ln in invoke("tree", f, "--no-pager").stdout.splitlines()[1:5]]
    assert marks == ["\u25d0"] * 4  # all four behind the checkpoint
