"""Tool results the provider gets without their call (pi #4570, #11227).

pi-ai's ``transformMessages`` (pi 1.x) pairs each assistant's tool calls with the tool results
after it: a call without a result gets a synthetic "No result provided" result, but a result
whose call is not the last assistant's (no user message between) is passed on as it is, and the
provider refuses the request, every request from then on.  Older pi wrote such results as the
child of a compaction that ran while the tool did (the compaction summarized the call away);
other writers and hand edits leave them too.

``results_without_call`` is that pairing on a context's messages (``analyses.unpaired`` finds
such results in a session, on every path).
"""

from __future__ import annotations

from .. import js, versions
from ..js import get
from ..reading.compact import DROPPED  # (the index scan notes calls by the same rule: one owner, on the floor below)

# roles convertToLlm turns into user messages (C.4): each ends the tool flow, as a user message does
AS_USER = frozenset(("bashExecution", "custom", "branchSummary", "compactionSummary"))
SKIPPED = DROPPED  # transformMessages drops these assistant messages, their calls with them


def results_without_call(messages: list, pi_version: str = versions.CURRENT) -> list[int]:
    """The indexes in ``messages`` (a context's, before ``convertToLlm``) of the tool results whose
    call the provider does not get before them: ``transformMessages``' pairing."""
    system_kept = versions.since(pi_version, versions.SYSTEM_MESSAGES)
    pending: set = set()
    out = []
    for i, m in enumerate(messages):
        role = get(m, "role")
        if role == "bashExecution" and js.truthy(get(m, "excludeFromContext")):
            continue
        if role in AS_USER or role == "user":
            pending = set()
        elif role == "assistant":
            pending = set()
            if get(m, "stopReason") in SKIPPED:
                continue
            content = get(m, "content")
            if isinstance(content, list):
                pending = {js.key(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "toolCall"}
        elif role == "toolResult":
            if js.key(get(m, "toolCallId")) not in pending:
                out.append(i)
        elif role == "system" and not system_kept:
            continue  # (0.82 drops it; 1.x holds it back until the results: transparent either way)
    return out
