"""The explorer page (``pisess export --format html``): one offline HTML file of the whole tree.

The page's data is built here from the functions the commands use (``build_tree`` for the rows
and their marks, ``explorer.node_contexts`` for what the model sees at every node, ``place`` for
search placements, ``stats.fact_of`` for usage, ``validate`` for findings, ``secrets.redact``
for ``--redact``) and embedded as JSON; the page's script only looks facts up, replays the
context changes and draws.  Session text is data everywhere: the JSON escapes ``<`` (so neither
``</script>`` nor ``<!--`` can end or bend its element) and U+2028/U+2029, the script sets text,
never markup, and a Content-Security-Policy allows only the page's own script and style (by
hash) and ``data:`` images.

The assets are package files (``pisess/page/``): ``page.css``, ``page.js`` and markdown-it's
minified build (``markdown-it.min.js``, MIT, version in ``MARKDOWN_IT``), used with raw HTML off
and links limited to ``http(s):`` and ``mailto:``.
"""

from __future__ import annotations

import base64
import hashlib
import marshal
import tempfile
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson

from .. import js, parallel, versions
from ..js import UNDEF, get
from ..model import kinds
from ..model.placement import WHERE
from ..model.text import one_line
from ..model.trace import failure, finite, spent
from ..model.usage import usage_numbers
from ..reading.files import piece_length
from ..reading.images import image_chars
from ..reading.jsonl import js_exponents
from ..reading.lines import SDK_ONLY_TYPES, sdk_only_entry
from ..reading.session import Session
from .diff import SideTally, files_of_call, same_and_shape_keys, same_key, shape_key
from .explorer import Change, MessageTable, Walk, hashed_key, message_json, replay
from .stats import model_name


def redact_value(value: Any, **kwargs: Any) -> tuple:
    """``secrets.redact``, imported at the first ``--redact`` (its patterns cost 9 ms of the start
    of every export, where the page masks nothing)."""
    from .secrets import redact

    return redact(value, **kwargs)


MARKDOWN_IT = "14.3.3"  # the vendored pisess/page/markdown-it.min.js (npm markdown-it, MIT)
CHUNK_BYTES = 512 << 10  # messages per element of the page (page_html): the first view waits only for its own
PREVIEW = 64  # characters of an entry's one-line preview in the tree (what a row has room for)
# Members of a message the page neither draws nor needs, none of them sent to a provider (diff's
# MESSAGE_METADATA): left out, so the page stays smaller than the session (usage is in "did").
UNDRAWN = frozenset({"usage", "api", "responseId", "details"})
STRUCTURE = ("type", "id", "parentId", "timestamp")
# The message roles ``page_data`` reads in one pass (``visit_message``; the commonest three), the
# others as any entry (a test empties this and compares the pages)
_FAST_ROLES = ("assistant", "toolResult", "user")
KEEP = frozenset((*STRUCTURE, "targetId", "firstKeptEntryId", "fromId"))  # never masked: the tree's links


@dataclass(frozen=True)
class PageOptions:
    images: str = "omit"  # "omit": a placeholder with the type and size; "inline": each image once
    redact: bool = False  # mask what ``pisess secrets`` finds, before anything is written
    leaf: Any = UNDEF  # the node the page opens on (default: the session's leaf)


@dataclass(frozen=True)
class PageData:
    """The page's JSON (the message table, then the rest: both escaped for the page's elements,
    ``escape_json``) and what the summary says of it."""

    table: MessageTable
    rest: bytes  # the JSON object of everything else, after the table's member (escaped for the page)
    static_html: str  # the leaf's context as today's static page (``<noscript>``, ``--no-script``)
    title: str
    entries: int
    messages: int  # distinct messages stored
    fallback: int  # nodes whose context is build_context's answer written whole
    secrets: dict = field(default_factory=dict)  # kind -> values masked (or found, without redact)
    images: int = 0  # images written (inline) or left out (omit)
    leaf_id: Any = None  # the node the page opens on
    first_messages: frozenset = frozenset()  # what the page draws first (the leaf's context): written early
    # the pass's working values (the columns, the walk, the contexts): freed by whoever holds the
    # page, not as page_data returns (a million objects: 46 ms of the 200 MB session's export,
    # which a process that ends at once never spends: output.outlive)
    held: Any = field(default=None, repr=False, compare=False)


class _Images:
    """Image blocks as the page stores them: omitted (type and size), or each distinct one once in
    a table the blocks point into."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.table: list = []
        self.index: dict = {}
        self.count = 0

    def block(self, b: dict) -> dict:
        self.count += 1
        chars, pad = image_chars(b.get("data"))
        out = {k: v for k, v in b.items() if k != "data"}
        out["bytes"] = max(0, chars * 3 // 4 - pad)
        if self.mode == "inline":
            from ..reading.images import elided, read_data

            data = b.get("data")
            cut = elided(data)
            if cut is not None:
                data = read_data(cut)
            if isinstance(data, str):
                got = self.index.get(data)
                if got is None:
                    got = self.index[data] = len(self.table)
                    self.table.append(data)
                out["ref"] = got
        return out


def _lean_images(v: Any, images: _Images) -> Any:
    """``v`` with each image block's base64 out of it (see ``_Images``)."""
    if isinstance(v, dict):
        if v.get("type") == "image" and "data" in v:
            return images.block(v)
        return {k: _lean_images(x, images) for k, x in v.items()}
    if isinstance(v, list):
        return [_lean_images(x, images) for x in v]
    return v


