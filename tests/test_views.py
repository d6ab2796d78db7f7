"""The human views of tree, path and context: one rule for "behind the checkpoint", the active path
in the first column whatever the depth, long single lines shortened, one word per kind."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conftest import assistant, cli_runner, entry, header, invoke, message, user, write_session
from pisess.cli.app import app

BEHIND, ACTIVE, OTHER = "\u25d0", "\u25cf", "\u25cb"


@pytest.fixture()
def runner(monkeypatch):
    return cli_runner(monkeypatch, TZ="UTC")


def run(runner, *args: str):
    r = invoke(runner, *args)
    assert r.exit_code == 0, r.stdout + r.stderr
    return r.stdout


def compaction(id_, parent, first_kept, **fields):
    return entry("compaction", id_, parent, summary="the summary", firstKeptEntryId=first_kept, tokensBefore=100,
                 **fields)


def branchy(tmp_path, name="s.jsonl"):
    """A root path with a compaction keeping from c1, then a branch point at f1 whose first child
    is abandoned, and a side branch that branches again."""
    return write_session(tmp_path, [
        header(),
        user("a1", None, "first"), assistant("b1", "a1", "reply"), user("c1", "b1", "second"),
        assistant("d1", "c1", "answer"), compaction("e1", "d1", "c1"), user("f1", "e1", "after"),
        assistant("s1", "f1", "side one"), user("s2", "s1", "side two"), assistant("s3", "s2", "side three"),
        assistant("t1", "s1", "side side"),
        user("h1", "f1", "main"), assistant("i1", "h1", "main reply"),
    ], name)


MARK = re.compile(r"([\u25cf\u25cb\u25d0]) (\S+)  ")


def marks(text: str) -> dict:
    """id -> marker of each entry row of a tree or path view."""
    return {m.group(2): m.group(1) for m in map(MARK.search, text.splitlines()) if m}


# --- item 1: one rule for "behind the checkpoint" ------------------------------------------------


@pytest.mark.parametrize("reader", ["cli", "harness"])
def test_tree_marks_what_path_marks_behind_the_checkpoint(runner, tmp_path, reader):
    """The pi command's reader too: entries on the active path the context does not hold are ◐ in
    tree exactly where path shows them ◐."""
    f = branchy(tmp_path)
    tree = marks(run(runner, "tree", f, "--reader", reader, "--full", "--no-pager"))
    path = marks(run(runner, "path", f, "--reader", reader))
    assert {k for k, v in tree.items() if v == BEHIND} == {"a1", "b1"}
    assert all(tree[k] == v for k, v in path.items())
    if reader == "cli":
        assert path["a1"] == BEHIND


def test_tree_json_flags_compacted_for_the_cli_reader(runner, tmp_path):
    doc = json.loads(run(runner, "tree", branchy(tmp_path), "--reader", "cli", "--full", "--json"))
    compacted = [r["id"] for r in doc["rows"] if r["kind"] == "entry" and "compacted" in r["flags"]]
    assert compacted == ["a1", "b1"]


def test_pi16_system_message_dropped_by_the_checkpoint_is_behind_it_in_both_views(runner, tmp_path):
    """pi 1.6: a kept system message is replaced by the checkpoint's: neither view shows it as seen."""
    sysmsg = {"role": "system", "content": "be brief", "timestamp": 1}
    f = write_session(tmp_path, [header(), user("a1", None), message("y1", "a1", sysmsg), user("c1", "y1"),
                                 compaction("e1", "c1", "y1"), user("f1", "e1")])
    tree = marks(run(runner, "tree", f, "--reader", "cli", "--full", "--no-pager"))
    path = marks(run(runner, "path", f, "--reader", "cli"))
    assert tree["y1"] == path["y1"] == BEHIND and tree["c1"] == path["c1"] == ACTIVE


# --- items 2 and 3: the active path in the first column, whatever the depth -----------------------


