"""pi 1.6.0's rules (spec Appendix C), each on a hand-written session, mostly the appendix's own
examples; where a rule changed, the pi 0.82.1 answer is asserted beside it."""

from __future__ import annotations

import json

import pytest

from conftest import DROP, assistant, entry, header, ids, message, user, write_session
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context
from pisess.core.model.fork import entries_to_fork
from pisess.core.model.system import current_system_message, js_key_order, prompt_text, tool_names
from pisess.core.model.usage import usage_breakdown
from pisess.core.reading.session import open_session


def open16(tmp_path, lines, version="1.6.0", name="s.jsonl"):
    return open_session(write_session(tmp_path, lines, name=name), "cli", pi_version=version)


def ctx16(tmp_path, lines, version="1.6.0", leaf=None):
    s = open16(tmp_path, lines, version)
    return build_context(s) if leaf is None else build_context(s, leaf)


def system(id_, parent, content="", **fields):
    msg = {"role": "system", "content": content, "timestamp": 1, **fields}
    if content is DROP:
        del msg["content"]
    return message(id_, parent, msg)


def tool(name):
    return {"name": name, "description": f"{name} tool", "parameters": {}}


def roles(messages):
    return [m["role"] for m in messages]


def text_of(m):
    c = m.get("content")
    return c if isinstance(c, str) else " ".join(b.get("text", "") for b in c if isinstance(b, dict))


# --- C.2-C.4: system messages -----------------------------------------------------------------------


C2 = [header(),
      system("s1", None, sections={"preamble": "You are…", "cwd": "/p"}, toolsAdded=[tool("read"), tool("write")]),
      user("u1", "s1"), assistant("a1", "u1"),
      system("s2", "a1", sections={"cwd": None, "skills": "<skills>…</skills>"}, toolsRemoved=[{"name": "write"}])]


def test_system_messages_replay_into_prompt_and_tools(tmp_path):
    """C.2's example: at leaf s2 the prompt is the preamble and the skills, the tools [read]."""
    c = ctx16(tmp_path, C2)
    sm = c.system_message()
    assert prompt_text(sm) == "You are…\n\n<skills>…</skills>"
    assert tool_names(sm) == ["read"]
    assert roles(c.llm_messages) == ["system", "user", "assistant", "system"]


def test_system_messages_are_dropped_by_082_convert_to_llm(tmp_path):
    """pi 0.82.1 did not know the role: convertToLlm drops it (C.4)."""
    c = ctx16(tmp_path, C2, "0.82.1")
    assert roles(c.messages) == ["system", "user", "assistant", "system"]
    assert roles(c.llm_messages) == ["user", "assistant"]


def test_replay_worked_check_sections_order_and_tools():
    """C.3's worked check: Map order for patches, index names first again, remove-then-add moves a tool."""
    ms = [{"role": "system", "content": "", "sections": {"b": "1", "2": "x", "a": "2"}, "timestamp": 5},
          {"role": "system", "content": "", "sections": {"b": None, "c": "3"}, "timestamp": 6},
          {"role": "system", "content": "", "sections": {"b": "4"}, "toolsAdded": [tool("t1"), tool("t2")], "timestamp": 7},
          {"role": "system", "content": "", "toolsRemoved": [{"name": "t1"}], "toolsAdded": [tool("t1")], "timestamp": 8}]
    out = current_system_message(ms)
    assert list(out["sections"].items()) == [("2", "x"), ("a", "2"), ("c", "3"), ("b", "4")]
    assert [t["name"] for t in out["toolsAdded"]] == ["t2", "t1"]
    assert out["timestamp"] == 5
    two = current_system_message([{"role": "system", "content": "", "sections": {"b": "B"}, "timestamp": 1},
                                  {"role": "system", "content": "", "sections": {"1": "one"}, "timestamp": 2}])
    assert list(two["sections"]) == ["1", "b"]