class _Messages:
    """What the page stores of each message (``MessageTable``'s encoder): the message without the
    members it does not draw (``UNDRAWN``) and its images (``_Images``), masked with ``redact``;
    and per message stored, its classes of diff's keys (``same``, ``shape``: Compare's "same" and
    "changed").  The common message (an object, no image, nothing to mask) is written to JSON
    once: its digest and the stored form come from that one dump, its size (the whole message's
    JSON, ``approx_tokens``) from it and the few members left out."""

    def __init__(self, images: _Images, redact: bool, count: Any) -> None:
        self.images = images
        self.redact = redact
        self.count = count  # (the secrets masked, with redact)
        self.same: list = []  # per message stored: the digest of diff's key (two messages are "the same" by it)
        self.shape: list = []  # per message stored: the digest of diff's key without the text ("changed" when equal)
        self.texts = array("q")  # per message stored: its text's length where it has a text to leave out, else -1
        self.pres = array("q")  # per message stored: its pre-key (``_text_facts``)
        self._pres: set = set()  # the pre-keys of the messages stored here
        self._alike: set = set()  # (pre-key, text length) of the messages with a text stored here

    def key(self, m: Any) -> tuple:
        """``(digest, size, state)`` of message ``m``: equal digests for messages the page cannot
        tell apart (same stored form, size and diff keys)."""
        if type(m) is dict and not self.redact:
            left = [k for k in m if k in UNDRAWN] if not UNDRAWN.isdisjoint(m) else ()
            if left:
                lean = m.copy()  # (a C copy, then the few members left out: not a Python loop over all)
                for k in left:
                    del lean[k]
            else:
                lean = m
            try:
                raw = orjson.dumps(lean, option=orjson.OPT_STRICT_INTEGER)
                out = orjson.dumps({k: m[k] for k in left}) if left else b""  # (the members left out, as an object)
            except TypeError:  # (a big integer, a lone surrogate: as pi's JSON.stringify writes them, below)
                raw = b""
            if raw and b'"image"' not in raw:
                # the whole message's JSON: the two objects' members, one comma between them where
                # both have some (the order of the members does not change the length)
                size = len(raw) + len(out) - 1 - (raw == b"{}") if left else len(raw)
                # (keyed by its stored form and size: two that share them differ at most in members
                # the page does not draw, nor diff's keys read)
                return hashed_key(raw, size), size, (raw,)
        whole = message_json(m)
        return hashlib.sha256(whole).digest(), len(whole), whole

    def stored_form(self, m: Any, state: Any) -> bytes:
        """What ``store`` would return for ``m``, without storing it: for the table to compare two
        messages whose key (a ``hashed_key``: only ``key``'s common case makes one) is the same."""
        return escape_json(state[0])

    def store(self, m: Any, state: Any) -> bytes:
        """The stored form of ``m``, new to the table (``state`` from ``key``), escaped for the
        page's element already (``escape_json``: one message at a time, where the bytes are in
        the CPU's cache, instead of four passes over the whole)."""
        if type(state) is tuple:
            # stored as orjson wrote it, where members were left out too (not as JSON.stringify
            # writes its numbers, ``js_exponents``: the page's JSON.parse reads the same values
            # either way, and ``settle`` reads back from it what was dumped)
            stored = state[0]
            length, pre = _text_facts(m)
            if length < 0:
                # (no text: its shape is its same key; both wait for ``settle`` where its pre-key is
                # met first, as a text's do: most such messages are an assistant's calls alone)
                same = hashlib.sha256(same_key(m)).digest() if pre in self._pres else _LATER
                self._classes(same, same, length, pre)
            else:
                # its diff keys only tell it apart from messages of its pre-key (and text length):
                # made when one is met (here, or in ``settle`` from the stored form, which holds all
                # of it: UNDRAWN is diff's metadata)
                shape = hashlib.sha256(shape_key(m)).digest() if pre in self._pres else _LATER
                same = hashlib.sha256(same_key(m)).digest() if (pre, length) in self._alike else _LATER
                self._classes(same, shape, length, pre)
            return escape_json(stored)
        same_json, shape_json = same_and_shape_keys(m)
        length, pre = _text_facts(m) if type(m) is dict else (-1, 0)
        same_digest = hashlib.sha256(same_json).digest()
        self._classes(same_digest, same_digest if shape_json is None else hashlib.sha256(shape_json).digest(),
                      -1 if shape_json is None else length, pre)
        v = _lean_images(m, self.images) if b'"image"' in state else m
        if isinstance(v, dict) and not UNDRAWN.isdisjoint(v):
            v = {k: x for k, x in v.items() if k not in UNDRAWN}
        elif v is m and not self.redact:
            return escape_json(state)
        if self.redact:
            v, hits = redact_value(v)
            self.count(hits)
        return escape_json(_dumps(v))

    def _classes(self, same: bytes, shape: bytes, length: int, pre: int) -> None:
        """The next stored message's ``same`` and ``shape`` digests (``_LATER``: made in
        ``settle``), its text length (-1: no text to leave out, its shape is its ``same``) and
        pre-key (``_text_facts``)."""
        self.same.append(same)
        self.shape.append(shape)
        self.texts.append(length)
        self.pres.append(pre)
        self._pres.add(pre)
        if length >= 0:
            self._alike.add((pre, length))

    def part(self) -> tuple:
        """What a forked child's encoder sends back (``take``): its messages' classes, as flat values."""
        return b"".join(self.same), b"".join(self.shape), self.texts, self.pres

    def take(self, part: tuple, remap: list) -> None:
        """The classes of another encoder's messages (``part()`` of it), as its table's were taken
        (``MessageTable.take``'s ``remap``): the ones new here follow this encoder's."""
        their_same, their_shape, their_texts, their_pres = part
        base = len(self.same)
        new = [j for j, i in enumerate(remap) if i >= base]  # (numbered on from here, in their order)
        self.same += [their_same[j * 32:j * 32 + 32] for j in new]
        self.shape += [their_shape[j * 32:j * 32 + 32] for j in new]
        if len(new) == len(their_texts):
            self.texts.extend(their_texts)
            self.pres.extend(their_pres)
        else:
            self.texts.extend(array("q", [their_texts[j] for j in new]))
            self.pres.extend(array("q", [their_pres[j] for j in new]))

    def settle(self, table: MessageTable) -> None:
        """Each digest that ``store`` left for later: a message whose pre-key no other message
        has has a shape no other has (the pre-key is a function of the shape key), and one whose
        pre-key and text length no other has is the same as none (two the same have both alike):
        a mark of its own does; the others' from their stored forms (the lean message as it was
        dumped: ``orjson`` reads back what it wrote, and diff's keys leave out what the stored
        form leaves out, and more)."""
        from collections import Counter

        same, shape, texts, pres = self.same, self.shape, self.texts, self.pres
        later = [i for i, d in enumerate(same) if d == _LATER]  # (a "changed" digest waits only where its "same" does)
        if not later:
            return
        shared = {pre for pre, count in Counter(pres).items() if count > 1}
        asked = []
        for i in later:  # (most: a pre-key of its own, so neither class is shared)
            if pres[i] in shared:
                asked.append(i)
            else:  # (a class of its own: no digest is a number)
                if shape[i] == _LATER:
                    shape[i] = i
                same[i] = i
        # (two alike share a pre-key)
        alike = Counter((pre, length) for pre, length in zip(pres, texts) if pre in shared) if asked else {}
        for i in asked:
            if texts[i] < 0:  # (no text: its shape is its same key)
                digest = hashlib.sha256(same_key(orjson.loads(table.get(i)))).digest()
                shape[i] = digest
                same[i] = digest if alike[pres[i], -1] > 1 else i
                continue
            m = None
            if shape[i] == _LATER:
                m = orjson.loads(table.get(i))
                shape[i] = hashlib.sha256(shape_key(m)).digest()
            if alike[pres[i], texts[i]] > 1:
                same[i] = hashlib.sha256(same_key(orjson.loads(table.get(i)) if m is None else m)).digest()
            else:
                same[i] = i


def _text_facts(m: dict) -> tuple[int, int]:
    """Of message ``m``: the length of its text (its content, or its text blocks', and its
    summary; alike for two messages with one ``same_key``), or -1 where it has no text to leave
    out (its shape key is then its ``same_key``); and its pre-key, a hash of its role, tool call id,
    tool calls' ids and thinking blocks' lengths and signatures: equal for two messages whose shape
    keys are equal (or the one's shape key the other's ``same_key``), and cheap.  (Without the
    thinking, the 200 MB session's 4,870 replies of text and thinking shared one pre-key, and each
    had its keys made at once.)"""
    role, call, content, summary = m.get("role"), m.get("toolCallId"), m.get("content"), m.get("summary")
    texted = "summary" in m or (role == "bashExecution" and "output" in m)
    length = len(summary) if isinstance(summary, str) else 0
    calls: Any = ()
    if isinstance(content, str):
        texted = texted or bool(content)
        length += len(content)
    elif isinstance(content, list):
        calls = []
        for b in content:
            if isinstance(b, dict):
                t = b.get("type")
                if t == "text":
                    texted = True
                    if isinstance(text := b.get("text"), str):
                        length += len(text)
                elif t == "toolCall":
                    c = b.get("id")
                    calls.append(c if type(c) is str else None)
                elif t == "thinking":  # (kept in the shape key: it tells most replies apart)
                    c = b.get("thinking")
                    calls.append(len(c) if type(c) is str else -1)
                    c = b.get("thinkingSignature")
                    calls.append(c if type(c) is str else None)
        calls = tuple(calls)
    pre = hash((role if type(role) is str else None, call if type(call) is str else None, calls))
    return (length if texted else -1), pre


_LATER = bytes(32)  # (a message's digest to be made in ``settle``; crosses a pipe as 32 bytes)


def _key_text(v: Any) -> str:
    """A tool call id as the page matches calls to results (``js.key``, as a string)."""
    return v if isinstance(v, str) else "\u0000" + repr(js.key(v))


def _trace_item(e: Any, call_code: dict) -> Any:
    """What entry ``e`` is in a trace (``trace.trace``'s loop, whose grouping the page replays):
    ``["u"]`` a turn's prompt, ``["s", tokens in, out, cost, error, [call]]`` a step (``trace._step``'s
    figures; its duration and results left to the path; the calls are its message's ``toolCall``
    blocks, in order), ``["r", call, failed]`` a tool result, or 0.  A call is a number per distinct
    call id (``call_code``: the page only matches calls to results by it).  Words and texts are the
    entry's own columns (its kind word, its preview: a step's line in the page is its preview, not
    trace's text of the reply alone)."""
    if not isinstance(e, dict):
        return 0
    t = e.get("type")
    m = e.get("message") if t == "message" else None
    role = get(m, "role") if isinstance(m, dict) else None
    if role == "user":  # (its prompt is its preview: kinds.message_preview, the page's preview column)
        return ["u"]
    if role == "toolResult":
        key = _key_text(get(m, "toolCallId"))
        return ["r", call_code.setdefault(key, len(call_code)), get(m, "isError") is True]
    if role == "assistant" and isinstance(m, dict):
        return _assistant_facts(m, True, call_code)[0]
    if role == "bashExecution" or t in ("compaction", "branch_summary", "custom_message"):
        tokens_in, tokens_out, cost = spent(e)
        return ["s", tokens_in, tokens_out, cost, None, []]
    return 0


