"""Context building (spec §7): entry selection under compactions, projection of each entry type,
convertToLlm text formats, and the derived state."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conftest import DROP, TS, assistant, entry, header, ids, message, user, write_session
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context, convert_to_llm
from pisess.core.reading.session import open_session

TS_MS = int(datetime(2026, 7, 25, 9, 14, 3, 512000, tzinfo=timezone.utc).timestamp() * 1000)
COMP_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"


def comp(id_, parent, fk=DROP, tail=DROP, summary=None, tokens=100):
    return entry("compaction", id_, parent, summary=summary or f"S-{id_}", firstKeptEntryId=fk, tokensBefore=tokens,
                 retainedTail=tail)


def ctx(tmp_path, lines, reader, pi_version="1.6.0", **kw):
    return build_context(open_session(write_session(tmp_path, lines), reader, pi_version=pi_version), **kw)


def texts(messages):
    """A compact view of each message: role plus its first text (or summary)."""
    out = []
    for m in messages:
        if "summary" in m:
            out.append((m["role"], m["summary"]))
            continue
        c = m.get("content")
        if isinstance(c, list) and c and isinstance(c[0], dict):
            c = c[0].get("text")
        out.append((m["role"], c))
    return out


def bash(**fields):
    base = {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0, "cancelled": False,
            "truncated": False, "timestamp": 5}
    return {k: v for k, v in {**base, **fields}.items() if v is not DROP}


def llm_text(msg):
    [out] = convert_to_llm([msg])
    assert out["role"] == "user" and out["timestamp"] == msg["timestamp"]
    return out["content"][0]["text"]


# --- selection under compactions -------------------------------------------------------------------


def test_harness_retained_tail_context(tmp_path):
    """Path [C(retainedTail=[q2]), q3] gives compactionSummary, q2, q3 (spec §7.1 example)."""
    q2 = {"role": "user", "content": "q2", "timestamp": 2}
    lines = [header(), user("q1", None, "q1"), comp("C", "q1", fk="q1", tail=[q2]), user("q3", "C", "q3")]
    c = ctx(tmp_path, lines, "harness")
    assert ids(c.path) == ["C", "q3"]
    assert ids(c.context_entries) == ["C", "q3"]
    assert texts(c.messages) == [("compactionSummary", "S-C"), ("user", "q2"), ("user", "q3")]
    assert c.checkpoint["id"] == "C"


def test_harness_empty_retained_tail_context(tmp_path):
    """retainedTail [] still ends the walk: only the summary and later entries."""
    lines = [header(), user("q1", None, "q1"), comp("C", "q1", fk="q1", tail=[]), user("q3", "C", "q3")]
    assert texts(ctx(tmp_path, lines, "harness").messages) == [("compactionSummary", "S-C"), ("user", "q3")]


def test_harness_first_kept_context(tmp_path):
    """Path [q3, C2(firstKept=q3), q4] gives compactionSummary(C2), q3, q4 (spec §7.1 example)."""
    lines = [header(), user("q1", None, "q1"), user("q3", "q1", "q3"), comp("C2", "q3", fk="q3"),
             user("q4", "C2", "q4")]
    c = ctx(tmp_path, lines, "harness")
    assert ids(c.path) == ["q3", "C2", "q4"]
    assert texts(c.messages) == [("compactionSummary", "S-C2"), ("user", "q3"), ("user", "q4")]


def test_cli_full_root_path_with_compaction(tmp_path):
    """cli: path is the full root path; selection is the compaction, kept entries, later entries; no tail."""
    q2 = {"role": "user", "content": "q2", "timestamp": 2}
    lines = [header(), user("q1", None, "q1"), assistant("a1", "q1", "a1"), user("q2", "a1", "q2"),
             comp("C", "q2", fk="a1", tail=[q2]), user("q3", "C", "q3")]
    c = ctx(tmp_path, lines, "cli")
    assert ids(c.path) == ["q1", "a1", "q2", "C", "q3"]
    assert ids(c.context_entries) == ["C", "a1", "q2", "q3"]
    assert texts(c.messages) == [("compactionSummary", "S-C"), ("assistant", "a1"), ("user", "q2"), ("user", "q3")]


def test_cli_first_kept_not_on_path_keeps_nothing_before(tmp_path):
    """cli: a firstKeptEntryId not found before the compaction keeps nothing before it."""
    lines = [header(), user("q1", None, "q1"), comp("C", "q1", fk="ghost"), user("q3", "C", "q3")]
    c = ctx(tmp_path, lines, "cli")
    assert ids(c.path) == ["q1", "C", "q3"]
    assert ids(c.context_entries) == ["C", "q3"]


def test_several_compactions_older_takes_over_harness(tmp_path):
    """harness: an older compaction inside the newest one's kept range emits its summary too."""
    lines = [header(), user("a", None, "a"), assistant("b", "a", "b"), user("c", "b", "c"), comp("C1", "c", fk="b"),
             user("d", "C1", "d"), comp("C2", "d", fk="c"), user("e", "C2", "e")]
    c = ctx(tmp_path, lines, "harness")
    assert ids(c.path) == ["b", "c", "C1", "d", "C2", "e"]
    assert ids(c.context_entries) == ["C2", "c", "C1", "d", "e"]
    assert texts(c.messages) == [("compactionSummary", "S-C2"), ("user", "c"), ("compactionSummary", "S-C1"),
                                 ("user", "d"), ("user", "e")]


