"""The tool results the index scan saw answer their assistant's call (``CompactIndex.answered``):
``unpaired.calls_not_made`` reads back only the others, and must answer as reading all would."""

from __future__ import annotations

import json
import os
import tempfile
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from pisess.core.analyses.unpaired import results_not_made
from pisess.core.model.pairing import SKIPPED
from pisess.core.reading.compact import DROPPED, _received, _second_half, join_parts, scan_part
from pisess.core.reading.session import open_session

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-03-03T09:00:00.000Z", "cwd": "/w"}
TS = "2025-03-03T09:00:01.000Z"


def _write(entries: list) -> str:
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w") as fh:
        for e in [HEADER, *entries]:
            fh.write(json.dumps(e) + "\n")
    return path


def _msg(eid: str, parent: str | None, message: dict, **more) -> dict:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": TS, "message": message, **more}


def _call(cid, args=None) -> dict:
    return {"type": "toolCall", "id": cid, "name": "bash", "arguments": args if args is not None else {"c": "ls"}}


def _result(cid) -> dict:
    return {"role": "toolResult", "toolCallId": cid, "toolName": "bash", "content": [{"type": "text", "text": "ok"}],
            "isError": False, "timestamp": 1}


def _assistant(content, stop: str = "toolUse") -> dict:
    return {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 1}


def _both_ways(path: str) -> tuple[list, list, int]:
    """``results_not_made`` with the scan's pairs and without them (every result read back), and
    how many pairs the scan noted."""
    fast = open_session(path, "cli", light=True)
    noted = len(fast.store.answered()[0])
    slow = open_session(path, "cli", light=True)
    slow.store.ix.answered, slow.store.ix.answered_by = array("i"), array("i")
    return results_not_made(fast), results_not_made(slow), noted


def test_the_scan_drops_the_assistants_pi_ai_drops():
    assert DROPPED == SKIPPED


def test_an_id_inside_a_tool_calls_arguments_is_no_call(tmp_path):
    """A result whose id the assistant names only inside a call's arguments (an object shaped as a
    tool call, nested) answers no call: it goes to the provider without one, read back or not."""
    nested = {"plan": [{"type": "toolCall", "id": "call_b"}], "type": "toolCall", "id": "call_b"}
    entries = [
        _msg("u1", None, {"role": "user", "content": "go", "timestamp": 1}),
        _msg("a1", "u1", _assistant([{"type": "text", "text": "{\"type\":\"toolCall\",\"id\":\"call_b\"}"},
                                     _call("call_a", nested)])),
        _msg("r1", "a1", _result("call_a")),
        _msg("r2", "r1", _result("call_b")),
    ]
    path = _write(entries)
    try:
        fast, slow, noted = _both_ways(path)
    finally:
        os.unlink(path)
    assert noted == 1  # r1's pair only
    assert fast == slow == [3]  # r2 (position 3): its call is made nowhere


def test_the_scan_notes_the_results_pi_writes_and_not_a_dropped_assistants(tmp_path):
    entries = [_msg("u1", None, {"role": "user", "content": "go", "timestamp": 1})]
    parent = "u1"
    for t in range(6):
        stop = "aborted" if t == 4 else "toolUse"
        entries.append(_msg(f"a{t}", parent, _assistant([_call(f"c{t}x"), _call(f"c{t}y")], stop)))
        entries.append(_msg(f"r{t}x", f"a{t}", _result(f"c{t}x")))
        entries.append(_msg(f"r{t}y", f"r{t}x", _result(f"c{t}y")))
        parent = f"r{t}y"
    path = _write(entries)
    try:
        fast, slow, noted = _both_ways(path)
        whole = scan_part(path)
        assert whole is not None
        # a file read in two parts (the second by a child: its pairs cross the pipe, shifted)
        data = open(path, "rb").read()
        split = data.index(b"\n", len(data) // 2) + 1
        first = scan_part(path, stop=split)
        sent = _second_half(path, split)
        assert first is not None and sent is not None
        joined = join_parts(first, _received(sent))
    finally:
        os.unlink(path)
    assert noted == 10  # every result but the aborted turn's two
    assert fast == slow == [14, 15]
    assert joined is not None
    pairs = set(zip(joined.answered, joined.answered_by))
    assert pairs <= set(zip(whole.answered, whole.answered_by))
    assert len(pairs) >= 8  # (a result that opens the second part whose call ends the first: read back)


IDS = st.sampled_from(["c1", "c2", "c3", 7, None, True])


@st.composite
def turns(draw) -> list:
    """Sessions of assistants and tool results in pi's shape and out of it: ids shared, renamed,
    numbers, nested in arguments; dropped assistants; content that is no list; parents out of
    order; entries the index keeps whole (an extra key, a custom entry)."""
    entries: list = [_msg("u0", None, {"role": "user", "content": "go", "timestamp": 1})]
    for i in range(draw(st.integers(1, 14))):
        eid = f"e{i}"
        order = [e["id"] for e in entries]
        parent = order[-1] if draw(st.integers(0, 4)) else draw(st.sampled_from(order))
        kind = draw(st.sampled_from(["assistant", "result", "result", "user", "custom", "odd"]))
        if kind == "assistant":
            blocks = []
            for _ in range(draw(st.integers(0, 3))):
                shape = draw(st.integers(0, 4))
                if shape == 0:
                    blocks.append({"type": "text", "text": "hi"})
                elif shape == 1:
                    blocks.append(_call(draw(IDS), {"type": "toolCall", "id": draw(IDS)}))
                elif shape == 2:
                    blocks.append({"type": "toolCall", "name": "x"})  # no id
                else:
                    blocks.append(_call(draw(IDS)))
            content = blocks if draw(st.integers(0, 6)) else "text"
            stop = draw(st.sampled_from(["toolUse", "toolUse", "stop", "error", "aborted", None]))
            message = _assistant(content, stop)
            if stop is None:
                del message["stopReason"]
            entries.append(_msg(eid, parent, message))
            made = [b["id"] for b in blocks if b.get("type") == "toolCall" and "id" in b] \
                + [b["arguments"]["id"] for b in blocks if "id" in b.get("arguments", {})]  # (named, not made)
            for k in range(draw(st.integers(0, 3))):  # its results, as pi writes them (mostly)
                cid = draw(st.sampled_from(made)) if made and draw(st.integers(0, 3)) else draw(IDS)
                entries.append(_msg(f"{eid}r{k}", entries[-1]["id"] if draw(st.integers(0, 5)) else parent,
                                    _result(cid)))
        elif kind == "result":
            m = _result(draw(IDS))
            if not draw(st.integers(0, 6)):
                del m["toolCallId"]
            entries.append(_msg(eid, parent, m))
        elif kind == "user":
            entries.append(_msg(eid, parent, {"role": "user", "content": "more", "timestamp": 1}))
        elif kind == "custom":
            entries.append({"type": "custom", "id": eid, "parentId": parent, "timestamp": TS, "customType": "x"})
        else:  # a message the index keeps whole: an extra key
            m = _result(draw(IDS)) if draw(st.booleans()) else _assistant([_call(draw(IDS))])
            entries.append(_msg(eid, parent, m, extra=1))
    return entries


@settings(max_examples=examples(300), deadline=None)
@given(turns())
def test_the_noted_pairs_answer_as_reading_every_result_does(entries):
    path = _write(entries)
    try:
        fast, slow, _ = _both_ways(path)
    finally:
        os.unlink(path)
    assert fast == slow