def test_replay_timestamp_subtlety():
    """No timestamp key and no tools: no message; a null timestamp: a message at time 0 (C.3)."""
    assert current_system_message([{"role": "system", "content": "A"}]) is None
    assert current_system_message([{"role": "system", "content": "A", "timestamp": None}]) == \
        {"role": "system", "content": "A", "timestamp": 0}
    assert current_system_message([{"role": "user", "content": "x", "timestamp": 1}]) is None


def test_js_key_order_puts_array_indices_first():
    assert [k for k, _ in js_key_order({"b": 1, "10": 2, "01": 3, "2": 4, "-1": 5})] == ["2", "10", "b", "01", "-1"]


def test_system_message_without_content_projects_empty_string(tmp_path):
    """C.2: a system message without content becomes content "" (user/assistant get [])."""
    c = ctx16(tmp_path, [header(), system("s1", None, content=DROP, sections={"a": "A"}), user("u1", "s1")])
    assert c.messages[0]["content"] == ""
    assert "content" not in ctx16(tmp_path, [header(), system("s1", None, content=DROP)], "0.82.1").messages[0]


# --- C.5-C.8: compactions -----------------------------------------------------------------------------


def comp(id_, parent, fk, summary="S", **fields):
    return entry("compaction", id_, parent, summary=summary, firstKeptEntryId=fk, tokensBefore=1, **fields)


def test_compaction_system_message_comes_first_and_kept_system_messages_go(tmp_path):
    """C.5/C.6: [systemMessage, summary]; system messages in the kept range are left out, those after kept."""
    checkpoint = {"role": "system", "content": "folded", "timestamp": 9}
    lines = [header(), system("s1", None, "prompt"), user("u1", "s1"), system("s2", "u1", "patch"),
             comp("c1", "s2", "s1", systemMessage=checkpoint), system("s3", "c1", "later"), user("u2", "s3")]
    c = ctx16(tmp_path, lines)
    assert ids(c.context_entries) == ["c1", "u1", "s3", "u2"]
    assert roles(c.messages) == ["system", "compactionSummary", "user", "system", "user"]
    assert c.messages[0] is not None and c.messages[0]["content"] == "folded"
    old = ctx16(tmp_path, lines, "0.82.1")
    assert ids(old.context_entries) == ["c1", "s1", "u1", "s2", "s3", "u2"]
    assert roles(old.messages)[0] == "compactionSummary"


def test_a_null_message_in_the_kept_range_throws_as_pi_does(tmp_path):
    """C.6 reads ``entry.message.role`` of every message entry in the kept range: a null message
    there is pi 1.6.0's TypeError (its own code, checked), a PisessError naming the entry and its
    line here: the context fails with it, and the tree, which marks the context's entries, says so
    above the rows (it raised a bare TypeError: a property test met one)."""
    from pisess.core.model.tree import build_tree

    lines = [header(), user("u1", None), message("n1", "u1", None), comp("c1", "n1", "u1"), user("u2", "c1")]
    with pytest.raises(PisessError, match=r"reading 'role'.*entry n1") as got:
        ctx16(tmp_path, lines)
    assert got.value.line == 3
    view = build_tree(open16(tmp_path, lines))
    assert "reading 'role'" in view.leaf_error and "entry n1" in view.leaf_error


def test_only_the_newest_compaction_emits(tmp_path):
    """C.7's example: selection [c2, u2, c1, u3]; 1.6 drops S1, 0.82.1 kept it."""
    lines = [header(), user("u1", None, "one"), user("u2", "u1", "two"), comp("c1", "u2", "u2", "S1"),
             user("u3", "c1", "three"), comp("c2", "u3", "u2", "S2")]
    new, old = ctx16(tmp_path, lines), ctx16(tmp_path, lines, "0.82.1")
    assert ids(new.context_entries) == ids(old.context_entries) == ["c2", "u2", "c1", "u3"]
    assert [m.get("summary") or text_of(m) for m in new.messages] == ["S2", "two", "three"]
    assert [m.get("summary") or text_of(m) for m in old.messages] == ["S2", "two", "S1", "three"]


