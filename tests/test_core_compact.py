"""The compact index (core/reading/compact.py) must read every file exactly as the line scan does.

Files are generated with many entries and odd lines in random places, and read with small chunk
and block sizes, so chunk and block boundaries fall everywhere: between a child and its parent,
inside runs of blank lines, right after the header."""

from __future__ import annotations

import os
import tempfile
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assistant, entry, examples, header, session_bytes, user
from pisess.core import js
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context
from pisess.core.reading import compact
from pisess.core.reading.jsonl import Light, scan_file
from pisess.core.reading.session import open_session

EXAMPLES = 60  # a full run's examples for the cheapest property (conftest.examples: the default run's share)
TS = "2026-07-25T09:00:00.000Z"


# (the strategies that do not depend on what was drawn, made once: a draw then costs no lookup
# in Hypothesis's cache of strategies, a fifth of the generation; the choices are the same)
_N, _PICK, _KIND, _IMAGE_N = st.integers(1, 120), st.integers(0, 30), st.integers(0, 15), st.integers(1, 30)
_LABEL, _NAME = st.sampled_from(["keep", " x ", ""]), st.sampled_from(["n1", " n2 ", ""])
_ROLE, _TYPE = st.sampled_from(["user", 5, None]), st.sampled_from(["mystery", "compaction", "leaf", "custom"])
_IMAGE_TYPE = st.sampled_from(["image", "imag\u0065", "text"])
_BLANK_ONE_IN, _BLANK = st.integers(0, 25), st.sampled_from(["", "   ", "\t"])
_VALUE_ONE_IN, _VALUE = st.integers(0, 60), st.sampled_from(["null", "0", "false", '""', "[]", "5", '"text"', "{oops"])
_LEAF_ONE_IN = st.integers(0, 4)


@st.composite
def many_entry_files(draw):
    """Mostly plain messages, with the lines the index must not store as plain mixed in."""
    n = draw(_N)
    lines: list = [header()]
    ids: list = []
    for i in range(n):
        eid = f"{i:08x}"
        pick = draw(_PICK)
        if ids and pick == 0:
            eid = draw(st.sampled_from(ids))  # a duplicate id: the last occurrence wins
        parent = None if not ids or pick == 1 else ids[-1] if pick < 20 else draw(st.sampled_from(ids))
        if pick == 2:
            parent = f"{i + 1:08x}"  # the next entry's id: a parent that comes later
        if pick == 3:
            parent = "gone"
        kind = draw(_KIND)
        if kind <= 6:
            line = user(eid, parent, f"u{i}") if kind % 2 else assistant(eid, parent, f"a{i}")
        elif kind == 7:
            line = user(eid, parent, "odd time", ts="2026-07-25")  # not 24 characters
        elif kind == 8:
            line = {"id": eid, "type": "message", "parentId": parent, "timestamp": TS,
                    "message": {"role": "toolResult", "content": []}}  # another key order
        elif kind == 9:
            line = user(eid, parent, "x", extra=1)  # a sixth key
        elif kind == 10:
            line = entry("label", eid, parent, targetId=draw(st.sampled_from(ids)) if ids else eid,
                         label=draw(_LABEL))
        elif kind == 11:
            line = entry("session_info", eid, parent, name=draw(_NAME))
        elif kind == 12:
            line = entry("message", eid, parent, message={"role": draw(_ROLE)})
        elif kind == 13:
            line = entry(draw(_TYPE), eid, parent,
                         firstKeptEntryId=draw(st.sampled_from(ids)) if ids else "none", summary="S",
                         tokensBefore=5, targetId=draw(st.sampled_from(ids + ["gone"])) if ids else "gone")
        elif kind == 14:
            line = user(eid, draw(st.sampled_from(ids)) if ids else parent, "x")  # may close a cycle
        else:  # base64 images, one spelled so that the bytes "image" are not in the line
            line = user(eid, parent, [{"type": "image", "data": "QUJD" * draw(_IMAGE_N), "mimeType": "x/y"},
                                      {"type": draw(_IMAGE_TYPE), "data": "Rg=="}])
        lines.append(line)
        ids.append(eid)
        if draw(_BLANK_ONE_IN) == 0:
            lines.append(draw(_BLANK))
        if draw(_VALUE_ONE_IN) == 0:  # values the cli drops or keeps though they are no objects
            lines.append(draw(_VALUE))
    if draw(_LEAF_ONE_IN) == 0:
        lines.append(entry("leaf", f"{n:08x}", None, targetId=draw(st.sampled_from(ids))))
    return lines


