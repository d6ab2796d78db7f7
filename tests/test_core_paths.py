"""Path walks (spec §6): the harness compaction-bounded walk, the cli root walk, cycles, and a
1,000,000-entry chain without recursion."""

from __future__ import annotations

import gc
import time

import pytest

from conftest import DROP, assistant, entry, header, ids, user, write_session
from pisess.core.errors import PisessError
from pisess.core.js import UNDEF
from pisess.core.model.context import build_context
from pisess.core.model.paths import active_path, cli_branch, cli_context_path, path_to_checkpoint, path_to_root
from pisess.core.reading.jsonl import scan_bytes
from pisess.core.reading.session import open_session


def comp(id_, parent, fk=DROP, tail=DROP, summary=None):
    return entry("compaction", id_, parent, summary=summary or f"S-{id_}", firstKeptEntryId=fk, tokensBefore=10,
                 retainedTail=tail)


def open_h(tmp_path, lines):
    return open_session(write_session(tmp_path, lines), "harness")


def open_c(tmp_path, lines):
    return open_session(write_session(tmp_path, lines), "cli")


LINEAR = [header(), user("a", None), assistant("b", "a"), user("c", "b"), assistant("d", "c")]


# --- harness walk (§6.1) ------------------------------------------------------------------------------


def test_harness_path_without_compaction_reaches_root(tmp_path):
    """Without a compaction the harness path is the full chain, root first."""
    assert ids(active_path(open_h(tmp_path, LINEAR))) == ["a", "b", "c", "d"]


def test_harness_null_leaf_gives_empty_path(tmp_path):
    """A null leaf (leaf record with targetId null) gives an empty path."""
    s = open_h(tmp_path, LINEAR + [entry("leaf", "l", "d", targetId=None)])
    assert active_path(s) == []
    assert path_to_checkpoint(s, None) == []


def test_harness_unknown_leaf_is_not_found(tmp_path):
    """Walking from an id that is not in the file raises not_found."""
    s = open_h(tmp_path, LINEAR)
    with pytest.raises(PisessError) as info:
        path_to_checkpoint(s, "zzz")
    assert info.value.code == "not_found"


def test_harness_leaf_record_target_missing_is_invalid_session(tmp_path):
    """A leaf record naming a missing entry fails when the leaf is read (invalid_session)."""
    s = open_h(tmp_path, LINEAR + [entry("leaf", "l", "d", targetId="ghost")])
    with pytest.raises(PisessError) as info:
        active_path(s)
    assert (info.value.code, info.value.message) == ("invalid_session", "Entry ghost not found")


def test_harness_leaf_target_empty_string_fails(tmp_path):
    """A leaf record with targetId "" fails at the leaf stage (Appendix B 18)."""
    s = open_h(tmp_path, LINEAR + [entry("leaf", "l", "d", targetId="")])
    with pytest.raises(PisessError) as info:
        active_path(s)
    assert info.value.code == "invalid_session"


def test_harness_leaf_record_moves_path(tmp_path):
    """A leaf record pointing back at b makes the path end at b."""
    s = open_h(tmp_path, LINEAR + [entry("leaf", "l", "d", targetId="b")])
    assert ids(active_path(s)) == ["a", "b"]


