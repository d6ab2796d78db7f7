"""Opening session files with both readers: harness header/entry checks (spec §2.2, §4.1), the
lenient cli parse (§2.3, §4.2), leaf rules, labels and session names (§5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DROP, assistant, entry, examples, header, ids, user, write_bytes, write_session
from pisess.core.errors import PisessError
from pisess.core.reading.session import open_session

HDR_BAD = "first line is not a valid session header"


def harness_error(tmp_path, lines, **kw) -> PisessError:
    path = write_session(tmp_path, lines, **kw)
    with pytest.raises(PisessError) as info:
        open_session(path, "harness")
    return info.value


# --- harness header (§2.2) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "first, reason",
    [
        ("{not json", HDR_BAD),
        ("5", HDR_BAD),
        ("null", HDR_BAD),
        ('"session"', HDR_BAD),
        ("[]", HDR_BAD),
        ('[{"type":"session"}]', HDR_BAD),
        (header(type="sess"), HDR_BAD),
        (header(type=DROP), HDR_BAD),
        (header(version="3"), "unsupported session version"),
        (header(version=4), "unsupported session version"),
        (header(version=3.5), "unsupported session version"),
        (header(id=""), "session header is missing id"),
        (header(id=7), "session header is missing id"),
        (header(id=DROP), "session header is missing id"),
        (header(timestamp=""), "session header is missing timestamp"),
        (header(timestamp=1784970845225), "session header is missing timestamp"),
        (header(cwd=""), "session header is missing cwd"),
        (header(cwd=DROP), "session header is missing cwd"),
        (header(parentSession=None), "session header parentSession must be a string"),
        (header(parentSession=5), "session header parentSession must be a string"),
        (header(metadata=None), "session header metadata must be an object"),
        (header(metadata=[]), "session header metadata must be an object"),
        (header(metadata="x"), "session header metadata must be an object"),
    ],
)
def test_harness_header_reasons(tmp_path, first, reason):
    """Each header defect of spec §2.2 fails the harness open with invalid_session and pi's reason."""
    err = harness_error(tmp_path, [first, user("a", None)])
    assert (err.code, err.reason, err.line, err.physical_line) == ("invalid_session", reason, 1, 1)
    assert err.message.endswith(": " + reason)
    assert err.message.startswith("Invalid JSONL session file ")


@pytest.mark.parametrize(
    "first, reason",
    [
        (header(type="x", version=4), HDR_BAD),
        (header(version=4, id=""), "unsupported session version"),
        (header(id="", timestamp="", cwd=""), "session header is missing id"),
        (header(timestamp=5, cwd=""), "session header is missing timestamp"),
        (header(cwd=None, parentSession=None), "session header is missing cwd"),
        (header(parentSession=None, metadata=[]), "session header parentSession must be a string"),
    ],
)
def test_harness_header_checks_run_in_spec_order(tmp_path, first, reason):
    """With several header defects the first failing check of the §2.2 table is the one reported."""
    assert harness_error(tmp_path, [first]).reason == reason


def test_harness_header_accepts_json_3_point_0_and_optional_fields(tmp_path):
    """version 3.0, a string parentSession and an object metadata all pass the header check."""
    path = write_session(tmp_path, [header(version=3.0, parentSession="/x.jsonl", metadata={"k": 1}), user("a", None)])
    s = open_session(path, "harness")
    assert s.leaf_id == "a"
    assert s.header_json()["metadata"] == {"k": 1}
    assert s.header_json()["parentSessionPath"] == "/x.jsonl"


def test_harness_header_drops_unknown_keys_from_metadata_view(tmp_path):
    """The harness view of the header keeps only the known fields."""
    path = write_session(tmp_path, [header(extra="zzz")])
    hj = open_session(path, "harness").header_json()
    assert "extra" not in hj and set(hj) == {"id", "createdAt", "cwd", "path"}


