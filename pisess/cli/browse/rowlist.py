"""The virtual list of browse (``RowList``), the list screens' moves (``ListScreen``) and the key
bar (``KeyBar``): only the rows on screen are made and drawn, so a list of 100,000 rows costs what
the screen shows.

The cursor row is drawn in reverse video, the marked one underlined; a move repaints the two rows
it touches (``refresh_line`` takes the list's row, not the screen's: it subtracts the scroll
itself) and scrolls as little as keeps the cursor in view.  The scroll keys Textual gives its
scrolling widgets are not inherited: a page key that scrolled the view and not the cursor would
leave the selection off screen, so the screens bind every key that moves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.message import Message
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import RichLog

from pisess.cli.views import browse as bv

NULL = Style.null()
CURSOR = Style(reverse=True)
MARKED = Style(underline=True)


class RowList(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows drawn on demand by ``draw(index, width) -> Text``; a cursor row, kept in view.  (Without
    the scroll keys of Textual's scrolling widgets: a page key that scrolled the view and not the
    cursor would leave the selection off screen; the screens bind every key that moves.)"""

    DEFAULT_CSS = "RowList { height: 1fr; overflow-x: hidden; }"

    class Moved(Message):
        def __init__(self, index: int) -> None:
            self.index = index
            super().__init__()

    def __init__(self, count: int, draw: Callable[[int, int], Text], **kw: Any) -> None:
        super().__init__(**kw)
        self.count = count
        self.draw = draw
        self.cursor = 0
        self.marked: int | None = None
        self._cache: dict = {}

    def on_mount(self) -> None:
        self.virtual_size = Size(self.size.width, self.count)

    def reset(self, count: int, cursor: int) -> None:
        self.count = count
        self._cache.clear()
        self.virtual_size = Size(self.size.width, count)
        self.cursor = cursor
        self.refresh()
        # the first time, the widget has no size yet: place the cursor once it is laid out
        self.call_after_refresh(self.goto, cursor, True)

    def replace(self, count: int, cursor: int, shift: int) -> None:
        """New rows under the same view: the cursor on row ``cursor``, the list scrolled by
        ``shift`` rows (as many as were added above the selection: it stays where it was on
        screen).  A list whose last row was on screen goes on showing the last rows (as ``tail -f``
        does: what is appended comes into view) while the selection stays on screen."""
        height = max(1, self.size.height)
        top = self.scroll_offset.y
        following = top + height >= self.count
        self.count = count
        self._cache.clear()
        self.virtual_size = Size(self.size.width, count)
        self.cursor = max(0, min(count - 1, cursor)) if count else 0
        top = max(0, top + shift)
        if following:
            end = max(0, count - height)
            if end <= self.cursor < end + height:
                top = max(top, end)
        if top != self.scroll_offset.y:
            self.scroll_to(y=top, animate=False)
        self.refresh()
        self.post_message(self.Moved(self.cursor))

    def forget(self) -> None:
        self._cache.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width  # (without the scroll bar)
        i = self.scroll_offset.y + y
        if i >= self.count or width <= 0:
            return Strip.blank(width, NULL)
        key = (i, width)
        strip = self._cache.get(key)
        if strip is None:
            text = self.draw(i, width)
            text.truncate(width, overflow="ellipsis", pad=True)
            # (a segment without a style trips Textual's colour filters: NO_COLOR's monochrome one)
            strip = Strip([Segment(t, st or NULL, c) for t, st, c in text.render(self.app.console)], width)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = strip
        if i == self.marked:
            strip = strip.apply_style(MARKED)
        if i == self.cursor:
            strip = strip.apply_style(CURSOR)
        return strip

    def goto(self, index: int, center: bool = False) -> None:
        """Select row ``index``, scrolling as little as needed (``center``: to the middle, for a
        list built anew: the rows around it, the leaf below it, come into view)."""
        index = max(0, min(self.count - 1, index)) if self.count else 0
        old = self.cursor
        self.cursor = index
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        if center:
            self.scroll_to(y=max(0, index - height // 2), animate=False)
        elif index < top:
            self.scroll_to(y=index, animate=False)
        elif index >= top + height:
            self.scroll_to(y=index - height + 1, animate=False)
        self.refresh_line_at(old)
        self.refresh_line_at(index)
        self.post_message(self.Moved(index))

    def refresh_line_at(self, index: int) -> None:
        # (``refresh_line`` takes the row of the list, not of the screen: it subtracts the scroll)
        if 0 <= index - self.scroll_offset.y < self.size.height:
            self.refresh_line(index)

    def page(self) -> int:
        return max(1, self.size.height - 1)


class KeyBar(Widget):
    """The keys of a screen on one row, fitted to its width: the first and the last (help, back)
    always shown, those in between dropped from the end of the middle, ``…`` where they were."""

    DEFAULT_CSS = "KeyBar { height: 1; }"

    def __init__(self, keys: Sequence[tuple[str, str]], **kw: Any) -> None:
        super().__init__(**kw)
        self.keys = list(keys)

    def render(self) -> Text:
        return bv.key_bar(self.keys, self.size.width)


class ListScreen(Screen):
    """A screen around one ``RowList``: the moves every list screen binds (they scroll the other
    pane while it has the focus: Tab gives it)."""

    def _pane(self) -> RichLog | None:
        return self.focused if isinstance(self.focused, RichLog) else None

    def action_move(self, delta: int) -> None:
        if (pane := self._pane()) is not None:
            pane.scroll_relative(y=delta, animate=False)
            return
        rl = self.query_one(RowList)
        rl.goto(rl.cursor + delta)

    def action_page(self, delta: int) -> None:
        if (pane := self._pane()) is not None:
            (pane.scroll_page_down if delta > 0 else pane.scroll_page_up)(animate=False)
            return
        rl = self.query_one(RowList)
        rl.goto(rl.cursor + delta * rl.page())

    def action_top(self) -> None:
        if (pane := self._pane()) is not None:
            pane.scroll_home(animate=False)
            return
        self.query_one(RowList).goto(0)

    def action_bottom(self) -> None:
        if (pane := self._pane()) is not None:
            pane.scroll_end(animate=False)
            return
        rl = self.query_one(RowList)
        rl.goto(rl.count - 1)
