"""The markers tree and path put on an entry (● ○ ◐ ◀ ◆ ⚠ ✎ ∅ ⇄): symbols and words that
say it without colour."""

from __future__ import annotations

from rich.text import Text

ACTIVE, OTHER, COMPACTED = "\u25cf", "\u25cb", "\u25d0"
LEAF_MARK, CHECKPOINT_MARK, WARN = "\u25c0 leaf", "\u25c6", "\u26a0"
EDITED_MARK, HIDDEN_MARK = "\u270e edited", "\u2205 hidden"  # targets of the context's edits (pi 1.x)
WRITERS_MARK = "\u21c4"  # two processes appended in turn (concurrent_writers)


def edit_marks(tail: Text, flags) -> None:
    if "edited" in flags:
        tail.append(f"  {EDITED_MARK}", "bold yellow")
    if "hidden" in flags:
        tail.append(f"  {HIDDEN_MARK}", "bold yellow")
