"""Sessions nested below a session's folder (issue 34): subagent runs extensions write as whole
pi sessions under ``<session stem>/…/session.jsonl``."""

from __future__ import annotations

import os

from .paths import iter_jsonl
from .repo import discovery_header


def nested_sessions(path: str) -> list[str]:
    """The ``*.jsonl`` files below the folder named as the session file without ``.jsonl``
    (``<session stem>/…/session.jsonl``: subagent runs extensions write as whole pi sessions),
    sorted.  pi's ``/resume`` lists none of them (it reads a project's folder, not below); those
    whose first value is no session header are left out, as pi would."""
    stem = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
    if not os.path.isdir(stem):
        return []
    found = [f for f, err in iter_jsonl([stem]) if err is None]
    return [f for f in found if os.path.isfile(f) and discovery_header(f) is not None]


def with_nested_counts(details: dict[str, dict]) -> dict[str, dict]:
    """``ls --long``'s details (``summary.details_of``) with each session's ``nestedSessionCount``
    (beside the file, not in it: looked at each time, not kept with the file's stat)."""
    return {p: {**d, "nestedSessionCount": len(nested_sessions(p))} if "error" not in d else d
            for p, d in details.items()}
