"""The sessions screen of browse (what ``ls --long`` lists, through ``list_sessions(...,
details=True)``, filtered as you type) and the hits screen (``pisess search`` over the listed
sessions, through the search index when the cache is on).

Typing filters: the first printable key no binding takes opens the filter box as the app
receives it (``before_key``), so every key after it, however fast, lands in the box; Esc clears
the filter, Enter opens the selected session.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from pisess.cli.browse.rowlist import KeyBar, ListScreen, RowList
from pisess.cli.browse.session import SessionScreen
from pisess.cli.browse.settings import Settings
from pisess.cli.views import browse as bv


class SessionsScreen(ListScreen):
    """What ``ls --long`` lists, in pi's order: Enter opens one; typing filters; / searches the text;
    Tab: all projects."""

    BINDINGS = [Binding("j,down", "move(1)", show=False), Binding("k,up", "move(-1)", show=False),
                Binding("pagedown", "page(1)", show=False), Binding("pageup", "page(-1)", show=False),
                Binding("g,home", "top", show=False), Binding("G,end", "bottom", show=False),
                Binding("enter", "open", show=False), Binding("tab", "scope", show=False),
                # (priority: seen as the app receives the key, so the box has the focus before the
                # next key of a burst is handed out)
                Binding("slash", "content_search", show=False, priority=True),
                Binding("escape", "back", show=False, priority=True), Binding("q", "back", show=False),
                Binding("question_mark", "app.show_help", show=False)]

    #: keys bound on this screen: every other printable character starts the filter
    BOUND = "jkgGq?/"

    def __init__(self, settings: Settings, all_projects: bool) -> None:
        super().__init__()
        self.settings = settings
        self.all_projects = all_projects
        self.sessions: list = []
        self.details: dict = {}
        self.shown: list = []
        self.query_text = ""
        self.id_width = 8
        self.directories: list = []

    def compose(self) -> ComposeResult:
        yield Static("", id="title")
        yield Static("", id="header")
        yield RowList(0, self._draw, id="sessions")
        yield Static("", id="notice")
        yield Input(placeholder="filter by id, name, first message or cwd (Enter opens, Esc clears)", id="search",
                    select_on_focus=False)
        yield Input(placeholder="search the listed sessions' text (Enter)", id="content")
        yield KeyBar(bv.bar_keys("sessions"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self.query_one("#content", Input).display = False
        self._load()

    def _box_focused(self) -> bool:
        return isinstance(self.focused, Input)

    def before_key(self, event: Any) -> None:
        """Called by the app as it receives a key, before handing it to what has the focus: a
        printable key no binding takes opens the filter box, which then takes it (and every key
        after it, however fast they come)."""
        if self._box_focused() or len(self.app.screen_stack) and self.app.screen is not self:
            return
        ch = event.character
        if ch and ch.isprintable() and not ch.isspace() and ch not in self.BOUND:
            box = self.query_one("#search", Input)
            box.display = True
            box.value = self.query_text
            box.cursor_position = len(box.value)
            self.set_focus(box)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # (``/`` in a box is a character)
        return not (action == "content_search" and self._box_focused())

    def action_content_search(self) -> None:
        box = self.query_one("#content", Input)
        box.display = True
        box.value = ""
        self.set_focus(box)

    def _load(self) -> None:
        from pisess.core.ids import unique_prefix_width
        from pisess.core.listing.repo import list_sessions
        from pisess.core.listing.summary import details_of

        settings = self.settings
        # what ls --long lists, read as it reads it (one pass over each file)
        listing = list_sessions(settings.root, None if self.all_projects else settings.cwd, pi_version=settings.pi_version,
                                whole=True, details=True)
        self.sessions = list(listing.sessions)
        self.details = details_of(self.sessions)
        self.directories = list(listing.directories)
        self.id_width = unique_prefix_width(s.id for s in self.sessions) if self.sessions else 8
        self._apply()

    def _words(self, s: Any) -> str:
        d = self.details.get(s.path) or {}
        return " ".join(str(x) for x in (s.id, d.get("name") or "", d.get("firstMessage") or "", s.cwd))

    def _apply(self, focus_list: bool = True) -> None:
        from pisess.cli.views.text import tilde

        q = self.query_text.lower()
        self.shown = [s for s in self.sessions if not q or q in self._words(s).lower()]
        settings = self.settings
        scope = "all projects" if self.all_projects else tilde(settings.cwd)
        title = f"pisess \u00b7 {len(self.shown)} of {len(self.sessions)} sessions \u00b7 {scope}"
        if self.query_text:
            title += f" \u00b7 filter {self.query_text!r}"
        self.query_one("#title", Static).update(Text(title, "bold"))
        self.query_one("#header", Static).update(bv.sessions_header(self.id_width, self.all_projects, self.size.width))
        status = ""
        if not self.sessions:
            where = self.directories[0] if self.directories and not self.all_projects else settings.root
            status = (f"no sessions in {tilde(where)}" + ("" if self.all_projects else "; Tab: all projects"))
        elif not self.shown:
            status = f"no session matches {self.query_text!r}; Esc clears the filter"
        notice = self.query_one("#notice", Static)
        notice.update(Text(status, "yellow"))
        notice.display = bool(status)
        rl = self.query_one(RowList)
        rl.reset(len(self.shown), 0)
        if focus_list:
            self.set_focus(rl)

    def on_resize(self) -> None:
        self.query_one("#header", Static).update(bv.sessions_header(self.id_width, self.all_projects,
                                                                    self.app.size.width))
        self.query_one(RowList).forget()

    def _draw(self, index: int, width: int) -> Text:
        s = self.shown[index]
        return bv.session_row(s, self.details.get(s.path) or {}, self.id_width, self.all_projects, width)

    def action_open(self) -> None:
        if self.shown:
            self.app.push_screen(SessionScreen(self.settings, self.shown[self.query_one(RowList).cursor].path))

    def action_scope(self) -> None:
        self.all_projects = not self.all_projects
        self._load()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "search":
            self.query_text = event.value
            self._apply(focus_list=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.set_focus(self.query_one(RowList))
        if event.input.id == "content" and event.value:
            self.app.push_screen(HitsScreen(self.settings, event.value, [s.path for s in self.shown]))
        elif event.input.id == "search":  # Enter in the filter opens the session it leaves selected
            self.action_open()

    def action_back(self) -> None:
        """Esc in the filter clears it (as pi's session picker does); q in a box is a character."""
        for box in self.query(Input):
            if box.display:
                box.display = False
                if box.id == "search" and self.query_text:
                    self.query_text = ""
                    box.value = ""
                    self._apply()
                self.set_focus(self.query_one(RowList))
                return
        self.app.exit()


class HitsScreen(ListScreen):
    """``pisess search TEXT`` over the listed sessions (through the search index when the cache is on):
    each hit with its session, entry, placement and snippet; Enter opens the session at the hit."""

    BINDINGS = [Binding("j,down", "move(1)", show=False), Binding("k,up", "move(-1)", show=False),
                Binding("pagedown", "page(1)", show=False), Binding("pageup", "page(-1)", show=False),
                Binding("g,home", "top", show=False), Binding("G,end", "bottom", show=False),
                Binding("enter", "open", show=False), Binding("escape,q", "app.pop_screen", show=False),
                Binding("question_mark", "app.show_help", show=False)]

    def __init__(self, settings: Settings, text: str, paths: list) -> None:
        super().__init__()
        self.settings = settings
        self.text = text
        self.paths = paths
        self.hits: list = []

    def compose(self) -> ComposeResult:
        yield Static("", id="title")
        yield RowList(0, self._draw, id="hits")
        yield KeyBar(bv.bar_keys("hits"), id="keys")

    def on_mount(self) -> None:
        from pisess.core.analyses.search import make_matcher, search_files

        settings = self.settings
        report = search_files(self.paths, make_matcher(self.text), reader=settings.reader, pi_version=settings.pi_version)
        self.hits = [(r, h) for r in report.results for h in r.hits]
        self.query_one("#title", Static).update(Text(
            f"pisess \u00b7 {len(self.hits)} hits for {self.text!r} in {len(report.results)} of "
            f"{len(self.paths)} sessions (via {report.via})", "bold"))
        self.query_one(RowList).reset(len(self.hits), 0)
        self.query_one(RowList).focus()

    def _draw(self, index: int, width: int) -> Text:
        from pisess.cli.views.text import escape_controls, one_line

        r, h = self.hits[index]
        t = Text(no_wrap=True)
        t.append(f"{str(r.session_id)[:8]} ", "bold")
        t.append(f"{str(h.entry_id)[: r.id_width]:<{r.id_width}} ", "")
        t.append(f"{h.where:<9} ", "bold" if h.where == "active" else "dim")
        t.append(f"{h.match.kind:<10} ", "dim")
        t.append(escape_controls(one_line(h.match.snippet, max(10, width - 40))))
        return t

    def action_open(self) -> None:
        if self.hits:
            r, h = self.hits[self.query_one(RowList).cursor]
            self.app.push_screen(SessionScreen(self.settings, r.path, h.entry_id))
