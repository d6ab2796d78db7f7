"""pisess search: golden views, options, exit codes, the JSON shape, and the raw-byte prefilter
never losing a match that parsing every line finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from answers_store import CWD, F_ID, H_ID, P_ID, invoke
from conftest import check_golden, examples
from pisess.core.analyses.search import make_matcher
from pisess.core.analyses.search import scan as core_search
from pisess.core.analyses.search.scan import search_file, value_matches

ROOT = ["--sessions-dir", "sessions"]
HERE = [*ROOT, "--cwd", CWD]

GOLDEN_CASES = {
    "search_project": ["search", "date", *HERE],
    "search_all_ignore_case_in": ["search", "utc", "-i", "--all", "--in", "user,summary", *ROOT],
    "search_regex_active_only": ["search", "-e", r"\b(404|500)\b", "--all", "--active-only", *ROOT],
    "search_escapes": ["search", "-e", "500|handler", "--all", *ROOT],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_search_view_matches_golden(store, name):
    """Grouped by session (newest first), each hit with entry, kind, where and a highlighted snippet."""
    r = invoke(*GOLDEN_CASES[name])
    assert r.exit_code == 0, r.stderr
    check_golden(f"{name}.txt", r.stdout)


def test_escapes_are_neutralised(store):
    """ESC from a bash output prints as \\x1b, and [bold] prints literally."""
    r = invoke("search", "-e", "500|handler", "--all", *ROOT, "--color", "always")
    assert r.exit_code == 0
    assert "\\x1b[31mError" in r.stdout
    assert "[bold]Fix[/bold]" in r.stdout
    assert "\x1b[31mError" not in r.stdout and "\x1b]" not in r.stdout


def test_json_shape(store):
    """--json: {version, hits: [{sessionId, path, entryId, type, role, where, field, line, snippet, start, end}]}."""
    r = invoke("search", "date", *HERE, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["version"] == 2
    assert doc["fileCount"] == 2 and doc["sessionCount"] == 2
    keys = {"sessionId", "path", "entryId", "type", "role", "where", "field", "line", "snippet", "start", "end"}
    for h in doc["hits"]:
        assert set(h) == keys
        assert h["snippet"][h["start"]:h["end"]] == "date"
        assert h["where"] in ("active", "compacted", "branch")
    # newest session first: the fork, then its parent
    assert [h["sessionId"] for h in doc["hits"]][0] == F_ID
    assert doc["hits"][-1]["sessionId"] == P_ID
    by = {(h["sessionId"], h["entryId"]): h for h in doc["hits"]}
    assert by[(P_ID, "u1")]["where"] == "compacted"  # before the checkpoint kept from u3
    assert by[(F_ID, "u1")]["where"] == "active"  # the fork has no compaction
    assert by[(P_ID, "t2")]["where"] == "branch" and by[(P_ID, "t2")]["role"] == "toolResult"
    assert by[(P_ID, "c1")]["type"] == "compaction" and by[(P_ID, "c1")]["role"] is None
    assert by[(P_ID, "l1")]["field"] == "label"
    assert by[(P_ID, "u1")]["line"] == 4


def test_where_in_harness_session(store):
    """The harness file's leaf record moved back: the aborted answer and its prompt are a branch."""
    doc = json.loads(invoke("search", "screenshot", "--all", *ROOT, "--json").stdout)
    where = {h["entryId"]: h["where"] for h in doc["hits"]}
    assert where == {"hu2": "branch", "hs1": "active"}
    assert all(h["sessionId"] == H_ID for h in doc["hits"])


def test_active_only_and_in(store):
    doc = json.loads(invoke("search", "date", *HERE, "--json", "--active-only").stdout)
    assert doc["hits"] and all(h["where"] == "active" for h in doc["hits"])
    doc = json.loads(invoke("search", "date", *HERE, "--json", "--in", "label,name").stdout)
    assert {h["field"] for h in doc["hits"]} == {"label"}
    doc = json.loads(invoke("search", "changelog", *HERE, "--json", "--in", "thinking").stdout)
    assert [(h["entryId"], h["field"]) for h in doc["hits"]] == [("a5", "thinking")]
    doc = json.loads(invoke("search", "parser", *HERE, "--json", "--in", "name").stdout)
    assert [(h["entryId"], h["field"]) for h in doc["hits"]] == [("n1", "name")]


