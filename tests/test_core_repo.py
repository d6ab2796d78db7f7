"""Session directory layout, listing and resolution (spec §1, §8)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples, header, write_bytes, write_session
from pisess.core.errors import PisessError
from pisess.core.js import parse_date
from pisess.core.listing.paths import absolute_cwd, encode_cwd, sessions_root
from pisess.core.listing.repo import list_sessions, resolve_session

# These tests pin the SDK listing and lookup (JsonlSessionRepo, spec §8): pi 0.82.1's rules.
SDK = "0.82.1"
CWD = "/work/proj"
OTHER = "/work/other"


@pytest.mark.parametrize(
    "cwd, encoded",
    [
        ("/Users/badlogic/workspaces/pi-mono", "--Users-badlogic-workspaces-pi-mono--"),
        ("/", "----"),
        ("/home/u/my.proj/", "--home-u-my.proj---"),
        ("/home/u/with space", "--home-u-with space--"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("c:/Users/me/proj", "--c--Users-me-proj--"),
        ("c:\\Users\\me\\proj", "--c--Users-me-proj--"),
        ("C:\\", "--C----"),
        ("\\\\server\\share\\proj", "---server-share-proj--"),
        ("/mnt/c/Users/x", "--mnt-c-Users-x--"),
        ("/a-b/c", "--a-b-c--"),
        ("/a/b-c", "--a-b-c--"),
        ("/Ünï/Code", "--Ünï-Code--"),
    ],
)
def test_encode_cwd_table(cwd, encoded):
    """encode_cwd reproduces every row of the spec §1.2 table (lossy, nothing else escaped)."""
    assert encode_cwd(cwd) == encoded


def test_encode_cwd_cli_resolves_trailing_slash_first():
    """The cli resolves the cwd before encoding: a trailing slash disappears."""
    assert encode_cwd(absolute_cwd("/home/u/my.proj/", "/")) == "--home-u-my.proj--"
    assert absolute_cwd("proj", "/work") == "/work/proj"


def test_sessions_root_precedence():
    """explicit dir > $PI_CODING_AGENT_DIR/sessions (with ~ and file://) > ~/.pi/agent/sessions."""
    assert sessions_root("/x/sessions", {"PI_CODING_AGENT_DIR": "/agent"}, "/home/u") == "/x/sessions"
    assert sessions_root(None, {"PI_CODING_AGENT_DIR": "/agent"}, "/home/u") == "/agent/sessions"
    assert sessions_root(None, {"PI_CODING_AGENT_DIR": "~/ag"}, "/home/u") == "/home/u/ag/sessions"
    assert sessions_root(None, {"PI_CODING_AGENT_DIR": "file:///opt/a%20b"}, "/home/u") == "/opt/a b/sessions"
    assert sessions_root(None, {"PI_CODING_AGENT_DIR": ""}, "/home/u") == "/home/u/.pi/agent/sessions"
    assert sessions_root(None, {}, "/home/u") == "/home/u/.pi/agent/sessions"


# --- listing ------------------------------------------------------------------------------------------


def project(root, cwd=CWD):
    return root / encode_cwd(cwd)


def add(root, sid, ts, cwd=CWD, body=(), name=None, **hdr):
    return write_session(project(root, cwd), [header(id=sid, timestamp=ts, cwd=cwd, **hdr), *body],
                         name=name or f"{ts.replace(':', '-').replace('.', '-')}_{sid}.jsonl")


def test_list_newest_first(tmp_path):
    """Sessions are sorted by header timestamp, newest first (not by file name)."""
    add(tmp_path, "old", "2026-01-01T00:00:00.000Z", name="z.jsonl")
    add(tmp_path, "new", "2026-03-01T00:00:00.000Z", name="a.jsonl")
    add(tmp_path, "mid", "2026-02-01T00:00:00.000Z", name="m.jsonl")
    listing = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert [s.id for s in listing.sessions] == ["new", "mid", "old"]
    assert listing.skipped == []
    assert listing.sessions[0].to_json() == {"id": "new", "createdAt": "2026-03-01T00:00:00.000Z", "cwd": CWD,
                                             "path": os.path.join(str(project(tmp_path)), "a.jsonl")}


def test_list_reads_first_line_only(tmp_path):
    """A file whose body is corrupt (even cut off) is still listed: only line 1 is read."""
    p = add(tmp_path, "s1", "2026-01-01T00:00:00.000Z", body=["{garbage", "null", '{"type":"mess'])
    listing = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert [s.path for s in listing.sessions] == [p]


def test_list_skips_and_reports_invalid_headers(tmp_path):
    """Files with an invalid first line are skipped and reported with invalid_session and pi's reason."""
    good = add(tmp_path, "good", "2026-01-01T00:00:00.000Z")
    d = project(tmp_path)
    write_session(d, [header(version=2)], name="v2.jsonl")
    write_session(d, ["", header()], name="blank-first.jsonl")
    write_session(d, [header(cwd="")], name="nocwd.jsonl")
    write_bytes(d, b"", name="empty.jsonl")
    write_bytes(d, b"\xef\xbb\xbf" + b'{"type":"session","version":3,"id":"b","timestamp":"t","cwd":"/"}\n',
                name="bom.jsonl")
    listing = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert [s.path for s in listing.sessions] == [good]
    reasons = {os.path.basename(s.path): (s.code, s.reason) for s in listing.skipped}
    assert reasons == {
        "v2.jsonl": ("invalid_session", "unsupported session version"),
        "blank-first.jsonl": ("invalid_session", "missing session header"),
        "nocwd.jsonl": ("invalid_session", "session header is missing cwd"),
        "empty.jsonl": ("invalid_session", "missing session header"),
        "bom.jsonl": ("invalid_session", "first line is not a valid session header"),
    }


def test_list_first_line_ends_at_crlf_or_lone_cr(tmp_path):
    """The first line ends at \\n, \\r\\n or a lone \\r, as Node's readline does."""
    d = project(tmp_path)
    hdr = b'{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/proj"}'
    write_bytes(d, hdr % b"crlf" + b"\r\n{x}\r\n", name="a.jsonl")
    write_bytes(d, hdr % b"cr" + b"\r{x}", name="b.jsonl")
    assert sorted(s.id for s in list_sessions(str(tmp_path), CWD, pi_version=SDK).sessions) == ["cr", "crlf"]


def test_list_keeps_sessions_with_unparseable_dates(tmp_path):
    """A header timestamp that is not a date is still a valid header: the session is listed."""
    add(tmp_path, "good", "2026-01-01T00:00:00.000Z", name="a.jsonl")
    add(tmp_path, "odd", "yesterday", name="b.jsonl")
    assert sorted(s.id for s in list_sessions(str(tmp_path), CWD, pi_version=SDK).sessions) == ["good", "odd"]


def test_list_only_jsonl_files(tmp_path):
    """Only names ending in .jsonl count; directories named *.jsonl are skipped; symlinked files count."""
    good = add(tmp_path, "s1", "2026-01-01T00:00:00.000Z")
    d = project(tmp_path)
    write_session(d, [header(id="txt")], name="notes.txt")
    write_session(d, [header(id="bak")], name="x.jsonl.bak")
    os.mkdir(d / "dir.jsonl")
    real = write_session(tmp_path / "elsewhere", [header(id="linked", timestamp="2026-02-01T00:00:00.000Z")],
                         name="real.jsonl")
    os.symlink(real, d / "link.jsonl")
    listing = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert [s.id for s in listing.sessions] == ["linked", "s1"]
    assert listing.sessions[1].path == good


def test_list_all_projects_skips_symlinked_dirs(tmp_path):
    """Listing all projects visits real directories only: a symlinked project directory is skipped."""
    root = tmp_path / "sessions"
    add(root, "here", "2026-01-01T00:00:00.000Z", cwd=CWD)
    add(root, "there", "2026-02-01T00:00:00.000Z", cwd=OTHER)
    outside = tmp_path / "outside"
    write_session(outside, [header(id="via-link", timestamp="2026-03-01T00:00:00.000Z")], name="s.jsonl")
    os.symlink(str(outside), str(root / "--linked--"))
    write_session(root, [header(id="loose")], name="loose.jsonl")  # files directly in the root are ignored
    listing = list_sessions(str(root), None, pi_version=SDK)
    assert [s.id for s in listing.sessions] == ["there", "here"]
    assert [os.path.basename(d) for d in listing.directories] == sorted([encode_cwd(CWD), encode_cwd(OTHER)])


def test_list_cwd_has_no_header_filter(tmp_path):
    """With a cwd only its encoded directory is read, and headers with another cwd in it are kept."""
    add(tmp_path, "mine", "2026-01-01T00:00:00.000Z", cwd=CWD)
    write_session(project(tmp_path), [header(id="foreign", cwd="/somewhere/else")], name="f.jsonl")
    add(tmp_path, "other", "2026-01-01T00:00:00.000Z", cwd=OTHER)
    assert sorted(s.id for s in list_sessions(str(tmp_path), CWD, pi_version=SDK).sessions) == ["foreign", "mine"]


def test_list_missing_root_or_project_is_empty(tmp_path):
    """A missing sessions root or project directory lists nothing (and creates nothing)."""
    assert list_sessions(str(tmp_path / "nope"), None, pi_version=SDK).sessions == []
    assert list_sessions(str(tmp_path), "/no/such/project", pi_version=SDK).sessions == []
    assert not (tmp_path / encode_cwd("/no/such/project")).exists()


def test_list_keeps_metadata_and_parent(tmp_path):
    """Listed metadata carries parentSessionPath and metadata when the header has them."""
    add(tmp_path, "s", "2026-01-01T00:00:00.000Z", parentSession="/p.jsonl", metadata={"k": 1})
    [info] = list_sessions(str(tmp_path), CWD, pi_version=SDK).sessions
    assert info.to_json()["parentSessionPath"] == "/p.jsonl" and info.to_json()["metadata"] == {"k": 1}


# --- resolve ------------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "sessions"
    paths = {
        "abc111": add(root, "abc111", "2026-01-01T00:00:00.000Z"),
        "abc222": add(root, "abc222", "2026-03-01T00:00:00.000Z"),
        "abd333": add(root, "abd333", "2026-02-01T00:00:00.000Z"),
        "zzz999": add(root, "zzz999", "2026-04-01T00:00:00.000Z", cwd=OTHER),
        "abc": add(root, "abc", "2025-01-01T00:00:00.000Z", cwd=OTHER),
    }
    return str(root), paths


def test_resolve_path(repo, tmp_path):
    """An argument with a slash (or .jsonl) is a path: returned as is if it exists, else not_found."""
    root, paths = repo
    assert resolve_session(paths["abd333"], root, CWD, pi_version=SDK) == paths["abd333"]
    with pytest.raises(PisessError) as info:
        resolve_session(str(tmp_path / "missing.jsonl"), root, CWD, pi_version=SDK)
    assert info.value.code == "not_found"


def test_resolve_full_id(repo):
    """A full id resolves to its file, also in another project."""
    root, paths = repo
    assert resolve_session("abc222", root, CWD, pi_version=SDK) == paths["abc222"]
    assert resolve_session("zzz999", root, CWD, pi_version=SDK) == paths["zzz999"]


def test_resolve_unique_prefix(repo):
    """A unique id prefix resolves."""
    root, paths = repo
    assert resolve_session("abd", root, CWD, pi_version=SDK) == paths["abd333"]
    assert resolve_session("zz", root, CWD, pi_version=SDK) == paths["zzz999"]


def test_resolve_ambiguous_prefix(repo):
    """A prefix matching several sessions of the project raises code ambiguous naming them."""
    root, _ = repo
    with pytest.raises(PisessError) as info:
        resolve_session("ab", root, CWD, pi_version=SDK)
    assert info.value.code == "ambiguous"
    assert all(i in info.value.message for i in ("abc111", "abc222", "abd333"))


def test_resolve_exact_id_beats_prefix(repo):
    """An exact id wins over other ids it is a prefix of (checked project first, then everywhere)."""
    root, paths = repo
    assert resolve_session("abc", root, OTHER, pi_version=SDK) == paths["abc"]


def test_resolve_none_is_newest_of_project(repo):
    """No argument resolves to the newest session of the current project."""
    root, paths = repo
    assert resolve_session(None, root, CWD, pi_version=SDK) == paths["abc222"]
    assert resolve_session("", root, OTHER, pi_version=SDK) == paths["zzz999"]


def test_resolve_nothing_found(repo):
    """No match, or no session in the project, is not_found."""
    root, _ = repo
    for arg, cwd in (("qqq", CWD), (None, "/empty/project")):
        with pytest.raises(PisessError) as info:
            resolve_session(arg, root, cwd, pi_version=SDK)
        assert info.value.code == "not_found"


STAMPS = ["2025-03-03T09:00:00.000Z", "2025-03-03T09:00:00.001Z", "2024-12-31T23:59:59.999Z",
          "2025-02-30T00:00:00.000Z",  # V8 reads it as March 2; as a string it sorts before March
          "2025-03-01T12:00:00.000Z", "2025-03-03T09:00:00.000Z", "1999-01-01T00:00:00.000Z"]


@given(st.lists(st.sampled_from(STAMPS), min_size=1, max_size=8))
@settings(max_examples=examples(80))
def test_list_order_is_the_date_order_whatever_the_stamps(tmp_path_factory, stamps):
    """String order is used only when it equals Date.parse order; ties keep file-name order."""
    root = str(tmp_path_factory.mktemp("root"))
    for i, ts in enumerate(stamps):
        write_session(os.path.join(root, encode_cwd(CWD)), [header(id=f"s{i}", timestamp=ts)], name=f"{i:02d}.jsonl")
    got = [s.id for s in list_sessions(root, CWD, pi_version=SDK).sessions]
    times = [parse_date(ts) for ts in stamps]
    expected = [f"s{i}" for i in sorted(range(len(stamps)), key=lambda i: times[i], reverse=True)]
    assert got == expected


def _mixed_project(tmp_path):
    """Good headers, bad ones, a FIFO, a symlinked file and a symlinked directory, all ``*.jsonl``."""
    d = project(tmp_path)
    for i in range(14):
        add(tmp_path, f"s{i:02d}", f"2026-01-{1 + i:02d}T00:00:00.000Z", name=f"{i:02d}.jsonl",
            body=[user_line(i)] * i)
    write_session(d, [header(version=2)], name="03-v2.jsonl")
    write_bytes(d, b"", name="07-empty.jsonl")
    os.mkfifo(d / "09-fifo.jsonl")
    real = write_session(tmp_path / "elsewhere", [header(id="linked", timestamp="2026-02-01T00:00:00.000Z")],
                         name="real.jsonl")
    os.symlink(real, d / "05-link.jsonl")
    return d


def user_line(i):
    return {"type": "message", "id": f"m{i}", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "x" * i}}