def test_harness_bom_fails_header(tmp_path):
    """A UTF-8 BOM before the header is not JSON whitespace: the harness refuses the header."""
    path = write_bytes(tmp_path,
                       b"\xef\xbb\xbf" + b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    with pytest.raises(PisessError) as info:
        open_session(path, "harness")
    assert (info.value.code, info.value.reason, info.value.line) == ("invalid_session", HDR_BAD, 1)


@pytest.mark.parametrize("data", [b"", b"\n", b"   \n\t\n", b"\r\n\r\n", "\u00a0\n\ufeff\n".encode()])
def test_harness_missing_header(tmp_path, data):
    """An empty or blank-only file has no header: 'missing session header' with no line numbers."""
    path = write_bytes(tmp_path, data)
    with pytest.raises(PisessError) as info:
        open_session(path, "harness")
    e = info.value
    assert (e.code, e.reason, e.line, e.physical_line) == ("invalid_session", "missing session header", None, None)


def test_harness_header_after_leading_blank_lines(tmp_path):
    """The header is the first non-blank line: its error says line 1 but the real physical line."""
    err = harness_error(tmp_path, ["", "   ", header(version=4)])
    assert (err.line, err.physical_line) == (1, 3)


def test_harness_line_of_only_bom_is_blank(tmp_path):
    """A line holding only a BOM is blank (JS trim strips U+FEFF), so the header after it is found."""
    path = write_session(tmp_path, ["\ufeff", header(), user("a", None)])
    assert open_session(path, "harness").leaf_id == "a"


@pytest.mark.parametrize("odd", ["\x1c", "\x85", "\x1f"])
def test_harness_line_of_python_only_whitespace_is_not_blank(tmp_path, odd):
    """A line holding only \\x1c, \\x85 or \\x1f is not blank for JS trim(): it becomes the (invalid) header."""
    err = harness_error(tmp_path, [odd, header()])
    assert (err.reason, err.physical_line) == (HDR_BAD, 1)


def test_harness_accepts_crlf(tmp_path):
    """CRLF line ends load: the trailing \\r is JSON whitespace."""
    data = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\r\n' \
           b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\r\n'
    s = open_session(write_bytes(tmp_path, data), "harness")
    assert ids(s.entries) == ["a"]


# --- harness entries (§4.1) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, reason",
    [
        ("{oops", "is not valid JSON"),
        ('{"type":"message","id":"b"', "is not valid JSON"),
        ("NaN", "is not valid JSON"),
        ("null", "is not a valid session entry"),
        ("0", "is not a valid session entry"),
        ("false", "is not a valid session entry"),
        ('""', "is not a valid session entry"),
        ("5", "is not a valid session entry"),
        ('"s"', "is not a valid session entry"),
        ("true", "is not a valid session entry"),
        ("[]", "is missing entry type"),
        ("[1,2]", "is missing entry type"),
        ("{}", "is missing entry type"),
        (entry(5, "b", "a"), "is missing entry type"),
        (entry(DROP, "b", "a"), "is missing entry type"),
        (entry("message", "", "a"), "is missing entry id"),
        (entry("message", DROP, "a"), "is missing entry id"),
        (entry("message", 7, "a"), "is missing entry id"),
        (entry("message", "b", DROP), "has invalid parentId"),
        (entry("message", "b", 3), "has invalid parentId"),
        (entry("message", "b", "a", ts=""), "is missing timestamp"),
        (entry("message", "b", "a", ts=DROP), "is missing timestamp"),
        (entry("message", "b", "a", ts=17), "is missing timestamp"),
        (entry("leaf", "b", "a"), "has invalid targetId"),
        (entry("leaf", "b", "a", targetId=5), "has invalid targetId"),
        (header(id="second"), "has invalid parentId"),
    ],
)
def test_harness_entry_reasons(tmp_path, line, reason):
    """Each entry defect of spec §4.1 fails with invalid_entry and 'line <N> <reason>'."""
    err = harness_error(tmp_path, [header(), user("a", None), line])
    assert (err.code, err.reason, err.line, err.physical_line) == ("invalid_entry", f"line 3 {reason}", 3, 3)


@pytest.mark.parametrize(
    "line, reason",
    [
        ({"type": 5, "id": "", "parentId": 1}, "is missing entry type"),
        ({"type": "m", "id": "", "parentId": 1, "timestamp": ""}, "is missing entry id"),
        ({"type": "m", "id": "b", "parentId": 1, "timestamp": ""}, "has invalid parentId"),
        ({"type": "leaf", "id": "b", "parentId": None, "timestamp": "", "targetId": 3}, "is missing timestamp"),
    ],
)
def test_harness_entry_checks_run_in_spec_order(tmp_path, line, reason):
    """With several entry defects the first check of the §4.1 table wins."""
    assert harness_error(tmp_path, [header(), line]).reason == f"line 2 {reason}"


