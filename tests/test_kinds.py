"""The kind table (pisess.core.model.kinds): one row per (entry type, message role), and every view
(tree, path, search, du, watch) takes its words, styles and previews from it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import assistant, cli_runner, entry, examples, header, invoke, message, user, write_session
from pisess.cli.views import describe as d
from pisess.cli.views.watch import _row as _watch_row
from pisess.core import versions
from pisess.core.analyses import validate
from pisess.core.model import kinds

# one message of every role the message model has words for, and one entry of every other type
ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "branchSummary",
         "compactionSummary", "system")
TYPES = ("message", "model_change", "thinking_level_change", "active_tools_change", "compaction", "branch_summary",
         "label", "session_info", "custom", "custom_message", "leaf", "context_edit", "usage")


def test_every_type_and_role_pisess_reads_has_exactly_one_row():
    keys = [(k.type, k.role) for k in kinds.KINDS]
    assert len(keys) == len(set(keys))
    assert {t for t, r in keys if r is None} | {"message"} == set(TYPES)
    assert {r for t, r in keys if t == "message"} == set(ROLES)
    # validate's known types are the table's, version by version
    assert validate.known_types(versions.PI_1_6) == set(TYPES)
    assert validate.known_types(versions.PI_0_82) == set(TYPES) - {"context_edit", "usage"}


def test_rows_are_well_formed():
    for k in (*kinds.KINDS, *kinds.PARTS):
        assert len(k.word) <= 10, k  # tree's and path's kind column
        assert k.style in kinds.STYLES and k.style in d.STYLE, k
        assert k.search is None or k.search in kinds.FIELDS, k
    # a word has one style wherever it appears (search styles a hit by its word)
    styles: dict = {}
    for k in (*kinds.KINDS, *kinds.PARTS):
        assert styles.setdefault(k.word, k.style) == k.style, k.word
    assert set(d.STYLE) == set(kinds.STYLES)


def test_unknown_types_and_roles_get_a_made_up_row():
    assert kinds.of("bookmark").word == "?bookmark"
    assert kinds.of_entry({"type": "message", "message": {"role": "weird"}}).word == "weird"
    assert kinds.of_entry({"type": "message", "message": {"role": {"x": 1}}}).word == '{"x":1}'
    assert kinds.of_entry({"type": "message", "message": "text"}).word == "message"
    assert kinds.preview({"type": "message", "message": {"role": "weird", "content": "hello"}}) == "hello"


def _every_kind() -> list:
    """A session holding one entry of every row (on one path, so tree, path and search show each)."""
    msgs: dict[str, dict] = {
        "user": {"role": "user", "content": "u text", "timestamp": 1},
        "assistant": {"role": "assistant", "content": [{"type": "text", "text": "a text"}], "api": "x",
                      "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2},
        "toolResult": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                       "content": [{"type": "text", "text": "r text"}], "isError": False, "timestamp": 3},
        "bashExecution": {"role": "bashExecution", "command": "ls", "output": "b text", "exitCode": 0,
                          "timestamp": 4},
        "custom": {"role": "custom", "customType": "ext", "content": "c text", "display": True, "timestamp": 5},
        "hookMessage": {"role": "hookMessage", "customType": "hook", "content": "h text", "display": True,
                        "timestamp": 6},
        "branchSummary": {"role": "branchSummary", "summary": "bs text", "fromId": "x", "timestamp": 7},
        "compactionSummary": {"role": "compactionSummary", "summary": "cs text", "tokensBefore": 1, "timestamp": 8},
        "system": {"role": "system", "content": "sys text", "timestamp": 9},
    }
    lines: list = [header()]
    parent = None
    for i, role in enumerate(ROLES):
        lines.append(message(f"m{i}", parent, msgs[role]))
        parent = f"m{i}"
    others = [
        ("model_change", {"provider": "p", "modelId": "m"}), ("thinking_level_change", {"thinkingLevel": "high"}),
        ("active_tools_change", {"activeToolNames": ["read"]}), ("custom", {"customType": "st", "data": {}}),
        ("custom_message", {"customType": "ext", "content": "cm text", "display": True}),
        ("label", {"targetId": "m0", "label": "lbl text"}), ("session_info", {"name": "nm text"}),
        ("usage", {"kind": "title", "provider": "p", "model": "m", "usage": {"input": 1, "output": 1}}),
        ("context_edit", {"targetId": "m2", "replacement": {"role": "toolResult", "toolCallId": "c1",
                                                            "toolName": "read", "content": "ed text",
                                                            "isError": False, "timestamp": 3}}),
        ("branch_summary", {"fromId": "m0", "summary": "bsum text"}),
        ("compaction", {"summary": "comp text", "firstKeptEntryId": "m0", "tokensBefore": 100}),
        ("leaf", {"targetId": "e11"}),
    ]
    for i, (t, fields) in enumerate(others):
        lines.append(entry(t, f"e{i}", parent, **fields))
        parent = f"e{i}"
    lines.append(user("u9", parent, "end text"))
    return lines


def _row_of(out: str, entry_id: str) -> str:
    return next(ln for ln in out.splitlines() if f" {entry_id}  " in ln)


def test_tree_path_and_du_show_the_tables_word_for_every_row(tmp_path, monkeypatch):
    lines = _every_kind()
    src = write_session(tmp_path, lines)
    runner = cli_runner(monkeypatch, 160)
    tree = invoke(runner, "tree", src, "--full", "--no-pager", "--reader", "cli")
    path = invoke(runner, "path", src, "--reader", "cli")
    assert tree.exit_code == 0 and path.exit_code == 0, (tree.stderr, path.stderr)
    seen = set()
    for e in lines[1:]:
        k = kinds.of_entry(e)
        seen.add((k.type, k.role))
        for out in (tree.stdout, path.stdout):
            row = _row_of(out, e["id"])
            assert f" {k.word:<10} " in row, (k.word, row)
            assert kinds.preview(e, 8)[:12] in row, (kinds.preview(e, 8), row)
        watch_row = _watch_row(e, [], id_width=8).plain  # watch's row of an appended entry
        assert f" {k.word:<10} " in watch_row and kinds.preview(e, 8)[:12] in watch_row, watch_row
    assert seen >= {(k.type, k.role) for k in kinds.KINDS}
    du = invoke(runner, "du", src, "--json")
    assert du.exit_code == 0, du.stderr
    du_text = invoke(runner, "du", src).stdout
    for row in json.loads(du.stdout)["byKind"]:
        word = kinds.of(row["type"], row["role"]).word
        assert re.search(rf"^  {re.escape(word)} +\d+ entr", du_text, re.M), (word, du_text)


def test_search_hits_carry_the_tables_word_and_field(tmp_path, monkeypatch):
    src = write_session(tmp_path, _every_kind())
    runner = cli_runner(monkeypatch, 160)
    r = invoke(runner, "search", "text", src, "--json", "--reader", "cli")
    assert r.exit_code == 0, r.stderr
    by_id = {h["entryId"]: h for h in json.loads(r.stdout)["hits"]}
    text = invoke(runner, "search", "text", src, "--reader", "cli").stdout
    searched = set()
    for e in _every_kind()[1:]:
        k = kinds.of_entry(e)
        if k.search is None:
            assert e["id"] not in by_id
            continue
        searched.add((k.type, k.role))
        assert by_id[e["id"]]["field"] == k.search, (e["id"], by_id[e["id"]])
        assert re.search(rf"^  {e['id']} +{k.word:<10} ", text, re.M), (e["id"], k.word)
    assert searched == {(k.type, k.role) for k in kinds.KINDS if k.search is not None}


# --- a new kind is one row ----------------------------------------------------------------------------


def _bookmark_preview(e: Any, id_width: int = 8) -> str:
    return f"bookmark {e.get('note')}"


def _bookmark_texts(e: Any, k: kinds.Kind) -> Iterator[kinds.Found]:
    if isinstance(e.get("note"), str):
        yield k.search or "", k.word, "", e["note"]


@pytest.fixture
def bookmark_row():
    row = kinds.Kind("bookmark", None, "bookmark", "mark", (9, 0, 0), "kept", "label", _bookmark_preview,
                     _bookmark_texts)
    kinds.register(row)
    yield row
    kinds.unregister("bookmark")


def test_a_new_kind_is_one_row_and_every_view_follows(tmp_path, monkeypatch, bookmark_row):
    lines = [header(), user("u1", None, "hi"), entry("bookmark", "b1", "u1", note="remember this place"),
             assistant("a1", "b1", "ok")]
    src = write_session(tmp_path, lines)
    runner = cli_runner(monkeypatch, 120)
    for cmd in ("tree", "path"):
        r = invoke(runner, cmd, src, *(["--no-pager"] if cmd == "tree" else []))
        assert r.exit_code == 0, r.stderr
        row = _row_of(r.stdout, "b1")
        assert "bookmark   bookmark remember this place" in row, row
    assert "bookmark   bookmark remember this place" in _watch_row(lines[2], [], id_width=8).plain
    r = invoke(runner, "search", "remember", src, "--json")
    hit = json.loads(r.stdout)["hits"][0]
    assert (hit["entryId"], hit["field"]) == ("b1", "label")
    assert re.search(r"^  b1 +bookmark   active", invoke(runner, "search", "remember", src).stdout, re.M)
    r = invoke(runner, "search", "remember", src, "--in", "user")
    assert r.exit_code == 1  # not a user text: the row's field decides
    r = invoke(runner, "du", src)
    assert re.search(r"^  bookmark +1 entry", r.stdout, re.M), r.stdout
    # the pi release it appears from: pi 1.6 does not know it, a pi 9 would
    assert "bookmark" not in validate.known_types(versions.PI_1_6)
    assert "bookmark" in kinds.known_types("9.0.0")
    # never folded away in a long run (the row's tree setting)
    long = [header(), user("u0", None, "hi")] + [user(f"u{i}", f"u{i - 1}", "x") for i in range(1, 30)]
    long.append(entry("bookmark", "b1", "u29", note="n"))
    long += [user(f"v{i}", "b1" if i == 0 else f"v{i - 1}", "y") for i in range(30)]
    r = invoke(runner, "tree", write_session(tmp_path, long, name="long.jsonl"), "--no-pager")
    assert "…" in r.stdout and " b1 " in r.stdout


def test_a_tool_results_first_line_is_its_stripped_texts_first():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pisess.core.model.kinds import _first_line

    @settings(max_examples=examples(300), deadline=None)
    @given(st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "\t", "\r", "\u2028", "\x1c", "\u00a0", "é"])))
    def check(text):
        assert _first_line(text) == (text.strip().split("\n", 1)[0] if text else "")
    check()