def _shared(monkeypatch, processes):
    from pisess.core import parallel
    from pisess.core.listing import repo

    monkeypatch.setattr(repo, "SHARE_MIN", 2)
    monkeypatch.setattr(parallel, "cpus", lambda: processes)
    monkeypatch.delenv("PISESS_JOBS", raising=False)


@pytest.mark.parametrize("processes", [2, 3, 5])
def test_list_shared_among_processes_is_the_one_process_listing(tmp_path, monkeypatch, processes):
    """Headers read by forked children come back whole: the same sessions (sizes included), the
    same skipped files with the same reasons, in the same order."""
    _mixed_project(tmp_path)
    monkeypatch.setenv("PISESS_JOBS", "1")
    one = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    _shared(monkeypatch, processes)
    from pisess.core import parallel
    from pisess.core.listing import repo

    assert parallel.workers(limit=8) == processes
    read_here = []  # counted in this process only: the children's reads do not come back here
    real = repo._read_headers
    monkeypatch.setattr(repo, "_read_headers", lambda files: read_here.append(len(files)) or real(files))
    shared = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert read_here == [18 * 9 // (10 * processes)]  # the parent's share, nothing read twice
    assert shared.sessions == one.sessions and len(one.sessions) == 15
    assert [s.size for s in one.sessions] == [os.path.getsize(s.path) for s in one.sessions]
    assert [(s.path, s.code, s.reason) for s in shared.skipped] == [(s.path, s.code, s.reason) for s in one.skipped]
    assert {os.path.basename(s.path): s.code for s in one.skipped} == {
        "03-v2.jsonl": "invalid_session", "07-empty.jsonl": "invalid_session", "09-fifo.jsonl": "storage"}


def test_list_shared_lists_what_cannot_be_read(tmp_path, monkeypatch):
    """A file that cannot be read does not fail the listing: it is skipped and listed as
    unreadable, its reason sent back whole by the child that read it."""
    _mixed_project(tmp_path)
    _shared(monkeypatch, 3)
    got = list_sessions(str(tmp_path), CWD, pi_version="0.82.1")
    assert len(got.sessions) == 15
    [e] = got.unreadable
    assert e.code == "storage" and e.unreadable and e.path.endswith("09-fifo.jsonl")
    assert "not a regular file" in e.message and e.reason.startswith("cannot read: not a regular file")


def test_list_shared_child_that_fails_is_read_by_the_parent(tmp_path, monkeypatch):
    import pickle

    _mixed_project(tmp_path)
    monkeypatch.setenv("PISESS_JOBS", "1")
    one = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    _shared(monkeypatch, 2)

    def broken(*a, **k):
        raise RuntimeError("the child dies before it sends anything")

    monkeypatch.setattr(pickle, "dumps", broken)  # only forked children pickle
    shared = list_sessions(str(tmp_path), CWD, pi_version=SDK)
    assert shared.sessions == one.sessions and len(shared.skipped) == len(one.skipped)
