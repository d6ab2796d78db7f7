"""Sessions full of inline images (issue 23): the views draw an image as one line and never hold
its bytes, ``context --json`` copies them from the file byte for byte, and the memory of the core
reads grows with a session's text, not with its images."""

from __future__ import annotations

import base64
import json
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import cli_runner, entry, examples, header, invoke, write_session
from pisess.core.js import UNDEF
from pisess.core.reading import images
from pisess.core.reading.jsonl import NOT_JSON, cuts_of, dumps, loads_lean, parse_json

IMAGE_CHARS = 400 * 1024  # base64 characters of each screenshot: 300 KB decoded


def b64(rng: random.Random, chars: int = IMAGE_CHARS) -> str:
    return base64.b64encode(rng.randbytes(chars * 3 // 4)).decode()


def screenshots(turns: int, seed: int = 23, chars: int = IMAGE_CHARS) -> list:
    """A v3 session of ``turns`` screenshot turns (prompt, tool call, a result with one PNG, answer)."""
    rng = random.Random(seed)
    lines: list = [header()]
    parent = None
    n = 0

    def add(msg: dict) -> None:
        nonlocal parent, n
        n += 1
        eid = f"e{n:07d}"
        lines.append(entry("message", eid, parent, message=msg))
        parent = eid

    for t in range(turns):
        add({"role": "user", "content": [{"type": "text", "text": f"look at step {t}"}], "timestamp": 1})
        add({"role": "assistant", "content": [{"type": "toolCall", "id": f"c{t}", "name": "screenshot",
                                                "arguments": {}}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "claude-x", "stopReason": "toolUse",
             "timestamp": 2})
        add({"role": "toolResult", "toolCallId": f"c{t}", "toolName": "screenshot", "isError": False, "timestamp": 3,
             "content": [{"type": "text", "text": f"step {t}"},
                         {"type": "image", "data": b64(rng, chars), "mimeType": "image/png"}]})
        add({"role": "assistant", "content": [{"type": "text", "text": f"step {t} looks fine"}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "claude-x", "stopReason": "stop",
             "timestamp": 4})
    return lines


def _expanded(v):
    """``v`` with each placeholder replaced by the base64 it stands for."""
    if isinstance(v, dict):
        return {k: _expanded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_expanded(x) for x in v]
    e = images.elided(v)
    return images.read_data(e) if e is not None else v


def _line_at(path: str, n: int) -> tuple[bytes, int]:
    data = open(path, "rb").read()
    offset = 0
    for _ in range(n):
        offset = data.index(b"\n", offset) + 1
    return data[offset:data.index(b"\n", offset)], offset


# --- the lean parse --------------------------------------------------------------------------------


def test_a_lean_parse_is_the_whole_parse_with_each_image_left_in_the_file(tmp_path):
    rng = random.Random(1)
    data = [b64(rng, 8_000), b64(rng, 12_000)[:-2] + "==", b64(rng, 20_000)[:-1] + "="]
    line = entry("message", "a", None, message={
        "role": "user", "timestamp": 1,
        "content": [{"type": "image", "data": data[0], "mimeType": "image/png"}, {"type": "text", "text": "x"},
                    {"type": "image", "mimeType": "image/jpeg", "data": data[1]}]})
    tail = entry("compaction", "b", "a", summary="s", firstKeptEntryId="a",
                 retainedTail=[{"role": "toolResult", "content": [{"type": "image", "data": data[2],
                                                                    "mimeType": "image/webp"}]}])
    path = write_session(tmp_path, [header(), line, tail])
    for n in (1, 2):
        raw, offset = _line_at(path, n)
        lean = loads_lean(raw, offset, path)
        assert len(dumps(lean)) < 1000  # (fails when the base64 was parsed into the value)
        assert _expanded(lean) == parse_json(raw)
    raw, offset = _line_at(path, 1)
    blocks = loads_lean(raw, offset, path)["message"]["content"]
    assert [images.image_chars(b["data"]) for b in (blocks[0], blocks[2])] == [(8_000, 0), (12_000, 2)]
    assert images.image_chars(data[1]) == (12_000, 2)


@pytest.mark.parametrize("shape", ["spaces", "tabs and CR", "data first", "mimeType first", "slash escaped",
                                   "u escaped", "every kind escaped"])
def test_an_image_written_in_another_shape_is_cut_as_well(tmp_path, shape):
    """Python's separators, keys in another order, base64 with JSON escapes: the lean parse is the
    whole parse, the image's size is its characters (not its bytes), and what copies it out
    (``read_data``, ``expand``) gives the characters as JSON writes them."""
    rng = random.Random(5)
    data = b64(rng, 20_000)[:-1] + "="
    block = {"type": "image", "data": data, "mimeType": "image/png"}
    if shape == "data first":
        block = {"data": data, "type": "image", "mimeType": "image/png"}
    elif shape == "mimeType first":
        block = {"mimeType": "image/png", "data": data, "type": "image"}
    line = entry("message", "a", None, message={"role": "user", "content": [block], "timestamp": 1})
    raw = json.dumps(line, ensure_ascii=False).encode()  # ", " and ": "
    if shape == "tabs and CR":
        raw = raw.replace(b'"data": ', b'"data"\t:\r ').replace(b', "data"', b',\t"data"')
    elif shape == "slash escaped":
        raw = raw.replace(b"/", b"\\/")
    elif shape == "u escaped":
        head = data[:2000].encode()
        raw = raw.replace(head, head.replace(b"A", b"\\u0041").replace(b"+", b"\\u002B"))
    elif shape == "every kind escaped":
        esc = data.encode().replace(b"/", b"\\/").replace(b"A", b"\\u0041")
        raw = raw.replace(data.encode(), esc)
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw + b"\r\n")
    got = loads_lean(raw, 0, str(path))
    e = images.elided(got["message"]["content"][0]["data"])
    assert e is not None, shape
    assert _expanded(got) == parse_json(raw)
    assert images.image_chars(got["message"]["content"][0]["data"]) == (len(data), 1)
    assert images.read_data(e) == data
    assert b"".join(images.expand(dumps(got))) == dumps(parse_json(raw))
    if "escaped" in shape:
        assert e.escaped == e.length - len(data) > 0


def _case_line(case: str, rng: random.Random) -> bytes:
    """A user message line of one image of 20,000 base64 characters, or of a shape that is not
    such a line (see the cases)."""
    data = b64(rng, 20_000)
    content: list = [{"type": "image", "data": data, "mimeType": "image/png"}]
    if case == "text not ascii":
        content.insert(0, {"type": "text", "text": "Bildschirm → Größe"})
    elif case == "two images":
        content += [{"type": "text", "text": "x"},
                    {"type": "image", "mimeType": "image/jpeg", "data": b64(rng, 9_000)[:-1] + "="}]
    elif case == "not an image":
        content = [{"type": "text", "text": "x", "data": data}]
    elif case == "escaped":
        content[0]["data"] = data[:100] + "/" + data[100:]
    elif case == "not ascii":
        content[0]["data"] = data[:100] + "é" + data[100:]
    elif case == "in a string":
        content = [{"type": "text", "text": '{"data":"' + data + '"}'}]
    elif case == "short":
        content[0]["data"] = data[:images.DATA_MIN - 1]
        content.append({"type": "text", "text": "x" * images.LINE_MIN})
    line = entry("message", "a", None, message={"role": "user", "content": content, "timestamp": 1})
    raw = json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()
    if case == "escaped":
        raw = raw.replace(b"/", b"\\/", 1)
        assert b"\\/" in raw
    return raw


@pytest.mark.parametrize("case", ["not an image", "not ascii", "in a string", "short"])
def test_what_is_not_an_image_s_plain_base64_is_parsed_whole(tmp_path, case):
    raw = _case_line(case, random.Random(2))
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw + b"\n")
    got = loads_lean(raw, 0, str(path))
    assert got == parse_json(raw)
    assert images.elided(got["message"]["content"][0].get("data")) is None


def test_the_lean_parse_does_not_look_for_a_control_character_in_the_base64(tmp_path):
    data = b64(random.Random(3), 20_000)
    line = entry("message", "a", None, message={"role": "user", "timestamp": 1,
                                                "content": [{"type": "image", "data": data, "mimeType": "image/png"}]})
    raw = bytearray(json.dumps(line, separators=(",", ":")).encode())
    raw[raw.index(data.encode()) + 500] = 1
    raw = bytes(raw)
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw + b"\n")
    assert parse_json(raw) is NOT_JSON
    # (documented: the listing's lean read draws the image; a read back follows a whole parse)
    assert images.elided(loads_lean(raw, 0, str(path))["message"]["content"][0]["data"]) is not None


def test_context_json_leaves_out_a_line_with_a_control_character_in_an_image_as_pi_does(tmp_path, monkeypatch):
    """The line is read back lean, but the scan that found the entries parsed every line whole and
    left that one out: the output is the whole read's."""
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    path = write_session(tmp_path, screenshots(4, chars=6_000))
    data = open(path, "rb").read()
    at = data.index(b'"type":"image","data":"', data.index(b'"toolCallId":"c2"')) + 600
    open(path, "wb").write(data[:at] + b"\x01" + data[at + 1:])
    monkeypatch.setenv("PISESS_CACHE", "off")
    whole = build_context(open_session(path, "cli", light=True), UNDEF, full_path=False)
    expected = dumps({"version": 2, **whole.to_json()}) + b"\n"
    got = invoke(cli_runner(monkeypatch), "context", "--json", "--reader", "cli", path)
    assert got.exit_code == 0, got.stderr
    assert got.stdout.encode() == expected
    assert expected.count(b'"type":"image"') == 2  # the dropped line cuts the path: turn 3 only (x2: llmMessages)


# --- the commands ----------------------------------------------------------------------------------


def test_context_json_copies_each_image_from_the_file_byte_for_byte(tmp_path, monkeypatch):
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    path = write_session(tmp_path, screenshots(6, chars=6_000))
    monkeypatch.setenv("PISESS_CACHE", "off")
    for reader in ("harness", "cli"):
        whole = build_context(open_session(path, reader, light=True), UNDEF, full_path=False)
        expected = dumps({"version": 2, **whole.to_json()}) + b"\n"
        got = invoke(cli_runner(monkeypatch), "context", "--json", "--reader", reader, path)
        assert got.exit_code == 0, got.stderr
        assert got.stdout.encode() == expected
        assert expected.count(b'"type":"image"') == 12  # messages and llmMessages


def test_context_json_into_a_file_and_a_pipe_is_the_whole_document(tmp_path):
    """Through a real descriptor each image is copied by the kernel (``Span.send``): into a file and
    into a pipe, the bytes a write of the whole values gives."""
    import os
    import subprocess
    import sys

    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    path = write_session(tmp_path, screenshots(5, chars=70_000))
    expected = dumps({"version": 2, **build_context(open_session(path, "cli", light=True), UNDEF,
                                                    full_path=False).to_json()}) + b"\n"
    env = {**os.environ, "PISESS_CACHE": "off"}
    argv = [sys.executable, "-m", "pisess", "context", "--json", "--reader", "cli", path]
    with open(tmp_path / "out.json", "wb") as out:
        assert subprocess.run(argv, stdout=out, env=env).returncode == 0
    assert (tmp_path / "out.json").read_bytes() == expected
    piped = subprocess.run(argv, stdout=subprocess.PIPE, env=env)
    assert piped.returncode == 0 and piped.stdout == expected


def test_a_span_is_copied_where_the_kernel_cannot_and_a_shorter_file_is_an_error(tmp_path, monkeypatch):
    import errno
    import os

    from pisess.core.errors import PisessError

    src = tmp_path / "src"
    src.write_bytes(b"x" * 10 + b"A" * 300_000 + b"y")
    with open(src, "rb") as fh:
        span = images.Span(fh, str(src), 10, 300_000)
        with open(tmp_path / "a", "wb") as out:
            span.send(out.fileno())
        assert (tmp_path / "a").read_bytes() == b"A" * 300_000

        def refuse(*_a):
            raise OSError(errno.EINVAL, "no sendfile here")

        monkeypatch.setattr(os, "sendfile", refuse)
        with open(tmp_path / "b", "wb") as out:
            span.send(out.fileno())
        assert (tmp_path / "b").read_bytes() == b"A" * 300_000
        monkeypatch.undo()
        with open(tmp_path / "c", "wb") as out, pytest.raises(PisessError, match="shorter than before"):
            images.Span(fh, str(src), 10, 400_000).send(out.fileno())


def test_views_name_each_image_without_its_bytes(tmp_path, monkeypatch):
    lines = screenshots(3)
    path = write_session(tmp_path, lines)
    piece = lines[3]["message"]["content"][1]["data"][1000:1040]  # 40 characters of the first image
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    for argv in (["context"], ["context", "--full"], ["export", "--format", "md"], ["export", "--format", "html", "--no-script"],
                 ["path"]):
        out = invoke(runner, *argv, path)
        assert out.exit_code == 0, (argv, out.stderr)
        assert piece not in out.stdout, argv
        if argv[0] != "path":
            shown = out.stdout.replace("\\[", "[").replace("\\]", "]")  # (Markdown escapes the brackets)
            assert shown.count("[image image/png, 300 KB]") == 3, argv
    embedded = invoke(runner, "export", "--format", "html", "--no-script", "--images", "inline", path).stdout
    assert piece in embedded  # --images embeds them: read from the file then


# --- memory ----------------------------------------------------------------------------------------


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def screenshot_files(tmp_path_factory) -> dict[int, str]:
    """Sessions of 8 and 32 screenshot turns, written once for the module (the reads only read)."""
    return {turns: write_session(tmp_path_factory.mktemp(f"shots{turns}"), screenshots(turns)) for turns in (8, 32)}


@pytest.mark.parametrize("what", ["context", "export", "ls --long", "listing"])
def test_memory_grows_with_the_text_not_with_the_images(screenshot_files, monkeypatch, what):
    """Peak Python memory of the core read on 8 and on 32 screenshots of 400 KB (3.3 and 13 MB of
    base64), the reads' blocks scaled down from 8 MiB to 1 MiB as the files are: far below the
    file, and the 24 more images add less than two images' size (a block's cut varies)."""
    from pisess.core.listing import summary
    from pisess.core.reading import jsonl, wholescan

    monkeypatch.setattr(jsonl, "CHUNK", 1 << 20)
    monkeypatch.setattr(summary, "_BLOCK", 1 << 20)
    monkeypatch.setattr(wholescan, "BLOCK", 1 << 20)
    from pisess.core.analyses.export import ExportOptions, export_session
    from pisess.core.listing.summary import read_cli_info, summarize_file
    from pisess.core.model.context import build_context
    from pisess.core.reading.session import open_session

    def run(path: str):
        if what == "context":
            build_context(open_session(path, "cli", light=True, images="lean"), UNDEF, full_path=False)
        elif what == "export":
            export_session(path, "md", options=ExportOptions(max_lines=12), new_id="x", now_iso="2026")
        elif what == "ls --long":
            summarize_file(path)
        else:
            read_cli_info(path, whole=True)

    peaks = []
    for turns in (8, 32):
        path = screenshot_files[turns]
        run(path)  # (imports and first-use caches outside the measure)
        peaks.append(_peak(lambda p=path: run(p)))
    # context and export hold no block of the file; the two listings read 1 MiB blocks here
    assert peaks[1] < (4 if what in ("context", "export") else 16) * IMAGE_CHARS, peaks  # the file: 32
    assert peaks[1] - peaks[0] < 2 * IMAGE_CHARS, peaks  # 24 more images (9.8 MB) add less than two


# --- where the images lie, kept by the index -------------------------------------------------------


def _image_offsets(path: str) -> list[int]:
    data = open(path, "rb").read()
    out, offset = [], 0
    for raw in data.split(b"\n")[:-1]:
        if b'"type":"image"' in raw or b'"type": "image"' in raw:
            out.append(offset)
        offset += len(raw) + 1
    return out


@pytest.mark.parametrize("case", ["image", "text not ascii", "two images", "not an image", "escaped", "not ascii",
                                  "in a string", "short"])
def test_a_line_read_around_its_images_is_the_line_cut(tmp_path, case):
    """``cuts_of`` finds what ``cut`` cuts and ``loads_lean`` keeps; ``lean_line`` reads the line
    without those bytes and gives what ``cut`` gives of the whole line."""
    raw = _case_line(case, random.Random(4))
    path = tmp_path / "s.jsonl"
    prefix = json.dumps(header()).encode() + b"\n"
    path.write_bytes(prefix + raw + b"\n")
    offset = len(prefix)
    where = cuts_of(raw)
    lean, cuts = images.cut(raw, offset, str(path))
    assert len(where) == 3 * cuts * (loads_lean(raw, offset, str(path)) != parse_json(raw))
    assert bool(where) == (case in ("image", "text not ascii", "two images", "escaped"))
    if where:
        with open(path, "rb") as fh:
            assert images.lean_line(fh, offset, len(raw), where, str(path)) == lean


def test_the_index_keeps_where_each_image_lies_through_halves_the_cache_and_appends(tmp_path, monkeypatch):
    from pisess.core import parallel
    from pisess.core.reading import cache, compact

    path = write_session(tmp_path, screenshots(6, chars=20_000))
    whole = compact.scan_compact(path, workers=1)
    assert whole is not None
    assert sorted(whole.cuts) == _image_offsets(path)
    for offset, where in whole.cuts.items():
        raw = open(path, "rb").read()[offset:].split(b"\n", 1)[0]
        assert where == cuts_of(raw)
    monkeypatch.setattr(compact, "SPLIT_MIN", 1 << 10)
    monkeypatch.setattr(parallel, "cpus", lambda: 2)
    halves = compact.scan_compact(path, workers=2)
    assert halves is not None and halves.cuts == whole.cuts
    previous = cache.configure(cache.Settings(directory=str(tmp_path / "cache"), smallest=0))
    try:
        assert cache.scan(path).cuts == whole.cuts  # cold, then stored
        assert cache.scan(path).cuts == whole.cuts  # from the entry
        with open(path, "ab") as fh:
            fh.write(b"".join(json.dumps(x).encode() + b"\n" for x in screenshots(2, seed=9, chars=20_000)[1:]))
        # (the appended entries' ids repeat, which the index does not mind: only offsets matter here)
        assert sorted(cache.scan(path).cuts) == _image_offsets(path)
    finally:
        cache.configure(previous)


def test_a_lean_read_back_of_an_indexed_session_never_reads_the_images(tmp_path, monkeypatch):
    """Entries read back are the whole parse with placeholders, and the bytes read are those of the
    text: each image line is read around its base64."""
    import builtins

    from pisess.core.reading import jsonl
    from pisess.core.reading.session import open_session

    path = write_session(tmp_path, screenshots(5, chars=40_000))
    s = open_session(path, "cli", light=True, images="lean")
    read = [0]

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def read(self, n=-1):
            b = self.fh.read(n)
            read[0] += len(b)
            return b

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(jsonl, "open", lambda *a, **k: Counting(builtins.open(*a, **k)), raising=False)
    got = [_expanded(e) for e in s.iter_complete()]
    assert got == [parse_json(json.dumps(x).encode()) for x in screenshots(5, chars=40_000)[1:]]
    assert 0 < read[0] < 5 * 2_000  # 5 images of 40,000 characters were never read


@pytest.mark.parametrize("case", ["image", "two images", "control character", "not base64", "custom message",
                                  "beside the message"])
def test_the_index_parses_a_line_without_its_images_only_where_that_is_parsing_the_line(case):
    """``lean_of``: the short line is given for the scan to parse only where the base64 holds
    nothing but base64 (a control character makes pi drop the line: the whole line is parsed and
    refused) and every image lies in a message entry's ``message`` (the index keeps none of it)."""
    from pisess.core.reading.jsonl import lean_of

    rng = random.Random(5)
    data = b64(rng, 20_000)
    content: list = [{"type": "image", "data": data, "mimeType": "image/png"}]
    kind, extra = "message", {}
    if case == "two images":
        content += [{"type": "image", "data": b64(rng, 8_000), "mimeType": "image/png"}]
    elif case == "not base64":
        content[0]["data"] = data[:100] + "!" + data[101:]
    elif case == "custom message":
        kind = "custom_message"
    elif case == "beside the message":
        extra = {"label": {"type": "image", "data": b64(rng, 8_000), "mimeType": "image/png"}}
    if kind == "message":
        line = entry("message", "a", None, message={"role": "user", "content": content, "timestamp": 1}, **extra)
    else:
        line = entry("custom_message", "a", None, customType="x", content=content, display=True)
    raw = json.dumps(line, separators=(",", ":")).encode()
    if case == "control character":
        at = raw.index(data.encode()) + 200
        raw = raw[:at] + b"\x01" + raw[at + 1:]
        assert b"\x01" in raw and parse_json(raw) is NOT_JSON
    where, lean = lean_of(raw)
    assert where == cuts_of(raw) and where
    if case in ("image", "two images"):
        assert lean is not None and len(lean) < 1000
        short, whole = parse_json(lean), parse_json(raw)
        got = [images.image_chars(b["data"]) for b in short["message"]["content"]]
        assert got == [images.image_chars(b["data"]) for b in whole["message"]["content"]]
        for b in short["message"]["content"]:
            b["data"] = None
        for b in whole["message"]["content"]:
            b["data"] = None
        assert short == whole
    else:
        assert lean is None


_FLAWS = ["", "é", "\x01", "!", "\\/", "\\u0041", " "]  # put into an image's base64 (the JSON's bytes)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.integers(4_100, 9_000), st.sampled_from(_FLAWS), st.integers(0, 4_000)), min_size=1,
                max_size=3),
       st.booleans(), st.sampled_from(["message", "custom_message", "beside"]), st.booleans(), st.integers(0, 2**16))
