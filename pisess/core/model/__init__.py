"""The model: what a session means (paths and leaves, the context pi sends, the tree, fork
planning, the message model every view draws, the two-writer rule, following appends)."""
