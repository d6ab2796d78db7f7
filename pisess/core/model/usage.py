"""pi 1.6's ``/session`` cost breakdown (C.12): what a context document (``Context.to_json``)
reports as ``usageBreakdown`` and ``stats`` beside it.  Apart from ``stats`` so that ``context``
loads only this.
"""

from __future__ import annotations

from array import array
from typing import Any

from .. import js, versions
from ..errors import JSError
from ..js import UNDEF, get

TOKENS = ("input", "output", "cacheRead", "cacheWrite")

SUMMARY_KEY = "Tools/summaries"


def _number(v: Any) -> float | int | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


def usage_numbers(u: Any) -> tuple | None:
    """A ``usage`` object as ``(input, output, cacheRead, cacheWrite, cost)``, ``None`` for a field
    that is not a number (``None`` for no object)."""
    if not isinstance(u, dict):
        return None
    cost = u.get("cost")
    got = (u.get("input"), u.get("output"), u.get("cacheRead"), u.get("cacheWrite"),
           cost.get("total") if isinstance(cost, dict) else None)
    for v in got:  # (as pi writes a usage, every field a number: the page's pass reads one per assistant message)
        if type(v) is not int and (type(v) is not float or v != v):
            return tuple(_number(x) for x in got)
    return got


def entry_usage(e: Any, pi_version: str = versions.CURRENT) -> tuple | None:
    """What entry ``e`` records as spent (``usage_numbers``), wherever pi records it (spec §3.4): an
    assistant message's ``usage``, a tool result's (nested LLM work by the tool), a compaction's
    or a branch summary's, and from pi 1.6 (0.86) a ``usage`` entry's.  The one owner of an
    entry's usage: ``stats``, ``diff`` and browse's trace ask this."""
    t = get(e, "type")
    if t == "message":
        m = get(e, "message")
        return usage_numbers(get(m, "usage")) if get(m, "role") in ("assistant", "toolResult") else None
    if t in ("compaction", "branch_summary"):
        return usage_numbers(get(e, "usage"))
    if t == "usage" and versions.since(pi_version, versions.SYSTEM_MESSAGES):
        return usage_numbers(get(e, "usage"))
    return None


def usage_breakdown(entries: Any) -> list[dict]:
    """pi 1.6's ``getUsageCostBreakdown`` over every entry of a file (C.12): cost and tokens by
    ``provider/model`` for assistant messages (``responseModel`` first) and ``usage`` entries, tool
    results and summaries in one ``Tools/summaries`` bucket; empty buckets left out, dearest first.

    Sums are JavaScript's: a field that is not a number makes its bucket NaN (``null`` in JSON), as
    in pi; a usage without ``cost`` makes pi throw, and so does this (``JSError``)."""
    return usage_rows(usage_fold(entries))


def usage_fold(entries: Any, state: Any = None) -> tuple:
    """The sums of ``usage_breakdown`` over ``entries`` (complete, in file order), continuing from
    ``state`` (the fold of the entries before them, as this returns it): ``("sums", {key: [5
    floats]})``, or ``("throws", message)`` from the entry where pi throws on.  Folding a file in
    two parts gives what one pass gives (the additions happen in the same order): the index cache
    keeps the state of a file's cached prefix."""
    if state is not None and state[0] == "throws":
        return state
    totals: dict[str, list] = {k: list(v) for k, v in state[1].items()} if state is not None else {}
    try:
        _fold_into(totals, entries)
    except JSError as e:
        return ("throws", e.reason)
    return ("sums", totals)


def usage_rows(state: tuple) -> list[dict]:
    """The rows of ``usage_breakdown`` from a ``usage_fold`` state (raises where pi throws)."""
    if state[0] == "throws":
        raise JSError(state[1])
    rows = [{"key": k, "cost": _js_num(s[4]), "tokens": _js_num(s[0] + s[1] + s[2] + s[3])}
            for k, s in state[1].items()]
    rows = [r for r in rows if _positive(r["cost"]) or _positive(r["tokens"])]
    return sorted(rows, key=lambda r: -r["cost"] if r["cost"] is not None else 0.0)


def _fold_into(totals: dict, entries: Any) -> None:
    for e in entries:
        record = usage_record(e)
        if record is not None:
            _add_record(totals, record)


