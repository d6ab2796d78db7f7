"""The search index (``pisess.core.analyses.search``): every answer through it equals the
scan's (``--no-cache``), hit for hit, in order, with placement, line and snippet, while the files
grow, are rewritten, cut short, replaced, forked and deleted; what it cannot narrow is scanned
and said so (``via``); the index file's modes, faults and neighbours."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import time
from array import array
from pathlib import Path

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from conftest import SHARDS, assistant, encode_line, entry, examples, header, message, user
from pisess.core.analyses import search
from pisess.core.analyses.search import codec, database, places, query, rows, scan, stats, update
from pisess.core.reading import cache, cache_status
from pisess.core.reading.scan import open_lenient
from test_cache import RUNNER, Using
from test_cache import _apply as _cache_apply

ALPHABET = "ab Ab\n\"é\\ſK<"
_IDS = [f"n{i}" for i in range(10)]
TS = "2026-01-01T00:00:00.000Z"


def _line(d) -> bytes:
    return encode_line(d) + b"\n"


_text = st.text(ALPHABET, max_size=12)


@st.composite
def _entry_line(draw) -> bytes:
    """One line of a random pi-like tree: every kind of searchable text, and lines no reader keeps."""
    kind = draw(st.sampled_from(["user", "assistant", "assistant", "tool", "bash", "compaction", "branch", "edit",
                                 "custom", "label", "name", "system", "odd"]))
    eid = draw(st.sampled_from(_IDS))
    parent = draw(st.one_of(st.none(), st.sampled_from(_IDS)))
    t = draw(_text)
    if kind == "user":
        return _line(user(eid, parent, text=t))
    if kind == "assistant":
        a = assistant(eid, parent, text=t)
        extra = draw(st.sampled_from(["", "thinking", "call", "error"]))
        if extra == "thinking":
            a["message"]["content"].insert(0, {"type": "thinking", "thinking": draw(_text)})
        elif extra == "call":
            a["message"]["content"].append({"type": "toolCall", "id": "c1", "name": draw(st.sampled_from(["bash", "Kab"])),
                                            "arguments": {"command": draw(_text), "n": [draw(_text), 1]}})
        elif extra == "error":
            a["message"]["errorMessage"] = draw(_text)
        return _line(a)
    if kind == "tool":
        return _line(message(eid, parent, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                                           "content": [{"type": "text", "text": t}], "isError": False, "timestamp": 3}))
    if kind == "bash":
        return _line(message(eid, parent, {"role": "bashExecution", "command": draw(_text), "output": t,
                                           "exitCode": 0, "timestamp": 3}))
    if kind == "compaction":
        c = entry("compaction", eid, parent, summary=t, firstKeptEntryId=draw(st.sampled_from(_IDS)), tokensBefore=5)
        tail = draw(st.sampled_from(["", "copies", "copies", "spaced", "other"]))
        if tail == "other":
            c["retainedTail"] = draw(st.sampled_from(["ab", {}, [], 5, [1, "ab"]]))
        elif tail:  # the harness's copies of the kept messages (skipped when a hit's line is read back)
            c["retainedTail"] = [user("k", None, text=draw(_text))["message"] for _ in range(draw(st.integers(1, 2)))]
            if tail == "spaced":  # not as pi writes it: found nowhere, read whole
                return json.dumps(c, ensure_ascii=False).encode() + b"\n"
        return _line(c)
    if kind == "branch":
        return _line(entry("branch_summary", eid, parent, summary=t, fromId=draw(st.sampled_from(_IDS))))
    if kind == "edit":
        return _line(entry("context_edit", eid, parent, targetId=draw(st.sampled_from(_IDS)),
                           replacement=draw(st.sampled_from([None, {"role": "user", "content": [{"type": "text",
                                                                                                   "text": t}]}]))))
    if kind == "custom":
        return _line(entry("custom_message", eid, parent, customType="x", content=t, display=True))
    if kind == "label":
        return _line(entry("label", eid + "L", parent, targetId=draw(st.sampled_from(_IDS)), label=t))
    if kind == "name":
        return _line(entry("session_info", eid + "I", parent, name=t))
    if kind == "system":
        return _line(message(eid, parent, {"role": "system", "content": [{"type": "text", "text": t}],
                                           "sections": {"env": draw(_text)},
                                           "toolsAdded": [{"name": "abK", "description": draw(_text)}]}))
    return draw(st.sampled_from([b"\n", b"1\n", b"{}\n", b"[]\n", b"null\n", _line(header(id="later")),
                                 b"{oops ab Ab\n", b"ab\"\\u0061b\n", ("{\"x\": \"\u00e9ab\n").encode()]))


_OPS = st.one_of(
    st.tuples(st.just("append"), st.lists(_entry_line(), min_size=1, max_size=4)),
    st.tuples(st.just("half"), _entry_line(), st.floats(0.05, 0.95)),  # half a line, completed by the next op
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("rewrite"), st.floats(0, 1)),  # same size, one byte changed
    st.tuples(st.just("rename"), st.lists(_entry_line(), max_size=3)),  # replaced by a new file
    st.tuples(st.just("fork"), st.floats(0, 1)),  # a second session: a copy of a prefix
    st.tuples(st.just("delete")),  # the second session goes
    st.tuples(st.just("damage"),),  # the index file overwritten with garbage
    # pi's next turns: plain messages from the last entry on, with new ids (short or sharing their
    # first 8 characters), or the first one reusing an id (the kept places cannot go on then)
    st.tuples(st.just("turns"), st.lists(st.tuples(st.sampled_from(["user", "assistant", "toolResult"]), _text),
                                         min_size=1, max_size=3), st.sampled_from(["short", "long", "reused"])),
)

PATTERNS = st.one_of(
    st.tuples(st.text(ALPHABET, min_size=1, max_size=5), st.booleans(), st.just(False)),
    st.tuples(st.sampled_from(["ab", "b.b", "(?i)ab ", "a[b ]b", "Ab|ab", "^ab", "ab$", "K", "a\\nb",
                               "\u00e9ab", "ab+ b", "(ab)ab"]), st.booleans(), st.just(True)),
)


def _search(root: Path, pat: tuple, *extra: str) -> dict:
    pattern, ic, rx = pat
    args = ["search", pattern, "--all", "--sessions-dir", str(root), "--json", *extra]
    if ic:
        args.append("-i")
    if rx:
        args.append("-e")
    r = RUNNER.invoke(__import__("pisess.cli.app", fromlist=["app"]).app, args, catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    return json.loads(r.stdout)


def settle(root: Path) -> None:
    """Every session file under ``root`` (or the file ``root``) as if written an hour ago (not in
    the clock tick of its indexing: its stat alone then says it is unchanged, and a set of such
    files is kept)."""
    past = time.time() - 3600
    for p in [root] if root.is_file() else root.rglob("*.jsonl"):
        os.utime(p, (past, past))


def assert_same_as_scan(root: Path, pats: list, rounds: int = 2) -> None:
    for pat in pats:
        scan = _search(root, pat, "--no-cache")
        assert scan["via"] == "scan"
        for _ in range(rounds):  # building (or refreshing) the index, then from it as it is (, then from the set)
            got = _search(root, pat)
            expect_via = "index" if query.usable_for(pat[0], pat[1], pat[2]) else "scan"
            assert got.pop("via") == expect_via, pat
            assert got == {k: v for k, v in scan.items() if k != "via"}, pat


def _apply(root: Path, index_dir: Path, op: tuple, pending: list) -> None:
    """test_cache's operations on the session (appends, half lines, truncation, same-size rewrite,
    replacement), and a fork, a deleted fork and a damaged index."""
    path = root / "p" / "s.jsonl"
    fork = root / "p" / "f.jsonl"
    kind = op[0]
    if kind in ("append", "half", "truncate", "rewrite", "rename"):
        _cache_apply(path, index_dir, op, pending)
        return
    if pending:  # complete the half line first, as pi's next write would
        with path.open("ab") as fh:
            fh.write(pending.pop())
    data = path.read_bytes()
    if kind == "turns":
        with path.open("ab") as fh:
            fh.write(b"".join(_turns(data, op[1], op[2])))
    elif kind == "fork":
        cut = data.rfind(b"\n", 0, max(1, int(len(data) * op[1]))) + 1
        fork.write_bytes(_line(header(id="forked")) + data[cut:] if cut else data)
    elif kind == "delete":
        if fork.exists():
            fork.unlink()
    elif kind == "damage":
        target = index_dir / database.NAME
        if target.exists():
            target.write_bytes(os.urandom(4096))
            for suffix in ("-wal", "-shm"):
                Path(str(target) + suffix).unlink(missing_ok=True)


def _last_id(data: bytes) -> str | None:
    """The id of the file's last line, when it is an entry with a string id (pi's next turn's parent)."""
    last = data.rstrip(b"\n").rpartition(b"\n")[2]
    try:
        v = json.loads(last)
    except ValueError:
        return None
    return v.get("id") if isinstance(v, dict) and isinstance(v.get("id"), str) else None


