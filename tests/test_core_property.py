"""Property tests: random append-only session trees keep the path/context/fork invariants, and the
readers never fail with anything but PisessError on corrupted bytes."""

from __future__ import annotations

import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples, header, session_bytes
from pisess.core.analyses.validate import validate_bytes, validate_file
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context
from pisess.core.model.fork import entries_to_fork
from pisess.core.model.paths import active_path, path_to_checkpoint, path_to_root
from pisess.core.model.tree import build_tree
from pisess.core.reading.jsonl import scan_bytes
from pisess.core.reading.session import open_session

EXAMPLES = 60  # a full run's examples per property (conftest.examples: the default run's share)

KINDS = ["user", "assistant", "user", "assistant", "model_change", "thinking_level_change", "label", "compaction",
         "custom", "custom_message", "branch_summary", "session_info", "bash", "leaf"]


def _ancestors(parents: dict, start):
    out = []
    while start is not None:
        out.append(start)
        start = parents[start]
    return out


@st.composite
def session_trees(draw, with_leaf_records: bool = True):
    """A valid v3 file as a list of JSON values: every parent precedes its child, ids are unique."""
    n = draw(st.integers(1, 24))
    parents: dict = {}
    order: list = []
    lines: list = [header()]
    kinds = KINDS if with_leaf_records else [k for k in KINDS if k != "leaf"]
    for i in range(n):
        eid = f"e{i:02d}"
        if not order or draw(st.integers(0, 9)) == 0:
            parent = None
        elif draw(st.booleans()):
            parent = order[-1]
        else:
            parent = draw(st.sampled_from(order))
        kind = draw(st.sampled_from(kinds))
        ts = f"2026-07-25T09:{i // 60:02d}:{i % 60:02d}.000Z"
        e: dict = {"type": kind, "id": eid, "parentId": parent, "timestamp": ts}
        if kind in ("user", "assistant", "bash"):
            e["type"] = "message"
            if kind == "user":
                e["message"] = {"role": "user", "content": [{"type": "text", "text": eid}], "timestamp": i}
            elif kind == "assistant":
                e["message"] = {"role": "assistant", "content": [{"type": "text", "text": eid}], "provider": "p",
                                "model": draw(st.sampled_from(["m1", "m2"])), "stopReason": "stop", "timestamp": i}
            else:
                e["message"] = {"role": "bashExecution", "command": "ls", "output": draw(st.sampled_from(["", "x"])),
                                "exitCode": draw(st.sampled_from([0, 1])), "cancelled": draw(st.booleans()),
                                "truncated": False, "excludeFromContext": draw(st.booleans()), "timestamp": i}
        elif kind == "model_change":
            e.update(provider="p", modelId=draw(st.sampled_from(["m3", "m4"])))
        elif kind == "thinking_level_change":
            e["thinkingLevel"] = draw(st.sampled_from(["off", "low", "high"]))
        elif kind == "label":
            e["targetId"] = draw(st.sampled_from(order)) if order else eid
            e["label"] = draw(st.sampled_from(["mark", " pad ", "   ", ""]))
        elif kind == "compaction":
            e.update(summary=f"sum {eid}", tokensBefore=i)
            anc = _ancestors(parents, parent)
            choice = draw(st.integers(0, 5))
            if anc and choice <= 3:
                e["firstKeptEntryId"] = draw(st.sampled_from(anc))
            elif choice == 4:
                e["firstKeptEntryId"] = ""
            if with_leaf_records and draw(st.integers(0, 3)) == 0:
                e["retainedTail"] = draw(st.sampled_from([[], [{"role": "user", "content": "kept", "timestamp": 0}]]))
        elif kind == "custom":
            e.update(customType="ext", data={"i": i})
        elif kind == "custom_message":
            e.update(customType="ext", content=f"cm {eid}", display=True)
        elif kind == "branch_summary":
            e.update(fromId=parent or "root", summary=draw(st.sampled_from(["went", ""])))
        elif kind == "session_info":
            e["name"] = draw(st.sampled_from(["name", " ", ""]))
        elif kind == "leaf":
            e["targetId"] = draw(st.sampled_from(order)) if order and draw(st.integers(0, 4)) else None
        parents[eid] = parent
        order.append(eid)
        lines.append(e)
    return lines


def _open(lines, reader):
    data = session_bytes(lines)
    return open_session("<mem>", reader, raw=scan_bytes(data, "<mem>"))


def _ids(entries):
    return [e["id"] for e in entries]


def _check_chain(path):
    for prev, cur in zip(path, path[1:]):
        assert cur["parentId"] == prev["id"]


def _is_subsequence(sub, seq):
    it = iter(seq)
    return all(any(x is y for y in it) for x in sub)


