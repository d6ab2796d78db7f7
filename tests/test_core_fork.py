"""Fork planning and writing (spec §9, Appendix B 5-7)."""

from __future__ import annotations

import json
import os

import pytest

from conftest import DROP, assistant, entry, header, ids, user, write_session
from pisess.core.errors import PisessError
from pisess.core.model.fork import entries_to_fork, plan_fork, write_fork
from pisess.core.reading.session import open_session

NOW = "2026-07-25T10:00:00.000Z"


def lab(id_, parent, target, label=DROP, ts="2026-07-25T09:50:00.000Z"):
    return entry("label", id_, parent, ts, targetId=target, label=label)


def comp(id_, parent, fk=DROP, tail=DROP):
    return entry("compaction", id_, parent, summary="S", firstKeptEntryId=fk, tokensBefore=1, retainedTail=tail)


def open_as(tmp_path, lines, reader, name="session.jsonl", pi_version="1.6.0"):
    return open_session(write_session(tmp_path, lines, name=name), reader, pi_version=pi_version)


def fork_error(session, entry_id, position) -> PisessError:
    with pytest.raises(PisessError) as info:
        entries_to_fork(session, entry_id, position)
    return info.value


TREE = [header(), user("u1", None, "one"), assistant("a1", "u1"), user("u2", "a1", "two"), assistant("a2", "u2"),
        user("side", "a1", "side")]


# --- harness ---------------------------------------------------------------------------------------------


def test_harness_before_user_message(tmp_path):
    """harness 'before' a user message copies the path to its parent, verbatim."""
    s = open_as(tmp_path, TREE, "harness")
    entries, empty = entries_to_fork(s, "u2", "before")
    assert ids(entries) == ["u1", "a1"] and empty is False
    assert entries[1] is s.lookup("a1")  # verbatim: same objects, same parents


def test_harness_at_any_entry(tmp_path):
    """harness 'at' copies the path up to and including the target, of any type."""
    s = open_as(tmp_path, TREE, "harness")
    assert ids(entries_to_fork(s, "a2", "at")[0]) == ["u1", "a1", "u2", "a2"]
    assert ids(entries_to_fork(s, "side", "at")[0]) == ["u1", "a1", "side"]


def test_harness_before_non_user_is_refused(tmp_path):
    """harness 'before' an assistant message: invalid_fork_target 'is not a user message'."""
    err = fork_error(open_as(tmp_path, TREE, "harness"), "a1", "before")
    assert (err.code, err.message) == ("invalid_fork_target", "Entry a1 is not a user message")


def test_harness_unknown_target(tmp_path):
    """harness: an unknown id is invalid_fork_target 'Entry <id> not found', at and before."""
    s = open_as(tmp_path, TREE, "harness")
    for position in ("at", "before"):
        err = fork_error(s, "nope", position)
        assert (err.code, err.message) == ("invalid_fork_target", "Entry nope not found")


def test_harness_null_parent_gives_no_entries(tmp_path):
    """harness 'before' the root user message (parentId null) gives no entries."""
    assert entries_to_fork(open_as(tmp_path, TREE, "harness"), "u1", "before") == ([], False)


def test_harness_empty_or_missing_parent_is_not_found(tmp_path):
    """harness 'before' with parentId "" or a dangling parent fails with not_found (Appendix B 5)."""
    for parent in ("", "ghost"):
        s = open_as(tmp_path, [header(), user("u", parent)], "harness")
        assert fork_error(s, "u", "before").code == "not_found"


def test_harness_no_entry_id_copies_everything(tmp_path):
    """harness without an entry id copies all entries of the file, every branch and leaf record."""
    lines = TREE + [entry("leaf", "l", "side", targetId="a2")]
    s = open_as(tmp_path, lines, "harness")
    assert ids(entries_to_fork(s, None, "before")[0]) == ["u1", "a1", "u2", "a2", "side", "l"]


