"""The HTML explorer page (``pisess export --format html``, issue 33) in a real browser, read
through its DOM contract (``pisess help export``): after clicking a node, its Context is what
``pisess context --leaf NODE --json`` says the model sees, its Path is ``pisess path``'s; Compare is
``pisess diff --json``; branch costs are ``stats --by branch``'s; then keys, filters, search, deep
links, the narrow layout, print and ``--no-script``.

The answers are read from the page (its DOM and ``window.pisessPage.sourceOf``), the expected ones
from the commands' --json, never from the Python code that built the page.  Every node of every
session in ``pisess/examples/`` and ``tests/fixtures/`` is checked in the full run (``-m ''``); the
default run checks a few nodes (``QUICK_NODES``) of one or two sessions.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import assistant, cli_runner, header, invoke, user, write_session
from page_browser import file_url

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "pisess" / "examples" / "sessions").glob("*/*.jsonl"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.jsonl"))
SESSIONS = EXAMPLES + FIXTURES
#: The default run's sessions: one of the examples and one with context edits and a compaction.
QUICK = {EXAMPLES[-1].name, "edited.jsonl"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


#: How many nodes of a session the default run checks (a node: a click, a tab, a command; about
#: 0.15 s of CPU, most of it the browser's).
QUICK_NODES = 5


def in_this_run(nodes: list[str]) -> list[str]:
    """Every node in the full run (``pytest -m ''``, CI); in the default run, which takes seconds,
    ``QUICK_NODES`` spread over the session (its first and its last among them), the same in every run."""
    from hypothesis import settings

    if settings.default.max_examples >= 100 or len(nodes) <= QUICK_NODES:
        return nodes
    step = (len(nodes) - 1) / (QUICK_NODES - 1)
    return [nodes[round(i * step)] for i in range(QUICK_NODES)]


def _sessions_param(sessions: list[Path], quick: set[str] = QUICK) -> list[Any]:
    """Every session, those not named in ``quick`` only in the slow run."""
    return [pytest.param(p, id=_rel(p), marks=() if p.name in quick else pytest.mark.slow) for p in sessions]


# --- the commands' answers ----------------------------------------------------------------------------


#: The pages of the sessions in the repository, by session: each made once a process (in
#: ``Cli.page_of``) for the tests that read it (every node, compare, branch costs, the toggle, the
#: filters, the keys...), which only read it.
_PAGES: dict[str, Path] = {}


class Cli:
    """``pisess ... --json`` in-process, as a user's terminal runs it."""

    def __init__(self, monkeypatch, pages: Path):
        self.runner = cli_runner(monkeypatch)
        self.pages = pages

    def json(self, *args: str, ok: tuple = (0,)) -> Any:
        result = invoke(self.runner, *args, "--json")
        assert result.exit_code in ok, result.output
        return json.loads(result.stdout)

    def export(self, session: Path | str, out: Path, *options: str) -> Path:
        result = invoke(self.runner, "export", str(session), "--format", "html", "-o", str(out), *options)
        assert result.exit_code == 0, result.output
        return out

    def page_of(self, session: Path) -> Path:
        """``export SESSION --format html`` of a session of the repository, made once a process."""
        if str(session) not in _PAGES:
            _PAGES[str(session)] = self.export(session, self.pages / f"{len(_PAGES)}.html")
        return _PAGES[str(session)]


@pytest.fixture(scope="session")
def _pages_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pages")


@pytest.fixture()
def cli(monkeypatch, _pages_dir) -> Cli:
    return Cli(monkeypatch, _pages_dir)


def tree_rows(cli: Cli, session: Path) -> list[dict]:
    rows = cli.json("tree", str(session), "--full")["rows"]
    assert all(r.get("kind") == "entry" for r in rows), "tree --full folds nothing"
    return rows


def unique_ids(rows: list[dict]) -> list[str]:
    """The entry ids that name one entry (a duplicated id addresses none of its entries)."""
    counts = Counter(r["id"] for r in rows)
    return [r["id"] for r in rows if isinstance(r["id"], str) and counts[r["id"]] == 1]


def expected_blocks(message: dict) -> list[tuple[str, str | None]]:
    """What the Context tab draws of ``message``, as (data-block, source): text and tool output as
    ``text``, thinking, summaries; tool calls and images as (kind, None); empty texts dropped."""
    role = message.get("role")
    if role in ("compactionSummary", "branchSummary"):
        return [("summary", message.get("summary") or "")]
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    out: list[tuple[str, str | None]] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            out.append(("text", block.get("text")))
        elif kind == "thinking":
            out.append(("thinking", block.get("thinking")))
        elif kind in ("toolCall", "image"):
            out.append((kind, None))
    return [b for b in out if b[1] != ""]


def drawn_blocks(blocks: list[list]) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for kind, source in blocks:
        if kind in ("text", "toolResult"):
            out.append(("text", source))
        elif kind in ("thinking", "summary"):
            out.append((kind, source))
        elif kind in ("toolCall", "image"):
            out.append((kind, None))
    return [b for b in out if b[1] != ""]


def expected_context(doc: dict) -> list[dict]:
    """The Context tab's messages.  pi 0.82.1's SDK reader (harness) says nothing of which entry a
    message came from (no ``messageEntryIds``): the ids are then not compared (None)."""
    edited = set(doc.get("appliedEdits") or {}) - set(doc.get("omittedEntryIds") or [])
    ids = doc.get("messageEntryIds") or [None] * len(doc["messages"])
    out = []
    for entry_id, message in zip(ids, doc["messages"]):
        textual = message["role"] not in ("system", "bashExecution")
        out.append({"id": entry_id, "role": message["role"], "mark": "edited" if entry_id in edited else "",
                    "blocks": expected_blocks(message) if textual else None})
    return out


# --- the page ---------------------------------------------------------------------------------------------

READ_CONTEXT = """() => Array.from(document.querySelectorAll('[data-pane=context] [data-msg]')).map(m => ({
  id: m.dataset.entryId, role: m.dataset.role, mark: m.dataset.mark || '',
  blocks: Array.from(m.querySelectorAll('[data-block]')).map(b => [b.dataset.block, window.pisessPage.sourceOf(b)])
}))"""

# the outermost [data-entry-id] elements of a pane, in document order (an item may hold more inside)
READ_IDS = """(pane) => Array.from(document.querySelectorAll(`[data-pane=${pane}] [data-entry-id]`))
  .filter(e => !e.parentElement.closest(`[data-pane=${pane}] [data-entry-id]`)).map(e => e.dataset.entryId)"""

NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => r()))"


def open_page(page, path: Path, fragment: str = "") -> None:
    """Load the page at ``path`` anew (a fresh load, also where ``page`` shows it already: the
    pages are shared among tests, and a link to the same page with another fragment is only
    followed in it), then wait until it is ready."""
    url = file_url(path, fragment)
    if page.url.split("#")[0] == url.split("#")[0]:
        page.goto("about:blank")
    page.goto(url)
    page.wait_for_function("() => document.documentElement.dataset.ready === '1'")  # (a function: CSP forbids eval)


# The tree may draw only the rows in view (a long session's tree is virtual): these scroll its
# scroller (the nearest scrolling ancestor of a row) a half screen at a time.
SCROLLER = """() => { let sc = document.querySelector('[data-pane=tree] [data-row]');
  const scrolls = e => e.scrollHeight > e.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(e).overflowY);
  while (sc && !scrolls(sc)) sc = sc.parentElement;
  return sc; }"""
# (the tree draws the rows of a scroll position in its scroll handler, which the browser calls at
# the next frame: the scan calls it at once, by the scroll event dispatched after each scroll; with
# two frames after each instead, every filter of the filters' sessions, at 1280 and 400 px, read
# the same rows)
SCAN_ROWS = """() => {
  const sc = (SCROLLER_FN)(), seen = new Set(), order = [];
  const take = () => Array.from(document.querySelectorAll('[data-pane=tree] [data-row]'))
    .filter(r => r.getClientRects().length).sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
    .forEach(r => { if (!seen.has(r.dataset.entryId)) { seen.add(r.dataset.entryId); order.push(r.dataset.entryId); } });
  const scrollTo = (top) => { sc.scrollTop = top; sc.dispatchEvent(new Event('scroll')); };
  if (!sc) { take(); return order; }
  const keep = sc.scrollTop;
  for (let top = 0; ; top += Math.max(1, Math.floor(sc.clientHeight / 2))) {
    scrollTo(top); take();
    if (top + sc.clientHeight >= sc.scrollHeight) break;
  }
  scrollTo(keep);
  return order;
}""".replace("SCROLLER_FN", SCROLLER)
# The node's row, drawn and scrolled to the middle of the tree (scrolling the virtual tree from
# the top until it is drawn, the scroll handler called at once as in SCAN_ROWS), or null: the
# filter hides it.
ROW_IN_VIEW = """(id) => {
  const find = () => Array.from(document.querySelectorAll('[data-pane=tree] [data-row]'))
    .find(r => r.dataset.entryId === id && r.getClientRects().length);
  let row = find();
  const sc = (SCROLLER_FN)();
  for (let top = 0; !row && sc && top < sc.scrollHeight; top += Math.max(1, Math.floor(sc.clientHeight / 2))) {
    sc.scrollTop = top; sc.dispatchEvent(new Event('scroll')); row = find();
  }
  if (row) row.scrollIntoView({block: 'center'});
  return row || null;
}""".replace("SCROLLER_FN", SCROLLER)
REVEAL = """async (id) => {
  const row = (ROW_IN_VIEW_FN)(id);
  if (row) await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return !!row;
}""".replace("ROW_IN_VIEW_FN", ROW_IN_VIEW)


def find_row(page, entry_id: str):
    """The tree row of ``entry_id``, or None (found by equality, not a CSS selector: ids may hold
    anything)."""
    handle = page.evaluate_handle("""(id) => Array.from(document.querySelectorAll('[data-pane=tree] [data-row]'))
        .find(r => r.dataset.entryId === id) || null""", entry_id)
    return handle.as_element()


def row(page, entry_id: str):
    element = find_row(page, entry_id)
    assert element is not None, f"no tree row for {entry_id!r}"
    return element


def selected(page) -> str | None:
    return page.evaluate("""() => { const r = document.querySelectorAll('[data-pane=tree] [data-row][aria-selected=true]');
        return r.length === 1 ? r[0].dataset.entryId : (r.length ? 'MANY' : null); }""")


def shown_node(page) -> str | None:
    return page.evaluate("() => { const e = document.querySelector('[data-pane=entry]'); return e && e.dataset.entryId; }")


def click_filter(page, name: str) -> None:
    page.click(f"[data-pane=tree] [data-filter={name}]")
    page.evaluate(NEXT_FRAME)


def click_tab(page, name: str) -> None:
    page.click(f"[data-tab={name}]")
    page.evaluate(NEXT_FRAME)


def wait_shown(page, entry_id: str) -> None:
    """Wait until the page shows ``entry_id`` as the selected node, then one more frame."""
    page.wait_for_function(
        "(id) => { const e = document.querySelector('[data-pane=entry]'); return e && e.dataset.entryId === id; }", arg=entry_id)
    page.evaluate(NEXT_FRAME)


def select(page, entry_id: str) -> None:
    """Click the node's tree row; a node the filter hides (pi's filters hide an assistant message
    that only calls tools, even under "all") is opened by its link ``#entry=ID`` instead."""
    if page.evaluate(REVEAL, entry_id):
        row(page, entry_id).click()
    else:
        page.evaluate("(id) => { location.hash = 'entry=' + encodeURIComponent(id); }", entry_id)
    wait_shown(page, entry_id)


def visible_rows(page) -> list[str]:
    """Every row the filter shows, in the tree's order, whether drawn now or only after scrolling."""
    return page.evaluate(SCAN_ROWS)


# --- Context, Path, Compare, branch costs: every node --------------------------------------------------


# The every-node pass, in one round trip: each node's row brought into view and clicked (a node the
# filter hides: its link), its open tab read, then each other tab clicked and read (the tab last
# read stays open for the next node: a node's click draws one tab, each tab is read after the
# click that drew it).  The page draws in the click's handler, so each read follows its click with
# no frame between (a frame after each click changed no read: every node of every session of the
# full run, path and context).
READ_NODES = """async ([ids, tabs]) => {
  const readers = {context: READ_CONTEXT_FN, ids: READ_IDS_FN}, out = [];
  const shown = (id) => { const e = document.querySelector('[data-pane=entry]'); return e && e.dataset.entryId === id; };
  for (const id of ids) {
    const row = (ROW_IN_VIEW_FN)(id);
    if (row) row.click();
    else location.hash = 'entry=' + encodeURIComponent(id);
    // (a link is followed in a task of the browser's: waited for, a task at a time, 10 s at most)
    for (const until = performance.now() + 10000; !shown(id); await new Promise(r => setTimeout(r))) {
      if (performance.now() > until) throw new Error('not shown: ' + id);
    }
    const read = [document.querySelector('[data-pane=entry]').dataset.entryId];
    const open = tabs.findIndex(([tab]) => document.querySelector(`[data-tab=${tab}]`).getAttribute('aria-selected') === 'true');
    for (const k of tabs.keys()) {
      const at = (Math.max(open, 0) + k) % tabs.length, [tab, reader] = tabs[at];
      if (at !== open) document.querySelector(`[data-tab=${tab}]`).click();
      read[1 + at] = readers[reader](tab);
    }
    out.push(read);
  }
  return out;
}""".replace("ROW_IN_VIEW_FN", ROW_IN_VIEW).replace("READ_CONTEXT_FN", READ_CONTEXT).replace("READ_IDS_FN", READ_IDS)


