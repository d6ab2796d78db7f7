"""Tokens, cost, messages, tool calls, errors and structure, summed over a set of sessions.

Usage comes from where pi records it (spec §3.4): an assistant message's ``usage``, a tool
result's ``usage`` (nested LLM work by the tool), and the ``usage`` of ``compaction`` and
``branch_summary`` entries.  Like pi's ``getSessionStats`` every branch counts, including
compacted-away history; a field that is not a number is skipped instead of making the sum NaN.

Fork-aware.  A session forked from another begins with entries copied from its parent (same id,
same timestamp).  When the parent (its header's ``parentSession``) is in the set too, the copies
are counted once, in the parent, where they were paid for; what was left out is reported.

Each count is also split by where its entry sits (``placement.place``): in context on the active
path, on the active path but behind the compaction checkpoint, or on an abandoned branch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..listing.sessionset import created_key
from ..model.placement import WHERE, place
from ..model.usage import TOKENS, entry_usage
from ..reading import cache
from ..reading.scan import entry_id, header_of, open_lenient, scan_visit, session_name

BY = ("session", "model", "day", "branch")
ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom")


@dataclass(frozen=True)
class Fact:
    """What one entry contributes (read from the complete entry during the scan)."""

    role: str | None = None  # message role
    model: str | None = None  # provider/model of an assistant message or a usage entry
    usage: tuple | None = None
    tools: tuple = ()  # names of the tool calls of an assistant message
    error: str | None = None  # "assistant" (stopReason error), "aborted", "tool" (isError)
    kind: str | None = None  # a usage entry's kind (pi 1.6: cache_warm, session_title, ...)
    thinking: str | None = None  # the thinking level an assistant message records (pi 0.99+)
    virtual: str | None = None  # provider/modelId of a pi.virtual-model-state entry


VIRTUAL_MODEL_STATE = "pi.virtual-model-state"


def model_name(provider: Any, model: Any) -> str:
    """``provider/model`` as stats and diff name a model (``?`` for a half that is null or missing)."""
    return f"{js.to_string(provider) if provider is not None else '?'}/{js.to_string(model) if model is not None else '?'}"


def fact_of(v: Any, pi_version: str = versions.CURRENT) -> Fact | None:
    """What entry ``v`` adds to the totals: pi 1.6 (from 0.86) also counts ``usage`` entries and
    names an assistant by its ``responseModel`` (C.12)."""
    t = v.get("type")
    new = versions.since(pi_version, versions.SYSTEM_MESSAGES)
    if t == "usage" and new:
        kind = v.get("kind")
        return Fact(None, model_name(v.get("provider"), v.get("model")), entry_usage(v, pi_version),
                    kind=kind if isinstance(kind, str) else "(no kind)")
    if t == "custom" and v.get("customType") == VIRTUAL_MODEL_STATE:
        data = v.get("data")
        if isinstance(data, dict):
            return Fact(None, virtual=model_name(data.get("provider"), data.get("modelId")))
        return None
    if t == "custom_message":  # an extension's message, in the context as a ``custom`` one (spec §7)
        return Fact("custom")
    if t == "message":
        m = v.get("message")
        if not isinstance(m, dict):
            return Fact(role="?")
        role = m.get("role")
        role = role if isinstance(role, str) else "?"
        if role == "assistant":
            content = m.get("content")
            tools = tuple(js.to_string(b.get("name")) if not isinstance(b.get("name"), str) else b["name"]
                          for b in (content if isinstance(content, list) else [])
                          if isinstance(b, dict) and b.get("type") == "toolCall")
            stop = m.get("stopReason")
            error = "assistant" if stop == "error" else "aborted" if stop == "aborted" else None
            model = m.get("responseModel") if new and m.get("responseModel") is not None else m.get("model")
            thinking = m.get("thinkingLevel")
            return Fact(role, model_name(m.get("provider"), model), entry_usage(v, pi_version), tools, error,
                        thinking=thinking if isinstance(thinking, str) else None)
        if role == "toolResult":
            return Fact(role, None, entry_usage(v, pi_version), (), "tool" if m.get("isError") is True else None)
        return Fact(role)
    if t in ("compaction", "branch_summary"):
        return Fact(None, None, entry_usage(v, pi_version))
    return None


class Tally:
    """A running sum (mutable while a report is built; reports hold ``to_json()`` dicts)."""

    __slots__ = ("entries", "messages", "tokens", "cost", "usage_entries", "tool_calls", "errors", "compactions",
                 "branch_summaries", "usage_kinds", "thinking_levels", "virtual_models")

    def __init__(self) -> None:
        self.entries = 0
        self.messages: dict = {}
        self.tokens = dict.fromkeys(TOKENS, 0)
        self.cost = 0.0
        self.usage_entries = 0
        self.tool_calls: dict = {}
        self.errors = {"assistant": 0, "aborted": 0, "tool": 0}
        self.compactions = 0
        self.branch_summaries = 0
        self.usage_kinds: dict = {}  # kind -> [entries, tokens, cost] of pi 1.6's usage entries
        self.thinking_levels: dict = {}  # level -> assistant messages that record it
        self.virtual_models: dict = {}  # provider/modelId -> pi.virtual-model-state entries

    def add(self, etype: Any, fact: Fact | None) -> None:
        self.entries += 1
        if etype == "compaction":
            self.compactions += 1
        elif etype == "branch_summary":
            self.branch_summaries += 1
        if fact is None:
            return
        if fact.role is not None:
            key = fact.role if fact.role in ROLES else "other"
            self.messages[key] = self.messages.get(key, 0) + 1
        if fact.usage is not None:
            self.usage_entries += 1
            for k, n in zip(TOKENS, fact.usage):
                if n is not None:
                    self.tokens[k] += n
            if fact.usage[4] is not None:
                self.cost += fact.usage[4]
        for name in fact.tools:
            self.tool_calls[name] = self.tool_calls.get(name, 0) + 1
        if fact.error:
            self.errors[fact.error] += 1
        if fact.kind is not None:
            row = self.usage_kinds.setdefault(fact.kind, [0, 0, 0.0])
            row[0] += 1
            if fact.usage is not None:
                row[1] += sum(n for n in fact.usage[:4] if n is not None)
                row[2] += fact.usage[4] or 0
        if fact.thinking is not None:
            self.thinking_levels[fact.thinking] = self.thinking_levels.get(fact.thinking, 0) + 1
        if fact.virtual is not None:
            self.virtual_models[fact.virtual] = self.virtual_models.get(fact.virtual, 0) + 1

    def merge(self, other: Tally) -> None:
        self.entries += other.entries
        for k, n in other.messages.items():
            self.messages[k] = self.messages.get(k, 0) + n
        for k in TOKENS:
            self.tokens[k] += other.tokens[k]
        self.cost += other.cost
        self.usage_entries += other.usage_entries
        for k, n in other.tool_calls.items():
            self.tool_calls[k] = self.tool_calls.get(k, 0) + n
        for k in self.errors:
            self.errors[k] += other.errors[k]
        self.compactions += other.compactions
        self.branch_summaries += other.branch_summaries
        for kind, (n, tokens, cost) in other.usage_kinds.items():
            row = self.usage_kinds.setdefault(kind, [0, 0, 0.0])
            row[0] += n
            row[1] += tokens
            row[2] += cost
        for counts, more in ((self.thinking_levels, other.thinking_levels), (self.virtual_models, other.virtual_models)):
            for k, n in more.items():
                counts[k] = counts.get(k, 0) + n

    def to_json(self) -> dict:
        tokens = {k: _int(v) for k, v in self.tokens.items()}
        tokens["total"] = _int(sum(self.tokens.values()))
        return {
            "entryCount": self.entries,
            "messageCountByRole": {k: self.messages[k] for k in (*ROLES, "other") if self.messages.get(k)},
            "messageCount": sum(self.messages.values()),
            "tokens": tokens,
            "cost": round(self.cost, 10),
            "usageEntryCount": self.usage_entries,
            "toolCallCountByTool": dict(sorted(self.tool_calls.items(), key=lambda kv: (-kv[1], kv[0]))),
            "errorCountByKind": dict(self.errors),
            "compactionCount": self.compactions,
            "branchSummaryCount": self.branch_summaries,
            "usageKinds": {k: {"entryCount": n, "tokens": _int(tok), "cost": round(c, 10)}
                           for k, (n, tok, c) in sorted(self.usage_kinds.items(), key=lambda kv: (-kv[1][2], kv[0]))},
            "messageCountByThinkingLevel": dict(sorted(self.thinking_levels.items(), key=lambda kv: (-kv[1], kv[0]))),
            "entryCountByVirtualModel": dict(sorted(self.virtual_models.items(), key=lambda kv: (-kv[1], kv[0]))),
        }


def _int(v: float | int) -> float | int:
    return int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 2**53 else v


@dataclass(frozen=True)
class SessionStats:
    path: str
    id: Any
    name: str | None
    cwd: Any
    created_at: Any
    reader: str
    tally: dict  # this session's own entries (copies from a parent in the set left out)
    where: dict  # "active" | "edited" | "retained" | "compacted" | "branch" -> tally
    copied: dict  # the entries left out as copies from the parent
    parent: str | None  # header parentSession
    parent_in_set: str | None  # the parent's path when it is in the set (and could be read)
    branch_points: int
    abandoned_branches: int
    leaf_id: Any
    note: str | None = None
    parent_match: str | None = None  # how the parent was looked for (``MATCHES``), None without parentSession
    dropped_lines: list = field(default_factory=list)  # {line, reason} of each line the reader dropped

    def to_json(self) -> dict:
        return {"path": self.path, "id": self.id, "name": self.name, "cwd": self.cwd, "createdAt": self.created_at,
                "reader": self.reader, "parentSession": self.parent, "parentInSet": self.parent_in_set,
                "parentMatch": self.parent_match, "leafId": self.leaf_id, "branchPointCount": self.branch_points,
                "abandonedBranchCount": self.abandoned_branches, **self.tally, "where": self.where,
                "copiedFromParent": self.copied, "droppedLines": self.dropped_lines}


@dataclass(frozen=True)
class StatsReport:
    sessions: list  # SessionStats, newest first
    total: dict
    where: dict
    copied: dict  # everything left out as fork copies
    forks: list  # (child path, parent path, how it was matched) inside the set
    by: str | None
    groups: list  # [{"key", "label", ...tally}] when ``by``
    skipped: list  # PisessError per file that could not be read as a session
    branch_points: int
    abandoned_branches: int
    matches: dict  # forks by how their parent was matched (``MATCHES``; unmatched: not in the set)
    # sessions below a session's folder (subagent runs): found, counted, folded into their parent's
    nested: dict = field(default_factory=lambda: {"folded": False, "foundCount": 0, "countedCount": 0,
                                                  "parentCount": 0})

    def to_json(self) -> dict:
        return {
            "sessionCount": len(self.sessions),
            "nestedSessions": self.nested,
            "total": self.total,
            "where": self.where,
            "copiedFromParents": {**self.copied, "forks": [{"path": c, "parent": p, "matchedBy": m}
                                                           for c, p, m in self.forks], "forkCountByMatch": self.matches},
            "branchPointCount": self.branch_points,
            "abandonedBranchCount": self.abandoned_branches,
            "by": self.by,
            "groups": self.groups,
            "sessions": [s.to_json() for s in self.sessions],
            "skipped": [e.to_dict() for e in self.skipped],
        }


def _real(p: Any) -> str | None:
    if not isinstance(p, str) or not p:
        return None
    try:
        return os.path.realpath(p)
    except (OSError, ValueError):
        return None


def _ekey(e: Any) -> int:
    return hash((js.to_string(get(e, "id")) if not isinstance(get(e, "id"), str) else get(e, "id"),
                 js.to_string(get(e, "timestamp")) if not isinstance(get(e, "timestamp"), str) else get(e, "timestamp")))


def local_day(e: Any, fact: Fact | None) -> str:
    ms = js.date_ms(get(e, "timestamp"))
    if ms is None:
        return "(no date)"
    try:
        return time.strftime("%Y-%m-%d", time.localtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return "(no date)"


def compute_stats(paths: list[str], *, reader: str = "auto", by: str | None = None,
                  tick: Callable[[int], None] | None = None,
                  on_skip: Callable[[PisessError], None] | None = None,
                  pi_version: str = versions.CURRENT, nested: bool = False) -> StatsReport:
    """Sum over ``paths`` as pi ``pi_version`` counts.  A file that cannot be read as a session is
    skipped (in ``skipped``); an I/O failure raises unless ``on_skip`` takes it.

    Sessions nested below a session's folder (``<stem>/…/*.jsonl``, subagent runs) are counted
    where ``paths`` holds them (a directory named is walked), as sessions of their own; with
    ``nested`` every one below a session of ``paths`` is counted, folded into its parent's (its
    ``--by session`` group is the parent's).  ``nestedSessions`` in the report says which."""
    if by is not None and by not in BY:
        raise PisessError("usage", f"--by must be one of {', '.join(BY)}, not {by!r}")
    from ..listing.nested import nested_sessions

    nested_in = {q: p for p in paths for q in nested_sessions(p)}
    given = set(paths)
    counted = sum(1 for q in nested_in if q in given)
    if nested:
        paths = paths + [q for q in nested_in if q not in given]
    nested_report = {"folded": nested, "foundCount": len(nested_in),
                     "countedCount": len(nested_in) if nested else counted,
                     "parentCount": len(set(nested_in.values()))}
    links = fork_parents(paths)
    parent_of = {p: parent for p, (parent, _) in links.items() if parent is not None}
    run = _Run(by, parent_of, nested_in if nested else {})
    for path in _parents_first(paths, parent_of):
        # a session that is neither a fork nor a parent in the set counts alone: its figures can be
        # the cache's (``by`` groups are left to the read); "stats4": a kept SessionStats holds
        # ``to_json`` dicts, so the kind changes with their names (the document's version 2)
        lone = f"stats4:{reader}:{pi_version}" if by is None and path not in parent_of and path not in run.children_left \
            else None
        got = cache.recall(path, lone) if lone else None
        if got is not None:
            run.add_cached(*_thaw(got[0]))
            continue
        read = _read(path, reader, tick, pi_version)
        if isinstance(read, PisessError):
            if read.code in ("storage", "not_found") and on_skip is None:
                raise read
            run.skipped.append(read)
            if on_skip is not None:
                on_skip(read)
            continue
        own, own_where = run.add_session(path, *read, links.get(path, (None, None))[1])
        if lone:
            cache.remember(path, lone, _frozen(own, own_where, run.results[-1]))
    return replace(run.report(), nested=nested_report)