def _seen(s) -> dict:
    out = {
        "reader": s.reader, "leaf": s.leaf_id, "labels": s.labels_json(), "header": s.header,
        "entries": [(dict(e), e.offset, e.length, e.index) if type(e) is Light else e for e in s.entries],
        "lines": list(s.entry_lines), "size": s.raw.size, "newline": s.raw.ends_with_newline,
        "lookups": {eid: s.position(s.lookup(eid))
                    for eid in {e.get("id") for e in s.entries
                                if isinstance(e, dict) and isinstance(e.get("id"), str)}},
    }
    for key, step in (("name", s.session_name), ("context", lambda: _context(s))):
        try:
            out[key] = step()
        except PisessError as err:
            out[key] = (err.code, err.message, err.line)
    return out


def _context(s):
    ctx = build_context(s)
    return [e.get("id") if isinstance(e, dict) else e for e in ctx.context_entries], ctx.messages, ctx.state


def _both(path: str, reader: str):
    indexed = open_session(path, reader, light=True)
    scanned = open_session(path, reader, raw=scan_file(path, light=True))
    return indexed, scanned


@settings(max_examples=examples(EXAMPLES))
@given(many_entry_files(), st.sampled_from([1, 2, 7, 256]),
       st.sampled_from([64, 300, 1 << 20]), st.booleans(), st.booleans())