def test_retain_none_compaction_keeps_nothing_before_it(tmp_path):
    """C.8: firstKeptEntryId = its own id keeps nothing before the compaction."""
    lines = [header(), user("u1", None), assistant("a1", "u1"), comp("c1", "a1", "c1"), user("u2", "c1")]
    assert ids(ctx16(tmp_path, lines).context_entries) == ["c1", "u2"]


# --- C.9-C.10: context edits --------------------------------------------------------------------------


def edit(id_, parent, target, replacement=DROP):
    return entry("context_edit", id_, parent, targetId=target, replacement=replacement)


EDITS = [header(), user("u3", None, "q"), assistant("a3", "u3", "long…"),
         edit("e1", "a3", "a3", None), edit("e2", "e1", "a3", {"content": "short"})]


def test_edit_example_latest_wins(tmp_path):
    """C.9's example: at e2 a3 says "short" (one text block); at e1 it is hidden."""
    c = ctx16(tmp_path, EDITS)
    assert c.messages[1]["content"] == [{"type": "text", "text": "short"}]
    assert c.messages[1]["provider"] == "anthropic"  # only the content changes
    assert get_edit_id(c, "a3") == "e2" and c.omitted == []
    assert [get_id(e) for e in c.message_sources] == ["u3", "a3"]
    hidden = ctx16(tmp_path, EDITS, leaf="e1")
    assert roles(hidden.messages) == ["user"]
    assert [get_id(e) for e in hidden.omitted] == ["a3"]
    assert ("a3", 0) in [(get_id(e), n) for e, n in hidden.projection]
    assert hidden.state.model == {"provider": "anthropic", "modelId": "claude-x"}  # state ignores edits


def get_id(e):
    return e.get("id")


def get_edit_id(c, target_id):
    return next(c.edit_of(e)["id"] for e, _ in c.projection if e.get("id") == target_id)


def test_edits_do_not_apply_with_082(tmp_path):
    c = ctx16(tmp_path, EDITS, "0.82.1")
    assert c.messages[1]["content"] == [{"type": "text", "text": "long…"}]
    assert c.applied_edits == {}


def test_edit_keeps_string_for_user_and_custom(tmp_path):
    """A string replacement stays a string for user and custom messages."""
    lines = [header(), user("u1", None, "orig"),
             entry("custom_message", "m1", "u1", customType="x", content="c-orig", display=True),
             edit("e1", "m1", "u1", {"content": "new"}), edit("e2", "e1", "m1", {"content": "new-c"})]
    c = ctx16(tmp_path, lines)
    assert c.messages[0]["content"] == "new" and c.messages[1]["content"] == "new-c"
    assert c.originals["u1"][0]["content"] == [{"type": "text", "text": "orig"}]


def test_edit_on_another_branch_or_summarized_has_no_effect(tmp_path):
    """Only edits inside the selection count; navigating back before the edit shows the original."""
    lines = [header(), user("u1", None, "one"), assistant("a1", "u1", "A"), edit("e1", "a1", "a1", None),
             user("u2", "a1", "other branch")]
    c = ctx16(tmp_path, lines)
    assert roles(c.messages) == ["user", "assistant", "user"] and c.applied_edits == {}


def test_null_edit_hides_any_entry_even_the_checkpoint(tmp_path):
    """A null edit omits a system message, a bashExecution, even the index-0 compaction (C.9)."""
    bash = {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 1}
    lines = [header(), user("u1", None), comp("c1", "u1", "u1", systemMessage={"role": "system", "content": "x"}),
             system("s1", "c1", "p"), message("b1", "s1", bash),
             edit("e1", "b1", "c1", None), edit("e2", "e1", "s1", None), edit("e3", "e2", "b1", None)]
    c = ctx16(tmp_path, lines)
    assert roles(c.messages) == ["user"]
    assert sorted(get_id(e) for e in c.omitted) == ["b1", "c1", "s1"]