def _did(e: Any, pi_version: str) -> Any:
    """What entry ``e`` adds to a side of ``diff``'s table (``diff.summarize`` of it alone, its
    ``SideTally``; the page sums the entries after the parting point): only the parts that are not
    zero."""
    if not isinstance(e, dict):
        return 0
    m = e.get("message") if e.get("type") == "message" else None
    if type(m) is dict:  # the commonest three, as SideTally counts them (fact_of takes no usage of a user message)
        role = m.get("role")
        if role == "user":
            return {"u": 1}
        if role == "toolResult" and "usage" not in m:
            return {"f": 1} if m.get("isError") is True else 0
        if role == "assistant":
            return _assistant_facts(m, versions.since(pi_version, versions.SYSTEM_MESSAGES), {})[1]
    return _did_tallied(e, pi_version)


def _assistant_facts(m: dict, response_model: bool, call_code: dict) -> tuple[list, dict, bool]:
    """``_trace_item``, ``_did`` and ``_untexted`` of an assistant message ``m``'s entry, its usage
    read once and its content in one pass: the step (``trace.spent``'s figures), what it adds to
    a side as ``SideTally.add`` counts it (``fact_of``: named by its ``responseModel`` when
    ``response_model``, pi 1.6's rule; its level its own, none inherited), whether pi's page
    leaves it out."""
    usage = usage_numbers(m.get("usage"))
    content = m.get("content")
    codes: list = []
    calls: dict = {}
    files: list = []
    has_text = isinstance(content, str) and bool(content.strip())
    for b in content if isinstance(content, list) else ():
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "toolCall":
            codes.append(call_code.setdefault(_key_text(b.get("id")), len(call_code)))
            raw = b.get("name")
            name = raw if isinstance(raw, str) else str(js.to_string(raw))
            calls[name] = calls.get(name, 0) + 1
            for f in files_of_call(name, b.get("arguments")):
                if f not in files:
                    files.append(f)
        elif t == "text" and not has_text:
            text = b.get("text")
            has_text = isinstance(text, str) and bool(text.strip())
    got = usage or (None, None, None, None, None)
    stop = m.get("stopReason")
    tokens_in, tokens_out, cost = got[0], got[1], got[4]
    step = ["s", tokens_in if type(tokens_in) is int else int(finite(tokens_in)),
            tokens_out if type(tokens_out) is int else int(finite(tokens_out)), float(finite(cost)), failure(m), codes]
    did: dict = {"a": 1}
    if usage is not None:
        cost = round(0.0 + (usage[4] or 0), 10)  # (the tally's sum starts at 0.0: a whole number comes out a float)
        if cost:
            did["$"] = cost
        tokens = [usage[0] or 0, usage[1] or 0, usage[2] or 0, usage[3] or 0]
        if any(tokens):
            did["t"] = tokens
    model = m.get("responseModel") if response_model and m.get("responseModel") is not None else m.get("model")
    did["m"] = [model_name(m.get("provider"), model)]
    level = m.get("thinkingLevel")
    if isinstance(level, str) and level:
        did["l"] = [level]
    if files:
        did["w"] = files
    if calls:
        did["k"] = calls
    return step, did, _left_out(has_text, stop)


def _did_tallied(e: dict, pi_version: str) -> Any:
    """``_did`` of any entry, from its ``SideTally``."""
    one = SideTally()
    one.add(e, pi_version)
    out: dict = {}
    for key, v in (("u", one.user), ("a", one.assistant), ("f", one.failed), ("c", one.compactions),
                   ("e", one.edits), ("$", round(one.cost, 10))):
        if v:
            out[key] = v
    if any(one.tokens.values()):
        out["t"] = list(one.tokens.values())  # input, output, cacheRead, cacheWrite
    for key, names in (("m", one.models), ("l", one.levels), ("w", one.files)):
        if names:
            out[key] = names
    if one.calls:
        out["k"] = one.calls
    return out or 0


PAGE_SPLIT_MIN = 2 << 20  # a session this big (bytes) has its entries' second half taken in a forked child (10,000: 3.7 MB)
# What the page's pass costs an entry beside its bytes, as the bytes of the file that cost as much
# (measured: about 40 us an entry and 10 ns a byte; the 200 MB session's entries average 3.6 kB)
ENTRY_COST = 4096


def _split_point(session: Session, options: PageOptions, spool: Any) -> int | None:
    """The first position of the second half of the page's pass over the entries (by its work:
    the entries' bytes and ``ENTRY_COST`` an entry), where that pass is shared with a forked
    child (``parallel``: two CPUs, forking allowed, the messages spooled; images omitted, whose
    references a child would number on its own); else ``None``."""
    if spool is None or options.images != "omit" or parallel.workers() < 2:
        return None
    n = len(session.store)
    if n < 2 or session.raw.size < PAGE_SPLIT_MIN:
        return None
    offsets, _ = session.store.spans()
    half = bisect_left(range(n), (offsets[n - 1] + ENTRY_COST * (n - 1)) // 2,
                       key=lambda i: offsets[i] + ENTRY_COST * i)
    return half if 0 < half < n else None


def _child_part(half: int, walk: Walk, table: MessageTable, encoder: _Messages, images: _Images,
                facts: dict) -> bytes | dict | None:
    """What a forked child that took the entries from ``half`` on sends back (``_take_child_part``):
    its walk's and table's parts, its messages' classes and ``facts`` (``page_data``'s columns, codes
    and tallies, from ``half`` on); ``None`` where a value would not survive the pipe.  Written with
    ``marshal`` (these are plain builtin values: a third of pickle's time to write, three quarters
    to read, and the writing is the last of the child's work the page waits for), the arrays as
    their bytes; pickled (whole, by ``parallel.Child``) where ``marshal`` refuses a value."""
    got = walk.part(half)
    if got is None:
        return None
    f = facts
    part = {"walk": got, "table": _flat(table.part()), "classes": _flat(encoder.part()),
            "found": f["found"], "images": images.count, "models": f["models"],
            "codes": (list(f["type_code"]), list(f["word_code"]), list(f["model_code"]), list(f["call_code"])),
            "columns": [f[k][half:] for k in ("ids", "types", "word_of", "preview", "times", "traced", "did")],
            "labels": f["labels"], "compactions": f["compactions"], "untexted": f["untexted"], "own": f["own"],
            "views": f["views"]}
    try:
        return marshal.dumps(part, _MARSHAL_VERSION)
    except ValueError:  # (a type it does not take, a value nested too deep: pickle's turn)
        return part


# marshal's format 2: without the references of 3 and later (no object in a part is met twice by
# identity that the other side needs as one), which cost a table of every object written: the
# 200 MB session's part of 10 MB was written in 0.069 s, not 0.104 s, and read in 0.035 s, not 0.049 s
_MARSHAL_VERSION = 2


def _flat(part: tuple) -> tuple:
    """A table's or an encoder's ``part`` with its arrays as their bytes (``marshal`` would write
    them so, and read them back as bytes), and the places of those arrays: ``_unflat`` makes them
    arrays again (the places travel with the part, not restated where it is read)."""
    return tuple(x.tobytes() if type(x) is array else x for x in part), \
        tuple(i for i, x in enumerate(part) if type(x) is array)


def _unflat(flat: tuple) -> tuple:
    """``_flat``'s part with its arrays (of 64-bit integers) made again."""
    part, arrays = flat
    out = list(part)
    for i in arrays:
        out[i] = array("q")
        out[i].frombytes(part[i])
    return tuple(out)