def test_harness_entry_edge_values_accepted(tmp_path):
    """type "" passes, parentId null passes, leaf targetId null passes."""
    lines = [header(), entry("", "a", None), entry("leaf", "b", "a", targetId=None)]
    s = open_session(write_session(tmp_path, lines), "harness")
    assert ids(s.entries) == ["a", "b"]


def test_harness_entry_line_counts_only_nonblank_lines(tmp_path):
    """`line` counts non-blank lines (header = 1) while `physical_line` is the real line number."""
    lines = ["", "", header(), "", user("a", None), "  ", "", assistant("b", "a"), "\t", "{broken"]
    err = harness_error(tmp_path, lines)
    assert (err.code, err.reason, err.line, err.physical_line) == ("invalid_entry", "line 4 is not valid JSON", 4, 10)


def test_harness_first_bad_line_aborts(tmp_path):
    """Only the first bad entry line is reported: the load stops there."""
    err = harness_error(tmp_path, [header(), "[]", "{broken"])
    assert err.reason == "line 2 is missing entry type"


def test_harness_truncated_last_line_fails(tmp_path):
    """A cut-off final line without a newline fails the harness open as invalid JSON."""
    err = harness_error(tmp_path, [header(), user("a", None), '{"type":"message","id":"b","par'],
                        trailing_newline=False)
    assert (err.code, err.line) == ("invalid_entry", 3)


def test_harness_complete_last_line_without_newline_loads(tmp_path):
    """A last line that is complete JSON but lacks \\n is accepted."""
    s = open_session(write_session(tmp_path, [header(), user("a", None)], trailing_newline=False), "harness")
    assert s.leaf_id == "a"


def test_harness_does_not_check_references(tmp_path):
    """Dangling parents, duplicate ids and missing targets do not fail the open (checked lazily)."""
    lines = [header(), user("a", "nope"), user("a", None), entry("label", "l", "a", targetId="ghost", label="x")]
    s = open_session(write_session(tmp_path, lines), "harness")
    assert len(s.entries) == 3 and s.lookup("a") is s.entries[1]


def test_harness_entry_physical_line_and_offset(tmp_path):
    """The error carries the byte offset of the bad line."""
    lines = [header(), "", "{x"]
    path = write_session(tmp_path, lines)
    data = open(path, "rb").read()
    err = harness_error(tmp_path, lines)
    assert err.offset == data.index(b"{x")
    assert (err.line, err.physical_line) == (2, 3)


# --- cli lenient parse (§2.3, §4.2) ----------------------------------------------------------------


def test_cli_drops_invalid_and_falsy_lines_with_physical_numbers(tmp_path):
    """Unparseable lines and falsy values are dropped and reported by physical line; blanks are not."""
    lines = [header(), "", "{bad", "null", "0", "", "false", '""', user("a", None), "   ", "{also bad"]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert s.dropped_lines == [
        {"line": 3, "reason": "not valid JSON"},
        {"line": 4, "reason": "falsy JSON value"},
        {"line": 5, "reason": "falsy JSON value"},
        {"line": 7, "reason": "falsy JSON value"},
        {"line": 8, "reason": "falsy JSON value"},
        {"line": 11, "reason": "not valid JSON"},
    ]
    assert ids(s.entries) == ["a"]
    assert s.entry_lines == [9]


def test_cli_keeps_truthy_non_objects(tmp_path):
    """Truthy non-objects (5, "s", true, [], {}) are kept as entries."""
    lines = [header(), "5", '"s"', "true", "[]", "{}", user("a", None)]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert s.entries[:5] == [5, "s", True, [], {}]
    assert len(s.entries) == 6
    assert s.dropped_lines == []
    assert s.entry_lines == [2, 3, 4, 5, 6, 7]


def test_cli_ignores_mid_file_header(tmp_path):
    """A later type:"session" value is neither an entry nor indexed, and it is not a dropped line."""
    lines = [header(), user("a", None), header(id="mid"), assistant("b", "a")]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert ids(s.entries) == ["a", "b"]
    assert s.lookup("mid") is None
    assert s.dropped_lines == []
    assert s.header["id"] != "mid"


def test_cli_mid_file_header_children_are_orphans(tmp_path):
    """A mid-file header with an id is not indexed: its children become orphans (roots of their path)."""
    from pisess.core.model.paths import active_path

    lines = [header(), user("a", None), header(id="mid"), user("b", "mid"), assistant("c", "b")]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert ids(active_path(s)) == ["b", "c"]


