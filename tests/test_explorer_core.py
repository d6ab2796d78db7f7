"""The explorer page's document: replaying each node's change gives exactly what ``build_context``
says the model sees there, at every node of the example sessions, the fixtures and random trees."""

from __future__ import annotations

import glob
import os

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import examples, write_session
from pisess.core.analyses.explorer import (
    EDITED,
    HIDDEN,
    Change,
    MessageTable,
    Segment,
    message_json,
    node_contexts,
    replay,
)
from pisess.core.errors import PisessError
from pisess.core.js import get
from pisess.core.model.context import build_context
from pisess.core.reading.session import open_session
from test_core_property import session_trees

HERE = os.path.dirname(__file__)
SHIPPED = sorted(glob.glob(os.path.join(HERE, "..", "pisess", "examples", "sessions", "*", "*.jsonl")) +
                 glob.glob(os.path.join(HERE, "fixtures", "**", "*.jsonl"), recursive=True))


def check_every_node(path: str, reader: str = "auto", pi_version: str = "1.6.0") -> int:
    """Assert the replay equals build_context at every node an id names; returns the nodes checked."""
    s = open_session(path, reader, light=True, pi_version=pi_version, images="lean")
    table = MessageTable()
    contexts = node_contexts(s, table)
    checked = 0
    for pos, c in enumerate(contexts.changes):  # (the usual node's change, kept short, is the Change it stands for)
        if type(contexts.changes.steps[pos]) is tuple:
            assert contexts.changes.steps[pos] == contexts.projected[pos]
            assert c == Change(appended=(Segment(pos, contexts.projected[pos]),)) and type(c) is Change
    for pos, e in enumerate(s.store):
        eid = get(e, "id")
        if s.position(s.lookup(eid)) != pos:  # (another entry of the same id is the one an id names)
            continue
        got = replay(contexts, pos)
        try:
            ctx = build_context(s, eid, full_path=False)
        except PisessError as err:
            assert got == err.message, (path, eid)
            checked += 1
            continue
        assert not isinstance(got, str), (path, eid, got)
        assert [table.get(i) for seg in got for i in seg.messages] == [message_json(m) for m in ctx.messages], (path, eid)
        assert [seg.entry for seg in got for _ in seg.messages] == [s.position(m) for m in ctx.message_sources]
        assert [seg.entry for seg in got if seg.mark == HIDDEN and seg.originals] == [s.position(x) for x in ctx.omitted]
        edited = {s.position(x) for x, _ in ctx.projection
                  if ctx.edit_of(x) is not None and get(s.full(ctx.edit_of(x)), "replacement") is not None}
        assert {seg.entry for seg in got if seg.mark == EDITED} == edited, (path, eid)
        checked += 1
    return checked


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: os.path.relpath(p, HERE))
def test_replay_equals_build_context_at_every_node(path):
    assert check_every_node(path) > 0


def _sdk_reads(path: str) -> bool:
    try:
        open_session(path, "harness", light=True)
    except PisessError:
        return False
    return True


@pytest.mark.parametrize("path", [p for p in SHIPPED if _sdk_reads(p)], ids=lambda p: os.path.relpath(p, HERE))
def test_replay_equals_build_context_with_the_sdk_reader(path):
    assert check_every_node(path, reader="harness") > 0


def test_cost_grows_with_entries_not_context_length(tmp_path):
    """A 400-entry chain: the changes append one segment each, none restates the context."""
    from conftest import assistant, header, user

    lines: list = [header()]
    parent = None
    for i in range(200):
        lines.append(user(f"u{i}", parent, f"q{i}"))
        lines.append(assistant(f"a{i}", f"u{i}", f"r{i}"))
        parent = f"a{i}"
    s = open_session(write_session(tmp_path, lines), light=True)
    contexts = node_contexts(s, MessageTable())
    assert sum(len(c.appended) + len(c.replaced) for c in contexts.changes) == 400
    assert contexts.fallback == 0