def _turns(data: bytes, turns: list, style: str) -> list[bytes]:
    """The lines of pi's next turns after ``data``: each message the child of the one before."""
    parent = _last_id(data)
    out = []
    for k, (role, text) in enumerate(turns):
        eid = (f"t{len(data)}x{k}" if style == "short" else f"tttttttt{len(data)}x{k}" if style == "long"
               else "n1" if k == 0 else f"r{len(data)}x{k}")
        if role == "toolResult":
            out.append(_line(message(eid, parent, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                                                   "content": [{"type": "text", "text": text}], "isError": False,
                                                   "timestamp": 3})))
        else:
            out.append(_line((user if role == "user" else assistant)(eid, parent, text=text)))
        parent = eid
    return out


def _run_ops(tmp: Path, first: list, ops: list, pats: list, settled: bool = False) -> None:
    """``ops`` one after the other, each search through the index the scan's; ``settled``: the
    files as if written long before each search (``settle``), searched three times (the third
    answers from the set of files kept whole)."""
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "p").mkdir(parents=True)
    (tmp / "p" / "s.jsonl").write_bytes(_line(header()) + b"".join(first))
    index_dir = tmp / "cache"
    with Using(index_dir):
        if settled:
            settle(tmp)
        assert_same_as_scan(tmp, pats, 3 if settled else 2)
        pending: list = []
        for op in ops:
            _apply(tmp, index_dir, op, pending)
            if settled:
                settle(tmp)
            assert_same_as_scan(tmp, pats, 3 if settled else 2)


@settings(max_examples=examples(60))
@given(first=st.lists(_entry_line(), max_size=10), ops=st.lists(_OPS, min_size=1, max_size=4),
       pats=st.lists(PATTERNS, min_size=1, max_size=3))
def test_every_search_through_the_index_is_the_scan(tmp_path, first, ops, pats):
    """Appends (whole and half lines), same-size rewrites, truncations, replacement, forks, a
    deleted session and a damaged index, in any order: search --json through the index (built,
    then as it is) equals search --no-cache, for literals and regexes, with and without -i."""
    _run_ops(tmp_path / "case", first, ops, pats)


@settings(max_examples=examples(40))
@given(first=st.lists(_entry_line(), max_size=10), ops=st.lists(_OPS, min_size=1, max_size=4),
       pats=st.lists(PATTERNS, min_size=1, max_size=2))
def test_every_search_of_settled_files_through_the_index_is_the_scan(tmp_path, first, ops, pats):
    """The same with files whose stat alone says they are unchanged (written long before): the set
    of the search's files is kept whole and a later search takes it at once, until a file changes
    (appended, cut, rewritten in place with its mtime put back, replaced, a fork added or deleted)."""
    _run_ops(tmp_path / "case", first, ops, pats, settled=True)


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=examples(120) // SHARDS)
@given(first=st.lists(_entry_line(), max_size=30), ops=st.lists(_OPS, min_size=1, max_size=8),
       pats=st.lists(PATTERNS, min_size=1, max_size=4))
def test_every_search_through_the_index_is_the_scan_long(tmp_path, shard, first, ops, pats):
    """The same, longer files and histories (``-m slow``): 120 examples in ``SHARDS`` runs (as the
    cache's long property: the length of a history is what this adds, not the count)."""
    _run_ops(tmp_path / "case", first, ops, pats)


# --- kept places: every entry placed once, carried over appends -----------------------------------------


@st.composite
def _tree_line(draw, k: int, ids: list) -> bytes:
    """Entry ``k`` of a tree of distinct ids (``e0``, ``e1``...): mostly the child of the entry
    before, sometimes of another one or of none, of every kind that moves or names entries."""
    eid = f"e{k}"
    parent = ids[-1] if ids else None
    if ids and draw(st.integers(0, 5)) == 0:
        parent = draw(st.sampled_from([None, "zz", *ids]))
    kind = draw(st.sampled_from(["user", "user", "assistant", "assistant", "tool", "compaction", "branch", "label",
                                 "model", "name", "edit", "leaf", "odd"]))
    t = draw(_text)
    target = draw(st.sampled_from(["zz", *ids])) if ids else "zz"
    if kind == "user":
        return _line(user(eid, parent, text=t))
    if kind == "assistant":
        return _line(assistant(eid, parent, text=t))
    if kind == "tool":
        return _line(message(eid, parent, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                                           "content": [{"type": "text", "text": t}], "isError": False, "timestamp": 3}))
    if kind == "compaction":
        extra = {"retainedTail": []} if draw(st.booleans()) else {}
        return _line(entry("compaction", eid, parent, summary=t, firstKeptEntryId=target, tokensBefore=5, **extra))
    if kind == "branch":
        return _line(entry("branch_summary", eid, parent, summary=t, fromId=target))
    if kind == "label":
        return _line(entry("label", eid, parent, targetId=target, label=t))
    if kind == "model":
        return _line(entry("model_change", eid, parent, provider="p", modelId="m"))
    if kind == "name":
        return _line(entry("session_info", eid, parent, name=t))
    if kind == "edit":
        return _line(entry("context_edit", eid, parent, targetId=target, replacement=None))
    if kind == "leaf":
        return _line(entry("leaf", eid, parent, targetId=target))
    return draw(_entry_line())


