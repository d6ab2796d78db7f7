"""The help topics shipped in the package, as data (``pisess help`` shows them).

Each topic is a Markdown file ``pisess/help/NAME.md`` (package data, like the examples); its first
line is ``# TITLE``, the line ``pisess help`` lists it by.  A topic about one command is titled
``# pisess COMMAND: what it does`` and listed among the commands; the others are subjects.  Adding
a topic is adding a file: nothing here lists them.
"""

from __future__ import annotations

from dataclasses import dataclass


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
            text = f.read_text(encoding="utf-8").replace("@PI_PACKAGE@", _pi_package())
            first = text.split("\n", 1)[0]
            found.append(Topic(f.name[:-3], first.removeprefix("# ").strip(), text))
    return {t.name: t for t in sorted(found, key=lambda t: (not t.command, t.name))}


def _pi_package() -> str:
    """Where the pi package of this installation is (``pisess help pi`` names it), quoted for a shell."""
    import shlex
    from importlib import resources

    return shlex.quote(str(resources.files("pisess") / "pi_package"))


def topics_json(known: dict[str, Topic]) -> dict:
    """``pisess help --json``: every topic, without its text."""
    return {"topics": [t.to_json(text=False) for t in known.values()]}


def topic_json(topic: Topic) -> dict:
    """``pisess help TOPIC --json``: the topic with its text (Markdown)."""
    return {"topic": topic.to_json(text=True)}