def _take_child_part(sent: bytes | dict, half: int, walk: Walk, table: MessageTable, child_spool: Any, encoder: _Messages,
                     images: _Images, facts: dict) -> None:
    """Add what a child sent (``_child_part``) to what was taken here of the entries before ``half``,
    as if they had been taken here after them: its messages numbered on from this table's (their
    stored forms from ``child_spool``), its codes (types, words, models, tool calls) mapped to the
    ones given here, its tallies added."""
    f = facts
    if type(sent) is bytes:
        sent = marshal.loads(sent)
    assert type(sent) is dict
    remap = table.take(_unflat(sent["table"]), child_spool)
    encoder.take(_unflat(sent["classes"]), remap)
    walk.take(half, sent["walk"], remap)
    for tally, theirs in ((f["found"], sent["found"]), (f["models"], sent["models"])):
        for name, c in theirs.items():
            tally[name] = tally.get(name, 0) + c
    images.count += sent["images"]
    their_types, their_words, their_models, their_calls = sent["codes"]
    type_code, word_code, model_code, call_code = f["type_code"], f["word_code"], f["model_code"], f["call_code"]
    type_map = [type_code.setdefault(k, len(type_code)) for k in their_types]
    word_map = []
    for key in their_words:
        code = word_code.get(key)
        if code is None:
            code = word_code[key] = len(f["words"])
            f["words"].append(key[0])
            f["styles"].append(key[1])
        word_map.append(code)
    model_map = [model_code.setdefault(k, len(model_code)) for k in their_models]
    call_map = [call_code.setdefault(k, len(call_code)) for k in their_calls]
    c_ids, c_types, c_words, c_preview, c_times, c_traced, c_did = sent["columns"]
    f["ids"][half:] = c_ids
    f["types"][half:] = [type_map[c] for c in c_types]
    f["word_of"][half:] = [word_map[c] for c in c_words]
    f["preview"][half:] = c_preview
    f["times"][half:] = c_times
    _recode(c_traced, call_map)
    f["traced"][half:] = c_traced
    for d in c_did:
        if d and "m" in d:
            d["m"] = [model_map[c] for c in d["m"]]
    f["did"][half:] = c_did
    f["labels"].update(sent["labels"])
    f["compactions"].update(sent["compactions"])
    f["untexted"].extend(sent["untexted"])
    f["own"].extend(sent["own"])
    f["views"].update(sent["views"])


# --- the pass taken during the open's one parse --------------------------------------------------

_ID_WIDTH = 8  # a part's guess at ``Session.id_width`` (its least): a non-message entry's preview names ids so


def _no_secrets(matches: list) -> None:  # (a part takes no redacted page: nothing is counted)
    pass


class _PartRead:
    """What ``Rules.of`` and ``derive_state`` ask of a session, for a part of the file read before
    its session is: the cli reader's view under rules ``pi_version`` (``PageGather.fits`` checks the
    session is read so); an entry that throws has no line to name here (only that it throws is kept)."""

    reader = "cli"
    path = ""

    def __init__(self, pi_version: str) -> None:
        self.pi_version = pi_version

    def line_of(self, entry: Any) -> None:
        return None

    def full(self, entry: Any) -> Any:
        return entry


class PageGathering:
    """``open_session(gather=...)`` for an explorer page (``page_data(gathered=...)``): the page's
    pass over the entries taken during the open's one parse of the file, a part at a time, instead
    of parsing every line again after it (the 200 MB session's lines: 0.5 CPU-s).  The first part's
    messages go to one spool, a later part's (the half a forked child scans) to the other; both are
    made here, before the scan forks, and closed by ``close`` (after the page is written)."""

    # (compact.scan_compact) the first part takes more: the later one, a forked child's, writes its
    # page's part and the index's, which the first waits for
    first_share = 0.54

    def __init__(self, pi_version: str, reader: str = "auto") -> None:
        self.rules = versions.of_reader("cli", versions.parse(pi_version))
        self.auto = reader == "auto"  # (the reader is chosen by what the file holds: see PageGather.add_all)
        self.spools = (tempfile.TemporaryFile(prefix="pisess-page-"), tempfile.TemporaryFile(prefix="pisess-page-"))

    def __call__(self, start: int) -> PageGather:
        return PageGather(self.spools, self.rules, start == 0, self.auto)

    def close(self) -> None:
        for spool in self.spools:
            spool.close()


class PageGather:
    """The page's pass over the entries of a part of the file (``PageGathering``): ``add_all`` takes
    them as the scan parses them, with ``page_data``'s own ``visit`` and ``Walk.project_all``; a later
    part (a forked child's) crosses the pipe as ``_child_part`` writes it and is taken as
    ``_take_child_part`` takes it (``extend``).  What needs the whole session waits for it
    (``page_data``: labels, the originals of the entries an edit targets, the previews of
    non-message entries where the ids' width is not 8).

    A part gives up (``void``: the page is then made as without it) on a line the scan cut the
    images out of (the page reads those as ``complete_at`` does), on a record only the SDK writes
    where the reader is chosen by the file (``auto``: the SDK's reader then), and where its values
    would not cross the pipe; ``fits`` says whether the session was read as the part assumed."""

    def __init__(self, spools: tuple, rules: str, first: bool, auto: bool = False) -> None:
        self.first = first
        self.auto = auto
        self.void = False
        self.count = 0  # entries taken
        self.rules = rules
        self.images = _Images("omit")
        self.encoder = _Messages(self.images, False, _no_secrets)
        self.table = MessageTable(self.encoder, spools[0] if first else spools[1])
        self.later_spool = spools[1]
        self.walk = Walk.of_part(_PartRead(rules), self.table)
        self.facts, self._visit = _pass_of(0, PageOptions(), rules, _ID_WIDTH, None, _no_secrets, {})
        self._no_targets: frozenset = frozenset()  # (the ids edits target: left to page_data, Walk.adopt)

    def add_all(self, values: list, cut: bool = False) -> None:
        """Take the next entries of the part (complete, in file order)."""
        if self.void:
            return
        if cut or (self.auto and _sdk_only_in(values)):
            # (a lean line is read back as the page reads it; a record only the SDK writes makes
            # --reader auto read the file with the SDK's reader: the page's own pass then)
            self._give_up()
            return
        k = len(values)
        for name, blank in _COLUMNS:
            self.facts[name] += [blank] * k
        self.walk.grow(k)
        try:
            self.walk.project_all(enumerate(values, self.count), self._visit, self._no_targets)
        except Exception:  # noqa: BLE001 - a gatherer never fails the read: the page's own pass, after it, says what is wrong
            self._give_up()
            return
        self.count += k

    def _give_up(self) -> None:
        """Void: nothing of the part is used, and what it took is let go at once (the rest of the
        scan, then the page's own pass, run without it)."""
        if not self.void:
            self.void = True
            self.table.close()
        self.facts = {}
        self.walk = self.table = self.encoder = self.images = None  # type: ignore[assignment]

    def extend(self, later: PageGather | _SentPart) -> None:
        """Take ``later``, the part after this one, as if its entries had been taken here."""
        if self.void or later.void:
            self._give_up()
            return
        sent = later.sent
        if sent is None:
            self._give_up()
            return
        half = self.count
        _take_child_part(_shifted(sent, half), half, self.walk, self.table, self.later_spool, self.encoder,
                         self.images, self.facts)
        self.walk.n = half + later.count
        self.count = half + later.count

    @property
    def sent(self) -> bytes | dict | None:
        """This part as ``_child_part`` writes a forked child's (``None``: void, or it would not
        cross the pipe)."""
        return None if self.void else _child_part(0, self.walk, self.table, self.encoder, self.images, self.facts)

    def __reduce__(self) -> tuple:
        # (a forked child's part crosses the pipe inside its index: written as _child_part writes it)
        return _SentPart, (self.sent, self.void, self.count)

    def fits(self, session: Session, options: PageOptions) -> bool:
        """Was the session read as this (first, whole) part assumed, for the page ``options`` ask?"""
        return (not self.void and self.first and self.count == len(session.store) and session.reader == "cli"
                and session.pi_version == self.rules and options.images == "omit" and not options.redact
                and not any(k is not None and type(k) is not str for k in self.walk.keys))  # (see Walk.part)

    def release(self) -> None:
        """Let go of what the part took (``page_data``: it does not fit; the spools are the
        ``PageGathering``'s to close)."""
        self._give_up()


def _sdk_only_in(values: list) -> bool:
    """Is one of ``values`` an entry only pi's SDK writes (``lines.sdk_only_entry``)?"""
    for v in values:
        if type(v) is dict and v.get("type") in _SDK_CANDIDATES and sdk_only_entry(v):
            return True
    return False


_SDK_CANDIDATES = frozenset((*SDK_ONLY_TYPES, "compaction"))


class _SentPart:
    """A later part of a ``PageGather`` as it came over the pipe (``PageGather.__reduce__``)."""

    def __init__(self, sent: bytes | dict | None, void: bool, count: int) -> None:
        self.sent, self.void, self.count = sent, void, count


def _shifted(sent: bytes | dict, half: int) -> dict:
    """A later part's ``_child_part`` with the positions it names (numbered from its first entry)
    numbered from ``half``."""
    if type(sent) is bytes:
        sent = marshal.loads(sent)
    assert type(sent) is dict
    if not half:
        return sent
    for key in ("labels", "compactions", "views"):
        sent[key] = {p + half: v for p, v in sent[key].items()}
    for key in ("untexted", "own"):
        sent[key] = [p + half for p in sent[key]]
    walk = sent["walk"]
    for key in ("edits", "originals"):
        walk[key] = {p + half: v for p, v in walk[key].items()}
    return sent