@st.composite
def _tree(draw) -> list[bytes]:
    ids: list = []
    out = []
    for k in range(draw(st.integers(0, 8))):
        out.append(draw(_tree_line(k, ids)))
        ids.append(f"e{k}")
    if draw(st.booleans()):  # (most sessions end with a message: what pi's next turn goes on from)
        out.append(_line(assistant(f"e{len(ids)}", ids[-1] if ids else None, text=draw(_text))))
    return out


def _places(path: Path, reader: str = "auto") -> places.Places | None:
    session, note = open_lenient(str(path), reader, None)
    return places.places_of(session, note)


def _flat(p: places.Places) -> tuple:
    """What a hit can show of each entry, and of the file (the kind table's order aside)."""
    entries = [(p.offsets[i], p.lines[i], places.WHERE[p.where[i]], p.ids[i], p.kind_table[p.kinds[i]])
               for i in range(len(p.offsets))]
    return entries, (p.session_id, p.name, p.cwd, p.created_at, p.reader, p.note, p.placement_error, p.dropped_lines,
                     p.id_width)


_ID_LISTS = st.one_of(
    st.integers(1, 3).flatmap(lambda w: st.lists(st.text("ab\né", min_size=w, max_size=w), max_size=6)),
    st.lists(st.one_of(st.text("ab\n", max_size=3), st.none(), st.integers()), max_size=6),
)


@settings(max_examples=examples(200))
@given(ids=_ID_LISTS, rest=st.lists(st.text("ab", min_size=2, max_size=2), max_size=3))
def test_kept_ids_read_back_are_the_ids(ids, rest):
    n = len(ids)
    p = places.Places(array("q", range(n)), array("q", range(n)), bytes(n), ids, bytes(n), [("message", "user")],
                 "s", None, "/p", "t", "cli", None, None, [], 8)
    back = codec.decode_places(codec.encode_places(p))
    assert back is not None and len(back.ids) == n and list(back.ids) == ids
    for k in range(-n, n):
        assert back.ids[k] == ids[k]
    for k in (n, -n - 1):
        with pytest.raises(IndexError):
            back.ids[k]  # noqa: B018
    assert back.ids[1:] == ids[1:] and back.ids[::-1] == ids[::-1]
    again = codec.decode_places(codec.encode_places(back))  # (kept again as read)
    assert again is not None and list(again.ids) == ids
    grown = places.Places(array("q", range(n + len(rest))), array("q", range(n + len(rest))), bytes(n + len(rest)),
                     [*ids, *rest], bytes(n + len(rest)), p.kind_table, "s", None, "/p", "t", "cli", None, None, [], 8)
    tail = codec.decode_tail(back, codec.encode_tail(grown, n))
    assert tail is not None and list(tail.ids) == [*ids, *rest]


def _appended(path: Path, start: int) -> list:
    out = []
    data = path.read_bytes()
    number = data.count(b"\n", 0, start)
    off = start
    for raw in data[start:].split(b"\n")[:-1]:
        number += 1
        v = rows.parsed(raw)
        if v is not rows.BLANK:
            out.append((off, number, places.turn(v)))
        off += len(raw) + 1
    return out


@settings(max_examples=examples(200))
@given(first=_tree(), turns=st.lists(st.tuples(st.sampled_from(["user", "assistant", "toolResult"]), _text),
                                     min_size=1, max_size=4),
       style=st.sampled_from(["short", "long", "reused"]), reader=st.sampled_from(["auto", "harness", "cli"]),
       more=st.lists(_entry_line(), max_size=2))
# (found by Hypothesis: the random line after the turns is itself a next turn, carried over rightly)
@example(first=[_line(assistant("e0", None, text=""))], turns=[("user", "")], style="reused", reader="auto",
         more=[_line(user("n0", "n1", text=""))])
def test_kept_places_carried_over_an_append_are_the_places_of_the_grown_file(tmp_path, first, turns, style, reader,
                                                                             more):
    """Where the kept places go on after an append (``extend_places``), they are what placing the
    grown file anew gives, entry for entry; anything else appended than pi's next turns is refused
    (``more`` is random lines: blank ones, or by chance a next turn of its own)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(_line(header()) + b"".join(first))
    before = _places(path, reader)
    start = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"".join(_turns(path.read_bytes(), turns, style)) + b"".join(more))
    after = _places(path, reader)
    got = places.extend_places(before, _appended(path, start)) if before is not None else None
    event("carried over" if got is not None else "placed anew")
    if got is not None:
        assert after is not None and _flat(got) == _flat(after)
        grown = path.read_bytes()
        assert _are_next_turns(grown[:len(grown) - len(b"".join(more))], more)


def _are_next_turns(data: bytes, lines: list[bytes]) -> bool:
    """Whether ``lines``, blank ones aside, are pi's next turns after the file ``data``: messages, each
    the child of the entry written just before it, with a string id no entry has yet."""
    seen = set()
    for raw in data.split(b"\n"):
        try:
            v = json.loads(raw)
        except ValueError:
            continue
        if isinstance(v, dict) and isinstance(v.get("id"), str):
            seen.add(v["id"])
    parent = _last_id(data)
    for raw in lines:
        v = rows.parsed(raw)
        if v is rows.BLANK:
            continue
        eid = v.get("id") if isinstance(v, dict) else None
        if not (isinstance(eid, str) and v.get("type") == "message" and v.get("parentId") == parent
                and eid not in seen):
            return False
        seen.add(eid)
        parent = eid
    return True


def test_kept_places_go_on_over_pis_next_turns(tmp_path):
    """The common case is carried over: a session (with a compaction, a label, a leaf record,
    branches) that pi's next turns extend; a reused id, a turn off the leaf or an edit are not."""
    path = tmp_path / "s.jsonl"
    lines = [user("e0", None), assistant("e1", "e0"), user("e2", "e1"), entry("label", "e3", "e2", targetId="e1",
             label="x"), entry("compaction", "e4", "e3", summary="s", firstKeptEntryId="e2", tokensBefore=5),
             user("e5", "e1", text="a branch"), assistant("e6", "e4"), entry("leaf", "e7", "e6", targetId="e6"),
             user("e8", "e7")]
    path.write_bytes(_line(header()) + b"".join(_line(x) for x in lines))
    for reader in ("auto", "harness", "cli"):
        before = _places(path, reader)
        assert before is not None and before.ext is not None, reader
        start = path.stat().st_size
        grown = tmp_path / "g.jsonl"
        for turns, goes_on in (([user("n1", "e8"), assistant("n2", "n1")], True),
                               ([user("e2", "e8")], False),  # an id the file has
                               ([user("n1", "e6")], False),  # not the leaf's child
                               ([entry("context_edit", "n1", "e8", targetId="e2", replacement=None)], False)):
            grown.write_bytes(path.read_bytes() + b"".join(_line(x) for x in turns))
            got = places.extend_places(before, _appended(grown, start))
            assert (got is not None) == goes_on, (reader, turns)
            if got is not None:
                assert _flat(got) == _flat(_places(grown, reader))
                assert [places.WHERE[w] for w in got.where[-2:]] == ["active", "active"]


def test_the_where_names_are_placements():
    from pisess.core.model import placement

    assert places.WHERE == placement.WHERE


