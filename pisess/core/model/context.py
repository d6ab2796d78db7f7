"""What the model sees: state, entry selection, projection to messages, and ``convertToLlm``.

HARNESS (spec §7.1) works on the path cut at the compaction checkpoint; CLI (§7.2) on the full
root path.  Both select the last compaction, the entries kept from ``firstKeptEntryId`` and
everything after it, then project each entry to zero or more agent messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import js, versions
from ..errors import JSError, PisessError
from ..js import UNDEF, get
from ..reading.jsonl import Light
from ..reading.session import Session
from ..versions import since
from .paths import active_path, ancestors, cli_context_path, cut_at, leaf_of, path_to_checkpoint

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
    # pi 1.6 (C.9-C.10): the context_edit in effect per selected entry (keyed by js.key of the
    # target's id), the entries an edit hides, and what each selected entry projected to
    applied_edits: dict = field(default_factory=dict)
    omitted: list = field(default_factory=list)
    originals: dict = field(default_factory=dict)  # js.key(id) -> the messages before the edit
    projection: list = field(default_factory=list)  # (entry, number of messages), per selected entry

    def system_message(self) -> dict | None:
        """The context's system messages replayed into one (pi-ai ``getCurrentSystemMessage``)."""
        from .system import current_system_message

        return current_system_message(self.messages)

    def without_call(self) -> list[int]:
        """The indexes of the tool results in ``messages`` the provider gets without their call
        (pi-ai's ``transformMessages`` pairing, ``pairing.results_without_call``): it refuses them."""
        from .pairing import results_without_call

        return results_without_call(self.messages, self.session.pi_version if self.session.reader == "cli"
                                    else versions.PI_0_82)

    def edit_of(self, entry: Any) -> Any:
        """The ``context_edit`` that changes ``entry`` here, or ``None``."""
        return self.applied_edits.get(js.key(get(entry, "id")))

    @property
    def cut_at(self) -> Any:
        """The entry ``path`` starts at when the compaction stop rule cut it (the SDK reader reads
        nothing older), else ``None``: the one answer to "where is the path cut" (``paths.cut_at``)."""
        return cut_at(self.session, self.path)

    def to_json(self) -> dict:
        """The context document (``pisess context --json``, without its ``version``): the state,
        the selection, ``messages`` and ``llmMessages`` under the names pi's oracle prints, and
        with the pi command's pi 1.6 rules what pi derives beside them (``pi_json``)."""
        s = self.session
        doc = {
            "reader": s.reader,
            "piVersion": s.pi_version,
            "path": s.path,
            "header": s.header_json(),
            "entryCount": len(s.entries),
            "leafId": self.leaf_id,
            "pathIds": [_id_json(e) for e in self.path],
            "contextEntryIds": [_id_json(e) for e in self.context_entries],
            "state": self.state.to_json(s.reader),
            "labels": s.labels_json(),
            "sessionName": s.session_name(),
            "checkpointId": None if self.checkpoint is None else get(self.checkpoint, "id"),
            "messages": self.messages,
            "llmMessages": self.llm_messages,
            "notes": s.notes,
            "droppedLines": s.dropped_lines,
            "toolResultsWithoutCall": [{"messageIndex": i, "entryId": _id_json(self.message_sources[i]),
                                        "toolCallId": js.get_json(self.messages[i], "toolCallId")}
                                       for i in self.without_call()],
        }
        if s.reader == "cli" or s.migrated_from_version is not None:
            doc["migratedFromVersion"] = s.migrated_from_version
            doc["emptyFileInitialized"] = s.empty_file_initialized
        if s.reader == "cli" and since(s.pi_version, versions.SYSTEM_MESSAGES):
            doc.update(self.pi_json())
        return doc

    def pi_json(self) -> dict:
        """What pi 1.6's pi command derives beside the messages (C.9-C.12), under the names pi's
        oracle prints: each message's entry, the edits applied and the entries they hide, the
        projection, the system message, the file's usage breakdown (an ``error`` object where pi
        throws computing it) and whether the read repaired a missing final newline."""
        from .usage import breakdown_of

        s = self.session
        try:
            breakdown: object = breakdown_of(s)
        except PisessError as err:
            breakdown = {"error": err.to_dict()}
        return {
            "messageEntryIds": [_id_json(e) for e in self.message_sources],
            "appliedEdits": {js.to_string(_id_json(e)): _id_json(self.edit_of(e))
                             for e, _ in self.projection if self.edit_of(e)},
            "omittedEntryIds": [_id_json(e) for e in self.omitted],
            "projection": [[_id_json(e), n] for e, n in self.projection],
            "systemMessage": self.system_message(),
            "usageBreakdown": breakdown,
            "finalNewlineRepaired": s.final_newline_repaired(),
        }

    def path_json(self) -> dict:
        """The path report (``pisess path --json``): each entry from the root (or the cut, see
        ``cut_at``) to the leaf with its line, whether the context holds it and the edit that
        changes it there."""
        s = self.session
        in_context = {id(e) for e in self.context_entries}
        return {
            "reader": s.reader, "piVersion": s.pi_version, "path": s.path, "leafId": self.leaf_id,
            "droppedLines": s.dropped_lines,
            "cutAtCheckpoint": self.cut_at is not None,
            "entries": [{"id": _id_json(e), "parentId": js.get_json(e, "parentId"), "type": js.get_json(e, "type"),
                         "line": s.line_of(e), "inContext": id(e) in in_context, "edit": self.edit_json(e)}
                        for e in self.path],
        }

    def edit_json(self, entry: Any) -> dict | None:
        """The ``context_edit`` that changes ``entry`` here (pi 1.6): its id and whether it hides
        the entry (``replacement: null``) rather than replacing its content; ``None`` if none."""
        edit = self.edit_of(entry)
        if edit is None:
            return None
        return {"id": get(edit, "id"), "hides": get(edit, "replacement") is None}


