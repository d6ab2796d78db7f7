"""The damage real files carry, named (issue 34): each on files pi 1.6.0's own SessionManager wrote
(tests/fixtures/findings/make.mjs), damaged the way older pi or other tools did, checked against
what pi's code says about them (``answers.json`` beside them: pi 1.6.0's buildSessionContext and
listAll, pi 0.82.1's SDK reader, pi-ai 1.6.0's transformMessages)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from answers_store import invoke

HERE = Path(__file__).parent
FINDINGS = HERE / "fixtures" / "findings"
ANSWERS = json.loads((FINDINGS / "answers.json").read_text())
ORPHAN = "--home-alice-orphan--"
MULTI = "--home-alice-multi--"
TWINS = "--home-alice-twins--"
NESTED = "--home-alice-nested--"
RENAMED = "--home-alice-renamed--"
MISMATCH = "--home-alice-mismatch--"


@pytest.fixture()
def root(tmp_path, monkeypatch) -> Path:
    """A copy of the fixtures' sessions root, each file's mtime its last entry's time (as pi left it)."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("PISESS_CACHE", "off")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    dest = tmp_path / "sessions"
    shutil.copytree(FINDINGS / "sessions", dest)
    modified = {s["path"]: s["modified"] for s in ANSWERS["listAll"]["sessions"]}
    from datetime import datetime

    for rel, when in modified.items():
        t = datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
        os.utime(dest / rel, (t, t))
    return dest


def _json(*args: str, code: int | tuple = 0) -> dict:
    r = invoke(*args, "--json")
    assert r.exit_code in ((code,) if isinstance(code, int) else code), r.stdout + r.stderr
    return json.loads(r.stdout)


def _text(*args: str, code: int | tuple = 0, fits: bool = True) -> str:
    """A human view at 80 columns (``fits``: no line wider; validate's compiler-style lines are
    one finding each, whatever their length)."""
    r = invoke(*args)
    assert r.exit_code in ((code,) if isinstance(code, int) else code), r.stdout + r.stderr
    for line in r.stdout.splitlines() if fits else ():
        assert len(line) <= 80, line
    return r.stdout


def _findings(doc: dict, code: str) -> list:
    return [f for file in doc["files"] for f in file["findings"] if f["code"] == code]


# --- 1. a tool result whose call is not in the context ---------------------------------------------

def _pi_provider_orphans(provider: list) -> tuple[list, list]:
    """From what pi-ai's transformMessages sends: the tool call ids of results sent without their
    call (pending calls are the last assistant's, a user message ends them), and those of the
    synthetic results it adds for calls without one."""
    pending: set = set()
    orphans, synthetic = [], []
    for m in provider:
        if m["role"] == "assistant":
            pending = set(m["toolCallIds"])
        elif m["role"] == "user":
            pending = set()
        elif m["role"] == "toolResult":
            if m["toolCallId"] not in pending:
                orphans.append(m["toolCallId"])
            elif m["text"] == "No result provided" and m["isError"]:
                synthetic.append(m["toolCallId"])
    return orphans, synthetic


def test_pi_sends_a_result_without_its_call_and_makes_one_for_a_call_without_result():
    """What the fixture is for, said by pi's own code: at the leaf, pi-ai passes the result of
    toolu_a2 (its call compacted away) and invents one for toolu_a3."""
    pi = ANSWERS["files"][f"{ORPHAN}/leaf.jsonl"]["context"]
    assert _pi_provider_orphans(pi["provider"]) == (["toolu_a2"], ["toolu_a3"])
    branch = ANSWERS["files"][f"{ORPHAN}/branch.jsonl"]
    assert _pi_provider_orphans(branch["context"]["provider"]) == ([], [])
    assert [_pi_provider_orphans(t["provider"])[0] for t in branch["otherTips"].values()] == [["toolu_b1"]]


def _files_and_tips() -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for rel, pi in sorted(ANSWERS["files"].items()):
        out.append((rel, None))
        out.extend((rel, tip) for tip in pi["otherTips"])
    return out