def test_index_reads_what_the_line_scan_reads(lines, chunk_lines, block_bytes, newline, halves):
    """``halves``: every file is read in two halves, the second by a forked child."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines, trailing_newline=newline))
        with mock.patch.object(compact, "_CHUNK_LINES", chunk_lines), \
                mock.patch.object(compact, "_BLOCK_BYTES", block_bytes), \
                mock.patch.object(compact, "SPLIT_MIN", 1 if halves else compact.SPLIT_MIN), \
                mock.patch.object(compact.parallel, "cpus", return_value=2 if halves else 1):
            for reader in ("harness", "cli", "auto"):
                try:
                    indexed, scanned = _both(path, reader)
                except PisessError as err:
                    # the index hands every file a reader refuses to the line scan: same error
                    try:
                        open_session(path, reader, raw=scan_file(path, light=True))
                    except PisessError as again:
                        assert (again.code, again.message, again.line) == (err.code, err.message, err.line)
                    else:
                        raise AssertionError(f"only the index fails: {err}")
                    continue
                assert _seen(indexed) == _seen(scanned)


def test_plain_messages_keep_no_light_and_the_rest_does(tmp_path):
    """The point of the index: a million messages do not mean a million dicts."""
    lines = [header(), user("a", None), assistant("b", "a"), entry("label", "c", "b", targetId="a", label="x"),
             user("d", "c")]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(lines))
    ix = compact.scan_compact(str(path))
    assert ix is not None and len(ix) == 4 and list(ix.extras) == [2]
    assert ix.parents.tolist() == [-1, 0, -3, 2]
    s = open_session(str(path), "harness", light=True)
    assert type(s.entries).__name__ == "CompactEntries"
    assert s.entries[3] is s.entries[3] is s.lookup("d")  # one object per entry, once built
    assert s.entries[3]["parentId"] == "c" and s.label_of("a") == "x"


def test_files_the_index_leaves_to_the_line_scan(tmp_path):
    cases = {
        "legacy": [{"type": "session", "id": "s", "timestamp": TS, "cwd": "/w"}, user("a", None)],
        "no header": [user("a", None)],
        "bad json": [header(), user("a", None), "{oops"],
        "empty": [],
    }
    for name, lines in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(session_bytes(lines))
        assert compact.scan_compact(str(path)) is None, name
    # a line the harness refuses but the cli keeps as it is: indexed for the cli only
    path = tmp_path / "cli-only.jsonl"
    path.write_bytes(session_bytes([header(), user("a", None), entry("message", "", "a", message={"role": "user"})]))
    ix = compact.scan_compact(str(path))
    assert ix is not None and ix.harness_error and ix.cli_plain


def test_an_id_holding_a_newline_is_read_as_the_line_scan_reads_it(tmp_path):
    """A message that looks plain but whose id holds a newline (the index's joined id column cannot
    hold one) is read as the line scan reads it; it used to crash the index scan."""
    path = tmp_path / "nl.jsonl"
    path.write_bytes(session_bytes([header(), user("a\nb", None), assistant("c", "a\nb"), user("d", "c")]))
    for reader in ("harness", "cli"):
        indexed, scanned = _both(str(path), reader)
        assert _seen(indexed) == _seen(scanned)
        assert [e.get("id") for e in indexed.entries] == ["a\nb", "c", "d"]


def test_two_halves_make_the_same_index(tmp_path):
    """The forked reading of a big file joins into the index a single pass makes."""
    lines = [header()]
    for i in range(400):
        parent = None if i == 0 else f"{i - 1:08x}" if i % 50 else f"{i // 2:08x}"  # some point forward
        if i == 300:
            lines.append(entry("label", f"{i:08x}", parent, targetId="00000001", label="here"))
        elif i % 7 == 0:
            lines.append(assistant(f"{i:08x}", parent))
        else:
            lines.append(user(f"{i:08x}", parent, f"u{i}") if i % 3 else
                         {"type": "message", "id": f"{i:08x}", "parentId": parent, "timestamp": TS,
                          "message": {"role": f"role{i % 5}"}})
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(lines))
    one = compact.scan_compact(str(path), workers=1)
    with mock.patch.object(compact, "SPLIT_MIN", 1):
        assert compact._split_point(str(path)) is not None
        two = compact.scan_compact(str(path), workers=2)
    assert two is not None
    assert [two.light(i) for i in range(len(two))] == [one.light(i) for i in range(len(one))]
    assert [(e.offset, e.length, e.index) for e in map(two.light, range(len(two)))] == \
        [(e.offset, e.length, e.index) for e in map(one.light, range(len(one)))]
    assert {**two.pos_of, **two.later_pos_of} == one.pos_of and list(two.line_numbers()) == list(one.line_numbers())
    assert (two.size, two.ends_with_newline, two.line_count, two.header) == \
        (one.size, one.ends_with_newline, one.line_count, one.header)


def test_a_damaged_second_half_goes_to_the_line_scan(tmp_path):
    lines = [header()] + [user(f"{i:08x}", None if i == 0 else f"{i - 1:08x}") for i in range(200)] + ["{oops"]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(lines))
    with mock.patch.object(compact, "SPLIT_MIN", 1):
        assert compact.scan_compact(str(path), workers=2) is None
        s = open_session(str(path), "cli", light=True)  # dropped line: the line scan reads it
    assert len(s.entries) == 200 and s.dropped_lines == [{"line": 202, "reason": "not valid JSON"}]


def test_jobs_1_reads_in_one_pass(tmp_path, monkeypatch):
    """The caller's settings decide: up to the CPUs (as the CLI and this suite read), one process
    with ``jobs=1`` (``PISESS_JOBS=1`` for the CLI), and one process by the library's default."""
    from pisess.core import parallel

    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header()] + [user(f"{i:08x}", None) for i in range(50)]))
    calls = []
    monkeypatch.setattr(compact, "SPLIT_MIN", 1)
    monkeypatch.setattr(compact.parallel, "cpus", lambda: 2)
    monkeypatch.setattr(compact, "_scan_halves", lambda *a: calls.append(a) or compact.scan_part(str(path)))
    compact.scan_compact(str(path))
    assert len(calls) == 1
    previous = parallel.configure(parallel.from_environ({"PISESS_JOBS": "1"}))
    try:
        assert parallel.current() == parallel.Settings(jobs=1)
        compact.scan_compact(str(path))
        assert len(calls) == 1
        parallel.configure(parallel.Settings())  # the library's default
        compact.scan_compact(str(path))
        assert len(calls) == 1
        parallel.configure(parallel.from_environ({}))
        compact.scan_compact(str(path))
        assert len(calls) == 2
    finally:
        parallel.configure(previous)