def _id_json(entry: Any) -> Any:
    return js.get_json(entry, "id")


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
    kept = _kept_before(path, idx, first_kept)
    if since(session.pi_version, versions.SYSTEM_MESSAGES):  # C.6: the checkpoint's systemMessage replaces them
        not_system = []
        for e in kept:
            try:
                if not _is_system_message(e):
                    not_system.append(e)
            except TypeError as err:  # (a message entry whose message is null: pi reads entry.message.role)
                raise _located(session, e, err) from None
        kept = not_system
    return [comp, *kept, *path[idx + 1:]]


def retained_positions(session: Session, chosen: list | None) -> set:
    """The positions of the entries whose copies a selected compaction's ``retainedTail`` holds
    (pi's SDK only; the pi command ignores the key and keeps the originals themselves).  The SDK
    writes ``retainedTail`` with ``firstKeptEntryId``: the copies are of the path's entries from
    that entry up to the compaction.  A ``firstKeptEntryId`` not on the path names none."""
    out: set = set()
    if session.reader != "harness" or not chosen:
        return out
    store = session.store
    for e in chosen:
        if get(e, "type") != "compaction" or not js.truthy(get(e, "retainedTail")):
            continue
        first = get(e, "firstKeptEntryId")
        pos = store.position(e)
        target = store.find(first) if js.truthy(first) else None
        if pos is None or target is None:
            continue
        run = []
        for q in ancestors(store, pos):
            run.append(q)
            if q == target:
                out.update(run)
                break
    return out


def _is_system_message(e: Any) -> bool:
    return get(e, "type") == "message" and get(get(e, "message"), "role") == "system"


def project(session: Session, entries: list, projectors: Mapping[str, Projector] | None = None,
            sources: list | None = None) -> list:
    """Each selected entry becomes zero or more agent messages (``sessionEntryToContextMessages``).
    ``sources``, when given, receives the entry each message came from."""
    return _project(session, entries, projectors, sources).messages