def rows(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if MARK.search(ln) or "\u2506" in ln]


def test_active_path_stays_in_the_first_column(runner, tmp_path):
    """As git log --graph keeps the main line: every entry of the active path starts its row;
    side branches indent under a guide."""
    out = run(runner, "tree", branchy(tmp_path), "--reader", "cli", "--full", "--no-pager")
    by_id = {MARK.search(ln).group(2): ln for ln in rows(out)}
    for eid in ("a1", "b1", "c1", "d1", "e1", "f1", "h1", "i1"):
        assert by_id[eid][0] in (ACTIVE, BEHIND), by_id[eid]
    assert by_id["s1"].startswith("\u251c\u2500\u25cb s1")
    # in a side branch the last child continues its column, the earlier ones indent
    assert by_id["s2"].startswith("\u2502 \u251c\u2500\u25cb s2")
    assert by_id["s3"].startswith("\u2502 \u2502 \u25cb s3")
    assert by_id["t1"].startswith("\u2502 \u25cb t1")
    order = [MARK.search(ln).group(2) for ln in rows(out)]
    assert order == ["a1", "b1", "c1", "d1", "e1", "f1", "s1", "s2", "s3", "t1", "h1", "i1"]
    assert "\u25c0 leaf" in by_id["i1"]


def test_tree_json_indent_is_zero_along_the_active_path(runner, tmp_path):
    doc = json.loads(run(runner, "tree", branchy(tmp_path), "--reader", "cli", "--full", "--json"))
    assert {r["indent"] for r in doc["rows"] if r.get("active")} == {0}
    assert {r["id"]: r["indent"] for r in doc["rows"] if not r.get("active")} == \
        {"s1": 1, "s2": 2, "s3": 2, "t1": 1}


@pytest.mark.parametrize("depth", ["0", "1"])
def test_depth_folds_side_branches_only(runner, tmp_path, depth):
    """--depth N never folds the active path or the leaf; what it folds is counted."""
    out = run(runner, "tree", branchy(tmp_path), "--reader", "cli", "--full", "--depth", depth, "--no-pager")
    shown = marks(out)
    assert {"a1", "b1", "c1", "d1", "e1", "f1", "h1", "i1"} <= set(shown)
    assert "\u25c0 leaf" in next(ln for ln in out.splitlines() if "● i1 " in ln)
    if depth == "0":
        assert not {"s1", "s2", "s3", "t1"} & set(shown)
        assert "\u251c\u2500\u2506 \u2026 1 side branch, 4 entries \u2026" in out
    else:
        assert {"s1", "t1"} <= set(shown) and not {"s2", "s3"} & set(shown)
        assert "\u2502 \u251c\u2500\u2506 \u2026 1 side branch, 2 entries \u2026" in out


def test_depth_fold_counts_several_side_branches_in_one_row(runner, tmp_path):
    f = write_session(tmp_path, [header(), user("a1", None), user("x1", "a1"), user("y1", "a1"), user("y2", "y1"),
                                 user("m1", "a1")])
    out = run(runner, "tree", f, "--reader", "cli", "--depth", "0", "--no-pager")
    assert "\u2506 \u2026 2 side branches, 3 entries \u2026" in out
    doc = json.loads(run(runner, "tree", f, "--reader", "cli", "--depth", "0", "--json"))
    folds = [r for r in doc["rows"] if r["kind"] == "fold"]
    assert folds == [{"kind": "fold", "entryCount": 3, "branchCount": 2, "indent": 1}]


# --- item 4: context shortens one very long line too ----------------------------------------------


def long_messages(tmp_path):
    think = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t" * 200_000},
                                              {"type": "text", "text": "x" * 200_000}],
             "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 2}
    return write_session(tmp_path, [header(), user("u1", None, "y" * 200_000), message("a1", "u1", think)])