# --- stage 1: which session in the set each fork was copied from ---------------------------------

MATCHES = ("path", "fileId", "headerId", "sameId", "unmatched")


def file_session_id(path: str) -> str | None:
    """The session id in a file name pi gave (``<timestamp>_<uuid>.jsonl``); ``None`` for any
    other name: a file another tool renamed (``<display name>_<uuid>.jsonl``) says nothing of
    its session by its name (the header does)."""
    from ..listing.repo import pi_file_name

    name = os.path.basename(path)
    if not pi_file_name(name):
        return None
    return name[:-len(".jsonl")].partition("_")[2] or None


def fork_parents(paths: list[str]) -> dict[str, tuple[str | None, str]]:
    """For each session whose header names a ``parentSession``: the parent's path in ``paths`` and
    how it was found (one of ``MATCHES``).  The path written in the fork is absolute, so a copied
    root, a backup or another machine's tree matches none of them: then the session id in the
    parent's file name is looked for among the files' names, and then among their headers' ids (a
    renamed file).  Several candidates: the one in the fork's own directory, else none."""
    headers = {p: header_of(p) for p in paths}
    by_real: dict[str, str] = {}
    by_file_id: dict[str, list[str]] = {}
    by_header_id: dict[str, list[str]] = {}
    for p in paths:
        r = _real(p)
        if r:
            by_real[r] = p
        fid = file_session_id(p)
        if fid is not None:
            by_file_id.setdefault(fid, []).append(p)
        hid = (headers[p] or {}).get("id")
        if isinstance(hid, str) and hid:
            by_header_id.setdefault(hid, []).append(p)
    out: dict[str, tuple[str | None, str]] = {}
    for p in paths:
        written = (headers[p] or {}).get("parentSession")
        if not isinstance(written, str) or not written:
            continue
        parent = by_real.get(_real(written) or "")
        if parent is not None and parent != p:
            out[p] = (parent, "path")
            continue
        wanted = file_session_id(written)
        if wanted is None:  # a name of another tool's: the same name (a copied root), never an id read from it
            parent = _one_of([q for q in paths if q != p and os.path.basename(q) == os.path.basename(written)], p)
            out[p] = (parent, "fileId") if parent is not None else (None, "unmatched")
            continue
        for how, pool in (("fileId", by_file_id), ("headerId", by_header_id)):
            parent = _one_of([q for q in pool.get(wanted, ()) if q != p], p)
            if parent is not None:
                out[p] = (parent, how)
                break
        else:
            out[p] = (None, "unmatched")
    # two files of one session id (pi #11060): the later by name counts what the first holds once,
    # as a fork's copies are (entries of one session match by id and time)
    for p, first in second_files(by_header_id).items():
        if out.get(p, (None, ""))[0] is None:
            out[p] = (first, "sameId")
    return out