def test_a_child_that_fails_leaves_the_file_to_the_line_scan(tmp_path, monkeypatch):
    import pickle

    lines = [header()] + [user(f"{i:08x}", None if i == 0 else f"{i - 1:08x}") for i in range(200)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(lines))
    monkeypatch.setattr(compact, "SPLIT_MIN", 1)

    def broken(*a, **k):
        raise RuntimeError("the child dies before it sends anything")

    monkeypatch.setattr(pickle, "dumps", broken)  # only the forked child pickles
    assert compact.scan_compact(str(path), workers=2) is None
    monkeypatch.setattr(compact.parallel, "cpus", lambda: 2)
    s = open_session(str(path), "harness", light=True)
    assert len(s.entries) == 200 and s.leaf_id == f"{199:08x}"


def test_ids_that_are_not_strings_survive_the_two_half_read(tmp_path, monkeypatch):
    """The cli keeps entries whose id is a number, null, missing or an object; lookups of those
    go by JS Map identity, which the two halves must not lose (they fall back to one pass)."""
    odd = [entry("custom", 7, None, customType="x"), entry("custom", None, None, customType="y"),
           {"type": "custom", "parentId": None, "timestamp": TS, "customType": "z"},
           entry("custom", {"o": 1}, None, customType="w")]
    for extra in odd:
        lines = [header()] + [user(f"{i:08x}", None if i == 0 else f"{i - 1:08x}") for i in range(150)] + [extra]
        path = tmp_path / "s.jsonl"
        path.write_bytes(session_bytes(lines))
        monkeypatch.setattr(compact, "SPLIT_MIN", 1)
        one = open_session(str(path), "cli", light=True)
        monkeypatch.setattr(compact.parallel, "cpus", lambda: 2)
        two = open_session(str(path), "cli", light=True)
        monkeypatch.setattr(compact.os, "cpu_count", lambda: 1)
        assert _seen(two) == _seen(one)
        eid = extra.get("id", js.UNDEF)
        if not isinstance(eid, dict):  # (an object id is looked up by identity: no key to ask with)
            k = js.key(eid)
            assert two.position(two.by_id.get(k)) == one.position(one.by_id.get(k)) == len(one.entries) - 1


def test_a_parent_id_seen_again_later_is_the_later_entry(tmp_path):
    """B names A as its parent before A's id comes again: the readers take the last A, so the
    first A is off the path (the index's parent positions, made chunk by chunk, say the first)."""
    from pisess.core.model.placement import place

    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header(), user("A", None), user("B", "A"), user("C", "B"),
                                    user("A", "C", "again"), user("D", "A")]))
    with mock.patch.object(compact, "_CHUNK_LINES", 1):
        s = open_session(str(path), "cli", light=True)
    assert list(s.entries.ix.parents)[:2] == [-1, 0]
    assert place(s, branches=False, positions=range(5)).where == \
        {0: "branch", 1: "active", 2: "active", 3: "active", 4: "active"}


def test_a_parent_id_that_is_empty_ends_the_path_even_with_an_entry_whose_id_is_empty(tmp_path):
    from pisess.core.model.placement import place

    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header(), user("", None), user("B", ""), user("C", "B")]))
    s = open_session(str(path), "cli", light=True)
    assert type(s.entries) is compact.CompactEntries
    assert place(s, branches=False, positions=range(3)).where == {0: "branch", 1: "active", 2: "active"}
    assert place(s).where == ["branch", "active", "active"]


@settings(max_examples=examples(EXAMPLES * 3))
@given(many_entry_files(), st.sampled_from(["harness", "cli"]),
       st.integers(0, 200), st.booleans(), st.sampled_from([1, 2, 3, 256]), st.booleans())