@pytest.mark.parametrize(("rel", "tip"), _files_and_tips())
def test_context_says_what_pi_ai_sends_without_its_call_on_every_file_and_path(root, rel, tip):
    """On every generated file, at its leaf and at each other tip: the results pisess says go
    without their call are those pi-ai 1.6.0's transformMessages passes without it."""
    pi = ANSWERS["files"][rel]["otherTips"][tip] if tip else ANSWERS["files"][rel]["context"]
    doc = _json("context", str(root / rel), *(["--leaf", tip] if tip else []))
    assert [u["toolCallId"] for u in doc["toolResultsWithoutCall"]] == _pi_provider_orphans(pi["provider"])[0]
    assert [doc["messages"][u["messageIndex"]]["role"] for u in doc["toolResultsWithoutCall"]] == \
        ["toolResult"] * len(doc["toolResultsWithoutCall"])


def test_validate_says_the_session_cannot_go_on_from_its_leaf(root):
    f = root / ORPHAN / "leaf.jsonl"
    doc = _json("validate", str(f), code=1)
    pi = ANSWERS["files"][f"{ORPHAN}/leaf.jsonl"]["context"]
    (got,) = _findings(doc, "tool_result_without_call")
    # the entry pi's projection made the result from
    orphan_index = pi["roles"].index("toolResult")
    assert got["severity"] == "error" and got["entryId"] == pi["messageEntryIds"][orphan_index]
    assert "cannot go on from its leaf" in got["message"] and "toolu_a2" in got["message"]
    parent = next(json.loads(x)["parentId"] for x in f.read_text().splitlines() if got["entryId"] in x[:60])
    assert f"pisess fork FILE {parent} --position at" in got["message"]
    assert f"context edit of {got['entryId']}" in got["message"]
    # the call without result is a note of its own, never the same finding twice
    (call,) = _findings(doc, "tool_call_without_result")
    assert call["severity"] == "info" and "toolu_a3" in call["message"]
    assert doc["summary"]["errorCount"] == 1


def test_validate_warns_of_a_result_without_call_on_another_path(root):
    f = root / ORPHAN / "branch.jsonl"
    pi = ANSWERS["files"][f"{ORPHAN}/branch.jsonl"]
    (tip,) = pi["otherTips"]
    doc = _json("validate", str(f))
    (got,) = _findings(doc, "tool_result_without_call")
    assert got["severity"] == "warning" and f"on the path to {tip}" in got["message"]
    other = pi["otherTips"][tip]
    assert got["entryId"] == other["messageEntryIds"][other["roles"].index("toolResult")]
    assert doc["summary"] == {**doc["summary"], "errorCount": 0, "warningCount": 1}
    text = _text("validate", str(f), fits=False)
    assert ":6: warning tool_result_without_call: tool result " in text


def test_validate_flags_a_result_whose_assistant_never_made_its_call(root, monkeypatch, tmp_path):
    """Its call is not compacted away nor hidden: the assistant above it made another call (a
    tool rewrote the ids on one side).  pi-ai passes the result without a call of its id and
    makes up a result for the call: one error for the result (said in words, with what to do),
    one note for the call, neither twice."""
    f = root / MISMATCH / "renamed-call.jsonl"
    pi = ANSWERS["files"][f"{MISMATCH}/renamed-call.jsonl"]["context"]
    assert _pi_provider_orphans(pi["provider"]) == (["call_m1|fc_0001"], ["toolu_m1"])
    doc = _json("validate", str(f), code=1)
    (got,) = _findings(doc, "tool_result_without_call")
    assert got["severity"] == "error" and got["entryId"] == pi["messageEntryIds"][pi["roles"].index("toolResult")]
    assistant = pi["messageEntryIds"][pi["roles"].index("assistant")]
    assert f"answers call call_m1|fc_0001 (bash), which is not in the context at the leaf: assistant {assistant} " \
           "before it made no such call. pi sends the result to the provider without the call it answers" in got["message"]
    assert f"To go on, fork at {assistant}" in got["message"]
    (call,) = _findings(doc, "tool_call_without_result")
    assert call["severity"] == "info" and "toolu_m1 (bash)" in call["message"]
    assert doc["summary"]["errorCount"] == 1
    # the same answer through the index cache (small files too), cold and warm
    monkeypatch.setenv("PISESS_CACHE", "all")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for _ in range(2):
        assert _json("validate", str(f), code=1)["files"] == doc["files"]


