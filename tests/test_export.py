"""pisess export: golden files for md, html and jsonl; the Markdown parsed by a CommonMark parser
and the HTML by html.parser hold exactly the structure pisess meant, whatever the session text
(backticks, fences, HTML, Markdown, control characters); the jsonl is a session both of pi's
readers open and ``validate`` accepts; redaction; writing files safely; the command's exit codes.

Regenerate the golden files after an intended change with
``PISESS_UPDATE_GOLDEN=1 pytest tests/test_export.py`` and review the diff.
"""

from __future__ import annotations

import base64
import html
import json
import os
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from conftest import check_golden, entry, header, message, write_session
from pisess.cli.app import app
from pisess.core.analyses.export import ExportOptions, export_branch, export_context, is_session_file, plain, write_export
from pisess.core.analyses.validate import validate_file
from pisess.core.errors import PisessError
from pisess.core.model.context import build_context
from pisess.core.reading.session import open_session

T0 = 1784970845000

HOSTILE = ("Use ```js``` or a ````` run, <script>alert('x')</script> </details> <!-- comment & &amp; "
           "*bold* _u_ [link](http://example.org) @someone #12 $x$ ~~gone~~ \\escaped")
MD_LINES = ("# not a heading\n---\n1. not a list\n    not code\n| a | b |\n|---|---|\n> not a quote\n~~~\n"
            "not a fence\n~~~\n===\n- item\n+ x\n<div>raw html</div>\n\n\nafter blank lines")
THINKING = "I think `about` <b>it</b>\n```\nfence in thinking\n```\n</details><script>x()</script>"
REPLY = "Reply with a fence:\n```python\nprint(1)\n```\nand ```` four"
ARGS = {"path": "a`b`.txt", "note": "<img src=x onerror=alert(1)>", "fence": "```"}
TOOL_LINES = [f"line {i} <tag> & ``" for i in range(1, 251)]
TOOL_LINES[1] = "`````` six backticks"
TOOL_OUTPUT = "\n".join(TOOL_LINES)
ESCAPES = "red \x1b[31mALERT\x1b[0m and \u202eevil\u202c done"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(600)).decode()
ABANDONED = "ABANDONED-BRANCH-TEXT"


def ts(n: int) -> str:
    from pisess.core.js import iso_utc

    return iso_utc(T0 + n * 1000)


def msg(id_, parent, n, m):
    return message(id_, parent, {**m, "timestamp": T0 + n * 1000}, ts=ts(n))


def assistant_msg(content, stop="stop", **kw):
    return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
            "model": "claude-x", "usage": {"input": 1200, "output": 34, "cacheRead": 0, "cacheWrite": 0,
                                           "totalTokens": 1234, "cost": {"total": 0.01}}, "stopReason": stop, **kw}


