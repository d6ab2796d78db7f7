"""validate_file: the findings codes and the `pi` block describing what each of pi's readers does."""

from __future__ import annotations

import json

import pytest

from conftest import DROP, SESSION_ID, assistant, encode_line, entry, header, user, write_bytes, write_session
from pisess.core import versions
from pisess.core.analyses.validate import validate_file


def validate(tmp_path, lines, **kw):
    return validate_file(write_session(tmp_path, lines, **kw))


def codes(report):
    return {(f.severity, f.code, f.line) for f in report.findings}


def only(report, code):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, report.findings
    return found[0]


def test_clean_file_has_no_findings(tmp_path):
    """A well-formed file has no findings, opens in both readers and is ok."""
    r = validate(tmp_path, [header(), user("a", None), assistant("b", "a")])
    assert r.findings == []
    assert r.ok() and r.ok(strict=True)
    assert r.pi["harness"] == {"opens": True}
    assert r.pi["cli"] == {"opens": True, "piVersion": versions.CURRENT, "migratedFromVersion": None, "droppedLines": [],
                           "emptyFileInitialized": False, "finalNewlineRepaired": False}
    assert r.to_json()["ok"] is True


def test_dangling_parent(tmp_path):
    """A parent missing from the file is a dangling_parent warning at the child's line (info for the first entry)."""
    r = validate(tmp_path, [header(), user("a", None), user("b", "ghost"), assistant("c", "b")])
    f = only(r, "dangling_parent")
    assert (f.severity, f.line, f.entry_id) == ("warning", 3, "b")
    r = validate(tmp_path, [header(), user("a", "ghost"), assistant("b", "a")])
    f = only(r, "dangling_parent")
    assert (f.severity, f.line) == ("info", 2)


def test_dangling_parent_on_harness_path_fails_context(tmp_path):
    """In an SDK-written file a dangling parent on the active path is an error: pi's SDK cannot build the path."""
    r = validate(tmp_path, [header(), user("a", None), user("b", "ghost"), entry("leaf", "l", "b", targetId="b")])
    assert ("error", "path_fails", 3) in codes(r)
    assert not r.ok()


def test_duplicate_id(tmp_path):
    """A repeated id is a duplicate_id warning on the later line."""
    r = validate(tmp_path, [header(), user("a", None), "", user("a", None)])
    f = only(r, "duplicate_id")
    assert (f.severity, f.line, f.entry_id) == ("warning", 4, "a")
    assert r.ok() and not r.ok(strict=True)


def test_truncated_last_line(tmp_path):
    """A cut-off final line without a newline is truncated_line; harness fails on it, cli drops it."""
    r = validate(tmp_path, [header(), user("a", None), '{"type":"message","id":"b"'], trailing_newline=False)
    f = only(r, "truncated_line")
    assert (f.severity, f.line) == ("error", 3)
    assert r.pi["harness"] == {"opens": False, "code": "invalid_entry", "reason": "line 3 is not valid JSON",
                               "line": 3, "physicalLine": 3}
    assert r.pi["cli"]["opens"] is True
    assert r.pi["cli"]["droppedLines"] == [{"line": 3, "reason": "not valid JSON"}]


def test_truncated_last_line_recently_modified_is_in_progress(tmp_path):
    """The same tail in a file modified moments ago is an in_progress_tail warning instead."""
    path = write_session(tmp_path, [header(), user("a", None), '{"type":"mess'], trailing_newline=False)
    r = validate_file(path, mtime=1000.0, now=1005.0)
    assert only(r, "in_progress_tail").severity == "warning"
    assert not any(f.code == "truncated_line" for f in r.findings)


def test_glued_line(tmp_path):
    """A fragment with a complete entry glued on is glued_line, located at the glued entry's byte offset."""
    glued = '{"type":"mess' + json.dumps(assistant("b", "a"), separators=(",", ":"))
    path = write_session(tmp_path, [header(), user("a", None), glued, user("c", "b")])
    r = validate_file(path)
    f = only(r, "glued_line")
    data = open(path, "rb").read()
    assert (f.severity, f.line, f.entry_id) == ("error", 3, "b")
    assert f.offset == data.index(b'{"type":"message","id":"b"')
    # the lost entry leaves its child dangling
    assert only(r, "dangling_parent").entry_id == "c"