def test_a_result_under_an_assistant_that_ended_in_an_error_goes_without_its_call(tmp_path):
    """pi-ai drops an assistant that ended in an error or was aborted, its calls with it: a
    result below it goes without its call (the same rule as ``context``'s)."""
    src = (FINDINGS / "sessions" / MISMATCH / "renamed-call.jsonl").read_text().splitlines()
    lines = [json.loads(x) for x in src]
    for e in lines:
        m = e.get("message", {})
        if m.get("role") == "toolResult":
            m["toolCallId"] = "toolu_m1"  # the call's own id: paired, until its assistant is dropped
        elif m.get("role") == "assistant" and m.get("stopReason") == "toolUse":
            m["stopReason"] = "error"
    f = tmp_path / "errored.jsonl"
    f.write_text("".join(json.dumps(e) + "\n" for e in lines))
    doc = _json("validate", str(f), code=1)
    (got,) = _findings(doc, "tool_result_without_call")
    assert "ended error and is not sent" in got["message"]
    ctx = _json("context", str(f))
    assert [u["toolCallId"] for u in ctx["toolResultsWithoutCall"]] == ["toolu_m1"]


def test_validate_of_a_clean_tree_says_nothing_of_pairing(root):
    doc = _json("validate", str(root / TWINS))
    assert not _findings(doc, "tool_result_without_call")


def test_context_marks_the_result_without_its_call(root):
    f = root / ORPHAN / "leaf.jsonl"
    pi = ANSWERS["files"][f"{ORPHAN}/leaf.jsonl"]["context"]
    doc = _json("context", str(f))
    i = pi["roles"].index("toolResult")
    assert doc["toolResultsWithoutCall"] == [{"messageIndex": i, "entryId": pi["messageEntryIds"][i],
                                              "toolCallId": "toolu_a2"}]
    text = _text("context", str(f), "--no-pager")
    assert "1 tool result without its call: the provider refuses this context" in text
    marked = [ln for ln in text.splitlines() if "no call before it: refused" in ln]
    assert len(marked) == 1 and marked[0].startswith("tool result") and pi["messageEntryIds"][i] in marked[0]
    # the leaf of the other file holds none
    assert _json("context", str(root / ORPHAN / "branch.jsonl"))["toolResultsWithoutCall"] == []


# --- 2. several sessions in one file --------------------------------------------------------------

def test_pi_reads_several_sessions_in_a_file_as_one_and_its_sdk_refuses_it():
    three = ANSWERS["files"][f"{MULTI}/three-in-one.jsonl"]
    assert three["sdk"] == {"opens": False, "code": "invalid_entry", "reason": "line 11 has invalid parentId",
                            "line": 11}
    listed = [s for s in ANSWERS["listAll"]["sessions"] if s["path"] == f"{MULTI}/three-in-one.jsonl"]
    assert len(listed) == 1 and listed[0]["messageCount"] == 24  # once, every session's messages


def test_validate_says_how_many_sessions_a_file_holds_and_where_each_starts(root):
    f = root / MULTI / "three-in-one.jsonl"
    lines = f.read_text().splitlines()
    headers = [(i, json.loads(x)["id"]) for i, x in enumerate(lines, 1) if json.loads(x)["type"] == "session"]
    assert [n for n, _ in headers] == [1, 11, 21]
    doc = _json("validate", str(f), code=1)
    (got,) = _findings(doc, "several_sessions")
    assert got["sessions"] == [{"line": n, "id": sid} for n, sid in headers]
    assert got["line"] == 11 and got["severity"] == "error"
    assert "holds 3 sessions, starting at lines 1, 11 and 21" in got["message"]
    assert "the pi command ignores the later headers" in got["message"] and "pi's SDK refuses" in got["message"]
    # pi 1.6.0 goes on in the last session: its leaf is there
    pi_leaf = ANSWERS["files"][f"{MULTI}/three-in-one.jsonl"]["context"]["leafId"]
    assert next(i for i, x in enumerate(lines, 1) if json.loads(x)["id"] == pi_leaf) > 21
    assert "(its leaf, where pi goes on, is in session 3 of 3)" in got["message"]
    # said once, not once per later header
    assert not _findings(doc, "duplicate_header") and doc["summary"]["errorCount"] == 1
    assert doc["files"][0]["pi"]["harness"]["reason"] == ANSWERS["files"][f"{MULTI}/three-in-one.jsonl"]["sdk"]["reason"]