def usage_record(e: Any) -> tuple | None:
    """What entry ``e`` adds to ``usage_breakdown``: ``(key, input, output, cacheRead, cacheWrite,
    cost)``, each a float to add, or ``None``; raises ``JSError`` where pi throws on it.

    A field's ``+=`` is JavaScript's (``_js_add``) and is taken here as a number to add: a missing
    one adds 0.0, which leaves a sum as it is (a sum begun at 0.0 is never -0.0), so folding the
    records gives the sums the entries give, bit for bit."""
    t = get(e, "type")
    key = usage = None
    if t == "message":
        m = get(e, "message")
        role = _role_of(e, m)
        if role == "assistant":
            model = get(m, "responseModel")
            model = get(m, "model") if model is None or model is UNDEF else model
            key, usage = f"{js.to_string(get(m, 'provider'))}/{js.to_string(model)}", get(m, "usage")
        elif role == "toolResult" and js.truthy(get(m, "usage")):
            key, usage = SUMMARY_KEY, get(m, "usage")
    elif t == "usage":
        key, usage = f"{js.to_string(get(e, 'provider'))}/{js.to_string(get(e, 'model'))}", get(e, "usage")
    elif t in ("branch_summary", "compaction") and js.truthy(get(e, "usage")):
        key, usage = SUMMARY_KEY, get(e, "usage")
    if not key or not js.truthy(usage):
        return None
    cost = get(usage, "cost")
    if cost is None or cost is UNDEF:
        raise JSError(f"usage of entry {js.to_string(get(e, 'id'))} has no cost (pi's /session throws)")
    return (key, *(_js_add(0.0, get(usage, k)) for k in TOKENS), _js_add(0.0, get(cost, "total")))


def _add_record(totals: dict, record: tuple) -> None:
    sums = totals.get(record[0])
    if sums is None:
        sums = totals[record[0]] = [0.0, 0.0, 0.0, 0.0, 0.0]
    sums[0] += record[1]
    sums[1] += record[2]
    sums[2] += record[3]
    sums[3] += record[4]
    sums[4] += record[5]


_NUMBER = frozenset((int, float))  # (not bool: JavaScript's + adds true as 1, _js_add says so)
_USAGE_TYPES = frozenset(("usage", "branch_summary", "compaction"))


class UsageGather:
    """``usage_fold`` taken during the compact index's scan (``open_session(gather=UsageGather)``),
    so that the file is not read back for the breakdown.  The part of a scan that starts at the
    file's start folds as it goes; a later part (the half a forked child scans) keeps its records
    in file order (compact arrays: they cross the pipe) and ``extend`` folds them on after the
    earlier part's, so the additions happen in file order, as in one pass."""

    __slots__ = ("direct", "totals", "throws", "_codes", "_values", "_keys", "_code_of")
    first_share = 0.51  # (compact.scan_compact: what its later part sends is little)

    def __init__(self, start: int = 0) -> None:
        self.direct = start == 0
        self.totals: dict[str, list] | None = {}  # key -> the 5 sums (direct), None: a value could not be taken
        self.throws: str | None = None  # where pi throws, from then on nothing is taken
        self._codes = array("I")  # (a later part) the key of each record, as an index into _keys
        self._values = array("d")  # (a later part) 5 numbers to add per record
        self._keys: list[str] = []
        self._code_of: dict[str, int] = {}

    def add_all(self, values: list, cut: bool = False) -> None:
        """Take the entries ``values`` (complete, in file order; ``cut``: some lean, which a
        usage is not cut from)."""
        if self.throws is not None:
            return
        # (type() is, not isinstance, in this hot loop: mypy cannot narrow through it, hence Any)
        u: Any
        cost: Any
        totals: Any
        direct, totals, num = self.direct, self.totals, _NUMBER  # totals is not None while throws is None
        for v in values:
            # An assistant message as pi writes it, without usage_record's calls (the common
            # case, and the same sums); tool results without usage and other messages add nothing.
            if type(v) is dict:
                t = v.get("type")
                if t == "message":
                    m = v.get("message")
                    if type(m) is dict:
                        role = m.get("role")
                        if role == "assistant":
                            u, provider = m.get("usage"), m.get("provider")
                            model = m.get("responseModel")
                            if model is None:
                                model = m.get("model")
                            cost = u.get("cost") if type(u) is dict else None
                            if type(cost) is dict and type(provider) is str and type(model) is str:
                                i, o, r, w, total = (u.get("input"), u.get("output"), u.get("cacheRead"),
                                                     u.get("cacheWrite"), cost.get("total"))
                                if type(i) in num and type(o) in num and type(r) in num and type(w) in num \
                                        and type(total) in num:
                                    key = f"{provider}/{model}"
                                    if direct:
                                        sums = totals.get(key)
                                        if sums is None:
                                            sums = totals[key] = [0.0, 0.0, 0.0, 0.0, 0.0]
                                        sums[0] += i
                                        sums[1] += o
                                        sums[2] += r
                                        sums[3] += w
                                        sums[4] += total
                                    else:
                                        self._keep(key, (i, o, r, w, total))
                                    continue
                        elif role != "toolResult" or "usage" not in m:
                            continue
                elif type(t) is not str or t not in _USAGE_TYPES:
                    continue
            try:
                record = usage_record(v)
            except JSError as e:
                self.throws = e.reason
                return
            except TypeError:  # (a value no reader keeps: the breakdown is then made without this)
                self.totals, self.throws = None, "unusable"
                return
            if record is None:
                continue
            if direct:
                _add_record(totals, record)
            else:
                self._keep(record[0], record[1:])

    def _keep(self, key: str, numbers: tuple) -> None:
        code = self._code_of.get(key)
        if code is None:
            code = self._code_of[key] = len(self._keys)
            self._keys.append(key)
        self._codes.append(code)
        self._values.extend(numbers)  # (a number stored as a double adds what it adds as an int)

    def extend(self, later: UsageGather) -> None:
        """Fold on ``later``, the part after this one."""
        if self.throws is not None:
            return
        if later.totals is None:
            self.totals, self.throws = None, later.throws
            return
        totals: Any
        keys, values, totals = later._keys, later._values, self.totals
        for n, code in enumerate(later._codes):
            at = 5 * n
            if not self.direct:
                self._keep(keys[code], tuple(values[at:at + 5]))
                continue
            sums = totals.get(keys[code])
            if sums is None:
                sums = totals[keys[code]] = [0.0, 0.0, 0.0, 0.0, 0.0]
            sums[0] += values[at]
            sums[1] += values[at + 1]
            sums[2] += values[at + 2]
            sums[3] += values[at + 3]
            sums[4] += values[at + 4]
        self.throws = later.throws

    def __getstate__(self) -> tuple:
        return (self.direct, self.totals, self.throws, self._codes, self._values, self._keys)

    def __setstate__(self, state: tuple) -> None:
        self.direct, self.totals, self.throws, self._codes, self._values, self._keys = state
        self._code_of = {k: i for i, k in enumerate(self._keys)}

    def state(self) -> tuple | None:
        """What ``usage_fold`` returns over the same entries (``None`` when a value could not be
        taken)."""
        if self.totals is None:
            return None
        if self.throws is not None:
            return ("throws", self.throws)
        if self.direct:
            return ("sums", self.totals)
        whole = UsageGather()
        whole.extend(self)
        return ("sums", whole.totals)