def test_non_null_edit_leaves_other_roles_and_missing_content_drops_it(tmp_path):
    lines = [header(), system("s1", None, "p"), user("u1", "s1", "q"),
             edit("e1", "u1", "s1", {"content": "x"}), edit("e2", "e1", "u1", {"other": 1})]
    c = ctx16(tmp_path, lines)
    assert c.messages[0]["content"] == "p"
    assert "content" not in c.messages[1]


def test_edit_without_replacement_is_an_error(tmp_path):
    """pi throws applying an edit with no replacement key; pisess says so."""
    with pytest.raises(PisessError):
        ctx16(tmp_path, [header(), user("u1", None), edit("e1", "u1", "u1")])


# --- C.11-C.12: usage entries and the breakdown -------------------------------------------------------


def usage_of(cost, tokens=100):
    return {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def test_usage_entries_give_no_message_but_count_in_breakdown(tmp_path):
    a1 = assistant("a1", "u1")
    a1["message"]["usage"] = usage_of(0.5)
    a1["message"]["responseModel"] = "claude-x-2"
    t1 = message("t1", "a1", {"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": [],
                              "isError": False, "usage": usage_of(0.1), "timestamp": 3})
    g1 = entry("usage", "g1", "t1", kind="cache_warm", provider="anthropic", model="claude-x", usage=usage_of(0.015))
    lines = [header(), user("u1", None), a1, t1, g1]
    s = open16(tmp_path, lines)
    c = build_context(s)
    assert roles(c.messages) == ["user", "assistant", "toolResult"]
    assert c.session.leaf_id == "g1"
    assert usage_breakdown(s.iter_complete()) == [
        {"key": "anthropic/claude-x-2", "cost": 0.5, "tokens": 100},
        {"key": "Tools/summaries", "cost": 0.1, "tokens": 100},
        {"key": "anthropic/claude-x", "cost": 0.015, "tokens": 100},
    ]


def test_breakdown_leaves_out_empty_buckets_and_refuses_usage_without_cost(tmp_path):
    zero = assistant("a1", "u1")
    zero["message"]["usage"] = usage_of(0, tokens=0)
    s = open16(tmp_path, [header(), user("u1", None), zero])
    assert usage_breakdown(s.iter_complete()) == []
    bad = entry("usage", "g1", "u1", kind="x", provider="p", model="m", usage={"input": 1})
    with pytest.raises(PisessError):
        usage_breakdown(open16(tmp_path, [header(), user("u1", None), bad]).iter_complete())


# --- C.17: the final newline ------------------------------------------------------------------------


def unterminated(tmp_path):
    """A session whose last line lacks its newline."""
    path = write_session(tmp_path, [header(), user("u1", None)])
    with open(path, "rb+") as fh:
        data = fh.read().rstrip(b"\n")
        fh.seek(0)
        fh.write(data)
        fh.truncate()
    return path


def test_final_newline_repaired_from_0844(tmp_path):
    path = unterminated(tmp_path)
    assert open_session(path, "cli", pi_version="1.6.0").final_newline_repaired()
    assert not open_session(path, "cli", pi_version="0.82.1").final_newline_repaired()
    assert not open16(tmp_path, [header(), user("u1", None)], name="ok.jsonl").final_newline_repaired()


# --- C.25: fork remaps a compaction's kept entry --------------------------------------------------------


C25 = [header(), user("u1", None, "one"), entry("label", "L1", "u1", targetId="u1", label="bm"),
       assistant("a1", "L1"), comp("c1", "a1", "L1"), user("u2", "c1", "two")]


def test_fork_remaps_first_kept_label_to_next_entry(tmp_path):
    """C.25's example: 1.6 writes c1 keeping from a1; 0.82.1 keeps "L1" (and loses its kept range)."""
    new, _ = entries_to_fork(open16(tmp_path, C25), "u2", "at")
    old, _ = entries_to_fork(open16(tmp_path, C25, "0.82.1"), "u2", "at")
    assert next(e for e in new if e["id"] == "c1")["firstKeptEntryId"] == "a1"
    assert next(e for e in old if e["id"] == "c1")["firstKeptEntryId"] == "L1"
    fork_path = tmp_path / "fork.jsonl"
    fork_path.write_text("\n".join(json.dumps(v) for v in [header(), *new]) + "\n")
    c = build_context(open_session(str(fork_path), "cli"))
    assert [m.get("summary") or text_of(m) for m in c.messages] == ["S", "ok", "two"]


def test_fork_keeps_retain_none(tmp_path):
    lines = [header(), user("u1", None), entry("label", "L1", "u1", targetId="u1", label="x"),
             comp("c1", "L1", "c1"), user("u2", "c1")]
    new, _ = entries_to_fork(open16(tmp_path, lines), "u2", "at")
    assert next(e for e in new if e["id"] == "c1")["firstKeptEntryId"] == "c1"



# --- C.17, C.29: validate ---------------------------------------------------------------------------


def codes(tmp_path, lines, version="1.6.0", name="v.jsonl"):
    from pisess.core.analyses.validate import validate_file

    report = validate_file(write_session(tmp_path, lines, name=name), pi_version=version)
    return {f.code for f in report.findings}


def test_validate_context_edit_problems(tmp_path):
    lines = [header(), user("u1", None), assistant("a1", "u1"), user("u2", None),
             edit("e1", "u2", "nope", None), edit("e2", "e1", "a1", None), edit("e3", "e2", "u2"),
             edit("e4", "e3", "u2", 5), entry("model_change", "m1", "e4", provider="p", modelId="m"),
             edit("e5", "m1", "m1", None)]
    got = codes(tmp_path, lines)
    assert {"edit_target_missing", "edit_target_off_path", "edit_without_replacement", "edit_bad_replacement",
            "edit_target_not_editable"} <= got
    assert "unknown_type" not in got
    old = codes(tmp_path, lines, "0.82.1")
    assert "unknown_type" in old and not any(c.startswith("edit_") for c in old)


def test_validate_checkpoint_sections_usage_and_system(tmp_path):
    lines = [header(), system("s1", None, content=DROP, sections={"1": "x", "a": "y"}),
             comp("c1", "s1", "c1", systemMessage={"role": "user", "content": "x"}),
             entry("usage", "g1", "c1", kind="cache_warm", provider="p", model="m")]
    got = codes(tmp_path, lines)
    assert {"bad_checkpoint_system", "index_section_name", "usage_without_usage", "system_without_content"} <= got
    assert "first_kept_not_on_path" not in got  # retain-none is not damage (C.8)


def test_validate_clean_16_file_and_several_roots(tmp_path):
    """Several roots and a user-only session are normal (C.14, C.18)."""
    lines = [header(), system("s1", None, sections={"a": "A"}), user("u1", "s1"), user("u2", None)]
    assert codes(tmp_path, lines) == set()


def test_validate_unterminated_last_line_wording(tmp_path):
    from pisess.core.analyses.validate import validate_file

    path = unterminated(tmp_path)
    new = [f for f in validate_file(path).findings if f.code == "unterminated_line"]
    old = [f for f in validate_file(path, pi_version="0.82.1").findings if f.code == "unterminated_line"]
    assert len(new) == len(old) == 1 and new[0].line == 2
    assert "appends the newline" in new[0].message and "glue" in old[0].message
    assert validate_file(path).pi["cli"]["finalNewlineRepaired"] is True


# --- C.12: stats ---------------------------------------------------------------------------------------


def test_stats_counts_usage_entries_by_kind_with_16_only(tmp_path):
    from pisess.core.analyses.stats import compute_stats

    a1 = assistant("a1", "u1")
    a1["message"].update(usage=usage_of(0.5), responseModel="claude-x-2", thinkingLevel="high")
    lines = [header(), user("u1", None), a1,
             entry("usage", "g1", "a1", kind="cache_warm", provider="anthropic", model="claude-x", usage=usage_of(0.25)),
             entry("usage", "g2", "g1", kind="brand_new", provider="anthropic", model="claude-x", usage=usage_of(0.125)),
             entry("custom", "v1", "g2", customType="pi.virtual-model-state",
                   data={"provider": "router", "modelId": "auto", "state": {}})]
    path = write_session(tmp_path, lines)
    new = compute_stats([path], by="model").to_json()
    assert new["total"]["cost"] == 0.875
    assert new["total"]["usageKinds"] == {"cache_warm": {"entryCount": 1, "tokens": 100, "cost": 0.25},
                                          "brand_new": {"entryCount": 1, "tokens": 100, "cost": 0.125}}
    assert new["total"]["messageCountByThinkingLevel"] == {"high": 1}
    assert new["total"]["entryCountByVirtualModel"] == {"router/auto": 1}
    assert [g["key"] for g in new["groups"]] == ["anthropic/claude-x-2", "anthropic/claude-x"]
    old = compute_stats([path], by="model", pi_version="0.82.1").to_json()
    assert old["total"]["cost"] == 0.5 and old["total"]["usageKinds"] == {}
    assert [g["key"] for g in old["groups"]] == ["anthropic/claude-x"]


# --- search: system messages and edit replacements ---------------------------------------------------


def test_search_finds_system_sections_tools_and_edit_replacements(tmp_path):
    from pisess.core.analyses.search import make_matcher
    from pisess.core.analyses.search.scan import search_file

    lines = [header(), system("s1", None, "base", sections={"rules": "never rm -rf"},
                              toolsAdded=[{"name": "grepper", "description": "find rm calls", "parameters": {}}]),
             user("u1", "s1", "hello"), assistant("a1", "u1", "old answer"),
             edit("e1", "a1", "a1", {"content": "rm is replaced"})]
    path = write_session(tmp_path, lines)
    hits = search_file(path, make_matcher("rm", fields=["system", "edit"])).hits
    got = sorted((h.entry_id, h.match.field, h.match.snippet) for h in hits)
    assert got == [("e1", "edit", "rm is replaced"), ("s1", "system", "[rules] never rm -rf"),
                   ("s1", "system", "grepper: find rm calls")]
    assert search_file(path, make_matcher("rm", fields=["user"])) is None


def test_tree_and_path_mark_edit_targets(tmp_path):
    """tree flags an edited target edited, a hidden one hidden; path --json names the edit."""
    from pisess.core.model.tree import build_tree

    lines = [header(), user("u1", None, "q"), assistant("a1", "u1"), user("u2", "a1", "again"),
             assistant("a2", "u2"), edit("e1", "a2", "a1", None), edit("e2", "e1", "u2", {"content": "x"})]
    s = open16(tmp_path, lines)
    flags = {r.entry["id"]: r.flags for r in build_tree(s, full=True).rows if r.kind == "entry"}
    assert "hidden" in flags["a1"] and "edited" in flags["u2"] and not {"hidden", "edited"} & flags["a2"]
    old = {r.entry["id"]: r.flags for r in build_tree(open16(tmp_path, lines, "0.82.1"), full=True).rows}
    assert not {"hidden", "edited"} & old["a1"]


def test_export_system_begins_with_the_prompt_and_tools(tmp_path):
    """export --system (md and html): the prompt and tools the model is given at the leaf, as
    context --system folds them; without it, no such section."""
    from pisess.core.analyses.export import ExportOptions, export_context

    lines = [header(), system("s1", None, content="Be brief.", sections={"cwd": "cwd: /p <b>"},
                              toolsAdded=[tool("read"), tool("write")]),
             user("u1", "s1", "hi"), assistant("a1", "u1", "hello")]
    ctx = ctx16(tmp_path, lines)
    md = export_context(ctx, "md", ExportOptions(system=True)).data.decode()
    assert "## System prompt" in md and "Be brief." in md and "cwd: /p <b>" in md
    assert "**Tools:** read, write" in md
    assert md.index("## System prompt") < md.index("## 1.")
    page = export_context(ctx, "html", ExportOptions(system=True)).data.decode()
    assert 'id="system"' in page and "cwd: /p &lt;b&gt;" in page and "tools: read, write" in page
    assert "System prompt" not in export_context(ctx, "md").data.decode()
    assert 'id="system"' not in export_context(ctx, "html").data.decode()


def test_export_names_what_context_edits_hid_and_replaced(tmp_path):
    from pisess.core.analyses.export import export_context

    lines = [header(), user("u1", None, "first"), assistant("a1", "u1", "secret attempt"),
             user("u2", "a1", "again"), edit("e1", "u2", "a1", None)]
    md = export_context(ctx16(tmp_path, lines), "md").data.decode()
    assert "secret attempt" not in md
    assert "**Hidden:** 1 message hidden by context edits: a1" in md


# --- search, stats, du: what a context_edit hid or replaced is "edited", not "active" ---------------

EDITED = [header(), user("u1", None, "look at the logs"),
          message("a1", "u1", {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash",
                                                                "arguments": {"command": "cat log"}}],
                               "api": "anthropic-messages", "provider": "anthropic", "model": "claude-x",
                               "stopReason": "toolUse", "timestamp": 2}),
          message("t1", "a1", {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                               "content": [{"type": "text", "text": "huge NEEDLEHIDDEN output"}], "isError": False,
                               "timestamp": 3}),
          assistant("a2", "t1", "long NEEDLEREPLACED answer"),
          edit("e1", "a2", "t1", None),
          edit("e2", "e1", "a2", {"content": "short NEEDLEOLD answer"}),  # a later edit of a2 wins
          edit("e3", "e2", "a2", {"content": "short NEEDLENEW answer"}),
          user("u2", "e3", "thanks")]


