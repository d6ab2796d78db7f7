"""``pisess export --format html``: the explorer page as a file (what the browser tests cannot see:
its JSON escaping, its Content-Security-Policy, --no-script, --images, --redact, --open)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assistant, cli_runner, examples, header, invoke, user, write_session
from pisess.core.analyses.page import escape_json

HOSTILE = ["<img src=x onerror=alert(1)>", "</script><script>window.pwned=1</script>", "<svg onload=alert(1)>",
           "[x](javascript:alert(1))", "</style>", "a\u2028b\u2029c", "<!-- x", "</SCRIPT >"]


def _session(tmp_path, texts=HOSTILE):
    lines: list = [header()]
    parent = None
    for i, t in enumerate(texts):
        lines.append(user(f"u{i}", parent, t))
        lines.append(assistant(f"a{i}", f"u{i}", t))
        parent = f"a{i}"
    return write_session(tmp_path, lines)


def _export(monkeypatch, *args):
    out = invoke(cli_runner(monkeypatch, PISESS_CACHE="off"), "export", *args)
    assert out.exit_code == 0, out.stderr
    return out.stdout


DATA = re.compile(r'<script type="application/json" id="pisess-data" data-chunks="([0-9 ]*)">(.*?)</script>', re.S)
CHUNK = re.compile(r'<script type="application/json" id="pisess-m([0-9]+)">(.*?)</script>', re.S)


def _data(page: str) -> dict:
    m = DATA.search(page)
    assert m
    doc = json.loads(m.group(2))
    starts = [int(x) for x in m.group(1).split()]
    chunks = {int(c): body for c, body in CHUNK.findall(page)}
    assert sorted(chunks) == list(range(len(starts)))  # each element of messages once
    doc["msgs"] = []
    for c in range(len(starts)):  # in the table's order, whatever order the page writes them in
        assert len(doc["msgs"]) == starts[c]
        doc["msgs"] += [json.loads(x) for x in chunks[c].split("\n")]
    return doc


def _without_data(page: str) -> str:
    return CHUNK.sub("", DATA.sub("", page))


def test_session_text_cannot_leave_the_data_element(tmp_path, monkeypatch):
    page = _export(monkeypatch, "--format", "html", _session(tmp_path))
    elements = [m.group(2) for m in DATA.finditer(page)] + [body for _, body in CHUNK.findall(page)]
    assert len(elements) >= 2
    for inner in elements:  # nothing can end the element or open a comment in it
        assert "</" not in inner and "<!" not in inner
        assert "\u2028" not in inner and "\u2029" not in inner
    doc = _data(page)
    texts = [m["content"][0]["text"] for m in doc["msgs"] if m.get("role") == "user"]
    assert texts == HOSTILE  # and JSON.parse gives the text back exactly
    assert _without_data(page).count("<script") == 2  # markdown-it, the page's own script


def test_csp_allows_exactly_the_page_own_script_and_style(tmp_path, monkeypatch):
    page = _export(monkeypatch, "--format", "html", _session(tmp_path))
    page = _without_data(page)  # (session text aside)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in csp and "img-src data:" in csp and "unsafe" not in csp
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    for body in scripts + styles:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


def test_escape_json_keeps_the_value():
    raw = json.dumps({"t": "</script><!--\u2028\u2029"}, ensure_ascii=False).encode()
    assert json.loads(escape_json(raw)) == json.loads(raw)
    assert b"</" not in escape_json(raw) and b"<!" not in escape_json(raw)


def _escaped_by_every_pass(data: bytes) -> bytes:
    return data.replace(b"</", b"<\\/").replace(b"<!", b"\\u003c!").replace(
        "\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")


@given(st.lists(st.sampled_from([b"<", b"/", b"!", b"a", b"\xe2", b"\x80", b"\xa8", b"\xa9", b"\xa6", b"<a",
                                 "\u2028".encode(), "\u2026".encode()]), max_size=60),
       st.integers(0, 300))
@settings(max_examples=300, deadline=None)
def test_escape_json_is_every_pass_however_many_bytes_it_looks_at(pieces, repeats):
    """``escape_json`` looks at each ``<`` and ``\xe2`` it finds (``_followed``) before it searches
    for the pairs, and searches past its tries: its answer is the four replacements' either way,
    with a pair first, last, or after hundreds of lone first bytes."""
    from pisess.core.analyses.page import _followed

    data = b"".join(pieces)
    for filler in (b"<a", "\u2026".encode()):
        for text in (data, filler * repeats + data, data + filler * repeats):
            assert escape_json(text) == _escaped_by_every_pass(text)
    assert _followed(b"<a" * 500 + b"</", b"<", (b"/",), tries=3)
    assert not _followed(b"<a" * 500, b"<", (b"/",), tries=3)


def test_no_script_writes_the_static_page_and_noscript_holds_it(tmp_path, monkeypatch):
    path = _session(tmp_path)
    static = _export(monkeypatch, "--format", "html", "--no-script", path)
    assert "<script" not in static and "Exported by pisess" in static
    page = _export(monkeypatch, "--format", "html", path)
    body = static[static.index("<body>") + 6:static.index("</body>")]
    assert body in page[page.index("<noscript>"):page.index("</noscript>")]


def test_every_entry_of_every_branch_is_in_the_page(tmp_path, monkeypatch):
    lines = [header(), user("u1", None, "root"), assistant("a1", "u1", "one"), user("u2", "a1", "left"),
             user("u3", "a1", "right"), assistant("a3", "u3", "right reply")]
    page = _export(monkeypatch, "--format", "html", write_session(tmp_path, lines))
    doc = _data(page)
    assert doc["ids"] == ["u1", "a1", "u2", "u3", "a3"]
    assert doc["meta"]["leaf"] == 4
    assert set(doc["branch"]) == {"2", "3"}  # the two branches below a1: entries, tokens, cost
    assert doc["branch"]["3"][0] == 2


def test_images_are_omitted_by_default_and_written_once_inline(tmp_path, monkeypatch):
    png = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 40).decode()
    img = {"type": "image", "data": png, "mimeType": "image/png"}
    lines = [header(), {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
                        "message": {"role": "user", "content": [{"type": "text", "text": "look"}, img], "timestamp": 1}},
             {"type": "message", "id": "u2", "parentId": "u1", "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": [img], "timestamp": 2}}]
    path = write_session(tmp_path, lines)
    page = _export(monkeypatch, "--format", "html", path)
    assert png[:200] not in page
    blocks = [b for m in _data(page)["msgs"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "image"]
    assert blocks and all(b["bytes"] == len(base64.b64decode(png)) for b in blocks)
    inline = _export(monkeypatch, "--format", "html", "--images", "inline", path)
    assert inline.count(png) == 1


def test_redact_masks_before_writing_and_counts(tmp_path, monkeypatch):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = _session(tmp_path, [f"token {secret}", "plain"])
    page = _export(monkeypatch, "--format", "html", "--redact", path)
    assert secret not in page
    assert sum(_data(page)["meta"]["redacted"].values()) >= 1
    assert secret in _export(monkeypatch, "--format", "html", path)


def test_deep_link_leaf_option_opens_there(tmp_path, monkeypatch):
    lines = [header(), user("u1", None, "root"), assistant("a1", "u1", "one"), user("u2", "a1", "two")]
    page = _export(monkeypatch, "--format", "html", "--leaf", "a1", write_session(tmp_path, lines))
    assert _data(page)["meta"]["leaf"] == 1


def test_open_writes_a_temporary_file_and_opens_it(tmp_path, monkeypatch):
    opened = []
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))  # (its new directory: made there, not left in /tmp)
    (tmp_path / "temp").mkdir()
    out = invoke(cli_runner(monkeypatch, PISESS_CACHE="off"), "export", "--format", "html", "--open", _session(tmp_path))
    assert out.exit_code == 0, out.stderr
    assert len(opened) == 1 and opened[0].startswith("file://") and opened[0].endswith(".html")
    assert opened[0][len("file://"):] in out.stderr.replace("\n", "")
    assert opened[0].startswith((tmp_path / "temp").as_uri() + "/pisess-page-")


@pytest.mark.parametrize("bad", [["--images", "some"], ["--format", "md", "--open"]])
def test_bad_page_options_are_usage_errors(tmp_path, monkeypatch, bad):
    out = invoke(cli_runner(monkeypatch, PISESS_CACHE="off"), "export", *bad, _session(tmp_path))
    assert out.exit_code == 2, out.stderr


def test_what_each_entry_did_sums_to_diff_side_table(tmp_path, monkeypatch):
    """The page sums ``did`` over the entries after the parting point: the same figures ``diff`` gives."""
    import os

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "diff", "sessions", "branchy.jsonl")
    doc = _data(_export(monkeypatch, "--format", "html", fixture))
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    ref = json.loads(invoke(runner, "diff", fixture, "5b3f8f78", "f0d3531f", "--json").stdout)
    ids = doc["ids"]
    parents = [-1 if b is None else p - b for p, b in enumerate(doc["parentBack"])]

    def path(i):
        out = []
        while i >= 0:
            out.append(i)
            i = parents[i]
        return out[::-1]

    a, b = path(ids.index("5b3f8f78")), path(ids.index("f0d3531f"))
    n = next(k for k in range(min(len(a), len(b))) if a[k] != b[k])
    for side, after in (("a", a[n:]), ("b", b[n:])):
        did = [doc["did"][p] for p in after if doc["did"][p]]
        assert sum(d.get("u", 0) for d in did) == ref[side]["userTurnCount"]
        assert sum(d.get("a", 0) for d in did) == ref[side]["assistantMessageCount"]
        assert round(sum(d.get("$", 0) for d in did), 10) == ref[side]["cost"]
        assert [sum(d["t"][k] for d in did if "t" in d) for k in range(4)] == list(ref[side]["tokens"].values())


@pytest.mark.slow
def test_hostile_corpus_pages_are_made_or_refused_cleanly(tmp_path, monkeypatch):
    """Every file of the hostile corpus (not the big ones): the page is written (its data element
    intact, parseable, nothing after it but the two scripts) or refused with a usage/read error."""
    import importlib.util
    import os
    import sys

    spec = importlib.util.spec_from_file_location("gen_hostile", os.path.join(os.path.dirname(__file__), "hostile",
                                                                               "gen_hostile.py"))
    gen = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    monkeypatch.setitem(sys.modules, "gen_hostile", gen)  # (its dataclasses look their module up)
    spec.loader.exec_module(gen)
    manifest = gen.generate(str(tmp_path / "corpus"), big=False)
    runner = cli_runner(monkeypatch, PISESS_CACHE="off")
    made = 0
    for name, case in manifest["cases"].items():
        if not case.is_file or case.big or case.slow:
            continue
        out = tmp_path / f"{name}.html"
        got = invoke(runner, "export", "--format", "html", "-o", str(out), case.path)
        assert got.exit_code in (0, 1, 2), (name, got.exit_code, got.stderr)
        assert "Traceback" not in got.stderr, name
        if got.exit_code:
            continue
        page = out.read_text(encoding="utf-8")
        _data(page)
        assert _without_data(page).count("<script") == 2, name
        made += 1
    assert made > 10


def test_an_infinite_usage_does_not_stop_the_page(tmp_path, monkeypatch):
    """A usage of 1e999 (JSON's infinity): the trace's step counts it as nothing, as browse's does."""
    line = ('{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:01.000Z","message":'
            '{"role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"input":1e999,"output":1},'
            '"stopReason":"stop","timestamp":2}}')
    lines = [header(), user("u1", None, "q")]
    path = write_session(tmp_path, lines)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    doc = _data(_export(monkeypatch, "--format", "html", path))
    assert doc["trace"][1][:2] == ["s", 0]


def _every_session() -> list:
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    examples = sorted((root / "pisess" / "examples" / "sessions").glob("*/*.jsonl"))
    return examples + sorted((root / "tests" / "fixtures").rglob("*.jsonl"))


@pytest.mark.parametrize("session", [p for p in _every_session() if '"compaction"' in p.read_text(encoding="utf-8")],
                         ids=lambda p: p.name)
def test_cut_is_where_the_sdk_readers_path_begins(session, monkeypatch):
    """Under the SDK reader the page's ``cut`` says, per node, where ``pisess path --leaf NODE``
    begins when the reader's stop rule cut it (-1: from a root), the path Compare parts."""
    from pisess.core.model.paths import path_to_checkpoint
    from pisess.core.reading.session import open_session

    out = invoke(cli_runner(monkeypatch, PISESS_CACHE="off"), "export", str(session), "--format", "html", "--reader", "harness")
    assert out.exit_code == 0, out.stderr
    doc = _data(out.stdout)
    s = open_session(str(session), "harness")
    assert doc["cut"] is not None
    checked = 0
    for p, eid in enumerate(doc["ids"]):
        if doc["ids"].count(eid) != 1:
            continue
        try:
            path = path_to_checkpoint(s, eid)
        except Exception:  # noqa: BLE001 - a node no walk reaches (a cycle): the page has no cut for it
            continue
        first = path[0]
        cut = doc["cut"][p]
        if first.get("parentId"):
            assert cut >= 0 and doc["ids"][cut] == first["id"], eid
        else:
            assert cut == -1, eid
        checked += 1
    assert checked


_SPLIT_SESSIONS = [p for p in _every_session() if p.stat().st_size > 2000]


@pytest.mark.parametrize("session", _SPLIT_SESSIONS[:6] + [p for p in _SPLIT_SESSIONS[6:] if any(
    w in p.read_text(encoding="utf-8") for w in ('"context_edit"', '"compaction"', '"label"'))][:8],
    ids=lambda p: p.name)
@pytest.mark.parametrize("redact", [False, True])
def test_the_pass_shared_with_a_forked_child_writes_the_same_page(session, redact, monkeypatch, tmp_path, refused=False):
    """A big session's entries are taken half in a forked child (``_split_point``): the page's data
    is byte for byte what one pass writes (message numbers, classes, codes, every column); the
    child's part crosses the pipe marshalled (``refused``: pickled, where marshal refuses a value)."""
    from pisess.core import parallel
    from pisess.core.analyses import explorer
    from pisess.core.analyses import page as page_mod
    from pisess.core.reading.session import open_session

    def data(split: bool):
        monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0 if split else 1 << 62)
        s = open_session(str(session), "auto", light=True, pi_version="1.6.0", images="lean")
        with open(tmp_path / f"spool-{split}", "w+b") as spool:
            d = page_mod.page_data(s, page_mod.PageOptions(redact=redact), spool=spool)
            return d.rest, b"\n".join(d.table.json_lines()), d.secrets, d.images, d.fallback

    taken = []
    real_take = explorer.Walk.take
    monkeypatch.setattr(explorer.Walk, "take", lambda self, *a: taken.append(1) or real_take(self, *a))
    sent = []
    real_take_part = page_mod._take_child_part
    monkeypatch.setattr(page_mod, "_take_child_part", lambda part, *a: sent.append(type(part)) or real_take_part(part, *a))
    if refused:  # (a value marshal does not take: the part goes pickled)
        def refuse(value, version=None):
            raise ValueError("unmarshallable object")
        monkeypatch.setattr(page_mod.marshal, "dumps", refuse)
    previous = parallel.configure(parallel.Settings(jobs=2))
    try:
        one, shared = data(False), data(True)
    finally:
        parallel.configure(previous)
    assert taken  # (the child's half was taken, not done again here)
    assert sent == [dict if refused else bytes]
    assert shared == one


