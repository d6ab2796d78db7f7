"""Two writers in one file: what two pi processes appending to one session leave, told apart from
what a user's ``/tree`` navigation leaves.

The rule, in the spec's terms (§3.1 appending, §5.1 leaf rule)
-------------------------------------------------------------
Take the entries in file order (the header and values without a string id are not entries).
Before entry *i* the writer's leaf, as the file shows it, is the previous entry's id, or its
``targetId`` when the previous entry is a ``leaf`` record (HARNESS, §5.1).  Entry *i*
**continues** when its ``parentId`` is that leaf; otherwise it is a **switch**.  A maximal
stretch of entries that continue each other is a **run**; its last entry is the run's **tip**.

* One writer navigating with ``/tree`` leaves one switch, then the new branch grows alone: pi's
  cli writes nothing when the leaf moves, so the move shows at the next append, whose parent is
  the navigation target (usually an entry that already has a child); with a summary the switch
  is a ``branch_summary``; pi's SDK writes a ``leaf`` record first.
* Two writers each append as children of *their own* leaf.  While both run, every change of
  writer is a switch whose parent is the tip of the run *before the previous one*, an entry no
  one has appended to since (a childless entry): the appends alternate between two growing tips.

A **resume** is a switch whose parent is the tip of the run two runs back, still childless, is
not a ``branch_summary``, does not follow a ``leaf`` record, and comes at most ``CLOSE_SECONDS``
after the entry before it (entries whose timestamps cannot be read count as close).  Two writers
are reported (``concurrent_writers``) when **at least two resumes follow each other**: runs
A B A B, the second A continuing the first A's tip and the second B the first B's.  The
alternation *starts* at the first entry of the run the first resume went around (where the
second writer's first append landed) and *ends* at its last switch; its two tips are the last
entries of its last two runs.  On the next resume pi continues from the last line of the file,
so one of the two conversations (whichever process wrote last) goes on and the other is left as
a branch reachable only with ``/tree``.

Limits
------
* Two writers that alternate only once (A B A) look exactly like a user who tried something on a
  branch and went back to the tip of the first one: not reported.
* A user who goes back and forth between the tips of two branches twice within ``CLOSE_SECONDS``
  of each append is reported although there was one writer.
* Two writers of which one appended only once, or one that appended only after the other had
  exited, leave one switch: indistinguishable from navigation, not reported.
* Three or more writers alternating round-robin are not the two-run pattern: not reported
  unless two of them alternate on their own.
* A second writer whose first append is a ``branch_summary`` or follows a ``leaf`` record (a
  navigation record) ends the pattern there.
* ``mid_turn`` counts the switches whose entry is a tool result or an assistant message: pi's
  agent loop appends those without the user, so one writer never switches there; it is evidence
  shown beside the warning, not needed for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import js

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..reading.session import Session

CLOSE_SECONDS = 30 * 60  # two live processes; a user answering one terminal and then the other


@dataclass(frozen=True)
class Tip:
    id: str
    line: int


@dataclass(frozen=True)
class Alternation:
    """Two writers appending in turn, from ``start_line`` to ``end_line`` (physical lines)."""

    start_line: int  # the first entry of the second conversation
    start_id: str
    end_line: int  # the last switch between the two
    end_id: str
    switches: int  # changes of writer, the first (the second writer's first append) included
    resumes: int
    mid_turn: int
    tips: tuple  # (Tip, Tip): the last entries of the last two runs, file order
    runs: tuple = field(default=(), repr=False)  # ((first line, last line, side 0|1), ...)
    fork_id: Any = None  # the parent of the second writer's first entry (where the two part)

    def to_json(self) -> dict:
        return {"startLine": self.start_line, "startId": self.start_id, "endLine": self.end_line,
                "endId": self.end_id, "switchCount": self.switches, "resumeCount": self.resumes,
                "midTurnSwitchCount": self.mid_turn, "tips": [{"id": t.id, "line": t.line} for t in self.tips]}


@dataclass
class Run:
    first_line: int
    first_id: str
    first_is_agent: bool
    tip_id: str
    tip_line: int


def _ms(ts: Any) -> float | None:
    return js.date_ms(ts) if isinstance(ts, str) else None


class WriterRule:
    """The rule, fed one entry at a time (``watch`` feeds appends as they come, ``validate`` the
    file).  ``add`` returns the alternation the moment it is confirmed (its second resume), and
    ``None`` otherwise; ``finish`` returns every alternation found."""

    def __init__(self, role_of: Callable[[Any], Any] | None = None) -> None:
        self._role_of = role_of
        # Only switches give an earlier run's tip a child (a continuing entry's parent is the
        # entry just before it), so the parents of switches are all the rule needs to remember.
        self._switched_to: set = set()
        self._leaf: Any = None  # what the next entry's parent is when it continues
        self._prev_ts: Any = None
        self._prev_leaf_record = False
        self._parent_of_first: Any = None  # parent of the last run's first entry (where it forked)
        self._runs: list[Run] = []  # the last three runs at most
        self._chain: dict | None = None  # the alternation being followed
        self._done: list[Alternation] = []
        self.confirmed: Alternation | None = None  # the alternation going on now, once confirmed

    def add(self, entry: Any, line: int, continues: bool = False) -> Alternation | None:
        """Feed the next entry; ``continues=True`` says it continues the previous entry *in the
        file* (entries in between were not fed: see ``find_alternations``)."""
        if not isinstance(entry, dict):
            return None
        eid = entry.get("id")
        if not isinstance(eid, str):
            return None
        pid = entry.get("parentId")
        etype = entry.get("type")
        ts = entry.get("timestamp")  # read as a date only at switches (most entries continue)
        found = None
        if not self._runs:
            self._runs.append(Run(line, eid, False, eid, line))
        elif continues or (isinstance(pid, str) or pid is None) and pid == self._leaf:
            run = self._runs[-1]
            run.tip_id, run.tip_line = eid, line
        else:
            found = self._switch(entry, eid, pid, etype, _ms(ts), line)
        self._prev_leaf_record = etype == "leaf"
        if self._prev_leaf_record:
            t = entry.get("targetId")
            self._leaf = t if isinstance(t, str) else None
        else:
            self._leaf = eid
        self._prev_ts = ts
        if self.confirmed is not None and self._chain is not None:
            self.confirmed = self._alternation()
        return found

    def _switch(self, entry: dict, eid: str, pid: Any, etype: Any, ms: float | None, line: int) -> Alternation | None:
        agent = self._agent_entry(entry)
        runs = self._runs
        prev_ms = _ms(self._prev_ts)
        close = ms is None or prev_ms is None or ms - prev_ms <= CLOSE_SECONDS * 1000
        resume = (len(runs) >= 2 and isinstance(pid, str) and pid == runs[-2].tip_id
                  and pid not in self._switched_to and etype != "branch_summary" and not self._prev_leaf_record
                  and close)
        if isinstance(pid, str):
            self._switched_to.add(pid)
        runs.append(Run(line, eid, agent, eid, line))
        if not resume:
            self._parent_of_first = pid
            self._close_chain()
            del runs[:-3]
            return None
        if self._chain is None:
            # the run the resume went around is the second writer's first
            first = runs[-2]
            # the first writer's part of the run before begins after the fork point (the parent of
            # the second writer's first entry): ``interleaved_sides`` finds its line
            self._chain = {"runs": [runs[-3], first, runs[-1]], "resumes": 1, "fork": self._parent_of_first,
                           "mid": int(first.first_is_agent) + int(agent)}
        else:
            self._chain["runs"].append(runs[-1])
            self._chain["resumes"] += 1
            self._chain["mid"] += int(agent)
        del runs[:-3]
        if self._chain["resumes"] == 2:
            self.confirmed = self._alternation()
            return self.confirmed
        return None

    def _agent_entry(self, entry: dict) -> bool:
        if entry.get("type") != "message":
            return False
        m = entry.get("message")
        if m is None and self._role_of is not None:
            role = self._role_of(entry)
        else:
            role = m.get("role") if isinstance(m, dict) else None
        return role in ("toolResult", "assistant")

    def _alternation(self) -> Alternation:
        ch = self._chain
        assert ch is not None
        runs = ch["runs"][1:]  # from the second writer's first run
        sides = tuple((r.first_line, r.tip_line, i % 2) for i, r in enumerate(ch["runs"]))
        last, before = runs[-1], runs[-2]
        return Alternation(runs[0].first_line, runs[0].first_id, last.first_line, last.first_id,
                           len(runs), ch["resumes"], ch["mid"],
                           (Tip(before.tip_id, before.tip_line), Tip(last.tip_id, last.tip_line)), sides,
                           ch["fork"])

    def _close_chain(self) -> None:
        if self._chain is not None and self._chain["resumes"] >= 2:
            self._done.append(self._alternation())
        self._chain = None
        self.confirmed = None

    def finish(self) -> list[Alternation]:
        """Every alternation, in file order (the open one included)."""
        self._close_chain()
        return list(self._done)


def find_alternations(entries: Any, lines: Any, role_of: Callable[[Any], Any] | None = None,
                      candidates: set | None = None) -> list[Alternation]:
    """The two-writer alternations of a file's entries (``lines``: their physical lines).
    ``role_of(entry)`` gives a message's role when the entries do not carry their message
    (streamed light entries); it is asked only at switches.  ``candidates``: the positions that
    may not follow the entry before (``EntryStore.not_following``); only those and the entries
    before them are fed to the rule, which gives the same answer (a continuing entry only moves
    its run's tip on) without building every entry."""
    rule = WriterRule(role_of)
    if candidates is None:
        for e, line in zip(entries, lines):
            rule.add(e, line)
        return rule.finish()
    lines = lines if isinstance(lines, (list, range)) or hasattr(lines, "__getitem__") else list(lines)
    n = len(entries)
    fed = sorted({0, n - 1, *candidates, *(p - 1 for p in candidates if p > 0)}) if n else []
    for p in fed:
        rule.add(entries[p], lines[p], continues=p not in candidates and p > 0)
    return rule.finish()


def continued_tip(alt: Alternation, path_lines: set) -> Tip | None:
    """The tip of ``alt`` that the current leaf's path (``path_lines``: physical lines of the
    leaf and its ancestors) goes through, or ``None`` when it goes through neither."""
    for tip in reversed(alt.tips):
        if tip.line in path_lines:
            return tip
    return None


def path_lines(session: Session) -> tuple[int | None, set]:
    """(physical line of the last entry, lines of it and its ancestors): where pi's cli goes on
    on the next resume (§5.1: the last entry is the leaf; §6.2: walk to the root)."""
    entries = session.entries
    if not len(entries):
        return None, set()
    cur = entries[-1]
    last = session.line_of(cur)
    seen: set = set()
    lines: set = set()
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        ln = session.line_of(cur)
        if ln is not None:
            lines.add(ln)
        pid = cur.get("parentId") if isinstance(cur, dict) else None
        cur = session.lookup(pid) if js.truthy(pid) else None
    return last, lines


def pi_resumes_text(alt: Alternation, session: Session) -> str:
    """What pi does with the file on the next resume, in words."""
    last, lines = path_lines(session)
    tip = continued_tip(alt, lines)
    if tip is None:
        return (f"on the next resume pi continues from the last line ({last}), which continues neither "
                "conversation")
    other = alt.tips[0] if tip is alt.tips[1] else alt.tips[1]
    return (f"on the next resume pi continues from the last line ({last}), the conversation through "
            f"{tip.id}, chosen by whichever process wrote last; the other, ending at {other.id}, stays a "
            "branch only /tree reaches")


def interleaved_sides(session: Session) -> dict:
    """``{id(entry): 0 | 1}`` for the entries of the two interleaved conversations of every
    alternation in ``session`` (side 0: the writer that was there first)."""
    entries, lines = session.entries, session.entry_lines
    alts = find_alternations(entries, lines, role_of=lambda e: _role(session.full(e)),
                             candidates=session.store.not_following())
    if not alts:
        return {}
    spans = []
    for alt in alts:
        fork = session.lookup(alt.fork_id) if isinstance(alt.fork_id, str) else None
        fork_line = session.line_of(fork) if fork is not None else None
        first, *rest = alt.runs
        lo = first[0] if fork_line is None or not first[0] <= fork_line <= first[1] else fork_line + 1
        spans.extend([(lo, first[1], first[2]), *rest])
    spans.sort()
    out: dict = {}
    k = 0
    for e, ln in zip(entries, lines):
        while k < len(spans) and spans[k][1] < ln:
            k += 1
        if k == len(spans):
            break
        if spans[k][0] <= ln <= spans[k][1]:
            out[id(e)] = spans[k][2]
    return out


def _role(e: Any) -> Any:
    m = e.get("message") if isinstance(e, dict) else None
    return m.get("role") if isinstance(m, dict) else None