def _add_what_needs_the_session(s: Session, walk: Walk, facts: dict) -> None:
    """What a pass taken during the open (``PageGather``) left for the session: the labels, and the
    previews of non-message entries where the ids' width is not the part's guess (``Walk.adopt``
    adds the originals of the entries an edit targets)."""
    if s.labels:
        labels = facts["labels"]
        for pos, k in enumerate(walk.keys):
            hit = s.labels.get(k)
            if hit and hit[1] is not None:
                labels[pos] = hit[1]
    if s.id_width != _ID_WIDTH:
        preview = facts["preview"]
        for pos, e in s.complete_at([p for p, t in enumerate(walk.types) if t != "message"]):
            try:
                preview[pos] = kinds.preview_line(e, s.id_width, PREVIEW)
            except Exception:  # noqa: BLE001 - as visit's
                preview[pos] = ""


def _recode(items: list, call_map: list) -> None:
    """A child's trace items (``_trace_item``'s), their call numbers made the ones given here, in
    place (the items are the part's own, just read)."""
    for item in items:
        if item and item[0] != "u":
            if item[0] == "r":
                item[1] = call_map[item[1]]
            else:
                item[5] = [call_map[c] for c in item[5]]


def _harness_starts(parents: list, ids: list, compactions: dict) -> list:
    """Per position, where the SDK (harness) reader's path to that node begins when its stop rule
    cut it (``paths.path_to_checkpoint``: a compaction with a ``retainedTail`` ends the walk at
    itself, one without at its ``firstKeptEntryId``, an older compaction met first taking over),
    else -1 (the path runs from a root, or the node is reached from no root).  ``compactions``:
    position -> (retainedTail truthy, firstKeptEntryId or None).  Ancestors first: linear."""
    n = len(parents)
    children: list = [[] for _ in range(n)]
    order = [p for p in range(n) if parents[p] < 0]
    for p in range(n):
        if parents[p] >= 0:
            children[parents[p]].append(p)
    start = [-1] * n  # the first entry of the walk to p (the root when nothing cut it)
    k = 0
    while k < len(order):
        p = order[k]
        k += 1
        order.extend(children[p])
        q = parents[p]
        if p not in compactions:
            start[p] = p if q < 0 else start[q]
            continue
        retained, first_kept = compactions[p]
        if retained or q < 0:
            start[p] = p
        elif first_kept is None:
            start[p] = start[q]
        else:  # up to the first kept entry, unless an older compaction's rule takes over on the way
            while not (ids[q] == first_kept or q in compactions or parents[q] < 0):
                q = parents[q]
            start[p] = start[q] if ids[q] != first_kept and q in compactions else q
    return [s if s >= 0 and parents[s] >= 0 else -1 for s in start]


def _untexted(m: dict) -> bool:
    """An assistant message with no text that neither failed nor was aborted: pi's own export
    page (template.js, filterNodes) leaves it out of its tree in every filter mode."""
    if get(m, "role") != "assistant":
        return False
    c = get(m, "content")
    if isinstance(c, str):
        has_text = bool(c.strip())
    else:
        has_text = isinstance(c, list) and any(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip()
            for b in c)
    return _left_out(has_text, get(m, "stopReason"))


def _left_out(has_text: bool, stop: Any) -> bool:
    """pi's page's rule for an assistant message: no text, and it neither failed nor was aborted."""
    return not has_text and not (js.truthy(stop) and stop not in ("stop", "toolUse"))


def _change_json(c: Change, pos: int) -> Any:
    """A change as the page reads it: 0 (nothing), [messages] (the node's own entry appends them:
    the usual change, written short), or {r: reset, p: [[i, seg]], a: [seg], e: error}; a segment
    is [entry, [messages], mark, [originals]]."""
    if len(c.appended) == 1 and not c.reset and not c.replaced and c.error is None:
        only = c.appended[0]
        if only.entry == pos and not only.mark:
            return list(only.messages)
    if c.error is not None:
        return {"e": c.error}
    if not c.reset and not c.replaced and all(not s.messages and not s.mark for s in c.appended):
        return 0 if not c.appended else {"a": [[s.entry, []] for s in c.appended]}
    out: dict = {}
    if c.reset:
        out["r"] = 1
    if c.replaced:
        out["p"] = [[i, _seg(s)] for i, s in c.replaced]
    if c.appended:
        out["a"] = [[s.entry, s.messages] if not s.mark else _seg(s) for s in c.appended]  # (a tuple: an array)
    return out


def _seg(s: Any) -> list:
    if s.mark:
        return [s.entry, list(s.messages), s.mark, list(s.originals)]
    return [s.entry, list(s.messages)]


def placements(session: Session) -> list:
    """Per position, where search places the entry (``place``), as its index in ``WHERE``."""
    from ..model.placement import place

    code = {w: i for i, w in enumerate(WHERE)}
    return [code[w] for w in place(session, branches=False).where]  # (the page finds its branches itself)


# the page's columns with a value per entry, and what an entry holds in each before it is taken
_COLUMNS: tuple[tuple[str, Any], ...] = (("ids", None), ("types", None), ("word_of", 0), ("preview", ""),
                                         ("times", None), ("traced", 0), ("did", 0))


def _pass_of(n: int, options: PageOptions, pi_version: str, id_width: int, session: Session | None,
             count: Any, found: dict) -> tuple[dict, Any]:
    """The page's columns for ``n`` entries (``facts``) and ``visit(pos, entry)``, which fills them
    in for one entry (``Walk.project_all`` calls it before it projects the entry).  ``session``:
    where labels are looked up (``None``: a part read before the session, ``PageGather``; then
    ``_add_what_needs_the_session`` adds them); ``id_width``: the width of the ids a non-message
    entry's preview names; ``count``: given the secrets found, with ``redact``, which it tallies in
    ``found``.  A part's columns grow in place (``PageGather.add_all``)."""
    ids, types, word_of, preview, times, traced, did = ([blank] * n for _, blank in _COLUMNS)
    words: list = []
    word_code: dict = {}
    styles: list = []
    labels: dict = {}
    type_code: dict = {}
    model_code: dict = {}
    call_code: dict = {}  # a tool call id (_key_text) -> its number in the trace
    own_message: list = []  # message entries whose view cannot be their projection (see page_data)
    untexted: list = []  # assistant messages pi's export page never lists (see _untexted)
    compactions: dict = {}  # position -> (retainedTail truthy, firstKeptEntryId): _harness_starts
    models: dict = {}
    views: dict = {}  # position -> the members of a non-message entry

    response_model = versions.since(pi_version, versions.SYSTEM_MESSAGES)  # (fact_of's naming rule)
    role_word: dict = {}  # a message role -> its word's code (the kind of a message entry is its role's)
    labelled = session.labels if session is not None else None
    label_of = session.label_of if session is not None else None

    def word_code_of(k: kinds.Kind) -> int:
        """The number of ``k``'s word and style in the page's ``words`` and ``styles``."""
        code = word_code.get((k.word, k.style))
        if code is None:
            code = word_code[(k.word, k.style)] = len(words)
            words.append(k.word)
            styles.append(k.style)
        return code

    def visit_message(pos: int, e: dict, m: dict, role: str) -> None:
        """``visit`` of a user's, an assistant's or a tool result's message entry, without redact:
        the same columns, each fact read once (the assistant's usage for its step and its tally)."""
        ids[pos] = e.get("id")
        code_t = type_code.get("message")
        if code_t is None:
            code_t = type_code["message"] = len(type_code)
        types[pos] = code_t
        code = role_word.get(role)
        if code is None:
            code = role_word[role] = word_code_of(kinds.of_entry(e))
        word_of[pos] = code
        try:
            preview[pos] = kinds.message_line(m, PREVIEW, id_width)
        except Exception:  # noqa: BLE001 - as visit's
            preview[pos] = ""
        times[pos] = js.date_ms(e.get("timestamp", UNDEF))
        if label_of is not None and labelled:
            label = label_of(e.get("id", UNDEF))
            if label is not None:
                labels[pos] = label
        if role == "user":
            traced[pos] = ["u"]
            did[pos] = {"u": 1}
        elif role == "toolResult":
            failed = m.get("isError") is True
            traced[pos] = ["r", call_code.setdefault(_key_text(m.get("toolCallId", UNDEF)), len(call_code)), failed]
            did[pos] = ({"f": 1} if failed else 0) if "usage" not in m else _did_tallied(e, pi_version)
        else:
            traced[pos], d, left_out = _assistant_facts(m, response_model, call_code)
            did[pos] = d
            name = d["m"][0]  # (its one model)
            models[name] = models.get(name, 0) + 1
            d["m"] = [model_code.setdefault(name, len(model_code))]
            if left_out:
                untexted.append(pos)
        own_message.append(pos)

    def visit(pos: int, e: Any) -> None:
        if type(e) is dict and not options.redact and e.get("type") == "message":
            m = e.get("message")
            if type(m) is dict:
                role = m.get("role")
                if role in _FAST_ROLES:
                    visit_message(pos, e, m, role)
                    return
        ev = e
        t = js.get_json(e, "type")
        if options.redact and t != "message":  # (a message's are counted where it is written: the table)
            ev, hits = redact_value(e, skip=KEEP)
            count(hits)
        elif options.redact:
            ev = {**e, "message": redact_value(get(e, "message"))[0]}  # (for its preview)
        ids[pos] = js.get_json(e, "id")
        code_t = type_code.get(t if isinstance(t, str) else js.to_string(t))
        if code_t is None:
            code_t = type_code[t if isinstance(t, str) else js.to_string(t)] = len(type_code)
        types[pos] = code_t
        word_of[pos] = word_code_of(kinds.of_entry(ev))
        try:
            preview[pos] = kinds.preview_line(ev, id_width, PREVIEW)
        except Exception:  # noqa: BLE001 - a preview is a courtesy; a strange value shows as nothing
            preview[pos] = ""
        times[pos] = js.date_ms(get(e, "timestamp"))
        label = label_of(get(e, "id")) if label_of is not None else None
        if label is not None:
            if options.redact:
                label, hits = redact_value(label)
                count(hits)
            labels[pos] = label
        traced[pos] = _trace_item(ev, call_code)
        d = did[pos] = _did(ev, pi_version)
        if d and "m" in d:
            for name in d["m"]:
                models[name] = models.get(name, 0) + 1
            d["m"] = [model_code.setdefault(name, len(model_code)) for name in d["m"]]
        if t == "compaction":
            first_kept = get(e, "firstKeptEntryId")
            compactions[pos] = (js.truthy(get(e, "retainedTail")), None if first_kept is UNDEF else first_kept)
        if t == "message" and isinstance(get(e, "message"), dict):
            if _untexted(get(e, "message")):
                untexted.append(pos)
            own_message.append(pos)  # (its projection, stored once: the walk projects it right after this)
        else:
            rest = {k2: v for k2, v in (ev.items() if isinstance(ev, dict) else ()) if k2 not in STRUCTURE}
            views[pos] = rest

    facts = {"ids": ids, "types": types, "word_of": word_of, "preview": preview, "times": times,
             "traced": traced, "did": did, "found": found, "models": models, "labels": labels,
             "compactions": compactions, "untexted": untexted, "own": own_message, "views": views,
             "type_code": type_code, "word_code": word_code, "model_code": model_code,
             "call_code": call_code, "words": words, "styles": styles}
    return facts, visit


