"""The entry stores (core/reading/store.py, compact.CompactEntries) answer ``EntryStore`` alike.

A file the compact index reads is also read by the line scan into a list store; every question of
the protocol must get the same answer from both (positions, lookups with the last-wins rule,
parents, lines, spans, extras, roles), so callers never need to know which one they hold."""

from __future__ import annotations

import dataclasses
import gc
import os
import tempfile
from unittest import mock

import pytest
from hypothesis import given, settings

from conftest import assistant, entry, examples, header, message, session_bytes, user
from pisess.core.reading import compact, jsonl
from pisess.core.reading import session as session_mod
from pisess.core.reading.compact import CompactEntries
from pisess.core.reading.jsonl import scan_file
from pisess.core.reading.session import open_session
from pisess.core.reading.store import EntryStore, ListStore
from test_core_compact import EXAMPLES, many_entry_files


def _answers(store: EntryStore) -> dict:
    n = len(store)
    ids = {e.get("id") for e in store if isinstance(e, dict) and isinstance(e.get("id"), str)}
    offsets, lengths = store.spans()
    extras = dict(store.extras())
    return {
        "len": n,
        "find": {i: store.find(i) for i in sorted(ids) + ["gone", ""]},
        "parent": [store.parent(p) for p in range(n)],
        "line": [store.line(p) for p in range(n)],
        "lines": list(store.lines),
        "span": [store.span(p) for p in range(n)],
        "spans": (list(offsets), list(lengths)),
        "position": [store.position(store[p]) for p in range(n)],
        "string_ids": list(store.string_ids()),
        "distinct": store.distinct_ids(),
        "system": store.role_positions("system"),
        "users": store.role_positions("user"),
        # a store may call more entries extras than the compact index does, never fewer
        "not_extras": sorted(p for p in range(n) if p not in extras and not (
            isinstance(store[p], dict) and store[p].get("type") == "message"
            and isinstance(store[p].get("id"), str))),
    }


@settings(max_examples=examples(EXAMPLES))
@given(many_entry_files())
def test_both_stores_answer_alike(lines):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.jsonl")
        with open(path, "wb") as fh:
            fh.write(session_bytes(lines + [message("s1", None, {"role": "system", "content": "x"})]))
        ix = compact.scan_compact(path)
        if ix is None or not ix.cli_plain:
            return  # the line scan reads it: there is no compact store to compare with
        indexed = session_mod.index_view(ix, session_mod.index_raw(path, ix), "cli")
        scanned = open_session(path, "cli", raw=scan_file(path, light=True))
        assert type(indexed.store) is CompactEntries and type(scanned.store) is ListStore
        a, b = _answers(indexed.store), _answers(scanned.store)
        assert a.pop("not_extras") == b.pop("not_extras") == []
        assert a == b
        # sound when it says so: every parent before its child
        for s in (indexed.store, scanned.store):
            if s.parents_precede():
                assert all(q is None or q < p for p, q in enumerate(map(s.parent, range(len(s)))))


def test_a_read_back_entry_takes_its_place_in_either_store(tmp_path):
    """``complete`` puts the whole entry where the light one was: access, lookup and position agree."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header(), user("u1", None, "hello"), assistant("a1", "u1"),
                                    entry("label", "l1", "a1", targetId="u1", label="x")]))
    for s in (open_session(str(path), "cli", light=True), open_session(str(path), "cli", raw=scan_file(str(path)))):
        light = s.entries[0]
        whole = s.full(light)
        assert whole["message"]["content"][0]["text"] == "hello" and "content" not in light["message"]
        assert s.entries[0] is whole and s.lookup("u1") is whole and s.position(whole) == 0
        assert s.line_of(whole) == 2 and s.store.parent(1) == 0 and s.store.find("u1") == 0
        assert s.position(light) == 0 and s.line_of(light) == 2  # (the light one, held by a caller, keeps it)


def test_the_session_is_frozen_for_real(tmp_path):
    """Caches live in the store: reading entries back changes no field of the session."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header(), user("u1", None), assistant("a1", "u1")]))
    s = open_session(str(path), "harness", light=True)
    before = dict(s.__dict__)
    s.materialize(list(s.entries))
    s.position(s.entries[1])
    assert s.__dict__ == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.leaf_id = "x"  # type: ignore[misc]


