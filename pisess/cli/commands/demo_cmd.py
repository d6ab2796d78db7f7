"""pisess demo: the example sessions shipped in the package, shown with every view."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


def demo_views(root: str, tmp: str, *, width: int) -> list:
    """Every view on the sessions under ``root``, each after the command that shows it."""
    import pathlib

    from rich.rule import Rule
    from rich.text import Text

    from pisess.cli.common import Where
    from pisess.cli.views.context import context_view
    from pisess.cli.views.listing import ls_view
    from pisess.cli.views.path import path_view
    from pisess.cli.views.tree import tree_view
    from pisess.cli.views.validate import validate_text
    from pisess.core.analyses.validate import validate_file
    from pisess.core.ids import unique_prefix_width
    from pisess.core.listing.repo import list_sessions
    from pisess.core.listing.summary import summarize_file
    from pisess.core.model.context import build_context
    from pisess.core.model.tree import build_tree
    from pisess.core.reading.session import open_session

    out: list = []

    def step(cmd: str) -> None:
        out.append(Text(""))
        out.append(Rule(Text("$ " + cmd, "bold"), align="left", style="cyan"))

    step(f"pisess ls --all --long --sessions-dir {root}")
    listing = list_sessions(root, None)
    out.extend(ls_view(listing, Where(root, tmp), all_projects=True,
                              details={s.path: summarize_file(s.path) for s in listing.sessions}, width=width))
    w = unique_prefix_width(info.id for info in listing.sessions)  # as ls shows them: each names one session
    for info in listing.sessions:
        s = open_session(info.path, "auto")
        view = build_tree(s)
        step(f"pisess tree {info.id[:w]}")
        out.extend(tree_view(view, view.complete_entries(), width=width))
    step(f"pisess context {listing.sessions[-1].id[:w]}")
    out.extend(context_view(build_context(open_session(listing.sessions[-1].path, "auto")), max_lines=4))
    step(f"pisess path {listing.sessions[0].id[:w]}")
    out.extend(path_view(build_context(open_session(listing.sessions[0].path, "auto")), width=width))
    step(f"pisess validate {root}")
    reports = [validate_file(p) for p in sorted(str(x) for x in pathlib.Path(root).rglob("*.jsonl"))]
    out.extend(validate_text(reports, [], False, quiet=False))
    return out


@handles_errors
def demo(color: common.ColorOpt = "auto", json_out: common.JsonOpt = False,
         keep: bool = typer.Option(False, "--keep", help="Keep the copied sessions (the root is printed) to try "
                                   "every command on them with --sessions-dir.")) -> None:
    """Copy the bundled example sessions to a temporary root and run ls, tree, context, path and validate on them.

    Example: pisess demo --keep
    """
    import os
    import shutil
    import tempfile
    from importlib import resources

    from rich.text import Text

    from pisess.cli.output import Printer

    printer = Printer(color)
    src = resources.files("pisess") / "examples" / "sessions"
    tmp = tempfile.mkdtemp(prefix="pisess-demo-")
    try:
        root = os.path.join(tmp, "sessions")
        with resources.as_file(src) as src_dir:
            shutil.copytree(src_dir, root)
        projects = sorted(p for p in os.listdir(root) if p.startswith("--"))
        if json_out:  # (paths relative to the root; kept only with --keep)
            from pisess.core.analyses.examples import examples_report

            common.emit_json(examples_report(root, keep=keep), version=2)
            return
        items = demo_views(root, tmp, width=printer.width)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if keep:
        import shlex

        items += [Text(""), Text(f"the example sessions are kept in {root} (projects: {', '.join(projects)}); "
                                 f"try: pisess ls --all --sessions-dir {shlex.quote(root)}", "dim")]
    else:
        items += [Text(""), Text(f"(the example sessions were copied to a temporary root, now removed; projects: "
                                 f"{', '.join(projects)}; --keep keeps them)", "dim")]
    printer.show(items)