def test_lean_of_is_the_lean_read_of_the_line_as_cut_cuts_it(images_of, odd, kind, text_not_ascii, seed):
    """``lean_of`` cuts the line without ``cut``'s ASCII test first: its answer is the one got from
    the line as ``cut`` cuts it, for images in pi's shape and the odd one (spaces around colons),
    whatever flaw an image's base64 has (not ASCII, a control character, a character base64 has
    not, an escape), wherever the images lie."""
    from pisess.core.reading.jsonl import _lean_of, lean_of

    rng = random.Random(seed)
    content: list = [{"type": "text", "text": "Größe" if text_not_ascii else "size"}]
    flaws = []
    for chars, flaw, at in images_of:
        data = b64(rng, chars)
        mark = f"<flaw{len(flaws)}>"
        flaws.append((mark, flaw))
        content.append({"type": "image", "data": data[:at] + mark + data[at:], "mimeType": "image/png"})
    extra = {}
    if kind == "beside":
        extra = {"label": content.pop()}
    if kind == "custom_message":
        line = entry("custom_message", "a", None, customType="x", content=content, display=True)
    else:
        line = entry("message", "a", None, message={"role": "user", "content": content, "timestamp": 1}, **extra)
    raw = json.dumps(line, separators=(", ", ": ") if odd else (",", ":"), ensure_ascii=False).encode()
    for mark, flaw in flaws:
        raw = raw.replace(mark.encode(), flaw.encode())
    lean, cuts = images.cut(raw, 0, "")
    assert lean_of(raw) == (_lean_of(raw, lean, cuts) if cuts else ((), None))