def test_invalid_json_mid_file(tmp_path):
    """A mid-file unparseable line is invalid_json with physical line and byte offset."""
    path = write_session(tmp_path, ["", header(), "", "{bad", user("a", None)])
    r = validate_file(path)
    f = only(r, "invalid_json")
    assert (f.line, f.offset) == (4, open(path, "rb").read().index(b"{bad"))
    assert r.pi["harness"]["reason"] == "line 2 is not valid JSON"
    assert (r.pi["harness"]["line"], r.pi["harness"]["physicalLine"]) == (2, 4)


def test_falsy_line(tmp_path):
    """A falsy JSON line is falsy_line; the cli drops it and says so."""
    r = validate(tmp_path, [header(), "null", user("a", None)])
    assert only(r, "falsy_line").line == 2
    assert r.pi["cli"]["droppedLines"] == [{"line": 2, "reason": "falsy JSON value"}]
    assert r.pi["harness"]["reason"] == "line 2 is not a valid session entry"


@pytest.mark.parametrize("n", [1, 2, 3])
def test_cycle(tmp_path, n):
    """A parentId cycle is reported once as a cycle error (no hang), whatever its length."""
    lines = [header()] + [user(f"e{i}", f"e{(i + 1) % n}") for i in range(n)] + [user("t", "e0")]
    r = validate(tmp_path, lines)
    f = only(r, "cycle")
    assert f.severity == "error" and f.entry_id in {f"e{i}" for i in range(n)}
    assert not r.ok()


def test_leaf_and_label_target_missing(tmp_path):
    """A label or leaf record naming an entry not in the file gives label/leaf_target_missing."""
    r = validate(tmp_path, [header(), user("a", None), entry("label", "l", "a", targetId="ghost", label="x"),
                            entry("leaf", "f", "l", targetId="gone")])
    assert (only(r, "label_target_missing").line, only(r, "label_target_missing").entry_id) == (3, "l")
    assert (only(r, "leaf_target_missing").line, only(r, "leaf_target_missing").entry_id) == (4, "f")
    # the SDK fails reading that leaf
    assert any(f.code == "leaf_fails" and f.severity == "error" for f in r.findings)


def test_leaf_null_target_is_fine(tmp_path):
    """A leaf record with targetId null is not a missing target."""
    r = validate(tmp_path, [header(), user("a", None), entry("leaf", "f", "a", targetId=None)])
    assert not any(f.code == "leaf_target_missing" for f in r.findings)


def test_unknown_type_is_info(tmp_path):
    """An unknown entry type is an info finding only; the file stays ok."""
    r = validate(tmp_path, [header(), user("a", None), entry("weird", "w", "a")])
    f = only(r, "unknown_type")
    assert (f.severity, f.line, f.entry_id) == ("info", 3, "w")
    assert r.ok(strict=True)


@pytest.mark.parametrize("version, raw", [(DROP, 1), (None, 1), (2, 2)])
def test_legacy_version(tmp_path, version, raw):
    """A v1/v2 file is a legacy_version warning; harness refuses it, cli reports migratedFromVersion."""
    r = validate(tmp_path, [header(version=version), {"type": "message", "timestamp": "t",
                                                      "message": {"role": "user", "content": "x"}}])
    f = only(r, "legacy_version")
    assert (f.severity, f.line) == ("warning", 1)
    assert r.pi["harness"] == {"opens": False, "code": "invalid_session", "reason": "unsupported session version",
                               "line": 1, "physicalLine": 1}
    assert r.pi["cli"]["migratedFromVersion"] == raw
    assert r.pi["cli"]["opens"] is True


def test_newer_version_is_unsupported_error(tmp_path):
    """A version above 3 is unsupported_version: harness refuses it, cli reads it as v3 unmigrated."""
    r = validate(tmp_path, [header(version=4), user("a", None)])
    assert only(r, "unsupported_version").severity == "error"
    assert r.pi["cli"]["migratedFromVersion"] is None
    assert r.pi["harness"]["reason"] == "unsupported session version"


