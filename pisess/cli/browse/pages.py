"""The pages of browse that are not lists: a scrolling page of renderables (the context, the trace,
a comparison, the help: ``TextScreen``) and the question before a fork (``Confirm``).

A question takes no key typed before it was on screen: its answers are priority bindings, seen as
the app receives each key, and a key older than the drawn question (the burst that opened it: a
laggy link, an app busy for a moment) answers nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import ModalScreen, Screen
from textual.widgets import RichLog, Static

from pisess.cli.browse.rowlist import KeyBar
from pisess.cli.views import browse as bv


class TextScreen(Screen):
    """A scrolling page of renderables: the context, the trace, a comparison, the help.  ``make``
    lays it out for a width (and, with a ``toggle`` ``(key, what, title when on)``, whether that
    is on: the title says so)."""

    BINDINGS = [Binding("escape,q", "app.pop_screen", "back"), Binding("j,down", "down", show=False),
                Binding("k,up", "up", show=False), Binding("pagedown", "page(1)", show=False),
                Binding("pageup", "page(-1)", show=False), Binding("g,home", "top", show=False),
                Binding("G,end", "bottom", show=False), Binding("o", "flip", show=False),
                Binding("question_mark", "app.show_help", show=False)]

    def __init__(self, title: str, make: Callable[..., list], toggle: tuple[str, str, str] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.make = make
        self.toggle = toggle
        self.on = False

    def compose(self) -> ComposeResult:
        yield Static(Text(self.title_text, "bold"), id="title")
        yield RichLog(wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20, id="page")
        keys = bv.bar_keys("page")
        yield KeyBar([k for k in keys if self.toggle or k[0] != "o"], id="keys")

    def on_mount(self) -> None:
        self.query_one(RichLog).focus()
        self.call_after_refresh(self._fill)  # once the page has its width: views are laid out for it

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return action != "flip" or self.toggle is not None

    def action_flip(self) -> None:
        assert self.toggle is not None
        self.on = not self.on
        self.query_one("#title", Static).update(Text(self.toggle[2] if self.on else self.title_text, "bold"))
        self._fill()

    def _fill(self) -> None:
        log = self.query_one(RichLog)
        log.clear()
        width = max(20, log.scrollable_content_region.width or self.app.size.width - 2)
        for r in (self.make(width, self.on) if self.toggle else self.make(width)):
            log.write(r, width=width)
        log.scroll_home(animate=False)

    def action_page(self, step: int) -> None:
        log = self.query_one(RichLog)
        (log.scroll_page_down if step > 0 else log.scroll_page_up)(animate=False)

    def action_down(self) -> None:
        self.query_one(RichLog).scroll_down(animate=False)

    def action_up(self) -> None:
        self.query_one(RichLog).scroll_up(animate=False)

    def action_top(self) -> None:
        self.query_one(RichLog).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one(RichLog).scroll_end(animate=False)


class Confirm(ModalScreen[bool]):
    """A question with y / n (Esc: no)."""

    BINDINGS = [Binding("y", "yes", "yes", priority=True), Binding("n,escape,q", "no", "no", priority=True)]

    def __init__(self, lines: list) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Container(id="dialog"):
            yield RichLog(wrap=True, markup=False, auto_scroll=False, min_width=20, id="question")
            yield KeyBar(bv.bar_keys("dialog"))

    def on_mount(self) -> None:
        log = self.query_one(RichLog)
        for r in self.lines:
            log.write(r)
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        self.drawn_at = time.monotonic()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """A key typed before the question was on screen (the burst that opened it) answers
        nothing: the answers are priority bindings, seen as the app receives each key."""
        if action in ("yes", "no"):
            key_time: float = getattr(self.app, "key_time", 0.0)  # (BrowseApp's: when the key came)
            return key_time >= getattr(self, "drawn_at", float("inf"))
        return True

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)