@pytest.mark.parametrize("session", _SPLIT_SESSIONS[:2], ids=lambda p: p.name)
def test_a_childs_part_that_marshal_refuses_goes_pickled(session, monkeypatch, tmp_path):
    test_the_pass_shared_with_a_forked_child_writes_the_same_page(session, False, monkeypatch, tmp_path, refused=True)


def _gathered_and_own_pass(path: str, parts: int, monkeypatch, tmp_path, reader: str = "auto") -> tuple:
    """The page's data of ``path`` made from the pass taken during the open's parse (``parts``: the
    scan in one part, or two with the second in a forked child) and from its own pass after a
    plain open, and whether the first was used (``Walk.adopt``)."""
    from pisess.core import parallel
    from pisess.core.analyses import explorer
    from pisess.core.analyses import page as page_mod
    from pisess.core.reading import compact
    from pisess.core.reading.session import open_session

    adopted: list = []
    real_adopt = explorer.Walk.adopt
    monkeypatch.setattr(explorer.Walk, "adopt", lambda self, part: adopted.append(1) or real_adopt(self, part))
    monkeypatch.setattr(compact, "SPLIT_MIN", 0 if parts == 2 else 1 << 62)
    monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 1 << 62)  # (the own pass in this process alone)

    def data(gather: bool) -> tuple:
        gathering = page_mod.PageGathering("1.6.0") if gather else None
        try:
            s = open_session(path, reader, light=True, pi_version="1.6.0", images="lean", gather=gathering)
            with open(tmp_path / f"spool-{gather}", "w+b") as spool:
                d = page_mod.page_data(s, page_mod.PageOptions(), spool=spool,
                                       gathered=s.store.gathered() if gather else None)
                return d.rest, b"\n".join(d.table.json_lines()), d.secrets, d.images, d.fallback
        finally:
            if gathering is not None:
                gathering.close()

    previous = parallel.configure(parallel.Settings(jobs=2))
    try:
        own = data(False)
        assert not adopted
        return data(True), own, bool(adopted)
    finally:
        parallel.configure(previous)


