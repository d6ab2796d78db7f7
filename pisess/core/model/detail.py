"""One entry in full, as ``pisess browse``'s detail pane shows it: what it is, when (and how long
after the entry before it), its line, label, usage and cost, the context edit that changes it and
the message or summary it carries.  Plain data; the views draw it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import js
from ..js import UNDEF, get
from ..reading.session import Session
from . import kinds


@dataclass(frozen=True)
class EntryDetail:
    entry: Any  # complete
    entry_id: Any
    word: str
    style: str
    time_ms: float | None
    since_previous_ms: float | None  # since its parent's time stamp
    line: int | None
    label: Any  # the label pi resolves for it, or None
    message: Any  # the message of a ``message`` entry, else None
    edits: tuple  # ``context_edit`` entries of the session naming it (complete), in file order
    children: int  # entries whose parent it is (more than one: a branch point)


@dataclass(frozen=True)
class Links:
    """What an entry's detail needs of the whole session, gathered in one pass (light entries):
    how many children each id has and the ``context_edit`` entries naming each target."""

    children: dict
    edits: dict

    @staticmethod
    def of(session: Session) -> Links:
        children: dict = {}
        edits: dict = {}
        for x in session.entries:
            pid = get(x, "parentId")
            if js.truthy(pid):
                k = js.key(pid)
                children[k] = children.get(k, 0) + 1
            if get(x, "type") == "context_edit":
                edits.setdefault(js.key(get(x, "targetId")), []).append(x)
        return Links(children, edits)


def entry_detail(session: Session, entry: Any, links: Links | None = None) -> EntryDetail:
    """``links``: ``Links.of(session)``, kept by a caller that shows many entries of one session."""
    links = links or Links.of(session)
    line = session.line_of(entry)  # (before the light entry is replaced by the complete one)
    e = session.full(entry)
    eid = get(e, "id")
    ms = js.date_ms(get(e, "timestamp"))
    pid = get(e, "parentId")
    parent = session.lookup(pid) if js.truthy(pid) else None
    pms = js.date_ms(get(parent, "timestamp")) if parent is not None else None
    k = kinds.of_entry(e)
    key = js.key(eid) if eid is not UNDEF else None
    edits = tuple(session.materialize(links.edits.get(key, []))) if key is not None else ()
    children = links.children.get(key, 0) if key is not None else 0
    return EntryDetail(e, None if eid is UNDEF else eid, k.word, k.style, ms,
                       ms - pms if ms is not None and pms is not None else None, line,
                       session.label_of(eid), get(e, "message") if get(e, "type") == "message" else None, edits,
                       children)
