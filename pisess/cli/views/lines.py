"""Lines a view lays out without Rich: a text, a line of styled pieces, a rule with a title.

A long view of simple rows (``pisess context`` of 15,000 messages) spent most of its time in Rich's
layout: every message a ``Rule`` and a few ``Text`` objects, each wrapped, cut into segments, split
into lines and trimmed, to find that almost every line fits the width as it is.  Here a view hands
the printer the parts themselves (``Para``, ``Line``, ``Heading``: plain tuples of strings) in one
``Lines`` item; the printer asks it for its lines (``print_lines``) and writes them.  A part whose
line fits the width and holds only characters one cell wide is written as Rich would write it, each
styled piece between the escape codes Rich writes for its style (taken from the printer's console,
so colour, ``NO_COLOR`` and a pipe come out as Rich's); anything else (a line to wrap, a wide
character, a tab) is handed to Rich, part by part.  ``to_rich`` makes the same parts Rich's objects
(for a screen that lays out renderables itself, the browser's), so the two agree by construction
and the tests compare them byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple


class Para(NamedTuple):
    """A text in one style, lines split at ``\\n`` and wrapped at the width: ``Text(text, style)``."""

    text: str
    style: str = ""


class Line(NamedTuple):
    """One line of pieces ``(text, style)``: ``Text()`` with each piece appended."""

    pieces: tuple[tuple[str, str], ...]


class Heading(NamedTuple):
    """A rule with a title of pieces at its left: ``Rule(Text of the pieces, align="left", style=style)``."""

    pieces: tuple[tuple[str, str], ...]
    style: str = "dim"


Part = Para | Line | Heading


def _text_of(pieces: Iterable[tuple[str, str]]) -> Any:
    from rich.text import Text

    t = Text()
    for text, style in pieces:
        t.append(text, style)
    return t


def to_rich(part: Part) -> Any:
    """The Rich object a part stands for (what the printer draws when it cannot write the part itself)."""
    from rich.text import Text

    if isinstance(part, Para):
        return Text(part.text, style=part.style)
    if isinstance(part, Line):
        return _text_of(part.pieces)
    from rich.rule import Rule

    return Rule(_text_of(part.pieces), align="left", style=part.style)


_RULE = "\u2500"
_ELLIPSIS = "\u2026"
_ONE_CELL = set(map(chr, range(0x20, 0x7F)))  # characters known to be one cell wide (grows as met)
_ASCII_ODD = re.compile("[^\x20-\x7e]")  # in ASCII, what is not one cell: the control characters
_NOT_ONE = {"\u200d", "\ufe0f"}  # a joiner and a variation selector change their neighbour's width


def _one_cell_each(text: str) -> bool:
    """Every character of ``text`` one cell wide on its own and none that joins others: its width is
    its length, and a cut at a width is a cut at that index (as Rich measures and cuts it)."""
    if text.isascii() and _ASCII_ODD.search(text) is None:
        return True
    chars = set(text)
    if chars <= _ONE_CELL:
        return True
    from rich.cells import get_character_cell_size

    for c in chars - _ONE_CELL:
        if c in _NOT_ONE or get_character_cell_size(c) != 1:
            return False
        _ONE_CELL.add(c)
    return True


class Lines:
    """A run of parts the printer writes line by line (``print_lines``); ``parts`` may be a
    generator, read once as the lines are written."""

    def __init__(self, parts: Iterable[Part]) -> None:
        self.parts = parts

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:  # (Rich draws it whole)
        for part in self.parts:
            yield to_rich(part)

    def print_lines(self, printer: Any) -> Iterator[str]:
        """Each part's lines as the printer writes them (``printer``: ``pisess.cli.output.Printer``)."""
        console = printer.console
        if console.options.ascii_only or console.legacy_windows:
            for part in self.parts:  # (a rule of "-", Windows' own calls: Rich knows them)
                yield printer.rendered(to_rich(part))
            return
        width, rule_width = printer.width, printer.rule_width
        codes: dict[str, tuple[str, str]] = {}

        def styled(text: str, style: str) -> str:
            if not style:
                return text
            pair = codes.get(style)
            if pair is None:
                pair = codes[style] = printer.style_codes(style)
            return pair[0] + text + pair[1]

        for part in self.parts:
            if isinstance(part, Para):
                text, style = part.text, part.style
                if "\t" in text:
                    yield printer.rendered(to_rich(part))
                    continue
                # Rich splits a text at its line breaks and lays out each line on its own
                for line in text.split("\n") if "\n" in text else (text,):
                    if not _one_cell_each(line):
                        yield printer.rendered(to_rich(Para(line, style)))
                        continue
                    for row in _wrapped(line, width) if len(line) > width else (line,):
                        row = row.rstrip(" ")
                        yield styled(row, style) + "\n" if row else "\n"
            elif isinstance(part, Line):
                got = _line(part.pieces, width, styled)
                yield got if got is not None else printer.rendered(to_rich(part))
            else:
                got = _rule(part, rule_width, styled)
                yield got if got is not None else printer.rendered(to_rich(part))


