"""One name per idea in every --json document (``pisess help json``).

Every command runs with ``--json`` on the package's example sessions and on the tests' hand-written
store (a fork, pi's SDK, images), and each document is walked: no key is named ``file`` (the session
file is ``path``), no integer sits under a plural noun (a count is ``<thing>Count``), an object of
counts is named ``<thing>CountBy<Key>``, and each document says the version ``pisess help json``
gives it.  That topic's table of documents lists every top-level key printed, so it cannot drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from answers_store import F_ID, P_ID, build_store
from conftest import (
    ERROR_VERSION,
    JSON_VERSIONS,
    cli_runner,
    copy_examples,
    entry,
    header,
    invoke,
    json_version,
    user,
    write_session,
)
from pisess.core.listing.paths import encode_cwd

HERE = Path(__file__).resolve().parent
TOPIC = (HERE.parent / "pisess" / "help" / "json.md").read_text()
WRITERS = HERE / "fixtures" / "writers"
S1 = "01955b3b-ca80-7e01"  # the example sessions' branchy one (its entries: pisess help diff, fork)

# A measure is named by its unit (bytes, tokens, milliseconds): an amount, not a count of things,
# and ``…Count`` would misname it.  These are the only plural-looking names an integer may have.
UNIT = re.compile(r"(^|[a-z])(Bytes|bytes|Tokens|tokens|Ms)$")
# Objects of integers under a plural noun that are not counts by category: token amounts by kind, and
# du's image record.
MEASURES = {"tokens": "input, output, cacheRead, cacheWrite, total: token amounts",
            "images": "du: {count, bytes}"}
# Objects keyed by data (entry ids, kinds of usage), not by pisess's names: their keys are not walked.
DATA_KEYED = {"labels", "appliedEdits", "usageKinds"}
# pi's own data under pi's own names (what the conformance tests compare with pi's answers, or the
# file's headers, entries and messages as written): not pisess's names, not walked.
PI_DATA = {"llmMessages", "header", "systemMessage", "usageBreakdown", "metadata", "message"}
PI_LISTS = {"context": {"messages"}, "fork": {"entries"}}  # (diff's `messages`, path's `entries`: pisess's)


def _is_pi_data(command: str, key: str, where: str) -> bool:
    return key in PI_DATA or (where == "" and key in PI_LISTS.get(command, ()))


def problems_of(command: str, doc: dict) -> list[str]:
    """What in ``doc`` breaks the rules: each as ``where: what``."""
    out: list[str] = []

    def walk(v, where: str) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x, where + "[]")
            return
        if not isinstance(v, dict):
            return
        for k, x in v.items():
            at = f"{where}.{k}"
            if k == "file":
                out.append(f"{at}: the session file is `path`")
            if type(x) is int and k.endswith("s") and not UNIT.search(k):
                out.append(f"{at}: an integer under a plural noun (a count is `<thing>Count`)")
            if isinstance(x, dict) and x and all(type(n) is int for n in x.values()) and k.endswith("s") \
                    and k not in MEASURES:
                out.append(f"{at}: counts by category are `<thing>CountBy<Key>`")
            if _is_pi_data(command, k, where):
                continue
            if ("CountBy" in k or k in DATA_KEYED) and isinstance(x, dict):
                for y in x.values():
                    walk(y, at + ".*")
                continue
            walk(x, at)

    walk(doc, "")
    return out


def _one(r) -> dict:
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> list[tuple[str, dict]]:
    """(command, document) of every command with --json, on the example sessions and on the store."""
    from pisess.core.reading import cache

    tmp = tmp_path_factory.mktemp("json-names")
    ex = str(copy_examples(tmp))
    store = build_store(tmp / "store")
    st = str(tmp / "store")
    secret = write_session(tmp / "secrets" / encode_cwd("/w"), [
        header(cwd="/w"), user("u1", None, "token " + "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")])
    out = tmp / "out"
    out.mkdir()
    docs: list[tuple[str, dict]] = []
    with pytest.MonkeyPatch.context() as mp:
        runner = cli_runner(mp)
        mp.setenv("XDG_CACHE_HOME", str(tmp / "xdg"))
        previous = cache.configure(cache.Settings(directory=str(tmp / "xdg" / "pisess"), cap=cache.DEFAULT_CAP,
                                                  smallest=0))
        try:
            def run(command: str, *args: str, code: tuple = (0,)) -> dict:
                r = invoke(runner, *args, "--json")
                assert r.exit_code in code, (args, r.stdout, r.stderr)
                doc = _one(r)
                docs.append((command, doc))
                return doc

            for where in (["--sessions-dir", ex], ["--sessions-dir", st]):
                run("ls", "ls", "--all", *where)
                run("ls", "ls", "--all", "--long", *where)
                run("ls", "ls", "--all", "--search", "date", *where)
                run("stats", "stats", "--all", *where)
                for by in ("session", "model", "day", "branch"):
                    run("stats", "stats", "--all", "--by", by, *where)
                run("du", "du", "--all", *where)
                run("search", "search", "date", "--all", *where, code=(0, 1))
                run("cache index", "cache", "index", "--all", *where)
            session_args = [(S1, "--sessions-dir", ex), (str(store["P"]),), (str(store["F"]),), (str(store["H"]),)]
            for args in session_args:
                for reader in ("harness", "cli"):
                    for pi in ("1.6.0", "0.82.1"):
                        if reader == "harness" and pi == "1.6.0":
                            continue
                        opts = ("--reader", reader, "--pi-version", pi)
                        run("tree", "tree", *args, *opts)
                        run("path", "path", *args, *opts)
                        run("context", "context", *args, *opts)
                run("export", "export", *args, "--format", "md")
                run("export", "export", *args, "--format", "jsonl", "-o", str(out / f"{len(docs)}.jsonl"))
                run("export", "export", *args, "--format", "html", "-o", str(out / f"{len(docs)}.html"), "--redact")
            run("export", "export", secret)
            run("fork", "fork", S1, "ce951734", "--dry-run", "--sessions-dir", ex)
            run("fork", "fork", str(store["F"]), "u5", "--dry-run")
            run("diff", "diff", S1, "28e2429e", "a3a7a4d8", "--sessions-dir", ex, code=(0, 1))
            run("diff", "diff", str(store["P"]), str(store["F"]), code=(0, 1))
            run("validate", "validate", ex, st, str(WRITERS / "two-bursts-16.jsonl"), code=(0, 1))
            run("secrets", "secrets", ex, st, secret, code=(0, 1))
            run("watch", "watch", str(store["P"]), "--until-idle", "0")
            run("demo", "demo")
            run("cache", "cache")
            run("cache clear", "cache", "clear")
            run("help", "help")
            run("help", "help", "json")
            run("tree", "tree", str(tmp / "none.jsonl"), code=(2,))  # the error document
            run("stats", "stats", str(tmp / "none.jsonl"), code=(2,))
        finally:
            cache.configure(previous)
    assert {P_ID, F_ID} <= {s["id"] for c, d in docs if c == "stats" for s in d.get("sessions", [])}
    return docs


def watch_events(tmp_path) -> list[dict]:
    """What ``watch --json`` prints of every kind of event: the core's events (two writers, each
    meaning, damage, a rewrite, a deletion) and the watch's own (``start``, ``switched``)."""
    from pisess.core.model.follow import Watch

    lines = (WRITERS / "two-bursts-16.jsonl").read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[:4]))
    w = Watch(str(live))
    events = [e.to_json() for e in w.start(0)]
    meanings = [entry("compaction", "c1", None, summary="S", firstKeptEntryId="x", tokensBefore=12),
                entry("model_change", "m1", "c1", provider="p", modelId="m"),
                entry("thinking_level_change", "t1", "m1", thinkingLevel="high"),
                entry("label", "l1", "t1", targetId="c1", label="here"),
                entry("context_edit", "e1", "l1", targetId="c1", replacement=None),
                entry("session_info", "n1", "e1", name="Work"),
                entry("branch_summary", "b1", "n1", fromId="c1", summary="s"),
                entry("leaf", "f1", "b1", targetId="c1")]
    with open(live, "ab") as fh:
        fh.write(b"".join(lines[4:]))
        fh.write(b"".join(json.dumps(e).encode() + b"\n" for e in meanings) + b"not json\n")
    events += [e.to_json() for e in w.poll(1)]
    live.write_bytes(b"".join(lines[:3]))
    events += [e.to_json() for e in w.poll(2)]
    live.unlink()
    events += [e.to_json() for e in w.poll(3)]
    w2 = Watch(str(WRITERS / "two-bursts-16.jsonl"))
    w2.start(0)
    events += [w2.start_json(), w2.switched_json()]
    return events