def test_exit_codes(store):
    r = invoke("search", "no such text anywhere", *HERE)
    assert r.exit_code == 1 and r.stdout == "" and "no hits in 2 files" in r.stderr
    r = invoke("search", "no such text anywhere", *HERE, "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["hits"] == []
    assert invoke("search", "(", "-e", *HERE).exit_code == 2
    assert invoke("search", "", *HERE).exit_code == 2
    assert invoke("search", "x", "--in", "bogus", *HERE).exit_code == 2
    assert invoke("search", "x", "--in", ",", *HERE).exit_code == 2
    assert invoke("search", "x", "--color", "sometimes", *HERE).exit_code == 2
    r = invoke("search", "date", "0195", "--all", *ROOT)
    assert r.exit_code == 2 and "not both" in r.stderr
    r = invoke("search", "date", "ffffffff", *HERE, "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["error"]["code"] == "not_found"
    r = invoke("search", "date", "--sessions-dir", "sessions", "--cwd", "/nowhere")
    assert r.exit_code == 1 and "no sessions for /nowhere" in r.stderr


def test_named_sessions_and_directories(store):
    """Ids, prefixes, files and directories name the set; the hint points at a hit."""
    doc = json.loads(invoke("search", "date", "01955000", *HERE, "--json").stdout)
    assert {h["sessionId"] for h in doc["hits"]} == {P_ID}
    doc = json.loads(invoke("search", "404", str(store["H"]), *HERE, "--json").stdout)
    assert {h["sessionId"] for h in doc["hits"]} == {H_ID}
    doc = json.loads(invoke("search", "date", str(store["root"]), *HERE, "--json").stdout)
    assert doc["fileCount"] == 3
    r = invoke("search", "changelog", *HERE)
    assert r.exit_code == 0 and "pisess context" in r.stderr and "--leaf u4" in r.stderr


def test_not_a_session_is_skipped(store):
    """A file with matching text that neither reader opens is named on stderr, not searched."""
    bad = store["root"] / "--home-you-projects-webapp--" / "zz-notes.jsonl"
    bad.write_text('{"type":"label","id":"x","parentId":null,"timestamp":"t","targetId":"y","label":"zebra"}\n')
    r = invoke("search", "zebra", *HERE)
    assert r.exit_code == 1
    assert "skipped" in r.stderr and "zz-notes.jsonl" in r.stderr


def test_unreadable_file_exits_2(store, monkeypatch):
    """A file that cannot be opened (EACCES, simulated so it holds for root too): exit 2, the file named as unreadable."""
    from pisess.core.reading import scan

    real_open = os.open
    target = os.path.realpath(store["P"])

    def refuse(path, flags, *a, **k):
        if os.path.realpath(path) == target:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(scan.os, "open", refuse)
    r = invoke("search", "date", *HERE)
    assert r.exit_code == 2 and f"{store['P'].name}: unreadable: cannot read: Permission denied" in r.stderr


def test_harness_refusal_falls_back_to_the_cli_reader(store, tmp_path):
    """A SDK-written file with a broken line: pi's SDK refuses it; search reads it leniently and says so."""
    lines = store["H"].read_text().splitlines()
    lines.insert(3, '{"type":"message","id":"broken"')
    p = tmp_path / "broken.jsonl"
    p.write_text("\n".join(lines) + "\n")
    r = invoke("search", "404", str(p), "--json")
    assert r.exit_code == 0
    assert "pi's SDK refuses it" in r.stderr
    assert json.loads(r.stdout)["hits"]


# --- the prefilter -----------------------------------------------------------------------------------


def _session(tmp_path, texts: list, *, ensure_ascii: bool = False, name: str = "s.jsonl") -> str:
    rows = [{"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for i, t in enumerate(texts):
        rows.append({"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
                     "message": {"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1}})
        parent = f"e{i}"
    p = tmp_path / name
    p.write_text("".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in rows))
    return str(p)


def _hits(path: str, pattern: str, **kw) -> list:
    r = search_file(path, make_matcher(pattern, **kw))
    return [] if r is None else [(h.entry_id, h.match.snippet, h.match.start, h.match.end) for h in r.hits]


def test_escaped_text_is_found(tmp_path):
    """Quotes, backslashes, non-ASCII written as \\uXXXX, and slashes written as \\/ are all found."""
    p = _session(tmp_path, ['say "hi" to C:\\dir', "café crème", "a/b/c.ts"], ensure_ascii=True)
    assert [h[0] for h in _hits(p, '"hi"')] == ["e0"]
    assert [h[0] for h in _hits(p, "C:\\dir")] == ["e0"]
    assert [h[0] for h in _hits(p, "café")] == ["e1"]
    assert [h[0] for h in _hits(p, "CRÈME", ignore_case=True)] == ["e1"]
    slashed = tmp_path / "slashed.jsonl"
    slashed.write_text(open(p).read().replace("a/b/c.ts", "a\\/b\\/c.ts"))
    assert [h[0] for h in _hits(str(slashed), "a/b/c.ts")] == ["e2"]


def test_ignore_case_keeps_non_ascii_folds_apart(tmp_path):
    """-i: 'k' does not match the Kelvin sign (so the byte prefilter stays exact); ß/ẞ still fold."""
    p = _session(tmp_path, ["\u212a marks kelvin", "Straße", "STRASSE"])
    assert [h[0] for h in _hits(p, "K", ignore_case=True)] == ["e0"]  # only the ASCII k in "kelvin"
    assert [h[2] for h in _hits(p, "K", ignore_case=True)] == [5]  # the k of "marks", not the sign at 0
    assert [h[0] for h in _hits(p, "\u212a", ignore_case=True)] == ["e0"]
    assert [h[0] for h in _hits(p, "straße", ignore_case=True)] == ["e1"]


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_streamed_path_equals_whole_file_path(tmp_path, monkeypatch, block):
    """Files over SMALL are read in blocks (here tiny ones, so lines straddle them): same hits."""
    texts = [("x" * (i * 37 % 300)) + f" needle {i} " + "y" * (i * 11 % 90) for i in range(60)] + ["no match"] * 5
    p = _session(tmp_path, texts)
    monkeypatch.setattr(core_search, "BLOCK", block)
    for pat, kw in (("needle", {}), ("NEEDLE 1", {"ignore_case": True}), (r"needle \d+", {"regex": True})):
        whole = search_file(p, make_matcher(pat, **kw))
        streamed = search_file(p, make_matcher(pat, **kw), small=0)
        assert [(h.entry_id, h.match) for h in whole.hits] == [(h.entry_id, h.match) for h in streamed.hits]
        assert len(whole.hits) >= 6


def test_streamed_file_the_sdk_refuses_is_read_as_the_pi_command_reads_it(tmp_path):
    """A big file with a hit and a broken line: pi's SDK refuses it, so its hits are placed by the
    lenient reader, with a note; the same answer as for a small file."""
    p = tmp_path / "broken.jsonl"
    head = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}'
    e1 = ('{"type":"message","id":"e1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
          '"message":{"role":"user","content":"find me"}}')
    leaf = '{"type":"leaf","id":"l1","parentId":null,"timestamp":"2025-01-01T00:00:02.000Z","targetId":"e1"}'
    p.write_bytes("\n".join([head, e1, '{"type":"mess', leaf]).encode() + b"\n")
    results = [search_file(str(p), make_matcher("find"), small=small) for small in (0, 1 << 20)]
    for r in results:
        # the pi command ignores leaf records: its leaf is the last entry, l1, so e1 is off its path
        assert [(h.entry_id, h.where, h.match.line) for h in r.hits] == [("e1", "branch", 2)]
        assert r.reader == "cli" and "pi's SDK refuses it" in r.note
    assert results[0].note == results[1].note


def test_unterminated_last_line_and_crlf(tmp_path):
    p = tmp_path / "crlf.jsonl"
    head = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}'
    e = '{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user","content":"find me"}}'
    p.write_bytes((head + "\r\n" + e).encode())
    for small in (0, 1 << 20):
        r = search_file(str(p), make_matcher("find"), small=small)
        assert [(h.entry_id, h.match.line) for h in r.hits] == [("e1", 2)]


_text = st.text(alphabet=st.sampled_from(list('aAbBkK \u212a"\\/\u00e9\u00c9\n\t\u0130\u0131\u017fsSiI<&+') + ["\x1b"]),
                max_size=30)


@settings(max_examples=examples(150))
@given(texts=st.lists(_text, min_size=1, max_size=6), pattern=_text.filter(bool), ignore_case=st.booleans(),
       ensure_ascii=st.booleans())
def test_prefilter_never_loses_a_match(tmp_path, texts, pattern, ignore_case, ensure_ascii):
    """Whatever the text and the escaping, a literal search finds exactly what matching every
    parsed line finds."""
    p = _session(tmp_path, texts, ensure_ascii=ensure_ascii, name="prop.jsonl")
    m = make_matcher(pattern, ignore_case=ignore_case)
    expected = []
    with open(p, "rb") as fh:
        for number, line in enumerate(fh, 1):
            v = json.loads(line)
            if v.get("type") != "session":
                expected += [(v["id"], x) for x in value_matches(v, number, m)]
    for small in (0, 1 << 20):
        r = search_file(p, m, small=small)
        got = [] if r is None else [(h.entry_id, h.match) for h in r.hits]
        assert got == expected


def test_core_modules_import_no_cli():
    """search, stats, du and their shared modules import neither typer nor rich."""
    probe = ("import importlib, json, sys\n"
             "for n in ('pisess.core.analyses.search', 'pisess.core.analyses.search.query',\n"
             "          'pisess.core.analyses.search.resume', 'pisess.core.analyses.stats', 'pisess.core.analyses.du',\n"
             "          'pisess.core.listing.sessionset', 'pisess.core.reading.scan', 'pisess.core.model.placement'):\n"
             "    importlib.import_module(n)\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click'))))")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []
