"""Where sessions live: the sessions root, project directories, listings and the sets of sessions
that search, stats and du read, with each file's summary."""
