"""v1 → v2 → v3 migration in memory (spec §10, Appendix B 14-15)."""

from __future__ import annotations

import hashlib
import os

import pytest

from conftest import DROP, header, ids, write_session
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context
from pisess.core.reading.migrate import migrate_in_memory, needs_migration, raw_version
from pisess.core.reading.session import open_session

V1_HEADER = header(version=DROP, provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off",
                   branchedFrom="/old.jsonl")


def v1_msg(role, text):
    return {"type": "message", "timestamp": "2025-11-20T23:33:51.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}}


def v1_comp(index, summary="SUM"):
    return {"type": "compaction", "timestamp": "2025-11-20T23:40:00.000Z", "summary": summary,
            "firstKeptEntryIndex": index, "tokensBefore": 500}


def open_cli(tmp_path, lines):
    return open_session(write_session(tmp_path, lines), "cli")


def test_v1_ids_and_linear_parents(tmp_path):
    """v1 entries get ids f"{n:08x}" (1-based) and each the previous entry as parent (first: None)."""
    lines = [V1_HEADER] + [v1_msg("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(18)]
    s = open_cli(tmp_path, lines)
    assert ids(s.entries) == [f"{n:08x}" for n in range(1, 19)]
    assert ids(s.entries)[9:11] == ["0000000a", "0000000b"]
    assert [e["parentId"] for e in s.entries] == [None] + [f"{n:08x}" for n in range(1, 18)]
    assert s.leaf_id == "00000012"
    assert s.migrated_from_version == 1
    assert s.header["version"] == 3
    assert list(s.header)[-1] == "version"  # added as the last key
    assert s.header["branchedFrom"] == "/old.jsonl" and "parentSession" not in s.header


def test_v1_existing_ids_are_overwritten(tmp_path):
    """v1 migration assigns ids unconditionally, replacing any id/parentId already present."""
    lines = [V1_HEADER, {**v1_msg("user", "a"), "id": "keep?", "parentId": "x"}, v1_msg("assistant", "b")]
    s = open_cli(tmp_path, lines)
    assert ids(s.entries) == ["00000001", "00000002"]
    assert s.entries[0]["parentId"] is None


def test_v1_first_kept_index_becomes_id(tmp_path):
    """firstKeptEntryIndex (header = index 0) becomes firstKeptEntryId of that entry and is removed."""
    lines = [V1_HEADER, v1_msg("user", "a"), v1_msg("assistant", "b"), v1_msg("user", "c"), v1_comp(2),
             v1_msg("user", "d")]
    s = open_cli(tmp_path, lines)
    comp = s.lookup("00000004")
    assert comp["firstKeptEntryId"] == "00000002"
    assert "firstKeptEntryIndex" not in comp
    c = build_context(s)
    assert ids(c.context_entries) == ["00000004", "00000002", "00000003", "00000005"]
    assert [m["role"] for m in c.messages] == ["compactionSummary", "assistant", "user", "user"]


def test_v1_index_counts_kept_values_only(tmp_path):
    """The index counts parsed kept values: dropped lines and blank lines are not positions."""
    lines = [V1_HEADER, "{garbage", "", "null", v1_msg("user", "a"), v1_msg("assistant", "b"), v1_comp(2)]
    assert open_cli(tmp_path, lines).lookup("00000003")["firstKeptEntryId"] == "00000002"


@pytest.mark.parametrize("index", [0, 4, 99, -1, 1.5, "1"])
def test_v1_index_without_target(tmp_path, index):
    """An index at the header, forward, out of range or non-integer gives no firstKeptEntryId."""
    lines = [V1_HEADER, v1_msg("user", "a"), v1_msg("assistant", "b"), v1_comp(index), v1_msg("user", "c")]
    comp = open_cli(tmp_path, lines).lookup("00000003")
    assert "firstKeptEntryId" not in comp
    if isinstance(index, (int, float)):
        assert "firstKeptEntryIndex" not in comp
    else:
        assert comp["firstKeptEntryIndex"] == "1"  # only numeric indexes are converted/deleted


def test_v1_mid_file_header_is_a_position_but_gets_no_id(tmp_path):
    """A mid-file session value is skipped for ids but counts as an index position (Appendix B 14)."""
    lines = [V1_HEADER, v1_msg("user", "a"), header(version=DROP, id="mid"), v1_msg("assistant", "b"), v1_comp(3)]
    s = open_cli(tmp_path, lines)
    assert ids(s.entries) == ["00000001", "00000002", "00000003"]
    assert s.lookup("00000003")["firstKeptEntryId"] == "00000002"
    assert s.lookup("00000002")["parentId"] == "00000001"


def test_v1_array_line_gets_an_id(tmp_path):
    """A JSON array line counts as an entry and consumes an id (Appendix B 15)."""
    s = open_cli(tmp_path, [V1_HEADER, v1_msg("user", "a"), [1, 2], v1_msg("assistant", "b")])
    assert s.entries[2]["id"] == "00000003"
    assert s.entries[2]["parentId"] == "00000002"


@pytest.mark.parametrize("bad", ["5", '"s"', "true"])
def test_v1_primitive_line_fails_migration(tmp_path, bad):
    """A number, string or true line makes the migration (and so the cli open) fail with a PisessError."""
    with pytest.raises(PisessError) as info:
        open_cli(tmp_path, [V1_HEADER, v1_msg("user", "a"), bad])
    assert info.value.code == "invalid_value"


def test_v2_hook_message_becomes_custom(tmp_path):
    """v2 → v3 renames role hookMessage to custom and leaves ids and other roles alone."""
    hook = {"role": "hookMessage", "customType": "h", "content": "injected", "display": True, "timestamp": 1}
    lines = [header(version=2),
             {"type": "message", "id": "a1", "parentId": None, "timestamp": "t", "message": hook},
             {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "t",
              "message": {"role": "user", "content": "x", "timestamp": 2}}]
    s = open_cli(tmp_path, lines)
    assert s.migrated_from_version == 2
    assert ids(s.entries) == ["a1", "a2"]
    assert s.entries[0]["message"]["role"] == "custom"
    assert s.entries[1]["message"]["role"] == "user"
    llm = build_context(s).llm_messages
    assert llm[0] == {"role": "user", "content": [{"type": "text", "text": "injected"}], "timestamp": 1}


def test_v1_runs_both_steps(tmp_path):
    """A v1 file also gets the v2 → v3 hookMessage rename."""
    lines = [V1_HEADER, {"type": "message", "timestamp": "t",
                         "message": {"role": "hookMessage", "customType": "h", "content": "c", "timestamp": 1}}]
    assert open_cli(tmp_path, lines).entries[0]["message"]["role"] == "custom"


@pytest.mark.parametrize(
    "version, migrated, header_version",
    [(DROP, 1, 3), (None, 1, 3), (1, 1, 3), (2, 2, 3), ("2", "2", 3), (True, True, 3),
     (3, None, 3), ("3", None, "3"), (4, None, 4), ("abc", "abc", "abc")],
)
def test_migrated_from_version(tmp_path, version, migrated, header_version):
    """migrated_from_version is the raw version whenever !(version >= 3) (JS comparison), else None."""
    s = open_cli(tmp_path, [header(version=version), {"type": "message", "id": "x", "parentId": None,
                                                      "timestamp": "t", "message": {"role": "user"}}])
    assert s.migrated_from_version == migrated
    assert s.header.get("version") == header_version


def test_string_two_runs_only_v2_to_v3(tmp_path):
    """version "2" skips the v1 id assignment (JS "2" < 2 is false) but still renames hookMessage."""
    lines = [header(version="2"), {"type": "message", "id": "keep", "parentId": None, "timestamp": "t",
                                   "message": {"role": "hookMessage", "content": "c"}}]
    s = open_cli(tmp_path, lines)
    assert ids(s.entries) == ["keep"]
    assert s.entries[0]["message"]["role"] == "custom"


def test_migration_leaves_source_file_unchanged(tmp_path):
    """Opening (and migrating) a v1 file never writes: its bytes are identical afterwards."""
    lines = [V1_HEADER, "", "{broken", v1_msg("user", "a"), v1_msg("assistant", "b"), v1_comp(1)]
    path = write_session(tmp_path, lines)
    before = open(path, "rb").read()
    mtime = os.stat(path).st_mtime_ns
    for reader in ("cli", "harness", "auto"):
        build_context(open_session(path, reader))
    assert open(path, "rb").read() == before
    assert hashlib.sha256(open(path, "rb").read()).digest() == hashlib.sha256(before).digest()
    assert os.stat(path).st_mtime_ns == mtime


def test_migrate_in_memory_does_not_mutate_input():
    """migrate_in_memory works on a copy: the caller's parsed values stay as the file has them."""
    values = [{"type": "session", "id": "s"}, {"type": "message", "message": {"role": "hookMessage"}}]
    out = migrate_in_memory(values)
    assert values == [{"type": "session", "id": "s"}, {"type": "message", "message": {"role": "hookMessage"}}]
    assert out[1]["id"] == "00000001" and out[1]["message"]["role"] == "custom" and out[0]["version"] == 3


def test_needs_migration_and_raw_version():
    """raw_version treats missing/null as 1; needs_migration uses the JS >= 3 comparison."""
    assert raw_version({}) == 1 and raw_version({"version": None}) == 1 and raw_version({"version": 2}) == 2
    assert needs_migration({}) and needs_migration({"version": 2}) and needs_migration({"version": "x"})
    assert not needs_migration({"version": 3}) and not needs_migration({"version": "3"})
    assert not needs_migration({"version": 7})