def test_several_compactions_older_tail_in_range(tmp_path):
    """harness: an older retainedTail compaction stops the walk and projects its tail inside the newer range."""
    t = {"role": "user", "content": "tail", "timestamp": 1}
    lines = [header(), user("a", None, "a"), comp("C1", "a", fk="a", tail=[t]), user("b", "C1", "b"),
             comp("C2", "b", fk="a"), user("c", "C2", "c")]
    c = ctx(tmp_path, lines, "harness")
    assert ids(c.path) == ["C1", "b", "C2", "c"]
    # C2's firstKeptEntryId "a" is not on the cut path: nothing before C2 is kept
    assert texts(c.messages) == [("compactionSummary", "S-C2"), ("user", "c")]


def test_several_compactions_cli_uses_last(tmp_path):
    """cli: only the last compaction on the full path decides the selection; pi 0.82.1 also emits
    the older one's summary inside the kept range, pi 1.6 (C.7) does not."""
    lines = [header(), user("a", None, "a"), comp("C1", "a", fk="a"), user("b", "C1", "b"),
             comp("C2", "b", fk="C1"), user("c", "C2", "c")]
    c = ctx(tmp_path, lines, "cli", pi_version="0.82.1")
    assert ids(c.context_entries) == ["C2", "C1", "b", "c"]
    assert texts(c.messages) == [("compactionSummary", "S-C2"), ("compactionSummary", "S-C1"), ("user", "b"),
                                 ("user", "c")]
    c = ctx(tmp_path, lines, "cli", pi_version="1.6.0")
    assert ids(c.context_entries) == ["C2", "C1", "b", "c"]
    assert texts(c.messages) == [("compactionSummary", "S-C2"), ("user", "b"), ("user", "c")]
    assert [(e["id"], n) for e, n in c.projection] == [("C2", 1), ("C1", 0), ("b", 1), ("c", 1)]


def test_no_compaction_selection_is_path(tmp_path):
    """Without a compaction the selection is the path and there is no checkpoint."""
    lines = [header(), user("a", None), assistant("b", "a"), entry("model_change", "m", "b", provider="p", modelId="x")]
    for reader in ("harness", "cli"):
        c = ctx(tmp_path, lines, reader)
        assert ids(c.context_entries) == ["a", "b", "m"]
        assert c.checkpoint is None
        assert len(c.messages) == 2


def test_explicit_leaf(tmp_path):
    """build_context at an explicit leaf walks from there; an unknown one is not_found."""
    lines = [header(), user("a", None, "a"), assistant("b", "a", "b"), user("c", "b", "c")]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert texts(build_context(s, "b").messages) == [("user", "a"), ("assistant", "b")]
    with pytest.raises(PisessError) as info:
        build_context(s, "zzz")
    assert info.value.code == "not_found"


