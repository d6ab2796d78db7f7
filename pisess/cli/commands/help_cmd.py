"""pisess help [TOPIC]: the reference, one topic per subject, shipped in the package
(``pisess.cli.topics`` reads them)."""

from __future__ import annotations

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors
from pisess.cli.topics import topic_json, topics, topics_json


def complete_topic(incomplete: str) -> list[str]:
    """Tab completion: the topics' names."""
    try:
        return [name for name in topics() if name.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


@handles_errors
def help(
    topic: str | None = typer.Argument(None, metavar="[TOPIC]", show_default=False, autocompletion=complete_topic,
                                       help="A topic (pisess help lists them); none: the list."),
    color: common.ColorOpt = "auto",
    pager: bool = typer.Option(True, "--pager/--no-pager", help="Page long output when stdout is a terminal."),
    json_out: common.JsonOpt = False,
) -> None:
    """Show a help topic: the reference for a command (pisess help watch) or a subject (json, cache,
    exit-codes, readers, versions, ...); without TOPIC, list the topics.

    On a terminal the topic is rendered and paged; piped, it is printed as Markdown.

    Example: pisess help cache
    """
    from pisess.cli.output import Printer
    from pisess.cli.views import help as view
    from pisess.core.errors import PisessError

    known = topics()
    if topic is None:
        if json_out:
            common.emit_json(topics_json(known), version=1)
            return
        Printer(color).show(view.topic_list(list(known.values())))
        return
    name = topic.strip().lower()
    if name not in known:
        raise PisessError("usage", f"no help topic {topic!r}; the topics are: {', '.join(known)}")
    chosen = known[name]
    if json_out:
        common.emit_json(topic_json(chosen), version=1)
        return
    printer = Printer(color)
    printer.show(view.topic_view(chosen.text, rendered=printer.console.is_terminal or color == "always"), pager=pager)