def test_every_event_kind_is_seen(tmp_path):
    """The events walked below are every kind watch prints (so the rules hold for each)."""
    kinds = {e["event"] for e in watch_events(tmp_path)}
    assert kinds >= {"start", "entry", "branch", "leaf_moved", "compaction", "branch_summary", "model", "thinking",
                     "label", "context_edit", "session_name", "concurrent_writers", "damage", "rewritten", "deleted",
                     "switched"}


def test_no_file_no_plural_count_in_any_document(documents, tmp_path):
    """The session file is `path`; an integer is never under a plural noun; counts by category
    are `<thing>CountBy<Key>`: in every command's document and every watch event."""
    found = [f"{command}: {p}" for command, doc in documents for p in problems_of(command, doc)]
    found += [f"watch {e['event']}: {p}" for e in watch_events(tmp_path) for p in problems_of("watch", e)]
    assert found == []


def test_the_walk_finds_what_it_forbids():
    """The rules can fail: version 1's names are each caught (and pi's own data is left alone)."""
    old = {"file": "x", "entries": 3, "summary": {"files": 1, "filesWithErrors": 0},
           "total": {"toolCalls": {"bash": 2}, "thinkingLevels": {"high": 1}}, "rows": [{"branches": 2}],
           "entryBytes": 10, "wallMs": 5, "tokens": {"input": 1}, "messageCountByRole": {"users": 1}}
    assert sorted(problems_of("stats", old)) == [
        ".entries: an integer under a plural noun (a count is `<thing>Count`)",
        ".file: the session file is `path`",
        ".rows[].branches: an integer under a plural noun (a count is `<thing>Count`)",
        ".summary.files: an integer under a plural noun (a count is `<thing>Count`)",
        ".summary.filesWithErrors: an integer under a plural noun (a count is `<thing>Count`)",
        ".total.thinkingLevels: counts by category are `<thing>CountBy<Key>`",
        ".total.toolCalls: counts by category are `<thing>CountBy<Key>`"]
    pi = {"messages": [{"role": "toolResult", "details": {"files": 3, "file": "a"}}], "header": {"file": "b"}}
    assert problems_of("context", pi) == []
    assert problems_of("diff", {"messages": [{"op": "same", "counts": 1}]}) != []  # diff's steps are pisess's