def page_data(session: Session, options: PageOptions = PageOptions(), *, findings: list | None = None,
              pisess_version: str = "", static_html: str = "", spool: Any = None,
              meanwhile: Any = None, after_pass: Any = None, gathered: PageGather | None = None) -> PageData:
    """Everything the page shows, as its JSON: ``page_finish`` of ``page_pass`` (see both)."""
    return page_finish(page_pass(session, options, spool=spool, after_pass=after_pass, gathered=gathered),
                       findings=findings, pisess_version=pisess_version, static_html=static_html, meanwhile=meanwhile)


@dataclass(frozen=True)
class PagePass:
    """What the page's pass made (``page_pass``): every message stored and every node's context,
    before the page's JSON is written (``page_finish``).  The message table is whole then: the
    page's bulk, its messages, can be written while the JSON is made (``page_parts``)."""

    session: Session
    options: PageOptions
    table: MessageTable
    encoder: Any  # (_Messages)
    images: _Images
    facts: dict
    walk: Walk
    view: Any  # (build_tree's; ``None``: made by ``page_finish``, on from ``links``)
    contexts: Any  # (walk.run's)
    entry_view: list
    leaf_pos: int | None
    first_messages: frozenset  # what the page draws first (the leaf's context)
    count: Any  # (the secrets masked, with redact)
    found: dict
    links: Any = None  # (tree.link_entries: the parents and the leaf the walk replays)

    @property
    def leaf_id(self) -> Any:
        return None if self.leaf_pos is None else self.facts["ids"][self.leaf_pos]


def page_pass(session: Session, options: PageOptions = PageOptions(), *, spool: Any = None,
              after_pass: Any = None, gathered: PageGather | None = None) -> PagePass:
    """The page's pass over the entries, the tree and the walk of every node's context.
    ``spool``: a binary file the messages are written to as they are found (``MessageTable``),
    else they are kept in memory.  ``after_pass``: called once this process has taken its entries
    (where a forked child takes the others, before theirs are awaited), with a function that
    writes the page's members of ``SIDE_MEMBERS`` that are whole then (``None``: none is), for
    another process to make them (``page_finish``'s ``meanwhile``).  ``gathered``: the pass
    taken during the open's parse (``PageGathering``), used where it ``fits`` (and closed where it
    does not).  Secrets: with ``redact`` every string written is scanned and masked; without it
    nothing is scanned here (the scan costs more than the rest of the export)."""
    from ..model.tree import build_tree, link_entries
    s = session
    store = s.store
    view: Any = None
    n = len(store)
    found: dict = {}

    def count(matches: list) -> None:
        for m in matches:
            found[m.kind] = found.get(m.kind, 0) + 1

    if gathered is not None and not gathered.fits(s, options):
        gathered.release()  # (nothing of it is used: the own pass runs without holding it)
        gathered = None
    if gathered is not None:  # the pass was taken during the open's one parse: what needed the session is added
        images, encoder, table, facts = gathered.images, gathered.encoder, gathered.table, gathered.facts
        if after_pass is not None:
            # (the previews of other entries change where the ids' width is not the part's guess)
            after_pass(_premake(facts, tuple(k for k in SIDE_MEMBERS if k != "preview" or s.id_width == _ID_WIDTH)))
            after_pass = None
        walk = Walk(s, table)
        walk.adopt(gathered.walk)
        # the tree's rows wait for page_finish: the messages are whole once the contexts are, and
        # the page's bulk is written from then on (files.write_atomically's tail), beside its rows
        links = link_entries(s, options.leaf)
        _add_what_needs_the_session(s, walk, facts)
    else:
        images = _Images(options.images)
        encoder = _Messages(images, options.redact, count)
        table = MessageTable(encoder, spool)
        facts, visit = _pass_of(n, options, s.pi_version, s.id_width, s, count, found)
        walk = Walk(s, table)
        half = _split_point(s, options, spool)
        if half is None:
            links = link_entries(s, options.leaf)
            view = build_tree(s, leaf_id=options.leaf, full=True, linked=links)
            walk.project_all(s.complete_at(range(n)), visit)
        else:  # the second half in a forked child, meanwhile (each entry's facts are independent of the others')
            _ = s.id_width  # (worked out once, before the fork)
            child_spool = tempfile.TemporaryFile(prefix="pisess-page-")

            def second_half() -> bytes | dict | None:
                table.spool_to(child_spool)
                walk.project_all(s.complete_at(range(half, n)), visit)
                return _child_part(half, walk, table, encoder, images, facts)

            with parallel.Child(second_half) as child:
                walk.project_all(s.complete_at(range(half)), visit)
                # the tree and the side work need no fact of the pass: the tree is made while the child
                # may still be taking its entries (the CPU is this process's), then the side work starts
                links = link_entries(s, options.leaf)
                view = build_tree(s, leaf_id=options.leaf, full=True, linked=links)
                if after_pass is not None:
                    after_pass(None)  # (the child's columns are not here yet)
                    after_pass = None
                sent = child.result()
            if sent is None:  # (the child failed, or its values would not survive the pipe: here then)
                child_spool.close()
                walk.project_all(s.complete_at(range(half, n)), visit)
            else:  # (its messages stay in its spool: the table reads them there, and closes it)
                _take_child_part(sent, half, walk, table, child_spool, encoder, images, facts)
    own_message, views = facts["own"], facts["views"]
    found = facts["found"]  # (``count`` tallies there from now on, as the pass did)
    entry_view: list = [0] * n
    if after_pass is not None:
        after_pass(_premake(facts, SIDE_MEMBERS))
    contexts = walk.run(list(links.parents))
    for pos, rest in views.items():
        got = contexts.projected[pos]
        if isinstance(got, tuple) and got:  # (its summary or content is in the messages it projects to)
            rest = {k: v for k, v in rest.items() if k not in ("summary", "content")}
            rest["\u0000projects"] = list(got)
        entry_view[pos] = _lean_images(rest, images)
    views.clear()
    for pos in own_message:  # a message entry projects to its message (an empty content made [] or "")
        got = contexts.projected[pos]
        entry_view[pos] = got[0] if isinstance(got, tuple) and len(got) == 1 else {"pi throws": got} \
            if isinstance(got, str) else {}
    leaf_pos = links.leaf_pos
    first_messages: set = set()
    if leaf_pos is not None:
        got = replay(contexts, leaf_pos)
        for seg in got if isinstance(got, list) else ():
            first_messages.update(seg.messages, seg.originals)
        if isinstance(entry_view[leaf_pos], int):
            first_messages.add(entry_view[leaf_pos])
    return PagePass(s, options, table, encoder, images, facts, walk, view, contexts, entry_view, leaf_pos,
                    frozenset(first_messages), count, found, links)


