"""Reading: a session file's bytes to a ``Session`` (pi's line rules, the line scan, the compact
index and its cache, v1/v2 migration, the entry stores)."""
