"""One module per command: argument parsing, one call into the core, one view, one exit code."""