def second_files(by_header_id: dict[str, list[str]]) -> dict[str, str]:
    """Each file holding a session id an earlier file (by name) holds too (pi #11060: ``/import``
    before pi 1.5.2 left ``s.jsonl`` and ``s-1.jsonl``) -> that first file."""
    out = {}
    for group in by_header_id.values():
        if len(group) > 1:
            first, *rest = sorted(group, key=os.fsencode)
            out.update(dict.fromkeys(rest, first))
    return out


def _one_of(candidates: list[str], fork: str) -> str | None:
    if len(candidates) == 1:
        return candidates[0]
    here = [q for q in candidates if os.path.dirname(q) == os.path.dirname(fork)]
    return here[0] if len(here) == 1 else None


def _parents_first(paths: list[str], parent_of: dict[str, str]) -> list[str]:
    """``paths`` with every parent before its forks (the copies are known when a fork is read)."""
    def depth(p: str) -> int:
        d, seen = 0, {p}
        while p in parent_of:
            p = parent_of[p]
            if p in seen:
                break
            seen.add(p)
            d += 1
        return d

    return sorted(paths, key=depth)


# --- stage 2: one session read, the facts of its entries beside it -------------------------------

def _read(path: str, reader: str, tick: Callable[[int], None] | None,
          pi_version: str) -> tuple[Any, str | None, dict[int, Fact]] | PisessError:
    """(session, note, line number -> Fact), or the error that makes the file skipped."""
    facts: dict[int, Fact] = {}

    def visit(number: int, v: Any, _raw: bytes) -> None:
        if isinstance(v, dict):
            f = fact_of(v, pi_version)
            if f is not None:
                facts[number] = f

    try:
        raw = scan_visit(path, visit, tick)
        session, note = open_lenient(path, reader, raw, pi_version=pi_version)
    except PisessError as e:
        return e
    return session, note, facts


