"""Two attempts side by side, as the model saw them (``pisess diff``).

``diff_points(a, b)`` compares two points: two leaves of one session, or the current (or given)
leaves of two sessions.  The answer says where the two paths part, sums up what each side did after
that point, and aligns the two contexts as ``pisess context`` builds them.

*Where they part.*  Two points of one session: the last common entry of their two ``getBranch``
paths.  Two sessions: pi's fork copies entries with their ids, so the common part is the run from
the root of entries with the same id and the same content; ``label`` entries are passed over on
both sides and ``parentId`` is not compared (the pi command's fork drops labels, re-chains the
parents and re-creates the labels after the copy, so a re-created label is no difference).
Sessions that share no first entry are unrelated and compared from the start.

*The same message.*  Two context messages are the same when what a provider is sent of them is
the same: equal after leaving out ``MESSAGE_METADATA`` (time stamps, usage, model and provider,
response ids, stop reason, extension details).  A message that differs from its counterpart only
in its text (same role, same tool calls, images and other blocks) is *changed* and carries a
unified diff of the text; any other difference is a removal on one side and an addition on the
other.  The alignment is the longest common prefix, then ``difflib``'s sequence alignment of the
rest.

Plain data throughout: views, ``--json`` and ``browse`` all draw from ``Diff``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import js
from ..js import UNDEF, get
from ..model.context import Context, approx_tokens, build_context
from ..model.system import prompt_text, tool_names
from ..reading.session import Session
from .stats import fact_of

DIFF_DOC_VERSION = 1

#: Keys of a context message that a provider is not sent: two messages that differ only in these
#: are the same message.
MESSAGE_METADATA = frozenset({
    "timestamp", "usage", "provider", "model", "api", "responseId", "responseModel", "stopReason",
    "errorMessage", "thinkingLevel", "details", "display", "tokensBefore", "fromId",
})

#: pi's tools that name the files they write (their ``path`` argument).
WRITING_TOOLS = ("write", "edit", "multi_edit", "multiedit", "apply_patch")
_REDIRECT = re.compile(r"(?:^|[\s;|&])(?:\d?>>?|tee(?:\s+-a)?)\s*([^\s;|&<>()'\"`]+)")


# --- the parting point -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parting:
    """Where the two paths part.

    ``relation``: ``branches`` (two points of one session), ``fork`` (two sessions sharing their
    first entries), ``unrelated`` (nothing in common: compared from the start), ``same`` (the
    same path on both sides: one point twice, or a session and its copy)."""

    relation: str
    common: int  # entries the two paths share (a label when both hold it, as a byte copy does)
    last_common: Any  # the last shared entry (complete), or None
    after_a: list  # each side's path after the parting point, complete entries
    after_b: list
    start_a: int = 0  # where that part starts in each side's path (what comes before is shared)
    start_b: int = 0


def _entry_id(e: Any) -> Any:
    v = get(e, "id")
    return None if v is UNDEF else v


def _same_entry(a: Any, b: Any) -> bool:
    """A fork's copy of an entry: the same id and the same content, ``parentId`` aside."""
    if not js.strict_eq(get(a, "id"), get(b, "id")):
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a == b
    # a compaction whose kept entry was a dropped label names the next entry in the copy (C.25)
    keys = (a.keys() | b.keys()) - {"parentId", "firstKeptEntryId"}
    return all(a.get(k, UNDEF) == b.get(k, UNDEF) for k in keys)


