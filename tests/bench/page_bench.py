"""Drives one exported HTML page in headless Chromium and prints what it measured as one JSON line.

Run by bench.py's case 33 (``page``) in the repo's venv (it needs Playwright), once per page and
in a fresh browser each time, so that pisess's page and pi's ``--export`` page of the same session
are measured the same way:

    .venv/bin/python tests/bench/page_bench.py pisess PAGE.html [--node ID] [--search TEXT]
    .venv/bin/python tests/bench/page_bench.py pi PAGE.html

``first_paint_s``: from the start of navigation (``page.goto`` of the file:// URL) until the page
has drawn what a reader first sees: for pisess the tree and the selected node's context
(``data-ready="1"``, ``[data-pane=tree] [data-row]`` and ``[data-pane=context] [data-msg]``
present), for pi its tree (``#tree-container .tree-node``); measured in Python around the
browser, polled every animation frame inside the page.
``select_ms``: pisess only: the Context tab shown, then the time from clicking another node's row
(``--node``; by default the first row of the tree, a node far from the leaf) until its context is
drawn (the entry pane names it and ``[data-msg]`` are there), measured inside the page with
``performance.now()``, median of 5 (alternating between that node and the leaf).
``search_ms``: pisess only: from setting the search box to ``--search`` (an ``input`` event and
Enter, as typing does; the page may wait a moment after the last key before it searches: that wait
is counted) until the first hit is listed, inside the page, median of 3, each after the hits of
the one before are gone.
``js_heap_mb``: the page's JS heap after the first paint (CDP ``Performance.getMetrics``).
``read_s``: when the browser had read the whole file (``DOMContentLoaded``, from the start of the
navigation, by the page's clock; taken last).  pisess's page is drawn before that (the leaf's
context comes first in the file): the selections and searches above run as soon as it is drawn,
as a user's clicks would, while the rest is still being read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]

PISESS_DRAWN = """() => document.documentElement.dataset.ready === '1'
  && !!document.querySelector('[data-pane=tree] [data-row]')
  && !!document.querySelector('[data-pane=context] [data-msg], [data-pane=entry][data-entry-id]')"""
PI_DRAWN = "() => document.querySelectorAll('#tree-container .tree-node').length > 0"

# Click the node's row (or follow its link when no row of it is drawn) and wait, frame by frame,
# until the entry pane names it and its context is drawn.
SELECT = """async (id) => {
  const row = Array.from(document.querySelectorAll('[data-pane=tree] [data-row]')).find(r => r.dataset.entryId === id);
  const t0 = performance.now();
  if (row && row.getClientRects().length) row.click(); else location.hash = 'entry=' + encodeURIComponent(id) + '&tab=context';
  for (;;) {
    await new Promise(r => requestAnimationFrame(() => r()));
    const e = document.querySelector('[data-pane=entry]');
    if (e && e.dataset.entryId === id && document.querySelector('[data-pane=context] [data-msg]')) return performance.now() - t0;
    if (performance.now() - t0 > 60000) return -1;
  }
}"""

SEARCH = """async (q) => {
  const box = document.querySelector('[data-search-input]');
  box.value = ''; box.dispatchEvent(new Event('input', {bubbles: true}));
  // the earlier search's hits gone first (the page may wait a moment after typing before it searches)
  for (const t = performance.now(); document.querySelector('[data-pane=search] [data-hit]') && performance.now() - t < 5000;)
    await new Promise(r => requestAnimationFrame(() => r()));
  const t0 = performance.now();
  box.value = q;
  box.dispatchEvent(new Event('input', {bubbles: true}));
  box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
  for (;;) {
    await new Promise(r => requestAnimationFrame(() => r()));
    if (document.querySelector('[data-pane=search] [data-hit]')) return performance.now() - t0;
    if (performance.now() - t0 > 60000) return -1;
  }
}"""


def js_heap_mb(page) -> float:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return round(metrics.get("JSHeapUsedSize", 0) / 1048576, 1)


def measure(kind: str, path: Path, node: str | None, query: str | None, timeout_s: float) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {"kind": kind, "page_bytes": path.stat().st_size}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        t0 = time.perf_counter()
        page.goto(path.resolve().as_uri(), wait_until="commit", timeout=timeout_s * 1000)
        page.wait_for_function(PISESS_DRAWN if kind == "pisess" else PI_DRAWN, polling="raf", timeout=timeout_s * 1000)
        out["first_paint_s"] = round(time.perf_counter() - t0, 3)
        out["js_heap_mb"] = js_heap_mb(page)
        if kind == "pisess":
            out["rows_drawn"] = page.evaluate("() => document.querySelectorAll('[data-pane=tree] [data-row]').length")
            leaf = page.evaluate("() => document.querySelector('[data-pane=entry]').dataset.entryId")
            other = node or page.evaluate("() => document.querySelector('[data-pane=tree] [data-row]').dataset.entryId")
            tab = page.query_selector("[data-tab=context]")
            if tab:
                tab.click()
            times = []
            for i in range(5):
                got = page.evaluate(SELECT, other if i % 2 == 0 else leaf)
                if got >= 0:
                    times.append(got)
            out["select_ms"] = round(statistics.median(times), 1) if times else None
            out["select_runs_ms"] = [round(t) for t in times]
            out["select_node"] = other
            if query:
                found = [page.evaluate(SEARCH, query) for _ in range(3)]
                found = [f for f in found if f >= 0]
                out["search_ms"] = round(statistics.median(found), 1) if found else None
                out["search_runs_ms"] = [round(f) for f in found]  # (the first may wait for the file to be read)
                out["search_hits"] = page.evaluate("() => document.querySelectorAll('[data-pane=search] [data-hit]').length")
        else:
            out["rows_drawn"] = page.evaluate("() => document.querySelectorAll('#tree-container .tree-node').length")
        page.wait_for_function("() => document.readyState !== 'loading'", timeout=timeout_s * 1000)
        read = page.evaluate("() => performance.getEntriesByType('navigation')[0].domContentLoadedEventStart")
        out["read_s"] = round(read / 1000, 3)
        out["page_errors"] = errors[:3]
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["pisess", "pi"])
    p.add_argument("page", type=Path)
    p.add_argument("--node", help="the node to select (pisess; default the tree's first row)")
    p.add_argument("--search", help="the text to search for (pisess)")
    p.add_argument("--timeout", type=float, default=600, help="seconds to wait for the first paint")
    args = p.parse_args(argv)
    print(json.dumps(measure(args.kind, args.page, args.node, args.search, args.timeout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
