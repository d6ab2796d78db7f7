"""pisess diff: the parting point, each side's summary and the aligned contexts, held to pi 1.6.0's
own answers (tests/fixtures/diff, made by pi's writer and read back by pi's code: see make.mjs
there), plus the command's forms, exit codes and views."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import assistant, check_golden, cli_runner, entry, header, invoke, user, write_bytes, write_session
from pisess.core.analyses.diff import align, diff_points, message_text, seen_part
from pisess.core.js import UNDEF
from pisess.core.reading.session import open_session

FIXTURES = Path(__file__).parent / "fixtures" / "diff"
PAIRS = json.loads((FIXTURES / "pairs.json").read_text())


def _plain(v):
    return orjson.loads(orjson.dumps(v))


def _point(pt: dict, sessions: dict):
    path = str(FIXTURES / pt["file"])
    if path not in sessions:
        sessions[path] = open_session(path, "auto", light=True)
    return sessions[path]


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_each_side_is_what_pi_sees_and_parts_where_pi_paths_part(index):
    """Each side's context is pi 1.6.0's buildSessionProjection at that leaf; the parting point is
    the last common entry of pi's two getBranch paths (across a fork: the copied run); the cost
    per side is pi's getUsageCostBreakdown of the entries after it."""
    pair = PAIRS[index]
    sessions: dict = {}
    sa, sb = _point(pair["a"], sessions), _point(pair["b"], sessions)
    d = diff_points(sa, pair["a"]["leaf"], sb, pair["b"]["leaf"])
    doc = _plain(d.to_json())
    for side, ctx in (("a", d.a.context), ("b", d.b.context)):
        want = pair[side]
        assert [e["id"] for e in _plain(ctx.path)] == want["pathIds"]
        assert _plain(ctx.messages) == want["messages"]
        assert doc[side]["firstEntryId"] == want["firstEntryId"]
        assert doc[side]["entryCount"] == want["entryCount"]
        assert doc[side]["cost"] == pytest.approx(want["cost"], abs=1e-9)
    assert doc["partedAfter"] == pair["partedAfter"]
    assert doc["commonEntryCount"] == pair["commonEntryCount"]
    assert doc["relation"] == ("fork" if pair["a"]["file"] != pair["b"]["file"] else "branches")
    assert doc["sameContext"] == (_plain(d.a.context.messages) == _plain(d.b.context.messages))


def test_the_fixtures_cover_forks_compactions_edits_and_branches():
    """The pairs above are worth something only if they hold what the issue names."""
    files = {p["a"]["file"] for p in PAIRS} | {p["b"]["file"] for p in PAIRS}
    kinds = set()
    for f in files:
        for line in (FIXTURES / f).read_text().splitlines():
            kinds.add(json.loads(line).get("type"))
    assert {"compaction", "context_edit", "branch_summary", "label", "usage"} <= kinds
    assert any(p["a"]["file"] != p["b"]["file"] for p in PAIRS)
    assert sum(p["a"]["file"] == p["b"]["file"] for p in PAIRS) >= 4


# --- alignment ---------------------------------------------------------------------------------------


def _u(text, ts=1):
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def _a(text, *calls, ts=2, cost=0.1):
    content = [{"type": "text", "text": text}, *({"type": "toolCall", "id": c, "name": "read",
                                                  "arguments": {"path": c}} for c in calls)]
    return {"role": "assistant", "content": content, "timestamp": ts, "usage": {"cost": {"total": cost}},
            "provider": "p", "model": "m", "stopReason": "stop"}


def test_same_messages_ignore_what_the_provider_is_not_sent():
    assert seen_part(_a("x", ts=1, cost=0.1)) == seen_part(_a("x", ts=9, cost=7))
    steps = align([_u("a", ts=1), _a("b", ts=2)], [_u("a", ts=5), _a("b", ts=6)])
    assert [(x.op, x.count) for x in steps] == [("same", 2)]


def test_a_text_change_is_one_changed_message_with_a_text_diff():
    a = [_u("same"), _a("line one\nline two")]
    b = [_u("same"), _a("line one\nline 2")]
    steps = align(a, b)
    assert [x.op for x in steps] == ["same", "changed"]
    assert "-line two" in steps[1].text_diff and "+line 2" in steps[1].text_diff