def read_nodes(page, nodes: list[str], *tabs: tuple[str, str]) -> dict[str, list]:
    """Click each of ``nodes`` in turn and read each (tab, reader) of ``tabs`` (reader: "context"
    or "ids"), the open one first, clicking the others, all in one round trip: {node: [the node the
    entry pane shows, then the reading of each tab, in the order of ``tabs``]}."""
    return dict(zip(nodes, page.evaluate(READ_NODES, [nodes, [list(t) for t in tabs]])))


def assert_context_is(got: list[dict], doc: dict, node: str) -> None:
    """The Context tab's messages ``got`` are ``doc``'s, ``pisess context --leaf NODE --json``."""
    want = expected_context(doc)
    assert [(m["id"] if w["id"] else None, m["role"], m["mark"]) for m, w in zip(got, want)] == \
        [(w["id"], w["role"], w["mark"]) for w in want] and len(got) == len(want), node
    for g, w in zip(got, want):
        if w["blocks"] is not None:
            assert drawn_blocks(g["blocks"]) == w["blocks"], (node, w["id"])


def root_chain(rows: list[dict], node: str) -> list[str]:
    parent = {r["id"]: r["parentId"] for r in rows}
    chain = [node]
    while parent.get(chain[-1]) is not None:
        chain.append(parent[chain[-1]])
    return chain[::-1]


# (the default run: the session with context edits and a compaction, a few of its nodes; the full
# run every node of every session: one page and one click a node serve the two tabs)
@pytest.mark.parametrize("session", _sessions_param(SESSIONS, {"edited.jsonl"}))
def test_context_and_path_of_every_node_are_the_commands(session, cli, page, tmp_path):
    """Click a node: its Path tab is ``pisess path --leaf NODE --json``'s entries (where that
    reader's path stops at a compaction, ``cutAtCheckpoint``: pi 0.82.1's SDK reader, the page may
    show the whole way from the root, which ends with those entries); its Context tab is ``pisess
    context --leaf NODE --json``'s messages, text for text."""
    rows = tree_rows(cli, session)
    nodes = unique_ids(rows)
    assert nodes, "a session without entries tests nothing"
    out = cli.page_of(session)
    chosen = in_this_run(nodes)
    open_page(page, out)
    click_filter(page, "all")
    read = read_nodes(page, chosen, ("path", "ids"), ("context", "context"))
    for node in chosen:
        entry_pane, shown, got = read[node]
        assert entry_pane == node
        doc = cli.json("path", str(session), "--leaf", node)
        path_ids = [e["id"] for e in doc["entries"]]
        if doc.get("cutAtCheckpoint") and shown != path_ids:
            assert shown == root_chain(rows, node) and shown[-len(path_ids):] == path_ids, node
        else:
            assert shown == path_ids, node
        assert_context_is(got, cli.json("context", str(session), "--leaf", node), node)


# Each node clicked and its context read, then the "original" toggle clicked and the context read,
# then clicked again and read, all nodes in one round trip: the page draws in the toggle's handler
# (a frame after each toggle changed no read: every node of the full run's sessions with edits).
TOGGLE_AND_READ = """async (ids) => {
  const readNodes = READ_NODES_FN, out = [];
  const toggled = () => { document.querySelector('[data-toggle=original]').click(); return (READ_CONTEXT_FN)(); };
  for (const id of ids) {
    const [[shown, got]] = await readNodes([[id], [['context', 'context']]]);
    out.push([shown, got, toggled(), toggled()]);
  }
  return out;
}""".replace("READ_NODES_FN", READ_NODES).replace("READ_CONTEXT_FN", READ_CONTEXT)


