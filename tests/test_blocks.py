"""The one reader of a file's bytes (``reading.blocks.line_blocks``) and the readers on top of it:
whatever the block size, the lines are the file's lines split on ``\\n``, each at its offset."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from pisess.core.reading import blocks, jsonl

LINES = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12)


def _file(tmp_path, data: bytes) -> str:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    return str(path)


def _expected(data: bytes, start: int = 0) -> list[tuple[int, bytes]]:
    out, off = [], start
    if start >= len(data):
        return out
    for line in data[start:].split(b"\n")[: None if not data.endswith(b"\n") else -1]:
        out.append((off, line))
        off += len(line) + 1
    return out


def _read(fd: int, **kw) -> list[tuple[int, bytes]]:
    out = []
    for buf, end, base in blocks.line_blocks(fd, **kw):
        chunk = bytes(buf[:end])
        assert chunk.endswith(b"\n") or base + end == os.fstat(fd).st_size or kw.get("stop") == base + end
        pos = 0
        for line in chunk.split(b"\n")[: -1 if chunk.endswith(b"\n") else None]:
            out.append((base + pos, line))
            pos += len(line) + 1
    return out


@settings(max_examples=examples(200), deadline=None)
@given(lines=LINES, final=st.booleans(), block=st.integers(1, 64), split=st.integers(0, 400), first=st.integers(0, 50))
def test_blocks_are_the_files_lines(tmp_path_factory, lines, final, block, split, first):
    data = b"\n".join(lines) + (b"\n" if final and lines else b"")
    path = _file(tmp_path_factory.mktemp("b"), data)
    # a line start to split at, as a second process would
    starts = [0] + [k + 1 for k, c in enumerate(data) if c == 10 and k + 1 < len(data)]
    mid = starts[split % len(starts)]
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _read(fd, block=block) == _expected(data)
        head = _read(fd, stop=mid, block=block, first=data[:first])
        tail = _read(fd, start=mid, block=block)
        assert head + tail == _expected(data)
    finally:
        os.close(fd)


def test_a_line_longer_than_the_block_grows_the_buffer(tmp_path):
    long = b"{" + b"x" * 100_000 + b"}"
    data = b"a\n" + long + b"\nb"
    fd = os.open(_file(tmp_path, data), os.O_RDONLY)
    try:
        got = [(bytes(buf[:end]), base, len(buf)) for buf, end, base in blocks.line_blocks(fd, block=4096)]
        assert [(chunk, base) for chunk, base, _ in got] == [(b"a\n", 0), (long + b"\n", 2), (b"b", 2 + len(long) + 1)]
        assert max(size for _, _, size in got) < 4 * len(long)
    finally:
        os.close(fd)


def test_ticks_count_every_byte(tmp_path):
    data = b"".join(b'{"n":%d}\n' % k for k in range(1000))
    fd = os.open(_file(tmp_path, data), os.O_RDONLY)
    ticks: list[int] = []
    try:
        list(blocks.line_blocks(fd, block=100, tick=ticks.append))
    finally:
        os.close(fd)
    assert sum(ticks) == len(data)


@settings(max_examples=examples(100), deadline=None)
@given(lines=LINES, final=st.booleans(), block=st.integers(1, 64))
def test_iter_lines_on_the_reader(tmp_path_factory, lines, final, block):
    """``jsonl.iter_lines`` (the line scan) gives each line as bytes, the last one unterminated when
    the file does not end in a newline, from any line start."""
    data = b"\n".join(lines) + (b"\n" if final and lines else b"")
    path = _file(tmp_path_factory.mktemp("l"), data)
    got = [(off, raw, t) for _, off, raw, t in _iter_lines(path, block)]
    want = _expected(data)
    assert [(o, r) for o, r, _ in got] == want
    assert all(type(r) is bytes for _, r, _ in got)
    assert [t for _, _, t in got] == [True] * (len(want) - 1) + [data.endswith(b"\n")] * bool(want)
    if len(want) > 1:
        start = want[1][0]
        assert [(o, r) for _, o, r, _ in jsonl.iter_lines(path, start=start)] == _expected(data, start)


def _iter_lines(path: str, block: int):
    number = 0
    for offset, parts, terminated in jsonl.iter_blocks(path, chunk_size=block):
        for raw in parts:
            number += 1
            yield number, offset, raw, terminated
            offset += len(raw) + 1
