"""pi 1.6's usage breakdown taken during the compact index's scan (issue 12's bench case 13): the
same sums, bit for bit, as folding the entries read back, without reading the file back."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from conftest import assistant, entry, header, message, user, write_session
from pisess.cli.app import app
from pisess.core.model.usage import UsageGather, gathered_usage, may_carry_usage, usage_fold
from pisess.core.reading import compact
from pisess.core.reading.compact import scan_compact
from pisess.core.reading.session import Session, open_session

RUNNER = CliRunner()
# what a usage field may hold: JavaScript's += makes a bool 0/1, null nothing, anything else NaN
ODD = [0, 1, 0.1, 0.2, 0.30000000000000004, -0.0, 1e-300, 2**53 + 1, 12345678901234567, True, False, None,
       "3", [], {}, 1.5e308]


def usage(rng: random.Random, odd: bool) -> dict:
    pick = (lambda: rng.choice(ODD)) if odd else (lambda: rng.choice([rng.randint(0, 5000), rng.random()]))
    u = {k: pick() for k in ("input", "output", "cacheRead", "cacheWrite")}
    u["cost"] = {"total": pick()}
    if odd and rng.random() < 0.2:
        del u[rng.choice(["input", "output", "cacheRead", "cacheWrite"])]  # a missing field is NaN
    return u


def random_session(tmp_path, seed: int, odd: bool = False, throw_at: int | None = None, n: int = 120) -> str:
    rng = random.Random(seed)
    lines: list = [header()]
    parent = None
    for i in range(n):
        eid = f"e{i}"
        kind = rng.choice(["user", "assistant", "assistant", "tool", "tool_usage", "usage", "compaction", "label"])
        if kind == "user":
            e = user(eid, parent)
        elif kind == "assistant":
            e = assistant(eid, parent, model=rng.choice(["m1", "m2"]))
            if rng.random() < 0.2:
                e["message"]["responseModel"] = "m3"
            if rng.random() < 0.9:
                e["message"]["usage"] = usage(rng, odd)
        elif kind in ("tool", "tool_usage"):
            msg = {"role": "toolResult", "toolCallId": "c", "toolName": "read", "isError": False,
                   "content": [{"type": "text", "text": "x" * rng.randint(0, 300)}], "timestamp": 3}
            if kind == "tool_usage":
                msg["usage"] = usage(rng, odd)
            e = message(eid, parent, msg)
        elif kind == "usage":
            e = entry("usage", eid, parent, kind="cache_warm", provider="anthropic", model=rng.choice(["m1", "m2"]),
                      usage=usage(rng, odd))
        elif kind == "compaction":
            e = entry("compaction", eid, parent, summary="s", firstKeptEntryId=parent, tokensBefore=10,
                      usage=usage(rng, odd))
        else:
            e = entry("label", eid, parent, targetId=parent, label="l")
        if i == throw_at:
            e = entry("usage", eid, parent, kind="x", provider="p", model="m", usage={"input": 1})  # no cost: pi throws
        lines.append(e)
        parent = eid
    return write_session(tmp_path, lines, name=f"s{seed}.jsonl")


def same(a, b) -> bool:
    """Equal states, NaN equal to NaN, -0.0 apart from 0.0 (repr tells them apart)."""
    return repr(a) == repr(b)


def read_back(path: str):
    s = open_session(path, "cli", light=True, pi_version="1.6.0")
    return usage_fold(s.iter_complete(may_carry_usage))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("odd", [False, True])
def test_gathered_sums_are_those_of_the_read_back(tmp_path, seed, odd):
    path = random_session(tmp_path, seed, odd)
    s = open_session(path, "cli", light=True, pi_version="1.6.0", gather=UsageGather)
    got = gathered_usage(s)
    assert got is not None and same(got, read_back(path))


@pytest.mark.parametrize("throw_at", [0, 50, 119])
def test_gathered_breakdown_throws_where_pi_throws(tmp_path, throw_at):
    path = random_session(tmp_path, 7, throw_at=throw_at)
    got = gathered_usage(open_session(path, "cli", light=True, pi_version="1.6.0", gather=UsageGather))
    assert got[0] == "throws" and same(got, read_back(path))


@pytest.mark.parametrize("seed", range(4))
def test_two_halves_fold_in_file_order(tmp_path, monkeypatch, seed):
    """The second half is scanned in a child: its records are appended after the first's."""
    path = random_session(tmp_path, seed, odd=True, n=400)
    monkeypatch.setattr(compact, "SPLIT_MIN", 0)
    split = compact._split_point(path)
    assert split is not None
    ix = scan_compact(path, workers=2, gather=UsageGather)
    assert ix is not None and ix.gathered is not None
    assert same(ix.gathered.state(), read_back(path))
    thrown = random_session(tmp_path, seed, throw_at=350, n=400)
    ix = scan_compact(thrown, workers=2, gather=UsageGather)
    assert same(ix.gathered.state(), read_back(thrown))


