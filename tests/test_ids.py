"""Ids as views show them and arguments take them: the shortest unique prefix, at least 8 characters.

Writers other than pi make ids that are not 8 hex characters (OpenClaw's ``oc-custom-…``); two of
them sharing their first 8 characters must never look alike in a view, and any prefix of exactly
one id names it wherever an entry id is taken.
"""

from __future__ import annotations

import json
import os
import random
import uuid

import pytest

from conftest import CWD, assistant, cli_runner, entry, header, invoke, user, write_session
from pisess.core.errors import PisessError
from pisess.core.ids import PrefixWidth, matching_ids, unique_prefix_width
from pisess.core.reading.session import open_session

A, B = "oc-custom-alpha", "oc-custom-beta"  # share 10 characters: 11 tell them apart


def lines() -> list:
    return [header(), user("u1", None, "first question"), assistant(A, "u1", "first answer"),
            user("u2", A, "second question"), assistant(B, "u2", "second answer about needle")]


@pytest.fixture()
def src(tmp_path) -> str:
    return write_session(tmp_path, lines())


@pytest.fixture()
def runner(monkeypatch):
    return cli_runner(monkeypatch, columns=120)


run = invoke


# --- the width -------------------------------------------------------------------------------------


def test_width_is_8_for_pi_ids_and_grows_until_ids_differ():
    assert unique_prefix_width(["84750ea5", "0badc0de", "u1"]) == 8
    assert unique_prefix_width([A, B]) == 11
    assert unique_prefix_width(["abcdefgh", "abcdefghij"]) == 9  # one id is a prefix of the other
    assert unique_prefix_width([A, A, None, 5]) == 8  # duplicates and non-strings do not count
    assert unique_prefix_width([]) == 8


def _least_width(ids: list) -> int:
    """The definition, tried width by width."""
    distinct = set(ids)
    w = 8
    while len({i[:w] for i in distinct}) < len(distinct):
        w += 1
    return w


def test_width_as_ids_arrive_equals_the_width_of_all():
    rnd = random.Random(13)
    for _ in range(300):
        seen = []
        grow = PrefixWidth()
        for _ in range(rnd.randint(1, 30)):
            eid = "".join(rnd.choice("ab") for _ in range(rnd.randint(1, 14)))
            seen.append(eid)
            grow.add(eid)
            assert grow.width == unique_prefix_width(seen) == _least_width(seen)


def test_session_width_is_computed_once(src):
    s = open_session(src, "cli", light=True)
    assert s.id_width == 11
    assert "id_width" in vars(s)  # cached on the session


def test_matching_ids():
    assert matching_ids("oc-custom-", [A, B, "x", None]) == [A, B]
    assert matching_ids("", [A]) == []


# --- resolving an argument -------------------------------------------------------------------------


def test_entry_id_exact_prefix_ambiguous_and_missing(src):
    s = open_session(src, "cli", light=True)
    assert s.entry_id(A) == A
    assert s.entry_id("oc-custom-b") == B
    with pytest.raises(PisessError) as e:
        s.entry_id("oc-custo", option="--leaf")
    assert e.value.code == "ambiguous" and A in e.value.message and B in e.value.message
    assert "line 3" in e.value.message and "line 5" in e.value.message and e.value.path == src
    with pytest.raises(PisessError) as e:
        s.entry_id("zzz", option="--leaf")
    assert e.value.code == "usage" and e.value.path == src and "--leaf" in e.value.message
    assert s.entry_id("zzz", keep_unknown=True) == "zzz"


def test_an_exact_id_wins_over_the_longer_ids_it_starts(tmp_path):
    f = write_session(tmp_path, [header(), user("abcdefgh", None), assistant("abcdefghij", "abcdefgh")])
    s = open_session(f, "cli", light=True)
    assert s.entry_id("abcdefgh") == "abcdefgh" and s.entry_id("abcdefghi") == "abcdefghij"


# --- views show the unique prefix ------------------------------------------------------------------


def test_tree_and_path_show_ids_that_differ(runner, src):
    for cmd in ("tree", "path"):
        r = run(runner, cmd, src)
        assert r.exit_code == 0, r.stderr
        assert "oc-custom-a" in r.stdout and "oc-custom-b" in r.stdout, (cmd, r.stdout)
    tree = run(runner, "tree", src).stdout
    assert "leaf oc-custom-b" in tree