def test_harness_fork_respects_compaction_boundary(tmp_path):
    """harness forks copy the compaction-bounded path, so the first copied entry may have a dangling parent."""
    lines = [header(), user("u1", None), assistant("a1", "u1"), user("u2", "a1"), comp("C", "u2", fk="a1"),
             user("u3", "C")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "harness"), "u3", "at")
    assert ids(entries) == ["a1", "u2", "C", "u3"]
    assert entries[0]["parentId"] == "u1"


def test_harness_keeps_labels_verbatim(tmp_path):
    """harness forks do not drop or re-create labels."""
    lines = [header(), user("u1", None), lab("l1", "u1", "u1", "x"), assistant("a1", "l1")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "harness"), "a1", "at")
    assert ids(entries) == ["u1", "l1", "a1"]
    assert entries[2]["parentId"] == "l1"


def test_bad_position_is_usage(tmp_path):
    """A position other than before/at is a usage error."""
    with pytest.raises(PisessError) as info:
        entries_to_fork(open_as(tmp_path, TREE, "cli"), "u2", "after")
    assert info.value.code == "usage"


# --- cli --------------------------------------------------------------------------------------------------


def test_cli_before_and_at(tmp_path):
    """cli 'before' a user message copies the full root path to its parent; 'at' includes the target."""
    s = open_as(tmp_path, TREE, "cli")
    assert ids(entries_to_fork(s, "u2", "before")[0]) == ["u1", "a1"]
    assert ids(entries_to_fork(s, "a2", "at")[0]) == ["u1", "a1", "u2", "a2"]


def test_cli_before_root_gives_new_empty_session(tmp_path):
    """cli 'before' a root user message: no entries and a new empty session."""
    assert entries_to_fork(open_as(tmp_path, TREE, "cli"), "u1", "before") == ([], True)
    s = open_as(tmp_path, [header(), user("u", "")], "cli")
    assert entries_to_fork(s, "u", "before") == ([], True)


def test_cli_before_dangling_parent_is_not_found(tmp_path):
    """cli 'before' a user message whose parent is not in the file: 'Entry <id> not found'."""
    err = fork_error(open_as(tmp_path, [header(), user("u", "ghost")], "cli"), "u", "before")
    assert err.code == "not_found" and "ghost" in err.message


def test_cli_invalid_targets(tmp_path):
    """cli: unknown ids and non-user 'before' targets fail with invalid_fork_target."""
    s = open_as(tmp_path, TREE, "cli")
    for entry_id, position in (("nope", "at"), ("nope", "before"), ("a1", "before")):
        err = fork_error(s, entry_id, position)
        assert err.code == "invalid_fork_target"
        assert "Invalid entry ID for forking" in err.message


def test_cli_labels_dropped_rechained_and_recreated(tmp_path):
    """cli: label entries leave the path, parents re-chain, labels are re-created at the end with their timestamps."""
    lines = [header(), user("u1", None), lab("l1", "u1", "u1", "first", ts="T1"), assistant("a1", "l1"),
             lab("l2", "a1", "a1", "  spaced  ", ts="T2"), user("u2", "l2"), assistant("a2", "u2")]
    s = open_as(tmp_path, lines, "cli")
    entries, empty = entries_to_fork(s, "a2", "at")
    assert not empty
    assert ids(entries[:4]) == ["u1", "a1", "u2", "a2"]
    assert [e["parentId"] for e in entries[:4]] == [None, "u1", "a1", "u2"]
    new = entries[4:]
    assert [(e["type"], e["targetId"], e["label"], e["timestamp"]) for e in new] == [
        ("label", "u1", "first", "T1"), ("label", "a1", "  spaced  ", "T2")]
    assert new[0]["parentId"] == "a2" and new[1]["parentId"] == new[0]["id"]
    assert len({e["id"] for e in entries}) == len(entries)
    # the source objects are untouched
    assert s.lookup("a1")["parentId"] == "l1"


