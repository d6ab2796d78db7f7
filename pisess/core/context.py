"""What the model sees: state, entry selection, projection to messages, and ``convertToLlm``.

HARNESS (spec §7.1) works on the path cut at the compaction checkpoint; CLI (§7.2) on the full
root path.  Both select the last compaction, the entries kept from ``firstKeptEntryId`` and
everything after it, then project each entry to zero or more agent messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import js
from .errors import JSError, PisessError
from .js import UNDEF, get
from .jsonl import Light
from .paths import active_path, cli_context_path, leaf_of, path_to_checkpoint
from .session import Session

COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"

Projector = Callable[[Any, int, list], Any]


@dataclass(frozen=True)
class State:
    model: dict | None
    thinking_level: Any
    active_tool_names: list | None

    def to_json(self, reader: str) -> dict:
        out = {"model": self.model, "thinkingLevel": None if self.thinking_level is UNDEF else self.thinking_level}
        if reader == "harness":
            out["activeToolNames"] = self.active_tool_names
        return out


@dataclass(frozen=True)
class Context:
    """The answer to "what does the model see at this leaf"."""

    session: Session
    leaf_id: Any
    path: list  # getBranch(): what `path` shows
    context_entries: list  # the selection the messages are built from
    state: State
    messages: list
    llm_messages: list
    message_sources: list  # the context entry each message came from, parallel to messages
    checkpoint: Any = None  # the compaction the selection starts at, if any
    notes: list = field(default_factory=list)


def _obj(**kw: Any) -> dict:
    """A JS object literal: keys whose value is ``undefined`` are absent."""
    return {k: v for k, v in kw.items() if v is not UNDEF}


def _located(session: Session, entry: Any, err: Exception) -> PisessError:
    return JSError(f"{err} (entry {js.to_string(get(entry, 'id'))}; pi throws here too)",
                   path=session.path, line=session.line_of(entry), stage="context")


def derive_state(session: Session, path: list) -> State:
    """Model, thinking level and active tools: the last value set on ``path`` wins."""
    thinking: Any = "off"
    model: dict | None = None
    model_from: Any = None  # a light assistant message that set the model last: read back at the end
    tools: list | None = None
    harness = session.reader == "harness"
    for e in path:
        try:
            t = get(e, "type")
            if t == "thinking_level_change":
                thinking = get(e, "thinkingLevel")
            elif t == "model_change":
                model, model_from = _obj(provider=get(e, "provider"), modelId=get(e, "modelId")), None
            elif t == "message" and get(get(e, "message"), "role") == "assistant":
                if type(e) is Light:  # (its message is a stub with the role only)
                    model_from = e
                else:
                    m = get(e, "message")
                    model, model_from = _obj(provider=get(m, "provider"), modelId=get(m, "model")), None
            elif harness and t == "active_tools_change":
                tools = js.spread(get(e, "activeToolNames"))
        except TypeError as err:
            raise _located(session, e, err) from None
    if model_from is not None:
        m = get(session.full(model_from), "message")
        model = _obj(provider=get(m, "provider"), modelId=get(m, "model"))
    return State(model, thinking, tools)


def _last_compaction(path: list) -> tuple[Any, int]:
    for i in range(len(path) - 1, -1, -1):
        if get(path[i], "type") == "compaction":
            return path[i], i
    return None, -1


def _kept_before(path: list, end: int, first_kept: Any) -> list:
    """Entries before ``end`` starting at the first whose id is ``first_kept`` (none if absent)."""
    for i in range(end):
        if js.strict_eq(get(path[i], "id"), first_kept):
            return path[i:end]
    return []


def select_entries(session: Session, path: list) -> list:
    """The last compaction, the kept entries before it, and everything after it."""
    comp, _ = _last_compaction(path)
    if comp is None:
        return list(path)
    comp_id = get(comp, "id")
    first_kept = get(comp, "firstKeptEntryId")
    if session.reader == "harness":
        idx = next(i for i, e in enumerate(path)
                   if get(e, "type") == "compaction" and js.strict_eq(get(e, "id"), comp_id))
        if js.truthy(get(comp, "retainedTail")):
            return [comp, *path[idx + 1:]]
        kept = _kept_before(path, idx, first_kept) if js.truthy(first_kept) else []
        return [comp, *kept, *path[idx + 1:]]
    # the CLI looks the compaction up by id alone, and compares firstKeptEntryId even when absent
    idx = next(i for i, e in enumerate(path) if js.strict_eq(get(e, "id"), comp_id))
    return [comp, *_kept_before(path, idx, first_kept), *path[idx + 1:]]


def project(session: Session, entries: list, projectors: Mapping[str, Projector] | None = None,
            sources: list | None = None) -> list:
    """Each selected entry becomes zero or more agent messages (``sessionEntryToContextMessages``).
    ``sources``, when given, receives the entry each message came from."""
    harness = session.reader == "harness"
    out: list = []
    for index, e in enumerate(entries):
        try:
            produced = _project_one(e, index, entries, harness, projectors or {})
        except TypeError as err:
            raise _located(session, e, err) from None
        out.extend(produced)
        if sources is not None:
            sources.extend([e] * len(produced))
    return out


def _project_one(e: Any, index: int, entries: list, harness: bool, projectors: Mapping) -> list:
    t = get(e, "type")
    ts = lambda: js.date_ms(get(e, "timestamp"))  # noqa: E731 - evaluated only where pi does
    if t == "message":
        msg = get(e, "message")
        if not harness and get(msg, "role") in ("user", "assistant", "toolResult") \
                and get(msg, "content") in (None, UNDEF):
            return [{**msg, "content": []}]
        return [msg]
    if t == "custom_message":
        content = get(e, "content")
        if not harness and (content is None or content is UNDEF):
            content = []
        return [_obj(role="custom", customType=get(e, "customType"), content=content,
                     display=get(e, "display"), details=get(e, "details"), timestamp=ts())]
    if t == "compaction":
        summary = _obj(role="compactionSummary", summary=get(e, "summary"),
                       tokensBefore=get(e, "tokensBefore"), timestamp=ts())
        if not harness:
            return [summary]
        tail = get(e, "retainedTail")
        return [summary, *js.spread([] if tail is None or tail is UNDEF else tail)]
    if t == "branch_summary" and js.truthy(get(e, "summary")):
        return [_obj(role="branchSummary", summary=get(e, "summary"), fromId=get(e, "fromId"), timestamp=ts())]
    if t == "custom" and harness:
        projector = projectors.get(get(e, "customType")) if isinstance(get(e, "customType"), str) else None
        return list(projector(e, index, entries) or []) if projector else []
    return []


def bash_execution_text(m: Any) -> str:
    text = f"Ran `{js.to_string(get(m, 'command'))}`\n"
    output = get(m, "output")
    text += f"```\n{js.to_string(output)}\n```" if js.truthy(output) else "(no output)"
    exit_code = get(m, "exitCode")
    if js.truthy(get(m, "cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code is not UNDEF and not js.strict_eq(exit_code, 0):
        text += f"\n\nCommand exited with code {js.to_string(exit_code)}"
    if js.truthy(get(m, "truncated")) and js.truthy(get(m, "fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {js.to_string(get(m, 'fullOutputPath'))}]"
    return text


def convert_to_llm(messages: list) -> list:
    """pi's ``convertToLlm``: what is actually sent to the provider."""
    out = []
    for m in messages:
        role = get(m, "role")
        if role == "bashExecution":
            if js.truthy(get(m, "excludeFromContext")):
                continue
            out.append(_obj(role="user", content=[{"type": "text", "text": bash_execution_text(m)}],
                            timestamp=get(m, "timestamp")))
        elif role == "custom":
            content = get(m, "content")
            out.append(_obj(role="user",
                            content=[{"type": "text", "text": content}] if isinstance(content, str) else content,
                            timestamp=get(m, "timestamp")))
        elif role == "branchSummary":
            text = BRANCH_PREFIX + js.to_string(get(m, "summary")) + BRANCH_SUFFIX
            out.append(_obj(role="user", content=[{"type": "text", "text": text}], timestamp=get(m, "timestamp")))
        elif role == "compactionSummary":
            text = COMPACTION_PREFIX + js.to_string(get(m, "summary")) + COMPACTION_SUFFIX
            out.append(_obj(role="user", content=[{"type": "text", "text": text}], timestamp=get(m, "timestamp")))
        elif role in ("user", "assistant", "toolResult"):
            out.append(m)
    return out