@pytest.mark.parametrize("session", _SPLIT_SESSIONS[:6] + [p for p in _SPLIT_SESSIONS[6:] if any(
    w in p.read_text(encoding="utf-8") for w in ('"context_edit"', '"compaction"', '"label"'))][:8],
    ids=lambda p: p.name)
@pytest.mark.parametrize("parts", [1, 2])
def test_the_pass_taken_during_the_opens_parse_writes_the_same_page(session, parts, monkeypatch, tmp_path):
    """``PageGathering``: the page's pass taken as the open parses the file, in one part or with the
    second half in the scan's forked child, gives the page's data byte for byte as the page's own
    pass after the open (message numbers, classes, codes, every column); it is used wherever the
    file is read by the cli reader (the SDK reader's files are left to the own pass)."""
    from pisess.core.reading.session import open_session

    gathered, own, adopted = _gathered_and_own_pass(str(session), parts, monkeypatch, tmp_path)
    assert gathered == own
    assert adopted == (open_session(str(session), "auto", light=True).reader == "cli")


def test_what_the_gathered_pass_leaves_to_the_session_is_added(monkeypatch, tmp_path):
    """What a part read before the session cannot know, added once it is read, as the own pass has
    it: labels (of entries in either half), the originals of messages an edit in the other half
    targets (the edit after them), and previews that name ids where two ids share 8 characters
    (the width is then 9, not the part's guess)."""
    from conftest import entry

    lines: list = [header()]
    parent = None
    for i in range(40):
        eid = f"id{i:06d}a" if i != 30 else "id000001b"  # (id000001a and id000001b: a width of 9)
        lines.append(user(eid, parent, f"question {i} " + "x" * 300) if i % 2 == 0 else
                     assistant(eid, parent, f"answer {i} " + "y" * 300))
        parent = eid
    lines.append(entry("compaction", "cmp00001", parent, summary="so far", firstKeptEntryId="id000001b",
                       tokensBefore=1000))
    lines.append(entry("label", "lbl00001", "cmp00001", targetId="id000002a", label="early"))
    lines.append(entry("label", "lbl00002", "lbl00001", targetId="id000036a", label="late"))
    lines.append(entry("context_edit", "edt00001", "lbl00002", targetId="id000004a",
                       replacement={"role": "user", "content": "edited", "timestamp": 1}))
    lines.append(entry("context_edit", "edt00002", "edt00001", targetId="id000038a", replacement=None))
    lines.append(user("id000099a", "edt00002", "last"))
    path = write_session(tmp_path, lines)
    for parts in (1, 2):
        gathered, own, adopted = _gathered_and_own_pass(path, parts, monkeypatch, tmp_path)
        assert adopted and gathered == own
        doc = json.loads(gathered[0])
        assert doc["meta"]["idWidth"] == 9
        assert sorted(doc["label"].values()) == ["early", "late"]
        assert any("keeps from id000001b" in p for p in doc["preview"])