EDITED = [p for p in SESSIONS if '"replacement":null' in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("session", _sessions_param(EDITED))
def test_original_toggle_shows_what_edits_hide(session, cli, page, tmp_path):
    """With the "original" toggle on, the messages a context edit hides are drawn in place with
    ``data-mark="hidden"`` (exactly ``omittedEntryIds``), the model's messages unchanged around them."""
    open_page(page, cli.page_of(session))
    click_filter(page, "all")
    nodes = unique_ids(tree_rows(cli, session))
    # the full run every node; the default run from the last back, until three nodes with hidden
    # messages are checked (the edits sit late in a session)
    enough = len(nodes) if in_this_run(nodes) == nodes else 3
    docs: dict[str, dict] = {}
    for node in nodes if enough == len(nodes) else nodes[::-1]:
        if len(docs) == enough:
            break
        doc = cli.json("context", str(session), "--leaf", node)
        if doc.get("omittedEntryIds"):  # (nothing hidden: the page's context of it is the every-node test's)
            docs[node] = doc
    assert docs, "no node of this session has a message hidden by an edit"
    for node, (shown, got, with_hidden, without) in zip(docs, page.evaluate(TOGGLE_AND_READ, list(docs)), strict=True):
        assert shown == node
        assert {m["id"] for m in with_hidden if m["mark"] == "hidden"} == set(docs[node]["omittedEntryIds"]), node
        assert [m for m in with_hidden if m["mark"] != "hidden"] == got, node
        assert without == got, node


def aligned_rows(diff: dict, context_a: dict, context_b: dict) -> list[list]:
    """One [op, id on side a, id on side b] per item of diff --json's ``messages`` (a run of
    ``count`` unchanged messages is one row, named by its first message, whose ids come from the
    two contexts); "" where a side has no message, None where the command says nothing of the id
    (the harness reader has no messageEntryIds)."""
    rows = []
    for item in diff["messages"]:
        row = [item["op"]]
        for side, doc in (("a", context_a), ("b", context_b)):
            at = item.get(side)
            ids = doc.get("messageEntryIds")
            if not at:
                row.append("")
            elif at.get("entryId") is not None:
                row.append(at["entryId"])
            else:
                row.append(ids[at["index"]] if ids is not None else None)
        rows.append(row)
    return rows


def _pairs(nodes: list[str], leaves: list[str], leaf: str, rng: random.Random, n: int) -> list[tuple[str, str]]:
    pairs = [(leaf, other) for other in leaves if other != leaf]
    pairs += [tuple(rng.sample(nodes, 2)) for _ in range(n)]  # type: ignore[misc]
    return pairs


# Each pair's compare opened by its link and read as soon as it is shown, all pairs in one round
# trip: the page draws the compare in the link's handler (a frame more changed no read: every
# pair of every session of the full run).
READ_COMPARES = """async (pairs) => {
  const out = [];
  for (const [a, b, url] of pairs) {
    location.href = url;
    const shown = () => { const c = document.querySelector('[data-pane=compare]');
      return c && c.dataset.a === a && c.dataset.b === b && c.getClientRects().length > 0; };
    // (a link is followed in a task of the browser's: waited for, a task at a time, 10 s at most)
    for (const until = performance.now() + 10000; !shown(); await new Promise(r => setTimeout(r))) {
      if (performance.now() > until) throw new Error('not shown: ' + a + ' ' + b);
    }
    const c = document.querySelector('[data-pane=compare]');
    out.push({parted: c.dataset.partedAfter, relation: c.dataset.relation,
      ops: Array.from(c.querySelectorAll('[data-op]')).map(r => [r.dataset.op, r.dataset.entryIdA, r.dataset.entryIdB]),
      stats: Array.from(c.querySelectorAll('[data-stat][data-side]'))
        .map(s => [s.dataset.stat, s.dataset.side, s.dataset.value])});
  }
  return out;
}"""


@pytest.mark.parametrize("session", _sessions_param(SESSIONS, {EXAMPLES[-1].name}))
def test_compare_of_sampled_pairs_is_diff(session, cli, page, tmp_path):
    rows = tree_rows(cli, session)
    nodes = unique_ids(rows)
    assert len(nodes) >= 2
    parents = Counter(r["parentId"] for r in rows)
    leaves = [i for i in nodes if parents[i] == 0]
    leaf = cli.json("context", str(session))["leafId"]
    out = cli.page_of(session)
    open_page(page, out)
    pairs = _pairs(nodes, leaves, leaf, random.Random(session.name), 4)
    panes = page.evaluate(READ_COMPARES, [[a, b, file_url(out, f"#a={a}&b={b}&tab=compare")] for a, b in pairs])
    for (a, b), pane in zip(pairs, panes, strict=True):
        diff = cli.json("diff", str(session), a, b, ok=(0, 1))  # 1: the contexts differ
        assert pane["relation"] == diff["relation"], (a, b)
        assert pane["parted"] == (diff["partedAfter"] or ""), (a, b)
        contexts = [cli.json("context", str(session), "--leaf", x) for x in (a, b)]
        want_ops = aligned_rows(diff, *contexts)
        assert len(pane["ops"]) == len(want_ops), (a, b)
        for got_row, want_row in zip(pane["ops"], want_ops):
            assert [g if w is not None else None for g, w in zip(got_row, want_row)] == want_row, (a, b)
        drawn = {(k, side): v for k, side, v in pane["stats"]}
        for side in ("a", "b"):
            for key, value in diff[side].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    assert (key, side) in drawn, f"{key} of side {side} not drawn ({a} vs {b})"
                    assert float(drawn[(key, side)]) == pytest.approx(value, rel=1e-9, abs=1e-12), (key, side, a, b)
            for key, value in (diff[side].get("tokens") or {}).items():
                if (f"tokens.{key}", side) in drawn:
                    assert float(drawn[(f"tokens.{key}", side)]) == value


@pytest.mark.parametrize("session", _sessions_param(SESSIONS))
def test_branch_costs_are_stats_by_branch(session, cli, page, tmp_path):
    """One cost per branch below each branch point (several roots: one per root too), holding the
    entries of its whole subtree; an abandoned branch's tokens and dollars are ``stats --by
    branch``'s."""
    rows = tree_rows(cli, session)
    children: dict[Any, list[str]] = {}
    for r in rows:
        children.setdefault(r["parentId"], []).append(r["id"])

    def subtree(entry_id: str) -> int:
        return 1 + sum(subtree(c) for c in children.get(entry_id, []))

    below = {c for p, cs in children.items() if p is not None and len(cs) >= 2 for c in cs}
    roots = set(children.get(None, []))
    open_page(page, cli.page_of(session))
    drawn = page.evaluate("""() => Array.from(document.querySelectorAll('[data-branch-cost]')).map(e =>
        [e.dataset.entryId, e.dataset.entries, e.dataset.tokens, e.dataset.cost])""")
    by_first = {first: (entries, tokens, cost) for first, entries, tokens, cost in drawn}
    assert below <= set(by_first) <= below | (roots if len(roots) > 1 else set())
    for first, (entries, _tokens, _cost) in by_first.items():
        assert int(entries) == subtree(first), first
    named = set(unique_ids(rows))  # a branch named by an id that several entries hold is no one branch
    for g in cli.json("stats", str(session), "--by", "branch")["groups"]:
        if g["branch"] in by_first and g["branch"] in named:  # an abandoned branch: its first entry off the path
            entries, tokens, cost = by_first[g["branch"]]
            assert int(entries) == g["entryCount"], g["branch"]
            assert int(tokens) == g["tokens"]["total"], g["branch"]
            assert float(cost) == pytest.approx(g["cost"], rel=1e-9, abs=1e-9), g["branch"]


# --- keys, filters, search, links ---------------------------------------------------------------------------

BRANCHY = ROOT / "tests" / "fixtures" / "writers" / "one-branchy-16.jsonl"


@pytest.fixture()
def branchy(cli, tmp_path) -> tuple[Path, list[dict], str]:
    rows = tree_rows(cli, BRANCHY)
    leaf = cli.json("context", str(BRANCHY))["leafId"]
    return cli.page_of(BRANCHY), rows, leaf


def test_page_opens_on_the_leaf_with_its_context(branchy, page, cli):
    out, _rows, leaf = branchy
    open_page(page, out)
    assert selected(page) == leaf and shown_node(page) == leaf
    assert page.evaluate("() => document.querySelectorAll('[data-pane=tree] [data-row][data-leaf=\"1\"]').length") == 1
    assert row(page, leaf).get_attribute("data-leaf") == "1"
    active = {e["id"] for e in cli.json("path", str(BRANCHY))["entries"]}
    marks = page.evaluate("""() => Array.from(document.querySelectorAll('[data-pane=tree] [data-row]'))
        .map(r => [r.dataset.entryId, r.dataset.active])""")
    present = {i for i, _a in marks}
    assert {i for i, a in marks if a == "1"} == active & present
    assert {a for _i, a in marks} <= {"0", "1"}


def test_counts_of_one_are_singular(cli, page, tmp_path):
    """A session with one branch point says so in the header, and the root's Path tab counts one
    entry (the page's words are as exact as the CLI's)."""
    webapp = next(p for p in EXAMPLES if "webapp" in str(p))
    rows = tree_rows(cli, webapp)
    children: dict[Any, int] = {}
    for r in rows:
        children[r["parentId"]] = children.get(r["parentId"], 0) + 1
    assert sum(1 for p, n in children.items() if p is not None and n >= 2) == 1  # the fixture this needs
    root = rows[0]["id"]
    open_page(page, cli.page_of(webapp), f"#entry={root}&tab=path")
    facts = page.inner_text("header .facts")
    assert "1 branch point" in facts and "1 branch points" not in facts
    path_pane = page.inner_text("[data-pane=path]")
    assert "1 entry from the root" in path_pane


def test_keys_move_jump_and_switch_tabs(branchy, page):
    out, rows, leaf = branchy
    open_page(page, out)
    click_filter(page, "all")
    order = visible_rows(page)
    assert len(order) > 5
    page.locator("[data-pane=tree]").focus()
    page.keyboard.press("g")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")  # no pause between keys: each acts on the state the one before left
    page.evaluate(NEXT_FRAME)
    assert selected(page) == order[2] and shown_node(page) == order[2]
    page.keyboard.press("G")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == order[-1]
    page.keyboard.press("L")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == leaf
    parent = {r["id"]: r["parentId"] for r in rows}
    children = Counter(r["parentId"] for r in rows)
    assert children[parent[leaf]] == 1  # h goes to the parent (the leaf starts no side branch)
    page.keyboard.press("h")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == parent[leaf]
    page.keyboard.press("l")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == leaf
    for key, tab in (("t", "trace"), ("d", "compare"), ("c", "context")):
        page.keyboard.press(key)
        page.evaluate(NEXT_FRAME)
        assert page.get_attribute(f"[data-tab={tab}]", "aria-selected") == "true", key
        assert page.evaluate("() => document.querySelectorAll('[data-tab][aria-selected=true]').length") == 1


def test_brackets_move_between_branch_points(branchy, page):
    out, rows, _leaf = branchy
    open_page(page, out)
    click_filter(page, "all")
    children = Counter(r["parentId"] for r in rows)
    order = visible_rows(page)
    points = [i for i in order if children[i] >= 2]
    assert len(points) >= 2
    page.locator("[data-pane=tree]").focus()
    page.keyboard.press("g")
    page.keyboard.press("]")
    page.keyboard.press("]")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == points[1]
    page.keyboard.press("[")
    page.evaluate(NEXT_FRAME)
    assert selected(page) == points[0]


def test_slash_focuses_search_and_keyboard_focus_is_visible(branchy, page):
    out, _rows, _leaf = branchy
    open_page(page, out)
    page.locator("[data-pane=tree]").focus()
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.matches('[data-search-input]')")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    style = page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
        return [s.outlineStyle, s.outlineWidth, s.boxShadow]; }""")
    assert (style[0] != "none" and style[1] != "0px") or style[2] != "none", style


def _entries(session: Path) -> dict[str, dict]:
    out = {}
    for line in session.read_text(encoding="utf-8").splitlines()[1:]:
        obj = json.loads(line)
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            out[obj["id"]] = obj
    return out


SETTINGS = {"label", "custom", "context_edit", "model_change", "thinking_level_change"}


def _has_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return any(isinstance(c, dict) and c.get("type") == "text" and (c.get("text") or "").strip() for c in content or [])


def pi_filter(name: str, entry: dict, label: str | None, leaf: str) -> bool:
    """pi 1.6.0's export page's filter (template.js, filterNodes): the leaf always shows; an
    assistant message without text that did not fail never does; then the mode's rule."""
    if entry["id"] == leaf:
        return True
    msg = entry.get("message") or {}
    role = msg.get("role") if entry.get("type") == "message" else None
    if role == "assistant" and not _has_text(msg.get("content")) and msg.get("stopReason") in (None, "stop", "toolUse"):
        return False
    return {"user": role == "user",
            "no-tools": entry.get("type") not in SETTINGS and role != "toolResult",
            "labeled": label is not None,
            "all": True}.get(name, entry.get("type") not in SETTINGS)


