"""What every command shares at its edge, without Typer: the exit codes, the error document's
version, and talk on stderr.  ``common`` (the Typer commands) and ``lean_search`` (``search``
answered without Typer) both stand on it, so the two paths cannot tell a user different things."""

from __future__ import annotations

import sys

from pisess.core.errors import PisessError

# Each --json document has its own "version", given where the command prints it (``emit_json(doc,
# version=N)``) and raised when the document's keys change; ``pisess help json`` lists them all.
# The error document ({version, error}) is the same for every command.
ERROR_VERSION = 1
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_BY_CODE = {"usage": EXIT_USAGE, "storage": EXIT_USAGE}


def exit_code_for(err: PisessError) -> int:
    """One table for every command: 2 for usage errors and input that cannot be read (a missing
    file, permissions, I/O; also an entry id ``--leaf`` names none of), 1 for findings, no hits,
    not found (a session id; the entry fork is given, as pi says) and ambiguity (an id prefix)."""
    return EXIT_USAGE if err.unreadable else EXIT_BY_CODE.get(err.code, EXIT_FINDINGS)


def sdk_rules_note(reader: str, version: str) -> str | None:
    """What is said once on stderr when ``--reader harness`` meets another pi's rules asked for
    (``--pi-version`` or its variable, parsed): the SDK reader exists only with the oldest pi's,
    so the read follows those.  ``None`` when there is nothing to say."""
    from pisess.core import versions

    if reader.lower() != "harness" or version == versions.PI_0_82:
        return None
    return (f"pisess: note: --reader harness reads with pi {versions.PI_0_82}'s rules, not {version}'s "
            "(pi's SDK reader exists only there)")


def say(message: str) -> None:
    """Talk goes to stderr, escaped so file content cannot drive the terminal."""
    from pisess.cli.views.text import escape_controls

    sys.stderr.write(escape_controls(message, keep_newlines=True) + "\n")