def test_cli_labels_in_map_order_including_later_labels(tmp_path):
    """cli: labels follow file-wide map order (rename keeps place, clear+set moves last), later ones included."""
    lines = [header(), user("a", None), assistant("b", "a"), user("c", "b"),
             lab("l1", "c", "a", "A", ts="T1"), lab("l2", "l1", "b", "B", ts="T2"), lab("l3", "l2", "c", "C", ts="T3"),
             lab("l4", "l3", "a", "A2", ts="T4"),  # rename: a keeps its first position
             lab("l5", "l4", "b", ts="T5"), lab("l6", "l5", "b", "B2", ts="T6"),  # clear then set: b moves last
             user("x", "b"), lab("l7", "x", "x", "X", ts="T7")]  # off-path target
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli"), "c", "at")
    assert [(e["targetId"], e["label"], e["timestamp"]) for e in entries if e["type"] == "label"] == [
        ("a", "A2", "T4"), ("c", "C", "T3"), ("b", "B2", "T6")]


def test_cli_whitespace_only_label_kept_on_fork(tmp_path):
    """cli: a whitespace-only label is re-created as is."""
    lines = [header(), user("a", None), lab("l1", "a", "a", "   ")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli"), "a", "at")
    assert entries[-1]["label"] == "   "


def test_cli_first_copied_entry_always_root(tmp_path):
    """cli: the first copied entry gets parentId None even when the path starts at an orphan (Appendix B 6)."""
    lines = [header(), user("u1", "ghost"), assistant("a1", "u1")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli"), "a1", "at")
    assert ids(entries) == ["u1", "a1"] and entries[0]["parentId"] is None


def test_cli_fork_ignores_compaction_boundary(tmp_path):
    """cli forks copy the full root path through a compaction."""
    lines = [header(), user("u1", None), assistant("a1", "u1"), comp("C", "a1", fk="a1", tail=[]), user("u2", "C")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli"), "u2", "at")
    assert ids(entries) == ["u1", "a1", "C", "u2"]


def test_cli_new_label_ids_avoid_path_ids(tmp_path):
    """Re-created label ids never collide with copied entry ids."""
    lines = [header(), user("00000001", None), lab("l", "00000001", "00000001", "x")]
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli"), "00000001", "at")
    assert entries[-1]["type"] == "label" and entries[-1]["id"] != "00000001"


def test_cli_message_without_message_object_is_error(tmp_path):
    """cli: a message entry without a message object before the first conversation message makes
    the fork fail (Appendix B 2): pi 0.82.1 looks for an assistant, so it meets the broken entry;
    pi 1.6 stops at the user message before it (C.25) and forks."""
    lines = [header(), user("u1", None), entry("message", "m", "u1"), assistant("a1", "m")]
    s = open_as(tmp_path, lines, "cli", pi_version="0.82.1")
    assert fork_error(s, "a1", "at").code == "invalid_fork_target"
    entries, _ = entries_to_fork(open_as(tmp_path, lines, "cli", pi_version="1.6.0"), "a1", "at")
    assert ids(entries) == ["u1", "m", "a1"]
    lines = [header(), entry("message", "m", None), user("u1", "m"), assistant("a1", "u1")]
    assert fork_error(open_as(tmp_path, lines, "cli", pi_version="1.6.0"), "a1", "at").code == "invalid_fork_target"


# --- plan and write ------------------------------------------------------------------------------------------


def test_plan_fork_header_and_name(tmp_path):
    """The plan's header names the source as parentSession and the file name encodes the time."""
    s = open_as(tmp_path, TREE, "cli")
    plan = plan_fork(s, "a2", "at", new_id="NEW-ID", now_iso=NOW)
    assert plan.header == {"type": "session", "version": 3, "id": "NEW-ID", "timestamp": NOW, "cwd": "/work/proj",
                           "parentSession": s.path}
    assert plan.file_name == "2026-07-25T10-00-00-000Z_NEW-ID.jsonl"
    assert ids(plan.entries) == ["u1", "a1", "u2", "a2"]
    lines = plan.lines().decode().splitlines()
    assert json.loads(lines[0]) == plan.header
    assert [json.loads(x)["id"] for x in lines[1:]] == ["u1", "a1", "u2", "a2"]


def test_plan_fork_harness_keeps_metadata(tmp_path):
    """harness plans carry the source metadata; an explicit cwd and source path override."""
    lines = [header(metadata={"owner": "sdk"}), user("u1", None), assistant("a1", "u1")]
    s = open_as(tmp_path, lines, "harness")
    plan = plan_fork(s, "a1", "at", new_id="N", now_iso=NOW, cwd="/elsewhere", source_path="/src.jsonl")
    assert plan.header["metadata"] == {"owner": "sdk"}
    assert plan.header["cwd"] == "/elsewhere" and plan.header["parentSession"] == "/src.jsonl"


def test_write_fork_creates_file_and_leaves_no_temp(tmp_path):
    """write_fork writes exactly plan.lines() under plan.file_name and leaves no temporary file."""
    src = tmp_path / "src"
    out = tmp_path / "out"
    out.mkdir()
    s = open_as(src, TREE, "cli")
    plan = plan_fork(s, "a2", "at", new_id="NEW", now_iso=NOW)
    path = write_fork(plan, str(out))
    assert path == os.path.join(str(out), plan.file_name)
    assert open(path, "rb").read() == plan.lines()
    assert os.listdir(out) == [plan.file_name]
    forked = open_session(path, "cli")
    assert ids(forked.entries) == ["u1", "a1", "u2", "a2"] and forked.header["parentSession"] == s.path


def test_write_fork_never_overwrites(tmp_path):
    """write_fork refuses an existing name (storage error), keeps the existing bytes, and leaves no temp file."""
    s = open_as(tmp_path / "src", TREE, "cli")
    plan = plan_fork(s, "a2", "at", new_id="NEW", now_iso=NOW)
    out = tmp_path / "out"
    out.mkdir()
    (out / plan.file_name).write_bytes(b"precious")
    with pytest.raises(PisessError) as info:
        write_fork(plan, str(out))
    assert info.value.code == "storage"
    assert (out / plan.file_name).read_bytes() == b"precious"
    assert os.listdir(out) == [plan.file_name]


def test_write_fork_twice_refused(tmp_path):
    """Writing the same plan twice fails the second time; the first file is intact."""
    s = open_as(tmp_path / "src", TREE, "cli")
    plan = plan_fork(s, "u2", "before", new_id="NEW", now_iso=NOW)
    out = tmp_path / "out"
    out.mkdir()
    first = write_fork(plan, str(out))
    data = open(first, "rb").read()
    with pytest.raises(PisessError):
        write_fork(plan, str(out))
    assert open(first, "rb").read() == data
    assert sorted(os.listdir(out)) == [plan.file_name]


def test_write_fork_refuses_dangling_symlink_name(tmp_path):
    """A dangling symlink at the target name counts as existing: nothing is written through it."""
    s = open_as(tmp_path / "src", TREE, "cli")
    plan = plan_fork(s, "a2", "at", new_id="NEW", now_iso=NOW)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(str(tmp_path / "target-does-not-exist"), str(out / plan.file_name))
    with pytest.raises(PisessError):
        write_fork(plan, str(out))
    assert not (tmp_path / "target-does-not-exist").exists()
    assert os.listdir(out) == [plan.file_name]


def test_write_fork_missing_directory(tmp_path):
    """Writing into a directory that does not exist is a storage error and creates nothing."""
    s = open_as(tmp_path, TREE, "cli")
    plan = plan_fork(s, "a2", "at", new_id="NEW", now_iso=NOW)
    with pytest.raises(PisessError) as info:
        write_fork(plan, str(tmp_path / "missing"))
    assert info.value.code == "storage"
    assert not (tmp_path / "missing").exists()


def test_write_fork_leaves_source_unchanged(tmp_path):
    """Forking never modifies the source file."""
    src = write_session(tmp_path, TREE)
    before = open(src, "rb").read()
    plan = plan_fork(open_session(src, "cli"), "u2", "before", new_id="NEW", now_iso=NOW)
    write_fork(plan, str(tmp_path))
    assert open(src, "rb").read() == before