@pytest.mark.parametrize("session", [pytest.param(BRANCHY, id=_rel(BRANCHY)),
                                     *(pytest.param(p, id=_rel(p), marks=pytest.mark.slow) for p in EXAMPLES)])
def test_filters_are_pis_five(session, cli, page, tmp_path):
    rows = tree_rows(cli, session)
    entries = _entries(session)
    leaf = cli.json("context", str(session))["leafId"]
    tree_order = [r["id"] for r in rows]
    open_page(page, cli.page_of(session))
    for name in ("user", "labeled", "no-tools", "all", "default"):
        click_filter(page, name)
        assert page.get_attribute(f"[data-filter={name}]", "aria-pressed") == "true"
        assert page.evaluate("() => document.querySelectorAll('[data-filter][aria-pressed=true]').length") == 1
        want = [r["id"] for r in rows if r["id"] in entries and pi_filter(name, entries[r["id"]], r.get("label"), leaf)]
        shown = visible_rows(page)
        assert shown == want, name
        assert shown == [i for i in tree_order if i in set(shown)]  # the tree's order


WORDS = ("tests", "cache", "pagination", "date", "UTC", "README", "endpoint", "helper", "summary", "commit")


def _each_query(cli: Cli, session: Path, words: tuple = WORDS) -> Iterator[str]:
    """The words whose hits do not change with case, in turn: the page's search and ``pisess
    search`` then cannot differ by how each folds case (the words after one are searched for only
    when asked: a search is some 30 ms)."""
    for word in words:
        hits = cli.json("search", word, str(session), ok=(0, 1))["hits"]  # 1: no hit
        if hits and hits == cli.json("search", word, str(session), "-i", ok=(0, 1))["hits"]:
            yield word