def part(sa: Session, path_a: list, sb: Session, path_b: list) -> Parting:
    """The parting point of two ``getBranch`` paths (light or complete entries)."""
    if sa is sb:
        n = 0
        for x, y in zip(path_a, path_b):
            # one session's paths are walked through byId: the same id is the same entry
            if x is not y and not (js.strict_eq(get(x, "id"), get(y, "id")) and get(x, "type") == get(y, "type")):
                break
            n += 1
        after_a, after_b = sa.materialize(path_a[n:]), sa.materialize(path_b[n:])
        last = sa.full(path_a[n - 1]) if n else None
        relation = "same" if not after_a and not after_b else "branches"
        return Parting(relation, n, last, after_a, after_b, n, n)
    # across sessions the contents are compared, so both paths are read whole
    full_a, full_b = sa.materialize(list(path_a)), sb.materialize(list(path_b))
    ia = [i for i, e in enumerate(full_a) if get(e, "type") != "label"]
    ib = [i for i, e in enumerate(full_b) if get(e, "type") != "label"]
    n = 0
    for i, j in zip(ia, ib):
        if not _same_entry(full_a[i], full_b[j]):
            break
        n += 1
    if n == 0:
        return Parting("unrelated", 0, None, full_a, full_b)
    end_a = ia[n - 1] + 1
    end_b = ib[n - 1] + 1
    last = full_a[end_a - 1]
    shared_ids = {js.key(_entry_id(e)) for e in full_a[:end_a]}
    # a label both shared runs hold (a byte copy's) is an entry in common, as within one file
    labels_b = [e for e in full_b[:end_b] if get(e, "type") == "label"]
    common = n + sum(1 for e in full_a[:end_a]
                     if get(e, "type") == "label" and any(_same_entry(e, x) for x in labels_b))

    def rest(full: list, end: int, other: list) -> list:
        # a label the other side has too, on an entry both share, is a re-created label, not a change
        other_labels = {(js.key(get(e, "targetId")), js.key(get(e, "label"))) for e in other
                        if get(e, "type") == "label"}
        return [e for e in full[end:]
                if not (get(e, "type") == "label" and js.key(get(e, "targetId")) in shared_ids
                        and (js.key(get(e, "targetId")), js.key(get(e, "label"))) in other_labels)]

    after_a, after_b = rest(full_a, end_a, full_b), rest(full_b, end_b, full_a)
    relation = "same" if not after_a and not after_b else "fork"
    return Parting(relation, common, last, after_a, after_b, end_a, end_b)


# --- what each side did --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SideSummary:
    """What one side did after the parting point, and its context at the leaf."""

    entries: int
    user_turns: int
    assistant_messages: int
    tool_calls: dict  # tool name -> calls
    failed_tool_calls: int
    tokens: dict  # input, output, cacheRead, cacheWrite
    cost: float
    wall_ms: float | None  # first to last time stamp after the parting point
    models: list
    thinking_levels: list
    compactions: int
    context_edits: int
    files_written: list
    context_messages: int
    context_tokens: int  # estimated as ``pisess context`` estimates them

    @property
    def tool_call_count(self) -> int:
        return sum(self.tool_calls.values())

    def to_json(self) -> dict:
        return {
            "entryCount": self.entries, "userTurnCount": self.user_turns,
            "assistantMessageCount": self.assistant_messages, "toolCallCountByTool": dict(self.tool_calls),
            "toolCallCount": self.tool_call_count, "failedToolCallCount": self.failed_tool_calls,
            "tokens": dict(self.tokens), "cost": self.cost, "wallMs": self.wall_ms, "models": list(self.models),
            "thinkingLevels": list(self.thinking_levels), "compactionCount": self.compactions,
            "contextEditCount": self.context_edits, "filesWritten": list(self.files_written),
            "contextMessageCount": self.context_messages, "contextTokens": self.context_tokens,
        }


def files_of_call(name: str, args: Any) -> list[str]:
    """The files a tool call named ``name`` writes (diff's "files" row)."""
    if not isinstance(args, dict):
        return []
    if name in WRITING_TOOLS:
        for key in ("path", "file_path", "filePath"):
            v = args.get(key)
            if isinstance(v, str) and v:
                return [v]
        return []
    if name == "bash":
        command = args.get("command")
        if isinstance(command, str):
            return [m for m in _REDIRECT.findall(command) if m not in ("/dev/null", "&1", "&2")]
    return []


def level_before(path: list) -> str | None:
    """The thinking level a side inherits: the last one set on the shared part of its path."""
    for e in reversed(path):
        if get(e, "type") == "thinking_level_change":
            level = get(e, "thinkingLevel")
            return level if isinstance(level, str) else None
    return None