# --- projection ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_branch_summary_projection(tmp_path, reader):
    """A branch_summary with a truthy summary becomes a branchSummary message; "" gives nothing, "  " counts."""
    lines = [header(), user("a", None, "a"),
             entry("branch_summary", "b1", "a", fromId="a", summary="went left"),
             entry("branch_summary", "b2", "b1", fromId="a", summary=""),
             entry("branch_summary", "b3", "b2", fromId="root", summary="  ")]
    c = ctx(tmp_path, lines, reader)
    assert c.messages[1:] == [
        {"role": "branchSummary", "summary": "went left", "fromId": "a", "timestamp": TS_MS},
        {"role": "branchSummary", "summary": "  ", "fromId": "root", "timestamp": TS_MS},
    ]
    assert c.llm_messages[1]["content"][0]["text"] == BRANCH_PREFIX + "went left</summary>"


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_custom_message_projection(tmp_path, reader):
    """custom_message becomes a role custom message with the entry timestamp in ms, then a user message."""
    lines = [header(), entry("custom_message", "m", None, customType="ext", content="Injected", display=True,
                             details={"k": 1})]
    c = ctx(tmp_path, lines, reader)
    assert c.messages == [{"role": "custom", "customType": "ext", "content": "Injected", "display": True,
                           "details": {"k": 1}, "timestamp": TS_MS}]
    assert c.llm_messages == [{"role": "user", "content": [{"type": "text", "text": "Injected"}], "timestamp": TS_MS}]


def test_custom_message_array_content_passes_through():
    """convertToLlm passes an array custom content through unchanged."""
    blocks = [{"type": "text", "text": "x"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]
    assert convert_to_llm([{"role": "custom", "customType": "e", "content": blocks, "timestamp": 1}]) == [
        {"role": "user", "content": blocks, "timestamp": 1}]


@pytest.mark.parametrize("content", [None, DROP])
def test_cli_custom_message_null_content_becomes_empty_list(tmp_path, content):
    """cli: custom_message content null/missing becomes [] (Appendix B 4); harness keeps it as is."""
    lines = [header(), entry("custom_message", "m", None, customType="ext", content=content, display=False)]
    assert ctx(tmp_path, lines, "cli").messages[0]["content"] == []
    hm = ctx(tmp_path, lines, "harness").messages[0]
    assert hm.get("content") is None


@pytest.mark.parametrize("content", [None, DROP])
def test_cli_message_null_content_becomes_empty_list(tmp_path, content):
    """cli: a user/assistant/toolResult message with null/missing content is emitted with content []."""
    msg = {k: v for k, v in {"role": "user", "content": content, "timestamp": 1}.items() if v is not DROP}
    lines = [header(), message("a", None, msg)]
    assert ctx(tmp_path, lines, "cli").messages == [{"role": "user", "content": [], "timestamp": 1}]
    assert ctx(tmp_path, lines, "harness").messages == [msg]


def test_custom_entry_projects_nothing_by_default(tmp_path):
    """A custom entry adds no message in either reader without a projector."""
    lines = [header(), user("a", None), entry("custom", "c", "a", customType="ext", data={"n": 1})]
    for reader in ("harness", "cli"):
        c = ctx(tmp_path, lines, reader)
        assert ids(c.context_entries) == ["a", "c"]
        assert len(c.messages) == 1


def test_custom_entry_projector_harness_only(tmp_path):
    """A projector for the customType is called by the harness reader with (entry, index, entries);
    the cli ignores it."""
    lines = [header(), user("a", None), entry("custom", "c", "a", customType="ext", data={"n": 7}),
             entry("custom", "d", "c", customType="other")]
    calls = []

    def projector(e, index, entries):
        calls.append((e["id"], index, ids(entries)))
        return [{"role": "user", "content": f"n={e['data']['n']}", "timestamp": 9}]

    c = ctx(tmp_path, lines, "harness", projectors={"ext": projector})
    assert calls == [("c", 1, ["a", "c", "d"])]
    assert c.messages[-1] == {"role": "user", "content": "n=7", "timestamp": 9}
    assert len(c.messages) == 2
    calls.clear()
    assert len(ctx(tmp_path, lines, "cli", projectors={"ext": projector}).messages) == 1
    assert calls == []


def test_unknown_and_state_entries_project_nothing(tmp_path):
    """model/thinking/tools changes, labels, session_info, leaf and unknown types add no messages."""
    lines = [header(), user("a", None), entry("model_change", "m", "a", provider="p", modelId="x"),
             entry("thinking_level_change", "t", "m", thinkingLevel="high"),
             entry("active_tools_change", "at", "t", activeToolNames=["read"]),
             entry("label", "l", "at", targetId="a", label="x"), entry("session_info", "i", "l", name="n"),
             entry("mystery", "u", "i"), entry("", "v", "u")]
    for reader in ("harness", "cli"):
        assert len(ctx(tmp_path, lines, reader).messages) == 1


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_compaction_summary_message_and_wrapper(tmp_path, reader):
    """A compaction projects a compactionSummary (summary, tokensBefore, ms timestamp) wrapped for the LLM."""
    lines = [header(), user("a", None), comp("C", "a", fk="a", summary="SUM", tokens=123)]
    c = ctx(tmp_path, lines, reader)
    assert c.messages[0] == {"role": "compactionSummary", "summary": "SUM", "tokensBefore": 123, "timestamp": TS_MS}
    assert c.llm_messages[0]["content"] == [{"type": "text", "text": COMP_PREFIX + "SUM\n</summary>"}]


def test_entry_timestamp_unparseable_gives_null_ms(tmp_path):
    """A custom_message with a non-date timestamp gets timestamp None (NaN in pi)."""
    lines = [header(), entry("custom_message", "m", None, ts="not a date", customType="e", content="x", display=True)]
    assert ctx(tmp_path, lines, "cli").messages[0]["timestamp"] is None


# --- convertToLlm (§7.3) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, "Ran `ls`\n```\na\nb\n```"),
        ({"output": ""}, "Ran `ls`\n(no output)"),
        ({"exitCode": 2}, "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2"),
        ({"exitCode": DROP}, "Ran `ls`\n```\na\nb\n```"),
        ({"exitCode": None}, "Ran `ls`\n```\na\nb\n```"),
        ({"exitCode": "0"}, "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 0"),
        ({"cancelled": True, "exitCode": 130}, "Ran `ls`\n```\na\nb\n```\n\n(command cancelled)"),
        ({"truncated": True, "fullOutputPath": "/tmp/o.txt"},
         "Ran `ls`\n```\na\nb\n```\n\n[Output truncated. Full output: /tmp/o.txt]"),
        ({"truncated": True}, "Ran `ls`\n```\na\nb\n```"),
        ({"truncated": False, "fullOutputPath": "/tmp/o.txt"}, "Ran `ls`\n```\na\nb\n```"),
        ({"output": "", "exitCode": 1, "truncated": True, "fullOutputPath": "/p"},
         "Ran `ls`\n(no output)\n\nCommand exited with code 1\n\n[Output truncated. Full output: /p]"),
        ({"command": ["a", "b"]}, "Ran `a,b`\n```\na\nb\n```"),
    ],
)
def test_bash_execution_text(fields, expected):
    """bashExecution becomes one user text block in pi's exact format."""
    assert llm_text(bash(**fields)) == expected