def test_reads_leave_the_collector_as_they_found_it(tmp_path):
    """A library read neither freezes what it made nor leaves the collector off (the CLI decides)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes([header()] + [user(f"m{i}", None) for i in range(50)] + ["{oops"]))
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    open_session(str(path), "cli", light=True)  # the index gives up, the line scan reads it
    compact.scan_compact(str(path))
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_reads_never_touch_the_collector(tmp_path, monkeypatch):
    """Not even for the length of a read: the collector is the program's (the CLI turns it off for
    its whole run); a library read that turned it off and on again would turn it on under a
    caller that had it off, and off under another thread."""
    from pisess.core.listing import repo
    from pisess.core.listing.paths import encode_cwd

    calls: list = []
    for name in ("disable", "enable", "freeze", "unfreeze", "collect"):
        monkeypatch.setattr(gc, name, lambda *a, _name=name: calls.append(_name))
    project = tmp_path / "root" / encode_cwd("/p")
    project.mkdir(parents=True)
    path = project / "s.jsonl"
    path.write_bytes(session_bytes([header()] + [user(f"m{i}", None) for i in range(50)]))
    (project / "bad.jsonl").write_bytes(session_bytes([header()] + [user("m0", None)] + ["{oops"]))
    open_session(str(path), "cli", light=True)  # the compact index
    open_session(str(project / "bad.jsonl"), "cli", light=True)  # the index gives up, the line scan reads it
    scan_file(str(path))
    compact.scan_compact(str(path))
    for version in ("0.82.1", "1.6.0"):
        repo.list_sessions(str(tmp_path / "root"), "/p", pi_version=version)
    assert calls == []


def _counting(monkeypatch):
    calls: list = []
    real_compact, real_scan = session_mod.scan_compact, session_mod.scan_file
    monkeypatch.setattr(session_mod, "scan_compact", lambda p, **k: calls.append("index") or real_compact(p, **k))
    monkeypatch.setattr(session_mod, "scan_file",
                        lambda p, light=True: calls.append(f"scan light={light}") or real_scan(p, light=light))
    monkeypatch.setattr(jsonl, "scan_file", lambda *a, **k: pytest.fail("a second line scan"))
    return calls


def test_how_a_file_is_read_is_decided_once(tmp_path, monkeypatch):
    """A legacy file goes straight to the whole scan (the migration needs whole entries); a clean
    one is read by the index alone; a damaged one by the index, then one line scan, which also
    serves the lenient reader."""
    legacy = tmp_path / "legacy.jsonl"
    legacy.write_bytes(session_bytes([{"type": "session", "id": "s", "timestamp": "2025-01-01T00:00:00.000Z",
                                       "cwd": "/w"}, {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
                                                      "message": {"role": "user", "content": "hi"}}]))
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(session_bytes([header(), user("u1", None)]))
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(session_bytes([header(), user("u1", None), "{oops", user("u2", "u1")]))
    calls = _counting(monkeypatch)
    for reader in ("harness", "cli", "auto"):
        calls.clear()
        assert open_session(str(legacy), reader, light=True).migrated_from_version == 1
        assert calls == ["scan light=False"]
    calls.clear()
    open_session(str(clean), "harness", light=True)
    assert calls == ["index"]
    calls.clear()
    s, note = session_mod.open_read(str(broken), "harness", light=True, lenient=True)
    assert calls == ["index", "scan light=True"] and s.reader == "cli" and "pi's SDK refuses it" in note
    with mock.patch.object(session_mod, "scan_compact", lambda *a, **k: pytest.fail("index on a full read")):
        calls.clear()
        open_session(str(clean), "cli")
    assert calls == ["scan light=False"]