def build_context(session: Session, leaf_id: Any = UNDEF,
                  projectors: Mapping[str, Projector] | None = None, *, complete: bool = True,
                  full_path: bool = True) -> Context:
    """Everything ``pisess context`` shows, for the current leaf or ``leaf_id``.

    ``projectors`` maps a ``custom`` entry's ``customType`` to a callable
    ``(entry, index, entries) -> messages`` (HARNESS only; the CLI never projects them).
    ``complete=False`` skips reading back full entries of a light session: the walk, the state and
    every error pi would raise are the same, only the message contents are partial (validate).
    ``full_path=False`` reads back only the entries of the context, not the whole path (the pi
    command's path runs to the root: a million entries, of which the context may need a few).
    """
    full = session.materialize if complete else (lambda es: es)
    full_walk = full if full_path else (lambda es: es)
    explicit = leaf_id is not UNDEF
    if explicit and leaf_id is not None and session.lookup(leaf_id) is None:
        raise PisessError("not_found", f"Entry {js.to_string(leaf_id)} not found", path=session.path, stage="leaf")
    if session.reader == "harness":
        leaf = leaf_id if explicit else leaf_of(session)
        path = full(path_to_checkpoint(session, leaf))
        walk = path
    else:
        leaf = leaf_id if explicit else (None if session.leaf_id is UNDEF else session.leaf_id)
        target = leaf_id if explicit else UNDEF
        walk = full_walk(cli_context_path(session, target))
        start = session.leaf_id if target is UNDEF else target
        # getBranch and buildSessionPath differ only when the leaf is unset or unknown
        same = js.truthy(start) and session.lookup(start) is not None
        path = walk if same else full_walk(active_path(session, target))
    state = derive_state(session, walk)
    selected = select_entries(session, walk)
    if complete and not full_path and session.reader != "harness":
        whole = full(selected)
        swap = {id(a): b for a, b in zip(selected, whole) if a is not b}
        if swap:  # the path shows the same objects as the context
            path = [swap.get(id(e), e) for e in path]
        selected = whole
    sources: list = []
    messages = project(session, selected, projectors, sources)
    try:
        llm = convert_to_llm(messages)
    except TypeError as err:
        raise JSError(f"{err} (a message in the context is null; pi throws converting it)",
                      path=session.path, stage="convert") from None
    checkpoint = selected[0] if selected and get(selected[0], "type") == "compaction" else None
    return Context(session, leaf, path, selected, state, messages, llm, sources, checkpoint)