class SideTally:
    """What entries add to a side of the table, one entry at a time (``summarize``; the explorer
    page takes each entry's alone)."""

    __slots__ = ("user", "assistant", "failed", "compactions", "edits", "calls", "tokens", "cost", "models",
                 "levels", "files", "level")

    def __init__(self, inherited_level: str | None = None) -> None:
        self.user = self.assistant = self.failed = self.compactions = self.edits = 0
        self.calls: dict[str, int] = {}
        self.tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        self.cost = 0.0
        self.models: list[str] = []
        self.levels: list[str] = []
        self.files: list[str] = []
        self.level = inherited_level  # the thinking level in effect

    def add(self, e: dict, pi_version: str) -> None:
        """Count entry ``e`` (complete, an object)."""
        t = e.get("type")
        if t == "compaction":
            self.compactions += 1
        elif t == "context_edit":
            self.edits += 1
        elif t == "thinking_level_change":
            level = e.get("thinkingLevel")
            self.level = level if isinstance(level, str) else None
            if self.level is not None and self.level not in self.levels:
                self.levels.append(self.level)
        fact = fact_of(e, pi_version)
        if fact is None:
            return
        if fact.usage is not None:
            tokens = self.tokens
            for k, v in zip(tokens, fact.usage[:4]):
                tokens[k] += v or 0
            self.cost += fact.usage[4] or 0
        if fact.role == "user":
            self.user += 1
        elif fact.role == "assistant":
            self.assistant += 1
            if fact.model and fact.model not in self.models:
                self.models.append(fact.model)
            ran_at = fact.thinking or self.level
            if ran_at and ran_at not in self.levels:
                self.levels.append(ran_at)
            content = get(e.get("message"), "content")
            calls, files = self.calls, self.files
            for b in content if isinstance(content, list) else []:
                if isinstance(b, dict) and b.get("type") == "toolCall":
                    raw = b.get("name")
                    name: str = raw if isinstance(raw, str) else str(js.to_string(raw))
                    calls[name] = calls.get(name, 0) + 1
                    for f in files_of_call(name, b.get("arguments")):
                        if f not in files:
                            files.append(f)
        elif fact.role == "toolResult" and fact.error == "tool":
            self.failed += 1


def summarize(session: Session, after: list, ctx: Context, inherited_level: str | None = None) -> SideSummary:
    """``after``: the side's path after the parting point, complete entries; ``inherited_level``:
    the thinking level in effect at the parting point (its assistant messages ran at it until a
    change)."""
    tally = SideTally(inherited_level)
    times: list[float] = []
    for e in after:
        if not isinstance(e, dict):
            continue
        ms = js.date_ms(e.get("timestamp"))
        if ms is not None:
            times.append(ms)
        tally.add(e, session.pi_version)
    wall = (max(times) - min(times)) if len(times) > 1 else (0.0 if times else None)
    return SideSummary(len(after), tally.user, tally.assistant, tally.calls, tally.failed, tally.tokens,
                       round(tally.cost, 10), wall, tally.models, tally.levels, tally.compactions, tally.edits,
                       tally.files, len(ctx.messages), approx_tokens(ctx.messages))


# --- what the model sees --------------------------------------------------------------------------------


def seen_part(m: Any) -> Any:
    """What a provider is sent of message ``m``: the key two messages are "the same" by."""
    if isinstance(m, dict):
        return {k: v for k, v in m.items() if k not in MESSAGE_METADATA}
    return m