def test_bom(tmp_path):
    """A leading UTF-8 BOM is a bom error on line 1; neither reader opens the file."""
    data = b"\xef\xbb\xbf" + encode_line(header()) + b"\n" + encode_line(user("a", None)) + b"\n"
    r = validate_file(write_bytes(tmp_path, data))
    f = only(r, "bom")
    assert (f.severity, f.line, f.offset) == ("error", 1, 0)
    assert r.pi["harness"] == {"opens": False, "code": "invalid_session",
                               "reason": "first line is not a valid session header", "line": 1, "physicalLine": 1}
    assert r.pi["cli"]["opens"] is False and r.pi["cli"]["code"] == "invalid_session"


def test_duplicate_header(tmp_path):
    """A mid-file header of another session is several_sessions (issue 34: tests/test_findings.py),
    one of the same id duplicate_header; harness fails with 'has invalid parentId', cli ignores it."""
    r = validate(tmp_path, [header(), user("a", None), header(id="mid")])
    assert only(r, "several_sessions").line == 3 and not [f for f in r.findings if f.code == "duplicate_header"]
    r = validate(tmp_path, [header(), user("a", None), header()])
    assert only(r, "duplicate_header").line == 3
    assert r.pi["harness"]["reason"] == "line 3 has invalid parentId"
    assert r.pi["cli"]["opens"] is True and r.pi["cli"]["droppedLines"] == []


def test_invalid_entry(tmp_path):
    """An entry failing a §4.1 check is invalid_entry with pi's reason in the message."""
    r = validate(tmp_path, [header(), user("a", None), entry("message", "b", "a", ts="")])
    f = only(r, "invalid_entry")
    assert f.line == 3 and "line 3 is missing timestamp" in f.message
    assert r.pi["harness"]["code"] == "invalid_entry"


def test_invalid_header(tmp_path):
    """A v3 header failing a §2.2 check is invalid_session; the cli may still open it."""
    r = validate(tmp_path, [header(cwd=""), user("a", None)])
    assert only(r, "invalid_session").line == 1
    assert r.pi["harness"]["reason"] == "session header is missing cwd"
    assert r.pi["cli"]["opens"] is True


def test_empty_and_blank_files(tmp_path):
    """An empty file is empty_file (cli initialises it); a blank-only file is missing_header."""
    r = validate_file(write_bytes(tmp_path, b"", name="e.jsonl"))
    assert only(r, "empty_file").severity == "error"
    assert r.pi["harness"]["reason"] == "missing session header"
    assert r.pi["harness"]["line"] is None
    assert r.pi["cli"]["emptyFileInitialized"] is True
    r = validate_file(write_bytes(tmp_path, b"\n  \n", name="b.jsonl"))
    assert only(r, "missing_header").severity == "error"
    assert r.pi["cli"]["opens"] is False


def test_pi_block_cli_failure(tmp_path):
    """A non-empty file without a header: the cli block says it does not open and lists dropped lines."""
    r = validate(tmp_path, ["{bad", user("a", None)])
    assert r.pi["cli"]["opens"] is False
    assert r.pi["cli"]["code"] == "invalid_session"
    assert r.pi["cli"]["droppedLines"] == [{"line": 1, "reason": "not valid JSON"}]


def test_entries_without_ids_under_v3_header(tmp_path):
    """A v3 header over id-less (v1-style) entries is flagged entries_without_ids."""
    r = validate(tmp_path, [header(), {"type": "message", "timestamp": "t", "message": {"role": "user"}}])
    assert only(r, "entries_without_ids").severity == "error"


def test_validate_does_not_modify_file(tmp_path):
    """Validation never writes: the file bytes are unchanged, even for a legacy file."""
    path = write_session(tmp_path, [header(version=DROP), {"type": "message", "message": {"role": "user"}}, "{x"])
    before = open(path, "rb").read()
    validate_file(path)
    assert open(path, "rb").read() == before


def test_findings_sorted_by_line(tmp_path):
    """Findings come back in line order."""
    r = validate(tmp_path, [header(), user("a", None), "null", user("a", None), entry("weird", "w", "a"), "{x"])
    lines = [f.line for f in r.findings if f.line is not None]
    assert lines == sorted(lines) and len(lines) >= 4


