"""Fork planning: which entries a new session forked at an entry would hold (spec §9).

HARNESS (``getEntriesToFork``) copies the compaction-bounded path verbatim.  CLI
(``createBranchedSession``) copies the full root path, drops ``label`` entries, re-chains parents
and re-creates the labels that apply to the copied path at the end.  Planning is pure: the id
factory and clock are passed in; ``write_fork`` is the one function that touches the disk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import js, versions
from ..errors import PisessError
from ..js import UNDEF, get
from ..reading.session import Session
from .paths import cli_branch, cut_at, path_to_checkpoint

POSITIONS = ("before", "at")


@dataclass(frozen=True)
class ForkPlan:
    source: Session
    entry_id: str | None
    position: str
    header: dict
    entries: list
    new_empty_session: bool
    file_name: str

    def lines(self) -> bytes:
        return b"".join(_dumps(v) + b"\n" for v in [self.header, *self.entries])

    @property
    def cut_at(self) -> Any:
        """The entry the copied path starts at when the compaction stop rule cut it (the SDK
        reader copies nothing older), else ``None`` (``paths.cut_at``)."""
        return cut_at(self.source, self.entries)

    def to_json(self, path: str, *, dry_run: bool) -> dict:
        """The fork document (``pisess fork --json``): the new file's ``path`` (written, or where
        it would be with ``dry_run``), its id, header and entries."""
        s = self.source
        return {"reader": s.reader, "piVersion": s.pi_version, "dryRun": dry_run, "droppedLines": s.dropped_lines,
                "path": path, "id": self.header["id"], "header": self.header,
                "newEmptySession": self.new_empty_session, "entries": self.entries}


def _dumps(v: Any) -> bytes:
    from ..reading.jsonl import dumps

    return dumps(v)


def _fork_error(session: Session, message: str, code: str = "invalid_fork_target") -> PisessError:
    return PisessError(code, message, path=session.path, stage="fork")


def entries_to_fork(session: Session, entry_id: str | None, position: str = "before") -> tuple[list, bool]:
    """The entries of the new file, and whether pi would start an empty session instead."""
    if position not in POSITIONS:
        raise PisessError("usage", f"position must be 'before' or 'at', not {position!r}")
    if entry_id and session.lookup(entry_id) is not None:
        session.full(session.lookup(entry_id))  # the target's message decides "is a user message"
    if session.reader == "harness":
        return session.materialize(_harness_entries(session, entry_id, position)), False
    entries, empty = _cli_entries(session, entry_id, position)
    return entries, empty


def _is_user_message(entry: Any) -> bool:
    return get(entry, "type") == "message" and get(get(entry, "message"), "role") == "user"


def _leaf_for_fork(session: Session, target: Any, entry_id: str | None, position: str, prefix: str) -> Any:
    """``at``: the target itself; ``before``: the parent of a user message."""
    if position == "at":
        return get(target, "id")
    try:
        user = _is_user_message(target)
    except TypeError as e:
        raise _fork_error(session, f"{prefix}Entry {entry_id} has no message object ({e})") from None
    if not user:
        raise _fork_error(session, f"{prefix}Entry {entry_id} is not a user message")
    return get(target, "parentId")


def _harness_entries(session: Session, entry_id: str | None, position: str) -> list:
    if not entry_id:
        return list(session.entries)
    target = session.lookup(entry_id)
    if target is None:
        raise _fork_error(session, f"Entry {entry_id} not found")
    return path_to_checkpoint(session, _leaf_for_fork(session, target, entry_id, position, ""))


def _cli_entries(session: Session, entry_id: str | None, position: str) -> tuple[list, bool]:
    target = session.lookup(entry_id) if entry_id else None
    prefix = "Invalid entry ID for forking: "
    if target is None:
        raise _fork_error(session, f"{prefix}Entry {entry_id} not found")
    leaf = _leaf_for_fork(session, target, entry_id, position, prefix)
    if not js.truthy(leaf):
        return [], True
    path = session.materialize(cli_branch(session, leaf))
    if not path:
        raise _fork_error(session, f"Entry {js.to_string(leaf)} not found", code="not_found")
    remaps = versions.since(session.pi_version, versions.FORK_REMAPS_LABELS)
    kept: list = []
    parent: Any = None
    pending_labels: list = []
    replacement: dict = {}  # js.key(dropped label id) -> the next entry kept after it (C.25)
    for e in path:
        if get(e, "type") == "label":
            pending_labels.append(get(e, "id"))
            continue
        for label_id in pending_labels:
            replacement[js.key(label_id)] = get(e, "id")
        pending_labels = []
        copy = {**e, "parentId": parent} if isinstance(e, dict) else e
        if remaps and get(e, "type") == "compaction" and isinstance(e, dict):
            copy = _remap_first_kept(copy, replacement)
        kept.append(copy)
        parent = get(e, "id")
    # pi scans [header, ...copied] for the first conversation message (pi 0.82: an assistant one;
    # from 0.99 a user or an assistant one) and throws on a message entry without a message
    # object met before one.
    conversation = ("user", "assistant") if versions.since(session.pi_version, versions.FILE_ON_USER_MESSAGE) \
        else ("assistant",)
    for e in kept:
        if get(e, "type") == "message":
            try:
                if get(get(e, "message"), "role") in conversation:
                    break
            except TypeError as err:
                raise _fork_error(session, f"entry {js.to_string(get(e, 'id'))} has no message object ({err}); "
                                  "pi throws forking this path") from None
    ids = {js.key(get(e, "id")) for e in kept}
    last_id = get(kept[-1], "id") if kept else None
    parent = last_id if js.truthy(last_id) else None
    n = 0
    for k, (target_id, label) in session.labels.items():
        if k not in ids:
            continue
        n += 1
        new_id = f"{n:08x}"
        while js.key(new_id) in ids:
            n += 1
            new_id = f"{n:08x}"
        ids.add(js.key(new_id))
        stamp = session.label_timestamps.get(k, UNDEF)
        kept.append({k2: v for k2, v in (("type", "label"), ("id", new_id), ("parentId", parent),
                                          ("timestamp", stamp), ("targetId", target_id), ("label", label))
                     if v is not UNDEF})
        parent = new_id
    return kept, False


def _remap_first_kept(compaction: dict, replacement: dict) -> dict:
    """A copied compaction whose ``firstKeptEntryId`` named a dropped label keeps from the entry
    that followed the label (pi 0.85+); retain-none (its own id) stays as it is."""
    first = compaction.get("firstKeptEntryId", UNDEF)
    if js.strict_eq(first, compaction.get("id", UNDEF)):
        return compaction
    mapped = replacement.get(js.key(first), UNDEF)
    if mapped is None or mapped is UNDEF:
        return compaction
    return {**compaction, "firstKeptEntryId": mapped}


def plan_fork(session: Session, entry_id: str | None, position: str, *, new_id: str, now_iso: str,
              cwd: str | None = None, source_path: str | None = None) -> ForkPlan:
    """The new session: header as pi writes it (new id, ``parentSession`` = source) and entries."""
    entries, empty = entries_to_fork(session, entry_id, position)
    src = session.header or {}
    header: dict = {"type": "session", "version": 3, "id": new_id, "timestamp": now_iso,
                    "cwd": cwd if cwd is not None else (src.get("cwd") if isinstance(src.get("cwd"), str) else ""),
                    "parentSession": source_path or session.path}
    if session.reader == "harness" and isinstance(src.get("metadata"), dict):
        header["metadata"] = src["metadata"]
    name = f"{now_iso.replace(':', '-').replace('.', '-')}_{new_id}.jsonl"
    return ForkPlan(session, entry_id, position, header, entries, empty, name)


def check_fork_directory(directory: str) -> None:
    """Refuse a fork into ``directory`` before anything is asked or written: pisess never creates
    directories (a session directory is pi's to make), and one it cannot write to fails here,
    not after the question.  ``pisess fork`` and browse's ``f`` ask this one question."""
    from ..errors import PisessError

    if not os.path.isdir(directory):
        raise PisessError("not_found", f"session directory {directory} does not exist (pisess never creates "
                          "directories; run pi once in that project)", path=directory)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise PisessError("storage", f"session directory {directory} is not writable", path=directory)


def write_fork(plan: ForkPlan, directory: str) -> str:
    """Create ``directory/plan.file_name`` exclusively and atomically; return its path."""
    from ..reading.files import write_atomically

    return write_atomically(os.path.join(directory, plan.file_name), plan.lines(), prefix=".pisess-fork-")