@dataclass(frozen=True)
class _Projected:
    messages: list
    applied_edits: dict
    omitted: list
    originals: dict
    projection: list


def _project(session: Session, entries: list, projectors: Mapping[str, Projector] | None = None,
             sources: list | None = None) -> _Projected:
    harness = session.reader == "harness"
    rules = Rules.of(session)
    edits = _edits_in(entries) if rules.edits else {}
    out: list = []
    applied: dict = {}
    omitted: list = []
    originals: dict = {}
    projection: list = []
    for index, e in enumerate(entries):
        try:
            if rules.newest_compaction_only and index > 0 and get(e, "type") == "compaction":
                produced: list = []  # C.7: only the newest compaction emits
            else:
                produced = project_one(e, index, entries, harness, projectors or {}, rules)
                edit = edits.get(js.key(get(e, "id"))) if edits else None
                if edit is not None:
                    k = js.key(get(e, "id"))
                    applied[k] = edit
                    originals[k] = produced
                    if get(edit, "replacement") is None and produced:
                        omitted.append(e)
                    produced = apply_edit(produced, edit)
        except TypeError as err:
            raise _located(session, e, err) from None
        out.extend(produced)
        projection.append((e, len(produced)))
        if sources is not None:
            sources.extend([e] * len(produced))
    return _Projected(out, applied, omitted, originals, projection)


@dataclass(frozen=True)
class Rules:
    """The projection rules of the session's pi (the SDK reader's are pi 0.82's)."""

    system: bool  # C.2, C.5: system messages get content "", a compaction's systemMessage is emitted
    edits: bool  # C.9: context_edit entries apply
    newest_compaction_only: bool  # C.7

    @staticmethod
    def of(session: Session) -> Rules:
        v = session.pi_version if session.reader == "cli" else versions.PI_0_82
        return Rules(since(v, versions.SYSTEM_MESSAGES), since(v, versions.CONTEXT_EDITS),
                      since(v, versions.CONTEXT_EDITS))


def _edits_in(entries: list) -> dict:
    """The latest ``context_edit`` per target among the selected entries (edits do not compose)."""
    edits: dict = {}
    for e in entries:
        if get(e, "type") == "context_edit":
            edits[js.key(get(e, "targetId"))] = e
    return edits


def _edits_applied(session: Session, selected: list) -> list:
    """``(entry, edit, "hidden" | "edited")`` for the selected entries a ``context_edit`` in the
    selection changes (pi 1.6's rules; none with pi 0.82's).  Only the edits are read back whole."""
    rules = Rules.of(session)
    if not rules.edits:
        return []
    edits = _edits_in(selected)
    if not edits:
        return []
    out = []
    for index, e in enumerate(selected):
        edit = edits.get(js.key(get(e, "id")))
        if edit is None or (index > 0 and get(e, "type") == "compaction"):
            continue
        out.append((e, edit, "hidden" if get(session.full(edit), "replacement") is None else "edited"))
    return out


def edit_marks(session: Session, selected: list) -> dict:
    """``id(entry) -> "hidden" | "edited"`` for the selected entries a ``context_edit`` in the
    selection changes (pi 1.6's rules; none with pi 0.82's)."""
    return {id(e): how for e, _, how in _edits_applied(session, selected)}


def unseen_by_edits(session: Session, selected: list) -> list:
    """The store positions of the selected entries whose text the model does not see because of
    ``context_edit``s (pi 1.6): an entry an edit hides, one whose content an edit replaces (a
    message of an editable role, a custom message), and an edit whose replacement is not what the
    model sees (a later edit of the same target wins, or its target is not in the context or not
    editable)."""
    if not Rules.of(session).edits or not any(get(e, "type") == "context_edit" for e in selected):
        return []
    position = session.store.position
    at = {id(e): position(e) for e in selected}  # (before full() reads an edit back: a new object)
    out, shown = [], set()
    for e, edit, how in _edits_applied(session, selected):
        if how == "hidden":
            out.append(at[id(e)])
        elif _content_editable(e):
            out.append(at[id(e)])
            shown.add(id(edit))
    out.extend(at[id(e)] for e in selected if get(e, "type") == "context_edit" and id(e) not in shown and
               get(session.full(e), "replacement") is not None)
    return [p for p in out if p is not None]


