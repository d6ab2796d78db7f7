"""Session text is untrusted: the HTML page (``pisess export --format html``) opened in a real
browser runs no script of a session's, opens no dialog, requests nothing but itself, breaks no
Content-Security-Policy rule, and carries the CSP meta (issue 33).

Every payload would set ``window.__pwned`` (or open a dialog) if it ever became markup or code; the
test opens the page, visits every node on every tab, searches and compares, then checks that it
never did.  Pages are also made from the hostile corpus of ``tests/hostile/gen_hostile.py``.
"""

from __future__ import annotations

import base64
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import assistant, cli_runner, entry, header, invoke, message, user, write_session
from page_browser import ACTION_TIMEOUT_MS, file_url

HERE = Path(__file__).resolve().parent

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1;alert(1)">',
    "</script><script>window.__pwned=2;alert(2)</script>",
    '<svg onload="window.__pwned=3;alert(3)"></svg>',
    "[x](javascript:window.__pwned=4) and [y](JAVASCRIPT:alert(4)) <a href=\"javascript:window.__pwned=4\">a</a>",
    "</style><script>window.__pwned=5</script><style>",
    "line\u2028window.__pwned=6\u2029sep \"; window.__pwned=6; \"",
    "<!-- <script>window.__pwned=7</script> -->",
    "<iframe src=\"data:text/html,<script>parent.__pwned=8</script>\"></iframe><object data=x></object>",
    "${window.__pwned=9}`; window.__pwned=9; `",
    "<base href=\"http://example.invalid/\"><link rel=stylesheet href=http://example.invalid/x.css>",
    "![i](http://example.invalid/track.png) <img src=http://example.invalid/t.png>",
    "<meta http-equiv=refresh content=\"0;url=javascript:window.__pwned=10\">",
]
EVIL_IMAGE = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=11"/>').decode()


def hostile_session(directory: Path) -> str:
    """A session with every payload in every place a page draws text from."""
    joined = "\n\n".join(PAYLOADS)
    lines: list[Any] = [header(cwd="/tmp/<img src=x onerror=window.__pwned=12>")]
    lines.append(user("u1", None, joined))
    lines.append(message("a1", "u1", {
        "role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "<b>m</b>",
        "stopReason": "toolUse", "timestamp": 2,
        "content": [{"type": "thinking", "thinking": joined},
                    {"type": "text", "text": joined},
                    {"type": "toolCall", "id": "c1", "name": "<script>window.__pwned=13</script>",
                     "arguments": {"command": joined, "</script>": "<!--"}}]}))
    lines.append(message("t1", "a1", {
        "role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False, "timestamp": 3,
        "content": [{"type": "text", "text": joined},
                    {"type": "image", "mimeType": 'image/svg+xml" onerror="window.__pwned=14', "data": EVIL_IMAGE}]}))
    lines.append(assistant("a2", "t1", joined))
    lines.append(entry("label", "l1", "a2", targetId="a2", label="</script><script>window.__pwned=15</script>"))
    lines.append(entry("session_info", "n1", "l1", name="<img src=x onerror=window.__pwned=16>"))
    lines.append(user("u2", "u1", "a side branch " + joined))
    lines.append(assistant("a3", "u2", joined))
    lines.append(entry("compaction", "c2", "a3", summary=joined, firstKeptEntryId="a3", tokensBefore=10))
    lines.append(user("u3", "c2", "after the compaction " + joined))
    lines.append(entry("custom_message", "m1", "u3", customType="<x>", content=joined, display=True))
    return write_session(directory, lines, name="payloads.jsonl")


# --- the browser side ------------------------------------------------------------------------------------

WATCH = """() => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
}"""


class Watched:
    """A page in its own context that records requests and dialogs (and answers dialogs, so that
    one cannot hang the test)."""

    def __init__(self, page):
        self.page = page
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(f"({WATCH})()")

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def forget(self) -> None:
        """Empty the records, for the next test."""
        self.requests.clear()
        self.dialogs.clear()

    def open(self, path: Path) -> None:
        self.page.goto(file_url(path))
        self.page.wait_for_function("() => document.documentElement.dataset.ready === '1'", timeout=30_000)

    def assert_clean(self, path: Path) -> None:
        pwned, parent_pwned, csp, links, srcs = self.page.evaluate("""() => [window.__pwned ?? null, parent.__pwned ?? null,
            window.__csp, Array.from(document.querySelectorAll('[href]')).map(a => a.getAttribute('href')),
            Array.from(document.querySelectorAll('[src]')).map(e => e.getAttribute('src'))]""")  # (one round trip)
        assert pwned is None, "a session's script ran"
        assert parent_pwned is None
        assert self.dialogs == [], f"dialogs opened: {self.dialogs}"
        assert set(self.requests) <= {file_url(path)}, f"the page requested {set(self.requests) - {file_url(path)}}"
        assert csp == [], "CSP violations"
        bad = [h for h in links if not re.match(r"(?i)^(https?:|mailto:|#|\?)", h.strip())]
        assert bad == [], f"links other than http(s):, mailto: and the page's own: {bad}"
        assert all(s.startswith("data:image/") for s in srcs), srcs


# A node by its link, or by its row when its id cannot be in a URL (a lone surrogate)
OPEN_NODE = """(id) => { let link;
  try { link = 'entry=' + encodeURIComponent(id); } catch (e) {
    const row = Array.from(document.querySelectorAll('[data-pane=tree] [data-row]')).find(r => r.dataset.entryId === id);
    if (row) row.click();
    return; }
  location.hash = link; }"""


# The filter "all", then on every tab every node in turn, a frame after each (the page drawn as a user
# sees it), every closed section shown opened; then a compare: in one round trip (a Playwright click a
# tab, each a round trip with its own waits, took a fifth of the test)
VISIT_EVERY_NODE = """async () => {
  const open = (OPEN_NODE_FN), frame = () => new Promise(r => requestAnimationFrame(() => r()));
  document.querySelector('[data-filter=all]').click();
  const ids = Array.from(document.querySelectorAll('[data-pane=tree] [data-row]')).map(r => r.dataset.entryId);
  for (const tab of ['entry', 'context', 'path', 'trace']) {
    document.querySelector(`[data-tab=${tab}]`).click();
    for (const id of ids) { open(id); await frame(); }
    for (const toggle of document.querySelectorAll('details:not([open]) > summary')) {
      if (toggle.getClientRects().length) toggle.click(); }
    await frame();
  }
  if (ids.length >= 2) {
    try { location.hash = `a=${encodeURIComponent(ids[0])}&b=${encodeURIComponent(ids[ids.length - 1])}&tab=compare`; }
    catch (e) { /* an id no URL can hold */ }
    // (the link is followed in a task of the browser's: the compare shown, or 10 frames at most)
    for (let i = 0; i < 10 && document.querySelector('[data-pane=compare]').hidden; i++) await frame();
    await frame();
  }
}""".replace("OPEN_NODE_FN", OPEN_NODE)


def visit_everything(page) -> None:
    """Every row clicked on every tab, the "all" filter, a search, a compare: the payloads get every
    chance to be drawn."""
    page.evaluate(VISIT_EVERY_NODE)
    search_everything(page)


def search_everything(page) -> None:
    """A search that hits the payloads: their texts drawn as hits and marked."""
    page.fill("[data-search-input]", "pwned")
    page.press("[data-search-input]", "Enter")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")


#: The watched page of this process's browser (a context a test took a sixth of a hostile case's
#: time): every test opens its page in it anew, with the records emptied.
_WATCHED: list[Watched] = []


@pytest.fixture()
def watched(browser) -> Watched:
    if not _WATCHED or _WATCHED[0].page.is_closed() or _WATCHED[0].page.context.browser is not browser:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        _WATCHED[:] = [Watched(context.new_page())]
    _WATCHED[0].forget()
    return _WATCHED[0]


def export(monkeypatch, session: str, out: Path, *options: str) -> tuple[int, Path]:
    result = invoke(cli_runner(monkeypatch), "export", session, "--format", "html", "-o", str(out), *options)
    return result.exit_code, out


def test_csp_meta_forbids_everything_but_the_pages_own_code(monkeypatch, tmp_path):
    code, out = export(monkeypatch, hostile_session(tmp_path), tmp_path / "page.html")
    assert code == 0
    html = out.read_text(encoding="utf-8")
    metas = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert len(metas) == 1
    policy = {d.split()[0]: d.split()[1:] for d in metas[0].replace("&#x27;", "'").replace("&#39;", "'").split(";") if d.strip()}
    assert policy["default-src"] == ["'none'"]
    assert policy["img-src"] == ["data:"]
    for directive in ("script-src", "style-src"):
        sources = policy.get(directive, [])
        assert sources and all(re.match(r"'(sha256|sha384|sha512|nonce)-", s) for s in sources), (directive, sources)
    assert html.index("Content-Security-Policy") < html.index("<script"), "the policy comes before any script"


