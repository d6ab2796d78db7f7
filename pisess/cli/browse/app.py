"""``pisess browse``: the Textual app.  Only ``pisess browse`` imports this package (Textual is the
optional extra ``pisess[tui]``).  One module per screen or widget: ``rowlist`` (the virtual list,
the list screens' moves, the key bar), ``session`` (one session), ``sessions`` (the sessions and
the search hits), ``pages`` (the text pages and the fork question), ``settings`` (what each
screen is handed); everything they show comes from the core functions the commands use and is
drawn by the views in ``pisess.cli.views``.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding

from pisess.cli.browse.pages import TextScreen
from pisess.cli.browse.session import SessionScreen
from pisess.cli.browse.sessions import SessionsScreen
from pisess.cli.browse.settings import Settings
from pisess.cli.views import browse as bv


class BrowseApp(App):
    CSS = """
    Screen { layout: vertical; }
    #title { height: 1; background: $boost; }
    #status { height: 1; }
    #notice { height: auto; max-height: 4; }
    #keys { height: 1; }
    #panes { height: 1fr; }
    #detail { border-left: solid $secondary; }
    #dialog { width: 90%; height: 80%; border: thick $accent; background: $surface; }
    #question { height: 1fr; }
    """
    BINDINGS = [Binding("ctrl+c", "interrupt", show=False, priority=True)]

    def __init__(self, *, path: str | None, at: Any, root: str, cwd: str, reader: str, pi_version: str,
                 all_projects: bool = False, sessions_dir: str | None = None, then: tuple | None = None) -> None:
        super().__init__()
        self.path = path
        self.at = at
        self.then = then  # ("context",), ("trace",) or ("compare", ENTRY): the screen to open first
        self.all_projects = all_projects
        self.key_time = 0.0  # when the terminal handed over the last key (Confirm asks)
        self.settings = Settings(reader, pi_version, root, cwd, sessions_dir)

    async def on_event(self, event: Any) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self.key_time = event.time
            before_key = getattr(self.screen, "before_key", None)
            if before_key is not None:
                before_key(event)
        await super().on_event(event)

    def on_mount(self) -> None:
        if self.path is None:
            self.push_screen(SessionsScreen(self.settings, self.all_projects))
        else:
            self.push_screen(SessionScreen(self.settings, self.path, self.at, self.then))

    def action_interrupt(self) -> None:
        self.exit(return_code=130)  # (the exit-code table: interrupted)

    def action_show_help(self) -> None:
        self.push_screen(TextScreen("help", lambda width: bv.help_view()))
