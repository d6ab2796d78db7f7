"""v1 → v2 → v3 migration, in memory (pi's ``migrateToCurrentVersion``; pi rewrites the file,
pisess never does).

v1 files are one linear chain without ids: every entry gets an id and the previous entry as its
parent, and a compaction's ``firstKeptEntryIndex`` becomes ``firstKeptEntryId``.  v2 renamed the
``hookMessage`` role to ``custom``.  Ids that pi draws at random are deterministic here:
``f"{n:08x}"`` for the n-th migrated entry, so an id one command prints works in the next.
"""

from __future__ import annotations

import copy
from typing import Any

from .. import js
from ..js import UNDEF, JSArray

CURRENT_VERSION = 3


def raw_version(header: dict) -> Any:
    """``header.version ?? 1``"""
    v = header.get("version", UNDEF)
    return 1 if v is None or v is UNDEF else v


def needs_migration(header: dict) -> bool:
    return not js.compare(raw_version(header), CURRENT_VERSION, ">=")


def migrate_in_memory(values: list) -> list:
    """Migrate the kept values of a file (header first).  Raises ``TypeError`` where pi does."""
    values = copy.deepcopy(values)  # the parsed lines stay as the file has them
    version = raw_version(values[0])
    if js.compare(version, 2, "<"):
        values = _v1_to_v2(values)
    if js.compare(version, 3, "<"):
        _v2_to_v3(values)
    return values


def _v1_to_v2(values: list) -> list:
    out: list[Any] = [JSArray(v) if isinstance(v, list) and not isinstance(v, JSArray) else v for v in values]
    prev: Any = None
    n = 0
    for v in out:
        if js.get(v, "type") == "session":
            v["version"] = 2
            continue
        if not isinstance(v, (dict, JSArray)):
            raise TypeError(f"Cannot create property 'id' on {type(v).__name__} '{js.to_string(v)}'")
        n += 1
        new_id = f"{n:08x}"
        if isinstance(v, JSArray):
            v.props["id"] = new_id
            v.props["parentId"] = prev
            prev = new_id
            continue
        v["id"] = new_id
        v["parentId"] = prev
        prev = new_id
        if v.get("type") == "compaction":
            idx = v.get("firstKeptEntryIndex", UNDEF)
            if isinstance(idx, (int, float)) and not isinstance(idx, bool):
                target = out[int(idx)] if idx == int(idx) and 0 <= idx < len(out) else UNDEF
                if js.truthy(target) and js.get(target, "type") != "session":
                    tid = js.get(target, "id")
                    if tid is not UNDEF:
                        v["firstKeptEntryId"] = tid
                del v["firstKeptEntryIndex"]
    return out


def _v2_to_v3(values: list) -> None:
    for v in values:
        if js.get(v, "type") == "session":
            v["version"] = 3
            continue
        if js.get(v, "type") == "message":
            msg = v.get("message", UNDEF) if isinstance(v, dict) else UNDEF
            if js.truthy(msg) and js.get(msg, "role") == "hookMessage":
                msg["role"] = "custom"