@pytest.mark.parametrize("flag", [True, 1, "yes"])
def test_bash_execution_excluded_from_context(flag):
    """A bashExecution with truthy excludeFromContext is dropped."""
    assert convert_to_llm([bash(excludeFromContext=flag)]) == []
    assert len(convert_to_llm([bash(excludeFromContext=False)])) == 1


def test_convert_wrappers_and_passthrough():
    """Summaries get their wrappers; user/assistant/toolResult pass unchanged; other roles are
    dropped, and so is system with pi 0.82.1 (pi 1.6 keeps it: C.4)."""
    u = {"role": "user", "content": "hi", "timestamp": 1}
    a = {"role": "assistant", "content": [], "timestamp": 2}
    t = {"role": "toolResult", "toolCallId": "c", "content": [], "isError": False, "timestamp": 3}
    system = {"role": "system", "content": "x", "timestamp": 7}
    messages = [
        u, a, t,
        {"role": "compactionSummary", "summary": "S", "tokensBefore": 1, "timestamp": 4},
        {"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 5},
        {"role": "hookMessage", "content": "x", "timestamp": 6},
        system,
    ]
    assert convert_to_llm(messages, "1.6.0")[5:] == [system]
    out = convert_to_llm(messages, "0.82.1")
    assert out[:3] == [u, a, t]
    assert out[3] == {"role": "user", "content": [{"type": "text", "text": COMP_PREFIX + "S\n</summary>"}],
                      "timestamp": 4}
    assert out[4] == {"role": "user", "content": [{"type": "text", "text": BRANCH_PREFIX + "B</summary>"}],
                      "timestamp": 5}
    assert len(out) == 5


def test_bash_execution_in_session_context(tmp_path):
    """A bashExecution message entry reaches the LLM as user text; an excluded one does not."""
    lines = [header(), message("a", None, bash()), message("b", "a", bash(command="secret", excludeFromContext=True))]
    c = ctx(tmp_path, lines, "cli")
    assert len(c.messages) == 2
    assert [m["content"][0]["text"] for m in c.llm_messages] == ["Ran `ls`\n```\na\nb\n```"]


# --- state ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_state_model_and_thinking_last_wins(tmp_path, reader):
    """model comes from model_change and assistant messages (last wins); thinking from the last change."""
    lines = [header(), entry("model_change", "m1", None, provider="anthropic", modelId="opus"),
             entry("thinking_level_change", "t1", "m1", thinkingLevel="medium"), user("u", "t1"),
             assistant("a", "u", provider="openai", model="gpt"),
             entry("thinking_level_change", "t2", "a", thinkingLevel="high")]
    st = ctx(tmp_path, lines, reader).state
    assert st.model == {"provider": "openai", "modelId": "gpt"}
    assert st.thinking_level == "high"
    lines.append(entry("model_change", "m2", "t2", provider="google", modelId="gem"))
    assert ctx(tmp_path, lines, reader).state.model == {"provider": "google", "modelId": "gem"}


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_state_defaults(tmp_path, reader):
    """With no settings on the path: model None, thinking "off", no tools."""
    st = ctx(tmp_path, [header(), user("a", None)], reader).state
    assert (st.model, st.thinking_level, st.active_tool_names) == (None, "off", None)


def test_state_only_from_active_branch(tmp_path):
    """Settings on another branch do not count."""
    lines = [header(), user("a", None), entry("model_change", "m", "a", provider="p", modelId="side"),
             assistant("b", "a", model="main")]
    assert ctx(tmp_path, lines, "cli").state.model == {"provider": "anthropic", "modelId": "main"}


def test_state_active_tools_harness_only(tmp_path):
    """activeToolNames is tracked by the harness only; the cli state has no such key."""
    lines = [header(), user("a", None), entry("active_tools_change", "t", "a", activeToolNames=["read", "bash"])]
    h = ctx(tmp_path, lines, "harness").state
    c = ctx(tmp_path, lines, "cli").state
    assert h.active_tool_names == ["read", "bash"]
    assert h.to_json("harness")["activeToolNames"] == ["read", "bash"]
    assert c.active_tool_names is None
    assert "activeToolNames" not in c.to_json("cli")


def test_state_invisible_after_retained_tail(tmp_path):
    """harness: after a retainedTail compaction earlier settings are invisible; cli still sees them."""
    tail = [{"role": "assistant", "content": [], "provider": "x", "model": "in-tail", "timestamp": 1}]
    lines = [header(), entry("model_change", "m", None, provider="anthropic", modelId="opus"),
             entry("thinking_level_change", "t", "m", thinkingLevel="high"),
             entry("active_tools_change", "at", "t", activeToolNames=["read"]), user("u", "at"),
             comp("C", "u", fk="u", tail=tail), user("v", "C")]
    h = ctx(tmp_path, lines, "harness").state
    assert (h.model, h.thinking_level, h.active_tool_names) == (None, "off", None)
    c = ctx(tmp_path, lines, "cli").state
    assert (c.model, c.thinking_level) == ({"provider": "anthropic", "modelId": "opus"}, "high")


def test_state_visible_when_kept_before_first_kept_compaction(tmp_path):
    """harness: settings inside the firstKeptEntryId range stay visible."""
    lines = [header(), user("u", None), entry("thinking_level_change", "t", "u", thinkingLevel="low"),
             comp("C", "t", fk="u"), user("v", "C")]
    assert ctx(tmp_path, lines, "harness").state.thinking_level == "low"


def test_state_partial_changes(tmp_path):
    """model_change without fields gives {}; thinking_level_change without a level gives None (Appendix B 21)."""
    lines = [header(), entry("model_change", "m", None), entry("thinking_level_change", "t", "m")]
    st = ctx(tmp_path, lines, "cli").state
    assert st.model == {}
    assert st.to_json("cli")["thinkingLevel"] is None


def test_active_tools_string_is_spread(tmp_path):
    """activeToolNames "ab" spreads into ["a", "b"] (Appendix B 10); null is a PisessError."""
    lines = [header(), entry("active_tools_change", "t", None, activeToolNames="ab")]
    assert ctx(tmp_path, lines, "harness").state.active_tool_names == ["a", "b"]
    lines = [header(), entry("active_tools_change", "t", None, activeToolNames=None)]
    with pytest.raises(PisessError):
        ctx(tmp_path, lines, "harness")


def test_retained_tail_odd_values(tmp_path):
    """retainedTail null adds nothing; a string adds one item per character; 0 is a PisessError (Appendix B 11)."""
    base = [header(), user("a", None)]
    c = ctx(tmp_path, base + [comp("C", "a", tail=None)], "harness")
    assert ids(c.path) == ["a", "C"]  # null does not stop the walk
    assert [m["role"] for m in c.messages] == ["compactionSummary"]
    c = ctx(tmp_path, base + [comp("C", "a", tail="xy")], "harness")
    assert c.messages[1:] == ["x", "y"]
    with pytest.raises(PisessError):
        ctx(tmp_path, base + [comp("C", "a", tail=0)], "harness")


def test_message_entry_without_message_is_error(tmp_path):
    """A message entry without a message object: both readers fail at the context stage (Appendix B 20)."""
    lines = [header(), entry("message", "a", None)]
    for reader in ("harness", "cli"):
        s = open_session(write_session(tmp_path, lines), reader)
        with pytest.raises(PisessError) as info:
            build_context(s)
        assert info.value.stage == "context"


def test_context_from_legacy_file_timestamp(tmp_path):
    """TS helper sanity: the entry timestamp used everywhere converts to the expected ms."""
    lines = [header(), entry("custom_message", "m", None, ts=TS, customType="e", content="x", display=True)]
    assert ctx(tmp_path, lines, "harness").messages[0]["timestamp"] == 1784970843512


def _utc_ms(*parts):
    return int(datetime(*parts, tzinfo=timezone.utc).timestamp() * 1000)


@pytest.mark.parametrize(
    "stamp, expected",
    [
        ("2026-07-25T09:14:03.512Z", _utc_ms(2026, 7, 25, 9, 14, 3, 512000)),
        ("2026-02-30T00:00:00.000Z", _utc_ms(2026, 3, 2)),
        ("2026-02-31", _utc_ms(2026, 3, 3)),
        ("2026-07-25T24:00:00Z", _utc_ms(2026, 7, 26)),
        ("2026-07-25", _utc_ms(2026, 7, 25)),
        ("2026-07", _utc_ms(2026, 7, 1)),
        ("+002026-07-25T00:00:00Z", _utc_ms(2026, 7, 25)),
        ("2026-07-25T09:14:03.5129Z", _utc_ms(2026, 7, 25, 9, 14, 3, 512000)),
        ("2026-07-25T09:14Z", _utc_ms(2026, 7, 25, 9, 14)),
        ("2026-07-25T09:14:03.512+02:00", _utc_ms(2026, 7, 25, 7, 14, 3, 512000)),
        ("2026-13-01", None),
        ("2026-07-32", None),
        ("2026-07-25T24:00:01Z", None),
        ("-000000-01-01", None),
        ("", None),
    ],
)
def test_summary_timestamps_follow_js_date_parsing(tmp_path, stamp, expected):
    """Summary/custom message timestamps are new Date(entry.timestamp).getTime() (Appendix B 12; NaN → None)."""
    lines = [header(), entry("branch_summary", "b", None, ts=stamp, fromId="root", summary="s")]
    assert ctx(tmp_path, lines, "cli").messages[0]["timestamp"] == expected


def test_an_entry_read_back_twice_is_the_same_object(tmp_path):
    """The model's last assistant message is read back for the state, then again as part of the
    context: one object, found at its line, without indexing every entry by identity."""
    from pisess.core.reading.session import open_session

    p = write_session(tmp_path, [header(), user("u1", None), assistant("a1", "u1"), user("u2", "a1")])
    s = open_session(p, "cli", light=True)
    light = s.entries[1]
    first = s.full(light)
    again = s.materialize([light, light, s.entries[0]])
    assert again[0] is first and again[1] is first and again[2]["id"] == "u1"
    assert s.line_of(first) == 3 and s.entries[1] is first and s.lookup("a1") is first
    assert "_pos_cache" not in s.__dict__