def test_a_compaction_keeping_from_another_branch_keeps_no_entry_of_it(tmp_path):
    """The walk forgets where an entry stood on the path once it leaves its branch: a compaction
    on a sibling branch whose ``firstKeptEntryId`` names it keeps what ``build_context`` keeps."""
    from conftest import assistant, entry, header, user

    lines: list = [header(), user("u0", None), assistant("a0", "u0"),
                   user("u1", "a0", "first branch"), assistant("a1", "u1"),
                   user("u2", "a0", "second branch"), assistant("a2", "u2"), user("u3", "a2"),
                   entry("compaction", "c1", "u3", summary="s", firstKeptEntryId="u1", tokensBefore=5),
                   user("u4", "c1")]
    assert check_every_node(write_session(tmp_path, lines)) == 9


@st.composite
def edited_trees(draw):
    """``session_trees`` with pi 1.6's context edits (hiding, replacing, of any entry) among them."""
    lines = draw(session_trees())
    entries = [x for x in lines[1:] if isinstance(x, dict) and "id" in x]
    for n in range(draw(st.integers(0, 4))):
        if not entries:
            break
        target = draw(st.sampled_from(entries))
        parent = draw(st.sampled_from(entries))
        replacement = draw(st.sampled_from([None, {"content": f"edited {n}"}, {"content": [{"type": "text", "text": "x"}]}]))
        edit = {"type": "context_edit", "id": f"x{n}", "parentId": parent["id"], "timestamp": "2026-07-25T10:00:00.000Z",
                "targetId": target["id"], "replacement": replacement}
        lines.append(edit)
        entries.append(edit)
        if draw(st.booleans()):
            child = {"type": "message", "id": f"y{n}", "parentId": f"x{n}", "timestamp": "2026-07-25T10:00:01.000Z",
                     "message": {"role": "user", "content": "after", "timestamp": 1}}
            lines.append(child)
            entries.append(child)
    return lines


@settings(max_examples=examples(150))
@given(edited_trees(), st.sampled_from(["cli", "harness"]), st.sampled_from(["1.6.0", "0.82.1"]))
def test_replay_equals_build_context_on_random_trees(lines, reader, pi_version):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        check_every_node(write_session(d, lines), reader, pi_version)


@settings(max_examples=examples(60), deadline=None)
@given(edited_trees(), st.sampled_from(["cli", "harness"]))
def test_the_pages_changes_are_each_nodes_change_as_the_page_reads_it(lines, reader):
    """The page writes the usual node's change as its messages as they are (``Changes.steps``):
    every node's is ``_change_json`` of its ``Change``, the general way."""
    import tempfile

    import orjson

    from pisess.core.analyses import page
    from pisess.core.analyses.explorer import Walk

    seen: list = []
    real_run = Walk.run

    def run(self, parents):
        seen.append(real_run(self, parents))
        return seen[-1]

    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        mp.setattr(Walk, "run", run)
        s = open_session(write_session(d, lines), reader, light=True, images="lean")
        doc = orjson.loads(page.page_data(s).rest)
    changes = seen[0].changes
    assert doc["ctx"] == orjson.loads(orjson.dumps([page._change_json(changes[p], p) for p in range(len(changes))]))


def test_the_sdk_reader_walk_is_incremental_too():
    """The example the SDK reader reads (compactions with retained tails): no node needs build_context."""
    harness = [p for p in SHIPPED if "examples" in p and open_session(p, light=True).reader == "harness"]
    assert harness
    for path in harness:
        s = open_session(path, light=True)
        assert node_contexts(s, MessageTable()).fallback == 0


@settings(max_examples=examples(60), deadline=None)
@given(ours=st.lists(st.integers(0, 30), max_size=12), theirs=st.lists(st.integers(0, 30), max_size=12),
       later=st.lists(st.integers(0, 40), max_size=4), batch=st.sampled_from([1, 7, 1 << 20]))
