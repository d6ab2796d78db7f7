"""pisess secrets: credentials in session files (every entry, every branch), for people and CI."""

from __future__ import annotations

import os

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors

FORMATS = ("text", "json", "github", "allowlist")


def read_allowlist(explicit: str | None) -> tuple[frozenset, str | None]:
    """``--allowlist FILE`` (must exist), else ``.pisess-secrets-allow`` in the current directory."""
    from pisess.core.errors import PisessError
    from pisess.core.secrets import ALLOWLIST_NAME, parse_allowlist

    path = explicit or ALLOWLIST_NAME
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        if explicit:
            raise PisessError("usage", f"allowlist {explicit} does not exist", path=explicit) from None
        return frozenset(), None
    except OSError as e:
        raise PisessError("storage", f"cannot read allowlist {path}: {e.strerror or e}", path=path) from None
    return parse_allowlist(text, path), path


@handles_errors
def secrets(
    paths: list[str] | None = typer.Argument(None, metavar="[PATH]...",
                                                help="Files or directories (searched for *.jsonl); default: the "
                                                     "sessions of the current project."),
    all_projects: bool = typer.Option(False, "--all", "-a", help="Scan every project under the sessions root."),
    format: str | None = typer.Option(None, "--format", "-f", metavar="FORMAT",
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
    from pisess.core.errors import PisessError
    from pisess.core.repo import encode_cwd, iter_jsonl
    from pisess.core.secrets import scan_file

    fmt = (format or ("json" if json_out else ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")))
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise PisessError("usage", f"--format must be text, json, github or allowlist, not {fmt!r}")
    if paths and all_projects:
        raise PisessError("usage", "--all scans the whole sessions root; give either PATHs or --all")
    allowed, allow_path = read_allowlist(allowlist)
    targets = list(paths or [])
    if not targets:
        w = common.where(sessions_dir, cwd)
        target = w.root if all_projects else os.path.join(w.root, encode_cwd(w.cwd))
        if not os.path.isdir(target):
            raise PisessError("not_found", f"no sessions at {target} (pass files, --all, --cwd or --sessions-dir)",
                              path=target)
        targets = [target]
    files, findings, unreadable = [], [], []
    for path, err in iter_jsonl(targets):
        if err is None:
            try:
                findings.extend(scan_file(path))
                files.append(path)
                continue
            except PisessError as e:
                err = e
        unreadable.append(err)
    from pisess.cli import render_share
    from pisess.cli.output import show, talk

    if fmt == "json":
        common.emit_json(render_share.secrets_json(files, findings, allowed, unreadable, allow_path))
    else:
        out, hint = render_share.secrets_report(fmt, files, findings, allowed, unreadable, allow_path)
        show(out, color)
        talk(hint, color)
    if unreadable:
        if fmt == "json":  # the views list them; the document alone would leave the terminal silent
            for e in unreadable:
                common.say(f"pisess: {e.located()}")
        raise typer.Exit(common.EXIT_USAGE)
    if any(f.fingerprint not in allowed for f in findings):
        raise typer.Exit(common.EXIT_FINDINGS)