@pytest.mark.parametrize("small", [True, False], ids=["parsed", "streamed"])
def test_search_places_what_context_edits_hid_or_replaced_as_edited(tmp_path, small):
    from pisess.core.analyses.search import make_matcher
    from pisess.core.analyses.search.scan import search_file

    path = write_session(tmp_path, EDITED)
    m = make_matcher("NEEDLE")
    kw = {} if small else {"small": 0}
    where = {h.match.snippet.split()[1]: h.where for h in search_file(path, m, **kw).hits}
    assert where == {"NEEDLEHIDDEN": "edited", "NEEDLEREPLACED": "edited", "NEEDLEOLD": "edited",
                     "NEEDLENEW": "active"}
    active = [h.match.snippet for h in search_file(path, m, active_only=True, **kw).hits]
    assert active == ["short NEEDLENEW answer"]
    # pi 0.82.1 applies no edits: the model sees all of it
    old = search_file(path, m, pi_version="0.82.1", **kw)
    assert {h.where for h in old.hits} == {"active"}


def test_search_legend_says_what_edited_means(tmp_path, monkeypatch):
    from conftest import cli_runner, invoke

    path = write_session(tmp_path, EDITED)
    r = invoke(cli_runner(monkeypatch, columns=200), "search", "NEEDLEHIDDEN", path)
    assert r.exit_code == 0
    assert "edited" in r.stdout.splitlines()[1].split()
    assert "edited: hidden or replaced by a context edit" in r.stdout


def test_stats_and_du_count_edited_apart(tmp_path):
    from pisess.core.analyses.du import disk_usage
    from pisess.core.analyses.stats import compute_stats

    path = write_session(tmp_path, EDITED)
    st = compute_stats([path])
    assert st.where["edited"]["entryCount"] == 3  # t1, a2, e2
    assert st.where["edited"]["messageCount"] == 2
    assert st.where["active"]["entryCount"] == 5  # u1, a1, e1, e3, u2
    du = disk_usage([path])
    sizes = [len(line) for line in open(path, "rb").read().split(b"\n")]
    assert du.where["edited"] == sizes[3] + sizes[4] + sizes[6]
