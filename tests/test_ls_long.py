"""``ls --long`` reads each file once (issue 23): pi's listing fields and ls's own details come from
one pass (``reading.wholescan.WholeScan``), which gives the line scan's lines without copying or
parsing an image's base64."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

from conftest import SHARDS, entry, header, write_session
from pisess.core.errors import PisessError
from pisess.core.listing import summary
from pisess.core.reading import images, wholescan
from pisess.core.reading.jsonl import line_start_after, scan_file
from test_images import b64, screenshots

HERE = Path(__file__).parent


def _line(content: list, eid: str = "a") -> bytes:
    v = entry("message", eid, None, message={"role": "user", "content": content, "timestamp": 1})
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def _lines_to_cut() -> list[bytes]:
    """Lines ``images.cut`` cuts, and lines it leaves whole (each for its own reason)."""
    rng = random.Random(5)
    data = [b64(rng, 20_000), b64(rng, 8_000)[:-2] + "==", b64(rng, 6_000)[:-1] + "="]
    img = [{"type": "image", "data": d, "mimeType": "image/png"} for d in data]
    out = [
        _line([{"type": "text", "text": "x"}, *img]),  # three images, each padding
        _line([img[0], {"type": "text", "text": "x" * 20_000}]),
        _line([{"type": "text", "text": "x", "data": data[0]}]),  # not an image: cut, then parsed whole
        _line([{"type": "image", "data": data[0][:100] + "é" + data[0][100:], "mimeType": "image/png"}]),  # not ASCII
        _line([{"type": "text", "text": '{"data":"' + data[0] + '"}'}]),  # inside a string: escaped quotes
        _line([{"type": "image", "data": data[0][:images.DATA_MIN - 1]}, {"type": "text", "text": "y" * 20_000}]),
        _line([{"type": "text", "text": "short"}]),  # shorter than LINE_MIN
    ]
    escaped = _line([img[0]]).replace(b"/", b"\\/", 1)
    assert b"\\/" in escaped
    out.append(escaped)
    out.append(b'"data":"' + data[0].encode() + b'"')  # the key at the line's start
    return out


def test_the_buffer_s_cut_is_images_cut():
    """``cut_range`` on a line inside a bigger buffer gives what ``images.cut`` gives on the line alone
    (the same placeholders: the same file offsets and numbers)."""
    for k, raw in enumerate(_lines_to_cut()):
        before, after = b"x\n" * (k + 3), b"\n{}\n"
        for buf in (before + raw + after, bytearray(before + raw + after)):
            for ascii_buf in {False, buf.isascii()}:  # (a buffer known to be ASCII: no string is tested)
                got = images.cut_range(buf, len(before), len(before) + len(raw), 1000 + k, "/f.jsonl", ascii_buf)
                assert got == images.cut(raw, 1000 + k, "/f.jsonl"), k
    assert images.cut(_lines_to_cut()[0], 0, "/f.jsonl")[1] == 3  # (the cases cut what they mean to)


def _files(d: Path) -> list[str]:
    """Files of every shape a line scan meets: images, blank and odd lines, ``\\r`` (alone, in a
    header, in an image), no final newline, lines longer than the scan's buffer."""
    rng = random.Random(6)
    shots = screenshots(3, chars=20_000)
    text = [json.dumps(v, separators=(",", ":")).encode() for v in shots]
    image_line = text[3]
    out = [
        write_session(d, shots, "shots.jsonl"),
        write_session(d, shots, "no-newline.jsonl", trailing_newline=False),
        write_session(d, [*text[:3], b"", b"   ", b"\t", b"not json", b"null", b"0", b"[]", b"{}", *text[3:]],
                      "odd.jsonl"),
        write_session(d, [b"   " + image_line, *text], "indented-image.jsonl"),
        write_session(d, [*text[:3], image_line.replace(b'"data":"', b'"data":"\r', 1), *text[4:]], "cr-image.jsonl"),
        write_session(d, [*text[:5], text[5] + b"\r", *text[6:]], "cr-late.jsonl"),
        write_session(d, [t + b"\r" for t in text], "crlf.jsonl", trailing_newline=False),
        write_session(d, [*(t + b"\r" for t in text[:4]), text[4][:-1] + b"\r}\r", *text[5:]], "crlf-then-cr.jsonl"),
        write_session(d, [b"\r".join(text)], "cr-only.jsonl"),
        write_session(d, [text[0] + b"\r" + text[1], *text[2:]], "cr-header.jsonl"),
        write_session(d, [b"", b"garbage", *text], "late-header.jsonl"),
        write_session(d, [image_line.replace(b"screenshot", b"\xff\xfe", 1), *text], "invalid-utf8.jsonl"),
        write_session(d, [text[0], b"x" * 70_000, b64(rng, 30_000).encode(), *text[1:]], "long-not-json.jsonl"),
        write_session(d, [], "empty.jsonl"),
        write_session(d, [b""], "newline.jsonl"),
        write_session(d, [text[0]], "header-only.jsonl", trailing_newline=False),
    ]
    legacy = dict(header(), version=1)
    legacy.pop("id", None)
    out.append(write_session(d, [legacy, *shots[1:]], "legacy.jsonl"))
    return out


