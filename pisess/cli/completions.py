"""Shell completion scripts generated from the app (``python -m pisess.cli.completions DIR``).

The scripts only ask ``pisess`` what to complete (Typer's protocol), so subcommands, options and
session ids stay current; ``tests/test_completions.py`` fails when the committed copies drift.
"""

from __future__ import annotations

import os
import sys

SHELLS = {"bash": "pisess.bash", "zsh": "_pisess", "fish": "pisess.fish"}


def script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="pisess", complete_var="_PISESS_COMPLETE", shell=shell).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else "completions"
    for shell, name in SHELLS.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
            fh.write(script(shell))


if __name__ == "__main__":
    main()