@pytest.mark.parametrize("tail", [[], [{"role": "user", "content": "kept", "timestamp": 3}]])
def test_harness_retained_tail_stops_walk(tmp_path, tail):
    """A compaction with retainedTail (even []) starts the path: nothing older is included."""
    lines = LINEAR + [comp("C", "d", fk="c", tail=tail), user("e", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["C", "e"]


@pytest.mark.parametrize("tail", [None, 0, False, ""])
def test_harness_falsy_retained_tail_does_not_stop(tmp_path, tail):
    """A falsy retainedTail (null, 0, false, "") does not stop the walk; firstKeptEntryId does."""
    lines = LINEAR + [comp("C", "d", fk="c", tail=tail), user("e", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["c", "d", "C", "e"]


def test_harness_first_kept_walk(tmp_path):
    """Without retainedTail the walk continues until the firstKeptEntryId entry has been added."""
    lines = LINEAR + [comp("C", "d", fk="b"), user("e", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["b", "c", "d", "C", "e"]


@pytest.mark.parametrize("fk", ["nowhere", "", None, DROP])
def test_harness_first_kept_absent_or_off_path_walks_to_root(tmp_path, fk):
    """A firstKeptEntryId that is missing, empty or not on the path lets the walk reach the root."""
    lines = LINEAR + [comp("C", "d", fk=fk), user("e", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["a", "b", "c", "d", "C", "e"]


def test_harness_older_compaction_with_tail_takes_over(tmp_path):
    """An older retainedTail compaction met before the newer one's stop point ends the walk."""
    lines = [header(), user("a", None), comp("C1", "a", fk="a", tail=[]), user("b", "C1"),
             comp("C2", "b", fk="a"), user("c", "C2")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["C1", "b", "C2", "c"]


def test_harness_older_compaction_first_kept_replaces_stop(tmp_path):
    """An older compaction's firstKeptEntryId replaces the newer one's stop point (may reach further back)."""
    lines = [header(), user("a", None), assistant("b", "a"), user("c", "b"), comp("C1", "c", fk="b"),
             user("d", "C1"), comp("C2", "d", fk="c"), user("e", "C2")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["b", "c", "C1", "d", "C2", "e"]


def test_harness_newer_stop_reached_before_older_compaction(tmp_path):
    """When the newest compaction's kept entry comes after the older compaction, the older one is cut off."""
    lines = [header(), user("a", None), comp("C1", "a", fk="a"), user("b", "C1"), assistant("c", "b"),
             comp("C2", "c", fk="b"), user("d", "C2")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["b", "c", "C2", "d"]


def test_harness_dangling_parent_is_invalid_session(tmp_path):
    """A missing parent reached by the walk raises invalid_session 'Entry <id> not found'."""
    lines = [header(), user("a", "ghost"), assistant("b", "a")]
    with pytest.raises(PisessError) as info:
        active_path(open_h(tmp_path, lines))
    assert (info.value.code, info.value.message) == ("invalid_session", "Entry ghost not found")


def test_harness_dangling_parent_before_boundary_is_harmless(tmp_path):
    """A dangling parent on the path's first entry is never looked up once a stop rule fired."""
    lines = [header(), user("b", "ghost"), assistant("c", "b"), comp("C", "c", fk="b"), user("d", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["b", "c", "C", "d"]
    lines = [header(), comp("C", "ghost", tail=[]), user("d", "C")]
    assert ids(active_path(open_h(tmp_path, lines))) == ["C", "d"]


def test_harness_empty_parent_is_root(tmp_path):
    """parentId "" is treated as a root by the walk."""
    assert ids(active_path(open_h(tmp_path, [header(), user("a", ""), assistant("b", "a")]))) == ["a", "b"]


def test_harness_revisit_at_first_kept_is_not_a_cycle(tmp_path):
    """L -> C -> L with C.firstKeptEntryId = L stops at the second L: path [L, C, L] (Appendix B 17)."""
    s = open_h(tmp_path, [header(), user("L", "C"), comp("C", "L", fk="L")])
    assert ids(path_to_checkpoint(s, "L")) == ["L", "C", "L"]


# --- cli walk (§6.2) -----------------------------------------------------------------------------------


def test_cli_path_ignores_compaction_boundary(tmp_path):
    """The cli always walks to the root, compactions (even with retainedTail) notwithstanding."""
    lines = LINEAR + [comp("C", "d", fk="c", tail=[]), user("e", "C")]
    assert ids(active_path(open_c(tmp_path, lines))) == ["a", "b", "c", "d", "C", "e"]


def test_cli_orphan_acts_as_root(tmp_path):
    """A missing parent silently ends the cli walk: the orphan is the path's root."""
    lines = [header(), user("a", None), user("x", "ghost"), assistant("y", "x")]
    assert ids(active_path(open_c(tmp_path, lines))) == ["x", "y"]


def test_cli_walk_follows_leaf_record_parent(tmp_path):
    """cli reading a harness file: the leaf record itself is the leaf, its parent chain is walked."""
    lines = LINEAR + [entry("leaf", "l", "d", targetId="a")]
    assert ids(active_path(open_c(tmp_path, lines))) == ["a", "b", "c", "d", "l"]


def test_cli_branch_unknown_start_is_empty(tmp_path):
    """getBranch from an unknown id is empty; buildSessionPath falls back to the last entry."""
    s = open_c(tmp_path, LINEAR)
    assert cli_branch(s, "zzz") == []
    assert ids(cli_context_path(s, "zzz")) == ["a", "b", "c", "d"]
    assert cli_context_path(s, None) == []


def test_cli_null_id_last_entry(tmp_path):
    """A last entry with id null gives an empty pathIds and an empty context (Appendix B 3)."""
    s = open_c(tmp_path, [header(), user("a", None), entry("message", None, "a",
                                                              message={"role": "user", "content": "x"})])
    assert active_path(s) == []
    assert build_context(s).messages == []


def test_cli_last_entry_without_id_context_falls_back(tmp_path):
    """A last entry without an id: pathIds are empty but the context still walks from it (Appendix B 3)."""
    s = open_c(tmp_path, [header(), user("a", None), entry("message", DROP, "a",
                                                              message={"role": "user", "content": "no id"})])
    assert active_path(s) == []
    ctx = build_context(s)
    assert ids(ctx.context_entries) == ["a", None]
    assert [m["content"] for m in ctx.messages][-1] == "no id"


def test_cli_path_from_explicit_entry(tmp_path):
    """Walking from a mid-chain entry gives its ancestors only."""
    s = open_c(tmp_path, LINEAR)
    assert ids(path_to_root(s, s.lookup("b"))) == ["a", "b"]
    assert ids(active_path(s, "c")) == ["a", "b", "c"]


# --- cycles ---------------------------------------------------------------------------------------------


def _cycle_lines(n: int) -> list:
    """n entries e0..e{n-1}, each the child of the next, the last the child of e0 (plus a leaf hanging on it)."""
    lines = [header()]
    for i in range(n):
        lines.append(user(f"e{i}", f"e{(i + 1) % n}"))
    return lines


@pytest.mark.parametrize("n", [1, 2, 500])
@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_cycles_raise_cycle(tmp_path, n, reader):
    """parentId cycles of length 1, 2 and long raise code "cycle" quickly instead of hanging."""
    s = open_session(write_session(tmp_path, _cycle_lines(n)), reader)
    start = time.monotonic()
    for call in (lambda: active_path(s), lambda: build_context(s)):
        with pytest.raises(PisessError) as info:
            call()
        assert info.value.code == "cycle"
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_cycle_above_a_chain(tmp_path, reader):
    """A chain whose top runs into a cycle also raises cycle."""
    lines = [header(), user("x", "y"), user("y", "x"), assistant("a", "x"), user("b", "a")]
    s = open_session(write_session(tmp_path, lines), reader)
    with pytest.raises(PisessError) as info:
        active_path(s)
    assert info.value.code == "cycle"


def test_harness_cycle_through_compaction(tmp_path):
    """A cycle through a compaction whose firstKeptEntryId is off the loop is detected."""
    s = open_h(tmp_path, [header(), user("L", "C"), comp("C", "L", fk="elsewhere")])
    with pytest.raises(PisessError) as info:
        path_to_checkpoint(s, "L")
    assert info.value.code == "cycle"


def test_cycle_made_by_duplicate_ids(tmp_path):
    """Duplicate ids (last wins) can close a loop: detected as a cycle."""
    lines = [header(), user("a", None), assistant("b", "a"), user("a", "b")]
    s = open_c(tmp_path, lines)
    with pytest.raises(PisessError) as info:
        active_path(s)
    assert info.value.code == "cycle"


# --- very long chains -------------------------------------------------------------------------------------


# 20,000 entries are 20 times the recursion limit, in a fraction of a second; the million (~9 s) is slow.
@pytest.mark.parametrize("n", [20_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_million_entry_chain_builds_path_and_context(tmp_path, n):
    """A 1,000,000-entry linear chain gives its full path and context without RecursionError."""
    parts = [b'{"type":"session","version":3,"id":"s","timestamp":"2026-07-25T09:14:03.512Z","cwd":"/"}',
             b'{"type":"message","id":"0","parentId":null,"timestamp":"t","message":{"role":"user","content":"first"}}']
    parts.extend(b'{"type":"x","id":"%x","parentId":"%x","timestamp":"t"}' % (i, i - 1) for i in range(1, n - 1))
    parts.append(b'{"type":"message","id":"end","parentId":"%x","timestamp":"t",'
                 b'"message":{"role":"user","content":"last"}}' % (n - 2))
    data = b"\n".join(parts) + b"\n"
    del parts
    path = tmp_path / "long.jsonl"
    path.write_bytes(data)
    # The cycle collector off, as the CLI runs (``cli.app.main``): a million entries' dicts make it
    # re-walk the test process's whole heap (pytest's and Hypothesis's objects too) again and
    # again, 40% of the CPU here and more under xdist, for no cycle (the claim is the recursion).
    collecting = gc.isenabled()
    gc.disable()
    try:
        raw = scan_bytes(data, str(path))  # one parse shared by both readers
        del data
        for reader in ("harness", "cli"):
            s = open_session(str(path), reader, raw=raw)
            ctx = build_context(s)
            assert len(ctx.path) == n
            assert ctx.path[0]["id"] == "0" and ctx.path[-1]["id"] == "end"
            assert [m["content"] for m in ctx.messages] == ["first", "last"]
            del s, ctx
    finally:
        if collecting:
            gc.enable()


# --- the tree's links before its rows (tree.link_entries) --------------------------------------------


def _links_and_tree(s, leaf=UNDEF):
    from pisess.core.model.tree import build_tree, link_entries

    links = link_entries(s, leaf)
    parents, leaf_pos = list(links.parents), links.leaf_pos
    view = build_tree(s, full=True, leaf_id=leaf)
    again = build_tree(s, full=True, leaf_id=leaf, linked=links)
    return parents, leaf_pos, view, again


@pytest.mark.parametrize("lines", [
    _cycle_lines(1), _cycle_lines(3),
    [header(), user("a", None), user("b", "a"), user("c", "gone"), user("d", "d"), user("e", "b")],
    [header(), user("a", None), user("b", "a"), user("c", "a"), *_cycle_lines(2)[1:], user("f", "c")],
], ids=["self", "cycle", "dangling-and-self", "branches-and-cycle"])
@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_the_links_before_the_rows_are_the_trees(tmp_path, lines, reader):
    """``link_entries`` gives the parents and the leaf ``build_tree`` draws (a root for a missing
    parent, for an entry its own parent and for one on a cycle no root reaches), and the tree
    made on from them is the tree made whole (the explorer page draws its rows after the walk)."""
    s = open_session(write_session(tmp_path, lines), reader)
    parents, leaf_pos, view, again = _links_and_tree(s)
    assert parents == list(view.parents)
    assert leaf_pos == next((view.rows.position(i) for i in view.rows.with_flag("leaf")), None)
    assert again.to_json() == view.to_json() and list(again.parents) == parents
    for leaf in ("b", "a"):
        if s.lookup(leaf) is not None:
            parents, leaf_pos, view, again = _links_and_tree(s, leaf)
            assert leaf_pos == s.position(s.lookup(leaf)) == next(view.rows.position(i) for i in view.rows.with_flag("leaf"))
            assert again.to_json() == view.to_json()
    from pisess.core.model.tree import link_entries

    with pytest.raises(PisessError) as info:
        link_entries(s, "nowhere")
    assert info.value.code == "not_found"