def _queries(cli: Cli, session: Path, words: tuple = WORDS) -> list[str]:
    return list(_each_query(cli, session, words))


def _hits(page) -> list[tuple[str, str]]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('[data-pane=search] [data-hit]'))
        .map(h => [h.dataset.entryId, h.dataset.placement])""")


def search(page, query: str) -> list[tuple[str, str]]:
    page.fill("[data-search-input]", query)
    page.press("[data-search-input]", "Enter")
    page.wait_for_function("() => document.querySelectorAll('[data-pane=search] [data-hit]').length > 0")
    page.evaluate(NEXT_FRAME)
    return [tuple(h) for h in _hits(page)]  # type: ignore[misc]


MARKS_OF_SELECTED = """() => { const sel = document.querySelector('[data-pane=entry]').dataset.entryId;
  return Array.from(document.querySelectorAll('mark')).filter(m => !m.closest('[data-pane=search]')
    && m.getClientRects().length > 0 && (m.closest('[data-entry-id]') || {dataset: {}}).dataset.entryId === sel)
    .map(m => m.textContent); }"""


def test_search_hits_placements_marks_and_n(branchy, page, cli):
    out, _rows, _leaf = branchy
    queries = _queries(cli, BRANCHY)
    assert queries
    open_page(page, out)
    for query in queries:
        want = {(h["entryId"], h["where"]) for h in cli.json("search", query, str(BRANCHY))["hits"]}
        hits = search(page, query)
        assert set(hits) == want, query
        assert f"q={query}" in page.evaluate("() => location.hash"), "the query is kept in the URL"
        page.locator("[data-pane=tree]").focus()
        page.keyboard.press("n")
        page.evaluate(NEXT_FRAME)
        at = [h[0] for h in hits].index(shown_node(page))  # n selects a hit; which one depends on where it stood
        for step in range(1, min(4, len(hits)) + 1):
            marks = page.evaluate(MARKS_OF_SELECTED)
            assert marks and all(m.lower() == query.lower() for m in marks), (query, shown_node(page), marks)
            page.keyboard.press("n")
            page.evaluate(NEXT_FRAME)
            assert shown_node(page) == hits[(at + step) % len(hits)][0], (query, step)
        page.keyboard.press("N")
        page.evaluate(NEXT_FRAME)
        assert shown_node(page) == hits[(at + min(4, len(hits)) - 1) % len(hits)][0], query


def test_search_query_in_the_url_is_searched_on_open(branchy, page, cli):
    out, _rows, _leaf = branchy
    query = next(_each_query(cli, BRANCHY))
    want = {(h["entryId"], h["where"]) for h in cli.json("search", query, str(BRANCHY))["hits"]}
    open_page(page, out, f"#q={query}")
    page.wait_for_function("() => document.querySelectorAll('[data-pane=search] [data-hit]').length > 0")
    assert {tuple(h) for h in _hits(page)} == want
    assert page.input_value("[data-search-input]") == query


def test_search_placements_cover_compacted_and_edited(cli, page, tmp_path):
    session = ROOT / "tests" / "fixtures" / "diff" / "sessions" / "edited.jsonl"
    out = cli.page_of(session)
    open_page(page, out)
    placements: set[str] = set()
    queries = _queries(cli, session, ("the", "test", "tests", "file", "cache", "read", "date", "async", "error"))
    assert queries
    for query in queries:
        want = {(h["entryId"], h["where"]) for h in cli.json("search", query, str(session))["hits"]}
        assert set(search(page, query)) == want, query
        placements |= {w for _i, w in want}
    assert len(placements) >= 3, placements  # more than active/branch: the fixture holds a compaction and an edit


def _page_of_one_message_an_element(cli: Cli, tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """The edited session's page with one message per element (``CHUNK_BYTES`` 1), and the session."""
    from pisess.core.analyses import page as page_module

    monkeypatch.setattr(page_module, "CHUNK_BYTES", 1)
    session = ROOT / "tests" / "fixtures" / "diff" / "sessions" / "edited.jsonl"
    return cli.export(session, tmp_path / "chunks.html"), session


def test_messages_of_the_leaf_come_before_the_script(cli, tmp_path, monkeypatch):
    """One message per element: the leaf's context's elements come before the page's script, the
    others after it, so that the page is drawn before the browser has read the bulk (what the
    browser then does with the late ones: the test below, in the full run)."""
    out, session = _page_of_one_message_an_element(cli, tmp_path, monkeypatch)
    html = out.read_text(encoding="utf-8")
    script_at = html.index("<script>")
    early = re.findall(r'id="pisess-m([0-9]+)"', html[:script_at])
    late = re.findall(r'id="pisess-m([0-9]+)"', html[script_at:])
    leaf_doc = cli.json("context", str(session))
    assert 0 < len(early) <= len(leaf_doc["messages"]) + 2 and late  # (+2: what edits hide, the entry itself)


def test_messages_of_the_leaf_come_first_and_the_rest_is_drawn_once_read(cli, page, tmp_path, monkeypatch):
    """A deep link (a fresh load) to a node whose messages come after the script (the test above)
    draws its context whole once they are read (ready says when), and a search in the URL waits
    for the whole page."""
    out, session = _page_of_one_message_an_element(cli, tmp_path, monkeypatch)
    nodes = unique_ids(tree_rows(cli, session))
    # each node's link opened in the page's copy the node before was not opened in: a document of
    # its own, a fresh load (a third cheaper than a fresh load by way of about:blank)
    twin = Path(shutil.copyfile(out, tmp_path / "chunks-twin.html"))
    for k, node in enumerate(in_this_run(nodes)):
        open_page(page, (out, twin)[k % 2], f"#entry={node}&tab=context")
        got, loading = page.evaluate(f"() => [({READ_CONTEXT})(), document.querySelectorAll('[data-loading]').length]")
        want = expected_context(cli.json("context", str(session), "--leaf", node))
        assert loading == 0, node
        assert [(g["id"], g["role"], g["mark"]) for g in got] == [(w["id"], w["role"], w["mark"]) for w in want], node
        for g, w in zip(got, want):
            if w["blocks"] is not None:
                assert drawn_blocks(g["blocks"]) == w["blocks"], (node, w["id"])
    query = next(_each_query(cli, session, ("the", "test", "tests", "file", "cache", "read", "date", "async", "error")))
    open_page(page, out, f"#q={query}")
    want = {(h["entryId"], h["where"]) for h in cli.json("search", query, str(session))["hits"]}
    assert {tuple(h) for h in _hits(page)} == want