def page_finish(made: PagePass, *, findings: list | None = None, pisess_version: str = "", static_html: str = "",
                meanwhile: Any = None) -> PageData:
    """The page's JSON from its pass (``page_pass``).  ``static_html``: the leaf's context as the
    static page (``export --no-script``), for the page's ``<noscript>``.  ``meanwhile``: a
    function giving ``(findings, placements, members)`` made elsewhere (a forked child), called as
    late as it can be; it stands for ``findings`` then (``members``: what ``page_pass``'s
    ``after_pass`` function wrote, or ``None``)."""
    s, options, table, encoder, images, facts = made.session, made.options, made.table, made.encoder, made.images, made.facts
    view, contexts, entry_view, leaf_pos, count = made.view, made.contexts, made.entry_view, made.leaf_pos, made.count
    if view is None:
        from ..model.tree import build_tree

        view = build_tree(s, leaf_id=options.leaf, full=True, linked=made.links)
    n = len(s.store)
    ids, types, word_of, preview, times, traced, did = (facts[k] for k in (
        "ids", "types", "word_of", "preview", "times", "traced", "did"))
    labels, compactions, untexted, models = (facts[k] for k in ("labels", "compactions", "untexted", "models"))
    type_code, model_code, words, styles = facts["type_code"], facts["model_code"], facts["words"], facts["styles"]
    found = made.found
    rows = view.rows
    parents = [int(q) if q != p else -1 for p, q in enumerate(view.parents)]
    # tokens and dollars per entry: what diff's summarize (stats' fact_of) counts of it
    usage = [[sum(d["t"]) if "t" in d else 0, d.get("$", 0)] if d and ("t" in d or "$" in d) else 0 for d in did]
    branch = _branch_costs(parents, usage)
    header = s.header_json() or {}
    try:
        name = s.session_name()
    except Exception:  # noqa: BLE001 - pi throws on a non-string name; the page shows none
        name = None
    if name and options.redact:
        name, hits = redact_value(name)
        count(hits)
    active = _active_positions(rows)
    total = _sum(usage, range(n))
    on_path = _sum(usage, active)
    stamps = [t for t in times if isinstance(t, (int, float))]
    first = min(stamps) if stamps else 0  # (times are written from the first: fewer digits)
    encoder.settle(table)
    doc = {
        "v": 1,
        "meta": {
            "sessionId": header.get("id"), "name": name, "cwd": header.get("cwd"), "path": s.path,
            "reader": s.reader, "piVersion": s.pi_version, "pisessVersion": pisess_version,
            "headerVersion": header.get("version"), "idWidth": s.id_width,
            "leaf": leaf_pos, "leafError": view.leaf_error, "entryCount": n,
            "branchPoints": view.branch_points, "roots": view.roots,
            "first": min(stamps) if stamps else None, "last": max(stamps) if stamps else None,
            "models": dict(sorted(models.items(), key=lambda kv: -kv[1])),
            "tokens": total[0], "cost": total[1], "activeTokens": on_path[0], "activeCost": on_path[1],
            "images": options.images, "redacted": dict(sorted(found.items())) if options.redact else None,
            "markdownIt": MARKDOWN_IT, "fallback": contexts.fallback,
        },
        # parents as the distance back (mostly 1; negative: a parent written after its child), null for
        # a root; message classes as the distance from the message's own index (mostly 0): short numbers
        "ids": ids, "parentBack": [p - q if q >= 0 else None for p, q in enumerate(parents)],
        "types": list(type_code), "type": types, "word": word_of, "words": words, "styles": styles,
        "preview": preview, "time": [t - first if isinstance(t, (int, float)) else None for t in times],
        "label": {str(k): v for k, v in labels.items()},
        "places": list(WHERE), "place": None, "entry": entry_view,  # (the place: below)
        # the rows' positions as steps from the row before (mostly 1)
        "rows": {"posStep": [p - q for p, q in zip(rows.pos, [-1, *rows.pos[:-1]])],
                 "indent": list(rows.indent), "flags": list(rows.flags),
                 "indents": [g + c for g, c in rows.indents], "flagSets": [sorted(f) for f in rows.flag_sets],
                 "active": list(rows.active)},
        "branch": branch,
        # (the usual node's change is its messages, as the page reads it: ``explorer.Changes``)
        "ctx": [c if type(c) is tuple else _change_json(c, p) for p, c in enumerate(contexts.changes.steps)],
        "modelNames": list(model_code),
        "msize": table.sizes, "sameBack": _back(encoder.same), "shapeBack": _back(encoder.shape), "trace": traced, "did": did,
        "findings": None, "untexted": untexted,  # (below)
        # the SDK reader's paths stop at a compaction: where each node's begins (diff parts them there)
        "cut": _harness_starts(parents, ids, compactions) if s.reader == "harness" and compactions else None,
        "images": images.table,
    }
    # (last: what is made meanwhile elsewhere is waited for when nothing else is left to do here)
    findings, places, premade = meanwhile() if meanwhile is not None else (findings, None, None)
    doc["place"] = placements(s) if places is None else places
    doc["findings"] = findings or []
    body = _dumps_members(doc, premade or {})
    title = f"pi session {one_line(js.to_string(header.get('id') or ''), 0)[:8]}"
    if name:
        title += f" \u00b7 {one_line(name, 80)}"
    return PageData(table, body, static_html, title, n, len(table), contexts.fallback, dict(sorted(found.items())),
                    images.count, made.leaf_id, made.first_messages,
                    (doc, made.walk, contexts, view, encoder, times, did, parents, usage))


def _back(digests: list) -> list:
    """Per message, its class (the digests numbered in the order they first come) written as the
    distance back from the message's own index (mostly 0: short numbers)."""
    classes: dict = {}
    return [i - classes.setdefault(d, len(classes)) for i, d in enumerate(digests)]


def _dumps(v: Any) -> bytes:
    from ..reading.jsonl import dumps

    return dumps(v)


def _dumps_members(doc: dict, premade: dict | None = None) -> bytes:
    """``_dumps(doc)`` escaped for the page (``escape_json``), member by member (``orjson`` writes
    an object as its members joined, no space: ``_member_json``); ``premade``: members written
    elsewhere (``_premake``).  Where ``orjson`` refuses a value, ``_dumps`` writes the whole as it
    does."""
    try:
        members = [premade[k] if premade and k in premade else _member_json(k, v) for k, v in doc.items()]
    except TypeError:
        return escape_json(_dumps(doc))
    return b"{" + b",".join(members) + b"}"


def _member_json(key: str, value: Any) -> bytes:
    """``"key":value`` as ``_dumps`` writes it in an object, escaped for the page: ``js_exponents``
    reads only the members that hold a value other than a string (the page's previews are a third
    of its JSON, and its pass over the whole copied all of it twice for the first candidate it
    met), and the escape (``escape_json``) is the whole's, member by member (no ``</``, ``<!`` or
    U+2028 spans two: a member's JSON ends in neither ``<`` nor a part of a character)."""
    out = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)
    if not (type(value) is list and all(type(x) is str for x in value)):
        out = js_exponents(out)
    return escape_json(orjson.dumps(key) + b":" + out)