def same_key(m: Any) -> bytes:
    """Two messages are "the same" (Compare's ``same``) when their keys are equal: what a provider is
    sent of them (``seen_part``) as JSON, its members sorted."""
    try:
        return orjson.dumps(seen_part(m), option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(m).encode()


def message_text(m: Any) -> str:
    """The text of a message: its text blocks (or string content), or a summary's text."""
    if not isinstance(m, dict):
        return ""
    if isinstance(m.get("summary"), str):
        return m["summary"]
    content = m.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    if m.get("role") == "bashExecution":
        return js.to_string(m.get("output")) if m.get("output") is not None else ""
    return ""


def shape_key(m: Any) -> bytes:
    """``same_key`` of the message with every text left out: equal for two messages that differ only
    in their text (Compare's ``changed``)."""
    if not isinstance(m, dict):
        return same_key(m)
    seen = seen_part(m)
    untexted = _without_text(seen)
    return same_key(seen if untexted is None else untexted)


def same_and_shape_keys(m: Any) -> tuple[bytes, bytes | None]:
    """``same_key(m)`` and ``shape_key(m)``, the second ``None`` where it is the first (a message
    with no text to leave out: its key is not made twice)."""
    if not isinstance(m, dict):
        return same_key(m), None
    seen = seen_part(m)
    untexted = _without_text(seen)
    try:
        same = orjson.dumps(seen, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(m).encode(), same_key(seen if untexted is None else untexted)
    return same, None if untexted is None else same_key(untexted)


def _without_text(seen: dict) -> dict | None:
    """``seen`` (a message's ``seen_part``) with every text left out, or ``None`` when it holds none."""
    content = seen.get("content")
    bash = seen.get("role") == "bashExecution" and "output" in seen
    texts = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "text" for b in content)
    if "summary" not in seen and not bash and not texts and not (isinstance(content, str) and content):
        return None
    out = dict(seen)
    out.pop("summary", None)
    if isinstance(content, str):
        out["content"] = ""
    elif isinstance(content, list) and texts:  # (a text block more or fewer is still a change of text)
        out["content"] = [b for b in content if not (isinstance(b, dict) and b.get("type") == "text")]
    if bash:
        out.pop("output", None)
    return out


@dataclass(frozen=True)
class Aligned:
    """One step of the aligned contexts.

    ``op``: ``same`` (``count`` messages in both, from ``a_index``/``b_index``), ``removed`` (only
    in A), ``added`` (only in B), ``changed`` (the same message but for its text: ``text_diff``
    holds a unified diff of the text, A to B)."""

    op: str
    a_index: int | None = None
    b_index: int | None = None
    count: int = 1
    text_diff: tuple = ()


def text_diff(a: str, b: str, context_lines: int = 2) -> tuple:
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), "a", "b", n=context_lines, lineterm="")
    return tuple(list(lines)[2:])  # the ---/+++ header says nothing here