@pytest.mark.parametrize("extra", [[], ["--thinking"]])
def test_context_shortens_a_single_long_line_and_says_by_how_much(runner, tmp_path, monkeypatch, extra):
    """A 200,000-character message is not 2,500 rows at 80 columns: each text block is cut by
    characters as well as by lines, and the cut says how many characters are left out."""
    monkeypatch.setenv("COLUMNS", "80")
    out = run(runner, "context", long_messages(tmp_path), "--no-pager", *extra)
    assert len(out.splitlines()) < 400
    cuts = re.findall(r"\u2026 \[([\d,]+) more characters", out)
    assert len(cuts) == (3 if extra else 2)
    assert all(int(c.replace(",", "")) > 190_000 for c in cuts)
    if not extra:
        assert "thinking (200,000 chars, --thinking to show)" in out


def test_context_full_still_shows_a_long_assistant_text_whole_up_to_the_terminal_cap(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = run(runner, "context", long_messages(tmp_path), "--no-pager", "--full")
    assert out.count("x") >= 200_000


# --- item 5: the smaller ones ---------------------------------------------------------------------


def test_no_model_known_reads_model_unknown(runner, tmp_path):
    f = write_session(tmp_path, [header(), entry("model_change", "m1", None), user("u1", "m1")])
    out = run(runner, "context", f, "--no-pager")
    assert "model unknown" in out and "model /" not in out
    tree = run(runner, "tree", f, "--no-pager")
    assert re.search(r"m1 +model +unknown", tree) and " / " not in tree


def test_custom_messages_have_one_word_in_every_view(runner, tmp_path):
    """``ext msg`` in tree, du and context alike (search says it too)."""
    cm = entry("custom_message", "c1", "u1", customType="plan", content="be careful", display=True)
    f = write_session(tmp_path, [header(), user("u1", None), cm, user("u2", "c1")])
    assert re.search(r"c1 +ext msg ", run(runner, "tree", f, "--no-pager"))
    assert "ext msg (c1)" in run(runner, "context", f, "--no-pager")
    assert "ext msg" in run(runner, "du", f)
    ctx = run(runner, "context", f, "--no-pager")
    assert "custom (" not in ctx


def test_context_and_tree_show_the_same_timestamp_the_entrys(runner, tmp_path):
    """One rule, pi's own: a message is shown at the time of the entry it came from."""
    u = user("u1", None, "hi", ts="2026-07-25T09:14:03.512Z")
    u["message"]["timestamp"] = 1_000  # the message's own time (1970) differs
    f = write_session(tmp_path, [header(), u])
    assert "user (u1) \u00b7 09:14:03" in run(runner, "context", f, "--no-pager")
    assert "2026-07-25 09:14:03" in run(runner, "tree", f, "--time", "--no-pager")


def test_unknown_role_in_tree_is_its_text_not_json(runner, tmp_path):
    f = write_session(tmp_path, [header(), message("x1", None, {"role": "developer", "content": "hello", "n": 1})])
    out = run(runner, "tree", f, "--no-pager")
    assert re.search(r"x1 +developer +hello", out) and "{" not in out


# --- trailing spaces: none in any view -------------------------------------------------------------


@pytest.mark.parametrize("width", ["80", "100"])
def test_no_view_ends_a_row_in_spaces(runner, tmp_path, monkeypatch, width):
    """Rich's word wrap keeps the space it broke at; the printer drops it, on every view."""
    monkeypatch.setenv("COLUMNS", width)
    words = " ".join(f"word{i}" for i in range(80))
    f = write_session(tmp_path, [header(), user("u1", None, words), assistant("a1", "u1", words)])
    for argv in (["context", f, "--no-pager"], ["stats", f], ["du", f], ["tree", f, "--no-pager"], ["path", f],
                 ["search", "word1", f]):
        r = runner.invoke(app, argv, catch_exceptions=False)
        assert r.exit_code in (0, 1)
        assert [ln for ln in r.stdout.splitlines() if ln.endswith(" ")] == [], argv


# --- item 6: tables at 80 columns keep what matters -----------------------------------------------


def costly(tmp_path):
    m = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "provider": "anthropic",
         "model": "claude-a-very-long-model-name-4-5", "stopReason": "stop", "timestamp": 2,
         "usage": {"input": 1234567, "output": 45678, "cacheRead": 3456789, "cacheWrite": 234567,
                   "cost": {"total": 12.3456}}}
    name = entry("session_info", "n1", "u1", name="A session name far longer than any column should be")
    return write_session(tmp_path, [header(), user("u1", None), name, message("a1", "n1", m)])