_WORD = re.compile(r"\s*\S+\s*")  # Rich's word: its spaces before and after it
_SPACE_AT_END = re.compile(r"\s+$")


def _wrapped(line: str, width: int) -> list[str]:
    """A line of one-cell characters longer than ``width`` in the rows Rich's word wrap makes of
    it (``rich._wrap.divide_line`` and ``Text.wrap`` with ``fold``, the default): a word goes to
    the next row when it does not fit, a word longer than a row is cut into rows, a row loses the
    spaces past the width."""
    breaks: list[int] = []
    at = 0  # cells used on the row
    for m in _WORD.finditer(line):
        start, word = m.start(), m.group()
        size = len(word.rstrip())
        if width - at >= size:
            at += len(word)
        elif size > width:  # folded into rows of the width
            chunks = [word[i:i + width] for i in range(0, len(word), width)]
            for chunk in chunks[:-1]:
                if start:
                    breaks.append(start)
                start += len(chunk)
            if start:
                breaks.append(start)
            at = len(chunks[-1])
        elif at and start:
            breaks.append(start)
            at = len(word)
    rows = []
    for a, b in zip([0, *breaks], [*breaks, len(line)]):
        row = line[a:b]
        if len(row) > width:
            end = _SPACE_AT_END.search(row)
            if end is not None:
                row = row[:len(row) - min(len(end.group()), len(row) - width)]
            row = row[:width]
        rows.append(row)
    return rows


def _line(pieces: tuple[tuple[str, str], ...], width: int, styled: Any) -> str | None:
    """A line of pieces that fits ``width``, its spaces at the end dropped (as the printer trims
    Rich's lines); ``None`` when Rich must lay it out."""
    plain = "".join(p[0] for p in pieces)
    if len(plain) > width or "\n" in plain or "\t" in plain or not _one_cell_each(plain):
        return None
    return _trimmed(pieces, styled)


def _trimmed(pieces: Iterable[tuple[str, str]], styled: Any) -> str:
    """The pieces written, the ones that hold only spaces at the end left out and the last cut of its
    spaces: what the printer's ``_Trimmed`` does to Rich's segments."""
    kept = [(t, s) for t, s in pieces if t]
    while kept and not kept[-1][0].rstrip(" "):
        kept.pop()
    if kept:
        kept[-1] = (kept[-1][0].rstrip(" "), kept[-1][1])
    return "".join(styled(t, s) for t, s in kept) + "\n"


def _rule(part: Heading, width: int, styled: Any) -> str | None:
    """Rich's left-aligned ``Rule`` with a title: the title cut with an ellipsis to ``width - 2``,
    a space, then the rule's character to the width.  ``None`` when Rich must draw it."""
    plain = "".join(p[0] for p in part.pieces)
    if not plain or width < 4 or "\n" in plain or "\t" in plain or not _one_cell_each(plain):
        return None
    room = width - 2
    pieces: list[tuple[str, str]] = [p for p in part.pieces if p[0]]
    if len(plain) > room:
        # Rich's truncate: the text cut to room - 1 and an ellipsis, in the style of the piece
        # that held the character it replaces
        cut: list[tuple[str, str]] = []
        left = room
        for text, style in pieces:
            if left <= 0:
                break
            cut.append((text[:left], style))
            left -= len(text)
        last_text, last_style = cut[-1]
        cut[-1] = (last_text[:-1] + _ELLIPSIS, last_style)
        pieces = cut
        plain_len = room
    else:
        plain_len = len(plain)
    pieces.append((" ", ""))
    pieces.append((_RULE * (width - plain_len - 1), part.style))
    return _trimmed(pieces, styled)