def test_cli_skips_garbage_before_header(tmp_path):
    """The cli header is the first truthy parsed value: blank and malformed lines before it are skipped."""
    s = open_session(write_session(tmp_path, ["", "{garbage", "null", header(id="h"), user("a", None)]), "cli")
    assert s.header["id"] == "h"
    assert [d["line"] for d in s.dropped_lines] == [2, 3]


def test_cli_header_only_needs_type_and_string_id(tmp_path):
    """The cli accepts a header with an empty id and without cwd/timestamp/version checks (version 3)."""
    s = open_session(write_session(tmp_path, [{"type": "session", "id": "", "version": 3}, user("a", None)]), "cli")
    assert s.header["id"] == "" and s.leaf_id == "a"


def test_cli_empty_file_is_initialized(tmp_path):
    """A 0-byte file opens with no entries and empty_file_initialized (pi writes a fresh header)."""
    s = open_session(write_bytes(tmp_path, b""), "cli")
    assert s.empty_file_initialized is True
    assert s.entries == [] and s.header is None and s.leaf_id is None


@pytest.mark.parametrize(
    "lines",
    [
        ["\n"],
        ["{bad", user("a", None)],
        [user("a", None), header()],
        [{"type": "session", "id": 5}],
        [{"type": "Session", "id": "x"}],
        ["[1]", header()],
    ],
)
def test_cli_nonempty_file_without_header_fails(tmp_path, lines):
    """A non-empty file whose first kept value is not a session header fails with invalid_session."""
    path = write_session(tmp_path, lines)
    with pytest.raises(PisessError) as info:
        open_session(path, "cli")
    assert info.value.code == "invalid_session"
    assert "not a valid pi session" in info.value.message