def test_other_differences_are_a_removal_and_an_addition():
    a = [_u("same"), _a("text", "x.ts")]
    b = [_u("same"), _a("text", "y.ts")]
    assert [x.op for x in align(a, b)] == ["same", "removed", "added"]
    assert message_text(_a("hello", "x")) == "hello"


messages = st.lists(st.sampled_from([_u("a"), _u("b"), _a("c"), _a("d", "f"), _a("e")]), max_size=8)


@given(messages, messages)
def test_alignment_covers_every_message_once_in_order(a, b):
    seen_a: list = []
    seen_b: list = []
    for x in align(a, b):
        if x.op == "same":
            seen_a += range(x.a_index, x.a_index + x.count)
            seen_b += range(x.b_index, x.b_index + x.count)
            assert all(seen_part(a[x.a_index + k]) == seen_part(b[x.b_index + k]) for k in range(x.count))
        if x.op in ("removed", "changed"):
            seen_a.append(x.a_index)
        if x.op in ("added", "changed"):
            seen_b.append(x.b_index)
    assert seen_a == list(range(len(a)))
    assert seen_b == list(range(len(b)))


# --- small sessions: labels, unrelated sessions, summaries -----------------------------------------------


def _branchy(tmp_path):
    lines = [
        header(),
        user("u1", None, "start", ts="2026-07-25T09:00:00.000Z"),
        assistant("a1", "u1", "ok", ts="2026-07-25T09:00:10.000Z"),
        user("u2", "a1", "try A", ts="2026-07-25T09:01:00.000Z"),
        entry("message", "a2", "u2", "2026-07-25T09:02:00.000Z", message={
            "role": "assistant", "provider": "p", "model": "m1", "stopReason": "stop", "timestamp": 3,
            "usage": {"input": 10, "output": 5, "cacheRead": 1, "cacheWrite": 2, "cost": {"total": 0.5}},
            "content": [{"type": "toolCall", "id": "t1", "name": "write", "arguments": {"path": "a.txt"}},
                        {"type": "toolCall", "id": "t2", "name": "bash", "arguments": {"command": "echo x > b.txt"}}]}),
        entry("message", "r1", "a2", "2026-07-25T09:02:30.000Z", message={
            "role": "toolResult", "toolCallId": "t1", "toolName": "write", "isError": True,
            "content": [{"type": "text", "text": "no"}], "timestamp": 4}),
        user("u3", "a1", "try B", ts="2026-07-25T09:05:00.000Z"),
        assistant("a3", "u3", "done B", model="m2", ts="2026-07-25T09:05:30.000Z"),
    ]
    return write_session(tmp_path, lines)


def test_two_branches_of_one_session_part_at_their_last_common_entry(tmp_path):
    s = open_session(_branchy(tmp_path), "auto", light=True)
    d = diff_points(s, "r1", s, "a3")
    doc = d.to_json()
    assert (doc["relation"], doc["partedAfter"], doc["commonEntryCount"]) == ("branches", "a1", 2)
    a, b = doc["a"], doc["b"]
    assert (a["entryCount"], a["userTurnCount"], a["toolCallCount"], a["failedToolCallCount"]) == (3, 1, 2, 1)
    assert a["tokens"] == {"input": 10, "output": 5, "cacheRead": 1, "cacheWrite": 2} and a["cost"] == 0.5
    assert a["filesWritten"] == ["a.txt", "b.txt"] and a["wallMs"] == 90_000 and a["models"] == ["p/m1"]
    assert (b["entryCount"], b["toolCallCount"], b["models"]) == (2, 0, ["anthropic/m2"])
    assert not d.same_context and [x.op for x in d.aligned][:1] == ["same"]


def test_the_same_point_twice_is_the_same_context(tmp_path):
    s = open_session(_branchy(tmp_path), "auto", light=True)
    d = diff_points(s, UNDEF, s, "a3")
    assert d.same_context and d.parting.relation == "same"


def test_unrelated_sessions_are_compared_from_the_start(tmp_path):
    one = write_session(tmp_path, [header(), user("x1", None, "hi")], name="one.jsonl")
    two = write_session(tmp_path, [header(id="01984a3c-5b1c-7d3e-8f00-000000000002"), user("y1", None, "hi")],
                        name="two.jsonl")
    d = diff_points(open_session(one, "auto", light=True), UNDEF, open_session(two, "auto", light=True), UNDEF)
    assert d.parting.relation == "unrelated" and d.parting.last_common is None
    assert d.same_context  # the same user text: what the model sees is the same


