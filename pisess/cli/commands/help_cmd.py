"""pisess help [TOPIC]: the reference, one topic per subject, shipped in the package.

Each topic is a Markdown file ``pisess/help/NAME.md`` (package data, like the examples); its first
line is ``# TITLE``, the line ``pisess help`` lists it by.  A topic about one command is titled
``# pisess COMMAND: what it does`` and listed among the commands; the others are subjects.  Adding
a topic is adding a file: nothing here lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

import typer

from pisess.cli import common
from pisess.cli.common import handles_errors


@dataclass(frozen=True)
class Topic:
    name: str  # the file's name without .md: what `pisess help NAME` takes
    title: str  # its first line without the '# '
    text: str  # the whole file, Markdown

    @property
    def command(self) -> bool:
        """A topic about one command (``# pisess NAME: ...``)."""
        return self.title.startswith(f"pisess {self.name}:")

    @property
    def summary(self) -> str:
        """The title as the list shows it: without ``pisess NAME:`` for a command's topic."""
        return self.title.removeprefix(f"pisess {self.name}:").strip() if self.command else self.title

    def to_json(self, *, text: bool) -> dict:
        doc = {"name": self.name, "title": self.title, "command": self.command}
        return {**doc, "text": self.text} if text else doc


def topics() -> dict[str, Topic]:
    """Every topic shipped, by name: the commands' first, then the subjects, each by name."""
    from importlib import resources

    found = []
    for f in (resources.files("pisess") / "help").iterdir():
        if f.name.endswith(".md") and f.is_file():
            text = f.read_text(encoding="utf-8")
            first = text.split("\n", 1)[0]
            found.append(Topic(f.name[:-3], first.removeprefix("# ").strip(), text))
    return {t.name: t for t in sorted(found, key=lambda t: (not t.command, t.name))}


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
            common.emit_json({"topics": [t.to_json(text=False) for t in known.values()]}, version=1)
            return
        Printer(color).show(view.topic_list(list(known.values())))
        return
    name = topic.strip().lower()
    if name not in known:
        raise PisessError("usage", f"no help topic {topic!r}; the topics are: {', '.join(known)}")
    chosen = known[name]
    if json_out:
        common.emit_json({"topic": chosen.to_json(text=True)}, version=1)
        return
    printer = Printer(color)
    printer.show(view.topic_view(chosen.text, rendered=printer.console.is_terminal or color == "always"), pager=pager)