@pytest.mark.parametrize("block", [1 << 12, 50_000, wholescan.BLOCK])
def test_the_whole_scan_gives_the_line_scan_s_lines(tmp_path, monkeypatch, block):
    """Line for line what ``scan_file(path, light=False, images="lean")`` gives, whatever the
    buffer's size against the lines (4 KB: every image line longer than the buffer); and the
    first line that holds a ``\\r``."""
    monkeypatch.setattr(wholescan, "BLOCK", block)
    for path in _files(tmp_path):
        want = scan_file(path, light=False, images="lean")
        fd = os.open(path, os.O_RDONLY)
        try:
            for first in (b"", open(path, "rb").read(summary.HEAD)):
                scan = wholescan.WholeScan(path, fd, os.fstat(fd).st_size, first)
                got = scan.raw_file(list(scan))
                assert got == want, path
                cr = [ln.offset for ln in want.lines if b"\r" in want.read_at(ln.offset, ln.length)[:-1]]  # (not a CRLF's)
                assert scan.first_cr == (cr[0] if cr else None), path
        finally:
            os.close(fd)


@pytest.mark.parametrize("child", ["works", "fails", "none"])
def test_a_file_read_in_two_parts_gives_the_same_lines(tmp_path, monkeypatch, child):
    """``read_lines`` with the second half read by a forked child (or, where the child fails or the
    file is text, here after the first): the line scan's lines, numbers and ending, and the first
    ``\\r``."""
    from pisess.core import parallel

    monkeypatch.setattr(wholescan, "SPLIT_MIN", 0)
    monkeypatch.setattr(wholescan, "BLOCK", 50_000)
    monkeypatch.setattr(wholescan, "_mostly_images", lambda elided, read: child != "none")
    children = []
    monkeypatch.setattr(parallel, "Child", lambda *a, real=parallel.Child: children.append(real(*a)) or children[-1])
    previous = parallel.configure(parallel.Settings(jobs=2))
    if child == "fails":
        parent, real = os.getpid(), wholescan._sent_part
        monkeypatch.setattr(wholescan, "_sent_part", lambda *a: real(*a) if os.getpid() == parent else os._exit(3))
    try:
        for path in _files(tmp_path):
            want = scan_file(path, light=False, images="lean")
            fd = os.open(path, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                split = line_start_after(fd, size // 2, size)
                got, first_cr = wholescan.read_lines(path, fd, size, os.pread(fd, summary.HEAD, 0))
            finally:
                os.close(fd)
            assert got == want, path
            cr = [ln.offset for ln in want.lines if b"\r" in want.read_at(ln.offset, ln.length)[:-1]]  # (not a CRLF's)
            assert first_cr == (cr[0] if cr else None), path
            if path.endswith("shots.jsonl"):
                assert split is not None and split in [ln.offset for ln in want.lines]  # (read in two parts)
                assert bool(children) == (child != "none")
    finally:
        parallel.configure(previous)


def test_only_a_file_of_images_is_read_in_two_processes(tmp_path):
    """The first bytes decide: a session of screenshots sends its second half to a child, a session
    of text reads it here (its values would cost as much to send back as to parse)."""
    for turns, chars, images_first in ((12, 400 * 1024, True), (12, 100, False)):
        path = write_session(tmp_path, screenshots(turns, chars=chars), f"{chars}.jsonl")
        fd = os.open(path, os.O_RDONLY)
        try:
            scan = wholescan.WholeScan(path, fd, os.path.getsize(path))
            lines = list(scan)
        finally:
            os.close(fd)
        read = lines[-1].offset + lines[-1].length
        assert wholescan._mostly_images(scan.elided, read) is images_first


def _reference(path: str, monkeypatch) -> tuple:
    """What ``ls --long`` read before its one pass: pi's listing fields line by line as pi's listing
    splits them, and the details from the line scan."""
    with monkeypatch.context() as m:
        m.setattr(summary, "SCAN_MIN", 1 << 62)
        listed = summary.read_cli_info(path, whole=True)
    try:
        raw = scan_file(path, light=False, images="lean")
    except PisessError as err:
        return listed, {"error": {"code": err.code, "message": err.message}}
    return listed, summary.summarize(raw)


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> list[str]:
    """The hostile corpus's files, generated once for the module's shards (0.4 CPU-s and 20 MB of
    writes each; every reader here only reads them)."""
    return _hostile_files(tmp_path_factory.mktemp("hostile"))


def _hostile_files(tmp: Path) -> list[str]:
    spec = importlib.util.spec_from_file_location("gen_hostile", HERE / "hostile" / "gen_hostile.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_hostile", gen)
    spec.loader.exec_module(gen)
    root = str(tmp / "hostile")
    gen.generate(root, False)
    found = []
    for dirpath, _, names in os.walk(root):
        found += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".jsonl")]
    return found


