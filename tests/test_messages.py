"""The message model (pisess.core.model.messages) and its three backends: the terminal's context view,
Markdown and HTML.  Each message is read once, so what the three show agrees: an image's size, a
role's words, where text is clipped, a system message's sections and tools."""

from __future__ import annotations

import base64

import pytest

from conftest import header, message, write_session
from pisess.cli.app import app
from pisess.core.analyses.export import ExportOptions, export_context
from pisess.core.model import kinds
from pisess.core.model.context import build_context
from pisess.core.model.messages import Limits, clip, message_view
from pisess.core.model.text import image_size, short_id
from pisess.core.reading.session import open_session

# 100 bytes: base64 with two "=" of padding (the terminal used to count 101 B, the exports 100 B)
IMAGE = base64.b64encode(bytes(range(100))).decode()
SYSTEM = {"role": "system", "content": [{"type": "text", "text": "You are a careful engineer."}],
          "sections": {"preamble": "You are\u2026", "cwd": None, "7": "seven"},
          "toolsAdded": [{"name": "read", "description": "Read a file", "parameters": {}},
                         {"name": "grep", "description": "Search files", "parameters": {}}],
          "toolsRemoved": [{"name": "write"}], "timestamp": 1784970845000}


def lines() -> list:
    return [
        header(),
        message("s1", None, SYSTEM),
        message("u1", "s1", {"role": "user", "timestamp": 1784970846000,
                             "content": [{"type": "text", "text": "look"},
                                         {"type": "image", "mimeType": "image/png", "data": IMAGE}]}),
        message("r1", "u1", {"role": "toolResult", "toolName": "shot", "toolCallId": "c1", "isError": False,
                             "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"},
                                         {"type": "image", "mimeType": "image/png", "data": IMAGE}]}),
    ]


@pytest.fixture()
def src(tmp_path) -> str:
    return write_session(tmp_path, lines())


