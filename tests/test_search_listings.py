"""The listing of a project's directory kept in the search index (``search.listings``): what a
warm search takes instead of listing the directory is ``collect``'s listing, exactly, while
files are made, removed, renamed, appended to and turned into directories, and the directory's
permissions change; a listing is taken from the index only while the directory is as it was."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from conftest import encode_line, examples, header
from pisess.core.analyses.search import listings
from pisess.core.analyses.search import stats as ST
from pisess.core.listing import sessionset
from pisess.core.listing.paths import encode_cwd
from test_cache import Using

CWD = "/home/you/p"
NAMES = ["a.jsonl", "b.jsonl", "c.jsonl", "\u00e9.jsonl", "d.txt", "e.jsonl.bak"]

OPS = st.one_of(
    st.tuples(st.just("make"), st.sampled_from(NAMES)),
    st.tuples(st.just("remove"), st.sampled_from(NAMES)),
    st.tuples(st.just("rename"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    st.tuples(st.just("append"), st.sampled_from(NAMES)),  # (in place: the directory's mtime stays)
    st.tuples(st.just("dir"), st.sampled_from(NAMES)),  # (a directory by that name, for the file)
    st.tuples(st.just("chmod"), st.sampled_from([0o300, 0o700])),  # (not listable, then listable again)
    st.tuples(st.just("age"),),  # (the directory's times put an hour back: its listing can be kept)
)


def _apply(d: Path, op: tuple) -> None:
    kind, *args = op
    if kind == "make":
        (d / args[0]).unlink(missing_ok=True) if not (d / args[0]).is_dir() else shutil.rmtree(d / args[0])
        (d / args[0]).write_bytes(encode_line(header()))
    elif kind == "remove":
        p = d / args[0]
        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
    elif kind == "rename":
        src, dst = d / args[0], d / args[1]
        # (a directory replaces nothing but a missing name: over a file it is NotADirectoryError)
        if src.exists() and not dst.is_dir() and not (src.is_dir() and dst.exists()):
            os.replace(src, dst)
    elif kind == "append":
        p = d / args[0]
        if p.is_file():
            with p.open("ab") as fh:
                fh.write(b"{}\n")
    elif kind == "dir":
        p = d / args[0]
        if not p.is_dir():
            p.unlink(missing_ok=True)
            p.mkdir()
    elif kind == "chmod":
        d.chmod(args[0])
    elif kind == "age":
        past = time.time() - 3600
        os.utime(d, (past, past))


def _check(root: Path, calls: list) -> None:
    """``listings.project`` is ``collect``'s listing, and its signature is the set's."""
    want = sessionset.collect(None, str(root), CWD)
    got, listed = listings.project(str(root), CWD)
    before = len(calls)
    assert got == want
    d = os.path.join(str(root), encode_cwd(CWD), "")
    assert listed is None or (listed.sig == ST.set_sig({d: ST.dir_key(d)}, want.files)
                              and [listed.directory + n for n in listed.names] == want.files)
    event("kept" if listed is not None else "listed")
    if listed is not None:  # (kept: the next search of the directory as it is lists nothing)
        again = listings.project(str(root), CWD)
        assert again == (want, listed) and len(calls) == before


@pytest.fixture
def counted(monkeypatch) -> list:
    calls: list = []
    real = listings.collect

    def collect(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(listings, "collect", collect)
    return calls


@settings(max_examples=examples(60), deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=12))
@example(ops=[("dir", "a.jsonl"), ("make", "b.jsonl"), ("rename", "a.jsonl", "b.jsonl")])  # (a directory onto a file)
def test_a_kept_listing_is_the_listing(tmp_path_factory, counted, ops):
    """Any changes to the project's directory, each followed by a search's listing: always
    ``collect``'s (files, label, what could not be read), taken from the index only while the
    directory is as it was when the index kept it."""
    root = tmp_path_factory.mktemp("root")
    d = root / encode_cwd(CWD)
    d.mkdir()
    with Using(root / "cache"):
        try:
            for op in ops:
                _apply(d, op)
                _check(root, counted)
        finally:
            d.chmod(0o700)


def test_a_listing_is_kept_once_the_directory_has_settled(tmp_path, counted):
    """A directory changed just now (the clock tick of the listing) is listed each time; once its
    last change is well past, its listing is kept, and taken until a file is made in it."""
    d = tmp_path / encode_cwd(CWD)
    d.mkdir()
    for n in "ab":
        (d / f"{n}.jsonl").write_bytes(b"{}\n")
    with Using(tmp_path / "cache"):
        assert listings.project(str(tmp_path), CWD)[1] is None  # (changed just now: not kept)
        listings.project(str(tmp_path), CWD)
        assert len(counted) == 2
        past = time.time() - 3600
        os.utime(d, (past, past))
        scope, listed = listings.project(str(tmp_path), CWD)
        assert listed is not None and len(counted) == 3
        assert listings.project(str(tmp_path), CWD) == (scope, listed) and len(counted) == 3
        with (d / "a.jsonl").open("ab") as fh:  # (an append: the listing stands)
            fh.write(b"{}\n")
        assert listings.project(str(tmp_path), CWD) == (scope, listed) and len(counted) == 3
        (d / "c.jsonl").write_bytes(b"{}\n")
        os.utime(d, (past, past))  # (the mtime put back: its change time says it all the same)
        got = listings.project(str(tmp_path), CWD)[0]
        assert len(counted) == 4 and got.files == [*scope.files, os.path.join(str(d), "c.jsonl")]


def test_an_index_made_before_listings_were_kept_gains_their_table_and_keeps_its_rows(tmp_path):
    """An index of this format without the table of listings (made by the pisess before them):
    the table is made when the index is opened, and what the index holds stays."""
    import sqlite3

    from pisess.core.analyses.search import database, update

    d = tmp_path / encode_cwd(CWD)
    d.mkdir()
    (d / "a.jsonl").write_bytes(encode_line(header()))
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    con = database.connect(str(cache_dir))
    assert con is not None
    update.refresh(con, [str(d / "a.jsonl")])
    con.execute("DROP TABLE lists")
    con.close()
    with sqlite3.connect(cache_dir / database.NAME) as raw:
        assert "lists" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    con = database.connect(str(cache_dir))
    assert con is not None
    try:
        assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 1
        assert con.execute("SELECT count(*) FROM lists").fetchone()[0] == 0
    finally:
        con.close()
