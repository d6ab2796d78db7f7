"""The views of ``pisess help``: the list of topics, and one topic (Markdown)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class _Listed(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def command(self) -> bool: ...


def topic_list(topics: Sequence[_Listed]) -> list[Any]:
    """Two groups, the commands' topics and the subjects, a name and its one line each."""
    from rich.table import Table
    from rich.text import Text

    out: list[Any] = []
    width = max((len(t.name) for t in topics), default=0)
    for heading, group in (("Commands", [t for t in topics if t.command]),
                           ("Subjects", [t for t in topics if not t.command])):
        if not group:
            continue
        out.append(Text(heading, "bold"))
        table = Table.grid(padding=(0, 2))
        table.add_column(min_width=width + 2, no_wrap=True)
        table.add_column()
        for t in group:
            table.add_row(Text("  " + t.name, "cyan"), Text(t.summary))
        out.append(table)
        out.append(Text(""))
    out.append(Text("pisess help TOPIC shows one; pisess COMMAND --help lists a command's options.", "dim"))
    return out


def topic_view(markdown: str, *, rendered: bool) -> list[Any]:
    """The topic rendered (a terminal), or its Markdown as it is, line by line (a pipe, a file)."""
    if not rendered:
        return markdown.rstrip("\n").split("\n")
    return [_markdown()(markdown, code_theme="ansi_dark", hyperlinks=False)]


def _markdown() -> type:
    """Rich's ``Markdown``, but a block without a language (a command's output, as the examples
    show it) keeps its lines whole, cut at the width with ``…`` as a terminal shows a view laid out
    wider than it: wrapped, a tree's rows would fall apart.  Commands and code (``sh``,
    ``python``) still wrap, so that all of a command can be read and copied."""
    from rich.markdown import CodeBlock, Markdown
    from rich.padding import Padding
    from rich.text import Text

    class OutputBlock(CodeBlock):
        def __rich_console__(self, console, options):
            if self.lexer_name not in ("text", ""):
                yield from super().__rich_console__(console, options)
                return
            lines = str(self.text).rstrip().split("\n")
            yield Padding(Text("\n".join(lines), no_wrap=True, overflow="ellipsis"), (1, 1))

    class TopicMarkdown(Markdown):
        elements = {**Markdown.elements, "fence": OutputBlock, "code_block": OutputBlock}

    return TopicMarkdown