def test_ls_long_counts_the_sessions_in_a_file(root):
    doc = _json("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/multi", "--long")
    counts = {Path(s["path"]).name: s["details"]["sessionCount"] for s in doc["sessions"]}
    assert counts["three-in-one.jsonl"] == 3 and sorted(counts.values()) == [1, 3]
    text = _text("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/multi", "--long")
    row = next(ln for ln in text.splitlines() if "[3 sessions]" in ln)
    sid = json.loads((root / MULTI / "three-in-one.jsonl").read_text().splitlines()[0])["id"]
    assert sid.startswith(row.split()[0])  # under the first header's id, as pi lists it
    assert "[N sessions] the file holds N sessions" in text


# --- 3. two files with one session id ---------------------------------------------------------------

def _twins(root: Path) -> list[Path]:
    return sorted((root / TWINS).glob("*a818*.jsonl"))


def test_pi_lists_both_files_of_one_id():
    ids = [s["id"] for s in ANSWERS["listAll"]["sessions"] if s["path"].startswith(TWINS)]
    assert len(ids) == 3 and len(set(ids)) == 2


def test_ls_marks_both_files_of_one_id(root):
    doc = _json("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/twins")
    twins = {str(p) for p in _twins(root)}
    marked = {s["path"]: s["sameIdPaths"] for s in doc["sessions"] if s["sameIdPaths"]}
    assert set(marked) == twins and all(v == [p for p in twins if p != k] for k, v in marked.items())
    text = _text("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/twins")
    assert sum(1 for ln in text.splitlines() if ln.startswith("  01a1a0a6=")) == 2
    assert "= another file holds this session id too" in text


@pytest.mark.parametrize("scope", ["/home/alice/twins", "/home/elsewhere"])
def test_an_id_two_files_hold_is_ambiguous(root, scope):
    sid = json.loads(_twins(root)[0].read_text().splitlines()[0])["id"]
    r = invoke("path", sid, "--sessions-dir", str(root), "--cwd", scope, "--json")
    assert r.exit_code == 1
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "ambiguous" and "held by 2 files" in err["message"]
    for p in _twins(root):
        assert str(p) in err["message"]
    r = invoke("path", sid[:12], "--sessions-dir", str(root), "--cwd", "/home/alice/twins")
    assert r.exit_code == 1 and "2 files of 1 session" in r.stderr


def test_stats_all_counts_the_entries_of_one_id_once(root):
    """pi lists both files with every message; over the set, a session's messages count once: what
    pisess counts and leaves out as copies is every message pi lists, the second file's all left out."""
    every = sum(s["messageCount"] for s in ANSWERS["listAll"]["sessions"])
    doc = _json("stats", "--all", "--sessions-dir", str(root))
    copied = doc["copiedFromParents"]
    assert doc["total"]["messageCount"] + copied["messageCount"] == every
    first, second = _twins(root)  # by name: "...-1.jsonl" sorts first
    assert copied["forkCountByMatch"]["sameId"] == 1
    assert {"path": str(second), "parent": str(first), "matchedBy": "sameId"} in copied["forks"]
    twin = next(s for s in doc["sessions"] if s["path"] == str(second))
    pi_twin = next(s for s in ANSWERS["listAll"]["sessions"] if s["path"] == str(second.relative_to(root)))
    assert twin["messageCount"] == 0 and twin["copiedFromParent"]["messageCount"] == pi_twin["messageCount"]
    text = " ".join(_text("stats", "--all", "--sessions-dir", str(root)).split())
    assert "1 fork of a session in the set · 1 second file of a session id" in text