@settings(max_examples=examples(EXAMPLES))
@given(session_trees())
def test_paths_are_parent_chains_and_harness_is_cli_suffix(lines):
    """For every entry as leaf: both paths are parent chains ending there; cli starts at a root;
    harness is a cli suffix."""
    h = _open(lines, "harness")
    c = _open(lines, "cli")
    for e in c.entries:
        leaf = e["id"]
        cp = path_to_root(c, c.lookup(leaf))
        hp = path_to_checkpoint(h, leaf)
        for p in (cp, hp):
            assert p and p[-1]["id"] == leaf
            _check_chain(p)
        assert cp[0]["parentId"] is None
        assert _ids(hp) == _ids(cp)[len(cp) - len(hp):]
        first = hp[0]
        assert (first["parentId"] is None
                or (first["type"] == "compaction" and first.get("retainedTail") is not None)
                or any(x.get("type") == "compaction" and x.get("firstKeptEntryId") == first["id"] for x in hp[1:]))


@settings(max_examples=examples(EXAMPLES))
@given(session_trees())
def test_current_leaf_paths(lines):
    """The current leaf follows each reader's rule, and active_path ends at it
    (harness may be empty for a null leaf)."""
    h = _open(lines, "harness")
    c = _open(lines, "cli")
    last = lines[-1]
    assert c.leaf_id == last["id"]
    assert h.leaf_id == (last["targetId"] if last["type"] == "leaf" else last["id"])
    hp = active_path(h)
    if h.leaf_id is None:
        assert hp == []
    else:
        assert hp[-1]["id"] == h.leaf_id
    cp = active_path(c)
    assert cp[-1]["id"] == c.leaf_id and cp[0]["parentId"] is None


@settings(max_examples=examples(EXAMPLES))
@given(session_trees())
def test_context_entries_follow_path(lines):
    """Context entries are path entries; after the leading compaction they keep path order (both readers)."""
    for reader in ("harness", "cli"):
        s = _open(lines, reader)
        for e in s.entries:
            ctx = build_context(s, e["id"])
            path = ctx.path
            sel = ctx.context_entries
            path_ids = {id(x) for x in path}
            assert all(id(x) in path_ids for x in sel)
            comps = [x for x in path if x["type"] == "compaction"]
            if comps:
                assert sel[0] is comps[-1]
                assert _is_subsequence(sel[1:], path)
                assert comps[-1] not in sel[1:]
            else:
                assert _ids(sel) == _ids(path)
            # every selected message entry contributes its message; llm messages are a subset of roles
            # (pi 1.6's cli reader: only the newest compaction, at the head of the selection, emits)
            assert len(ctx.messages) >= sum(1 for i, x in enumerate(sel) if x["type"] in ("message", "custom_message")
                                            or (x["type"] == "compaction" and (reader == "harness" or i == 0)))
            assert all(m["role"] in ("user", "assistant", "toolResult") for m in ctx.llm_messages)


@settings(max_examples=examples(EXAMPLES))
@given(session_trees())
def test_fork_at_leaf_reproduces_path(lines):
    """Forking 'at' an entry copies exactly its path
    (harness verbatim; cli without labels, re-chained, labels re-added)."""
    h = _open(lines, "harness")
    c = _open(lines, "cli")
    for e in c.entries:
        leaf = e["id"]
        hf, _ = entries_to_fork(h, leaf, "at")
        assert _ids(hf) == _ids(path_to_checkpoint(h, leaf))
        cf, empty = entries_to_fork(c, leaf, "at")
        assert not empty
        cp = [x for x in path_to_root(c, c.lookup(leaf)) if x["type"] != "label"]
        copied = cf[:len(cp)]
        assert _ids(copied) == _ids(cp)
        new_labels = cf[len(cp):]
        assert all(x["type"] == "label" for x in new_labels)
        on_path = {x["id"] for x in cp}
        assert sorted(x["targetId"] for x in new_labels) == sorted(t for t in c.labels_json() if t in on_path)
        parent = None
        for x in cf:
            assert x["parentId"] == parent
            parent = x["id"]
        assert len(set(_ids(cf))) == len(cf)


def _views(s):
    """Everything a command shows about a session, as plain data."""
    def loose(entries):
        return [e.get("id") if isinstance(e, dict) else e for e in entries]

    out = {"leaf": s.leaf_id, "ids": loose(s.entries), "labels": s.labels_json()}
    for key, step in (("name", s.session_name), ("path", lambda: loose(active_path(s)))):
        try:
            out[key] = step()
        except PisessError as err:
            out[key] = err.code
    try:
        ctx = build_context(s)
        out["context"] = (loose(ctx.context_entries), ctx.messages, ctx.llm_messages, ctx.state)
    except PisessError as err:
        out["context"] = err.code
    for e in list(s.entries)[-2:]:
        eid = e.get("id") if isinstance(e, dict) else None
        if not isinstance(eid, str):
            continue  # object ids are looked up by identity (a JS Map): not comparable across reads
        try:
            out[f"fork {eid!r}"] = entries_to_fork(s, eid, "at")
        except PisessError as err:
            out[f"fork {eid!r}"] = err.code
    return out