def test_files_other_tools_rewrote_give_the_same_page_from_the_gathered_pass(monkeypatch, tmp_path):
    """Blank lines, spaced JSON, CRLF endings, a missing final newline: the pass taken during the
    open (in one part and in two) gives the own pass's page; a file the index leaves to the line
    scan (two headers) has nothing gathered, and gives the same page too."""
    import json as json_mod

    entries: list = []
    parent = None
    for i in range(30):
        eid = f"e{i:07d}"
        entries.append(user(eid, parent, f"ask {i}") if i % 2 == 0 else assistant(eid, parent, f"tell {i}"))
        parent = eid
    spaced = [json_mod.dumps(v, indent=None, separators=(", ", ": ")) for v in [header(), *entries]]
    shapes = {
        "blank": "\n\n".join(json_mod.dumps(v) for v in [header(), *entries]) + "\n",
        "spaced": "\n".join(spaced) + "\n",
        "crlf": "\r\n".join(json_mod.dumps(v) for v in [header(), *entries]) + "\r\n",
        "no-newline": "\n".join(json_mod.dumps(v) for v in [header(), *entries]),
        "two-headers": "\n".join(json_mod.dumps(v) for v in [header(), *entries[:10], header(), *entries[10:]]) + "\n",
    }
    for name, text in shapes.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text, encoding="utf-8")
        for parts in (1, 2):
            gathered, own, adopted = _gathered_and_own_pass(str(path), parts, monkeypatch, tmp_path)
            assert gathered == own, (name, parts)
            assert adopted == (name != "two-headers"), (name, parts)


def test_a_line_cut_for_its_images_leaves_the_pass_to_the_page(monkeypatch, tmp_path):
    """A message line long enough for the scan to cut its images out (``lean_of``) makes the part
    give up: the page takes its own pass, and the page is the same."""
    image = base64.b64encode(bytes(range(256)) * 120).decode()  # (30 kB of base64: a long line)
    blocks = [{"type": "text", "text": "this"}, {"type": "image", "data": image, "mimeType": "image/png"}]
    lines: list = [header(), user("u1", None, "look"), user("u2", "u1", blocks), assistant("a1", "u2", "seen")]
    path = write_session(tmp_path, lines)
    for parts in (1, 2):
        gathered, own, adopted = _gathered_and_own_pass(path, parts, monkeypatch, tmp_path)
        assert not adopted and gathered == own


def test_a_file_the_sdk_reader_reads_leaves_the_pass_to_the_page(monkeypatch, tmp_path):
    """The part assumes the cli reader's view (its rules, pi 1.6's): under ``--reader harness``, and
    under ``auto`` for a file holding a record only the SDK writes (a ``leaf`` entry, met by either
    part), the page takes its own pass, and the page is the same."""
    from conftest import entry
    from pisess.core.analyses import page as page_mod

    lines: list = [header(), user("u1", None, "hello"), assistant("a1", "u1", "hi")]
    path = write_session(tmp_path, lines)
    gathered, own, adopted = _gathered_and_own_pass(path, 1, monkeypatch, tmp_path, reader="harness")
    assert not adopted and gathered == own
    given = []  # (the parts' give-ups in this process)
    real = page_mod.PageGather._give_up
    monkeypatch.setattr(page_mod.PageGather, "_give_up", lambda self: given.append(1) or real(self))
    for at in (1, 40):
        lines = [header()]
        parent = None
        for i in range(50):
            lines.append(user(f"u{i}", parent, "q " * 50) if i != at else entry("leaf", f"u{i}", parent, targetId="u0"))
            parent = f"u{i}"
        path = write_session(tmp_path, lines, name=f"sdk-{at}.jsonl")
        for parts in (1, 2):
            given.clear()
            gathered, own, adopted = _gathered_and_own_pass(path, parts, monkeypatch, tmp_path)
            assert not adopted and gathered == own
            assert given or (parts == 2 and at == 40)  # (the child's part gave up: its own process's call)


def _message_dicts():
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**53, 2**53), st.text(max_size=5),
                        st.floats(allow_nan=False, allow_infinity=False))
    values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.text(max_size=4), kids, max_size=3), max_leaves=8)
    keys = st.sampled_from(["role", "content", "usage", "api", "responseId", "details", "timestamp", "x"])
    return st.dictionaries(keys, values, max_size=7)