def test_cli_crlf_and_bom_behaviour(tmp_path):
    """The cli treats a BOM-prefixed header line as unparseable: the file has no header."""
    path = write_bytes(tmp_path,
                       b"\xef\xbb\xbf" + b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    with pytest.raises(PisessError) as info:
        open_session(path, "cli")
    assert info.value.code == "invalid_session"


def test_auto_reader_picks_harness_for_sdk_files(tmp_path):
    """auto: a leaf record, active_tools_change, retainedTail or header metadata means harness."""
    sdk = write_session(tmp_path, [header(), user("a", None), entry("leaf", "l", "a", targetId="a")], name="a.jsonl")
    plain = write_session(tmp_path, [header(), user("a", None)], name="b.jsonl")
    meta = write_session(tmp_path, [header(metadata={})], name="c.jsonl")
    assert open_session(sdk).reader == "harness"
    assert open_session(plain).reader == "cli"
    assert open_session(meta).reader == "harness"


def test_unknown_reader_is_usage_error(tmp_path):
    """A reader name other than auto/harness/cli is refused with code usage."""
    with pytest.raises(PisessError) as info:
        open_session(write_session(tmp_path, [header()]), "strict")
    assert info.value.code == "usage"


def test_missing_file_is_not_found(tmp_path):
    """A path that does not exist gives not_found."""
    with pytest.raises(PisessError) as info:
        open_session(str(tmp_path / "nope.jsonl"), "cli")
    assert info.value.code == "not_found"


def test_harness_legacy_file_is_read_migrated_with_a_note(tmp_path):
    """pisess's harness reader reads a v1 file migrated (pi's SDK refuses it) and says so in notes."""
    s = open_session(write_session(tmp_path, [header(version=DROP), {"type": "message", "message": {"role": "user"}}]),
                     "harness")
    assert s.migrated_from_version == 1
    assert s.leaf_id == "00000001"
    assert any("unsupported session version" in n for n in s.notes)


# --- leaf (§5.1, §5.3) ---------------------------------------------------------------------------------


def test_harness_leaf_record_moves_leaf(tmp_path):
    """harness: a final leaf record sets the leaf to its targetId."""
    lines = [header(), user("a", None), assistant("b", "a"), entry("leaf", "l1", "b", targetId="a")]
    assert open_session(write_session(tmp_path, lines), "harness").leaf_id == "a"


def test_harness_leaf_record_null_target(tmp_path):
    """harness: a final leaf record with targetId null gives a null leaf."""
    lines = [header(), user("a", None), entry("leaf", "l1", "a", targetId=None)]
    assert open_session(write_session(tmp_path, lines), "harness").leaf_id is None


def test_harness_only_last_entry_decides_leaf(tmp_path):
    """harness: a leaf record followed by another entry no longer decides the leaf."""
    lines = [header(), user("a", None), entry("leaf", "l1", "a", targetId=None), user("c", "l1")]
    assert open_session(write_session(tmp_path, lines), "harness").leaf_id == "c"


def test_cli_ignores_leaf_target(tmp_path):
    """cli: the leaf is the last entry's own id, even for a harness leaf record."""
    lines = [header(), user("a", None), assistant("b", "a"), entry("leaf", "l1", "b", targetId="a")]
    assert open_session(write_session(tmp_path, lines), "cli").leaf_id == "l1"


def test_no_entries_no_leaf(session_writer):
    """A header-only file has a null leaf in both readers."""
    path = session_writer([header()], name="only-header.jsonl")
    assert open_session(path, "harness").leaf_id is None
    assert open_session(path, "cli").leaf_id is None


def test_duplicate_ids_last_wins(tmp_path):
    """Both readers keep all entries but id lookups return the last occurrence."""
    lines = [header(), user("a", None, "first"), user("a", None, "second")]
    for reader in ("harness", "cli"):
        s = open_session(write_session(tmp_path, lines), reader)
        assert len(s.entries) == 2
        assert s.lookup("a")["message"]["content"][0]["text"] == "second"


# --- labels (§5.2) ------------------------------------------------------------------------------------


def _label(id_, parent, target, label=DROP, ts="2026-07-25T10:00:00.000Z"):
    return entry("label", id_, parent, ts, targetId=target, label=label)


def test_harness_trims_labels_and_deletes_blank_ones(tmp_path):
    """harness: labels are trimmed; whitespace-only, "" or a missing label clear the mapping."""
    lines = [header(), user("a", None), assistant("b", "a"), user("c", "b"),
             _label("l1", "c", "a", "  mark  "), _label("l2", "l1", "b", "keep"), _label("l3", "l2", "b", "   "),
             _label("l4", "l3", "c", "x"), _label("l5", "l4", "c")]
    s = open_session(write_session(tmp_path, lines), "harness")
    assert s.labels_json() == {"a": "mark"}
    assert s.label_of("a") == "mark" and s.label_of("b") is None


def test_cli_keeps_labels_untrimmed_and_whitespace_only(tmp_path):
    """cli: truthy labels are kept untrimmed, whitespace-only included; "" and missing clear."""
    lines = [header(), user("a", None), assistant("b", "a"), user("c", "b"),
             _label("l1", "c", "a", "  mark  "), _label("l2", "l1", "b", "   "),
             _label("l3", "l2", "c", "x"), _label("l4", "l3", "c", "")]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert s.labels_json() == {"a": "  mark  ", "b": "   "}


def test_cli_label_timestamps_follow_last_setter(tmp_path):
    """cli: each label remembers the timestamp of the label entry that last set it."""
    lines = [header(), user("a", None), _label("l1", "a", "a", "one", ts="T1"), _label("l2", "l1", "a", "two", ts="T2")]
    s = open_session(write_session(tmp_path, lines), "cli")
    assert s.labels_json() == {"a": "two"}
    assert list(s.label_timestamps.values()) == ["T2"]


def test_labels_are_file_wide_not_path_scoped(tmp_path):
    """A label on another branch still counts (labels resolve over the whole file)."""
    lines = [header(), user("a", None), user("b", None), _label("l1", "b", "a", "side"), user("c", "a")]
    for reader in ("harness", "cli"):
        assert open_session(write_session(tmp_path, lines), reader).labels_json() == {"a": "side"}


def test_harness_non_string_label_fails(tmp_path):
    """harness: a non-string label makes the open fail (pi throws indexing labels)."""
    path = write_session(tmp_path, [header(), user("a", None), _label("l1", "a", "a", 5)])
    with pytest.raises(PisessError):
        open_session(path, "harness")
    assert open_session(path, "cli").labels_json() == {"a": 5}


# --- session name (§5.3) ------------------------------------------------------------------------------


def _info(id_, parent, name=DROP):
    return entry("session_info", id_, parent, name=name)


@pytest.mark.parametrize("reader", ["harness", "cli"])
def test_session_name_last_info_trimmed(tmp_path, reader):
    """The name comes from the last session_info in file order, trimmed."""
    lines = [header(), user("a", None), _info("i1", "a", "first"), _info("i2", "i1", "  second \n")]
    assert open_session(write_session(tmp_path, lines), reader).session_name() == "second"


@pytest.mark.parametrize("reader", ["harness", "cli"])
@pytest.mark.parametrize("clear", ["", "   ", DROP, None])
def test_session_name_cleared_by_later_info(tmp_path, reader, clear):
    """A later empty/blank/missing name clears an earlier one."""
    lines = [header(), user("a", None), _info("i1", "a", "named"), _info("i2", "i1", clear)]
    assert open_session(write_session(tmp_path, lines), reader).session_name() is None


def test_session_name_from_any_branch(tmp_path):
    """The last session_info counts even when it is off the active branch."""
    lines = [header(), user("a", None), _info("i1", "a", "side"), user("b", "a")]
    assert open_session(write_session(tmp_path, lines), "cli").session_name() == "side"


def test_session_name_absent(tmp_path):
    """No session_info gives no name."""
    assert open_session(write_session(tmp_path, [header(), user("a", None)]), "cli").session_name() is None


def test_session_name_non_string_is_error(tmp_path):
    """A non-string name is reported as a PisessError (pi throws reading it)."""
    s = open_session(write_session(tmp_path, [header(), _info("i1", None, 42)]), "harness")
    with pytest.raises(PisessError):
        s.session_name()


def test_dumps_writes_numbers_as_json_stringify():
    """Doubles below 1e21 in full digits, as pi prints them; exponents inside strings untouched."""
    from pisess.core.reading.jsonl import dumps, parse_json

    doc = parse_json(b'{"tokens":12345678901234567890,"f":1.5e17,"big":2.5e21,"tiny":1e-7,"s":"1e5 \\"2e7\\""}')
    assert dumps(doc) == (b'{"tokens":12345678901234567000,"f":150000000000000000,"big":2.5e+21,"tiny":1e-7,'
                          b'"s":"1e5 \\"2e7\\""}')


@settings(max_examples=examples(200))
@given(st.recursive(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**6, 10**6),
                              st.text(alphabet=st.sampled_from('0123456789e+-.:,"\\ \x00[]{}'), max_size=12)),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
                    max_leaves=12))