def session_lines() -> list:
    """A pi-command session with two branches, a branch summary, a compaction, every message role
    and text built to break naive Markdown/HTML output."""
    return [
        header(),
        entry("model_change", "m1", None, ts(0), provider="anthropic", modelId="claude-x"),
        entry("thinking_level_change", "t1", "m1", ts(0), thinkingLevel="high"),
        msg("u1", "t1", 1, {"role": "user", "content": [{"type": "text", "text": HOSTILE + "\n" + MD_LINES},
                                                          {"type": "image", "mimeType": "image/png", "data": PNG}]}),
        msg("a1", "u1", 2, assistant_msg([{"type": "thinking", "thinking": THINKING, "thinkingSignature": "c2ln"},
                                          {"type": "text", "text": REPLY},
                                          {"type": "toolCall", "id": "call_1", "name": "read", "arguments": ARGS}],
                                         "toolUse")),
        msg("r1", "a1", 3, {"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                            "content": [{"type": "text", "text": TOOL_OUTPUT}], "isError": False}),
        msg("u2", "r1", 4, {"role": "user", "content": ABANDONED}),
        msg("a2", "u2", 5, assistant_msg([{"type": "text", "text": ABANDONED + " reply"}])),
        entry("branch_summary", "b1", "r1", ts(6), fromId="r1", summary="Tried <b>offset</b> paging; dropped it."),
        msg("u3", "b1", 7, {"role": "user", "content": "Now the **second** try."}),
        entry("custom_message", "c1", "u3", ts(8), customType="ctx-ext", content="Injected <context> `x`",
              display=False),
        msg("x1", "c1", 9, {"role": "bashExecution", "command": "ls `pwd` && echo '<b>'", "output": "a\nb",
                            "exitCode": 1, "cancelled": False, "truncated": False}),
        entry("compaction", "k1", "x1", ts(10),
              summary="## Goal\nKeep <all> of it.\n\n<read-files>\na.txt\n</read-files>",
              firstKeptEntryId="u1", tokensBefore=12345, details={"readFiles": ["a.txt"], "modifiedFiles": []},
              fromHook=False),
        msg("a3", "k1", 11, assistant_msg([{"type": "text", "text": "partial"}], "aborted",
                                          errorMessage="Request was aborted")),
        msg("u4", "a3", 12, {"role": "user", "content": ESCAPES}),
        msg("a4", "u4", 13, assistant_msg([{"type": "thinking", "thinking": "", "redacted": True},
                                           {"type": "text", "text": "Done."}])),
        entry("session_info", "s1", "a4", ts(14), name="Share <test> `name`"),
        entry("label", "l1", "s1", ts(15), targetId="u3", label="second-try"),
    ]


EXPECTED_HEADINGS = [
    (1, "pi session 01984a3c · Share <test> `name`"),
    (2, "1. Compaction summary"), (2, "2. User"), (2, "3. Assistant"), (2, "4. Tool result · read"),
    (2, "5. Branch summary"), (2, "6. User"), (2, "7. Extension message"), (2, "8. Shell command"),
    (2, "9. Assistant"), (2, "10. User"), (2, "11. Assistant"),
]


@pytest.fixture()
def src(tmp_path) -> str:
    return write_session(tmp_path, session_lines(), name="source.jsonl")


def ctx_of(path: str):
    return build_context(open_session(path, "cli", light=True))


def md_of(path: str, **opts) -> str:
    return export_context(ctx_of(path), "md", ExportOptions(**opts)).data.decode()


def html_of(path: str, **opts) -> str:
    return export_context(ctx_of(path), "html", ExportOptions(**opts)).data.decode()


# --- golden files ----------------------------------------------------------------------------------


def test_md_golden(src):
    """The Markdown export is byte-for-byte what was reviewed."""
    check_golden("export_md.md", md_of(src))


def test_html_golden(src):
    """The HTML export is byte-for-byte what was reviewed."""
    check_golden("export_html.html", html_of(src))


def test_jsonl_golden(src):
    """The jsonl export (fixed id, clock and source path) is byte-for-byte what was reviewed."""
    s = open_session(src, "cli", light=True)
    out = export_branch(s, s.leaf_id, new_id="01984b00-0000-7000-8000-000000000001", now_iso="2026-07-26T10:00:00.000Z",
                        source_path="/sessions/--work-proj--/source.jsonl")
    check_golden("export_jsonl.jsonl", out.data.decode())


# --- Markdown structure ----------------------------------------------------------------------------


def _inline_text(tok) -> str:
    return "".join(c.content for c in tok.children if c.type in ("text", "code_inline", "softbreak"))


def test_md_parses_to_the_intended_structure(src):
    """A CommonMark parser sees exactly pisess's headings, fences and <details> blocks: nothing in
    the session text (backticks, fences, HTML, Markdown syntax) adds or breaks one."""
    tokens = MarkdownIt("commonmark").parse(md_of(src))
    headings = [(int(t.tag[1]), _inline_text(tokens[i + 1])) for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == EXPECTED_HEADINGS
    fences = [(t.info, t.content) for t in tokens if t.type == "fence"]
    assert ("text", THINKING + "\n") in fences
    assert ("json", json.dumps(ARGS, indent=2, ensure_ascii=False) + "\n") in fences
    assert ("text", "\n".join(TOOL_LINES[:200]) + "\n") in fences
    assert ("sh", "$ ls `pwd` && echo '<b>'\n") in fences and ("text", "a\nb\n") in fences
    assert len(fences) == 5
    blocks = [t.content for t in tokens if t.type == "html_block"]
    assert blocks == [f"<details>\n<summary>Thinking ({len(THINKING)} chars)</summary>\n", "</details>\n",
                      "<details>\n<summary>Thinking (redacted by the provider)</summary>\n", "</details>\n"]
    inline_html = [c for t in tokens if t.type == "inline" for c in t.children if c.type == "html_inline"]
    assert inline_html == []
    kinds = [t.type for t in tokens]
    assert kinds.count("bullet_list_open") == 1 and kinds.count("hr") == 1  # the facts list, the footer rule
    for kind in ("ordered_list_open", "blockquote_open", "code_block", "table_open", "lheading"):
        assert kind not in kinds


def test_md_single_line_places_stay_single_line(tmp_path):
    """A tool name, model or error message holding newlines and Markdown cannot start a block."""
    evil = "x\n- item\n# head\n---\n<div>"
    lines = [header(), msg("u1", None, 1, {"role": "user", "content": "hi"}),
             msg("a1", "u1", 2, {**assistant_msg([{"type": "toolCall", "id": "c", "name": evil, "arguments": {}}],
                                                 "error", errorMessage=evil), "model": evil}),
             msg("r1", "a1", 3, {"role": "toolResult", "toolCallId": "c", "toolName": evil,
                                 "content": [{"type": "image", "mimeType": evil, "data": "AAAA"}], "isError": True})]
    src = write_session(tmp_path, lines)
    tokens = MarkdownIt("commonmark").parse(md_of(src))
    kinds = [t.type for t in tokens]
    assert kinds.count("heading_open") == 4 and kinds.count("bullet_list_open") == 1 and kinds.count("hr") == 1
    assert "html_block" not in kinds and "lheading" not in kinds


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list = []
        self.tags: list = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.parts.append(data)


def _words(s: str) -> str:
    return " ".join(s.replace("\xa0", " ").split())


def test_md_renders_every_session_string_literally(src):
    """Rendered (CommonMark → HTML), the page shows each session string as text, and no tag of its own."""
    rendered = MarkdownIt("commonmark").render(md_of(src))
    p = _Text()
    p.feed(rendered)
    text = _words("".join(p.parts))
    for s in (HOSTILE, MD_LINES, REPLY, THINKING, "Tried <b>offset</b> paging; dropped it.", "Now the **second** try.",
              "Injected <context> `x`", "## Goal\nKeep <all> of it.", plain(ESCAPES)):
        assert _words(s) in text, s
    assert {t for t, _ in p.tags} <= {"h1", "h2", "p", "ul", "li", "strong", "em", "pre", "code", "br", "hr",
                                        "details", "summary"}
    assert "\x1b" not in rendered and "\\x1b[31mALERT" in text and "\\u202eevil" in text


def test_md_keeps_only_the_active_branch_and_notes_the_cut(src):
    """The abandoned branch is not exported; the cut tool result says what was cut."""
    md = md_of(src)
    assert ABANDONED not in md
    p = _Text()
    p.feed(MarkdownIt("commonmark").render(md))
    assert "\u2026 50 more lines cut: showing 200 of 250 (--max-lines 200)" in "".join(p.parts)
    assert "line 201" not in md and "line 200" in md
    assert "line 250" in md_of(src, max_lines=0)


def test_images_are_references_unless_asked(src):
    """By default an image is a reference with its type and size; --images embeds it as a data: URI."""
    assert PNG not in md_of(src) and PNG not in html_of(src)
    p = _Text()
    p.feed(MarkdownIt("commonmark").render(md_of(src)))
    assert "[image image/png, 608 B]" in "".join(p.parts)
    assert f"](<data:image/png;base64,{PNG}>)" in md_of(src, images=True)
    assert f'<img src="data:image/png;base64,{PNG}"' in html_of(src, images=True)


# --- HTML ------------------------------------------------------------------------------------------


def test_html_is_self_contained_and_escapes_everything(src):
    """No script, no event handler, no link, no fetch; every session string appears escaped."""
    page = html_of(src, images=True)
    p = _Text()
    p.feed(page)
    tags = {t for t, _ in p.tags}
    assert "script" not in tags and "iframe" not in tags and "link" not in tags and "a" not in tags
    for tag, attrs in p.tags:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        assert "href" not in attrs
        if "src" in attrs:
            assert tag == "img" and attrs["src"].startswith("data:image/png;base64,")
    assert "<script" not in page.lower()
    for s in (HOSTILE, MD_LINES, REPLY, THINKING, json.dumps(ARGS, indent=2, ensure_ascii=False),
              "\n".join(TOOL_LINES[:200]), "Tried <b>offset</b> paging; dropped it.", "Injected <context> `x`",
              "ls `pwd` && echo '<b>'", plain(ESCAPES), "Share <test> `name`"):
        assert html.escape(s) in page, s
    text = "".join(p.parts)
    assert HOSTILE in text and THINKING in text


def test_html_header_theme_and_policy(src):
    """A header with session, model, leaf and checkpoint; light and dark colours; a CSP forbidding fetches."""
    page = html_of(src)
    for k, v in (("Session", "01984a3c-5b1c-7d3e-8f00-1a2b3c4d5e6f"), ("Model", "anthropic/claude-x · thinking high"),
                 ("Leaf", "l1"), ("Checkpoint", "compaction k1 · 12,345 tokens before")):
        assert f"<dt>{k}</dt><dd>{html.escape(v)}</dd>" in page
    assert "@media (prefers-color-scheme: dark)" in page and 'name="color-scheme" content="light dark"' in page
    assert 'http-equiv="Content-Security-Policy"' in page and "default-src &#x27;none&#x27;" in page
    assert page.count('<details class="thinking">') == 2


# --- jsonl -----------------------------------------------------------------------------------------


def _export_jsonl(src: str, tmp_path, leaf=None, reader="cli", redact=False) -> str:
    s = open_session(src, reader, light=True)
    cli = s if s.reader == "cli" else open_session(src, "cli", light=True)
    from pisess.core.model.paths import leaf_of

    out = export_branch(cli, leaf if leaf is not None else leaf_of(s), new_id="01984b00-0000-7000-8000-00000000000a",
                        now_iso="2026-07-26T10:00:00.000Z", source_path=os.path.abspath(src), redact=redact)
    path = str(tmp_path / "out" / "export.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return write_export(path, out.data)


def test_jsonl_is_a_session_pi_opens(src, tmp_path):
    """validate finds no error; both readers open it; it holds the root path to the leaf, labels
    re-created, a new id, parentSession = the source; the abandoned branch is gone."""
    out = _export_jsonl(src, tmp_path)
    report = validate_file(out)
    assert [f for f in report.findings if f.severity == "error"] == []
    assert report.pi["harness"]["opens"] and report.pi["cli"]["opens"]
    for reader in ("harness", "cli"):
        s = open_session(out, reader)
        build_context(s)
        assert s.header["id"] == "01984b00-0000-7000-8000-00000000000a"
        assert s.header["parentSession"] == os.path.abspath(src) and s.header["version"] == 3
    s = open_session(out, "cli")
    assert [e["id"] for e in s.entries] == ["m1", "t1", "u1", "a1", "r1", "b1", "u3", "c1", "x1", "k1", "a3", "u4",
                                            "a4", "s1", "00000001"]
    assert s.entries[0]["parentId"] is None and s.labels_json() == {"u3": "second-try"}
    assert ABANDONED not in Path(out).read_text()
    assert build_context(s).messages == ctx_of(src).messages


def test_jsonl_of_an_sdk_file_follows_its_leaf_record(tmp_path):
    """For a file pi's SDK wrote, the leaf is the one its leaf record names."""
    lines = [header(), msg("u1", None, 1, {"role": "user", "content": "one"}),
             msg("a1", "u1", 2, assistant_msg([{"type": "text", "text": "first"}])),
             msg("u2", "a1", 3, {"role": "user", "content": "two"}),
             entry("leaf", "lf", "u2", ts(4), targetId="a1")]
    src = write_session(tmp_path, lines)
    out = _export_jsonl(src, tmp_path, reader="auto")
    assert [e["id"] for e in open_session(out, "cli").entries] == ["u1", "a1"]


def test_jsonl_redaction_keeps_the_file_valid(tmp_path):
    """--redact replaces secrets in entries and header, and the file still validates."""
    secret = "DB_PASSWORD=" + "hunter" + "2!x"
    lines = [header(cwd="/home/u/p"), msg("u1", None, 1, {"role": "user", "content": "use " + secret}),
             msg("a1", "u1", 2, assistant_msg([{"type": "text", "text": "ok"}]))]
    src = write_session(tmp_path, lines)
    out = _export_jsonl(src, tmp_path, redact=True)
    text = Path(out).read_text()
    assert "hunter2" not in text and "DB_PASSWORD=[REDACTED:env_secret]" in text
    assert not [f for f in validate_file(out).findings if f.severity == "error"]


# --- redaction in md/html --------------------------------------------------------------------------


def test_redact_md_and_html(tmp_path):
    """Secrets in any message (tool arguments included) are replaced; without --redact they are counted."""
    r = random.Random(2)
    token = "gh" + "p_" + "".join(r.choice("abcdefghijKLMNOP0123456789") for _ in range(36))
    lines = [header(), msg("u1", None, 1, {"role": "user", "content": "token " + token}),
             msg("a1", "u1", 2, assistant_msg([{"type": "toolCall", "id": "c", "name": "bash",
                                                 "arguments": {"command": "curl -u x:" + token}}], "toolUse"))]
    src = write_session(tmp_path, lines)
    for fmt in ("md", "html"):
        plain_out = export_context(ctx_of(src), fmt, ExportOptions())
        assert token in plain_out.data.decode() and plain_out.secrets == {"github_token": 2}
        red = export_context(ctx_of(src), fmt, ExportOptions(redact=True))
        text = red.data.decode()
        assert token not in text and text.count("REDACTED:github") == 2 and red.redacted


def test_deeply_nested_values_are_exported_and_redacted(tmp_path):
    """Thousands of nesting levels (pi reads them) neither crash the scan nor the md/html export."""
    n = 5000
    token = "gh" + "p_" + "a1B2" * 9
    line = ('{"type":"message","id":"u1","parentId":null,"timestamp":"2026-07-25T09:14:03.512Z","message":'
            '{"role":"custom","customType":"x","content":[{"type":"text","text":"hi"}],"timestamp":1,"details":'
            + "[" * n + json.dumps(token) + "]" * n + "}}")
    src = write_session(tmp_path, [header(), line])
    for fmt in ("md", "html"):
        out = export_context(ctx_of(src), fmt, ExportOptions(redact=True))
        assert out.secrets == {"github_token": 1} and token not in out.data.decode()


# --- writing ---------------------------------------------------------------------------------------


def test_write_export_is_exclusive_and_never_overwrites_a_session(tmp_path, src):
    """-o creates the file; an existing file needs --force; a session file is never replaced."""
    out = str(tmp_path / "x.md")
    write_export(out, b"one")
    with pytest.raises(PisessError) as e:
        write_export(out, b"two")
    assert e.value.code == "usage" and Path(out).read_bytes() == b"one"
    write_export(out, b"two", force=True)
    assert Path(out).read_bytes() == b"two"
    before = Path(src).read_bytes()
    with pytest.raises(PisessError):
        write_export(src, b"x", force=True)
    assert Path(src).read_bytes() == before and is_session_file(src) and not is_session_file(out)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".pisess-export-")]


# --- the command -----------------------------------------------------------------------------------


@pytest.fixture()
def runner(monkeypatch) -> CliRunner:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def run(runner, *args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_cli_stdout_file_and_exit_codes(runner, src, tmp_path):
    """stdout by default (md), -o with the format from its extension, and exit codes 0 / 1 / 2."""
    r = run(runner, "export", src)
    assert r.exit_code == 0 and r.stdout.startswith("# pi session 01984a3c") and r.stderr == ""
    out = tmp_path / "share.html"
    r = run(runner, "export", src, "-o", str(out))
    assert r.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>") and r.stdout == ""
    assert f"\u2192 {out}" in r.stderr
    assert run(runner, "export", src, "-o", str(out)).exit_code == 2  # exists
    assert run(runner, "export", src, "-o", str(out), "--force").exit_code == 0
    assert run(runner, "export", src, "-o", src, "--force").exit_code == 2  # a session file
    assert run(runner, "export", src, "--format", "pdf").exit_code == 2
    assert run(runner, "export", src, "--force").exit_code == 2
    assert run(runner, "export", src, "--leaf", "nope").exit_code == 2  # no such entry: a usage error naming the file
    assert run(runner, "export", src, "--leaf", "nope", "-f", "jsonl").exit_code == 2
    assert run(runner, "export", str(tmp_path / "missing.jsonl")).exit_code == 2  # cannot read


def test_cli_jsonl_and_leaf(runner, src, tmp_path):
    """-f jsonl writes a valid session with a fresh UUIDv7; --leaf picks another path."""
    out = tmp_path / "clone.jsonl"
    r = run(runner, "export", src, "--leaf", "a2", "-o", str(out))
    assert r.exit_code == 0
    s = open_session(str(out), "cli")
    assert [e["id"] for e in s.entries] == ["m1", "t1", "u1", "a1", "r1", "u2", "a2"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", s.header["id"])
    assert run(runner, "validate", str(out)).exit_code == 0


def test_only_a_jsonl_export_imports_uuid6(src, tmp_path):
    """md and html make no new session, so their runs leave uuid6 unimported (with the
    importlib.metadata it reads its version from: 30 ms of every export's start); jsonl, pi's
    /clone, imports it for the new session's id (checked a UUIDv7 above).  One process runs the
    three in turn."""
    import subprocess
    import sys

    code = ("import sys\nfrom pisess.cli.app import run\nsrc, out = sys.argv[1:]\n"
            "for fmt in ('md', 'html', 'jsonl'):\n"
            "    run(['export', src, '-f', fmt, '-o', out + '.' + fmt])\n"
            "    print(fmt, 'uuid6' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code, src, str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:3] == ["md False", "html False", "jsonl True"], p.stdout
    assert all((tmp_path / f"out.{fmt}").exists() for fmt in ("md", "html", "jsonl"))


def test_cli_warns_about_secrets_and_json_shape(runner, tmp_path):
    """Unredacted secrets are counted on stderr; --json describes the export (content when on stdout)."""
    src = write_session(tmp_path, [header(), msg("u1", None, 1, {"role": "user", "content": "DB_PASSWORD=hunter2!x"})])
    r = run(runner, "export", src)
    assert "warning: 1 possible secret in this export (env_secret \u00d71)" in r.stderr
    r = run(runner, "export", src, "--redact")
    assert "hunter2" not in r.stdout and "redacted 1 secret" in r.stderr
    doc = json.loads(run(runner, "export", src, "--json", "--redact", "-f", "html").stdout)
    assert doc["version"] == 2 and doc["format"] == "html" and doc["secretCountByKind"] == {"env_secret": 1}
    assert doc["redacted"] is True and doc["content"].startswith("<!DOCTYPE html>") and doc["outputPath"] is None
    assert doc["path"] == src and doc["messageCount"] == 1


def test_cli_empty_session(runner, tmp_path):
    """A session without entries: md says the context is empty; jsonl has nothing to clone (exit 1)."""
    src = write_session(tmp_path, [header()])
    r = run(runner, "export", src)
    assert r.exit_code == 0 and "(the context is empty)" in r.stdout
    r = run(runner, "export", src, "-f", "jsonl")
    assert r.exit_code == 1 and "nothing to export" in r.stderr


def test_help_has_an_example(runner):
    """Both commands have help with an example."""
    for cmd in ("export", "secrets"):
        r = run(runner, cmd, "--help")
        assert r.exit_code == 0 and "Example: pisess" in r.stdout


def test_export_session_runs_without_the_command_line(src):
    """What pisess export does, short of writing, is one core call: read, pick the leaf, export."""
    from pisess.core.analyses.export import check_export_request, export_session

    run_ = export_session(src, "jsonl", leaf="a2", new_id="0198aaaa-0000-7000-8000-000000000000",
                          now_iso="2026-01-01T00:00:00.000Z")
    assert run_.reader == "cli" and run_.export.leaf_id == "a2" and run_.id_width == 8
    doc = run_.to_json(None)
    assert doc["id"] == "0198aaaa-0000-7000-8000-000000000000" and doc["content"].startswith('{"type":"session"')
    assert "content" not in run_.to_json("/tmp/x.jsonl") and doc["path"] == src
    assert doc["entryCount"] == len(doc["content"].splitlines()) - 1 and "messageCount" not in doc  # jsonl: entries
    md = export_session(src, "md", reader="cli", new_id="x", now_iso="y")
    assert md.to_json(None)["format"] == "md" and "id" not in md.to_json(None)
    with pytest.raises(PisessError) as e:
        check_export_request("md", None, True)
    assert e.value.code == "usage"


@pytest.mark.parametrize("target", ["a file", "/dev/null", "a directory", "the session"])
def test_an_output_export_would_refuse_is_refused_before_the_session_is_read(tmp_path, src, runner, monkeypatch, target):
    import pisess.core.analyses.export as export_mod

    out = {"a file": str(tmp_path / "old.md"), "/dev/null": os.devnull, "a directory": str(tmp_path),
           "the session": src}[target]
    if target == "a file":
        Path(out).write_bytes(b"mine")

    def never(*a, **k):
        raise AssertionError("the session was read")

    monkeypatch.setattr(export_mod, "export_session", never)
    r = runner.invoke(app, ["export", src, "-o", out, "--format", "md"])
    assert r.exit_code == 2, r.output
    assert "refusing" in r.stderr or "is a directory" in r.stderr
    if target == "a file":
        assert Path(out).read_bytes() == b"mine"


def test_a_run_that_ends_at_once_keeps_the_exports_values_until_then(monkeypatch):
    """``output.outlive``: what the export made is kept to the end of a process that ends with
    ``os._exit`` (never freed one by one), and not kept in a run that returns (tests, a caller in
    this process: kept there, it would only grow)."""
    from pisess.cli import output

    monkeypatch.setattr(output, "_outliving", [])
    value = object()
    monkeypatch.setattr(output, "ENDS_AT_ONCE", [False])
    output.outlive(value)
    assert output._outliving == []
    monkeypatch.setattr(output, "ENDS_AT_ONCE", [True])
    output.outlive(value)
    assert output._outliving == [value]


def test_a_big_write_is_handed_to_the_disk_as_it_goes(tmp_path, monkeypatch):
    """``write_atomically`` advises the kernel to start writing back each ``EVERY`` bytes written
    (ranges one after the other, from the file's start), so the final fsync waits for the last of
    them only; a file system that refuses the advice is asked once, and the file is written whole
    either way."""
    import os

    from pisess.core.reading import files

    monkeypatch.setattr(files._EarlyWriteback, "EVERY", 1000)
    for refuses in (False, True):
        calls: list = []

        def advise(fd, offset, length, advice, refuses=refuses, calls=calls):
            calls.append((offset, length, advice))
            if refuses:
                raise OSError(22, "no")
        monkeypatch.setattr(os, "posix_fadvise", advise)
        path = str(tmp_path / f"out-{refuses}.bin")
        files.write_atomically(path, iter([b"a" * 700, b"b" * 700, b"c" * 700, b"d" * 700, b"e" * 100]))
        with open(path, "rb") as fh:
            assert fh.read() == b"a" * 700 + b"b" * 700 + b"c" * 700 + b"d" * 700 + b"e" * 100
        if refuses:
            assert calls == [(0, 1400, os.POSIX_FADV_DONTNEED)]
        else:
            assert calls == [(0, 1400, os.POSIX_FADV_DONTNEED), (1400, 1400, os.POSIX_FADV_DONTNEED)]


@pytest.mark.parametrize("way", ["insert", "unaligned", "refused", "no-insert", "helper-failed", "no-helper",
                                 "one-process", "written-back", "writeback-refused"])
def test_a_tail_written_first_ends_the_same_file(way, tmp_path, monkeypatch, request):
    """``write_atomically``'s ``tail`` (the explorer page's messages) is written first by a helper
    process while the head's pieces are made, and the head put in front of it: inserted where the
    file system does it and the head is whole blocks, else the tail moved up for it; the pieces
    in order where the file system cannot insert, the helper failed or could not start, or no
    other process may run.  The helper starts the disk's writing as it copies (every few bytes
    here), and goes on where the system refuses that.  The file is the same every way, bytes and
    spans of another file alike."""
    from pisess.core import parallel
    from pisess.core.reading import files
    from pisess.core.reading.images import Span

    if way in ("insert", "written-back", "writeback-refused"):  # (where the file system can insert blocks: see inserting_dir)
        tmp_path = request.getfixturevalue("inserting_dir")
    source = tmp_path / "spool.bin"
    source.write_bytes(bytes(range(256)) * 3000)
    made = []  # (the head's pieces, as they are made: here, while the child writes the tail)
    with open(source, "rb") as spool:
        def head():
            made.append("head")
            yield b"<head>" + b"h" * (files.INSERT_ALIGN - 6 - (way == "unaligned") * 100)
            yield Span(spool, str(source), 10, files.INSERT_ALIGN)
        tail = [Span(spool, str(source), 5000, 700_000), b"\n--\n", Span(spool, str(source), 3, 40_001), b"end"]
        expected = b"".join(b if type(b) is bytes else source.read_bytes()[b.offset:b.offset + b.length]
                            for b in [*head(), *tail])
        made.clear()
        if way in ("refused", "unaligned"):
            monkeypatch.setattr(files, "_can_insert", lambda fd: True)
        if way == "refused":
            monkeypatch.setattr(files, "_insert_range", lambda *a: False)
        if way == "no-insert":
            monkeypatch.setattr(files, "_can_insert", lambda fd: False)
        if way in ("helper-failed", "no-helper"):
            monkeypatch.setattr(files, "_can_insert", lambda fd: True)
        if way == "helper-failed":  # (after writing some of the tail)
            monkeypatch.setattr(files, "_TAIL_COPIER", files._TAIL_COPIER.replace("os.fdatasync(out)", "sys.exit(3)"))
        if way == "no-helper":
            monkeypatch.setattr(files, "_copier_command", lambda: [str(tmp_path / "no-such-interpreter")])
        if way in ("written-back", "writeback-refused"):
            monkeypatch.setattr(files._EarlyWriteback, "EVERY", 5000)
        if way == "writeback-refused":
            advice = "os.posix_fadvise(out, start + done, total - done, os.POSIX_FADV_DONTNEED)"
            assert advice in files._TAIL_COPIER
            monkeypatch.setattr(files, "_TAIL_COPIER", files._TAIL_COPIER.replace(advice, "raise OSError(22, 'no')"))
        moved = []
        real_move = files._move_up
        monkeypatch.setattr(files, "_move_up", lambda *a: moved.append(1) or real_move(*a))
        first = []
        real_first = files._tail_first
        monkeypatch.setattr(files, "_tail_first", lambda *a: first.append(real_first(*a)))
        previous = parallel.configure(parallel.Settings(jobs=1 if way == "one-process" else 2))
        try:
            path = str(tmp_path / f"out-{way}.bin")
            files.write_atomically(path, head(), tail=tail)
        finally:
            parallel.configure(previous)
    with open(path, "rb") as fh:
        assert fh.read() == expected
    assert made == ["head"]
    assert first == {"insert": [True], "unaligned": [True], "refused": [True], "helper-failed": [False],
                     "no-helper": [False], "written-back": [True], "writeback-refused": [True]}.get(way, [])
    assert moved == ([1] if way in ("unaligned", "refused") else [])


@pytest.fixture
def inserting_dir(tmp_path):
    """A new directory on a file system that can insert blocks in front of a file's bytes
    (``files._can_insert``): ``tmp_path``, else one in the checkout, removed after the test (the
    tests' files are on /dev/shm, whose tmpfs cannot)."""
    import os
    import pathlib
    import tempfile

    from pisess.core.reading import files

    for place in (tmp_path, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        with tempfile.TemporaryFile(dir=place) as fh:
            if files._can_insert(fh.fileno()):
                break
    else:
        pytest.skip("no file system here inserts blocks (FALLOC_FL_INSERT_RANGE: ext4 and XFS do)")
    if place == tmp_path:
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(prefix=".pytest-insert-", dir=place) as made:
        yield pathlib.Path(made)


def test_inserting_blocks_in_front_of_a_file_where_the_file_system_can(inserting_dir):
    """``_insert_range`` puts whole blocks in front of a file's bytes where the file system can
    (ext4, XFS), and only whole blocks; the probe ``_can_insert`` leaves the file empty."""
    import os

    from pisess.core.reading import files

    path = inserting_dir / "f.bin"
    with open(path, "w+b") as fh:
        assert files._can_insert(fh.fileno())
        assert os.fstat(fh.fileno()).st_size == 0
        fh.write(b"x" * (3 * files.INSERT_ALIGN))
        fh.flush()
        assert files._insert_range(fh.fileno(), 0, files.INSERT_ALIGN)
        assert not files._insert_range(fh.fileno(), 0, 100)  # (not whole blocks)
        fh.seek(0)
        assert fh.read() == bytes(files.INSERT_ALIGN) + b"x" * (3 * files.INSERT_ALIGN)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked children: POSIX only")
@pytest.mark.parametrize("child", ["counts", "fails"])
def test_a_long_contexts_secrets_are_counted_beside_its_rendering(tmp_path, monkeypatch, child):
    """A context of ``COUNT_APART_MIN`` messages or more, exported without ``--redact``, has its
    secrets counted in a forked child while it is rendered: the same export and the same counts
    as counted here (a child that fails is counted here); with ``--redact`` nothing is forked."""
    from pisess.core import parallel
    from pisess.core.analyses import export as export_mod

    monkeypatch.setattr(export_mod, "COUNT_APART_MIN", 40)
    lines = [header()]
    for i in range(60):
        text = f"step {i}: DB_PASSWORD=hunter{i}!x" if i % 7 == 0 else f"step {i}: ghp_{'a1B2' * 9}" if i % 11 == 0 \
            else f"step {i}"
        lines.append(msg(f"u{i}", f"u{i - 1}" if i else None, i, {"role": "user", "content": text}))
    src = write_session(tmp_path, lines)
    forked: list = []
    real_init, real_result = parallel.Child.__init__, parallel.Child.result
    monkeypatch.setattr(parallel.Child, "__init__", lambda self, fn, *a: forked.append(fn.__name__) or real_init(self, fn, *a))
    if child == "fails":
        monkeypatch.setattr(parallel.Child, "result", lambda self: real_result(self) and None)

    def export(jobs: int, redact: bool = False):
        previous = parallel.configure(parallel.Settings(jobs=jobs))
        try:
            s = open_session(src, "auto")
            return export_context(build_context(s), "md", ExportOptions(redact=redact))
        finally:
            parallel.configure(previous)

    alone = export(1)
    assert not forked and sum(alone.secrets.values()) == 9 + 5  # (u0, a multiple of both, holds the password)
    beside = export(2)
    assert forked == ["_secrets_of"]
    assert (beside.data, beside.secrets) == (alone.data, alone.secrets)
    forked.clear()
    assert export(2, redact=True).secrets == export(1, redact=True).secrets and not forked