def test_a_message_size_and_identity_come_from_one_dump():
    """``_Messages.key``: the size is the whole message's JSON length (what approx_tokens counts),
    and two messages share a digest only when the page cannot tell them apart."""
    import orjson
    from hypothesis import given, settings

    from pisess.core.analyses.page import UNDRAWN, _Images, _Messages

    @settings(max_examples=examples(100), deadline=None)
    @given(a=_message_dicts(), b=_message_dicts())
    def check(a, b):
        enc = _Messages(_Images("omit"), False, None)
        ka, kb = enc.key(a), enc.key(b)
        assert ka[1] == len(orjson.dumps(a)) and kb[1] == len(orjson.dumps(b))
        if orjson.dumps(a) == orjson.dumps(b):
            assert ka[0] == kb[0]
        if ka[0] == kb[0]:
            lean = lambda m: {k: v for k, v in m.items() if k not in UNDRAWN}  # noqa: E731
            assert orjson.dumps(lean(a)) == orjson.dumps(lean(b)) and ka[1] == kb[1]
            assert sorted((k, orjson.dumps(v)) for k, v in a.items() if k in UNDRAWN) == \
                sorted((k, orjson.dumps(v)) for k, v in b.items() if k in UNDRAWN)
    check()


@pytest.mark.parametrize("redact", [False, True])
def test_a_big_sessions_page_made_with_forked_children_is_the_same_page(redact, monkeypatch):
    """Past ``PAGE_SPLIT_MIN`` the static page (the leaf's context, its secrets), validate's findings
    and half of the entries are made in forked children, not in the process that waits for them:
    the file written is the one a single process writes.  The entries' half is the open's (the
    page's pass taken during its parse, ``PageGathering``: the second half of the file in the scan's
    child), or, where that pass is not taken (``--redact``, or a part that does not fit), the page's
    own pass's."""
    from pisess.core import parallel
    from pisess.core.analyses import explorer
    from pisess.core.analyses import export as export_mod
    from pisess.core.analyses import page as page_mod
    from pisess.core.model import tree as tree_mod

    forks = []
    events = []  # (in this process) forks, children's values read, the walk's run, the classes settled
    real_child, real_result = parallel.Child.__init__, parallel.Child.result

    def child(self, fn, *a):
        forks.append(fn)
        events.append("fork " + fn.__name__)
        self.name = fn.__name__
        real_child(self, fn, *a)
    monkeypatch.setattr(parallel.Child, "__init__", child)
    monkeypatch.setattr(parallel.Child, "result", lambda self: events.append("read " + self.name) or real_result(self))
    real_run, real_settle = explorer.Walk.run, page_mod._Messages.settle
    monkeypatch.setattr(explorer.Walk, "run", lambda self, *a: events.append("run") or real_run(self, *a))
    monkeypatch.setattr(page_mod._Messages, "settle", lambda self, *a: events.append("settle") or real_settle(self, *a))
    real_tree = tree_mod.build_tree
    monkeypatch.setattr(tree_mod, "build_tree", lambda *a, **k: events.append("tree") or real_tree(*a, **k))
    validated = []  # (in this process: a child's calls are the child's)
    real_findings = export_mod.page_findings
    monkeypatch.setattr(export_mod, "page_findings", lambda s: validated.append(1) or real_findings(s))

    def page(jobs: int):
        return _branchy_page(jobs, redact)

    from pisess.core.reading import compact

    monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0)
    monkeypatch.setattr(compact, "SPLIT_MIN", 0)  # (the open's scan in two parts too)
    alone = page(1)
    assert not forks and validated == [1]
    # the tree and the side work are made once this process has taken its entries, before the
    # child's are read (they need none), and the side work is read last, when nothing else is left:
    # validate's and the members (beside) when the page's JSON needs them, the static page after it
    own_pass = ["fork _second_half", "read _second_half", "fork second_half", "tree", "fork static_page",
                "fork beside", "read second_half", "run", "settle", "read beside", "read static_page"]
    for fits in ([True, False] if not redact else [False]):
        if not fits:
            monkeypatch.setattr(page_mod.PageGather, "fits", lambda self, *a: False)
        events.clear()
        forks.clear()
        assert page(2) == alone
        assert validated == [1]
        if fits:  # (the side work starts at once: the entries were taken as the open read them; the
            # tree's rows after the walk, while the page's messages are written: files.write_atomically)
            assert events == ["fork _second_half", "read _second_half", "fork static_page", "fork beside", "run",
                              "tree", "settle", "read beside", "read static_page"]
        else:
            assert events == own_pass


def test_a_big_pages_messages_are_written_first_and_its_head_put_in_front(tmp_path, monkeypatch):
    """A page's tail (the messages not drawn first) is laid out once the pass is done; past
    ``TAIL_FIRST_MIN`` of it the writer may write it while the page's JSON is made: the head is
    then padded with spaces after its scripts to whole blocks (``INSERT_ALIGN``), and the file is
    the smaller page's bytes with those spaces, whichever way it was written."""
    import os

    from pisess.core import parallel
    from pisess.core.analyses import export as export_mod
    from pisess.core.analyses.export import ExportOptions, export_session, write_export
    from pisess.core.reading import files

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "diff", "sessions", "branchy.jsonl")

    def page(tail_min: int, out: str | None = None) -> bytes:
        monkeypatch.setattr(export_mod, "TAIL_FIRST_MIN", tail_min)
        run = export_session(fixture, "html", new_id="x", now_iso="2026-01-01T00:00:00.000Z",
                             options=ExportOptions())
        if out is None:
            return b"".join(run.export.data)
        write_export(out, run.export.data)
        with open(out, "rb") as fh:
            return fh.read()

    small = page(1 << 62)
    scripts_end = small.index(b"</script>\n", small.index(b"<script>", small.index(b"<script>") + 1)) + 10
    previous = parallel.configure(parallel.Settings(jobs=2))
    try:
        for able in (True, False):  # (the tail written first, or after the head)
            monkeypatch.setattr(files, "_can_insert", lambda fd, able=able: able)
            big = page(0, str(tmp_path / f"page-{able}.html"))
            pad = len(big) - len(small)
            assert 0 < pad < files.INSERT_ALIGN and (scripts_end + pad) % files.INSERT_ALIGN == 0
            assert big == small[:scripts_end] + b" " * pad + small[scripts_end:]
            assert big == page(0)
    finally:
        parallel.configure(previous)


def test_the_findings_a_forked_child_made_are_kept_in_the_cache(tmp_path, monkeypatch):
    """validate's findings of a big session's page are made in a forked child (``beside``); what
    it keeps in the cache is handed back and written with this process's cache, so the next
    export reads them there instead of making them again."""
    import os

    from pisess.core import parallel
    from pisess.core.analyses import page as page_mod
    from pisess.core.analyses import unpaired
    from pisess.core.analyses.export import export_session
    from pisess.core.reading import cache

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "diff", "sessions", "branchy.jsonl")
    made = []  # (in this process only: the child's calls are the child's)
    real_made = unpaired.results_not_made
    monkeypatch.setattr(unpaired, "results_not_made", lambda *a: made.append(1) or real_made(*a))
    monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0)
    previous = cache.configure(cache.Settings(directory=str(tmp_path / "cache"), smallest=0))
    try:
        def page(jobs: int) -> bytes:
            settings = parallel.configure(parallel.Settings(jobs=jobs))
            try:
                run = export_session(fixture, "html", new_id="x", now_iso="2026-01-01T00:00:00.000Z")
                return b"".join(run.export.data)
            finally:
                parallel.configure(settings)
                cache.flush()  # (as the CLI does after each command)

        forked = page(2)
        assert made == []  # made in the child
        assert page(1) == forked and made == []  # read from the cache the child's summaries went to
    finally:
        cache.configure(previous)


def test_what_the_commonest_entries_did_is_what_their_tally_says():
    """``_did``'s short way for user messages and tool results without usage gives what the
    entry's ``SideTally`` gives, for every entry of the shipped sessions and some odd ones."""
    from pisess.core.analyses.page import _did, _did_tallied
    from pisess.core.reading.session import open_session

    odd = [{"type": "message", "message": {"role": "toolResult", "isError": "yes"}},
           {"type": "message", "message": {"role": "toolResult", "isError": True, "usage": {"input": 3}}},
           {"type": "message", "message": {"role": "user", "usage": {"input": 3, "cost": {"total": 1}}}},
           {"type": "message", "message": {"role": "toolResult"}}, {"type": "message", "message": None}]
    checked = 0
    for path in _every_session():
        try:
            s = open_session(str(path), "auto", light=True)
        except Exception:  # noqa: BLE001 - a fixture no reader opens
            continue
        for _, e in s.complete_at(range(len(s.store))):
            if isinstance(e, dict):
                assert _did(e, s.pi_version) == _did_tallied(e, s.pi_version), e
                checked += 1
    for e in odd:
        assert _did(e, "1.6.0") == _did_tallied(e, "1.6.0"), e
    assert checked > 100


def test_a_messages_same_and_shape_keys_are_diffs_own():
    """``same_and_shape_keys``: diff's ``same_key`` and ``shape_key`` of a message, the shape left
    out (``None``) only where it is the same key (nothing of a text to leave out)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pisess.core.analyses.diff import same_and_shape_keys, same_key, shape_key

    blocks = st.lists(st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["text", "toolCall", "image"]),
                                                      "text": st.text(max_size=3)}),
                                st.integers(), st.text(max_size=2)), max_size=3)
    messages = st.one_of(_message_dicts(), st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "bashExecution", "toolResult"]),
         "content": st.one_of(blocks, st.text(max_size=2), st.none())},
        optional={"summary": st.text(max_size=2), "output": st.text(max_size=2), "timestamp": st.integers(),
                  "big": st.integers(2**64, 2**65)}), st.integers())

    @settings(max_examples=examples(300), deadline=None)
    @given(m=messages)
    def check(m):
        same, shape = same_and_shape_keys(m)
        assert same == same_key(m)
        assert (shape if shape is not None else same) == shape_key(m)
    check()


def test_the_classes_made_later_are_diffs_classes(tmp_path):
    """``_Messages.settle``: the "same" and "changed" classes of a message whose keys waited (a text
    to leave out, a lean dump read back exactly; a pre-key or a pre-key and text length met first)
    are the classes of diff's ``same_key`` and ``shape_key``, as if each were made at once:
    messages that differ only in metadata share one (one of them read back, the other made at
    once: a big integer, a number JSON.stringify writes otherwise), a shape of its own is a class
    of its own, a text left out can make the shape of a message without one.  Also when the
    messages are stored by two encoders, the second's taken by the first (a forked child's half:
    ``part``, ``take``), the pre-keys met in either."""
    import hashlib

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pisess.core.analyses.diff import same_key, shape_key
    from pisess.core.analyses.explorer import MessageTable
    from pisess.core.analyses.page import _back, _Images, _Messages

    texts = st.sampled_from(["a", "b", "</x>", "\u2028", ""])
    ids = st.sampled_from(["c1", "c2", 7])
    block = st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(texts, st.just(3))}),
                      st.fixed_dictionaries({"type": st.just("toolCall"), "id": ids}),
                      st.fixed_dictionaries({"type": st.just("thinking"), "thinking": texts}),
                      st.just("loose"))
    content = st.one_of(texts, st.lists(block, max_size=3), st.none())
    message = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution", 5]), "content": content},
        optional={"timestamp": st.sampled_from([0, 1, 2**60]), "usage": st.just({"input": 1}),
                  "model": st.sampled_from(["m", "n"]), "x": st.sampled_from([1.5, 1e16, 2, "y"]), "summary": texts,
                  "toolCallId": ids, "output": texts})

    def reference(ms):
        enc = _Messages(_Images("omit"), False, None)
        table = MessageTable(enc)
        first: dict = {}
        for m in ms:
            first.setdefault(table.add(m), m)
        return [first[i] for i in range(len(table))]

    @settings(max_examples=examples(400), deadline=None)
    @given(ms=st.lists(message, max_size=12), spooled=st.booleans(), cut=st.integers(0, 12))
    def check(ms, spooled, cut):
        stored = reference(ms)
        with open(tmp_path / "spool", "w+b") as spool:
            enc = _Messages(_Images("omit"), False, None)
            table = MessageTable(enc, spool if spooled or cut < len(ms) else None)
            for m in ms[:cut]:
                table.add(m)
            if cut < len(ms):
                theirs = _Messages(_Images("omit"), False, None)
                their_table = MessageTable(theirs, open(tmp_path / "their-spool", "w+b"))
                for m in ms[cut:]:
                    their_table.add(m)
                enc.take(theirs.part(), table.take(their_table.part(), their_table.spool))
            enc.settle(table)
            assert _back(enc.same) == _back([hashlib.sha256(same_key(m)).digest() for m in stored])
            assert _back(enc.shape) == _back([hashlib.sha256(shape_key(m)).digest() for m in stored])
            table.close()
    check()


def test_the_page_json_written_member_by_member_is_the_whole_written_at_once():
    """``_dumps_members``: the page's JSON written a member at a time (``js_exponents`` only where
    a member holds something other than strings, escaped a member at a time) is ``_dumps`` of the
    whole, escaped: numbers JSON.stringify writes otherwise (in lists of numbers, beside strings
    that look like numbers, in strings with quotes and backslashes), ``</``, ``<!`` and U+2028 at
    a member's either end, and a value orjson refuses (a big integer, a lone surrogate).  Members
    written by another process (``_premake``) give the same."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pisess.core.analyses.page import _COLUMN_OF, _dumps, _dumps_members, _premake

    texts = st.sampled_from(["a", "1e5", "x 2e21,", '"3e16"', "\\", '\\"', "e+5]", "</s>", "<", "!--", "\u2028",
                             "/x"])
    numbers = st.sampled_from([0, 1, -2, 1.5, 1e16, 1e21, -1.5e-7, 0.1, 12345678901234567e3])
    refused = st.sampled_from(["\ud800", 2**53 + 1, 2**64])  # (rarer: one makes the whole go the other way)
    scalars = st.one_of(texts, numbers, st.none(), st.booleans(), texts, numbers, refused)
    values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(texts, inner, max_size=3)), max_leaves=12)
    members = st.one_of(values, st.lists(texts, max_size=5))

    @settings(max_examples=examples(300), deadline=None)
    @given(doc=st.dictionaries(st.sampled_from(["v", "preview", "ids", "meta", "did", "trace", "e1"]), members,
                               max_size=6))
    def check(doc):
        whole = escape_json(_dumps(doc))
        assert _dumps_members(doc) == whole
        side = tuple(k for k in doc if k in _COLUMN_OF)
        facts = {_COLUMN_OF[k]: doc[k] for k in side}
        assert _dumps_members(doc, _premake(facts, side)()) == whole
    check()