def test_a_search_after_pis_next_turns_places_nothing_anew(tmp_path, monkeypatch):
    """Through the index, a search after an append of pi's next turns places its hits from the
    places kept (carried over by the index's update, one small part per append, written again as
    one after ``MAX_PARTS``), and answers what the scan answers."""
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    f = root / "p" / "a.jsonl"
    f.write_bytes(_line(header()) + b"".join(_line(x) for x in [user("u1", None, text="find the needle"),
                                                               assistant("a1", "u1", text="a needle")]))
    monkeypatch.setattr(update, "MAX_PARTS", 3)
    where = tmp_path / "cache"
    with Using(where):
        _search(root, ("needle", False, False))
        calls = []
        real = places.places_of
        monkeypatch.setattr(query, "places_of", lambda *a: calls.append(a) or real(*a))
        parts = []
        for k in range(5):
            with f.open("ab") as fh:
                fh.write(b"".join(_turns(f.read_bytes(), [("user", f"needle {k}"), ("assistant", "no")], "short")))
            want = _search(root, ("needle", False, False), "--no-cache")
            got = _search(root, ("needle", False, False))
            assert got.pop("via") == "index" and not calls
            assert got == {k: v for k, v in want.items() if k != "via"} and len(got["hits"]) == 3 + k
            con = sqlite3.connect(where / database.NAME)
            parts.append(con.execute("SELECT count(*) FROM places").fetchone()[0])
            con.close()
        assert parts == [2, 3, 1, 2, 3]


# --- what the index can narrow ------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "ic", "rx", "runs"), [
    ("cache.ts", False, False, ["cache.ts"]),
    ("ab", False, False, []),  # shorter than a trigram: scanned
    ("a\x00bcd", False, False, ["bcd"]),
    ("\u00e9t\u00e9 abc", True, False, [" abc"]),  # -i: ASCII only (SQLite's fold is not Python's)
    (r"foo\.bar(x|y)+baz", False, True, ["foo.bar", "baz"]),
    (r"a.b", False, True, []),
    ("(?i)kelvin", False, True, ["elv"]),  # re.IGNORECASE folds K, ſ and İ/ı to k, s and i
    ("[abc]+", False, True, []),
])
def test_literal_runs(pattern, ic, rx, runs):
    assert query.literal_runs(pattern, ic, rx) == runs


def test_a_long_literal_asks_for_some_of_its_trigrams_and_finds_what_the_scan_finds(tmp_path):
    """A literal of more trigrams than a query asks for: the spread few name candidate rows, the
    whole run decides, and the hits are the scan's (its words in another order are no hit)."""
    literal = "Summarize the open TODOs in the repo"
    assert query.fts_query([literal]).count(" AND ") + 1 == query.MAX_TRIGRAMS
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    words = literal.split()
    lines = [_line(header()), _line(user("u1", None, text=literal)),
             _line(assistant("a1", "u1", text=" ".join(reversed(words)))),  # (its words, not the run)
             _line(user("u2", "a1", text=literal.upper())), _line(assistant("a2", "u2", text="x " + literal + " y"))]
    (root / "p" / "a.jsonl").write_bytes(b"".join(lines))
    with Using(tmp_path / "cache"):
        for ic in (False, True):
            assert_same_as_scan(root, [(literal, ic, False)], rounds=2)
        hits = _search(root, (literal, False, False))["hits"]
    assert [h["entryId"] for h in hits] == ["u1", "a2"]


def test_via_is_said_and_short_patterns_scan(tmp_path):
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    (root / "p" / "a.jsonl").write_bytes(_line(header()) + _line(user("u1", None, text="find the needle")))
    with Using(tmp_path / "cache"):
        assert _search(root, ("needle", False, False))["via"] == "index"
        assert _search(root, ("ne", False, False))["via"] == "scan"
        assert _search(root, ("ne+dle", False, True))["via"] == "index"
        assert _search(root, ("n.e", False, True))["via"] == "scan"
        assert _search(root, ("needle", False, False), "--no-cache")["via"] == "scan"
        assert (tmp_path / "cache" / database.NAME).exists()


# --- a compaction's retained copies: not read back -----------------------------------------------------


def _compaction(summary: str, copies: list[str]) -> dict:
    return entry("compaction", "c1", "u1", summary=summary, firstKeptEntryId="u1", tokensBefore=5,
                 retainedTail=[user("k", None, text=t)["message"] for t in copies], details={"readFiles": []})


def test_the_span_of_the_retained_copies_is_kept_only_where_it_is_written_once_as_pi_writes_it():
    c = _compaction("the summary", ["kept " * 50])
    raw = encode_line(c)
    start, end = rows.unread_span(raw, json.loads(raw))
    assert raw[start - len(b'"retainedTail":'):start] == b'"retainedTail":'
    assert json.loads(raw[start:end]) == c["retainedTail"]
    spaced = json.dumps(c).encode()  # (not compact JSON: not found, the line is read whole)
    assert rows.unread_span(spaced, json.loads(spaced)) is None
    twice = raw[:-1] + b',"x":{"retainedTail":' + raw[start:end] + b"}}"
    assert rows.unread_span(twice, json.loads(twice)) is None
    for other in (dict(c, type="branch_summary", fromId="u1"), dict(c, retainedTail=[]), dict(c, retainedTail="ab")):
        assert rows.unread_span(encode_line(other), other) is None


def test_a_hit_line_is_read_back_without_its_retained_copies(tmp_path, monkeypatch):
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    copies = ["the needle in a copy " + "x" * 40_000 for _ in range(5)]
    (root / "p" / "a.jsonl").write_bytes(_line(header()) + _line(user("u1", None, text="find the needle"))
                                         + _line(_compaction("the needle in the summary", copies)))
    parsed: list[int] = []
    real = scan.parse_line
    monkeypatch.setattr(scan, "parse_line", lambda raw: parsed.append(len(raw)) or real(raw))
    with Using(tmp_path / "cache"):
        scanned = _search(root, ("needle", False, False), "--no-cache")
        _search(root, ("needle", False, False))  # (builds the index)
        parsed.clear()
        got = _search(root, ("needle", False, False))
    assert got.pop("via") == "index"
    assert got == {k: v for k, v in scanned.items() if k != "via"}
    assert [h["field"] for h in got["hits"]] == ["user", "summary"]
    assert parsed and max(parsed) < 1000  # (the line is 200 KB)


@pytest.mark.parametrize(("summary", "copy", "pattern"), [
    # the summary escaped as no JSON writer escapes, the copy not: the scan's raw check passes on the copy's bytes
    ("x\\u0061bc", "xabc", "xabc"),
    ("x\\u0061bc", "tea", "xabc"),  # escaped only: no line holds the bytes, no hit either way
    ("caf\\u00e9 ab", "caf\u00e9", "caf\u00e9"),
    ("the needle", "needle", "needle"),
    ("ab", "the needle", "needle"),  # in the copies only: never a hit
    ("end ab", "x", '"retainedTail":[]'),  # what the line read without its copies holds, and the line does not
    ("ab", "x", 'ab","firstKeptEntryId'),
])
def test_a_line_read_without_its_copies_finds_what_the_scan_finds(tmp_path, summary, copy, pattern):
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    line = encode_line(_compaction("@", [copy]))
    line = line.replace(b'"summary":"@"', b'"summary":"' + summary.encode() + b'"')
    assert rows.unread_span(line, json.loads(line)) is not None
    (root / "p" / "a.jsonl").write_bytes(_line(header()) + _line(user("u1", None, text="u")) + line + b"\n")
    with Using(tmp_path / "cache"):
        for ic in (False, True):
            assert_same_as_scan(root, [(pattern, ic, False)], rounds=3)


