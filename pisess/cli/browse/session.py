"""The session screen of browse: the tree as a virtual list over the core's compact rows, the
selected entry in full beside it, and the keys that answer from it (context, trace, compare, fork,
copy, export, search), each through the function its command uses.

The tree is a ``RowList`` over ``TreeRows``: only the rows on screen are made (``TreeRow``) and
drawn, by the tree view's own row function, their previews read from the file a screen at a time
and not kept, so a 100,000-entry session costs a few arrays and what the screen shows.  While it is
open, what pi appends is read (only that: ``follow.SessionTail``) and the rows are laid out again
around the selection; a rewritten file is read again and the selection found by its id.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import Input, RichLog, Static

from pisess.cli.browse.pages import Confirm, TextScreen
from pisess.cli.browse.rowlist import KeyBar, ListScreen, RowList
from pisess.cli.browse.settings import Settings
from pisess.cli.views import browse as bv
from pisess.core.js import get


@dataclass
class Opened:
    """A session as browse holds it: the reader's session, the tree's rows and what the detail needs."""

    session: Any
    view: Any
    links: Any
    follower: Any  # follow.SessionTail: what pi appends

    @property
    def rows(self) -> Any:
        return self.view.rows


def open_tree(path: str, reader: str, pi_version: str) -> Opened:
    from pisess.core.model.follow import SessionTail
    from pisess.core.reading.session import open_session

    s = open_session(path, reader, light=True, pi_version=pi_version)
    return laid_out(s, SessionTail(s))


def laid_out(s: Any, follower: Any) -> Opened:
    from pisess.core.model.tree import build_tree

    view = build_tree(s, full=True)
    return Opened(s, view, links_of(s, view), follower)


def links_of(s: Any, view: Any) -> Any:
    """``detail.Links`` of the session without a pass over its entries (``Links.of`` builds every
    one): the children of an id counted from the tree's parents when asked, the context edits
    from the entries that are not plain messages."""
    from pisess.core import js
    from pisess.core.model.detail import Links

    edits: dict = {}
    for _, x in s.store.extras():
        if get(x, "type") == "context_edit":
            edits.setdefault(js.key(get(x, "targetId")), []).append(x)
    # (entry_detail only asks ``children.get(key, 0)``: the counts answer that, as the dict would)
    return Links(cast(dict, ChildCounts(s, view.parents)), edits)


class ChildCounts:
    """``Links.children``: how many entries name an id as their parent (``key -> count``)."""

    def __init__(self, session: Any, parents: Any) -> None:
        self.session = session
        self.parents = parents
        self._counts: Any = None
        self._by_key: dict | None = None

    def counts(self) -> Any:
        """Children per store position: the entries whose parent (``byId.get(parentId)``) it is."""
        from array import array

        got = self._counts
        if got is None:
            got = self._counts = array("i", [0]) * len(self.parents)
            for q in self.parents:
                if q >= 0:
                    got[q] += 1
        return got

    def get(self, key: Any, default: int = 0) -> int:
        if type(key) is str:
            pos = self.session.store.find(key)
            if pos is not None:
                return self.counts()[pos] or default
        by_key = self._by_key
        if by_key is None:  # an id that is not a string: counted as Links.of counts it, once
            from pisess.core.model.detail import Links

            by_key = self._by_key = Links.of(self.session).children
        return by_key.get(key, default)


class SessionScreen(ListScreen):
    BINDINGS = [
        Binding("j,down", "move(1)", show=False), Binding("k,up", "move(-1)", show=False),
        Binding("pagedown", "page(1)", show=False), Binding("pageup", "page(-1)", show=False),
        Binding("g,home", "top", show=False), Binding("G,end", "bottom", show=False),
        Binding("h,left", "fold", show=False), Binding("l,right", "unfold", show=False),
        Binding("L", "leaf", show=False), Binding("left_square_bracket", "branch(-1)", show=False),
        Binding("right_square_bracket", "branch(1)", show=False), Binding("enter", "context", show=False),
        Binding("c", "context", show=False), Binding("t", "trace", show=False), Binding("d", "compare", show=False),
        Binding("f", "fork", show=False), Binding("y", "copy_id", show=False), Binding("Y", "copy_resume", show=False),
        Binding("e", "export('md')", show=False), Binding("E", "export('html')", show=False),
        Binding("slash", "search", show=False, priority=True),
        Binding("n", "hit(1)", show=False), Binding("N", "hit(-1)", show=False),
        Binding("tab", "other_pane", show=False), Binding("q", "back", show=False),
        Binding("escape", "back", show=False, priority=True),  # (the box lets go before the next key)
        Binding("question_mark", "app.show_help", show=False),
    ]

    def __init__(self, settings: Settings, path: str, at: Any = None, then: tuple | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.path = path
        self.at = at
        self.then = then  # a screen to open over this one once it is drawn (browse --screen, --compare)
        self.opened: Opened | None = None
        self.order: Sequence[int] = range(0)  # row indexes on screen, folds applied
        self.folded: set[int] = set()
        self.marked_row: int | None = None
        self.hits: list[int] = []
        self.hit_at = -1
        self.note = ""
        self.previews: dict = {}  # store position -> the row's preview, read a screen at a time

    # the rows -----------------------------------------------------------------------------------------

    @property
    def rows(self) -> Any:
        return self.opened.view.rows if self.opened else ()

    def _visible_rows(self) -> Sequence[int]:
        rows = self.rows
        if not self.folded:
            return range(len(rows))
        out: list[int] = []
        i = 0
        while i < len(rows):
            out.append(i)
            i = self._subtree_end(i) if i in self.folded else i + 1
        return out

    def _draw(self, index: int, width: int) -> Text:
        from pisess.cli.views.tree import tree_row

        assert self.opened is not None
        i = self.order[index]
        r = self.rows[i]
        s = self.opened.session
        preview = self._preview(r.position, index) if r.kind == "entry" else None
        note = f"  \u25b8 {self._subtree_end(i) - i - 1} folded" if i in self.folded else ""
        t = tree_row(s, r, max(10, width - len(note)), False, preview=preview)
        if note:  # (after a row cut to leave it room)
            t.append(note, "bold")
        return t

    PREVIEW_CUT = 1024  # columns of a preview kept (a row cuts it again to its room: the same text)

    def _preview(self, pos: int, index: int) -> str:
        """The row's preview, as ``tree`` makes it from the whole entry: read back with those of the
        rows below it on screen in one pass, and not kept whole (only the previews are)."""
        from pisess.cli.views import describe as d
        from pisess.cli.views.text import one_line

        got = self.previews.get(pos)
        if got is not None:
            return got
        assert self.opened is not None
        s, rows = self.opened.session, self.rows
        height = max(1, self.query_one(RowList).size.height)
        near = {pos}
        for k in range(index + 1, min(len(self.order), index + height)):
            p = rows.position(self.order[k])
            if p is not None and p not in self.previews:
                near.add(p)
        if len(self.previews) + len(near) > 4096:
            self.previews.clear()
        for p, whole in s.complete_at(sorted(near)):
            self.previews[p] = one_line(d.entry_preview(whole, s.id_width), self.PREVIEW_CUT)
        return self.previews[pos]

    def _subtree_end(self, i: int) -> int:
        """The row after the last one of row ``i``'s subtree: the rows below it whose entries descend
        from its entry (the rest of a side branch is drawn as wide as its first row, ``│ ○`` under
        ``├─○``, so the indentation cannot tell where it ends)."""
        assert self.opened is not None
        rows, parents = self.rows, self.opened.view.parents
        top = rows.position(i)
        if top is None:
            return i + 1
        inside = {top}
        j = i + 1
        while j < len(rows):
            p = rows.position(j)
            if p is None:  # a row of no entry (a fold): part of the subtree if drawn inside it
                if rows.width(j) <= rows.width(i):
                    break
            elif parents[p] in inside:
                inside.add(p)
            else:
                break
            j += 1
        return j

    # layout -------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="title")
        with Container(id="panes"):
            yield RowList(0, self._draw, id="tree")
            yield RichLog(wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20, id="detail")
        yield Static("", id="status")
        yield Input(placeholder="search the session's text (Enter)", id="search")
        yield KeyBar(bv.bar_keys("session"), id="keys")

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self._load()
        self.set_interval(1.0, self._follow)
        self._layout()
        if self.then:
            self.call_after_refresh(self._open_then)

    def _open_then(self) -> None:
        assert self.then is not None
        what, *args = self.then
        if what == "context":
            self.action_context()
        elif what == "trace":
            self.action_trace()
        elif what == "compare" and self.opened is not None:
            self._compare(self._selected_id(), args[0])

    def on_resize(self) -> None:
        self._layout()
        self.call_after_refresh(self._after_resize)

    def _after_resize(self) -> None:
        rl = self.query_one(RowList)
        rl.goto(rl.cursor)  # (in view again; the entry pane is drawn anew at its new width)

    def _layout(self) -> None:
        panes = self.query_one("#panes")
        wide = self.app.size.width >= 100
        panes.styles.layout = "horizontal" if wide else "vertical"
        tree, detail = self.query_one("#tree"), self.query_one("#detail")
        if wide:
            tree.styles.width, tree.styles.height = "55%", "1fr"
            detail.styles.width, detail.styles.height = "45%", "1fr"
        else:
            tree.styles.width, tree.styles.height = "100%", "3fr"
            detail.styles.width, detail.styles.height = "100%", "2fr"
        self.query_one(RowList).forget()

    def _load(self) -> None:
        settings = self.settings
        self.opened = open_tree(self.path, settings.reader, settings.pi_version)
        self.folded.clear()
        self.previews.clear()
        self.order = self._visible_rows()
        row = self._row_of_id(self.at) if self.at is not None else None
        if row is None:
            row = self._leaf_row()
        self._title()
        rl = self.query_one(RowList)
        rl.reset(len(self.order), self._index_of_row(max(0, row)))
        rl.focus()
        self._status()

    def _title(self) -> None:
        assert self.opened is not None
        self.query_one("#title", Static).update(Text(bv.session_title(self.opened.session, self.opened.view), "bold"))

    def _row_of_id(self, eid: Any) -> int | None:
        assert self.opened is not None
        return self.opened.rows.row_of(self.opened.session.store.find(eid))

    def _leaf_row(self) -> int:
        leaf = self.rows.with_flag("leaf")
        return leaf[0] if leaf else len(self.rows) - 1

    def _index_of_row(self, row: int) -> int:
        import bisect

        k = bisect.bisect_left(self.order, row)
        return min(k, len(self.order) - 1) if self.order else 0

    def _follow(self) -> None:
        """pi appends while browse runs: read what was appended (only that), lay the rows out again
        and keep the selection where it was on screen; the active path follows the new leaf."""
        from pisess.core.errors import PisessError
        from pisess.core.model.follow import REREAD

        if self.opened is None:
            return
        old = self.opened
        before = len(old.session.store)
        try:
            got = old.follower.poll()
        except (OSError, PisessError):  # unreadable now: tried again in a second
            return
        if got is None:
            return
        rl = self.query_one(RowList)
        index = rl.cursor
        # what the screen holds, by store position (the same entries at the same positions after
        # an append; by id after a rewrite)
        kept = [None if i is None else old.rows.position(i) for i in (self._selected_row(), self.marked_row)]
        folded = [old.rows.position(i) for i in self.folded]
        hits = [old.rows.position(i) for i in self.hits]
        if got is REREAD:
            settings = self.settings
            ids = {p: get(old.session.store[p], "id") for p in (*kept, *folded, *hits) if p is not None}
            try:
                self.opened = open_tree(self.path, settings.reader, settings.pi_version)
            except Exception as e:  # noqa: BLE001 - the core's PisessError names why; the old rows stay
                self.note = f"the file changed and cannot be read: {getattr(e, 'message', e)}"
                self._status()
                return
            self.previews.clear()
            where = {p: self.opened.session.store.find(eid) for p, eid in ids.items()}
            self.note = ("the file was rewritten: read again" if old.follower.why == "rewritten" else
                         "what was appended could not be joined (a damaged line?): the file read again")
        else:
            self.opened = laid_out(got, old.follower)
            if got.id_width != old.session.id_width:  # (a new id looks like an old one: ids are cut longer)
                self.previews.clear()
            where = {}
            added = len(got.store) - before
            self.note = f"{added} new {'entry' if added == 1 else 'entries'} appended"
        rows = self.opened.rows

        def row(p: int | None) -> int | None:
            return rows.row_of(where.get(p, p) if where else p)

        self.folded = {r for r in map(row, folded) if r is not None}
        self.hits = sorted(r for r in map(row, hits) if r is not None)
        self.hit_at = min(self.hit_at, len(self.hits) - 1)
        selected, self.marked_row = row(kept[0]), row(kept[1])
        self.order = self._visible_rows()
        new = self._index_of_row(selected if selected is not None else self._leaf_row())
        rl.marked = None if self.marked_row is None else self._index_of_row(self.marked_row)
        self._title()
        rl.replace(len(self.order), new, new - index)
        self._status()

    # selection --------------------------------------------------------------------------------------

    def _selected_row(self) -> int | None:
        rl = self.query_one(RowList)
        return self.order[rl.cursor] if self.order else None

    def _selected_entry(self) -> Any:
        i = self._selected_row()
        if i is None or not self.rows.is_entry(i):
            return None
        return self.rows[i].entry

    def _selected_id(self) -> Any:
        e = self._selected_entry()
        return None if e is None else get(e, "id")

    def on_row_list_moved(self, message: RowList.Moved) -> None:
        from pisess.core.model.detail import entry_detail

        log = self.query_one("#detail", RichLog)
        log.clear()
        e = self._selected_entry()
        if e is None or self.opened is None:
            empty = not self.rows
            log.write(Text("(no entries: a header only)" if empty else "(a fold: l or \u2192 opens it)",
                           "dim"))
            return
        det = entry_detail(self.opened.session, e, self.opened.links)
        width = max(20, log.scrollable_content_region.width or 40)
        for r in bv.detail_view(self.opened.session, det, width=width):
            log.write(r, width=width)
        log.scroll_home(animate=False)

    def _status(self) -> None:
        from pisess.cli.views.text import short_id

        bits = []
        if self.marked_row is not None and self.opened is not None:
            e = self.rows[self.marked_row].entry
            bits.append(f"marked {short_id(get(e, 'id'), self.opened.session.id_width)}: select another, d compares")
        if self.hits:
            bits.append(f"hit {self.hit_at + 1} of {len(self.hits)} (n/N)")
        if self.note:
            bits.append(self.note)
        if self.opened is not None and self.opened.session.dropped_lines:
            bits.append(f"{len(self.opened.session.dropped_lines)} damaged line(s) skipped (lenient reader)")
        self.query_one("#status", Static).update(Text("  ".join(bits), "yellow"))

    def action_leaf(self) -> None:
        leaf = self.rows.with_flag("leaf")
        if leaf:
            self._show_row(leaf[0])

    def _show_row(self, row: int) -> None:
        # unfold whatever hides it
        for f in sorted(self.folded):
            if f < row < self._subtree_end(f):
                self.folded.discard(f)
        self.order = self._visible_rows()
        rl = self.query_one(RowList)
        rl.reset(len(self.order), self._index_of_row(row))

    def action_branch(self, step: int) -> None:
        assert self.opened is not None
        rl = self.query_one(RowList)
        counts, pos = self.opened.links.children.counts(), self.rows.pos
        k = rl.cursor + step
        while 0 <= k < len(self.order):
            p = pos[self.order[k]]
            if p >= 0 and counts[p] > 1:
                rl.goto(k)
                return
            k += step

    def action_fold(self) -> None:
        """On the first row of a side branch: fold it; elsewhere: go to the parent."""
        i = self._selected_row()
        if i is None or self.opened is None:
            return
        rows = self.rows
        if rows.indents[rows.indent[i]][1] and i not in self.folded and self._subtree_end(i) > i + 1:
            self.folded.add(i)
            self.order = self._visible_rows()
            self.query_one(RowList).reset(len(self.order), self._index_of_row(i))
            return
        pos = rows.position(i)
        row = rows.row_of(self.opened.view.parents[pos]) if pos is not None else None
        if row is not None:
            self._show_row(row)

    def action_unfold(self) -> None:
        """A folded branch opens; elsewhere: go to the first child."""
        i = self._selected_row()
        if i is None or self.opened is None:
            return
        if i in self.folded:
            self.folded.discard(i)
            self.order = self._visible_rows()
            self.query_one(RowList).reset(len(self.order), self._index_of_row(i))
            return
        rows, parents = self.rows, self.opened.view.parents
        pos = rows.position(i)
        if pos is not None and self.opened.links.children.counts()[pos]:
            for j in range(i + 1, len(rows)):
                p = rows.pos[j]
                if p >= 0 and parents[p] == pos:
                    self._show_row(j)
                    return
        if i + 1 < len(rows):  # a fold row stands between
            self._show_row(i + 1)

    def action_other_pane(self) -> None:
        rl, log = self.query_one(RowList), self.query_one("#detail", RichLog)
        self.set_focus(log if self.focused is rl else rl)

    def action_back(self) -> None:
        if self.query_one("#search", Input).display:
            self.query_one("#search", Input).display = False
            self.set_focus(self.query_one(RowList))
            return
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    # the answers ------------------------------------------------------------------------------------

    def action_context(self) -> None:
        from pisess.cli.views.context import context_view
        from pisess.core.model.context import build_context

        eid = self._selected_id()
        if eid is None or self.opened is None:
            return
        s = self.opened.session
        ctx = build_context(s, eid, full_path=False)
        title = f"context at {eid} \u00b7 what the model sees if this were the leaf"
        self.app.push_screen(TextScreen(
            title, lambda width, original: context_view(ctx, max_lines=12, original=original, in_app=True),
            toggle=("o", "originals", f"{title} \u00b7 showing what edits replaced or hid (o hides)")))

    def action_trace(self) -> None:
        from pisess.core.model.paths import active_path
        from pisess.core.model.trace import trace

        eid = self._selected_id()
        if eid is None or self.opened is None:
            return
        s = self.opened.session
        turns = trace(s.materialize(active_path(s, eid)))
        self.app.push_screen(TextScreen(f"trace to {eid} \u00b7 turns and steps",
                                        lambda width: bv.trace_view(s, turns, width=width)))

    def action_compare(self) -> None:
        i = self._selected_row()
        if i is None or not self.rows.is_entry(i) or self.opened is None:
            return
        rl = self.query_one(RowList)
        if self.marked_row is None or self.marked_row == i:
            self.marked_row = None if self.marked_row == i else i
            rl.marked = None if self.marked_row is None else rl.cursor
            rl.refresh()
            self._status()
            return
        a, b = get(self.rows[self.marked_row].entry, "id"), get(self.rows[i].entry, "id")
        self.marked_row = None
        rl.marked = None
        rl.refresh()
        self._status()
        self._compare(a, b)

    def _compare(self, a: Any, b: Any) -> None:
        """``pisess diff SESSION A B``'s answer on a page."""
        from pisess.cli.views.diff import diff_view
        from pisess.core.analyses.diff import diff_points

        assert self.opened is not None
        s = self.opened.session
        result = diff_points(s, a, s, b)
        self.app.push_screen(TextScreen(f"compare {a} with {b}",
                                        lambda width: diff_view(result, width=width, max_lines=6, in_app=True)))

    def action_fork(self) -> None:
        import uuid6

        from pisess.cli.views.fork import fork_view
        from pisess.core.js import now_iso
        from pisess.core.model.fork import check_fork_directory, plan_fork, write_fork

        eid = self._selected_id()
        if eid is None or self.opened is None:
            return
        s = self.opened.session
        # beside the file, as pi's /fork writes a fork of the session it has open (pi --session FILE
        # takes the file's directory as its session directory): where pi will list it with its source
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            plan = plan_fork(s, eid, "at", new_id=str(uuid6.uuid7()), now_iso=now_iso(), cwd=None,
                             source_path=os.path.abspath(self.path))
            check_fork_directory(directory)
        except Exception as e:  # the core's PisessError names why (a target pi would refuse)
            self.app.notify(str(getattr(e, "message", e)), severity="error")
            return
        before, shown, after = fork_view(plan, os.path.join(directory, plan.file_name), dry_run=True)

        def done(yes: bool | None) -> None:
            if not yes:
                self.app.notify("not forked")
                return
            try:
                written = write_fork(plan, directory)
            except Exception as e:
                self.app.notify(str(getattr(e, "message", e)), severity="error")
                return
            self.app.notify(f"forked: {written}")

        self.app.push_screen(Confirm([*before, *shown, Text(f"Fork at {eid} into {directory}?", "bold")]), done)

    def action_copy_id(self) -> None:
        eid = self._selected_id()
        if eid is not None:
            self._copy(str(eid))

    def action_copy_resume(self) -> None:
        import shlex

        eid = self._selected_id()
        if eid is None:
            return
        settings = self.settings
        path = shlex.quote(self.path)
        if self._selected_row() in self.rows.with_flag("leaf"):
            self._copy(f"pi --session {path}")
            return
        where = f" --sessions-dir {shlex.quote(settings.sessions_dir)}" if settings.sessions_dir else ""
        self._copy(f"pisess fork {path} {shlex.quote(str(eid))} --position at{where}")

    def _copy(self, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self.app.notify(f"copied through OSC 52 (a terminal without it copies nothing): {text}")

    def action_export(self, fmt: str) -> None:
        import uuid6

        from pisess.core.analyses.export import ExportOptions, export_session, write_export
        from pisess.core.js import now_iso

        eid = self._selected_id()
        if eid is None or self.opened is None:
            return
        settings = self.settings
        sid = str((self.opened.session.header or {}).get("id", "session"))[:8]
        target = os.path.abspath(f"{sid}-{str(eid)[:8]}.{fmt}")
        from pisess.cli.views.export import export_summary

        if os.path.lexists(target):
            self.app.notify(f"{target} exists: browse never replaces a file (move it away and press {fmt[0]} "
                            "again)", severity="error")
            return
        try:
            run = export_session(self.path, fmt, leaf=str(eid), reader=settings.reader, pi_version=settings.pi_version,
                                 options=ExportOptions(), new_id=str(uuid6.uuid7()), now_iso=now_iso())
            written = write_export(target, run.export.data, force=False)
        except Exception as e:
            self.app.notify(str(getattr(e, "message", e)), severity="error")
            return
        summary = export_summary(run, written, redact_hint="pisess export --redact replaces them")
        self.app.notify("\n".join(line.plain for line in summary),
                        severity="warning" if len(summary) > 1 else "information", timeout=10)

    # search -----------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # (``/`` is a priority binding, seen before the focused widget: in the box it is a character)
        # (``has_focus`` follows the focus events, a turn late: ``focused`` is the screen's own)
        return not (action == "search" and self.focused is self.query_one("#search", Input))

    def action_search(self) -> None:
        """The box takes the focus now, not after this key's turn: the keys typed after ``/`` in
        one burst are already queued, and the app hands each to what has the focus then."""
        box = self.query_one("#search", Input)
        box.display = True
        box.value = ""
        self.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from pisess.core.model import kinds

        event.input.display = False
        self.set_focus(self.query_one(RowList))
        query = event.value
        if not query or self.opened is None:
            return
        s, rows = self.opened.session, self.opened.rows
        needle = query.encode()
        found: list[int] = []
        for pos, e in s.complete_at(range(len(s.store)), lambda pos, data: needle in data):
            if any(query in text for *_, text in kinds.texts(e)):
                row = rows.row_of(pos)
                if row is not None:
                    found.append(row)
        self.hits = sorted(set(found))
        self.hit_at = -1
        self.note = "" if self.hits else f"no hits for {query!r}"
        if self.hits:
            self.action_hit(1)
        self._status()

    def action_hit(self, step: int) -> None:
        if not self.hits:
            return
        self.hit_at = (self.hit_at + step) % len(self.hits)
        self._show_row(self.hits[self.hit_at])
        self._status()