def test_a_recreated_label_is_no_difference(tmp_path):
    """The pi command's fork drops labels, re-chains the parents and appends the labels again."""
    src = write_session(tmp_path, [header(), user("u1", None, "x"), entry("label", "L1", "u1", targetId="u1", label="bm"),
                                   assistant("a1", "L1", "y")], name="src.jsonl")
    fork = write_session(tmp_path, [header(id="01984a3c-5b1c-7d3e-8f00-000000000009"), user("u1", None, "x"),
                                    assistant("a1", "u1", "y"), entry("label", "N1", "a1", targetId="u1", label="bm")],
                         name="fork.jsonl")
    d = diff_points(open_session(fork, "auto", light=True), UNDEF, open_session(src, "auto", light=True), UNDEF)
    assert (d.parting.relation, d.parting.common, d.parting.after_a, d.parting.after_b) == ("same", 2, [], [])
    assert d.same_context


# --- the command -----------------------------------------------------------------------------------------


def _fixture_root(tmp_path) -> Path:
    root = tmp_path / "sessions" / "--home-alice-projects-webapp--"
    root.mkdir(parents=True)
    for f in (FIXTURES / "sessions").iterdir():
        shutil.copy(f, root / f.name)
    return root


def test_exit_codes_as_diff_and_the_three_forms(tmp_path, monkeypatch):
    root = _fixture_root(tmp_path)
    runner = cli_runner(monkeypatch)
    pair = next(p for p in PAIRS if p["a"]["file"] == p["b"]["file"])
    f = str(root / Path(pair["a"]["file"]).name)
    r = invoke(runner, "diff", f, pair["a"]["leaf"], pair["b"]["leaf"], "--json")
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["version"] == 2 and doc["partedAfter"] == pair["partedAfter"]
    r2 = invoke(runner, "diff", f"{f}@{pair['a']['leaf']}", f"{f}@{pair['b']['leaf']}", "--json")
    assert json.loads(r2.stdout) == doc
    same = invoke(runner, "diff", f, pair["a"]["leaf"], pair["a"]["leaf"])
    assert same.exit_code == 0 and "the same" in same.stdout
    fork = next(p for p in PAIRS if p["a"]["file"] != p["b"]["file"])
    fa, fb = (str(root / Path(fork[s]["file"]).name) for s in ("a", "b"))
    r3 = invoke(runner, "diff", fa, fb, "--stat")
    assert r3.exit_code == 1 and "a fork and its source" in r3.stdout
    assert "what the model sees" not in r3.stdout


@pytest.mark.parametrize("args", [["one"], ["a", "b", "c", "d"], ["x.jsonl", "e1@x", "e2"]])
def test_bad_forms_are_usage_errors(tmp_path, monkeypatch, args):
    runner = cli_runner(monkeypatch)
    monkeypatch.chdir(tmp_path)
    r = invoke(runner, "diff", *args, "--sessions-dir", str(tmp_path))
    assert r.exit_code == 2
    assert "Traceback" not in (r.stdout + r.stderr)


def test_an_unknown_entry_is_exit_2_naming_it(tmp_path, monkeypatch):
    f = _branchy(tmp_path)
    r = invoke(cli_runner(monkeypatch), "diff", f, "a1", "nosuchentry")
    assert r.exit_code == 2 and "nosuchentry" in r.stderr


@pytest.mark.parametrize("columns", [80, 120])
def test_view_matches_golden(tmp_path, monkeypatch, columns):
    """Two branches of the shipped example session, colour off, fixed width and time zone."""
    from importlib import resources

    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as src:
        shutil.copytree(src, tmp_path / "sessions")
    monkeypatch.setenv("TZ", "UTC")
    import time

    time.tzset()
    runner = cli_runner(monkeypatch, columns=columns)
    r = invoke(runner, "diff", "01955b3b-ca80-7e01", "28e2429e", "a3a7a4d8", "--max-lines", "2", "--no-pager",
               "--sessions-dir", str(tmp_path / "sessions"), "--cwd", "/home/you/projects/webapp")
    monkeypatch.undo()
    time.tzset()
    assert r.exit_code == 1, r.stderr
    check_golden(f"diff_branches_{columns}.txt", r.stdout)
    assert all(len(line) <= columns for line in r.stdout.splitlines())