def test_a_table_that_took_anothers_reads_their_messages_from_its_spool(tmp_path_factory, ours, theirs, later, batch):
    """``MessageTable.take``: a forked child's messages stay in its spool; the table reads each
    run of them there, its own in its spool, in its order (``json_range``, ``json_pieces``,
    ``json_lines``, ``get``) as one table that added them all would, and messages added after
    the take go on in its own spool."""
    import tempfile

    def message(k: int) -> dict:
        return {"role": "user", "content": f"message {k} " + "x" * k}

    one = MessageTable()  # (in memory: the answer)
    for k in [*ours, *theirs, *later]:
        one.add(message(k))
    with tempfile.TemporaryFile() as mine, tempfile.TemporaryFile() as child:
        table, other = MessageTable(spool=mine), MessageTable(spool=child)
        table._BATCH = other._BATCH = batch
        for k in ours:
            table.add(message(k))
        for k in theirs:
            other.add(message(k))
        remap = table.take(other.part(), child)
        for k in later:
            table.add(message(k))
        assert len(table) == len(one) and table.sizes == one.sizes
        assert remap == [one.index[other_digest] for other_digest in other.index]
        whole = b"\n".join(one.stored)
        assert table.json_range(0, len(table)) == whole
        assert b"\n".join(table.json_lines(block=64)) == whole
        for lo in range(len(table)):
            hi = min(len(table), lo + 3)
            pieces = table.json_pieces(lo, hi)
            assert b"".join(p if type(p) is bytes else b"".join(p.chunks()) for p in pieces) == \
                b"\n".join(one.stored[lo:hi])
            assert table.get(lo) == one.stored[lo]
        table.close()
        assert child.closed and not mine.closed


def test_pieces_written_at_an_offset_survive_short_writes_and_the_vector_limit(tmp_path, monkeypatch):
    """``write_pieces_at`` (the message table's spool: ``pwritev``, no joined copy) writes every
    piece after the other at its offset, whatever each call takes: a piece cut short, more pieces
    than one call may carry (``_IOV_MAX``); the file's position is not used; a call that takes
    nothing is an error, as ``files.write_all`` says."""
    import os

    from pisess.core.reading import files

    pieces = [bytes([65 + i % 26]) * (1 + i % 7) for i in range(40)]
    real = os.pwritev
    for cap in (None, 1, 3, 10):
        calls: list = []

        def short(fd, buffers, offset, cap=cap, calls=calls):
            calls.append(len(buffers))
            if cap is not None and len(calls) % 3 == 2:
                return real(fd, [b"".join(buffers)[:cap]], offset)
            return real(fd, buffers, offset)
        monkeypatch.setattr(os, "pwritev", short)
        monkeypatch.setattr(files, "_IOV_MAX", 8)
        path = tmp_path / f"spool-{cap}"
        with open(path, "w+b") as fh:
            fh.write(b"head:")
            fh.flush()
            fh.seek(0)  # (the position is not where the pieces go)
            files.write_pieces_at(fh.fileno(), list(pieces), 5)
        assert path.read_bytes() == b"head:" + b"".join(pieces)
        assert max(calls) <= 8
    monkeypatch.setattr(os, "pwritev", lambda *a: 0)
    with open(tmp_path / "none", "w+b") as fh, pytest.raises(OSError):
        files.write_pieces_at(fh.fileno(), [b"x"], 0)


