"""The browser the HTML page's tests run in (tests/page_browser.py): Debian's Chromium through
Playwright, skipped when there is none and failed instead when CI requires it; and the exported
page opened from ``file://`` in it shows the leaf's last reply and requests nothing but itself.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from conftest import cli_runner, invoke
from page_browser import REQUIRE_ENV, browser_missing, file_url, find_chromium

EXAMPLES = sorted(glob.glob(str(Path(__file__).parent.parent / "pisess/examples/sessions/*/*.jsonl")))


def test_no_chromium_skips_with_the_reason_by_default():
    with pytest.raises(pytest.skip.Exception, match="no Chromium here.*apt-get install chromium"):
        browser_missing("no Chromium here", environ={})


@pytest.mark.parametrize("value", ["1", "yes"])
def test_no_chromium_fails_when_ci_requires_the_browser(value):
    with pytest.raises(pytest.fail.Exception, match=f"no Chromium here.*{REQUIRE_ENV}"):
        browser_missing("no Chromium here", environ={REQUIRE_ENV: value})


def test_find_chromium_takes_the_named_executable_and_refuses_a_plain_file(tmp_path, monkeypatch):
    exe = tmp_path / "chromium-here"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert find_chromium({"PISESS_CHROMIUM": str(exe)}) == str(exe)
    exe.chmod(0o644)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium({"PISESS_CHROMIUM": str(exe)}) in (None, "/usr/bin/chromium")


def test_exported_page_opens_from_file_and_requests_only_itself(page, tmp_path, monkeypatch):
    runner = cli_runner(monkeypatch)
    session = EXAMPLES[0]
    out = tmp_path / "page.html"
    assert invoke(runner, "export", session, "--format", "html", "-o", str(out)).exit_code == 0
    doc = json.loads(invoke(runner, "context", session, "--json").stdout)
    last_text = [b["text"] for b in doc["messages"][-1]["content"] if b.get("type") == "text"][-1]

    requests: list[str] = []

    def record(request):
        requests.append(request.url)

    page.on("request", record)
    try:
        page.goto(file_url(out))
        assert last_text in page.inner_text("body")
    finally:
        page.remove_listener("request", record)
    assert requests == [file_url(out)]
