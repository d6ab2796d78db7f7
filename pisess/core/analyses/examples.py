"""What ``pisess demo --json`` reports of a root of example sessions: each session as ``ls`` lists
it, its tree's size and leaf, and what ``validate`` finds.  Plain data, as every analysis."""

from __future__ import annotations

import os
import pathlib


def examples_report(root: str, *, keep: bool = False) -> dict:
    """The sessions under ``root`` (paths relative to it), the project directories, and the root
    itself when it is kept (``demo --keep``), else ``None``: a temporary root is gone when the
    report is read."""
    from ..listing.repo import list_sessions
    from ..model.tree import build_tree
    from ..reading.session import open_session
    from .validate import validate_file

    sessions = []
    for info in list_sessions(root, None).sessions:
        s = open_session(info.path, "auto")
        view = build_tree(s)
        report = validate_file(info.path)
        sessions.append({"id": info.id, "cwd": info.cwd, "path": str(pathlib.Path(info.path).relative_to(root)),
                         "reader": s.reader, "piVersion": s.pi_version, "entryCount": len(s.entries),
                         "branchPointCount": view.branch_points, "leafId": view.leaf_id,
                         "validate": {"ok": report.ok(), "findings": [f.to_json() for f in report.findings]}})
    projects = sorted(p for p in os.listdir(root) if p.startswith("--"))
    return {"sessions": sessions, "projects": projects, "root": root if keep else None}
