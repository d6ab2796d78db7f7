"""A path as turns and steps (``pisess browse``'s trace), and one entry in full (its detail pane).

A *turn* starts at a user message and runs to the next one: the assistant's steps in between, each
with its tool calls matched to their results by ``toolCallId`` (✓ ok, ✗ ``isError``, … no result
on the path: a call pi never answered, or one still running), the time each step took (from the
entry before it to its own time stamp), and its tokens and cost.  Entries before the first user
message make a turn of their own with no prompt.  Shell commands run with ``!`` (``bashExecution``),
compactions and branch summaries are steps too, so a trace shows what the model was given.

Plain data: the views draw it, the tests read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import js
from ..js import UNDEF, get
from . import kinds
from .text import one_line
from .usage import entry_usage


def _id(e: Any) -> Any:
    v = get(e, "id")
    return None if v is UNDEF else v


def finite(v: Any) -> float:
    """``v`` when it is a finite number, else 0 (a usage of 1e999 is infinity, which int() refuses)."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf") else 0


@dataclass(frozen=True)
class ToolCall:
    call_id: Any
    name: str
    arguments: str  # one line
    ok: bool | None  # None: no result on the path
    result_id: Any = None  # the tool result's entry
    result: str = ""  # its first line


@dataclass(frozen=True)
class Step:
    entry_id: Any
    word: str  # the kind table's word: assistant, bash, compaction, branch sum, ext msg, ...
    time_ms: float | None
    duration_ms: float | None  # since the entry before it
    text: str  # one line: the reply's text, the command, the summary
    calls: tuple = ()
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    error: str | None = None  # an assistant's stop reason when it failed (error, aborted)

    @property
    def failed_calls(self) -> int:
        return sum(1 for c in self.calls if c.ok is False)


@dataclass(frozen=True)
class Turn:
    index: int  # 1-based; 0 for what comes before the first prompt
    entry_id: Any  # the user message (None for turn 0)
    prompt: str
    time_ms: float | None
    steps: tuple = ()
    end_ms: float | None = None

    @property
    def duration_ms(self) -> float | None:
        return None if self.time_ms is None or self.end_ms is None else self.end_ms - self.time_ms

    @property
    def tokens(self) -> int:
        return sum(s.tokens_in + s.tokens_out for s in self.steps)

    @property
    def cost(self) -> float:
        return sum(s.cost for s in self.steps)

    @property
    def errors(self) -> int:
        return sum(s.failed_calls + (1 if s.error else 0) for s in self.steps)


@dataclass
class _Open:
    index: int
    entry_id: Any
    prompt: str
    time_ms: float | None
    steps: list = field(default_factory=list)
    end_ms: float | None = None

    def close(self) -> Turn:
        return Turn(self.index, self.entry_id, self.prompt, self.time_ms, tuple(self.steps), self.end_ms)


def _results(entries: list) -> dict:
    out: dict = {}
    for e in entries:
        m = get(e, "message")
        if get(e, "type") == "message" and get(m, "role") == "toolResult":
            out[js.key(get(m, "toolCallId"))] = e
    return out


def _calls(m: Any, results: dict) -> tuple:
    out = []
    content = get(m, "content")
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict) or b.get("type") != "toolCall":
            continue
        name = b.get("name") if isinstance(b.get("name"), str) else js.to_string(b.get("name"))
        result = results.get(js.key(b.get("id")))
        rm = get(result, "message") if result is not None else None
        ok = None if result is None else get(rm, "isError") is not True
        out.append(ToolCall(b.get("id"), str(name), kinds.tool_call_text(b, 80), ok, _id(result) if result else None,
                            kinds.message_preview(rm) if rm is not None else ""))
    return tuple(out)


def trace(entries: list) -> list[Turn]:
    """The turns of ``entries`` (complete entries of one path, root first)."""
    results = _results(entries)
    turns: list[_Open] = [_Open(0, None, "", None)]
    previous_ms: float | None = None
    for e in entries:
        ms = js.date_ms(get(e, "timestamp"))
        t = get(e, "type")
        m = get(e, "message")
        role = get(m, "role") if t == "message" else None
        if role == "user":
            turns.append(_Open(len(turns), _id(e), kinds.message_preview(m), ms, end_ms=ms))
        elif role == "assistant" or role == "bashExecution" or t in ("compaction", "branch_summary", "custom_message"):
            step = _step(e, m if t == "message" else None, ms, previous_ms, results)
            turns[-1].steps.append(step)
        if ms is not None:
            previous_ms = ms
            if turns[-1].time_ms is None:
                turns[-1].time_ms = ms
            turns[-1].end_ms = ms
    first = turns[0]
    return [o.close() for o in (turns if first.steps else turns[1:])]


def spent(e: Any) -> tuple[int, int, float]:
    """A step's tokens in, out and cost: what entry ``e`` spent, as stats and diff count it (a
    compaction's or a branch summary's model call too)."""
    got = entry_usage(e) or (None, None, None, None, None)
    return int(finite(got[0])), int(finite(got[1])), float(finite(got[4]))


def failure(m: Any) -> str | None:
    """An assistant message's stop reason when it failed (error, aborted), else None."""
    stop = get(m, "stopReason")
    return stop if stop in ("error", "aborted") else None


def _step(e: Any, m: Any, ms: float | None, previous_ms: float | None, results: dict) -> Step:
    k = kinds.of_entry(e)
    duration = ms - previous_ms if ms is not None and previous_ms is not None else None
    tokens_in, tokens_out, cost = spent(e)
    if m is not None and get(m, "role") == "assistant":
        texts: list[str] = [b["text"] for b in (get(m, "content") if isinstance(get(m, "content"), list) else [])
                            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        return Step(_id(e), k.word, ms, duration, one_line(" ".join(texts), 200), _calls(m, results),
                    tokens_in, tokens_out, cost, failure(m))
    return Step(_id(e), k.word, ms, duration, kinds.preview(e), (), tokens_in, tokens_out, cost)