def test_glued_complete_entries(tmp_path):
    """Two complete entries with the newline missing (what pi's author's files hold) are said to be that."""
    two = json.dumps(assistant("b", "a"), separators=(",", ":")) + json.dumps(
        {"type": "compaction", "id": "c", "parentId": "b", "timestamp": "2026-07-25T09:14:03.512Z", "summary": "S",
         "firstKeptEntryId": "a", "tokensBefore": 1}, separators=(",", ":"))
    path = write_session(tmp_path, [header(), user("a", None), two])
    f = only(validate_file(path), "glued_line")
    assert "2 complete entries" in f.message and "(assistant, compaction)" in f.message
    assert "None" not in f.message and f.entry_id == "b"


def test_title_line_before_the_header(tmp_path):
    """oh-my-pi's layout: a title record, then the header; said once, as what it is."""
    path = write_session(tmp_path, [{"type": "title", "title": "t"}, header(), user("a", None)])
    r = validate_file(path)
    assert [f.code for f in r.findings if f.severity == "error"] == ["header_not_first"]
    assert "'title' record" in r.findings[0].message and "line 2" in r.findings[0].message


def test_first_parent_is_the_header_id(tmp_path):
    """OpenClaw's layout: the first entry's parentId is the header's id, not a forked copy."""
    r = validate_file(write_session(tmp_path, [header(), user("a", SESSION_ID), user("b", "a")]))
    f = only(r, "dangling_parent")
    assert "session header's id" in f.message and "forked copy" not in f.message


def test_file_replaced_while_read_is_an_io_condition(tmp_path, monkeypatch):
    """An entry read back that is not the one the scan saw means the file changed: storage, not a finding."""
    import pytest

    from pisess.core.errors import PisessError
    from pisess.core.reading import jsonl

    path = write_session(tmp_path, [header(), user("a", None), assistant("b", "a")])
    real = jsonl.RawFile.parse_back

    def swapped(self, light, data):
        return real(self, light, data.replace(b'"id":"', b'"id":"x'))

    monkeypatch.setattr(jsonl.RawFile, "parse_back", swapped)
    with pytest.raises(PisessError) as e:
        validate_file(path)
    assert e.value.code == "storage"


def test_a_kept_entry_not_among_the_compactions_ancestors(tmp_path):
    """first_kept_not_on_path: a compaction keeping from an entry above it (of a string id or a
    number id) is no finding; one keeping from an entry of another branch is one, at the
    compaction's line."""
    lines = [header(), user("a", None), assistant("b", "a"), user("x", "a"),
             entry("compaction", "c1", "b", firstKeptEntryId="a", summary="S", tokensBefore=5),
             entry("compaction", "c2", "c1", firstKeptEntryId="x", summary="S", tokensBefore=5),
             entry("compaction", 7, "c2", firstKeptEntryId="b", summary="S", tokensBefore=5),
             entry("compaction", "c3", 7, firstKeptEntryId=7, summary="S", tokensBefore=5)]
    found = sorted(f.line for f in validate(tmp_path, lines).findings if f.code == "first_kept_not_on_path")
    assert found == [6]


def test_is_ancestor_by_the_stores_ids_is_as_by_the_entries():
    """``_is_ancestor`` given the store's string ids answers as it does reading each entry's id, for
    every compaction and label of files with duplicate ids, parents that come later, cycles and
    entries that are not messages (what ``many_entry_files`` draws)."""
    import os
    import tempfile

    from hypothesis import given, settings

    from conftest import examples, session_bytes
    from pisess.core.analyses.validate import _is_ancestor
    from pisess.core.errors import PisessError
    from pisess.core.reading.session import open_session
    from test_core_compact import many_entry_files

    @settings(max_examples=examples(60), deadline=None)
    @given(many_entry_files())
    def check(lines):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.jsonl")
            with open(path, "wb") as fh:
                fh.write(session_bytes(lines))
            for light in (True, False):
                try:
                    s = open_session(path, "cli", light=light)
                except PisessError:
                    return
                ids = s.store.string_ids()
                for p in range(len(s.store)):
                    e = s.store[p]
                    if isinstance(e, dict):
                        for target in (e.get("firstKeptEntryId"), e.get("targetId"), e.get("id"), 7):
                            assert _is_ancestor(s, e, target, ids) == _is_ancestor(s, e, target)
    check()