def _content_editable(entry: Any) -> bool:
    """A replacement changes this entry's content: a message of an editable role, or a custom
    message (projected as role ``custom``)."""
    t = get(entry, "type")
    return t == "custom_message" or (t == "message" and get(get(entry, "message"), "role") in EDITABLE_ROLES)


EDITABLE_ROLES = ("user", "assistant", "toolResult", "custom")


def apply_edit(messages: list, edit: Any) -> list:
    """What a ``context_edit`` makes of one entry's messages (C.9): ``replacement: null`` hides
    them whatever they are; otherwise only the ``content`` of editable roles is replaced, a string
    becoming one text block for assistant and tool-result messages."""
    replacement = get(edit, "replacement")
    if replacement is None:
        return []
    out = []
    for m in messages:
        role = get(m, "role")
        if role not in EDITABLE_ROLES:
            out.append(m)
            continue
        if replacement is UNDEF:
            raise JSError(f"context_edit {js.to_string(get(edit, 'id'))} has no replacement (pi throws applying it)",
                          stage="context")
        content = replacement.get("content", UNDEF) if isinstance(replacement, dict) else UNDEF
        if role in ("assistant", "toolResult") and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if content is UNDEF:
            out.append({k: v for k, v in m.items() if k != "content"})
        else:
            out.append({**m, "content": content})
    return out


def project_one(e: Any, index: int, entries: list, harness: bool, projectors: Mapping, rules: Rules) -> list:
    t = get(e, "type")
    ts = lambda: js.date_ms(get(e, "timestamp"))  # noqa: E731 - evaluated only where pi does
    if t == "message":
        msg = get(e, "message")
        role = get(msg, "role")
        if not harness and role in ("user", "assistant", "toolResult") and get(msg, "content") in (None, UNDEF):
            return [{**msg, "content": []}]
        if rules.system and role == "system" and get(msg, "content") in (None, UNDEF):
            return [{**msg, "content": ""}]
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
            checkpoint = get(e, "systemMessage") if rules.system else UNDEF
            return [checkpoint, summary] if js.truthy(checkpoint) else [summary]  # C.5: used as stored
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


def convert_to_llm(messages: list, pi_version: str = versions.CURRENT) -> list:
    """pi's ``convertToLlm``: what is actually sent to the provider (``system`` kept from 0.86, C.4)."""
    passed = ("user", "assistant", "toolResult", "system") if since(pi_version, versions.SYSTEM_MESSAGES) \
        else ("user", "assistant", "toolResult")
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
        elif role in passed:
            out.append(m)
    return out


def approx_tokens(messages: list) -> int:
    """The tokens ``messages`` take, estimated as pisess estimates them everywhere: a quarter of
    their JSON's bytes."""
    import orjson

    total = 0
    for m in messages:
        try:
            total += len(orjson.dumps(m))
        except TypeError:
            total += len(str(m))
    return total // 4


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
    projected = _project(session, selected, projectors, sources)
    messages = projected.messages
    rules = session.pi_version if session.reader == "cli" else versions.PI_0_82
    try:
        llm = convert_to_llm(messages, rules)
    except TypeError as err:
        raise JSError(f"{err} (a message in the context is null; pi throws converting it)",
                      path=session.path, stage="convert") from None
    checkpoint = selected[0] if selected and get(selected[0], "type") == "compaction" else None
    return Context(session, leaf, path, selected, state, messages, llm, sources, checkpoint,
                   applied_edits=projected.applied_edits, omitted=projected.omitted,
                   originals=projected.originals, projection=projected.projection)