def test_system_prompts_and_tools_are_compared_where_they_differ(tmp_path, monkeypatch):
    """pi 1.x: the sections and tools that differ are named; the same prompt says nothing."""
    def system(id_, parent, sections, tools):
        return entry("message", id_, parent, message={"role": "system", "content": "You are pi.", "sections": sections,
                                                      "toolsAdded": [{"name": t, "description": t} for t in tools],
                                                      "timestamp": 1})

    f = write_session(tmp_path, [
        header(), system("s1", None, {"rules": "be brief"}, ["read", "bash"]), user("u1", "s1", "go"),
        system("s2", "u1", {"rules": "be thorough", "extra": "x"}, ["write"]), assistant("a2", "s2", "long"),
        assistant("a1", "u1", "short"),
    ])
    s = open_session(f, "auto", light=True)
    d = diff_points(s, "a1", s, "a2")
    assert d.system is not None
    assert (d.system.sections_only_b, d.system.sections_changed, d.system.tools_only_b) == (["extra"], ["rules"], ["write"])
    assert diff_points(s, "a1", s, "a1").system is None
    r = invoke(cli_runner(monkeypatch, columns=80), "diff", f, "a1", "a2", "--no-pager")
    assert r.exit_code == 1
    assert "sections only in B: extra" in r.stdout and "tools only in B: write" in r.stdout


# --- every failure to compare is exit 2: 1 says only "they differ" -----------------------------------------


def _project(tmp_path) -> tuple[Path, str]:
    """A sessions root with two sessions of /work/proj whose ids share a prefix, one of them with
    two entries whose ids share a prefix too."""
    proj = tmp_path / "sessions" / "--work-proj--"
    one = write_session(proj, [header(id="0195aaaa-0000-7000-8000-000000000001"), user("ab1", None, "x"),
                               assistant("ab2", "ab1", "y"), user("c3", "ab2", "z")], name="one.jsonl")
    write_session(proj, [header(id="0195aaaa-0000-7000-8000-000000000002"), user("u1", None, "x")], name="two.jsonl")
    return tmp_path / "sessions", one


@pytest.mark.parametrize("case", ["no such session", "ambiguous session prefix", "ambiguous entry prefix",
                                  "no such entry", "not a session", "missing file", "empty file"])
@pytest.mark.parametrize("json_out", [False, True])
def test_every_failure_to_compare_is_exit_2(tmp_path, monkeypatch, case, json_out):
    """A script tells "they differ" (1) from "could not compare" (2): whatever stops the comparison
    is 2, with the reason on stderr (and the error document with --json), never a traceback."""
    root, one = _project(tmp_path)
    not_session = write_session(tmp_path, [{"type": "message", "id": "x"}], name="notes.jsonl")
    empty = write_bytes(tmp_path, b"", name="empty.jsonl")
    args = {
        "no such session": [one, "0195ffff"],
        "ambiguous session prefix": ["0195aaaa", one],
        "ambiguous entry prefix": [one, "ab", "c3"],
        "no such entry": [one, "ab1", "zz9"],
        "not a session": [not_session, one],
        "missing file": [one, str(tmp_path / "gone.jsonl")],
        "empty file": [one, "ab1", f"{empty}@x"],
    }[case]
    runner = cli_runner(monkeypatch)
    monkeypatch.chdir(tmp_path)
    r = invoke(runner, "diff", *args, "--sessions-dir", str(root), "--cwd", "/work/proj",
               *(["--json"] if json_out else []))
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("pisess: ") and "Traceback" not in r.stdout + r.stderr
    if json_out:
        assert "error" in json.loads(r.stdout)


def test_they_differ_is_exit_1_and_the_same_is_0(tmp_path, monkeypatch):
    root, one = _project(tmp_path)
    runner = cli_runner(monkeypatch)
    assert invoke(runner, "diff", one, "ab1", "c3").exit_code == 1
    assert invoke(runner, "diff", one, "c3", "c3").exit_code == 0


