"""What every screen of browse is handed: where the sessions are and how to read them (the
command's options, resolved), instead of each screen reaching into the app."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    reader: str  # auto, cli or harness (pisess's --reader)
    pi_version: str  # the pi whose rules are applied (--pi-version)
    root: str  # the sessions root
    cwd: str  # the project whose sessions are listed
    sessions_dir: str | None = None  # --sessions-dir as given: the commands browse copies repeat it