def test_du_all_counts_the_entries_of_one_id_once(root):
    doc = _json("du", "--all", "--sessions-dir", str(root))
    first, second = _twins(root)
    lines = len(second.read_text().splitlines()) - 1  # its entries, all in the first file too
    assert doc["sharedWithSameId"]["entryCount"] == lines
    assert doc["sharedWithSameId"]["files"] == [{"path": str(second), "sameIdAs": str(first)}]
    rows = {s["path"]: s for s in doc["sessions"]}
    assert rows[str(first)]["entryCount"] == lines and rows[str(second)]["entryCount"] == 0
    assert doc["entryCount"] == sum(s["entryCount"] for s in doc["sessions"])
    text = _text("du", "--all", "--sessions-dir", str(root))
    assert "same id 1 second file of a session id (pi #11060): 9 entries" in text


# --- 4. sessions nested below a session's folder ---------------------------------------------------

def _nested(root: Path) -> tuple[Path, list[Path]]:
    parent = next(p for p in (root / NESTED).glob("*.jsonl") if p.with_suffix("").is_dir())
    return parent, sorted(parent.with_suffix("").rglob("*.jsonl"))


def test_pi_resume_does_not_list_nested_sessions(root):
    parent, nested = _nested(root)
    listed = {s["path"] for s in ANSWERS["listAll"]["sessions"]}
    assert f"{NESTED}/{parent.name}" in listed and len(nested) == 2
    assert not any(str(p.relative_to(root)) in listed for p in nested)


def test_ls_long_says_how_many_sessions_a_session_has_below_it(root):
    parent, nested = _nested(root)
    doc = _json("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/nested", "--long")
    assert {Path(s["path"]).name: s["details"]["nestedSessionCount"] for s in doc["sessions"]} == {
        parent.name: 2, next(p.name for p in (root / NESTED).glob("*.jsonl") if p != parent): 0}
    assert len(doc["sessions"]) == 2  # listed as pi lists: not the nested ones
    text = _text("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/nested", "--long")
    assert sum("[+2 nested]" in ln for ln in text.splitlines()) == 1 and "[+N nested] sessions below" in text


@pytest.mark.parametrize("command", ["validate", "secrets"])
def test_validate_and_secrets_of_a_directory_walk_into_nested_sessions(root, command):
    parent, nested = _nested(root)
    doc = _json(command, str(root / NESTED))
    paths = {f["path"] for f in doc["files"]}
    assert {str(p) for p in nested} <= paths and str(parent) in paths and len(paths) == 4


def test_stats_all_says_it_leaves_nested_sessions_out_and_folds_them_in_on_request(root):
    parent, nested = _nested(root)
    pi = ANSWERS["files"]
    nested_messages = sum(len(pi[str(p.relative_to(root))]["context"]["roles"]) for p in nested)
    plain = _json("stats", "--all", "--sessions-dir", str(root))
    assert plain["nestedSessions"] == {"folded": False, "foundCount": 2, "countedCount": 0, "parentCount": 1}
    assert str(parent) in {s["path"] for s in plain["sessions"]}
    assert not {str(p) for p in nested} & {s["path"] for s in plain["sessions"]}
    folded = _json("stats", "--all", "--sessions-dir", str(root), "--nested", "--by", "session")
    assert folded["nestedSessions"] == {"folded": True, "foundCount": 2, "countedCount": 2, "parentCount": 1}
    assert folded["total"]["messageCount"] == plain["total"]["messageCount"] + nested_messages
    own = next(s for s in plain["sessions"] if s["path"] == str(parent))["messageCount"]
    group = next(g for g in folded["groups"] if g["key"] == str(parent))
    assert group["messageCount"] == own + nested_messages
    assert not {str(p) for p in nested} & {g["key"] for g in folded["groups"]}
    assert "2 below 1 session's folder, 2 not counted (--nested folds them in)" in \
        _text("stats", "--all", "--sessions-dir", str(root))
    assert "2 below 1 session's folder, folded into its parent's figures" in \
        _text("stats", "--all", "--sessions-dir", str(root), "--nested")


# --- 5. files renamed by another tool ---------------------------------------------------------------

def _renamed_listed() -> list[dict]:
    return [s for s in ANSWERS["listAll"]["sessions"] if s["path"].startswith(RENAMED)]