def test_the_branch_costs_are_each_subtrees_sums():
    """``_branch_costs``: per child of a branch point, its subtree's entries, tokens and cost, the
    cost summed as a child's subtree is added to its parent, the children in their order (a sum
    of floats depends on it); the same whether each parent comes before its children (pi's files:
    one pass from the end) or not."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pisess.core.analyses.page import _branch_costs

    @st.composite
    def trees(draw):
        n = draw(st.integers(1, 24))
        order = draw(st.permutations(range(n))) if draw(st.booleans()) else list(range(n))  # (the order entries are made in)
        parents = [-1] * n
        for i, p in enumerate(order):
            if i and draw(st.integers(0, 9)):
                parents[p] = order[draw(st.integers(0, i - 1))]
        usage = draw(st.lists(st.one_of(st.just(0), st.tuples(st.integers(0, 9), st.sampled_from(
            [0.1, 0.2, 0.3, 1e-7, 0.0012000000000000001, 0.7, 1e16]))), min_size=n, max_size=n))
        return parents, [list(u) if u else 0 for u in usage]

    def whole(p, parents, usage):
        kids = [c for c in range(len(parents)) if parents[c] == p]
        size, tokens, cost = 1, *(usage[p] if usage[p] else (0, 0.0))
        cost = 0.0 + cost
        for c in kids:
            s, t, k = whole(c, parents, usage)
            size, tokens, cost = size + s, tokens + t, cost + k
        return size, tokens, cost

    @settings(max_examples=examples(300), deadline=None)
    @given(tree=trees())
    def check(tree):
        parents, usage = tree
        expected = {}
        for q in range(len(parents)):
            kids = [c for c in range(len(parents)) if parents[c] == q]
            if len(kids) > 1:
                for c in kids:
                    s, t, k = whole(c, parents, usage)
                    expected[str(c)] = [s, t, round(k, 10)]
        got = _branch_costs(parents, usage)
        assert got == expected
        # (in the page's order: the branch points as their first child comes, each one's children in order)
        points = sorted({parents[int(c)] for c in expected}, key=lambda q: parents.index(q))
        assert list(got) == [str(c) for q in points for c in range(len(parents)) if parents[c] == q]
    check()


def test_a_part_that_gives_up_lets_go_of_what_it_took():
    """A part that gives up mid-scan (here: a record only the SDK writes, under ``auto``) keeps none
    of the columns, messages or walk it took so far: the rest of the scan and the page's own pass
    run without them held."""
    from conftest import entry
    from pisess.core.analyses.page import PageGathering

    gathering = PageGathering("1.6.0")
    try:
        part = gathering(0)
        part.add_all([user(f"u{i}", f"u{i - 1}" if i else None, f"q{i} " * 40) for i in range(300)])
        assert part.count == 300 and len(part.facts["preview"]) == 300 and len(part.table) == 300
        part.add_all([entry("leaf", "l1", "u299", targetId="u0")])
        assert part.void and part.facts == {} and part.walk is None and part.table is None
        part.add_all([user("u300", "l1")])  # (nothing more is taken)
        assert part.count == 300 and part.sent is None
    finally:
        gathering.close()


def test_the_guess_at_an_sdk_file_looks_at_its_header_and_both_ends(tmp_path, monkeypatch):
    """``export._likely_sdk`` (whether to take the page's pass during the open, which assumes the pi
    command's reader): a header with ``metadata``, or a record only the SDK writes in the first or
    the last MiB, says yes; one only in the middle is left to the part, which gives up on it; a
    file the pi command writes says no.  The page is the same whichever way it was made."""
    from conftest import entry
    from pisess.core.analyses import export as export_mod

    monkeypatch.setattr(export_mod, "_SDK_LOOK", 4096)
    body = [user(f"u{i}", f"u{i - 1}" if i else None, f"question {i} " * 8) for i in range(200)]
    leaf = entry("leaf", "l1", "u199", targetId="u0")
    cases = {"cli": ([header(), *body], False), "metadata": ([header(metadata={"x": 1}), *body], True),
             "first": ([header(), leaf, *body], True), "last": ([header(), *body, leaf], True),
             "middle": ([header(), *body[:100], leaf, *body[100:]], False)}
    paths = {}
    for name, (lines, sdk) in cases.items():
        paths[name] = write_session(tmp_path, lines, name=f"{name}.jsonl")
        assert export_mod._likely_sdk(paths[name]) is sdk, name
    for name in ("cli", "last", "middle"):
        pages = []
        for guess in (False, True):  # (False: the pass taken in the open, given up at the leaf entry)
            monkeypatch.setattr(export_mod, "_likely_sdk", lambda p, guess=guess: guess)
            pages.append(_data(_export(monkeypatch, "--format", "html", paths[name])))
        assert pages[0] == pages[1], name


def test_numbers_in_messages_with_members_left_out_keep_their_values_and_classes(tmp_path, monkeypatch):
    """An assistant message's stored form leaves out ``usage`` and the rest of ``UNDRAWN`` and keeps
    orjson's writing of its numbers (``1e+16`` and ``1e-7`` as ``1e16``, ``1e-7``): the page reads the
    same values, and two such messages that differ only in what was left out are the same message
    to Compare (their classes are made from the stored forms, ``settle``)."""
    def call_message(eid, parent, tokens):
        m = {"role": "assistant", "content": [
            {"type": "text", "text": "scaling"},
            {"type": "toolCall", "id": "c1", "name": "scale", "arguments": {"big": 1e16, "small": 1e-7, "n": 3}}],
            "api": "x", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 5,
            "usage": {"input": tokens, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 1,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": m}

    # (a3's usage is a1's length: the page cannot tell the two apart, and stores them once)
    lines = [header(), user("u1", None, "go"), call_message("a1", "u1", 10), call_message("a2", "u1", 2000),
             call_message("a3", "u1", 30)]
    path = write_session(tmp_path, lines)
    doc = _data(_export(monkeypatch, "--format", "html", path))
    stored = [m for m in doc["msgs"] if m.get("role") == "assistant"]
    assert len(stored) == 2
    assert doc["ctx"][doc["ids"].index("a1")] == doc["ctx"][doc["ids"].index("a3")]
    for m in stored:
        assert "usage" not in m and "api" not in m
        assert m["content"][1]["arguments"] == {"big": 1e16, "small": 1e-7, "n": 3}
    i, j = (doc["msgs"].index(m) for m in stored)
    same = [k - back for k, back in enumerate(doc["sameBack"])]
    assert same[i] == same[j]  # (one class: they differ only in usage)


@pytest.mark.parametrize("session", _SPLIT_SESSIONS[:3], ids=lambda p: p.name)
def test_messages_whose_keys_collide_make_the_same_page(session, monkeypatch, tmp_path):
    """A message's key is Python's hash of its stored form (``explorer.hashed_key``), no digest:
    with a hash of one value, every message shares its key with every other, and the page,
    one pass or shared with a forked child, is still the page (the table compares stored forms)."""
    from pisess.core import parallel
    from pisess.core.analyses import explorer
    from pisess.core.analyses import page as page_mod
    from pisess.core.reading.session import open_session

    def data(split: bool, tag: str):
        monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0 if split else 1 << 62)
        s = open_session(str(session), "auto", light=True, pi_version="1.6.0", images="lean")
        with open(tmp_path / f"spool-{tag}-{split}", "w+b") as spool:
            d = page_mod.page_data(s, page_mod.PageOptions(), spool=spool)
            return d.rest, b"\n".join(d.table.json_lines()), len(d.table)

    previous = parallel.configure(parallel.Settings(jobs=2))
    try:
        pages = [data(split, "hash") for split in (False, True)]
        real = explorer.hashed_key
        monkeypatch.setattr(page_mod, "hashed_key", lambda data, size: real(b"", 0))
        weak = [data(split, "weak") for split in (False, True)]
    finally:
        parallel.configure(previous)
    assert pages[0][2] > 2
    assert weak == pages and pages[0] == pages[1]


def test_a_big_sessions_page_where_no_fork_is_had_is_the_same_page(monkeypatch):
    """Where the system refuses every fork (too many processes), each child is one that failed:
    the scan, the page's pass and the work beside it are done in this process, and the page is
    the one written without forks."""
    import os

    from pisess.core.analyses import page as page_mod
    from pisess.core.reading import compact

    page = _branchy_page

    monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0)
    monkeypatch.setattr(compact, "SPLIT_MIN", 0)
    alone = page(1)
    refused = []

    def no_fork() -> int:
        refused.append(1)
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    assert page(2) == alone
    assert len(refused) >= 2  # (the scan's half, and the page's children)


@pytest.mark.parametrize("failing", ["static_page", "beside"])
@pytest.mark.parametrize("fits", [True, False])
def test_a_big_pages_side_child_that_fails_leaves_its_part_to_this_process(failing, fits, monkeypatch):
    """The static page and the rest of the side work (validate's findings, search's placements,
    the page's members) are made in two children; where one of them fails, its part is made here
    and the page is the one made without children."""
    from pisess.core import parallel
    from pisess.core.analyses import export as export_mod
    from pisess.core.analyses import page as page_mod
    from pisess.core.reading import compact

    here: list = []  # (what this process made of the side work)
    real_findings, real_context = export_mod.page_findings, export_mod.export_context
    monkeypatch.setattr(export_mod, "page_findings", lambda s: here.append("findings") or real_findings(s))
    monkeypatch.setattr(export_mod, "export_context", lambda *a, **k: here.append("static") or real_context(*a, **k))

    page = _branchy_page

    monkeypatch.setattr(page_mod, "PAGE_SPLIT_MIN", 0)
    monkeypatch.setattr(compact, "SPLIT_MIN", 0)
    if not fits:
        monkeypatch.setattr(page_mod.PageGather, "fits", lambda self, *a: False)
    alone = page(1)
    assert sorted(here) == ["findings", "static"]
    real_init = parallel.Child.__init__

    def child(self, fn, *args):
        if fn.__name__ == failing:  # (as a refused fork leaves it: a child that failed)
            self.pid, self._done = -1, True
            return
        real_init(self, fn, *args)

    monkeypatch.setattr(parallel.Child, "__init__", child)
    here.clear()
    assert page(2) == alone
    assert here == ["static" if failing == "static_page" else "findings"]


def _branchy_page(jobs: int, redact: bool = False) -> tuple:
    """The explorer page of the fixture ``branchy.jsonl`` and the secrets its export counted, made
    with ``jobs`` processes (the tests set the sizes above which the work is shared)."""
    import os

    from pisess.core import parallel
    from pisess.core.analyses.export import ExportOptions, export_session

    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "diff", "sessions", "branchy.jsonl")
    previous = parallel.configure(parallel.Settings(jobs=jobs))
    try:
        run = export_session(fixture, "html", new_id="x", now_iso="2026-01-01T00:00:00.000Z",
                             options=ExportOptions(redact=redact))
        return b"".join(run.export.data), run.export.secrets
    finally:
        parallel.configure(previous)