def test_placing_hits_by_position_is_placing_by_object(lines, reader, checkpoint_at, leaf_entry, chunk_lines, halves):
    """search places hits with a walk over the index's parent positions; it must give every
    entry the place the object walk (branches=True) gives it, compactions and cycles included."""
    from pisess.core.model.placement import _active_positions, place

    ids_ = [x["id"] for x in lines[1:] if isinstance(x, dict) and "id" in x]
    if ids_ and checkpoint_at < len(lines):
        kept = ids_[checkpoint_at % len(ids_)]
        lines = lines[:checkpoint_at] + [entry("compaction", "c-" + kept, lines[-1].get("id") if isinstance(
            lines[-1], dict) else None, summary="S", firstKeptEntryId=kept, tokensBefore=10)] + lines[checkpoint_at:]
        if leaf_entry:
            lines.append(entry("leaf", "leaf-x", None, targetId="c-" + kept))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines))
        try:  # small chunks: a parent id seen again in a later chunk (duplicate ids, last one wins)
            with mock.patch.object(compact, "_CHUNK_LINES", chunk_lines), \
                    mock.patch.object(compact, "SPLIT_MIN", 1 if halves else compact.SPLIT_MIN), \
                    mock.patch.object(compact.parallel, "cpus", return_value=2 if halves else 1):
                s = open_session(path, reader, light=True)
        except PisessError:
            return
        n = len(s.entries)
        fast = place(s, branches=False, positions=list(range(n)))
        whole = place(s, branches=False)
        slow = place(s, branches=True)
    if type(s.entries) is compact.CompactEntries:
        assert _active_positions(s, s.lookup(s.leaf_id) if js.truthy(s.leaf_id) else None) is not None or \
            any(type(e.get("id")) is not str for e in s.entries if isinstance(e, dict))
    assert [fast.where[i] for i in range(n)] == slow.where == whole.where
    assert (fast.leaf_id, fast.checkpoint, fast.error) == (slow.leaf_id, slow.checkpoint, slow.error)


@settings(max_examples=examples(EXAMPLES * 2))
@given(many_entry_files(), st.sampled_from([1, 3, 256]), st.booleans())
def test_validate_on_the_index_reports_what_the_line_scan_reports(lines, chunk_lines, halves):
    """validate checks clean files on the compact index (duplicate ids, dangling parents, cycles,
    leaf and label targets, compactions, unknown types found on positions): the same report."""
    from pisess.core.analyses.validate import validate_file, validate_raw

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines))
        with mock.patch.object(compact, "_CHUNK_LINES", chunk_lines), \
                mock.patch.object(compact, "SPLIT_MIN", 1 if halves else compact.SPLIT_MIN), \
                mock.patch.object(compact.parallel, "cpus", return_value=2 if halves else 1):
            indexed = validate_file(path)
        scanned = validate_raw(scan_file(path))
    assert indexed.to_json() == scanned.to_json()


@settings(max_examples=examples(EXAMPLES * 3))
@given(many_entry_files(), st.sampled_from([1, 3, 256]),
       st.sampled_from(["auto", "harness", "cli"]), st.sampled_from([16, 1 << 20]))
def test_du_on_the_index_reports_what_the_line_scan_reports(lines, chunk_lines, reader, block):
    """du reads clean files through the compact index (sizes, kinds and offsets from its arrays,
    images from a byte search in blocks of ``block`` bytes): the same report as the line scan's."""
    from pisess.core.analyses import du

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines))
        ticks: list = []
        with mock.patch.object(compact, "_CHUNK_LINES", chunk_lines), mock.patch.object(du, "BLOCK", block):
            indexed = du.disk_usage([path], reader=reader, tick=ticks.append, on_skip=lambda e: None)
        with mock.patch.object(du, "_read_indexed", lambda *a: None):
            scanned = du.disk_usage([path], reader=reader, on_skip=lambda e: None)
        assert sum(ticks) in (0, os.path.getsize(path))
    assert indexed.to_json() == scanned.to_json()


@settings(max_examples=examples(EXAMPLES))
@given(many_entry_files(), st.sampled_from(["harness", "cli"]))
def test_context_without_reading_back_the_whole_path_is_the_same_context(lines, reader):
    """``full_path=False`` (context, export) reads back the context's entries and the last model
    setter only: same messages, state, path and selection as reading back the whole path."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines))
        seen = []
        for full_path in (True, False):
            try:
                s = open_session(path, reader, light=True)
                ctx = build_context(s, full_path=full_path)
            except PisessError as err:
                seen.append(("error", err.code, err.message))
                continue
            seen.append((ctx.messages, ctx.llm_messages, ctx.state, [js.get(e, "id") for e in ctx.path],
                         [js.get(e, "id") for e in ctx.context_entries], js.get(ctx.checkpoint, "id")
                         if ctx.checkpoint is not None else None,
                         [id(e) in {id(x) for x in ctx.context_entries} for e in ctx.path]))
    assert seen[0] == seen[1]