def test_embedded_data_escapes_what_would_end_or_break_a_script(monkeypatch, tmp_path):
    code, out = export(monkeypatch, hostile_session(tmp_path), tmp_path / "page.html")
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert "\u2028" not in html and "\u2029" not in html
    element = re.compile(r"<script\b([^>]*)>(.*?)</script>", flags=re.S | re.I)  # as the parser ends them
    scripts = element.findall(html)
    assert "<script" not in element.sub("", html).lower(), "no script element but ours"
    data = [body for attrs, body in scripts if "application/json" in attrs]
    assert data, "the session's data is embedded as a JSON script element"
    for body in data:  # the session's text: nothing the HTML parser reads as an end or a comment
        assert "<!--" not in body and "</" not in body
    for _attrs, body in scripts:  # the code (markdown-it holds "<!--" as a string): never "<!--" then "<script"
        low = body.lower()
        assert "</script" not in low and ("<!--" not in low or "<script" not in low[low.index("<!--"):])


# The default run: images inline (the page with the most to draw), opened on its leaf and searched;
# the full run also draws every node on every tab (the browser's 2 CPU-s), with and without images.
@pytest.mark.parametrize(("images", "everything"), [pytest.param("omit", True, marks=pytest.mark.slow),
                                                    pytest.param("inline", True, marks=pytest.mark.slow),
                                                    ("inline", False)])
def test_payloads_never_run_request_or_open_dialogs(monkeypatch, tmp_path, watched, images, everything):
    code, out = export(monkeypatch, hostile_session(tmp_path), tmp_path / "page.html", "--images", images)
    assert code == 0
    watched.open(out)
    text = watched.page.inner_text("body")
    assert "window.__pwned=2" in text and "<img src" in text, "the payloads are shown as text"
    if everything:
        visit_everything(watched.page)
    else:
        search_everything(watched.page)
    watched.assert_clean(out)


def test_no_script_page_of_payloads_runs_nothing(monkeypatch, tmp_path, watched):
    code, out = export(monkeypatch, hostile_session(tmp_path), tmp_path / "page.html", "--no-script")
    assert code == 0
    watched.page.goto(file_url(out))
    assert "window.__pwned=2" in watched.page.inner_text("body")
    watched.assert_clean(out)


# --- the hostile corpus -------------------------------------------------------------------------------------

_spec = importlib.util.spec_from_file_location("gen_hostile", HERE / "hostile" / "gen_hostile.py")
gen = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("gen_hostile", gen)
_spec.loader.exec_module(gen)  # type: ignore[union-attr]

#: Files of megabytes (a 50,000-entry chain, a 5 MB line): their pages are the bench's business.
TOO_BIG = {"chain_50000", "siblings_5000", "line_5mb", "many_lines_no_newline_at_all", "cycle_10000", "deep_nesting"}
#: Not a regular file (a directory, dangling or looping links): nothing to export.
NOT_FILES = {"dir_named_jsonl", "symlink_dangling", "symlink_loop"}
#: The default run's case (a browser's 3 s of CPU a page): escapes and markup in every kind of entry,
#: in ids and types (raw line separators, also in the payloads' session, in the slow run); the full
#: run takes every case.
QUICK_CASES = {"escapes"}


@pytest.fixture(scope="module")
def hostile_corpus(tmp_path_factory):
    return gen.generate(str(tmp_path_factory.mktemp("hostile")))


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if c in QUICK_CASES else pytest.mark.slow)
                                  for c in gen.case_names(False) if c not in TOO_BIG | NOT_FILES])
def test_pages_of_hostile_sessions_are_inert(case, hostile_corpus, monkeypatch, tmp_path, watched):
    path = hostile_corpus["cases"][case].path
    assert Path(path).is_file()
    code, out = export(monkeypatch, path, tmp_path / "page.html")
    assert code in (0, 1, 2)
    if code != 0:
        assert not out.exists(), "a refused export leaves no page"
        return
    watched.open(out)
    visit_everything(watched.page)
    watched.assert_clean(out)
