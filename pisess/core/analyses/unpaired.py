"""Where a session holds tool results the provider gets without their call (pi #4570): on the
context at the leaf and on every other path through a suspect, reading complete entries only
where the tree (a cheap walk over positions) says one can exist (``model.pairing`` has the rule)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .. import js
from ..errors import PisessError
from ..js import get
from ..model.pairing import AS_USER, SKIPPED, results_without_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..reading.session import Session

MAX_OTHER_PATHS = 64  # contexts built for paths other than the leaf's (each reads its path)


@dataclass(frozen=True)
class Unpaired:
    """A tool result sent without its call.  ``at_leaf``: in the context at the session's leaf
    (pi cannot go on from there); ``tips``: the other paths' ends whose context holds it so;
    ``why``: what comes before it in that context instead of its call."""

    position: int
    entry_id: Any
    tool_call_id: Any
    tool_name: Any
    at_leaf: bool
    tips: tuple
    why: str


def _why(messages: list, sources: list, i: int, id_width: int = 8) -> str:
    """What the provider gets before result ``i`` in place of its call."""
    for j in range(i - 1, -1, -1):
        role = get(messages[j], "role")
        sid = js.to_string(get(sources[j], "id"))[:id_width]
        if role == "compactionSummary":
            return f"compaction {sid} summarized its call away"
        if role in AS_USER or role == "user":
            return f"a {'user' if role == 'user' else js.to_string(role)} message ({sid}) comes between it and its call"
        if role == "assistant":
            if get(messages[j], "stopReason") in SKIPPED:
                return f"assistant {sid} ended {js.to_string(get(messages[j], 'stopReason'))} and is not sent"
            return f"assistant {sid} before it made no such call"
    return "it opens the context"


def _suspects(session: Session, not_made: list[int] | None = None, walked: tuple | None = None) -> list[int]:
    """Positions of tool results that may go without their call: up the parents (through other
    tool results and entries that give no message) something else than an assistant message
    comes first, or the assistant is the target of a context edit, or a compaction keeps from
    the result, or the assistant made no call of its id (``not_made``, else found:
    ``calls_not_made``).  A result pi wrote in its turn is none of these.  ``walked``: ``walk(session)``,
    where the caller has it."""
    out, turns = walked if walked is not None else walk(session)
    return sorted(out + (calls_not_made(session, turns) if not_made is None else not_made))


def results_not_made(session: Session, walked: tuple | None = None) -> list[int]:
    """The tool results whose assistant (up their parents) made no call of their id, or is one
    pi-ai drops (``calls_not_made``).  ``walked``: ``walk(session)``, where the caller has it."""
    return calls_not_made(session, (walked if walked is not None else walk(session))[1])


def walk(session: Session) -> tuple[list[int], dict[int, list[int]]]:
    """The results whose walk up the parents meets no assistant message to answer (or an edited
    one, or a compaction keeps from them), and the others by the assistant their walk meets."""
    store = session.store
    role_of: dict[int, Any] = {}

    def what(pos: int) -> Any:
        if pos in role_of:
            return role_of[pos]
        r = store.plain_role(pos)
        if r is None:
            e = store[pos]
            t = get(e, "type") if isinstance(e, dict) else None
            if t == "message":
                m = e.get("message")
                r = m.get("role") if isinstance(m, dict) else None
            elif t in ("compaction", "branch_summary", "custom_message"):
                r = t
            else:
                r = ""  # gives no message: transparent
        role_of[pos] = r
        return r

    edited: set = set()
    kept_from: set = set()
    for _, e in store.extras():
        t = get(e, "type") if isinstance(e, dict) else None
        if t == "context_edit":
            p = store.find(get(e, "targetId"))
            if p is not None:
                edited.add(p)
        elif t == "compaction":
            p = store.find(get(e, "firstKeptEntryId"))
            if p is not None:
                kept_from.add(p)
    out = []
    turns: dict[int, list[int]] = {}  # assistant position -> the results whose walk up reached it
    for q in store.role_positions("toolResult"):
        if q in kept_from:
            out.append(q)
            continue
        p = store.parent(q)
        for _ in range(len(store)):  # (a cycle ends the walk: reported as such)
            r = None if p is None else what(p)
            if r in ("toolResult", "", "system"):
                p = store.parent(p)  # type: ignore[arg-type]
                continue
            break
        if p is None or r != "assistant" or p in edited:
            out.append(q)
        else:
            turns.setdefault(p, []).append(q)
    return out, turns


def calls_not_made(session: Session, turns: dict[int, list[int]]) -> list[int]:
    """The results among ``turns`` (an assistant's position -> the results below it) whose call
    id is none of that assistant's calls (a tool that rewrote one side's ids, a result moved under
    another turn), or whose assistant pi-ai drops (it ended ``error`` or ``aborted``): each goes to
    the provider without its call.  A result the read saw answer a call of its turn's assistant
    (``store.answered``) is left alone; the others' assistants and results are read whole."""
    turns = _unseen(session, turns)
    if not turns:
        return []
    calls: dict[int, set | None] = {}  # assistant position -> its call ids (None: dropped)
    for pos, e in session.complete_at(sorted(turns)):
        m = e.get("message") if isinstance(e, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(m, dict) and m.get("stopReason") in SKIPPED:
            calls[pos] = None
        else:
            calls[pos] = {js.key(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"} \
                if isinstance(content, list) else set()
    made = {q: calls.get(p) for p, qs in turns.items() for q in qs}
    out = [q for q, ids in made.items() if ids is None]

    def unsure(q: int, line: bytes) -> bool:
        ids = made[q]
        return ids is not None and _plain_call_id(line) not in ids

    for q, e in session.complete_at(sorted(made), unsure):
        m = e.get("message") if isinstance(e, dict) else None
        if not isinstance(m, dict) or js.key(get(m, "toolCallId")) not in made[q]:  # type: ignore[operator]
            out.append(q)
    return out


def _unseen(session: Session, turns: dict[int, list[int]]) -> dict[int, list[int]]:
    """``turns`` without the results the read found answering a call of the assistant they are
    under (``store.answered``: the pairs its one parse of the lines saw); assistants left with none
    go too."""
    results, by = session.store.answered()
    if not results:
        return turns
    turn_of = sorted((q, p) for p, qs in turns.items() for q in qs)
    out: dict[int, list[int]] = {}
    i, n = 0, len(results)
    for q, p in turn_of:  # (both ascending: one merge)
        while i < n and results[i] < q:
            i += 1
        if i < n and results[i] == q and by[i] == p:
            continue
        out.setdefault(p, []).append(q)
    return out


_CALL_ID_KEY = b'"toolCallId"'


def _plain_call_id(line: bytes) -> str | None:
    """The ``toolCallId`` of a tool result's line read from its bytes where that is plain: the
    line names the key once, its string holds no escape (else ``None``: parse the line).  A
    result whose call is among its assistant's is then known without a parse."""
    k = line.find(_CALL_ID_KEY)
    if k < 0 or line.find(_CALL_ID_KEY, k + len(_CALL_ID_KEY)) >= 0:
        return None
    k += len(_CALL_ID_KEY)
    while line[k:k + 1] in (b" ", b"\t", b"\r", b"\n"):
        k += 1
    if line[k:k + 1] != b":":
        return None
    k += 1
    while line[k:k + 1] in (b" ", b"\t", b"\r", b"\n"):
        k += 1
    if line[k:k + 1] != b'"':
        return None
    end = line.find(b'"', k + 1)
    if end < 0 or line.find(b"\\", k + 1, end) >= 0:
        return None
    try:
        return line[k + 1:end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tips_below(session: Session, positions: Iterable[int]) -> list[int]:
    """The positions of the entries without children below (or at) ``positions``, in file order."""
    store = session.store
    children: dict[int, list] = {}
    for pos in range(len(store)):
        p = store.parent(pos)
        if p is not None and p != pos:
            children.setdefault(p, []).append(pos)
    tips, seen = set(), set()
    stack = list(positions)
    while stack:
        pos = stack.pop()
        if pos in seen:
            continue
        seen.add(pos)
        kids = children.get(pos)
        if kids:
            stack.extend(kids)
        else:
            tips.add(pos)
    return sorted(tips)


def _unpaired_in(session: Session, leaf: Any) -> dict | None:
    """position -> (the result, why) of the results sent without their call in the context at
    ``leaf`` (``js.UNDEF``: the session's leaf); ``None`` where pi cannot build that context."""
    from ..model.context import build_context

    try:
        ctx = build_context(session, leaf, complete=False)  # (the store keeps no complete entry)
    except PisessError as e:
        if e.code == "storage":
            raise
        return None
    messages = _pairing_messages(session, ctx)
    if messages is None:  # a compaction's retained messages: the context complete, as pi builds it
        ctx = build_context(session, leaf)
        messages = ctx.messages
    out = {}
    for i in results_without_call(messages, session.pi_version):
        pos = session.store.position(ctx.message_sources[i])
        if pos is not None:
            out[pos] = (messages[i], _edit_hiding_call(session, ctx, pos)
                        or _why(messages, ctx.message_sources, i, session.id_width))
    return out


def _pairing_messages(session: Session, ctx: Any) -> list | None:
    """The context's messages with what the pairing reads of assistants and tool results (their
    calls, stop reason, call id) from their complete entries, read back by offset and not kept:
    a context of a whole large file is read in a stream.  Content a context edit replaced stays
    the edit's.  ``None`` where such a message is no entry's own (a compaction's retained tail)."""
    store = session.store
    wanted: dict[int, list[int]] = {}
    for i, (m, src) in enumerate(zip(ctx.messages, ctx.message_sources)):
        if get(m, "role") in ("assistant", "toolResult"):
            pos = store.position(src)
            if pos is not None:
                wanted.setdefault(pos, []).append(i)
    out = list(ctx.messages)
    for pos, entry in session.complete_at(sorted(wanted)):
        whole = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "message" else None
        if not isinstance(whole, dict):
            return None
        for i in wanted[pos]:
            m = ctx.messages[i]
            edited = ctx.edit_of(ctx.message_sources[i]) is not None and isinstance(m, dict) and "content" in m
            out[i] = {**whole, "content": m["content"]} if edited else whole
    return out


def _edit_hiding_call(session: Session, ctx: Any, pos: int) -> str | None:
    """"context edit E hides its call's assistant A" where that is why the call is missing."""
    store = session.store
    p = store.parent(pos)
    for _ in range(len(store)):
        if p is None:
            return None
        e = store[p]
        m = e.get("message") if isinstance(e, dict) else None
        if store.plain_role(p) == "assistant" or (isinstance(m, dict) and m.get("role") == "assistant"):
            edit = ctx.edit_of(e)
            if edit is None or get(edit, "replacement") is not None:
                return None
            w = session.id_width
            return (f"context edit {js.to_string(get(edit, 'id'))[:w]} hides its call's assistant "
                    f"{js.to_string(get(e, 'id'))[:w]}")
        p = store.parent(p)
    return None


def unpaired_results(session: Session, not_made: list[int] | None = None,
                     walked: tuple | None = None) -> list[Unpaired]:
    """The tool results the provider would get without their call, on the leaf's context and on
    the other paths through a suspect (at most ``MAX_OTHER_PATHS`` of them), in file order.
    ``not_made``: ``results_not_made(session)``, ``walked``: ``walk(session)``, where the caller has them."""
    suspects = _suspects(session, not_made, walked)
    if not suspects:
        return []
    store = session.store
    found: dict[int, list] = {}  # position -> [result message, why, at leaf, [tips]]
    for pos, (m, why) in (_unpaired_in(session, js.UNDEF) or {}).items():
        found[pos] = [m, why, True, []]
    leaf = session.lookup(session.leaf_id) if js.truthy(session.leaf_id) else None
    leaf_pos = store.position(leaf) if leaf is not None else None
    for tip in [t for t in _tips_below(session, suspects) if t != leaf_pos][:MAX_OTHER_PATHS]:
        tip_id = get(store[tip], "id")
        for pos, (m, why) in (_unpaired_in(session, tip_id) or {}).items():
            got = found.setdefault(pos, [m, why, False, []])
            if not got[2]:
                got[3].append(tip_id)
    out = []
    for pos in sorted(found):
        m, why, at_leaf, tips = found[pos]
        out.append(Unpaired(pos, get(store[pos], "id"), get(m, "toolCallId"), get(m, "toolName"), at_leaf,
                            tuple(tips), why))
    return out