def terminal(runner, path: str, *args: str) -> str:
    r = runner.invoke(app, ["context", path, "--no-pager", *args], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def export(path: str, fmt: str) -> str:
    return export_context(build_context(open_session(path, "cli", light=True)), fmt, ExportOptions()).data.decode()


def test_image_size_is_decoded_bytes_without_padding():
    """Base64 padding is not data: 100 bytes encode to 136 characters, two of them '='."""
    assert IMAGE.endswith("==")
    assert image_size({"type": "image", "data": IMAGE}) == 100
    assert image_size({"type": "image", "data": 5}) == 0


def test_the_image_size_is_the_same_in_all_three_backends(runner, src):
    """The terminal, Markdown and HTML show the one size the model counted (the terminal used to
    count the padding as bytes)."""
    ref = "[image image/png, 100 B]"
    out = terminal(runner, src)
    assert out.count(ref) == 2 and "101 B" not in out
    assert export(src, "md").count(ref.replace("[", "\\[").replace("]", "\\]")) == 2
    assert export(src, "html").count(ref) == 2


def test_the_tree_preview_counts_the_image_the_same_way(runner, src):
    r = runner.invoke(app, ["tree", src, "--no-pager"], catch_exceptions=False)
    assert "[image image/png, 100 B]" in r.stdout


def test_a_tool_result_has_one_line_count_in_every_backend(runner, src):
    """Two text blocks are two lines (the terminal joined them with a space and counted one)."""
    assert "tool result \u00b7 shot (r1) \u00b7 2 lines" in terminal(runner, src)
    assert "2 lines" in export(src, "md") and "2 lines" in export(src, "html")


def test_the_system_role_renders_as_a_system_message_in_all_three_backends(runner, src):
    """Its text, the sections it sets and removes, the tools it adds and removes; never its JSON."""
    out = terminal(runner, src)
    assert "system (s1)" in out
    assert "You are a careful engineer." in out
    assert "sets sections: 7, preamble" in out  # JavaScript's key order: index keys first
    assert "removes sections: cwd" in out
    assert "adds tools: read, grep" in out
    assert "removes tools: write" in out
    md = export(src, "md")
    assert "## 1. System message" in md
    assert "**Sets sections:** 7, preamble" in md and "**Removes sections:** cwd" in md
    assert "- read: Read a file" in md and "**Removes tools:** write" in md
    page = export(src, "html")
    assert "<h2>1. System message</h2>" in page and 'class="msg system"' in page
    assert "<li><code>grep</code>: Search files</li>" in page and "Removes tools: write" in page
    for text in (out, md, page):
        assert "toolsAdded" not in text and '"parameters"' not in text


def test_the_system_role_has_a_tree_preview_not_json(runner, src):
    r = runner.invoke(app, ["tree", src, "--no-pager"], catch_exceptions=False)
    row = next(ln for ln in r.stdout.splitlines() if "s1" in ln)
    assert "system" in row and "sections 7, preamble" in row and "{" not in row


def test_a_message_kind_is_the_kind_tables_row():
    assert [kinds.of_message({"role": r}).word for r in ("toolResult", "system", "branchSummary", "weird")] == \
        ["tool", "system", "branch sum", "weird"]
    assert kinds.of_message("not a message").word == "message"


def test_clip_counts_lines_and_characters_once():
    c = clip("a\nb\nc\nd", 2)
    assert (c.text, c.total_lines, c.cut_lines) == ("a\nb", 4, 2)
    c = clip("x" * 50, None, 10)
    assert (c.text, c.cut_lines, c.cut_chars) == ("x" * 10, 1, 40)
    assert clip("a\nb", 0).text == "" and clip("a\nb", 0).cut_lines == 2


def test_limits_decide_where_each_kind_of_text_is_clipped():
    """The terminal's -n N: N lines of a result, 4N of a user's text, 2N of a summary; an export's
    --max-lines cuts results only."""
    text = "\n".join(str(i) for i in range(100))
    user = {"role": "user", "content": text}
    result = {"role": "toolResult", "toolName": "t", "content": text}
    summary = {"role": "compactionSummary", "summary": text}
    term = Limits.terminal(5, full=False)
    assert message_view(user, {}, term).blocks[0].cut_lines == 80
    assert message_view(result, {}, term).blocks[0].cut_lines == 95
    assert message_view(summary, {}, term).blocks[0].cut_lines == 90
    doc = Limits.document(5)
    assert message_view(user, {}, doc).blocks[0].cut_lines == 0
    assert message_view(result, {}, doc).blocks[0].cut_lines == 95
    assert message_view(summary, {}, doc).blocks[0].cut_lines == 0
    assert message_view(result, {}, Limits.terminal(5, full=True)).blocks[0].cut_lines == 0


def test_the_export_says_where_it_cut_a_result(tmp_path):
    text = "\n".join(str(i) for i in range(30))
    path = write_session(tmp_path, [header(), message("r1", None, {"role": "toolResult", "toolName": "t",
                                                                    "content": text})])
    ctx = build_context(open_session(path, "cli", light=True))
    md = export_context(ctx, "md", ExportOptions(max_lines=10)).data.decode()
    assert "20 more lines cut: showing 10 of 30 (--max-lines 10)" in md


def test_short_id_is_one_function():
    assert short_id("0195e682-aaaa") == "0195e682"
    assert short_id(None) == short_id("") == "-"
    assert short_id(12345678901) == "12345678"
    assert short_id("\x1b[31mred") == "\\x1b[31m"


def test_the_view_holds_session_text_unescaped_and_every_backend_escapes_it(runner, tmp_path):
    evil = "\x1b]0;pwned\x07 [bold]x[/bold]"
    path = write_session(tmp_path, [header(), message("u1", None, {"role": "user", "content": evil})])
    v = message_view({"role": "user", "content": evil}, {})
    assert v.blocks[0].text == evil
    out = terminal(runner, path)
    assert "\x1b" not in out and "\\x1b]0;pwned\\x07 [bold]x[/bold]" in out
    for fmt in ("md", "html"):
        assert "\x1b" not in export(path, fmt) and "\x07" not in export(path, fmt)


def test_edit_and_hidden_fields_exist_and_default_to_none():
    v = message_view({"role": "user", "content": "x"}, {"id": "u1"})
    assert v.edit is None and v.hidden is None and v.source_id == "u1"


def test_unknown_roles_show_their_content_and_name_the_rest_never_raw_json(runner, tmp_path):
    m = {"role": "mystery", "content": "visible text", "extra": {"k": 1}}
    path = write_session(tmp_path, [header(), message("x1", None, m)])
    out = terminal(runner, path)
    assert "mystery (x1)" in out and "visible text" in out and "also carries extra" in out
    assert '"extra"' not in out and '"role"' not in out
    md = export(path, "md")
    assert "Message (mystery)" in md and "visible text" in md and "also carries extra" in md
    assert '"role"' not in md


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_assistant_usage_is_the_same_words_as_the_terminal(runner, tmp_path, fmt):
    m = {"role": "assistant", "provider": "p", "model": "m", "content": [{"type": "text", "text": "ok"}],
         "usage": {"input": 1200, "output": 34, "cacheRead": 600, "cost": {"total": 0.01}}, "stopReason": "stop"}
    path = write_session(tmp_path, [header(), message("a1", None, m)])
    words = "1,200 in / 34 out \u00b7 600 cached \u00b7 $0.0100"
    assert words in terminal(runner, path)
    assert words.replace("$", "\\$" if fmt == "md" else "$") in export(path, fmt)



def test_a_checkpoints_system_message_says_where_it_came_from(runner, tmp_path):
    """pi 1.6 emits a compaction's systemMessage before its summary (C.5): it is the checkpoint's,
    not a retained message."""
    lines = [header(), message("u1", None, {"role": "user", "content": "hi"}),
             {"type": "compaction", "id": "k1", "parentId": "u1", "timestamp": "2026-07-25T09:14:05.000Z",
              "summary": "S", "firstKeptEntryId": "u1", "tokensBefore": 10,
              "systemMessage": {"role": "system", "content": "P", "timestamp": 1}}]
    path = write_session(tmp_path, lines)
    out = terminal(runner, path)
    assert "system (compaction k1)" in out and "retained" not in out
    assert "checkpoint of compaction k1" in export(path, "md")


def test_hostile_section_and_tool_names_stay_text_in_markdown(tmp_path):
    """Names that look like Markdown (a list, a heading, HTML, a fence) are literal in the export:
    the parsed document has the one list of tools and nothing else a name could start."""
    from markdown_it import MarkdownIt

    names = ["1. ordered", "# heading", "<script>x()</script>", "```", "- dash", "*star*"]
    m = {"role": "system", "content": "", "sections": {n: "v" for n in names},
         "toolsAdded": [{"name": n, "description": n} for n in names], "toolsRemoved": [{"name": n} for n in names]}
    path = write_session(tmp_path, [header(), message("s1", None, m)])
    md = export(path, "md")
    tokens = MarkdownIt("commonmark").parse(md)
    kinds = [t.type for t in tokens]
    assert "ordered_list_open" not in kinds and "html_inline" not in kinds and "html_block" not in kinds
    facts = md.split("\n\n")[1].count("\n") + 1  # the document's facts are the first list
    assert "fence" not in kinds and kinds.count("bullet_list_open") == 2
    assert sum(t.type == "list_item_open" for t in tokens) == facts + len(names)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == [headings[0], "1. System message"]
    text = "".join(c.content for t in tokens if t.type == "inline" for c in t.children if c.type == "text")
    for n in names:
        assert n in text