def test_help_keeps_each_example_on_its_own_line(monkeypatch):
    """Click rewraps a paragraph: the examples are kept apart (``\\b``), one command per line, at 80."""
    r = invoke(cli_runner(monkeypatch, columns=80), "diff", "--help")
    lines = [line.strip() for line in r.stdout.splitlines()]
    examples = [line for line in lines if line.startswith("pisess diff ")]
    assert [e.split()[2] for e in examples] == ["0195e682", "0195e682", "0195e682@d00dfeed"]
    assert "two branches of one session" in examples[0] and examples[2].endswith("--stat")
    assert all(len(line) <= 80 for line in r.stdout.splitlines())


# --- --json: each side's context, rebuilt from the document ------------------------------------------------


def _rebuilt(doc: dict, side: str) -> tuple[list, list]:
    """One side's context from diff's steps: a run of the same messages lists each side's entry ids
    and messages, any other step the one message of each side it holds."""
    ids, messages = [], []
    for step in doc["messages"]:
        mine = step[side]
        if mine is None:
            continue
        if step["op"] == "same":
            assert len(mine["entryIds"]) == len(mine["messages"]) == step["count"]
            ids += mine["entryIds"]
            messages += mine["messages"]
        else:
            ids.append(mine["entryId"])
            messages.append(mine["message"])
        assert mine["index"] == len(ids) - (step["count"] if step["op"] == "same" else 1)
    return ids, messages


@pytest.mark.parametrize("kind", ["branches", "fork"])
def test_json_rebuilds_each_side_context_as_context_prints_it(tmp_path, monkeypatch, kind):
    """Every message of both sides, the same ones included, carries its entry id: each side's
    ``messageEntryIds`` and ``messages`` are ``context --leaf X --json``'s, in order."""
    root = _fixture_root(tmp_path)
    pair = next(p for p in PAIRS if (p["a"]["file"] == p["b"]["file"]) == (kind == "branches")
                and p["a"]["messages"][:1] == p["b"]["messages"][:1])
    runner = cli_runner(monkeypatch)
    fa, fb = (str(root / Path(pair[s]["file"]).name) for s in ("a", "b"))
    r = invoke(runner, "diff", f"{fa}@{pair['a']['leaf']}", f"{fb}@{pair['b']['leaf']}", "--json")
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["messages"][0]["op"] == "same"  # (the case the issue names: a run of equal messages)
    for side, f in (("a", fa), ("b", fb)):
        ctx = json.loads(invoke(runner, "context", f, "--leaf", pair[side]["leaf"], "--json").stdout)
        ids, messages = _rebuilt(doc, side)
        assert ids == ctx["messageEntryIds"]
        assert messages == ctx["messages"]


# --- the same path: one file twice, or a file and its byte copy ----------------------------------------------


def test_a_file_and_its_byte_copy_say_the_same_as_the_file_twice(tmp_path, monkeypatch):
    """Text and JSON agree (relation ``same``: no "parted after"), and the entries in common are
    counted alike, labels included, whether the two sides are one file or a file and its copy."""
    f = write_session(tmp_path, [header(), user("u1", None, "x"), entry("label", "L1", "u1", targetId="u1", label="bm"),
                                 assistant("a1", "L1", "y")], name="one.jsonl")
    copy = shutil.copy(f, tmp_path / "copy.jsonl")
    runner = cli_runner(monkeypatch, columns=80)
    docs = [json.loads(invoke(runner, "diff", f, str(other), "--json").stdout) for other in (f, copy)]
    assert [(d["relation"], d["commonEntryCount"], d["partedAfter"]) for d in docs] == [("same", 3, "a1")] * 2
    heads = [invoke(runner, "diff", f, str(other), "--stat").stdout.splitlines()[:2] for other in (f, copy)]
    assert heads[0] == heads[1]
    assert heads[0][0] == "the same path on both sides \u00b7 3 entries in common"