def test_context_shows_ids_that_differ(runner, src):
    r = run(runner, "context", src, "--no-pager")
    assert r.exit_code == 0 and "leaf oc-custom-b" in r.stdout
    assert "assistant (oc-custom-a)" in r.stdout and "assistant (oc-custom-b)" in r.stdout


def test_search_and_du_show_ids_that_differ(runner, src):
    r = run(runner, "search", "needle", src)
    assert r.exit_code == 0 and "oc-custom-b" in r.stdout, r.stdout
    r = run(runner, "du", src)
    assert r.exit_code == 0 and "oc-custom-a" in r.stdout and "oc-custom-b" in r.stdout, r.stdout


def test_export_shows_ids_that_differ(runner, src, tmp_path):
    out = tmp_path / "out.md"
    r = run(runner, "export", src, "-o", str(out))
    assert r.exit_code == 0 and "leaf oc-custom-b)" in r.stderr, r.stderr
    assert "*entry oc-custom-a ·" in out.read_text() and "*entry oc-custom-b ·" in out.read_text()


def test_hex_ids_stay_8_characters(runner, tmp_path):
    f = write_session(tmp_path, [header(), user("0badc0de", None), assistant("0badc0df", "0badc0de")])
    r = run(runner, "tree", f)
    assert "leaf 0badc0df" in r.stdout


def test_watch_rows_show_ids_that_differ():
    from pisess.cli.views.watch import _row
    from pisess.core.model.follow import SessionState

    state = SessionState()
    for n, v in enumerate(lines(), 1):
        state.feed(n, 0, json.dumps(v).encode())
    assert state.id_width == 11
    assert "oc-custom-b" in _row(lines()[-1], [], id_width=state.id_width).plain


# --- arguments take any unique prefix --------------------------------------------------------------


@pytest.mark.parametrize("cmd", ["tree", "path", "context", "export"])
def test_leaf_takes_a_unique_prefix(runner, src, cmd):
    r = run(runner, cmd, src, "--leaf", "oc-custom-a", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["leafId"] == A


@pytest.mark.parametrize("cmd", ["tree", "path", "context", "export"])
def test_leaf_ambiguous_is_1_and_missing_is_2(runner, src, cmd):
    r = run(runner, cmd, src, "--leaf", "oc-custo", "--json")
    assert r.exit_code == 1
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "ambiguous" and A in err["message"] and B in err["message"]
    assert A in r.stderr and B in r.stderr
    r = run(runner, cmd, src, "--leaf", "nothere", "--json")
    assert r.exit_code == 2 and src in r.stderr and json.loads(r.stdout)["error"]["code"] == "usage"


def test_fork_takes_a_unique_prefix(runner, src):
    r = run(runner, "fork", src, "oc-custom-a", "--position", "at", "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    assert [e["id"] for e in json.loads(r.stdout)["entries"]][-1] == A
    r = run(runner, "fork", src, "oc-custo", "--position", "at", "--dry-run", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["code"] == "ambiguous"


def test_fork_of_an_unknown_entry_keeps_pi_answer(runner, src):
    r = run(runner, "fork", src, "nope0000", "--dry-run", "--json", "--reader", "harness")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["code"] == "invalid_fork_target"


# --- fork's resume hint ----------------------------------------------------------------------------


def test_fork_prints_a_session_prefix_unique_in_its_directory(runner, tmp_path, monkeypatch):
    import uuid6

    root = tmp_path / "sessions"
    project = root / ("--" + CWD.strip("/").replace("/", "-") + "--")
    sibling = "01a23b97-0000-7000-8000-000000000001"  # made in the same minute as the fork
    src = write_session(project, [header(id=sibling), user("u1", None), assistant("a1", "u1")],
                        name=f"2026-01-01T00-00-00-000Z_{sibling}.jsonl")
    new = uuid.UUID("01a23b97-5555-7000-8000-000000000002")
    monkeypatch.setattr(uuid6, "uuid7", lambda: new)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))  # (root is where pi looks: a prefix finds it)
    r = run(runner, "fork", src, "a1", "--position", "at", "--sessions-dir", str(root))
    assert r.exit_code == 0, r.stderr
    assert "resume it with: pi --session 01a23b97-5\n" in r.stderr, r.stderr
    written = [p for p in os.listdir(project) if str(new) in p]
    assert written, os.listdir(project)


def test_fork_outside_pi_root_names_the_file_pi_would_not_find_by_id(runner, tmp_path, monkeypatch):
    """``fork --sessions-dir DIR`` where pi does not look (not $PI_CODING_AGENT_DIR/sessions, not
    ~/.pi/agent/sessions): an id finds nothing there, so the hint is the whole path, quoted for
    the shell (a project directory may hold spaces)."""
    import shlex

    root = tmp_path / "other sessions"
    project = root / ("--" + CWD.strip("/").replace("/", "-") + "--")
    src = write_session(project, [header(), user("u1", None), assistant("a1", "u1")], name="src.jsonl")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    r = run(runner, "fork", src, "a1", "--position", "at", "--sessions-dir", str(root))
    assert r.exit_code == 0, r.stderr
    written = r.stdout.strip()
    assert os.path.dirname(written) == str(project)
    assert f"resume it with: pi --session {shlex.quote(written)}\n" in r.stderr, r.stderr
    assert shlex.split(r.stderr.splitlines()[-1].split("resume it with: ")[1]) == ["pi", "--session", written]


# --- counts: one spelling per idea, never negative -------------------------------------------------


@pytest.mark.parametrize("argv", [["context", "--max-lines", "-1"], ["context", "-n", "-1"], ["context", "--lines", "-3"],
                                  ["export", "--max-lines", "-1"], ["du", "--top", "-1"], ["du", "-n", "-2"],
                                  ["tree", "--depth", "-1"], ["watch", "--count", "0"]])
def test_a_negative_count_is_a_usage_error_everywhere(argv, src, capsys):
    from pisess.cli.app import run as main

    assert main([argv[0], src, *argv[1:], "--json"]) == 2
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["error"]["code"] == "usage" and "or more, not" in doc["error"]["message"]
    assert main([argv[0], src, *argv[1:]]) == 2
    assert capsys.readouterr().out == ""


def long_result_lines() -> list:
    tool = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False, "timestamp": 3,
            "content": [{"type": "text", "text": "\n".join(f"row {i}" for i in range(40))}]}
    return [header(), user("u1", None, "run it"), entry("message", "t1", "u1", message=tool)]