@settings(max_examples=examples(EXAMPLES))
@given(session_trees())
def test_light_reading_matches_full_reading(lines):
    """Opening with light=True (structural keys only, read back on demand) shows exactly what a full read shows."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        data = session_bytes(lines)
        with open(path, "wb") as fh:
            fh.write(data)
        for reader in ("harness", "cli"):
            assert _views(open_session(path, reader, light=True)) == _views(open_session(path, reader))
        full = validate_bytes(data, path)
        streamed = validate_file(path)
        assert (streamed.pi, streamed.findings) == (full.pi, full.findings)


MUTATION = st.tuples(st.sampled_from(["flip", "delete", "insert", "truncate", "dup_line"]),
                     st.integers(0, 10**6), st.binary(min_size=1, max_size=4))
NASTY = [b"\n", b"{", b"}", b'"', b"\xef\xbb\xbf", b"\xff", b"null", b"[", b"\r", b"0", b":", b","]


def _mutate(data: bytes, ops) -> bytes:
    for op, pos, blob in ops:
        if not data:
            data = blob
            continue
        i = pos % len(data)
        if op == "flip":
            data = data[:i] + bytes([data[i] ^ blob[0]]) + data[i + 1:]
        elif op == "delete":
            data = data[:i] + data[i + len(blob):]
        elif op == "insert":
            data = data[:i] + (NASTY[blob[0] % len(NASTY)] if blob[0] % 2 else blob) + data[i:]
        elif op == "truncate":
            data = data[:i]
        else:
            lines = data.split(b"\n")
            j = pos % len(lines)
            lines.insert(j, lines[(pos // 7) % len(lines)])
            data = b"\n".join(lines)
    return data


def _exercise(data: bytes) -> None:
    raw = scan_bytes(data, "<mem>")
    for reader in ("harness", "cli", "auto"):
        try:
            s = open_session("<mem>", reader, raw=raw)
        except PisessError:
            continue
        # Each step is bound to this reader's session (s=s), not to the loop variable.
        steps = [
            lambda s=s: active_path(s),
            lambda s=s: build_context(s),
            lambda s=s: build_tree(s),
            lambda s=s: s.session_name(),
            lambda s=s: s.labels_json(),
        ]
        for e in s.entries[-3:]:
            eid = e.get("id") if isinstance(e, dict) else None
            steps.append(lambda s=s, eid=eid: entries_to_fork(s, eid, "at"))
            steps.append(lambda s=s, eid=eid: entries_to_fork(s, eid, "before"))
            steps.append(lambda s=s, eid=eid: build_context(s, eid))
        for step in steps:
            try:
                step()
            except PisessError:
                pass
    validate_bytes(data, "<mem>")


@settings(max_examples=examples(EXAMPLES))
@given(session_trees(), st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_bytes_only_raise_pisess_error(lines, ops):
    """Arbitrary byte mutations of a valid file make the core raise PisessError or nothing else."""
    _exercise(_mutate(session_bytes(lines), ops))


JSON_VALUES = st.sampled_from([None, 0, 1, -1, 3, 2, 1.5, "", " ", "e00", "e01", "e02", "x", True, False, [], {}, [1],
                               {"role": "user"}, ["a", "b"], "message", "compaction", "leaf", "label", "session",
                               "assistant", "user", "bashExecution", "custom", "hookMessage"])
FIELDS = st.sampled_from(["type", "id", "parentId", "timestamp", "targetId", "label", "firstKeptEntryId",
                          "retainedTail", "message", "name", "summary", "content", "activeToolNames", "thinkingLevel",
                          "provider", "modelId", "customType", "version", "cwd", "role", "exitCode", "command"])


@settings(max_examples=examples(EXAMPLES))
@given(session_trees(),
       st.lists(st.tuples(st.integers(0, 30), FIELDS, JSON_VALUES, st.booleans()), min_size=1, max_size=4))
def test_value_mutations_only_raise_pisess_error(lines, edits):
    """Replacing or deleting JSON fields with odd values (null, "", [], {}, numbers, other ids)
    only raises PisessError."""
    lines = [dict(x) for x in lines]
    for idx, field, value, delete in edits:
        target = lines[idx % len(lines)]
        if field in ("role", "content", "exitCode", "command") and isinstance(target.get("message"), dict):
            target["message"] = dict(target["message"])
            target = target["message"]
        if delete:
            target.pop(field, None)
        else:
            target[field] = value
    _exercise(session_bytes(lines))


@settings(max_examples=examples(EXAMPLES))
@given(st.binary(max_size=300))
def test_random_bytes_only_raise_pisess_error(data):
    """Arbitrary bytes make the core raise PisessError or nothing else."""
    _exercise(data)