# The page's members that need only the pass's columns (written by another process where they are
# whole before the tree and the walk are: ``page_pass``'s ``after_pass``), and the columns they are
SIDE_MEMBERS = ("ids", "trace", "did", "preview")
_COLUMN_OF = {"ids": "ids", "trace": "traced", "did": "did", "preview": "preview"}


def _premake(facts: dict, keys: tuple) -> Any:
    """A function writing the members ``keys`` of the page from ``facts`` (``_member_json``); one
    that ``orjson`` refuses is left out (``_dumps_members`` writes the whole then)."""
    def members() -> dict:
        out = {}
        for k in keys:
            try:
                out[k] = _member_json(k, facts[_COLUMN_OF[k]])
            except TypeError:
                pass
        return out
    return members


def _active_positions(rows: Any) -> list:
    return [rows.pos[i] for i in range(len(rows)) if rows.active[i] == 1 and rows.pos[i] >= 0]


def _sum(usage: list, positions: Any) -> list:
    tokens, cost = 0, 0.0
    for p in positions:
        u = usage[p]
        if u:
            tokens += u[0]
            cost += u[1]
    return [tokens, round(cost, 10)]


def _branch_costs(parents: list, usage: list) -> dict:
    """At each branch point, per child: [entries, tokens, cost] of the subtree it starts (what that
    branch holds and cost).  Keyed by the child's position."""
    import operator
    from itertools import compress

    n = len(parents)
    met: set = set()
    branching: set = set()  # (a parent met twice)
    for q in parents:
        if q in met:
            branching.add(q)
        else:
            met.add(q)
    branching.discard(-1)
    kids: dict = {}  # branch point -> its children, the branch points in the order their first child comes
    for p in compress(range(n), map(branching.__contains__, parents)):
        kids.setdefault(parents[p], []).append(p)
    size = [1] * n
    tokens = [u[0] if u else 0 for u in usage]
    cost = [u[1] if u else 0.0 for u in usage]
    if all(map(operator.lt, parents, range(n))):
        # each parent before its children (pi's files): from the last position back every subtree
        # is whole when its root is reached; a branch point adds its children in their order, as
        # the walk below does (a sum of floats depends on it)
        for p in range(n - 1, -1, -1):
            cs = kids.get(p)
            if cs is not None:
                for c in cs:
                    size[p] += size[c]
                    tokens[p] += tokens[c]
                    cost[p] += cost[c]
            q = parents[p]
            if q >= 0 and q not in kids:  # (its only child)
                size[q] += size[p]
                tokens[q] += tokens[p]
                cost[q] += cost[p]
    else:
        children: dict = {}
        for p, q in enumerate(parents):
            if q >= 0:
                children.setdefault(q, []).append(p)
        order: list = []
        stack = [p for p in range(n) if parents[p] < 0]
        seen = bytearray(n)
        while stack:
            p = stack.pop()
            if seen[p]:
                continue
            seen[p] = 1
            order.append(p)
            stack.extend(children.get(p, ()))
        for p in reversed(order):
            q = parents[p]
            if q >= 0:
                size[q] += size[p]
                tokens[q] += tokens[p]
                cost[q] += cost[p]
    return {str(c): [size[c], tokens[c], round(cost[c], 10)] for cs in kids.values() for c in cs}


# --- the HTML file ------------------------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("pisess.page").joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


_LS, _PS = "\u2028".encode(), "\u2029".encode()


def escape_json(data: bytes) -> bytes:
    """JSON safe inside ``<script type="application/json">``: ``</`` is written ``<\\/`` (no
    ``</script>``), ``<!`` as ``\\u003c!`` (no ``<!--``), U+2028/U+2029 as escapes.  These occur
    only inside strings in JSON, where the escapes mean the same (one byte more for ``</``, not
    five: code is full of ``<``).  A one-byte look first (``memchr``): most pieces need no pass
    for one of the two."""
    if b"<" in data and _followed(data, b"<", (b"/", b"!")):
        data = data.replace(b"</", b"<\\/").replace(b"<!", b"\\u003c!")
    if b"\xe2" in data and _followed(data, b"\xe2", (_LS[1:], _PS[1:])):
        data = data.replace(_LS, b"\\u2028").replace(_PS, b"\\u2029")
    return data


def _followed(data: bytes, first: bytes, nexts: tuple, tries: int = 128) -> bool:
    """Is ``first`` (one byte) followed by one of ``nexts`` somewhere in ``data``?  The byte is
    found with ``memchr`` (tens of GB/s) and the few there are looked at; past ``tries`` of them,
    a search for each pair (``bytes.find``, about 1.4 GB/s: the page's 12 MB of JSON besides its
    messages took 8 ms per pair, and held 54 ``<``)."""
    find = data.find
    at = find(first)
    while at >= 0 and tries:
        if data.startswith(nexts, at + 1):
            return True
        at = find(first, at + 1)
        tries -= 1
    return at >= 0 and any(find(first + n, at) >= 0 for n in nexts)


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    j = text.rfind(end)
    return text[i + len(start):j] if i >= 0 and j > i else ""


def _chunk_starts(sizes: list, block: int) -> list:
    """The first message of each of the page's message elements: about ``block`` bytes each."""
    starts: list = []
    size = block
    for i, n in enumerate(sizes):
        if size >= block:
            starts.append(i)
            size = 0
        size += n + 1
    return starts


def page_html(data: PageData) -> Iterator[Any]:
    """The page, in pieces to write one after the other: bytes, and the messages (the bulk of it)
    as ``images.Span``s of the table's spool, for the kernel to copy (``MessageTable.json_pieces``):
    ``page_parts``'s head, then its tail."""
    head, tail = page_parts(data.table, data.first_messages)
    yield from head(data)
    yield from tail


def page_parts(table: MessageTable, first_messages: frozenset) -> tuple[Any, list]:
    """The page as its head (a function of the ``PageData`` and an ``align``, giving its pieces)
    and its tail (the pieces of the messages not drawn first: nearly all of the page), which
    depends only on the message table and what is drawn first, both whole after ``page_pass``: a
    writer may write the tail while the page's JSON is made (``files.write_atomically``).
    ``align``: the head is padded with spaces between its elements to a multiple of it (the writer
    puts it in front of the tail already written, which file systems do by whole blocks).

    The messages go one JSON document per line into elements of about ``CHUNK_BYTES`` (the page
    parses only those it draws: a 200 MB session's texts as one JSON.parse cost seconds and half
    a gigabyte before the first paint).  The elements that hold the leaf's context come before the
    page's script, the others after it: the browser reads HTML at about 60 MB/s, and the page is
    drawn once it has read what the first view needs, not the whole file."""
    starts = _chunk_starts(table.sizes, CHUNK_BYTES)
    ends = [*starts[1:], len(table)]
    early = sorted({bisect_right(starts, k) - 1 for k in first_messages if 0 <= k < len(table)})

    def chunk(c: int) -> Iterator[Any]:
        yield b'<script type="application/json" id="pisess-m%d">' % c
        yield from table.json_pieces(starts[c], ends[c])  # (escaped as they were stored: _Messages.store)
        yield b"</script>\n"

    def head(data: PageData, align: int = 0) -> Iterator[Any]:
        import html

        if ends[-1] != len(data.table):  # (a message stored after page_pass: a bug, not the session's)
            raise RuntimeError("the page's tail was laid out before its last message was stored")
        css = _asset("page.css") + "\n" + _between(data.static_html, "<style>", "</style>")
        app = _asset("page.js")
        mdit = _asset("markdown-it.min.js")
        csp = (f"default-src 'none'; script-src {_sha256(mdit)} {_sha256(app)}; style-src {_sha256(css)}; "
               "img-src data:; base-uri 'none'; form-action 'none'")
        static_body = _between(data.static_html, "<body>", "</body>")
        top = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
               f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
               f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
               f'<meta name="referrer" content="no-referrer">\n'
               f"<title>{html.escape(data.title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
               f'<noscript><div class="static">{static_body}</div></noscript>\n'
               f'<div id="app" hidden></div>\n<script type="application/json" id="pisess-data" '
               f'data-chunks="{" ".join(map(str, starts))}">')
        length = 0
        for piece in (top.encode("utf-8"), data.rest, b"</script>\n", *(p for c in early for p in chunk(c)),
                      f"<script>{mdit}</script>\n<script>{app}</script>\n".encode()):
            length += piece_length(piece)
            yield piece
        if align and length % align:
            yield b" " * (align - length % align)

    taken = set(early)
    tail = [p for c in range(len(starts)) if c not in taken for p in chunk(c)]
    tail.append(b"</body>\n</html>\n")
    return head, tail
