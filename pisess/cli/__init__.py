"""The command line, on top of the core, in floors (each imports only its own and those under it,
lazily too; ``tests/test_import_graph.py`` checks):

- ``output``: the one printer and its console;
- ``views``: what each command shows (they return what to print, never print);
- ``common`` and ``sets``: what commands share (options, locating sessions, JSON, the error handler);
- ``commands``: one module per command, none importing another;
- ``app``: the Typer app that runs them (``completions``: the shell scripts).
"""
