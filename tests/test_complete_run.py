"""``Session.complete_at`` of a run of positions reads the run's lines a block at a time and parses
the short ones where they lie in the block; it must give what reading them one by one gives
(``_complete_each``, the general way): the same values in the same order, for either reader, for
images read lean or whole, with entries the store already holds complete, and the same error when
the file changed under it."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples, header, session_bytes, user
from pisess.core.errors import PisessError
from pisess.core.reading import session as session_mod
from pisess.core.reading.images import LINE_MIN
from pisess.core.reading.session import open_session
from test_core_compact import many_entry_files

_ODD = st.sampled_from([
    "long text", "long image", "bad utf-8", "surrogate", "big number", "deep",
])


def _odd_line(kind: str, i: int, parent: str) -> object:
    eid = f"odd{i:05x}"
    if kind == "long text":
        return user(eid, parent, "x" * (LINE_MIN + 10))
    if kind == "long image":
        return user(eid, parent, [{"type": "image", "data": "QUJD" * (LINE_MIN // 3), "mimeType": "image/png"}])
    if kind == "bad utf-8":  # (orjson refuses it; JSON.parse reads U+FFFD)
        return (b'{"type":"message","id":"' + eid.encode() + b'","parentId":"' + parent.encode()
                + b'","timestamp":"2026-07-25T09:00:00.000Z","message":{"role":"user","content":"\xff"}}')
    if kind == "surrogate":
        return ('{"type":"message","id":"' + eid + '","parentId":"' + parent
                + '","timestamp":"2026-07-25T09:00:00.000Z","message":{"role":"user","content":"\\ud800"}}')
    if kind == "big number":
        return ('{"type":"message","id":"' + eid + '","parentId":"' + parent
                + '","timestamp":"2026-07-25T09:00:00.000Z","message":{"role":"user","content":"n","n":1'
                + "0" * 400 + "}}")
    return ('{"type":"message","id":"' + eid + '","parentId":"' + parent
            + '","timestamp":"2026-07-25T09:00:00.000Z","message":{"role":"user","content":"d","d":'
            + "[" * 1030 + "]" * 1030 + "}}")


def _each(s, positions) -> list:
    return list(s._complete_each(positions, None, 2048))


@settings(max_examples=examples(60), deadline=None)
@given(many_entry_files(), st.lists(st.tuples(st.integers(0, 200), _ODD), max_size=4),
       st.sampled_from([64, 4096, 1 << 20]), st.sampled_from(["lean", "whole"]),
       st.sampled_from(["auto", "cli", "harness"]), st.integers(0, 3))
def test_a_run_read_in_blocks_gives_what_each_entry_read_back_gives(lines, odd, block, images, reader, held):
    lines = list(lines)
    for i, (at, kind) in enumerate(odd):
        k = 1 + at % len(lines)
        lines.insert(k, _odd_line(kind, i, "none"))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines))

        def opened():
            try:
                s = open_session(path, reader, light=True, images=images)
            except PisessError:
                return None
            n = len(s.store)
            if held and n:  # (some entries already read back complete: each is taken as the store holds it)
                s.store.complete([s.store[p] for p in range(0, n, held + 1)])
            return s

        first = opened()
        if first is None:
            return
        n = len(first.store)
        saved, depth = session_mod._RUN_BLOCK, sys.getrecursionlimit()
        session_mod._RUN_BLOCK = block
        sys.setrecursionlimit(max(depth, 5000))  # (== on a value 1,030 arrays deep: past orjson's limit)
        try:
            for lo, hi in ((0, n), (n // 3, n)):
                s = opened()
                assert s is not None
                fast = list(s.complete_at(range(lo, hi)))
                assert fast == _each(opened(), range(lo, hi))
                assert [p for p, _ in fast] == list(range(lo, hi))
                # an entry held complete is the store's own object
                assert all(e is s.store[p] for p, e in fast if type(s.store._peek(p)) is dict
                           and not isinstance(s.store._peek(p), session_mod.Light))
        finally:
            session_mod._RUN_BLOCK = saved
            sys.setrecursionlimit(depth)


def test_a_run_read_in_blocks_refuses_a_file_changed_as_each_read_does(tmp_path):
    lines = [header(), *(user(f"u{i:07d}", f"u{i - 1:07d}" if i else None, f"text {i}") for i in range(40))]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes(lines))
    errors = []
    for read in (lambda s: list(s.complete_at(range(len(s.store)))), lambda s: _each(s, range(len(s.store)))):
        s = open_session(str(path), "auto", light=True, images="lean")
        data = path.read_bytes()
        path.write_bytes(data.replace(b'"id":"u0000020"', b'"id":"v0000020"'))  # (another entry there)
        with pytest.raises(PisessError) as got:
            read(s)
        errors.append((got.value.code, got.value.message))
        path.write_bytes(data)
    assert errors[0] == errors[1] and errors[0][0] == "storage"