@pytest.mark.parametrize("cache_on", [False, True])
def test_context_json_does_not_read_the_file_back_for_the_breakdown(tmp_path, monkeypatch, cache_on):
    """Cold, and with the cache on warm too: the first read keeps the gathered sums beside the
    entry it writes, the next one takes them from there."""
    from pisess.core.model.usage import usage_rows
    from pisess.core.reading import cache

    monkeypatch.setattr(cache, "_settings", cache.Settings(directory=str(tmp_path / "cache") if cache_on else None))
    path = random_session(tmp_path, 3)
    read: list = []
    real = Session.iter_complete

    def counting(self, wanted=None, batch=2048, start=0, stop=None):
        for e in real(self, wanted, batch, start, stop):
            read.append(e)
            yield e

    monkeypatch.setattr(Session, "iter_complete", counting)
    outs = [RUNNER.invoke(app, ["context", path, "--json", "--reader", "cli"], catch_exceptions=False)
            for _ in range(2)]
    assert [o.exit_code for o in outs] == [0, 0] and read == []
    monkeypatch.setattr(Session, "iter_complete", real)
    monkeypatch.setattr(cache, "_settings", cache.Settings(directory=None))
    expected = json.loads(json.dumps(usage_rows(read_back(path))))
    assert [json.loads(o.stdout)["usageBreakdown"] for o in outs] == [expected, expected]


def test_an_index_from_the_cache_has_nothing_gathered(tmp_path, monkeypatch):
    """A cached prefix was not parsed by this read: the breakdown folds it as before."""
    from pisess.core.reading import cache

    # (smallest=0: a file this small gets an index entry too)
    monkeypatch.setattr(cache, "_settings", cache.Settings(directory=str(tmp_path / "cache"), smallest=0))
    path = random_session(tmp_path, 5)
    first = open_session(path, "cli", light=True, pi_version="1.6.0", gather=UsageGather)
    assert gathered_usage(first) is not None
    again = open_session(path, "cli", light=True, pi_version="1.6.0", gather=UsageGather)
    assert again.store.ix.cached is not None and gathered_usage(again) is None


@pytest.mark.parametrize("seed", range(6))
def test_a_later_part_alone_and_parts_joined_give_one_pass(tmp_path, seed):
    import orjson

    path = random_session(tmp_path, seed, odd=True, throw_at=90 if seed % 2 else None)
    with open(path, "rb") as fh:
        values = [orjson.loads(line) for line in fh.read().splitlines()[1:]]
    later = UsageGather(start=1)
    later.add_all(values)
    assert same(later.state(), usage_fold(values))
    cut = len(values) // 3
    first, second = UsageGather(), UsageGather(start=1)
    first.add_all(values[:cut])
    second.add_all(values[cut:])
    first.extend(second)
    assert same(first.state(), usage_fold(values))


def test_usage_numbers_reads_every_field_as_the_generic_rule_does():
    """``usage_numbers``'s short way for a usage as pi writes it (every field a number) answers
    what the field-by-field rule answers, for the odd values too (a bool, a string, NaN, a missing
    field, a subclass of dict)."""
    from pisess.core.model.usage import TOKENS, _number, usage_numbers

    def generic(u):
        if not isinstance(u, dict):
            return None
        cost = u.get("cost")
        return (*(_number(u.get(k)) for k in TOKENS), _number(cost.get("total")) if isinstance(cost, dict) else None)

    class Sub(dict):
        pass

    rng = random.Random(7)
    nan = float("nan")
    for i in range(3000):
        u = usage(rng, odd=i % 2 == 0)
        if i % 7 == 0:
            u[rng.choice(list(TOKENS))] = nan
        if i % 11 == 0:
            u["cost"] = rng.choice([None, 3, {"total": nan}, {}])
        for value in (u, Sub(u)):
            got, want = usage_numbers(value), generic(value)
            assert len(got) == 5
            for a, b in zip(got, want):
                assert a is b or a == b and type(a) is type(b), (u, got, want)
    assert usage_numbers(None) is None and usage_numbers([1]) is None