def test_a_thinking_level_set_before_the_parting_point_is_each_side_level(tmp_path, monkeypatch):
    """Both sides ran at ``low``, set before they parted: the table says ``low`` on both sides, not
    ``—``; a side that changes it after the parting point lists both levels it ran at."""
    f = write_session(tmp_path, [
        header(), entry("thinking_level_change", "t1", None, thinkingLevel="low"), user("u1", "t1", "go"),
        assistant("a1", "u1", "ok"), user("u2", "a1", "A"), assistant("a2", "u2", "done A"),
        user("u3", "a1", "B"), assistant("a3", "u3", "done B"),
        entry("thinking_level_change", "t4", "a3", thinkingLevel="high"), user("u4", "t4", "more"),
        assistant("a4", "u4", "done B2"),
    ])
    runner = cli_runner(monkeypatch, columns=80)
    doc = json.loads(invoke(runner, "diff", f, "a2", "a3", "--json").stdout)
    assert (doc["a"]["thinkingLevels"], doc["b"]["thinkingLevels"]) == (["low"], ["low"])
    row = next(line for line in invoke(runner, "diff", f, "a2", "a3", "--stat").stdout.splitlines()
               if line.strip().startswith("thinking"))
    assert row.split()[1:] == ["low", "low"]
    doc = json.loads(invoke(runner, "diff", f, "a2", "a4", "--json").stdout)
    assert (doc["a"]["thinkingLevels"], doc["b"]["thinkingLevels"]) == (["low"], ["low", "high"])


def _examples_root(tmp_path) -> str:
    from importlib import resources

    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as src:
        shutil.copytree(src, tmp_path / "sessions")
    return str(tmp_path / "sessions")


@pytest.mark.parametrize("columns", [40, 52, 64, 80])
def test_a_narrow_terminal_cuts_neither_the_heading_nor_a_difference_mark(tmp_path, monkeypatch, columns):
    """The heading's pieces go to lines of their own rather than being cut; a row whose sides do not
    fit side by side is folded under its label, which then carries the ``≠``; every line fits."""
    root = _examples_root(tmp_path)
    r = invoke(cli_runner(monkeypatch, columns=columns), "diff", "01955b3b-ca80-7e01", "28e2429e", "a3a7a4d8",
               "--stat", "--sessions-dir", root)
    lines = r.stdout.splitlines()
    assert all(len(line) <= columns for line in lines), [line for line in lines if len(line) > columns]
    text = " ".join(lines)
    assert "parted after 9cbe6f68" in text and "11 entries in common" in text
    assert "A b5624c3e \u2192 28e2429e" in text and "B 73a52eb7 \u2192 a3a7a4d8" in text
    assert "A A" not in text
    differ = {"entries", "user turns", "assistant messages", "tool calls (failed)", "by tool", "tokens in / out",
              "cache read / write", "cost", "time", "compactions", "files written", "context at leaf"}
    for label in differ | {"models", "thinking", "context edits"}:
        row = next(line for line in lines if line.strip().startswith(label))
        assert row.rstrip().endswith("\u2260") == (label in differ), (label, row)


def test_a_forgotten_third_argument_is_named_as_an_entry_of_the_first_session(tmp_path, monkeypatch):
    """``diff FILE ENTRY``: ENTRY is no session, but an entry of FILE; the error says so and what to
    type (both entries, or the entry and the leaf), exit 2."""
    root, one = _project(tmp_path)
    runner = cli_runner(monkeypatch, columns=80)
    r = invoke(runner, "diff", one, "ab1", "--sessions-dir", str(root), "--cwd", "/work/proj")
    assert r.exit_code == 2, r.stderr
    assert "'ab1' is an entry of" in r.stderr and one in r.stderr
    assert f"pisess diff {one} ab1 c3" in r.stderr  # (c3: the session's leaf)
    r = invoke(runner, "diff", one, "zzz", "--sessions-dir", str(root), "--cwd", "/work/proj")
    assert r.exit_code == 2 and "no session matches 'zzz'" in r.stderr and "entry of" not in r.stderr


def test_the_two_files_are_named_whole(tmp_path, monkeypatch):
    """Two files: each side's path is printed whole, never cut (a narrow terminal folds it)."""
    deep = tmp_path / ("a-long-project-directory-name-" * 3) / "x"
    f = write_session(deep, [header(), user("u1", None, "x"), assistant("a1", "u1", "y")], name="one.jsonl")
    copy = str(shutil.copy(f, tmp_path / "copy.jsonl"))
    r = invoke(cli_runner(monkeypatch, columns=40), "diff", f, copy, "--stat")
    assert f"  A {f}" in r.stdout.splitlines() and f"  B {copy}" in r.stdout.splitlines()
