"""pisess du: golden views, bytes that add up to the file size, images, the largest entries."""

from __future__ import annotations

import json

import pytest

from answers_store import CWD, H_ID, IMAGE, P_ID, invoke
from conftest import check_golden
from pisess.core.analyses.du import disk_usage

ROOT = ["--sessions-dir", "sessions"]
HERE = [*ROOT, "--cwd", CWD]

GOLDEN_CASES = {
    "du_project": ["du", *HERE],
    "du_all_top5": ["du", "--all", "--top", "5", *ROOT],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_du_view_matches_golden(store, name):
    r = invoke(*GOLDEN_CASES[name])
    assert r.exit_code == 0, r.stderr
    check_golden(f"{name}.txt", r.stdout)


def _doc(*args):
    r = invoke("du", *args, "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == 2
    return doc


def test_bytes_add_up(store):
    """Each file: entries + header + the rest (newlines, blank or unreadable lines) = its size;
    entry bytes split exactly by kind and by where."""
    doc = _doc("--all", *ROOT)
    for s in doc["sessions"]:
        assert s["entryBytes"] + s["headerBytes"] + s["otherBytes"] == s["size"]
        assert sum(s["where"].values()) == s["entryBytes"]
        assert sum(k["bytes"] for k in s["byKind"]) == s["entryBytes"]
        assert sum(k["entryCount"] for k in s["byKind"]) == s["entryCount"] == sum(s["entryCountByWhere"].values())
        lines = open(s["path"], "rb").read().split(b"\n")[:-1]
        assert s["otherBytes"] == len(lines)  # one newline per line, nothing else
        assert s["headerBytes"] == len(lines[0])
    assert doc["size"] == sum(s["size"] for s in doc["sessions"])
    assert doc["entryBytes"] + doc["headerBytes"] + doc["otherBytes"] == doc["size"]


def test_where_matches_the_tree(store):
    s = {x["id"]: x for x in _doc("--all", *ROOT)["sessions"]}
    assert s[P_ID]["entryCountByWhere"] == {"active": 8, "edited": 0, "retained": 0, "compacted": 6, "branch": 3}
    assert s[H_ID]["entryCountByWhere"] == {"active": 7, "edited": 0, "retained": 0, "compacted": 0, "branch": 3}


def test_images_and_top(store):
    doc = _doc("--all", *ROOT, "--top", "3")
    assert doc["images"] == {"count": 1, "bytes": len(IMAGE)}
    top = doc["top"]
    assert len(top) == 3
    assert [t["bytes"] for t in top] == sorted((t["bytes"] for t in top), reverse=True)
    first = top[0]
    assert (first["entryId"], first["role"], first["where"], first["imageCount"], first["imageBytes"]) == \
        ("hu2", "user", "branch", 1, len(IMAGE))
    line = open(first["path"], "rb").read().split(b"\n")[first["line"] - 1]
    assert first["bytes"] == len(line)
    assert _doc("--all", *ROOT, "--top", "0")["top"] == []
    assert invoke("du", "--all", *ROOT, "--top", "-1").exit_code == 2


def test_tool_result_detail(store):
    top = _doc(str(store["P"]), "--top", "20")["top"]
    t2 = next(t for t in top if t["entryId"] == "t2")
    assert (t2["toolName"], t2["detail"], t2["where"]) == ("bash", "bash result (error)", "branch")


def test_blank_and_unreadable_lines_are_other_bytes(tmp_path):
    """The pi command drops a bad line: its bytes are not an entry's."""
    head = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}'
    e1 = '{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi"}}'
    bad = '{"type":"message","id":"e2"'
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join([head, "", e1, bad]) + "\n")
    r = disk_usage([str(p)])
    s = r.sessions[0]
    assert s.reader == "cli" and s.entries == 1 and s.entry_bytes == len(e1)
    assert s.other_bytes == 4 + len(bad)
    assert s.size == p.stat().st_size


def test_exit_codes(store):
    assert invoke("du", "ffffffff", *HERE).exit_code == 1
    assert invoke("du", "--all", "01955000", *ROOT).exit_code == 2
    r = invoke("du", "--sessions-dir", "sessions", "--cwd", "/nowhere")
    assert r.exit_code == 1 and "no sessions for /nowhere" in r.stderr


@pytest.mark.parametrize("command", [["search", "x"], ["stats"], ["du"]])
def test_pipes_are_refused_not_waited_on(store, command):
    """A FIFO named like a session would block open() until a writer comes: it is refused."""
    import os

    fifo = store["root"] / "--home-you-projects-webapp--" / "zz-fifo.jsonl"
    os.mkfifo(fifo)
    r = invoke(*command, *HERE)
    assert r.exit_code == 2
    assert "not a regular file" in r.stderr and "zz-fifo.jsonl" in r.stderr