def gathered_usage(session: Any) -> tuple | None:
    """The ``usage_fold`` state of the whole file where the read gathered it, else ``None``."""
    g = session.store.gathered()
    return g.state() if isinstance(g, UsageGather) else None


def may_carry_usage(e: Any) -> bool | bytes:
    """For ``Session.iter_complete``: which entries ``usage_breakdown`` needs complete.  Tool
    results carry usage rarely and hold most of a file's bytes: parse one only when its line
    mentions a ``"usage"`` key."""
    t = e.get("type") if isinstance(e, dict) else None
    if t == "message":
        m = e.get("message")
        if type(m) is not dict or not m:
            return True  # pi throws on it: the breakdown says so
        role = m.get("role")
        return _USAGE_IN_LINE if role == "toolResult" else role == "assistant"
    return t in ("usage", "branch_summary", "compaction")


_USAGE_IN_LINE = b'"usage"'


def _role_of(e: Any, m: Any) -> Any:
    if not isinstance(m, dict):
        raise JSError(f"message entry {js.to_string(get(e, 'id'))} has no message object (pi throws reading it)")
    return m.get("role")


def _js_add(total: float, v: Any) -> float:
    """``total += v`` for a JSON value ``v`` (JavaScript's ``+`` on numbers; anything else is NaN)."""
    if isinstance(v, bool):
        return total + int(v)
    if isinstance(v, (int, float)):
        return total + v
    if v is None:
        return total
    return float("nan")


def _js_num(v: float) -> float | int | None:
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def _positive(v: Any) -> bool:
    return v is not None and v > 0


def gather_for(pi_version: str) -> type[UsageGather] | None:
    """What ``open_session(gather=...)`` should take for a context document under pi
    ``pi_version``'s rules: ``UsageGather`` where the document carries the breakdown (C.12), so it
    comes from the read's one parse instead of reading the file back; else ``None``."""
    return UsageGather if versions.since(pi_version, versions.SYSTEM_MESSAGES) else None


def breakdown_of(session: Any) -> list[dict]:
    """pi 1.6's usage breakdown of the session's whole file: what the read gathered
    (``gather_for``), else folded over the file through the index cache (raises where pi throws)."""
    from ..reading import cache

    return usage_rows(cache.fold(session, "usage", usage_fold, may_carry_usage, gathered_usage(session)))
