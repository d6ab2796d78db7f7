"""pisess stats: golden views, exact sums, fork de-duplication, the where split, --by, local days."""

from __future__ import annotations

import json
import time

import pytest

from answers_store import CWD, F_ID, H_ID, P_ID, invoke
from conftest import check_golden

ROOT = ["--sessions-dir", "sessions"]
HERE = [*ROOT, "--cwd", CWD]

GOLDEN_CASES = {
    "stats_project": ["stats", *HERE],
    "stats_all_by_model": ["stats", "--all", "--by", "model", *ROOT],
    "stats_all_by_day": ["stats", "--all", "--by", "day", *ROOT],
    "stats_all_by_branch": ["stats", "--all", "--by", "branch", *ROOT],
    "stats_all_by_session": ["stats", "--all", "--by", "session", *ROOT],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_stats_view_matches_golden(store, name):
    r = invoke(*GOLDEN_CASES[name])
    assert r.exit_code == 0, r.stderr
    check_golden(f"{name}.txt", r.stdout)


def _doc(*args):
    r = invoke("stats", *args, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == 2
    return doc


def test_fork_copies_are_counted_once(store):
    """P + its fork F: the 8 entries F copied from P (same ids and timestamps) count once."""
    doc = _doc(*HERE)
    t = doc["total"]
    assert t["entryCount"] == 17 + 4
    assert t["messageCount"] == 12 + 3
    assert t["tokens"] == {"input": 11400, "output": 1010, "cacheRead": 6400, "cacheWrite": 500, "total": 19310}
    assert t["cost"] == pytest.approx(0.081)
    c = doc["copiedFromParents"]
    assert c["entryCount"] == 8 and c["messageCount"] == 6
    assert c["tokens"]["total"] == 6700 and c["cost"] == pytest.approx(0.03)
    assert [(f["path"].endswith(F_ID + ".jsonl"), f["parent"].endswith(P_ID + ".jsonl")) for f in c["forks"]] == \
        [(True, True)]
    by_id = {s["id"]: s for s in doc["sessions"]}
    assert by_id[F_ID]["parentInSet"] and by_id[F_ID]["copiedFromParent"]["entryCount"] == 8
    assert by_id[F_ID]["entryCount"] == 4 and by_id[P_ID]["entryCount"] == 17
    assert [s["id"] for s in doc["sessions"]] == [F_ID, P_ID]  # newest first


def test_fork_alone_is_counted_whole(store):
    """Without its parent in the set, a fork's copied entries are its own."""
    doc = _doc(str(store["F"]))
    assert doc["total"]["entryCount"] == 12
    assert doc["copiedFromParents"]["entryCount"] == 0 and doc["copiedFromParents"]["forks"] == []
    assert doc["sessions"][0]["parentSession"] == str(store["P"]) and doc["sessions"][0]["parentInSet"] is None


def test_where_split_adds_up(store):
    doc = _doc("--all", *ROOT)
    w = doc["where"]
    assert {k: v["entryCount"] for k, v in w.items()} == {"active": 19, "edited": 0, "retained": 0, "compacted": 6, "branch": 6}
    for key in ("entryCount", "messageCount", "cost"):
        assert sum(v[key] for v in w.values()) == pytest.approx(doc["total"][key])
    for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
        assert sum(v["tokens"][key] for v in w.values()) == doc["total"]["tokens"][key]
    # the abandoned regex attempt in P, and the aborted answer in H
    assert w["branch"]["tokens"]["input"] == 1500 + 100
    assert w["compacted"]["tokens"]["input"] == 1000 + 1200


def test_counts_of_tools_errors_structure(store):
    doc = _doc("--all", *ROOT)
    t = doc["total"]
    assert t["toolCallCountByTool"] == {"bash": 1, "edit": 1, "read": 1, "write": 1}
    assert t["errorCountByKind"] == {"assistant": 0, "aborted": 1, "tool": 1}
    assert t["compactionCount"] == 1 and t["branchSummaryCount"] == 1
    assert t["messageCountByRole"] == {"user": 7, "assistant": 9, "toolResult": 4, "bashExecution": 1, "custom": 1}
    assert doc["branchPointCount"] == 2 and doc["abandonedBranchCount"] == 2
    assert doc["sessionCount"] == 3


def test_by_model_and_branch(store):
    groups = {g["key"]: g for g in _doc("--all", "--by", "model", *ROOT)["groups"]}
    assert set(groups) == {"anthropic/claude-opus-4-5", "anthropic/claude-sonnet-4-5", "(compaction)",
                           "(branch summary)"}
    assert groups["(compaction)"]["tokens"]["input"] == 3000
    assert groups["anthropic/claude-sonnet-4-5"]["messageCountByRole"] == {"assistant": 3}
    rows = _doc("--all", "--by", "branch", *ROOT)["groups"]
    branches = [(r["sessionId"], r["branch"], r["from"], r["entryCount"]) for r in rows]
    assert (P_ID, None, None, 14) in branches and (P_ID, "u2", "a2", 3) in branches
    assert (H_ID, "hu2", "ha1", 3) in branches and (F_ID, None, None, 4) in branches
    assert sum(r["entryCount"] for r in rows) == 31


@pytest.mark.parametrize("tz, days", [
    ("UTC", {"2025-03-01": 18, "2025-03-02": 3, "2025-03-03": 10}),
    ("Etc/GMT+10", {"2025-02-28": 18, "2025-03-01": 3, "2025-03-02": 10}),  # UTC-10: 09:xx UTC is the day before
])
def test_by_day_is_local_time(store, monkeypatch, tz, days):
    monkeypatch.setenv("TZ", tz)
    time.tzset()
    groups = _doc("--all", "--by", "day", *ROOT)["groups"]
    assert {g["key"]: g["entryCount"] for g in groups} == days
    assert [g["key"] for g in groups] == sorted(days)


def test_exit_codes(store):
    r = invoke("stats", "--by", "week", *HERE)
    assert r.exit_code == 2 and "--by" in r.stderr
    r = invoke("stats", "ffffffff", *HERE)
    assert r.exit_code == 1 and "no session matches" in r.stderr
    assert invoke("stats", "--sessions-dir", "sessions", "--cwd", "/nowhere").exit_code == 1
    assert invoke("stats", "01955000", "--all", *ROOT).exit_code == 2


def test_not_a_session_is_skipped_with_a_note(store):
    bad = store["root"] / "--home-you-projects-webapp--" / "zz-notes.jsonl"
    bad.write_text("hello\n")
    r = invoke("stats", *HERE, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["sessionCount"] == 2 and doc["skipped"][0]["code"] == "invalid_session"
    assert "skipped" in r.stderr and "zz-notes.jsonl" in r.stderr
    r = invoke("stats", str(bad))
    assert r.exit_code == 1


# --- how a fork's parent is found (issue 13) --------------------------------------------------------

def _copied_root(store, tmp_path_name="copy"):
    """The store's root copied elsewhere: every fork's ``parentSession`` still names the original."""
    import shutil

    copy = store["root"].parent / tmp_path_name
    shutil.copytree(store["root"], copy)
    return copy


def _fork_doc(root):
    doc = _doc("--sessions-dir", root, "--cwd", CWD)
    by_id = {s["id"]: s for s in doc["sessions"]}
    return doc, by_id


def test_parent_matched_by_path_says_so(store):
    doc, by_id = _fork_doc("sessions")
    assert by_id[F_ID]["parentMatch"] == "path" and by_id[P_ID]["parentMatch"] is None
    assert [f["matchedBy"] for f in doc["copiedFromParents"]["forks"]] == ["path"]
    assert doc["copiedFromParents"]["forkCountByMatch"] == {"path": 1, "fileId": 0, "headerId": 0, "sameId": 0,
                                                           "unmatched": 0}


def test_copied_root_matches_the_parent_by_the_id_in_its_file_name(store):
    """The copy's fork names the original root's parent, which is not in the set: the copies count once."""
    copy = _copied_root(store)
    doc, by_id = _fork_doc(copy)
    assert doc["total"]["entryCount"] == 17 + 4 and doc["copiedFromParents"]["entryCount"] == 8
    assert by_id[F_ID]["parentMatch"] == "fileId"
    assert by_id[F_ID]["parentInSet"] == str(copy / "--home-you-projects-webapp--" / store["P"].name)
    assert doc["copiedFromParents"]["forkCountByMatch"]["fileId"] == 1


def test_renamed_parent_is_matched_by_its_header_id(store):
    copy = _copied_root(store)
    proj = copy / "--home-you-projects-webapp--"
    (proj / store["P"].name).rename(proj / "parent-backup.jsonl")
    doc, by_id = _fork_doc(copy)
    assert by_id[F_ID]["parentMatch"] == "headerId"
    assert by_id[F_ID]["parentInSet"].endswith("parent-backup.jsonl")
    assert doc["total"]["entryCount"] == 17 + 4


def test_fork_whose_parent_is_nowhere_in_the_set_is_unmatched(store):
    copy = _copied_root(store)
    (copy / "--home-you-projects-webapp--" / store["P"].name).unlink()
    doc, by_id = _fork_doc(copy)
    assert by_id[F_ID]["parentMatch"] == "unmatched" and by_id[F_ID]["parentInSet"] is None
    assert doc["total"]["entryCount"] == 12 and doc["copiedFromParents"]["forks"] == []
    assert doc["copiedFromParents"]["forkCountByMatch"]["unmatched"] == 1
    r = invoke("stats", "--sessions-dir", copy, "--cwd", CWD)
    assert r.exit_code == 0 and "1 fork whose parent is not in the set" in r.stdout


def test_human_view_says_how_forks_were_matched(store):
    r = invoke("stats", "--sessions-dir", _copied_root(store), "--cwd", CWD)
    assert r.exit_code == 0, r.stderr
    assert "matched by the id in its file name" in r.stdout


def test_file_name_session_id():
    from pisess.core.analyses.stats import file_session_id

    assert file_session_id(f"/a/b/2025-03-01T09-00-00-000Z_{P_ID}.jsonl") == P_ID
    assert file_session_id("/a/b/notes.jsonl") is None
    assert file_session_id("/a/b/2025_.jsonl") is None
    assert file_session_id(f"/a/b/2025-03-01T09-00-00-000Z_{P_ID}.txt") is None


def _alike_sessions(tmp_path) -> str:
    """Two sessions whose ids share their first 8 characters (UUIDv7: the same minute), long alike
    names, and models that differ only at the end of a long name."""
    from conftest import assistant, entry, header, user, write_session

    def one(sid: str, name: str, models: list) -> None:
        lines = [header(id=sid), entry("session_info", "n0", None, name=name)]
        parent = "n0"
        for i, (provider, model) in enumerate(models):
            lines += [user(f"u{i}", parent, "q"),
                      assistant(f"a{i}", f"u{i}", "a", provider=provider, model=model,
                                usage={"input": 1000 * (i + 1), "output": 200, "cacheRead": 123456, "cacheWrite": 5000,
                                       "totalTokens": 1, "cost": {"total": 1.23}})]
            parent = f"a{i}"
        write_session(tmp_path, lines, name=f"{sid}.jsonl")

    one("01955b3b-ca80-7011-a09a-abc7b133ebcf", "Fix the date parsing in the CSV reader module please",
        [("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-sonnet-4-6")])
    one("01955b3b-ca80-7e43-ac51-2b8b1220aa57", "Fix the date parsing in the CSV reader module again",
        [("openrouter", "anthropic/claude-sonnet-4-5-20250929-preview-long-1"),
         ("openrouter", "anthropic/claude-sonnet-4-5-20250929-preview-long-2")])
    return str(tmp_path)


@pytest.mark.parametrize("by", ["model", "session", "branch"])
@pytest.mark.parametrize("columns", [60, 80, 100])
def test_by_rows_never_look_the_same(tmp_path, monkeypatch, by, columns):
    """At 80 columns `anthropic/claude-sonnet-4-5` and `-4-6` were both `anthropic/claude-sonne…`,
    and two sessions of the same minute both `01955b3b`: two rows must never look the same."""
    from conftest import cli_runner, invoke

    r = invoke(cli_runner(monkeypatch, columns=columns), "stats", "--by", by, _alike_sessions(tmp_path))
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith(("MODEL", "SESSION")))
    end = next(i for i in range(head, len(lines)) if lines[i].lstrip().startswith("total"))
    rows = lines[head + 1:end]
    assert len(rows) == (4 if by == "model" else 2)
    # the label is everything before the MSGS/INPUT numbers: cut where the header's second column starts
    labels = [row[:len(lines[head]) - len(lines[head][2:].split("  ", 1)[1].lstrip()) - 2] for row in rows]
    assert len(set(labels)) == len(labels), rows
    assert all(len(line) <= columns for line in lines[head:end + 1])


def test_distinct_cut_keeps_labels_apart():
    from rich.text import Text

    from pisess.cli.views.columns import distinct_cut

    labels = [Text(x) for x in ["aaaaaaaaaa-X-bbbbbbbbbbbbbbbbbbbb", "aaaaaaaaaa-Y-bbbbbbbbbbbbbbbbbbbb", "short"]]
    for room in range(4, 30):
        got = [t.plain for t in distinct_cut(labels, room)]
        assert len(set(got)) == 3 and all(len(g) <= room for g in got), (room, got)