def test_pi_takes_the_id_and_time_of_a_renamed_file_from_its_header():
    for s in _renamed_listed():
        name = s["path"].split("/", 1)[1]
        if "_0195f3a0-" in name:
            assert s["id"] not in name and not name.startswith(s["created"][:10])


def test_ls_orders_renamed_files_as_pi_does(root):
    doc = _json("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/renamed")
    assert [(s["id"], str(Path(s["path"]).relative_to(root))) for s in doc["sessions"]] == \
        [(s["id"], s["path"]) for s in _renamed_listed()]
    assert [s["created"] for s in doc["sessions"]] == [s["created"] for s in _renamed_listed()]
    # the whole root, pi's listAll (the two files of one id tie: their order is pi's mtime's)
    every = _json("ls", "--sessions-dir", str(root), "--all")
    got = [str(Path(s["path"]).relative_to(root)) for s in every["sessions"]]
    assert [p for p in got if not p.startswith(TWINS)] == \
        [s["path"] for s in ANSWERS["listAll"]["sessions"] if not s["path"].startswith(TWINS)]


def test_a_renamed_file_is_found_by_its_header_id_never_by_its_name(root):
    zebra = next((root / RENAMED).glob("Zebra*.jsonl"))
    sid = json.loads(zebra.read_text().splitlines()[0])["id"]
    for arg in (sid, sid[:13]):
        assert _json("path", arg, "--sessions-dir", str(root), "--cwd", "/home/alice/renamed")["path"] == str(zebra)
    name_id = zebra.stem.split("_", 1)[1]
    r = invoke("path", name_id, "--sessions-dir", str(root), "--cwd", "/home/alice/renamed", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["code"] == "not_found"


def test_ls_names_a_renamed_parent_by_its_header_id(root):
    zebra = next((root / RENAMED).glob("Zebra*.jsonl"))
    sid = json.loads(zebra.read_text().splitlines()[0])["id"]
    text = _text("ls", "--sessions-dir", str(root), "--cwd", "/home/alice/renamed")
    fork_row = next(ln for ln in text.splitlines() if ln.startswith("  01a1a0e2"))
    assert fork_row.split()[-1] == sid[:8] and "0195f3a0" not in text
    stats = _json("stats", "--sessions-dir", str(root), "--cwd", "/home/alice/renamed")
    assert [(Path(f["parent"]).name, f["matchedBy"]) for f in stats["copiedFromParents"]["forks"]] == \
        [(zebra.name, "fileId")]  # the copied tree's file of that name, no id read from it


@pytest.mark.slow
def test_watch_follow_new_follows_the_newest_file_whatever_its_name(tmp_path):
    """--follow-new switches to the file pi --continue would open (newest mtime), not to a name
    that sorts last: a renamed "Alpha …" file appears beside "Zebra …"."""
    import subprocess
    import sys

    from test_watch import REPO, Reader

    d = tmp_path / "sessions" / RENAMED
    d.mkdir(parents=True)
    zebra = next((FINDINGS / "sessions" / RENAMED).glob("Zebra*.jsonl"))
    alpha = next((FINDINGS / "sessions" / RENAMED).glob("Alpha*.jsonl"))
    shutil.copy(zebra, d / zebra.name)
    os.utime(d / zebra.name, (1e9, 1e9))
    proc = subprocess.Popen([sys.executable, "-m", "pisess", "watch", "--sessions-dir", str(tmp_path / "sessions"),
                             "--cwd", "/home/alice/renamed", "--follow-new", "--json", "--interval", "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), "PISESS_CACHE": "off"})
    r = Reader(proc)
    try:
        first = r.until(lambda e: e["event"] == "start")[-1]
        assert first["path"].endswith(zebra.name)
        assert first["sessionId"] == json.loads(zebra.read_text().splitlines()[0])["id"]
        shutil.copy(alpha, d / alpha.name)
        got = r.until(lambda e: e["event"] == "start" and e["path"].endswith(alpha.name))
        assert [e["event"] for e in got][-2:] == ["switched", "start"]
        assert got[-1]["sessionId"] == json.loads(alpha.read_text().splitlines()[0])["id"]
    finally:
        proc.kill()