@pytest.mark.parametrize(("query", "want"), [
    ("kelvin", {"u1"}),  # K (U+212A) lowers to k: an ASCII query finds it in the text as stored
    ("to i", {"a1"}),  # İ (U+0130) lowers to i and a dot above
    ("istanbul", set()),  # (so İSTANBUL lowered is not istanbul)
    ("école", {"u2"}),  # a query not in ASCII: matched on the lowered text
    ('say "x" \\ now', {"a2"}),  # quotes and a backslash, stored escaped in JSON
    ("nothing like it", set()),
])
def test_search_folds_case_as_the_page_says(cli, page, tmp_path, query, want):
    """The search's hits are the entries whose texts hold the query, lowered (toLowerCase), whatever
    way the stored text is first scanned for candidates."""
    lines = [header(), user("u1", None, "the \u212aELVIN scale"), assistant("a1", "u1", "to \u0130STANBUL"),
             user("u2", "a1", "\u00c9COLE"), assistant("a2", "u2", 'we say "X" \\ NOW')]
    out = cli.export(write_session(tmp_path, lines), tmp_path / "fold.html")
    open_page(page, out)
    page.fill("[data-search-input]", query)
    page.press("[data-search-input]", "Enter")
    page.wait_for_function("() => !!document.querySelector('[data-pane=search] .muted')")
    assert {h[0] for h in _hits(page)} == want


@pytest.mark.parametrize("form", ["hash", "pi"])
def test_deep_links_open_the_node_on_the_tab(branchy, page, form):
    out, rows, leaf = branchy
    node = next(r["id"] for r in rows if r["id"] != leaf and r["type"] == "message" and not r["active"])
    prefix = node[:6]  # a unique prefix is enough
    assert sum(r["id"].startswith(prefix) for r in rows) == 1
    fragment = f"#entry={prefix}&tab=path" if form == "hash" else f"?leafId={leaf}&targetId={prefix}"
    open_page(page, out, fragment)
    wait_shown(page, node)
    assert selected(page) == node
    if form == "hash":
        assert page.get_attribute("[data-tab=path]", "aria-selected") == "true"
        assert page.evaluate(READ_IDS, "path")[-1] == node


def test_changing_the_hash_navigates_without_reload(branchy, page):
    out, rows, leaf = branchy
    open_page(page, out)
    page.evaluate("() => { window.__stayed = 1; }")
    other = rows[0]["id"]
    page.evaluate("(id) => { location.hash = 'entry=' + id + '&tab=context'; }", other)
    wait_shown(page, other)
    assert page.evaluate("() => window.__stayed") == 1
    assert page.get_attribute("[data-tab=context]", "aria-selected") == "true"


# --- layouts: narrow, print, no script -------------------------------------------------------------------------

PLAIN = re.compile(r"[A-Za-z][A-Za-z ,']{15,}[A-Za-z]")


def plain_lines(doc: dict) -> list[str]:
    """From each text of the context, its longest run of letters, spaces and commas: Markdown
    draws such a run as it is, however it renders the rest, so it can be looked for in the page's
    text."""
    out = []
    for m in doc["messages"]:
        for kind, text in expected_blocks(m):
            runs = PLAIN.findall(text or "") if kind == "text" else []
            if runs:
                out.append(re.sub(r" +", " ", max(runs, key=len)).strip())
    return out


def test_narrow_window_puts_the_tree_in_a_drawer(branchy, new_page):
    out, rows, leaf = branchy
    page = new_page(viewport={"width": 400, "height": 800})
    open_page(page, out)
    tree_box = page.locator("[data-pane=tree]").bounding_box()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 400, "nothing wider than the window"
    hidden = tree_box is None or tree_box["width"] == 0 or tree_box["x"] + tree_box["width"] <= 0 or tree_box["x"] >= 400
    assert hidden, f"the tree is a closed drawer at 400 px, not beside the entry: {tree_box}"
    assert page.locator("[data-pane=context]").is_visible() or page.locator("[data-pane=entry]").is_visible()
    # the drawer's button: visible, aria-controls naming the tree pane, aria-expanded false -> true
    tree_id = page.get_attribute("[data-pane=tree]", "id")
    assert tree_id, "the tree pane needs an id for its drawer button's aria-controls"
    opener = page.locator(f"[aria-controls='{tree_id}']").first
    assert opener.is_visible() and opener.get_attribute("aria-expanded") == "false"
    opener.click()
    page.evaluate(NEXT_FRAME)
    assert opener.get_attribute("aria-expanded") == "true"
    page.evaluate(NEXT_FRAME)
    first = visible_rows(page)[0]  # (the first entry, a model change, is one the default filter hides)
    assert page.evaluate(REVEAL, first)
    row(page, first).click()
    wait_shown(page, first)


def test_print_shows_the_selected_context(branchy, page, cli):
    out, rows, leaf = branchy
    node = next(r["id"] for r in rows if r["type"] == "message" and not r["active"] and r["id"] != leaf)
    open_page(page, out, f"#entry={node}&tab=trace")
    lines = plain_lines(cli.json("context", str(BRANCHY), "--leaf", node))
    page.emulate_media(media="print")
    # the page draws the context when the print media query starts to match, which the browser
    # tells it in a task of its own (a frame was not always enough): wait for the text, 10 s at most
    drawn = "(lines) => lines.every((l) => document.body.innerText.includes(l))"
    try:
        page.wait_for_function(drawn, arg=lines, timeout=10_000)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the assertion below says what is missing
        pass
    printed = page.evaluate("() => document.body.innerText")
    assert lines and all(line in printed for line in lines)
    assert not page.locator("[data-pane=tree]").is_visible(), "print shows the context, not the tree"


def test_no_script_page_is_readable_and_runs_nothing(cli, new_page, tmp_path):
    out = cli.export(BRANCHY, tmp_path / "static.html", "--no-script")
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    doc = cli.json("context", str(BRANCHY))
    page = new_page(java_script_enabled=False)
    page.goto(file_url(out))
    body = page.inner_text("body")
    lines = plain_lines(doc)
    assert lines and all(line in body for line in lines)


def test_scripted_page_is_readable_with_scripts_off(branchy, new_page, cli):
    out, _rows, _leaf = branchy
    page = new_page(java_script_enabled=False)
    page.goto(file_url(out))
    body = page.inner_text("body")
    lines = plain_lines(cli.json("context", str(BRANCHY)))
    assert lines and all(line in body for line in lines)