def test_every_document_says_its_version(documents):
    """Each document carries an integer version: the command's (2 where version 2 renamed its keys,
    1 for fork, help and the error document)."""
    seen = set()
    for command, doc in documents:
        assert type(doc.get("version")) is int, command
        assert doc["version"] == json_version(command, doc), (command, doc.get("version"))
        seen.add((command, doc["version"]))
    assert {c for c, _ in seen} == set(JSON_VERSIONS)
    assert ("tree", ERROR_VERSION) in seen and ("stats", 2) in seen and ("fork", 1) in seen


def test_watch_prints_its_version_on_every_event(documents):
    assert [(c, d["version"], d["event"]) for c, d in documents if c == "watch"] == [("watch", 2, "start")]


def _table() -> dict[str, tuple[int, set, set]]:
    """``pisess help json``'s table of documents: name -> (version, every key listed, those always there)."""
    section = TOPIC.split("## Each document", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (`[a-z ]+`|error) \| (\d+) \| (.+) \|$", section, flags=re.M)
    out = {}
    for name, version, cell in rows:
        keys = re.findall(r"`([A-Za-z]+\??)`", cell)
        out[name.strip("`")] = (int(version), {k.rstrip("?") for k in keys}, {k for k in keys if not k.endswith("?")})
    return out


def test_the_topic_lists_every_document_with_its_version():
    """The table in pisess help json has one row per document, with the versions the tests expect."""
    table = _table()
    assert {name: v for name, (v, _, _) in table.items()} == {**JSON_VERSIONS, "error": ERROR_VERSION}


def test_the_topic_lists_every_top_level_key_printed(documents):
    """Every top-level key a command prints is in its row of the table (``version`` and
    ``unreadable`` are every document's), and every key the row gives as always there is printed."""
    table = _table()
    printed: dict[str, set] = {}
    for command, doc in documents:
        name = "error" if "error" in doc and set(doc) <= {"version", "error", "unreadable"} else command
        keys = set(doc) - {"version", "unreadable"}
        assert keys <= table[name][1], (name, sorted(keys - table[name][1]))
        printed.setdefault(name, set()).update(keys)
    for name, keys in printed.items():
        if name != "watch":  # its row names events besides keys
            assert table[name][2] - {"unreadable"} <= keys, (name, sorted(table[name][2] - keys))


def test_the_rename_table_names_only_keys_printed_today(documents, tmp_path):
    """Each version 2 name in the topic's table of renames is printed somewhere (a rename the code
    did not make, or undid, fails here)."""
    section = TOPIC.split("## What version 2 renamed", 1)[1]
    new = set()
    for row in re.findall(r"^\| .+ \| .+ \| (.+) \|$", section, flags=re.M)[1:]:
        new |= {n.split(".")[-1].removesuffix("[]") for n in re.findall(r"`([A-Za-z.*\[\]]+)`", row)}
    keys: set = set()

    def collect(v) -> None:
        if isinstance(v, dict):
            keys.update(v)
            for x in v.values():
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)

    for _, doc in documents:
        collect(doc)
    for e in watch_events(tmp_path):
        collect(e)
    assert new <= keys, sorted(new - keys)


def test_switched_is_printed_as_the_view_prints_it(capsys):
    """The watch's own events (start, switched) go through the same NDJSON printer, version and all."""
    from pisess.cli.commands.watch_cmd import JsonView
    from pisess.core.model.follow import Watch

    JsonView().switched(Watch("/s/a.jsonl"))
    assert json.loads(capsys.readouterr().out) == {"version": 2, "event": "switched", "path": "/s/a.jsonl"}