#: The hostile corpus (over 300 files, 20 MB, in SHARDS runs) is the slow run's: the shapes above
#: hold every kind of line the scan meets.
@pytest.mark.parametrize("corpus", ["shapes", *(pytest.param(f"hostile-{k}", marks=pytest.mark.slow) for k in range(SHARDS))])
def test_one_pass_gives_what_the_two_passes_gave(request, tmp_path, monkeypatch, corpus):
    """On every shape above and every file of the hostile corpus: ``read_cli_info(details=True)``
    gives pi's listing fields as pi's listing reads the lines (``\\r`` ends one there) and the
    details the line scan gives; so does the listing's whole read without details (the one big
    files take)."""
    if corpus == "shapes":
        (tmp_path / "shapes").mkdir()
        paths = _files(tmp_path / "shapes")
    else:
        paths = request.getfixturevalue("hostile_files")  # (only the hostile shards make it)
        assert len(paths) > 300
        paths = paths[int(corpus.removeprefix("hostile-"))::SHARDS]
    for path in paths:
        listed, details = _reference(path, monkeypatch)
        got = summary.read_cli_info(path, whole=True, details=True)
        if isinstance(listed, summary.CliSkip):
            assert got == listed, path
            continue
        assert dataclasses.replace(got, details=None) == listed, path
        assert got.details == details, path
        with monkeypatch.context() as m:
            m.setattr(summary, "SCAN_MIN", 0)
            assert summary.read_cli_info(path, whole=True) == listed, path
        assert summary.summarize_file(path) == details, path


def test_ls_long_reads_each_file_once_and_never_parses_an_image(tmp_path, monkeypatch):
    """The listing read with its details carries them (``details_of`` reads no file again), and
    parses the text of the file only: each image's base64 stays in the buffer (a count of the bytes
    given to the JSON parser, a tracemalloc peak of one image's size, bounded)."""
    from pisess.core.listing.paths import encode_cwd
    from pisess.core.listing.repo import list_sessions

    root = tmp_path / "sessions"
    project = root / encode_cwd("/p")
    project.mkdir(parents=True)
    path = write_session(project, screenshots(24), "2026-01-01T00-00-00-000Z_a.jsonl")
    size = os.path.getsize(path)
    parsed = []

    def counted(raw, real=wholescan.parse_json):
        parsed.append(len(raw))
        return real(raw)

    monkeypatch.setattr(wholescan, "parse_json", counted)
    monkeypatch.setattr(wholescan, "loads_lean", lambda raw, offset, p: counted(raw))  # (short lines only)
    listing = list_sessions(str(root), None, whole=True, details=True)
    assert sum(parsed) < size // 50, (sum(parsed), size)  # 24 images of 400 KB: 9.8 MB; their text: 60 KB
    [s] = listing.sessions
    assert s.details == summary.summarize(scan_file(path, light=False, images="lean"))
    assert s.details["messageCount"] == 96

    def read_again(p):
        raise AssertionError(f"{p} read a second time")

    monkeypatch.setattr(summary, "summarize_file", read_again)
    assert summary.details_of(listing.sessions) == {path: s.details}

    def peak_of_reading() -> int:
        tracemalloc.start()
        try:
            summary.read_cli_info(path, whole=True, details=True)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak = peak_of_reading()
    # the buffer (the file is smaller than a block: its size) and one image copied to check it is ASCII
    assert peak < size + 3 * 400 * 1024, (peak, size)
    monkeypatch.setattr(wholescan, "BLOCK", 1 << 20)
    peak = peak_of_reading()
    assert peak < 4 * 400 * 1024, peak  # (a 1 MiB block: 2.5 images; the file: 24)