def align(a: list, b: list) -> list[Aligned]:
    """The two message lists aligned: the common prefix, then a sequence alignment of the rest."""
    ka, kb = [same_key(m) for m in a], [same_key(m) for m in b]
    p = 0
    while p < len(ka) and p < len(kb) and ka[p] == kb[p]:
        p += 1
    out: list[Aligned] = [Aligned("same", 0, 0, p)] if p else []
    matcher = difflib.SequenceMatcher(None, ka[p:], kb[p:], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        i1, i2, j1, j2 = i1 + p, i2 + p, j1 + p, j2 + p
        if op == "equal":
            out.append(Aligned("same", i1, j1, i2 - i1))
            continue
        removed, added = list(range(i1, i2)), list(range(j1, j2))
        while removed and added and shape_key(a[removed[0]]) == shape_key(b[added[0]]):
            i, j = removed.pop(0), added.pop(0)
            out.append(Aligned("changed", i, j, 1, text_diff(message_text(a[i]), message_text(b[j]))))
        out.extend(Aligned("removed", i, None) for i in removed)
        out.extend(Aligned("added", None, j) for j in added)
    return out


@dataclass(frozen=True)
class SystemDiff:
    """How the system prompt and tool set differ (pi 1.x's system messages), where they do."""

    sections_only_a: list
    sections_only_b: list
    sections_changed: list
    prompt_a: str
    prompt_b: str
    tools_only_a: list
    tools_only_b: list

    @property
    def differs(self) -> bool:
        return bool(self.sections_only_a or self.sections_only_b or self.sections_changed or self.tools_only_a
                    or self.tools_only_b or self.prompt_a != self.prompt_b)

    def to_json(self) -> dict:
        return {"sectionsOnlyA": self.sections_only_a, "sectionsOnlyB": self.sections_only_b,
                "sectionsChanged": self.sections_changed, "promptDiffers": self.prompt_a != self.prompt_b,
                "toolsOnlyA": self.tools_only_a, "toolsOnlyB": self.tools_only_b}


def _system(ctx: Context) -> dict | None:
    try:
        return ctx.system_message()
    except Exception:  # a checkpoint pi cannot replay: validate says why; the comparison goes on
        return None


def system_diff(a: Context, b: Context) -> SystemDiff | None:
    sa, sb = _system(a), _system(b)
    if sa is None and sb is None:
        return None
    seca, secb = (sa or {}).get("sections") or {}, (sb or {}).get("sections") or {}
    ta, tb = tool_names(sa), tool_names(sb)
    out = SystemDiff([k for k in seca if k not in secb], [k for k in secb if k not in seca],
                     [k for k in seca if k in secb and seca[k] != secb[k]], prompt_text(sa), prompt_text(sb),
                     [t for t in ta if t not in tb], [t for t in tb if t not in ta])
    return out if out.differs else None


# --- the whole answer -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    session: Session
    context: Context
    summary: SideSummary


@dataclass(frozen=True)
class Diff:
    a: Side
    b: Side
    parting: Parting
    aligned: list
    system: SystemDiff | None = None
    notes: list = field(default_factory=list)

    @property
    def same_context(self) -> bool:
        """The two contexts hold the same messages (the exit code's answer)."""
        return all(x.op == "same" for x in self.aligned) and self.system is None

    @property
    def shared_messages(self) -> int:
        return sum(x.count for x in self.aligned if x.op == "same")

    def to_json(self) -> dict:
        def side(s: Side, after: list) -> dict:
            return {"path": s.session.path, "sessionId": (s.session.header or {}).get("id"),
                    "reader": s.session.reader, "piVersion": s.session.pi_version,
                    "leafId": s.context.leaf_id,
                    "firstEntryId": _entry_id(after[0]) if after else None, **s.summary.to_json()}

        def entry_id(ctx: Context, i: int) -> Any:
            # as ``context --json``'s messageEntryIds name them
            return js.get_json(ctx.message_sources[i], "id") if i < len(ctx.message_sources) else None

        def message(ctx: Context, i: int | None) -> dict | None:
            if i is None:
                return None
            return {"index": i, "entryId": entry_id(ctx, i), "message": ctx.messages[i]}

        def run(ctx: Context, i: int, n: int) -> dict:
            # each side's own copies: the same to a provider, their time stamps and usage their own
            return {"index": i, "entryIds": [entry_id(ctx, k) for k in range(i, i + n)],
                    "messages": ctx.messages[i:i + n]}

        def step(x: Aligned) -> dict:
            if x.op == "same":
                assert x.a_index is not None and x.b_index is not None
                return {"op": x.op, "count": x.count, "a": run(self.a.context, x.a_index, x.count),
                        "b": run(self.b.context, x.b_index, x.count)}
            out = {"op": x.op, "count": x.count, "a": message(self.a.context, x.a_index),
                   "b": message(self.b.context, x.b_index)}
            if x.op == "changed":
                out["textDiff"] = list(x.text_diff)
            return out

        p = self.parting
        return {
            "relation": p.relation,
            "commonEntryCount": p.common,
            "partedAfter": _entry_id(p.last_common) if p.last_common is not None else None,
            "a": side(self.a, p.after_a),
            "b": side(self.b, p.after_b),
            "sameContext": self.same_context,
            "sharedMessageCount": self.shared_messages,
            "messages": [step(x) for x in self.aligned],
            "system": None if self.system is None else self.system.to_json(),
            "notes": list(self.notes),
        }


def diff_points(sa: Session, leaf_a: Any, sb: Session, leaf_b: Any) -> Diff:
    """Compare the context at ``leaf_a`` of ``sa`` with the one at ``leaf_b`` of ``sb`` (``UNDEF``:
    the session's current leaf).  ``sa`` and ``sb`` may be the same session, read once."""
    ca = build_context(sa, leaf_a, full_path=False)
    cb = build_context(sb, leaf_b, full_path=False)
    parting = part(sa, ca.path, sb, cb.path)  # (a context's path is getBranch's)
    a = Side(sa, ca, summarize(sa, parting.after_a, ca, level_before(ca.path[:parting.start_a])))
    b = Side(sb, cb, summarize(sb, parting.after_b, cb, level_before(cb.path[:parting.start_b])))
    notes = [*sa.notes, *([] if sb is sa else sb.notes)]
    return Diff(a, b, parting, align(ca.messages, cb.messages), system_diff(ca, cb), notes)