def test_dumps_rewrites_numbers_only_outside_strings(value):
    """Whatever strings hold (exponents, quotes, backslashes, NULs): they come out as they went in,
    and every number reads back as the same double."""
    import json as std_json

    from pisess.core.reading.jsonl import dumps

    def doubles(v):
        if isinstance(v, dict):
            return {k: doubles(x) for k, x in v.items()}
        if isinstance(v, list):
            return [doubles(x) for x in v]
        return float(v) if isinstance(v, (int, float)) else v

    for indent in (False, True):
        assert doubles(std_json.loads(dumps(value, indent), parse_int=int)) == doubles(value)


@settings(max_examples=examples(300), deadline=None)
@given(lines=st.lists(st.sampled_from([0, 1, 2, 40, 900, 1500, 9000]), max_size=30),
       terminated=st.booleans(), chunk_size=st.sampled_from([1, 3, 64, 1000, 4096, 1 << 16]))
def test_blocks_of_lines_are_the_file_split_on_newlines_whatever_their_length(tmp_path_factory, lines, terminated,
                                                                                chunk_size):
    """iter_blocks splits long lines with a loop of finds and short ones with split: either way
    the lines, their offsets and the unterminated last line are the file's."""
    from pisess.core.reading.jsonl import iter_blocks

    data = b"\n".join(b"x" * n for n in lines) + (b"\n" if terminated and lines else b"")
    path = tmp_path_factory.mktemp("blocks") / "s.jsonl"
    path.write_bytes(data)
    got, offsets, ends = [], [], []
    for offset, parts, ended in iter_blocks(str(path), chunk_size=chunk_size):
        for part in parts:
            got.append(part)
            offsets.append(offset)
            offset += len(part) + 1
        ends.append(ended)
    *whole, tail = data.split(b"\n")
    assert got == whole + ([tail] if tail else [])
    assert offsets == [sum(len(x) + 1 for x in got[:i]) for i in range(len(got))]
    assert ends == [True] * len(ends) if not tail else ends[-1] is False and all(ends[:-1])