# --- the README's screenshot --------------------------------------------------------------------------------

SCREENSHOT_ENV = "PISESS_SCREENSHOT"
#: The README's picture of the page (a line links it): what this test draws, written again with
#: ``PISESS_SCREENSHOT=tests/screenshots/page.png pytest tests/test_page.py -k screenshot`` (the
#: copy in the repository is that PNG in its 256 most frequent colours: 71 KB, not 179).
SCREENSHOT = ROOT / "tests" / "screenshots" / "page.png"
SCREENSHOT_SIZE = (1200, 700)


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_screenshot_of_the_page(cli, new_page, tmp_path):
    """The page of the bundled webapp example, a side-branch node on the Context tab, 1200x700:
    drawn (not blank), and the README's copy of it (``SCREENSHOT``) is a picture of the same size
    that the README shows; with ``$PISESS_SCREENSHOT`` naming a file, written there."""
    session = EXAMPLES[-1]
    rows = tree_rows(cli, session)
    node = next(r["id"] for r in reversed(rows) if r["type"] == "message" and not r["active"])
    width, height = SCREENSHOT_SIZE
    page = new_page(viewport={"width": width, "height": height}, color_scheme="light")
    open_page(page, cli.page_of(session), f"#entry={node}&tab=context")
    wait_shown(page, node)
    png = page.screenshot()
    assert _png_size(png) == SCREENSHOT_SIZE
    assert len(png) > 40_000, "a drawn page, not a blank one, compresses to more than this"
    assert page.locator("[data-pane=context] [data-msg]").count() > 0
    destination = os.environ.get(SCREENSHOT_ENV)
    if destination:
        Path(destination).parent.mkdir(parents=True, exist_ok=True)
        Path(destination).write_bytes(png)
    committed = SCREENSHOT.read_bytes()
    assert _png_size(committed) == SCREENSHOT_SIZE and len(committed) > 40_000
    assert f"]({SCREENSHOT.relative_to(ROOT)})" in (ROOT / "README.md").read_text(encoding="utf-8")

# --- a long context: drawn a window at a time --------------------------------------------------------

SCROLL_VIEW_TO_END = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const view = document.querySelector('.view');
  for (let i = 0; i < 200 && document.querySelector('[data-pane=context] [data-more]'); i++) {
    view.scrollTop = view.scrollHeight; await frame();
  }
  return document.querySelectorAll('[data-pane=context] [data-msg]').length;
}"""


def draw_all(page, pane: str) -> None:
    """Press the "draw all" button under a pane's window (where it is: scrolling it into view, as a
    click does, would draw the next window and move it)."""
    page.evaluate("(pane) => document.querySelector(`[data-pane=${pane}] [data-more] button`).click()", pane)
    page.evaluate(NEXT_FRAME)


def test_a_long_context_is_drawn_a_window_at_a_time(cli, page, new_page, tmp_path):
    """A context of 700 messages draws its first few hundred on a click (15,000 messages laid out
    on every click took a second); the rest follows as the pane is scrolled to its end, or at once
    with "draw all", and printing prints it whole.  Whatever the way, what is drawn in the end is
    `pisess context`'s answer, message for message; the path is windowed the same way."""
    lines: list = [header()]
    parent = None
    for k in range(350):
        lines.append(user(f"u{k:03d}", parent, f"question {k}" + (" needle" if k == 330 else "")))
        lines.append(assistant(f"a{k:03d}", f"u{k:03d}", f"answer {k}"))
        parent = f"a{k:03d}"
    session = Path(write_session(tmp_path, lines))
    out = cli.export(session, tmp_path / "long.html")
    want = expected_context(cli.json("context", str(session)))
    assert len(want) == 700

    def drawn() -> tuple[int, int | None]:
        more = page.evaluate("() => { const m = document.querySelector('[data-pane=context] [data-more]');"
                             " return m && +m.dataset.more; }")
        return page.locator("[data-pane=context] [data-msg]").count(), more

    open_page(page, out, "#entry=a349&tab=context")
    first, more = drawn()
    assert 0 < first < 700 and more == 700 - first  # a window, and the line under it says how many are left
    got = page.evaluate(READ_CONTEXT)
    assert [g["id"] for g in got] == [w["id"] for w in want[:first]]
    assert page.evaluate(SCROLL_VIEW_TO_END) == 700
    got = page.evaluate(READ_CONTEXT)
    assert [(g["id"], g["role"], g["mark"]) for g in got] == [(w["id"], w["role"], w["mark"]) for w in want]
    assert [drawn_blocks(g["blocks"]) for g in got] == [w["blocks"] for w in want]
    assert page.locator("[data-pane=context] [data-more]").count() == 0

    # another node and back (the keys, at once), from the top: a fresh window (at the end of the pane,
    # as many windows as fill it); "draw all" draws the rest at once
    page.evaluate("() => { document.querySelector('.view').scrollTop = 0; }")
    page.keyboard.press("k")
    page.keyboard.press("j")
    wait_shown(page, "a349")
    assert drawn() == (first, more)
    draw_all(page, "context")
    assert [g["id"] for g in page.evaluate(READ_CONTEXT)] == [w["id"] for w in want]

    # the path: windowed too, and whole after "draw all"
    click_tab(page, "path")
    assert page.locator("[data-pane=path] [data-more]").count() == 1
    draw_all(page, "path")
    assert page.evaluate(READ_IDS, "path") == [w["id"] for w in want]
    click_tab(page, "trace")  # and the trace: its turns
    assert 0 < page.locator("[data-pane=trace] .turn").count() < 350
    draw_all(page, "trace")
    assert page.evaluate(READ_IDS, "trace") == [f"u{k:03d}" for k in range(350)]  # (a turn holds its steps)

    # a search hit in a message after the window: n shows it marked
    open_page(page, out, "#entry=a349&tab=context&q=needle")
    page.keyboard.press("n")
    wait_shown(page, "u330")
    marked = page.evaluate("() => [...document.querySelectorAll('mark')].filter(m => m.getClientRects().length)"
                           ".map(m => m.closest('[data-entry-id]').dataset.entryId)")
    assert "u330" in marked

    # printing prints the context whole, from any tab
    printing = new_page()
    open_page(printing, out, "#entry=a349&tab=trace")
    printing.emulate_media(media="print")
    printing.wait_for_function("() => document.querySelectorAll('[data-pane=context] [data-msg]').length === 700", timeout=10_000)
    assert printing.locator("[data-pane=context] [data-more]").count() == 0