# --- the file ---------------------------------------------------------------------------------------


def _one_session(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    (root / "p" / "a.jsonl").write_bytes(_line(header()) + _line(user("u1", None, text="find the needle")))
    return root


def test_modes_and_the_cache_command(tmp_path):
    root = _one_session(tmp_path)
    where = tmp_path / "cache"
    with Using(where):
        _search(root, ("needle", False, False))
        index = where / database.NAME
        assert stat.S_IMODE(os.stat(where).st_mode) == 0o700
        for f in where.iterdir():
            if f.name.startswith(database.NAME):
                assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert cache_status.usage(str(where)).size >= index.stat().st_size > 0
        assert cache.clear(str(where))[0] >= 1
        assert not index.exists()
    assert not any(p.name.startswith(database.NAME) for p in root.rglob("*"))  # never beside the sessions


def test_off_writes_no_index(tmp_path, monkeypatch):
    root = _one_session(tmp_path)
    where = tmp_path / "cache"
    with Using(where):
        _search(root, ("needle", False, False), "--no-cache")
        assert not (where / database.NAME).exists()
    with Using(where):
        previous = cache.configure(cache.Settings(directory=None))
        try:
            assert _search(root, ("needle", False, False))["via"] == "scan"
        finally:
            cache.configure(previous)
        assert not (where / database.NAME).exists()


@pytest.mark.parametrize("damage", ["garbage", "empty-other-db", "cut"])
def test_a_damaged_or_foreign_index_is_moved_aside_and_rebuilt(tmp_path, damage):
    root = _one_session(tmp_path)
    where = tmp_path / "cache"
    index = where / database.NAME
    with Using(where):
        want = _search(root, ("needle", False, False), "--no-cache")
        _search(root, ("needle", False, False))
        if damage == "garbage":
            index.write_bytes(b"not a database at all" * 300)
        elif damage == "empty-other-db":
            index.unlink()
            con = sqlite3.connect(index)
            con.execute("CREATE TABLE other(x)")
            con.commit()
            con.close()
        else:
            data = index.read_bytes()
            index.write_bytes(data[: len(data) // 2])
        r = RUNNER.invoke(__import__("pisess.cli.app", fromlist=["app"]).app,
                          ["search", "needle", "--all", "--sessions-dir", str(root), "--json"], catch_exceptions=False)
        got = json.loads(r.stdout)
        got.pop("via")
        assert got == {k: v for k, v in want.items() if k != "via"}
        assert _search(root, ("needle", False, False))["via"] == "index"
        if damage != "cut":
            assert "moved aside" in r.stderr and r.stderr.count("moved aside") == 1
            assert (where / (database.NAME + ".damaged")).exists()


def test_a_transaction_cut_short_leaves_the_index_as_it_was(tmp_path, monkeypatch):
    """A process killed mid-index: its transaction never commits, the next search sees the
    index as it was before (and brings it up to date)."""
    root = _one_session(tmp_path)
    where = tmp_path / "cache"
    with Using(where):
        _search(root, ("needle", False, False))
        with (root / "p" / "a.jsonl").open("ab") as fh:
            fh.write(_line(user("u2", "u1", text="another needle")))

        def boom(*a, **k):
            raise KeyboardInterrupt

        monkeypatch.setattr(update, "iter_lines", boom)
        with pytest.raises(KeyboardInterrupt):
            update.build([str(root / "p" / "a.jsonl")])
        monkeypatch.undo()
        got = _search(root, ("needle", False, False))
        assert got["via"] == "index" and len(got["hits"]) == 2


def test_cache_index_ahead_of_time_and_the_cap(tmp_path):
    """pisess cache index builds it (no search needed), cache shows its size, the cap counts it
    and removes it whole (with SQLite's files beside it), never one part without the others."""
    root = _one_session(tmp_path)
    where = tmp_path / "cache"
    app = __import__("pisess.cli.app", fromlist=["app"]).app
    with Using(where):
        r = RUNNER.invoke(app, ["cache", "index", "--all", "--sessions-dir", str(root), "--json"],
                          catch_exceptions=False)
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout)["index"]["indexedFileCount"] == 1
        size = cache.search_index_size(str(where))
        assert size > 0
        shown = json.loads(RUNNER.invoke(app, ["cache", "--json"]).stdout)["cache"]
        assert shown["searchIndexBytes"] == size and shown["bytes"] >= size
        (where / (database.NAME + "-wal")).write_bytes(b"x")  # as if a writer were open
        assert cache.evict(str(where), cap=size // 2) == 1
        assert not [p for p in where.iterdir() if p.name.startswith(database.NAME)]
        assert _search(root, ("needle", False, False))["via"] == "index"  # built again when needed


# --- ls --search: pi 1.6's /resume search, answered from the index ---------------------------------------

from pisess.core.listing import resume_search as R  # noqa: E402


@pytest.mark.parametrize(("query", "tokens"), [
    ('foo "node cve" bar', [("fuzzy", "foo"), ("phrase", "node cve"), ("fuzzy", "bar")]),
    ('foo "unclosed bar', [("fuzzy", "foo"), ("fuzzy", '"unclosed'), ("fuzzy", "bar")]),
    ("  ", []),
    ('a"b c"d', [("fuzzy", "a"), ("phrase", "b c"), ("fuzzy", "d")]),
])
def test_resume_query_parsing(query, tokens):
    assert R.parse(query).tokens == tokens


def test_resume_matching():
    s = R.Candidate("Fix date parsing", "01955b3b-aaaa", "/home/you/webapp", lambda: "Make the CSV\n  reader stream")
    assert R.matches(R.parse("csv"), s)  # message text, any case
    assert R.matches(R.parse('"csv reader"'), s)  # a phrase: whitespace collapsed
    assert not R.matches(R.parse('"csv stream"'), s)
    assert R.matches(R.parse("fdp"), s)  # letters in order in the name
    assert R.matches(R.parse("wbp"), s)  # ... or in the cwd (webapp)
    assert not R.matches(R.parse("csv zzz"), s)  # every token must match
    assert R.matches(R.parse("re:DATE|nothing"), s)
    assert R.parse("re:(").error and not R.matches(R.parse("re:("), s)
    assert R.fuzzy_match("v2", "2v") and not R.fuzzy_match("v3", "2v")


_QUERIES = st.one_of(st.text("abAB \"é", min_size=1, max_size=8),
                     st.sampled_from(["re:ab", "re:b.a", "ab", '"a b"', "session", "abab", "p", "re:^A"]))


@settings(max_examples=examples(60))
@given(first=st.lists(_entry_line(), max_size=10), more=st.lists(_entry_line(), max_size=4),
       queries=st.lists(_QUERIES, min_size=1, max_size=3))
def test_ls_search_through_the_index_is_the_reading(tmp_path, first, more, queries):
    """ls --search through the index (built, then after an append) lists what it lists without
    a cache, which reads every file's message text."""
    root = tmp_path / "case"
    shutil.rmtree(root, ignore_errors=True)
    (root / "p").mkdir(parents=True)
    (root / "p" / "s.jsonl").write_bytes(_line(header()) + b"".join(first))
    (root / "p" / "t.jsonl").write_bytes(_line(header(id="other-ab")) + b"".join(more))
    app = __import__("pisess.cli.app", fromlist=["app"]).app
    with Using(tmp_path / "cache"):
        for step in (0, 1):
            if step:
                with (root / "p" / "s.jsonl").open("ab") as fh:
                    fh.write(b"".join(more))
            for q in queries:
                args = ["ls", "--all", "--sessions-dir", str(root), "--json", "--search", q]
                want = RUNNER.invoke(app, [*args, "--no-cache"])
                for _ in (0, 1):
                    got = RUNNER.invoke(app, args)
                    assert (got.exit_code, got.stdout) == (want.exit_code, want.stdout), q


@pytest.mark.slow  # two pisess processes at once
def test_two_processes_indexing_and_searching_at_once(tmp_path):
    """Two pisess processes building the index over the same sessions at once (while a third
    appends to one of them) both answer what the scan answers."""
    import subprocess
    import sys

    root = tmp_path / "s"
    (root / "p").mkdir(parents=True)
    for k in range(40):
        lines = [header(id=f"s{k}")] + [user(f"u{j}", f"u{j - 1}" if j else None, text=f"needle {k} {j} " + "x" * j)
                                         for j in range(30)]
        (root / "p" / f"{k:02d}.jsonl").write_bytes(b"".join(_line(x) for x in lines))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "PISESS_CACHE": "all"}
    cmd = [sys.executable, "-m", "pisess", "search", "needle 3", "--all", "--sessions-dir", str(root), "--json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    with (root / "p" / "05.jsonl").open("ab") as fh:
        fh.write(_line(user("late", "u29", text="needle 3 late")))
    outs = [p.communicate(timeout=120) for p in procs]
    want = subprocess.run([*cmd, "--no-cache"], env=env, capture_output=True, check=False).stdout
    for out, err in outs:
        doc = json.loads(out)
        assert doc.pop("via") == "index", err
        scan = json.loads(want)
        scan.pop("via")
        # (the append may land before or after either process read that file: the scan after it
        # holds every hit; a process that read the file before it holds all but the late one)
        late = [h for h in scan["hits"] if h["entryId"] == "late"]
        assert doc == scan or doc == {**scan, "hits": [h for h in scan["hits"] if h not in late]}, err
    again = json.loads(subprocess.run(cmd, env=env, capture_output=True, check=False).stdout)
    assert again.pop("via") == "index"
    assert again == {k: v for k, v in json.loads(want).items() if k != "via"}


# --- the first search over much: the scan answers, the index is built in the background ----------------------


class _Spawned:
    """Records the background indexers a test's searches start (and waits for them: none outlives it)."""

    def __init__(self, monkeypatch) -> None:
        import subprocess

        self.procs: list = []
        real = subprocess.Popen

        def popen(*a, **k):
            p = real(*a, **k)
            self.procs.append(p)
            return p

        monkeypatch.setattr(subprocess, "Popen", popen)

    def wait(self) -> None:
        for p in self.procs:
            assert p.wait(timeout=120) == 0


def _many(root: Path, n: int = 6, lines: int = 20, pad: int = 0) -> None:
    (root / "p").mkdir(parents=True, exist_ok=True)
    for k in range(n):
        body = [header(id=f"s{k}")] + [user(f"u{j}", f"u{j - 1}" if j else None, text=f"needle {k} {j} " + "x" * pad)
                                       for j in range(lines)]
        (root / "p" / f"{k:02d}.jsonl").write_bytes(b"".join(_line(x) for x in body))


@pytest.fixture
def background(monkeypatch):
    """Searches that find more than 1,000 bytes not indexed scan and start the background indexer."""
    from pisess.cli import search_indexer

    monkeypatch.delenv("PISESS_INDEX_SYNC", raising=False)
    monkeypatch.setattr(search_indexer, "DEFER", 1000)
    spawned = _Spawned(monkeypatch)
    yield spawned
    spawned.wait()


def _invoke(args: list) -> tuple[dict, str]:
    r = RUNNER.invoke(__import__("pisess.cli.app", fromlist=["app"]).app, args, catch_exceptions=False)
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    return json.loads(r.stdout), r.stderr


def test_a_first_search_over_much_scans_and_the_index_is_built_in_the_background(tmp_path, background):
    """The first search answers by the scan (via scan, the scan's very answer) and starts one
    background indexer; once it is done the next search answers through the index, the same hits;
    a small append is then indexed by the search itself."""
    root = tmp_path / "s"
    _many(root)
    args = ["search", "needle 3", "--all", "--sessions-dir", str(root), "--json"]
    where = tmp_path / "cache"
    with Using(where):
        want, _ = _invoke([*args, "--no-cache"])
        first, err = _invoke(args)
        assert first == want and "indexed in the background" in err
        assert len(background.procs) == 1
        background.wait()
        assert not database.indexer_running(str(where))
        assert not [p for p in where.iterdir() if p.name.startswith(".tmp-")]  # (the list file, removed)
        again, err = _invoke(args)
        assert again.pop("via") == "index" and again == {k: v for k, v in want.items() if k != "via"} and not err
        with (root / "p" / "03.jsonl").open("ab") as fh:
            fh.write(_line(user("late", "u19", text="needle 3 late")))
        late, _ = _invoke(args)
        assert late["via"] == "index" and len(late["hits"]) == len(want["hits"]) + 1
        assert len(background.procs) == 1


def test_one_background_indexer_at_a_time(tmp_path, background):
    """While an indexer runs (its lock held), another search over much scans and starts none."""
    root = tmp_path / "s"
    _many(root)
    args = ["search", "needle 3", "--all", "--sessions-dir", str(root), "--json"]
    where = tmp_path / "cache"
    with Using(where):
        where.mkdir(parents=True)
        fd = database.lock_indexer(str(where))  # (as if one ran)
        assert fd is not None and database.indexer_running(str(where))
        try:
            got, err = _invoke(args)
            assert got["via"] == "scan" and "being indexed in the background" in err and not background.procs
        finally:
            os.close(fd)
        got, err = _invoke(args)
        assert got["via"] == "scan" and len(background.procs) == 1


def test_no_background_indexer_without_the_cache(tmp_path, background, monkeypatch):
    """--no-cache and PISESS_CACHE=off: neither an index nor an indexer."""
    root = tmp_path / "s"
    _many(root)
    where = tmp_path / "cache"
    with Using(where):
        got, err = _invoke(["search", "needle 3", "--all", "--sessions-dir", str(root), "--json", "--no-cache"])
        assert got["via"] == "scan" and not err
    previous = cache.configure(cache.Settings(directory=None))
    try:
        got, err = _invoke(["search", "needle 3", "--all", "--sessions-dir", str(root), "--json"])
        assert got["via"] == "scan" and not err
    finally:
        cache.configure(previous)
    assert not background.procs and not where.exists()


@pytest.mark.slow  # a real indexer, 12 MB, killed after half a second; in-process, the default run has
# test_a_transaction_cut_short_leaves_the_index_as_it_was
def test_a_killed_background_indexer_leaves_a_usable_index(tmp_path, background, monkeypatch):
    """An indexer killed mid-way leaves the index as its last finished batch (transaction) left
    it: the next search brings it up to date and answers what the scan answers."""
    root = tmp_path / "s"
    _many(root, n=24, lines=60, pad=8000)  # (about 12 MB: a second or so of indexing)
    args = ["search", "needle 7 5", "--all", "--sessions-dir", str(root), "--json"]
    where = tmp_path / "cache"
    with Using(where):
        want, _ = _invoke([*args, "--no-cache"])
        got, _ = _invoke(args)
        assert got == want and len(background.procs) == 1
        import time

        time.sleep(0.5)
        background.procs[0].kill()
        background.procs[0].wait(timeout=60)
        background.procs.clear()
        monkeypatch.setenv("PISESS_INDEX_SYNC", "1")
        again, _ = _invoke(args)
        assert again.pop("via") == "index" and again == {k: v for k, v in want.items() if k != "via"}


def _background_here(listing: Path, monkeypatch) -> tuple:
    """``pisess cache index --background LISTING`` in this process: (exit code, stdout, stderr).
    For a run that must end before it indexes: one that went on would lower this process's
    priority (``os.nice``), which is refused here as the failure it is."""
    monkeypatch.setattr(os, "nice", lambda n: pytest.fail("the background indexer went on to index"))
    r = RUNNER.invoke(__import__("pisess.cli.app", fromlist=["app"]).app, ["cache", "index", "--background", str(listing)],
                      catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_the_background_indexer_ends_quietly_where_its_cache_is_gone(tmp_path, monkeypatch):
    """A background indexer whose cache directory was removed (a test's temporary directory, a
    cache cleared by hand) ends at once, making nothing again; files that are gone are skipped."""
    import subprocess
    import sys

    gone = tmp_path / "gone" / "pisess"
    with monkeypatch.context() as m:  # (ends before it indexes: run in this process)
        assert _background_here(gone / ".tmp-x.idx", m) == (0, "", "") and not (tmp_path / "gone").exists()
    run = [sys.executable, "-m", "pisess", "cache", "index", "--background"]
    where = tmp_path / "cache"
    where.mkdir(mode=0o700)
    listing = where / ".tmp-y.idx"
    root = _one_session(tmp_path)
    listing.write_bytes(b"\0".join([str(tmp_path / "no-such.jsonl").encode(), str(root / "p" / "a.jsonl").encode()]))
    lock = database.lock_indexer(str(where))  # as indexer.start hands it to the child
    try:
        r = subprocess.run([*run, str(listing)], capture_output=True, timeout=60, check=False, pass_fds=(lock,))
    finally:
        os.close(lock)
    assert (r.returncode, r.stderr) == (0, b"") and not listing.exists()
    con = sqlite3.connect(where / database.NAME)
    assert [p for (p,) in con.execute("SELECT path FROM files")] == [str(root / "p" / "a.jsonl").encode()]
    con.close()


def test_the_background_indexer_takes_only_a_list_a_search_wrote_into_the_cache(tmp_path, monkeypatch):
    """``cache index --background LIST`` reads and removes only a list file ``indexer.start`` writes:
    named ``.tmp-*`` in the cache directory.  A file of the user's given by hand is left as it is."""
    where = tmp_path / "cache"
    where.mkdir()
    mine = [tmp_path / "notes.txt", where / "notes.idx", where / ".tmp-z.idx"]  # (the last: no indexer lock held)
    for f in mine:  # (each ends before it indexes: run in this process)
        f.write_bytes(str(tmp_path / "a.jsonl").encode())
        code, _, err = _background_here(f, monkeypatch)
        assert (code, err) == (0, "") and f.exists(), f
    assert not (where / database.NAME).exists()


def test_ls_search_over_much_reads_and_the_index_is_built_in_the_background(tmp_path, background):
    """ls --search: the same, reading every file's text the first time."""
    root = tmp_path / "s"
    _many(root)
    args = ["ls", "--all", "--sessions-dir", str(root), "--json", "--search", "needle 3"]
    with Using(tmp_path / "cache"):
        want, _ = _invoke([*args, "--no-cache"])
        first, err = _invoke(args)
        assert first == want and "indexed in the background" in err and len(background.procs) == 1
        background.wait()
        again, err = _invoke(args)
        assert again == want and not err and len(background.procs) == 1


def test_a_file_is_one_row_however_its_path_is_spelled(tmp_path, monkeypatch):
    """The index keys a file by its absolute path, whether it was named relative, with ``.`` or
    ``//`` in it, or at the root of the working directory (each directory's files are looked up
    from the directory itself)."""
    root = _one_session(tmp_path)
    (root / "p" / "b.jsonl").write_bytes((root / "p" / "a.jsonl").read_bytes())
    monkeypatch.chdir(root / "p")
    spelled = ["a.jsonl", "./b.jsonl", str(root / "p" / "a.jsonl"), str(root) + "//p/./b.jsonl", "../p/a.jsonl",
               "missing.jsonl", ".", str(root / "p") + "/"]
    where = tmp_path / "cache"
    with Using(where):
        con = database.connect(str(where))
        assert con is not None
        try:
            got = update.refresh(con, spelled)
            again = update.refresh(con, spelled)
            rows = sorted(p for (p,) in con.execute("SELECT path FROM files"))
        finally:
            con.close()
    assert rows == [os.fsencode(root / "p" / "a.jsonl"), os.fsencode(root / "p" / "b.jsonl")]
    assert got.failed == again.failed == {"missing.jsonl", ".", str(root / "p") + "/"}
    assert got.keys == again.keys and set(got.keys) == set(rows) and len(got) == len(again) == 5
    assert all(p in got.paths(os.path.abspath(p).encode()) for p in spelled if p not in got.failed)
    with Using(where):  # (a file named twice is searched twice, as the scan searches it)
        m = search.make_matcher("needle")
        doc = search.search_files(spelled, m).to_json()
        assert doc.pop("via") == "index" and len(doc["hits"]) == 5
        assert doc == {k: v for k, v in scan.scan_files(spelled, m).to_json().items() if k != "via"}


def test_a_set_of_files_up_to_date_is_taken_whole_until_one_changes(tmp_path, monkeypatch):
    """Once every file of a search is up to date by its stat (indexed well after it was written),
    the set is kept (a digest of the stats of each chunk of files) and the next refresh of the same files takes each chunk whose
    stats are the same as up to date without looking up its files' rows (``Indexed.looked``),
    each path found from its row's key as the search named it.  A file appended or touched: its
    chunk's files are looked up; another set, another spelling of it, the same names in a renamed
    directory: every file is."""
    monkeypatch.setattr(stats, "CHUNK", 4)
    root = tmp_path / "s"
    for d in ("p", "q"):
        (root / d).mkdir(parents=True)
        for k in range(5):
            (root / d / f"{k}.jsonl").write_bytes(_line(header(id=f"{d}{k}")) + _line(user("u1", None, text=f"needle {d}{k}")))
    settle(root)
    monkeypatch.chdir(root)
    files = [f"{d}/{k}.jsonl" for d in ("p", "q") for k in range(5)]
    where = tmp_path / "cache"
    m = search.make_matcher("needle")

    def refreshed(names: list) -> update.Indexed:
        con = database.connect(str(where))
        assert con is not None
        try:
            return update.refresh(con, names)
        finally:
            con.close()

    def same(names: list) -> None:
        with Using(where):
            doc = search.search_files(names, m).to_json()
        assert doc.pop("via") == "index"
        assert doc == {k: v for k, v in scan.scan_files(names, m).to_json().items() if k != "via"}

    with Using(where):
        assert refreshed(files).looked == 10  # (indexed, every file written well before: the set kept)
        got = refreshed(files)
        assert got.looked == 0 and got.whole is not None and len(got) == 10 and got.keys == {} and not got.failed
        assert all(got.paths(os.fsencode(root / p)) == [p] for p in files)
        assert got.paths(os.fsencode(root / "p" / "9.jsonl")) == [] and got.paths(b"/elsewhere/0.jsonl") == []
        assert refreshed(files[:9]).looked == 9  # (another set)
        assert refreshed(["./" + f for f in files]).looked == 10  # (another spelling)
        assert refreshed(files).looked == 0
    same(files)
    with (root / "q" / "1.jsonl").open("ab") as fh:  # (file 6: the second chunk of four)
        fh.write(_line(user("u2", "u1", text="needle again")))
    settle(root / "q" / "1.jsonl")
    with Using(where):
        assert refreshed(files).looked == 4  # (its chunk: the file indexed, the set kept again)
        assert refreshed(files).looked == 0
    with (root / "q" / "1.jsonl").open("ab") as fh:  # (written in the clock tick of its indexing: not kept)
        fh.write(_line(user("u3", "u2", text="needle once more")))
    with Using(where):
        assert refreshed(files).looked == 4
        assert refreshed(files).looked == 4
        settle(root / "q" / "1.jsonl")
        assert refreshed(files).looked == 4
        assert refreshed(files).looked == 0
    same(files)
    os.utime(root / "q" / "4.jsonl")  # (the last chunk, of two: the same bytes, another mtime)
    with Using(where):
        assert refreshed(files).looked == 2
    same(files)
    (root / "q" / "3.jsonl").unlink()
    same(files)  # (a file gone: scanned, said unreadable, as the scan says)
    (root / "p").rename(root / "r")  # the same names in another directory
    (root / "p").mkdir()
    for k in range(5):
        (root / "p" / f"{k}.jsonl").write_bytes(_line(header(id=f"x{k}")) + _line(user("u1", None, text=f"needle x{k}")))
    settle(root)
    names = [f"{k}.jsonl" for k in range(5)]
    same(files[:5])
    monkeypatch.chdir(root / "r")
    same(names)
    with Using(where):
        assert refreshed(names).looked == 0  # (kept by the search above)
        monkeypatch.chdir(root / "p")  # the same names, relative, in the other directory: another set
        assert refreshed(names).looked == 5
    same(names)


def test_the_stats_of_one_directorys_files_are_those_taken_one_by_one(tmp_path, monkeypatch):
    """``stats.stat_all`` takes the stats of a project's listing (every file a name in one
    directory, spelled alike) a chunk at a time: the same stats, digests and keys as file by file,
    for any spelling; a set it cannot take so (two directories, a name with a ``/``, a file gone)
    is taken file by file.  Once the set is kept, the chunks as kept are told apart (their stats
    dropped, their bytes counted) from those that changed."""
    monkeypatch.setattr(stats, "CHUNK", 2)
    (tmp_path / "p" / "d").mkdir(parents=True)
    for k in range(5):
        (tmp_path / "p" / f"{k}.jsonl").write_bytes(b"x" * k)
    (tmp_path / "p" / "d" / "x.jsonl").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    names = [f"{k}.jsonl" for k in (3, 0, 4, 1, 2, 0)]
    taken: list = []
    real = stats._each
    monkeypatch.setattr(stats, "_each", lambda files: taken.append(files) or real(files))
    con = database.connect(str(tmp_path / "cache"))
    assert con is not None
    try:
        for files, one in (([str(tmp_path / "p" / n) for n in names], True), ([f"p/{n}" for n in names], True),
                           ([f"./p/{n}" for n in names], True), ([f"p//{n}" for n in names], True),
                           (["p/0.jsonl", "p/d/x.jsonl"], False), (["p/0.jsonl", "p/9.jsonl"], False),
                           (["p/0.jsonl", str(tmp_path / "p" / "1.jsonl")], False), (["p/"], False), (["p/."], False)):
            taken.clear()
            got = stats.stat_all(files, con=con)
            assert bool(taken) != one, files
            want = real(files)
            assert [s and stats._FIELDS(s) for s in got.stats] == [s and stats._FIELDS(s) for s in want[0]]
            assert got.prefixes == want[2] and got.stale is None and got.fresh == 0
            if want[3] and len(set(want[2].values())) == len(want[2]):
                assert got.sig == stats.set_sig(want[2], files) and got.digests == b"".join(
                    cache.blake2b(b"".join(want[1][k:k + stats.CHUNK]), digest_size=stats.DIGEST).digest()
                    for k in range(0, len(want[1]), stats.CHUNK))
            else:
                assert got.sig is None
        files = [f"p/{n}" for n in names]
        got = stats.stat_all(files, con=con)
        stats.keep_set(con, got.sig, got.digests)
        kept = stats.stat_all(files, con=con)
        assert (kept.stale, kept.fresh, kept.stats, kept.digests) == ([], 3 + 0 + 4 + 1 + 2 + 0, [None] * 6, got.digests)
        with open("p/4.jsonl", "ab") as fh:
            fh.write(b"y")
        changed = stats.stat_all(files, con=con)
        assert changed.stale == [1] and changed.fresh == 3 + 0 + 2 + 0
        assert [s and s.st_size for s in changed.stats] == [None, None, 5, 1, None, None]
        assert stats.stat_all(files).stale is None  # (without the index: every file looked at)
        listed = stats.Listed("p/", names, got.sig)  # (the listing the files are: taken from its names)
        from_names = stats.stat_all(files, listed, con)
        assert (from_names.stale, from_names.fresh, from_names.digests) == (changed.stale, changed.fresh, changed.digests)
        assert [s and s.st_size for s in from_names.stats] == [s and s.st_size for s in changed.stats]
    finally:
        con.close()


def test_a_path_is_found_among_the_files_of_a_set_in_any_order(tmp_path):
    """``Indexed`` of a whole set answers which paths are the search's, and in the search's
    order, the same for files in ascending order (a listing: bisection) as in any other."""
    files = [str(tmp_path / f"{k}.jsonl") for k in range(7)]
    prefixes = {str(tmp_path) + "/": os.fsencode(tmp_path) + b"/"}
    for order in (files, files[::-1], [*files[3:], *files[:3]], [files[0], files[0], *files[1:]]):
        ix = update.Indexed({}, {files[2]}, whole=(order, {k: d for d, k in prefixes.items()}))
        assert ix._ordered() == (order is files)
        for k in range(9):
            key = os.fsencode(tmp_path / f"{k}.jsonl")
            assert ix.paths(key) == ([str(tmp_path / f"{k}.jsonl")] if k < 7 and k != 2 else [])
        assert ix.in_order({files[5], files[1], files[6]}, order) == [p for p in order if p in (files[1], files[5], files[6])]