# --- stage 3: the sums ---------------------------------------------------------------------------

class _Run:
    """The sums of one report while its sessions are added, parents before their forks."""

    def __init__(self, by: str | None, parent_of: dict[str, str], folded_into: dict[str, str] | None = None) -> None:
        self.by = by
        self.folded_into = folded_into or {}  # a nested session's path -> its parent's (``--nested``)
        self.parent_of = parent_of
        self.children_left: dict[str, int] = {}
        for p in parent_of.values():
            self.children_left[p] = self.children_left.get(p, 0) + 1
        self.kept_keys: dict[str, set] = {}  # a parent's entry keys, until its last fork is read
        self.total, self.copied = Tally(), Tally()
        self.where = {w: Tally() for w in WHERE}
        self.groups: dict[Any, Tally] = {}
        self.labels: dict[Any, dict] = {}
        self.results: list[SessionStats] = []
        self.skipped: list[PisessError] = []
        self.forks: list = []
        self.branch_points = self.abandoned_branches = 0

    def add_session(self, path: str, session: Any, note: str | None, facts: dict[int, Fact],
                    match: str | None) -> tuple[Tally, dict]:
        """Add one session read; returns its own figures (total, by placement)."""
        pl = place(session)
        parent = self.parent_of.get(path)
        parent_keys = self.kept_keys.get(parent) if parent else None
        if parent_keys is not None:
            self.forks.append((path, parent, match))
        keep = self.children_left.get(path, 0) > 0
        keys: set = set()
        own, own_copied = Tally(), Tally()
        own_where = {w: Tally() for w in WHERE}
        roots: set = set()
        h = session.header if isinstance(session.header, dict) else {}
        sid = h.get("id")
        sname = session_name(session)
        if self.by == "session" and path not in self.folded_into:
            self.labels[path] = {"key": path, "sessionId": sid, "name": sname, "path": path}
        elif self.by == "session":  # (a parent that could not be read keeps its own row)
            up = self.folded_into[path]
            self.labels.setdefault(up, {"key": up, "sessionId": None, "name": None, "path": up})
        for i, (line, e) in enumerate(zip(session.entry_lines, session.entries)):
            fact = facts.get(line)
            etype = get(e, "type")
            if keep or parent_keys is not None:
                k = _ekey(e)
                if keep:
                    keys.add(k)
                if parent_keys is not None and k in parent_keys:
                    own_copied.add(etype, fact)
                    continue
            own.add(etype, fact)
            own_where[pl.where[i]].add(etype, fact)
            root = pl.branch_root[i]
            if root is not None:
                roots.add(id(root))
            if self.by is not None:
                gk = self._group_key(path, session, sid, e, etype, fact, root)
                if gk is not None:
                    self.groups.setdefault(gk, Tally()).add(etype, fact)
        if keep:
            self.kept_keys[path] = keys
        if parent is not None:
            self.children_left[parent] -= 1
            if self.children_left[parent] == 0:
                self.kept_keys.pop(parent, None)
        self.total.merge(own)
        self.copied.merge(own_copied)
        for w in WHERE:
            self.where[w].merge(own_where[w])
        self.branch_points += pl.branch_points
        self.abandoned_branches += len(roots)
        self.results.append(SessionStats(
            path, sid, sname, h.get("cwd"), h.get("timestamp"), session.reader, own.to_json(),
            {w: own_where[w].to_json() for w in WHERE}, own_copied.to_json(),
            h.get("parentSession") if isinstance(h.get("parentSession"), str) else None,
            parent if parent_keys is not None else None,
            pl.branch_points, len(roots), pl.leaf_id if pl.leaf_id is not UNDEF else None, note, match,
            list(session.dropped_lines)))
        return own, own_where

    def add_cached(self, own: Tally, own_where: dict, ss: SessionStats) -> None:
        """A lone session's figures as the cache kept them (``_frozen``)."""
        self.total.merge(own)
        for w in WHERE:
            self.where[w].merge(own_where[w])
        self.branch_points += ss.branch_points
        self.abandoned_branches += ss.abandoned_branches
        self.results.append(ss)

    def _group_key(self, path: str, session: Any, sid: Any, e: Any, etype: Any, fact: Fact | None,
                   root: Any) -> Any:
        """The ``--by`` group entry ``e`` adds to (its label made on first sight), or None."""
        by = self.by
        gk: Any  # a path, a model, a day, or (path, branch)
        if by == "session":
            return self.folded_into.get(path, path)
        if by == "model":
            if fact is None or (fact.model is None and fact.usage is None) or fact.virtual is not None:
                return None
            gk = fact.model if fact.model is not None else (
                "(compaction)" if etype == "compaction" else "(branch summary)" if etype == "branch_summary"
                else "(tool usage)")
            self.labels.setdefault(gk, {"key": gk})
            return gk
        if by == "day":
            gk = local_day(e, fact)
            self.labels.setdefault(gk, {"key": gk})
            return gk
        rid = entry_id(root) if root is not None else None
        gk = (path, "active" if root is None else f"branch:{js.to_string(rid)}")
        if gk not in self.labels:
            self.labels[gk] = {"key": f"{path}#{'active' if root is None else js.to_string(rid)}", "sessionId": sid,
                               "path": path, "branch": None if root is None else rid,
                               "from": None if root is None else _from(session, root)}
        return gk

    def report(self) -> StatsReport:
        self.results.sort(key=lambda s: created_key({"timestamp": s.created_at}))
        matches = dict.fromkeys(MATCHES, 0)
        for s in self.results:
            if s.parent_match is not None:
                matches[s.parent_match] += 1
        return StatsReport(self.results, self.total.to_json(), {w: self.where[w].to_json() for w in WHERE},
                           self.copied.to_json(), self.forks, self.by, self._ordered_groups(), self.skipped,
                           self.branch_points, self.abandoned_branches, matches)

    def _ordered_groups(self) -> list:
        by, groups = self.by, self.groups
        if by is None:
            return []
        order_keys = list(groups)
        rank = {s.path: i for i, s in enumerate(self.results)}
        if by == "session":
            order_keys.sort(key=lambda k: rank.get(k, 0))
        elif by == "day":
            order_keys.sort()
        elif by == "model":
            order_keys.sort(key=lambda k: (-groups[k].cost, str(k)))
        else:
            order_keys.sort(key=lambda k: (rank.get(k[0], 0), k[1] != "active"))
        return [{**self.labels[k], **groups[k].to_json()} for k in order_keys]


def _frozen(own: Tally, own_where: dict, ss: SessionStats) -> tuple:
    """A lone session's figures as plain values (what the cache keeps of it)."""
    def state(t: Tally) -> list:
        return [getattr(t, k) for k in Tally.__slots__]

    return state(own), [state(own_where[w]) for w in WHERE], [getattr(ss, f.name) for f in fields(SessionStats)]


def _thaw(value: tuple) -> tuple:
    def tally(state: list) -> Tally:
        t = Tally.__new__(Tally)
        for k, v in zip(Tally.__slots__, state, strict=True):
            setattr(t, k, v)
        return t

    own, where, ss = value
    return tally(own), {w: tally(st) for w, st in zip(WHERE, where, strict=True)}, SessionStats(*ss)


def _from(session, root: Any) -> Any:
    """The active-path entry an abandoned branch hangs from (its root's parent), or None."""
    pid = get(root, "parentId")
    return pid if isinstance(pid, str) and session.lookup(pid) is not None else None