@pytest.mark.parametrize("vectored", [True, False])
def test_a_spooled_table_reads_back_what_it_stored(vectored, tmp_path, monkeypatch):
    """A message table with a spool reads back each stored form, in batches written with
    ``pwritev`` or (where the OS has none) joined, between reads that move the file's position."""
    from pisess.core.analyses import explorer

    monkeypatch.setattr(explorer, "_PWRITEV", vectored)
    monkeypatch.setattr(explorer.MessageTable, "_BATCH", 50)
    messages = [{"role": "user", "content": "m" * (i % 13) + str(i)} for i in range(60)]
    with open(tmp_path / "spool", "w+b") as spool:
        table = explorer.MessageTable(None, spool)
        for i, m in enumerate(messages):
            table.add(m)
            if i % 7 == 0:
                assert table.message(i // 2) == messages[i // 2]  # (a read between the writes)
        assert [table.message(i) for i in range(len(table))] == messages
        assert b"\n".join(table.json_lines(block=100)) == b"\n".join(explorer.message_json(m) for m in messages)


def test_a_hashed_key_reads_the_ends_of_a_long_message_and_the_table_tells_apart_its_middles():
    """``hashed_key`` hashes the ends of a long stored form and its size: messages that differ
    only in the middle share a key (the table compares their stored forms and keeps both), and
    messages that differ at either end, or in size, do not."""
    import tempfile

    from pisess.core.analyses import explorer
    from pisess.core.analyses.page import _Images, _Messages

    middle = explorer._SAMPLE * 3

    def message(fill: str, end: int = 0, extra: str = "") -> dict:
        return {"role": "user", "content": "a" * middle + fill + "b" * middle + extra, "timestamp": 1000 + end}

    def key(m: dict) -> bytes:
        return _Messages(_Images("omit"), False, None).key(m)[0]

    assert key(message("x")) == key(message("y")) != key(message("x", end=1))
    assert key(message("x")) != key(message("xx")) != key(message("x", extra="c"))
    short = {"role": "user", "content": "x"}
    assert key(short) != key({"role": "user", "content": "y"})
    with tempfile.TemporaryFile() as spool:
        table = MessageTable(_Messages(_Images("omit"), False, None), spool)
        got = [table.add(message(f)) for f in ("x", "y", "x", "z", "y")]
        assert got == [0, 1, 0, 2, 1] and len(table) == 3
        assert [orjson.loads(table.get(i))["content"][middle] for i in range(3)] == ["x", "y", "z"]
        table.close()


class _Colliding:
    """A table's encoder whose keys are ``hashed_key``s of a hash with few values: most messages
    share a key with another, so the table must tell them apart by their stored forms."""

    def __init__(self, values: int) -> None:
        self.values = values

    def key(self, m: dict) -> tuple:
        from pisess.core.analyses import explorer

        data = explorer.message_json(m)
        weak = sum(data) % self.values  # (a stand-in for Python's hash, equal for many messages)
        return weak.to_bytes(8, "little") + len(data).to_bytes(8, "little") + explorer._HASHED, len(data), data

    def stored_form(self, m: dict, state: bytes) -> bytes:
        return state

    def store(self, m: dict, state: bytes) -> bytes:
        return state


@settings(max_examples=examples(60), deadline=None)
@given(ours=st.lists(st.integers(0, 30), max_size=12), theirs=st.lists(st.integers(0, 30), max_size=12),
       later=st.lists(st.integers(0, 40), max_size=4), values=st.sampled_from([1, 2, 5]),
       batch=st.sampled_from([1, 1 << 20]))
@example(ours=[4], theirs=[1, 4], later=[], values=1, batch=1)  # (4 keyed by its hash here, by its digest there)
def test_messages_whose_hashed_keys_collide_are_told_apart_by_their_stored_forms(ours, theirs, later, values, batch):
    """A ``hashed_key`` is no digest: two messages that share one are the same message only when
    their stored forms are (``add``), also across a forked child's table (``take``); one that is
    not is stored and found again by a digest of its stored form.  The table is then what one that
    keyed every message by sha256 holds: the same messages, in the same order, found again."""
    import tempfile

    def message(k: int) -> dict:
        return {"role": "user", "content": "m" * (k % 4) + "n" * (k // 4)}  # (many of one length)

    one = MessageTable()
    for k in [*ours, *theirs, *later]:
        one.add(message(k))
    with tempfile.TemporaryFile() as mine, tempfile.TemporaryFile() as child:
        table, other = MessageTable(_Colliding(values), mine), MessageTable(_Colliding(values), child)
        table._BATCH = other._BATCH = batch
        got = [table.add(message(k)) for k in ours]
        theirs_got = [other.add(message(k)) for k in theirs]
        remap = table.take(other.part(), child)
        got += [remap[i] for i in theirs_got]
        got += [table.add(message(k)) for k in later]
        assert got == [one.add(message(k)) for k in [*ours, *theirs, *later]]
        assert len(table) == len(one) and table.sizes == one.sizes
        assert table.json_range(0, len(table)) == b"\n".join(one.stored)
        assert len(set(table.index)) == len(table.index) == len(table.keys) == len(table)  # (one key per message)
        table.close()
