"""pi 1.6.0's listing (/resume), lookup by id and --continue (spec §8.2, C.20-C.24, C.28), and
how pisess finds the last activity from the end of a file."""

from __future__ import annotations

import json
import os

import pytest

from conftest import assistant, entry, header, new_runner, user, write_bytes, write_session
from pisess.core import versions
from pisess.core.errors import PisessError
from pisess.core.listing import summary
from pisess.core.listing.repo import (
    collation_key,
    discovery_header,
    encode_cwd,
    find_by_id,
    list_sessions,
    most_recent_session,
    resolve_session,
)
from pisess.core.listing.summary import SDK_V4, read_cli_info

CWD = "/work/proj"
OTHER = "/work/other"
V16 = "1.6.0"


def t(sec: int, ms: int = 0) -> str:
    """10:00:00 on a fixed day plus ``sec`` seconds, as pi writes times."""
    import datetime

    d = datetime.datetime(2026, 5, 1, 10, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=sec, milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def ms(stamp: str) -> int:
    from pisess.core.js import date_ms

    return date_ms(stamp)


def name(created: str, sid: str) -> str:
    return f"{created.replace(':', '-').replace('.', '-')}_{sid}.jsonl"


def chat(n: int, start: int = 1, pad: int = 0) -> list:
    """n user/assistant pairs, one second apart, message.timestamp = the entry's time."""
    out, parent = [], None
    for k in range(n):
        a, b = t(start + 2 * k), t(start + 2 * k + 1)
        u = user(f"u{k}", parent, "question " + "x" * pad, ts=a)
        u["message"]["timestamp"] = ms(a)
        r = assistant(f"a{k}", f"u{k}", "answer " + "y" * pad, ts=b)
        r["message"]["timestamp"] = ms(b)
        out += [u, r]
        parent = f"a{k}"
    return out


def add(root, sid, created, body=(), cwd=CWD, fname=None, hdr=None):
    h = hdr if hdr is not None else header(id=sid, timestamp=created, cwd=cwd)
    return write_session(os.path.join(root, encode_cwd(cwd)), [h, *body], name=fname or name(created, sid))


def ids(listing):
    return [s.id for s in listing.sessions]


# --- last activity ---------------------------------------------------------------------------------


def test_activity_is_the_newest_user_or_assistant_message_time(tmp_path):
    """modified = max over user/assistant messages with content of message.timestamp (a number),
    else the entry's timestamp; tool results, custom messages and other entries do not count."""
    body = chat(2) + [entry("message", "tr", "a1", ts=t(50), message={"role": "toolResult", "content": []}),
                      entry("custom_message", "cm", "tr", ts=t(55), customType="x", content="c"),
                      entry("model_change", "mc", "cm", ts=t(59), provider="p", modelId="m")]
    info = _info(body, tmp_path)
    assert info.read == "file"  # small: read whole
    assert info.modified_ms() == ms(t(4))
    a = assistant("a9", "mc", "late", ts=t(40))  # no message.timestamp: the entry's time counts
    del a["message"]["timestamp"]
    assert _info(body + [a], tmp_path / "late").modified_ms() == ms(t(40))


def _info(body, tmp, hdr=None, **kw):
    p = write_session(tmp, [hdr or header(id="s", timestamp=t(0), cwd=CWD), *body], name="s.jsonl")
    return read_cli_info(p, **kw)


def test_activity_falls_back_to_header_then_mtime(tmp_path):
    """No message with activity (or only times <= 0): the header time; a header time that is not
    a date: the file's mtime."""
    info = _info([entry("model_change", "m", None, provider="p", modelId="x")], tmp_path)
    assert info.modified_ms() == ms(t(0))
    u = user("u", None, ts=t(5))
    u["message"]["timestamp"] = -5
    assert _info([u], tmp_path).modified_ms() == ms(t(0))
    info = _info([], tmp_path, hdr=header(id="s", timestamp="not a date", cwd=CWD))
    assert info.modified_ms() == round(os.stat(tmp_path / "s.jsonl").st_mtime * 1000)


def test_big_file_is_read_from_its_end(tmp_path):
    """A file much larger than the tail window: the answer comes from the end (read=tail) and is
    the whole file's answer."""
    body = chat(200, pad=300)
    tail = _info(body, tmp_path)
    whole = _info(body, tmp_path, whole=True)
    assert os.path.getsize(tmp_path / "s.jsonl") > 8 * summary.TAIL
    assert (tail.read, whole.read) == ("tail", "file")
    assert tail.modified_ms() == whole.modified_ms() == ms(t(400))


def test_assistant_made_before_it_was_written_reads_back_to_a_bound(tmp_path):
    """An assistant message made (message.timestamp) well before its entry was written: lines are
    read back until one is stamped at or before the newest message time found."""
    body = chat(100, pad=300)
    last = assistant("late", "a99", "done", ts=t(900))
    last["message"]["timestamp"] = ms(t(300))  # streamed for 10 minutes
    info = _info(body + [last], tmp_path)
    assert info.read == "tail"
    assert info.modified_ms() == ms(t(300))


def test_clock_going_backwards_reads_the_whole_file(tmp_path):
    """The newest message is early in the file and the clock went back before the last lines:
    the lines read from the end show the step back, so the whole file is read and its newest
    time wins (reading only the end would have said 10:00:06)."""
    early = chat(60, start=3000, pad=300)  # 10:50 .. 10:52
    late = chat(3, start=1)  # 10:00:01 .. 10:00:06, written after a clock reset
    late[0]["parentId"] = early[-1]["id"]
    info = _info(early + late, tmp_path)
    assert info.read == "file"
    assert info.modified_ms() == ms(t(3000 + 119))


def test_step_back_inside_the_tail_is_seen(tmp_path):
    """A line stamped later than the one after it, inside the lines read: whole-file read."""
    body = chat(100, pad=300)
    body[-2]["timestamp"] = t(9000)  # u99 written "after" a99
    info = _info(body, tmp_path)
    assert info.read == "file"
    assert info.modified_ms() == ms(t(200))


def test_a_step_back_hidden_before_the_end_is_the_documented_limit(tmp_path):
    """A clock reset long before the end does not show in the lines read: the end's answer is
    given (README: what pisess assumes); ``whole`` (ls --long) reads everything and gives pi's."""
    early = chat(60, start=3000, pad=300)
    late = chat(60, start=1, pad=300)
    late[0]["parentId"] = early[-1]["id"]
    assert _info(early + late, tmp_path).modified_ms() == ms(t(120))
    assert _info(early + late, tmp_path, whole=True).modified_ms() == ms(t(3119))


def test_message_newer_than_its_entry_reads_the_whole_file(tmp_path):
    """A message whose own time is after its entry's (no writer of pi does that) among the lines
    read: the bound the end relies on does not hold, so the whole file is read."""
    body = chat(100, pad=300)
    body[4]["message"]["timestamp"] = ms(t(5000))  # an early user message "from the future"
    body[-1]["message"]["timestamp"] = ms(t(4000))
    body[-1]["timestamp"] = t(3000)
    info = _info(body, tmp_path)
    assert info.read == "file"
    assert info.modified_ms() == ms(t(5000))


def test_tail_keeps_reading_while_no_message_is_found(tmp_path):
    """The last lines are not messages (labels, a big custom entry): the window grows."""
    body = chat(30, pad=200) + [entry("custom", f"c{k}", "a29", ts=t(3000 + k), customType="x",
                                      data="z" * 2000) for k in range(40)]
    info = _info(body, tmp_path)
    assert info.read == "tail"
    assert info.modified_ms() == ms(t(60))


def test_lines_pi_throws_on_leave_the_file_out(tmp_path):
    """pi's listing fails on a message entry without a message, content that is neither text nor
    blocks, a null block or a session name that is not a string; the file is skipped."""
    for bad in (entry("message", "m", None),
                entry("message", "m", None, message={"role": "user", "content": None}),
                entry("message", "m", None, message={"role": "assistant", "content": [None]}),
                entry("session_info", "n", None, name=5)):
        got = _info([*chat(1), bad], tmp_path)
        assert isinstance(got, summary.CliSkip) and got.code == "invalid_entry", bad
    fine = _info([*chat(1), entry("message", "m", None, message="text"),
                  entry("message", "m2", None, message={"role": "toolResult", "content": None}),
                  entry("session_info", "n", None, name=None)], tmp_path)
    assert isinstance(fine, summary.CliInfo)


def test_whole_read_gives_pi_s_other_fields(tmp_path):
    """name (last session_info, trimmed), messageCount (every message entry), firstMessage."""
    body = [*chat(2), entry("session_info", "n1", "a1", name="  first "),
            entry("message", "tr", "n1", message={"role": "toolResult", "content": []}),
            entry("session_info", "n2", "tr", name=" Fix it ")]
    info = _info(body, tmp_path, whole=True)
    assert (info.name, info.message_count, info.first_message) == ("Fix it", 5, "question ")


# --- listing ------------------------------------------------------------------------------------------


def test_v1_v2_and_odd_headers_are_listed_as_pi_lists_them(tmp_path):
    """pi's command lists any first parsed value with type "session": v1/v2 files, blank or
    malformed lines before it, a missing cwd (listed as ""); 0.82.1's SDK listing skips them."""
    root = str(tmp_path)
    d = os.path.join(root, encode_cwd(CWD))
    add(root, "v3", t(1), chat(1))
    write_session(d, [{"type": "session", "id": "v1", "timestamp": t(2), "cwd": CWD}, *chat(1, start=10)],
                  name="v1.jsonl")
    write_session(d, [header(id="v2", version=2, timestamp=t(3)), *chat(1, start=20)], name="v2.jsonl")
    write_session(d, ["", "{garbage", "null", header(id="late", timestamp=t(4))], name="late.jsonl")
    write_session(d, [{"type": "session", "version": 3, "id": "nocwd", "timestamp": t(5)}], name="nocwd.jsonl")
    write_session(d, [{"type": "model_change", "id": "x"}, header(id="no")], name="notfirst.jsonl")
    write_bytes(d, b"", name="empty.jsonl")
    cli = list_sessions(root, CWD, pi_version=V16)
    assert ids(cli) == ["v2", "v1", "nocwd", "late", "v3"]
    assert {s.id: s.cwd for s in cli.sessions}["nocwd"] == ""
    assert sorted(os.path.basename(k.path) for k in cli.skipped) == ["empty.jsonl", "notfirst.jsonl"]
    sdk = list_sessions(root, CWD, pi_version="0.82.1")
    assert ids(sdk) == ["v3"]
    row = cli.sessions[0].to_json()
    assert row["modified"] == t(21) and row["created"] == t(3) and row["activityRead"] == "file"


def test_order_ties_follow_descending_names(tmp_path):
    """Same last activity (a fork and its source): descending name order, i.e. the newer file
    name first for pi's names; 0.82.1's command listing keeps ascending names."""
    root = str(tmp_path)
    body = chat(2)
    src = add(root, "01aaaaaa-0000-7000-8000-000000000001", t(0), body)
    fork = add(root, "01aaaaab-0000-7000-8000-000000000002", t(30), body,
               hdr=header(id="01aaaaab-0000-7000-8000-000000000002", timestamp=t(30), cwd=CWD, parentSession=src))
    newer = add(root, "01aaaaac-0000-7000-8000-000000000003", t(40), chat(1, start=100))
    got = [s.path for s in list_sessions(root, CWD, pi_version=V16).sessions]
    assert got == [newer, fork, src]
    got = [s.path for s in list_sessions(root, CWD, pi_version="0.82.1", sort="activity").sessions]
    assert got == [newer, src, fork]


def test_sort_created_keeps_the_first_line_order(tmp_path):
    """--sort created: newest header first (the SDK's order), over the pi command's sessions."""
    root = str(tmp_path)
    add(root, "old-busy", t(0), chat(3, start=500))
    add(root, "new-idle", t(100))
    d = os.path.join(root, encode_cwd(CWD))
    write_session(d, [header(id="v2", version=2, timestamp=t(50))], name="v2.jsonl")
    assert ids(list_sessions(root, CWD, pi_version=V16)) == ["old-busy", "new-idle", "v2"]
    assert ids(list_sessions(root, CWD, pi_version=V16, sort="created")) == ["new-idle", "v2", "old-busy"]
    assert ids(list_sessions(root, CWD, pi_version="0.82.1")) == ["new-idle", "old-busy"]
    with pytest.raises(PisessError):
        list_sessions(root, CWD, pi_version=V16, sort="name")


def test_list_all_ties_follow_mtime_then_name(tmp_path):
    """listAll (C.21): files by mtime, newest first, then by name descending, then stably by
    last activity; symlinked project folders count."""
    root = tmp_path / "sessions"
    body = chat(1)
    a = add(str(root), "a", t(0), body, cwd=CWD, fname="a.jsonl")
    b = add(str(root), "b", t(0), body, cwd=OTHER, fname="b.jsonl")
    c = add(str(root), "c", t(0), body, cwd=OTHER, fname="c.jsonl")
    os.utime(a, ns=(0, 3_000_000_000))
    os.utime(b, ns=(0, 1_000_000_000))
    os.utime(c, ns=(0, 1_000_000_000))
    elsewhere = tmp_path / "elsewhere"
    d = add(str(elsewhere), "d", t(0), body, cwd="/linked", fname="d.jsonl")
    os.utime(d, ns=(0, 2_000_000_000))
    os.symlink(os.path.dirname(d), root / "--linked--")
    got = [s.id for s in list_sessions(str(root), None, pi_version=V16).sessions]
    assert got == ["a", "d", "c", "b"]
    got = [s.id for s in list_sessions(str(root), None, pi_version="0.82.1", sort="activity").sessions]
    assert got == ["b", "c", "a"]  # 0.82.1: real directories only, in name order, then file names


def test_collation_approximates_icu_root():
    """ICU root order: "_" < "-" < "." < digits < letters, case ignored until nothing else
    differs (then lower case first); pi's own names sort as their bytes do."""
    order = ["a_b", "a-b", "a.b", "a0", "a9", "aa", "aA", "Ab", "ab_", "b"]
    assert sorted(reversed(order), key=collation_key) == order
    assert sorted(["B", "a", "C"], key=collation_key) == ["a", "B", "C"]
    pi = [name(t(k), f"019{k}aa-0000-7000-8000-00000000000{k}") for k in range(5)]
    assert sorted(pi, key=collation_key) == sorted(pi)


def test_custom_ids_tie_in_icu_order(tmp_path):
    """Ties between custom-named files follow the collation, not byte order."""
    root = str(tmp_path)
    body = chat(1)
    for fn in ("B.jsonl", "a.jsonl", "a_x.jsonl", "a-x.jsonl"):
        add(root, fn[:-6], t(0), body, fname=fn)
    got = [os.path.basename(s.path) for s in list_sessions(root, CWD, pi_version=V16).sessions]
    assert got == ["B.jsonl", "a.jsonl", "a-x.jsonl", "a_x.jsonl"]  # bytes would give a_x, a.jsonl, a-x, B


# --- SDK v4 files ----------------------------------------------------------------------------------------

V4_HEADERS = [{"kind": "header", "version": 4, "id": "h4", "createdAt": 1, "cwd": CWD},
              {"v": 4, "kind": "header", "id": "h5", "storageVersion": 1, "createdAt": 1, "cwd": CWD}]


@pytest.mark.parametrize("first", V4_HEADERS)
def test_sdk_v4_files_are_named_in_the_listing(tmp_path, first):
    root = str(tmp_path)
    add(root, "ok", t(0))
    write_session(os.path.join(root, encode_cwd(CWD)), [first, {"kind": "entry", "seq": 1}], name="v4.jsonl")
    for version in (V16, "0.82.1"):
        listing = list_sessions(root, CWD, pi_version=version)
        assert ids(listing) == ["ok"]
        (k,) = listing.skipped
        assert SDK_V4 in k.reason and k.code == "invalid_session"


# --- lookup and --continue -------------------------------------------------------------------------------


@pytest.fixture
def dup(tmp_path):
    """Two files of one project holding the same id: the older by name was modified last."""
    root = str(tmp_path)
    first = add(root, "dup", t(0), chat(1, start=900), fname="2026-a.jsonl")
    second = add(root, "dup", t(5), chat(1, start=10), fname="2026-b.jsonl")
    add(root, "dup", t(0), cwd=OTHER)
    other = add(root, "only-other", t(0), cwd=OTHER)
    return root, first, second, other


def test_an_id_two_files_hold_names_neither(dup):
    """1.6 (C.23) opens the first file by name holding the id; two files of one id (pi #11060) are
    an ambiguous id for pisess (issue 34), the error naming both, the first first, with either
    pi's rules."""
    root, first, second, _ = dup
    for version in (V16, "0.82.1"):
        with pytest.raises(PisessError) as e:
            resolve_session("dup", root, CWD, pi_version=version)
        assert e.value.code == "ambiguous" and "held by 2 files" in e.value.message
        assert {first, second} <= set(e.value.message.split())
    with pytest.raises(PisessError) as e:
        find_by_id(os.path.join(root, encode_cwd(CWD)), "dup")
    assert e.value.message.index(first) < e.value.message.index(second)
    assert find_by_id(os.path.join(root, encode_cwd(CWD)), "nope") is None


def test_lookup_reads_headers_of_v1_files_and_falls_back_to_all_projects(dup, tmp_path):
    root, _, _, other = dup
    d = os.path.join(root, encode_cwd(CWD))
    v1 = write_session(d, [{"type": "session", "id": "legacy-1", "timestamp": t(1), "cwd": CWD}], name="v1.jsonl")
    assert resolve_session("legacy-1", root, CWD, pi_version=V16) == v1
    assert resolve_session("legacy", root, CWD, pi_version=V16) == v1
    assert resolve_session("only-other", root, CWD, pi_version=V16) == other
    assert resolve_session("only-o", root, CWD, pi_version=V16) == other
    with pytest.raises(PisessError) as info:
        resolve_session("du", root, CWD, pi_version=V16)
    assert info.value.code == "ambiguous" and "pi would open the first" in info.value.message


def test_discovery_header_rules(tmp_path):
    """Blank, malformed and falsy lines before the header are skipped; a first value that is not a
    header, a non-string id, or no header within 1 MiB gives none."""
    p = write_bytes(tmp_path, b'\n{bad\nnull\n{"type":"session","id":"x"}\n', name="a.jsonl")
    assert discovery_header(p)["id"] == "x"
    assert discovery_header(write_bytes(tmp_path, b'{"type":"session","id":5}\n', name="b.jsonl")) is None
    assert discovery_header(write_bytes(tmp_path, b'{"type":"x"}\n{"type":"session","id":"y"}\n',
                                        name="c.jsonl")) is None
    big = b"\n" * (1 << 20) + b'{"type":"session","id":"z"}\n'
    assert discovery_header(write_bytes(tmp_path, big, name="d.jsonl")) is None
    assert discovery_header(write_bytes(tmp_path, b'{"type":"session","id":"e"}', name="e.jsonl"))["id"] == "e"


def test_continue_is_the_newest_mtime_with_a_header(tmp_path):
    """No argument, pi 1.6 (C.24): the newest file mtime whose header pi accepts."""
    root = str(tmp_path)
    d = os.path.join(root, encode_cwd(CWD))
    old = add(root, "newest-header", t(500))
    touched = add(root, "old-header", t(0))
    junk = write_bytes(d, b"not json\n", name="junk.jsonl")
    os.utime(old, ns=(0, 1_000_000_000))
    os.utime(touched, ns=(0, 2_000_000_000))
    os.utime(junk, ns=(0, 3_000_000_000))
    assert resolve_session(None, root, CWD, pi_version=V16) == touched
    assert resolve_session(None, root, CWD, pi_version="0.82.1") == old
    os.symlink(os.path.join(d, "gone"), os.path.join(d, "dangling.jsonl"))
    with pytest.raises(PisessError) as info:
        most_recent_session(d)
    assert info.value.code == "storage" and "dangling.jsonl" in info.value.message
    with pytest.raises(PisessError) as info:
        resolve_session(None, root, "/empty", pi_version=V16)
    assert info.value.code == "not_found"


# --- ls command -----------------------------------------------------------------------------------------


def test_ls_json_in_both_versions(tmp_path):
    from pisess.cli.app import app

    root = str(tmp_path)
    add(root, "busy", t(0), chat(2, start=300))
    add(root, "idle", t(100))
    d = os.path.join(root, encode_cwd(CWD))
    write_session(d, [V4_HEADERS[0]], name="v4.jsonl")
    runner = new_runner()
    r = runner.invoke(app, ["ls", "--sessions-dir", root, "--cwd", CWD, "--json"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["piVersion"] == versions.CURRENT  # the default
    r = runner.invoke(app, ["ls", "--sessions-dir", root, "--cwd", CWD, "--json", "--pi-version", V16])
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["piVersion"] == V16
    assert [s["id"] for s in doc["sessions"]] == ["busy", "idle"]
    assert doc["sessions"][0]["modified"] == t(303)
    assert SDK_V4 in r.stderr
    r = runner.invoke(app, ["ls", "--sessions-dir", root, "--cwd", CWD, "--json", "--sort", "created"])
    assert [s["id"] for s in json.loads(r.stdout)["sessions"]] == ["idle", "busy"]
    r = runner.invoke(app, ["ls", "--sessions-dir", root, "--cwd", CWD, "--json", "--pi-version", "0.82.1"])
    doc = json.loads(r.stdout)
    assert [s["id"] for s in doc["sessions"]] == ["idle", "busy"] and "modified" not in doc["sessions"][0]


@pytest.mark.parametrize("first", V4_HEADERS)
def test_commands_name_an_sdk_v4_file(tmp_path, first):
    """Pointed at a v4 file, every reader's error names it; validate gives one finding for it,
    harness_v4 ("harness v4 session (unsupported)"), not a finding per record."""
    from pisess.core.analyses.validate import validate_file
    from pisess.core.reading.session import open_session

    p = write_session(tmp_path, [first, {"kind": "entry", "seq": 1, "entry": {"type": "message"}}], name="v4.jsonl")
    for reader in ("auto", "cli", "harness"):
        for light in (True, False):
            with pytest.raises(PisessError) as info:
                open_session(p, reader, light=light)
            assert SDK_V4 in info.value.located() and info.value.code == "invalid_session"
    report = validate_file(p)
    assert [(f.code, f.line) for f in report.findings] == [("harness_v4", 1)]
    assert report.findings[0].message.startswith("harness v4 session (unsupported)")


def test_fast_name_orders_are_the_exact_ones():
    """The shortcuts a listing of thousands of names takes give the orders they stand for: the
    code-unit order (UTF-16) is the code-point order unless a name holds a character beyond
    U+FFFF; pi's own names, checked all at once, sort as their bytes do."""
    from pisess.core.listing.repo import _name_order, _utf16, _utf16_key

    for names in (["b", "a", "\uffff", "\ue000x"], ["\U0001f600", "\uffff", "a"], ["\udcff", "\U00010000"], []):
        assert sorted(names, key=_utf16_key(names)) == sorted(names, key=_utf16)
    pi = [name(t(k), f"019{k}aa-0000-7000-8000-00000000000{k}") for k in range(5)]
    assert _name_order(pi) is None and _name_order([]) is None
    assert _name_order([*pi, "x.jsonl"]) is collation_key
    assert _name_order([pi[0][:-6] + "/" + pi[1]]) is collation_key  # ("/" joins the names checked)


def test_listing_built_from_the_cache_is_the_same():
    """A listing's sessions rebuilt from the cache's rows (``_received_cli_infos``) carry every
    field of ``SessionInfo`` (the fast path that fills them must name them all, in order)."""
    import dataclasses

    from pisess.core.listing.repo import _SENT_FIELDS, SessionInfo, _received_cli_infos

    assert tuple(f.name for f in dataclasses.fields(SessionInfo)) == _SENT_FIELDS
    for details in (None, {"name": "n", "messageCount": 1}):
        row = ("id1", "2026-05-01T10:00:00.000Z", CWD, "/p/parent.jsonl", 10, True, 1.0, 2.0, "tail", 3.0, False,
               details)
        got = _received_cli_infos([("/p/a.jsonl", False, True)], [row])[0]
        want = SessionInfo("id1", "2026-05-01T10:00:00.000Z", CWD, "/p/a.jsonl", "/p/parent.jsonl", None, False, 10,
                           "cli", True, 1.0, 2.0, "tail", 3.0, False, details)
        assert got == want and vars(got) == vars(want)  # (every field set: none left to the class's default)


def test_iso_utc_is_date_to_iso_string():
    """``new Date(ms).toISOString()`` for times before 1970, at day and year ends, and fractions."""
    import time

    from pisess.core.js import iso_utc

    for v in (0, -1, -1.5, 999, 86_399_999, 86_400_000, -86_400_000 * 400 + 5, 1_845_000_012_345.678,
              253_402_300_799_999, 951_782_400_000):
        secs, rem = divmod(int(v), 1000)
        assert iso_utc(v) == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{rem:03d}Z", v