def test_max_lines_is_one_idea_in_context_and_export(runner, tmp_path):
    f = write_session(tmp_path, long_result_lines())
    ctx = run(runner, "context", f, "--no-pager", "--max-lines", "5").stdout
    assert "row 4" in ctx and "row 5" not in ctx
    assert run(runner, "context", f, "--no-pager", "--lines", "5").stdout == ctx  # the old spelling
    assert run(runner, "context", f, "--no-pager", "-n", "5").stdout == ctx
    every = run(runner, "context", f, "--no-pager", "--max-lines", "0").stdout
    assert "row 39" in every  # 0 keeps every line, as in export
    md = run(runner, "export", f, "--max-lines", "0").stdout
    assert "row 39" in md


def test_old_spellings_are_hidden_aliases(runner, src):
    assert run(runner, "du", src, "-n", "1", "--json").stdout == run(runner, "du", src, "--top", "1", "--json").stdout
    r = run(runner, "fork", src, "u2", "-n", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["dryRun"] is True
    for cmd, gone in (("context", "--lines"), ("du", "-n,"), ("fork", "-n,")):
        h = run(runner, cmd, "-h").stdout
        assert gone not in h, (cmd, h)
    assert "--max-lines" in run(runner, "context", "-h").stdout and "--dry-run" in run(runner, "fork", "-h").stdout


def test_demo_names_each_session_by_a_prefix_only_it_has(runner):
    """The example sessions were made in the same minute: 8 characters name none of them."""
    import re
    from importlib import resources

    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as root:
        ids = [p.stem.split("_", 1)[1] for p in root.rglob("*.jsonl")]
    assert len({i[:8] for i in ids}) == 1 < len(ids)
    named = re.findall(r"\$ pisess (?:tree|context|path) (\S+)", run(runner, "demo").stdout)
    assert len(named) == len(ids) + 2
    for prefix in named:
        assert len([i for i in ids if i.startswith(prefix)]) == 1, prefix