@pytest.mark.parametrize("by", ["session", "model", "branch", "day"])
def test_stats_by_table_keeps_cost_at_80_columns(runner, tmp_path, monkeypatch, by):
    """The label column shrinks (its cells end in …) before a number column goes; COST and INPUT
    never go, and what does is named."""
    monkeypatch.setenv("COLUMNS", "80")
    out = run(runner, "stats", costly(tmp_path), "--by", by)
    lines = out.splitlines()
    head = next(ln for ln in lines if "INPUT" in ln)
    assert "COST" in head and "OUTPUT" in head
    row = next(ln for ln in lines if "$12.3456" in ln and not ln.startswith("  cost"))
    assert len(row) <= 80 and not row.endswith("\u2026")
    assert all(len(ln) <= 80 for ln in lines)
    if by == "session":
        assert row.startswith("  01984a3c  A sess") and "\u2026" in row
    missing = [c for c in ("MSGS", "CACHE R", "CACHE W", "TOOLS", "ERR") if c not in head]
    if missing:
        assert f"({', '.join(missing)} left out at 80 columns" in out


def test_du_table_fits_80_columns(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = run(runner, "du", costly(tmp_path))
    head = next(ln for ln in out.splitlines() if "SESSION" in ln and "SIZE" in ln)
    assert "CONTEXT" in head and "BRANCHES" in head and not head.endswith("\u2026")
    assert all(len(ln) <= 80 for ln in out.splitlines())
    assert all(not ln.endswith("\u2026") for ln in out.splitlines() if ln.startswith(("  SESSION", "  01984a3c", "where")))


def test_ls_all_long_keeps_the_project_at_80_columns(runner, tmp_path, monkeypatch):
    """The name gives up its width before the CWD is cut off: each row ends in its project."""
    import shutil
    from importlib import resources

    monkeypatch.setenv("COLUMNS", "80")
    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as src:
        shutil.copytree(src, tmp_path / "sessions")
    out = run(runner, "ls", "--all", "--long", "--sessions-dir", str(tmp_path / "sessions"))
    rows = [ln for ln in out.splitlines() if ln.startswith("  01955b3b")]
    assert len(rows) == 3 and all(len(ln) <= 80 and ln.endswith(("/webapp", "/agent")) for ln in rows)


def _roots_session(tmp_path) -> str:
    from conftest import assistant, header, user, write_session

    return write_session(tmp_path, [header(), user("mc1", None, "first root"), assistant("oc-custom-1", "mc1"),
                                    user("mc2", "oc-custom-1", "more"), user("r2a", None, "second root"),
                                    assistant("r2b", "r2a"), user("root-three", None, "third"),
                                    assistant("x9", "root-three")])


def test_tree_marks_where_each_root_starts(tmp_path, monkeypatch):
    """A second root was drawn in column 0 right under the first root's last entry, as if it were
    that entry's child: each root's first row is announced (a blank line, ``root 2 of 3``)."""
    from conftest import cli_runner, invoke

    out = invoke(cli_runner(monkeypatch, columns=80), "tree", _roots_session(tmp_path)).stdout.splitlines()
    assert out[1] == "root 1 of 3" and out[2].split()[1] == "mc1"
    at = out.index("root 2 of 3")
    assert out[at - 1] == "" and out[at + 1].split()[1] == "r2a"
    at = out.index("root 3 of 3")
    assert out[at - 1] == "" and out[at + 1].split()[1] == "root-thr"
    from conftest import header, user, write_session

    lone = invoke(cli_runner(monkeypatch, columns=80), "tree", write_session(tmp_path, [header(), user("u1", None)]))
    assert "root 1 of" not in lone.stdout


@pytest.mark.parametrize("command", ["tree", "path"])
def test_the_entry_id_column_is_padded_to_the_session_id_width(tmp_path, monkeypatch, command):
    """Ids of other writers differ in length (``mc2``, ``oc-custom-1``): the kind column after
    them starts in one column on every row, as the README promises."""
    from conftest import assistant, cli_runner, header, invoke, user, write_session

    path = write_session(tmp_path, [header(), user("mc1", None, "q"), assistant("oc-custom-1", "mc1", "a"),
                                    user("mc2", "oc-custom-1", "q2"), assistant("a-much-longer-id-4", "mc2", "a2")])
    out = invoke(cli_runner(monkeypatch, columns=80), command, path).stdout.splitlines()
    rows = [line for line in out if " user " in line or " assistant " in line]
    assert len(rows) == 4
    starts = {line.index("user") if " user " in line else line.index("assistant") for line in rows}
    assert len(starts) == 1, rows


def test_ls_lists_a_session_pi_read_no_activity_time_for():
    """With pi 1.6's order the LAST ACTIVE column is there; a session whose file gave no time shows
    ``-`` in it (it was a KeyError, a traceback in ls on the hostile corpus)."""
    from types import SimpleNamespace

    from pisess.cli.views.listing import ls_view

    def session(sid: str, modified: Any):
        return SimpleNamespace(id=sid, listing="cli", activity_read="file", created_at="2026-01-01T00:00:00.000Z",
                               size=10, parent_session_path=None, cwd="/p", modified=modified, path=f"/s/{sid}.jsonl")

    listing = SimpleNamespace(sessions=[session("0195aaaa-1", 1767225600000), session("0195bbbb-2", None)],
                              directories=["/s"])
    rows = [t.plain for t in ls_view(listing, SimpleNamespace(root="/s", cwd="/p"), all_projects=False, details=None,
                                     width=100, now_ms=1767225600000)]
    assert "LAST ACTIVE" in rows[1]
    assert any("0195bbbb" in r and " - " in r for r in rows), rows


# --- the legend explains the marks the tree draws, and no other ----------------------------------------------


def legend_of(text: str) -> str:
    return text.rstrip("\n").splitlines()[-1]


def test_the_legend_names_only_the_marks_drawn(tmp_path, runner):
    """A file without a compaction draws no ◐ and no ◆, and a file without a side branch no ○: the
    legend names them only where rows carry them (the checkpoint file keeps all four)."""
    plain = write_session(tmp_path, [header(), user("a1", None, "q"), assistant("b1", "a1", "r")], "plain.jsonl")
    out = run(runner, "tree", plain)
    assert legend_of(out) == f"{ACTIVE} active path"
    forked = write_session(tmp_path, [header(), user("a1", None, "q"), assistant("b1", "a1", "r"),
                                      assistant("b2", "a1", "s")], "forked.jsonl")
    assert legend_of(run(runner, "tree", forked)) == f"{ACTIVE} active path  {OTHER} other branches"
    out = run(runner, "tree", branchy(tmp_path))
    assert BEHIND in out and "\u25c6" in out
    assert legend_of(out) == (f"{ACTIVE} active path  {OTHER} other branches  {BEHIND} behind the checkpoint  "
                              "\u25c6 checkpoint")
    # path's legend alike: ◐ only where an entry is replaced by the compaction summary
    assert legend_of(run(runner, "path", plain)) == f"{ACTIVE} the model sees it"
    assert f"{BEHIND} replaced by the compaction summary" in legend_of(run(runner, "path", branchy(tmp_path, "b.jsonl")))
