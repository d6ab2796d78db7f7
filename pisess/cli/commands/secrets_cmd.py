"""pisess secrets: credentials in session files (every entry, every branch), for people and CI."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors

FORMATS = ("text", "json", "github", "allowlist")


@handles_errors
def secrets(
    paths: list[str] | None = typer.Argument(None, metavar="[PATH]...",
                                                help="Files or directories (searched for *.jsonl); default: the "
                                                     "sessions of the current project."),
    all_projects: bool = typer.Option(False, "--all", "-a", help="Scan every project under the sessions root."),
    format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT", autocompletion=common.complete_from(*FORMATS),
                                         help="text, json, github (default when GITHUB_ACTIONS=true) or allowlist "
                                              "(lines to append to .pisess-secrets-allow)."),
    allowlist: str | None = typer.Option(None, "--allowlist", metavar="FILE",
                                            help="Fingerprints of accepted findings "
                                                 "(default: ./.pisess-secrets-allow)."),
    json_out: common.JsonOpt = False,
    sessions_dir: common.SessionsDirOpt = None,
    cwd: common.CwdOpt = None,
    color: common.ColorOpt = "auto",
) -> None:
    """Find credentials in session files: API keys and tokens, private keys, JWTs, passwords in URLs
    and .env lines, high-entropy values assigned to secret-named keys.

    One finding per line: FILE:LINE: KIND PREVIEW (entry, role, field, fingerprint); the secret itself
    is never printed.  Findings listed in the allowlist are accepted.
    Exit 0 when nothing is found, 1 when something is, 2 when a path cannot be read.

    Example: pisess secrets ~/.pi/agent/sessions --format github
    """
    from pisess.core.analyses.secrets import default_target, read_allowlist, scan_paths
    from pisess.core.errors import PisessError

    fmt = common.output_format(format, json_out, FORMATS)
    if paths and all_projects:
        raise PisessError("usage", "--all scans the whole sessions root; give either PATHs or --all")
    allowed, allow_path = read_allowlist(allowlist)
    targets = list(paths or [])
    if not targets:
        w = common.where(sessions_dir, cwd)
        common.check_root(w, sessions_dir)
        targets = [default_target(w.root, w.cwd, all_projects)]
    scan = scan_paths(targets)
    from pisess.cli import sets

    sets.check_empty(scan.empty, bool(scan.files) or bool(scan.unreadable))
    # the text and github views list them with the findings; the JSON document in "unreadable"
    common.note_unreadable(scan.unreadable, shown=fmt in ("text", "github"))
    from pisess.cli.output import show, talk
    from pisess.cli.views.secrets import secrets_report

    if fmt == "json":
        common.emit_json(scan.to_json(allowed, allow_path), version=2)
    else:
        scope = [*(paths or []), *(["--all"] if all_projects else [])]
        if not paths:
            scope += [*(["--sessions-dir", sessions_dir] if sessions_dir else []), *(["--cwd", cwd] if cwd else [])]
        if allowlist:
            scope += ["--allowlist", allowlist]
        out, hint = secrets_report(fmt, scan, allowed, allow_path, tuple(scope),
                                   allowlist or ".pisess-secrets-allow")
        show(out, color)
        talk(hint, color)
    if scan.unaccepted(allowed):
        raise typer.Exit(common.EXIT_FINDINGS)
