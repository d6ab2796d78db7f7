"""The explorer page's per-entry facts take short ways for the commonest entries (a user's, an
assistant's and a tool result's message); each answers exactly as the general rule does, for
generated messages of every odd shape: the tree's preview line (``kinds.message_line``), what an
entry did (``page._did``, against its ``SideTally``), its trace item, its timestamp
(``js.parse_date``'s remembered minutes), ``text.visible`` of printable text, and the whole page
(``page._FAST_ROLES`` emptied: every entry the general way)."""

from __future__ import annotations

import json
import re

import orjson
from hypothesis import given
from hypothesis import strategies as st

from conftest import header, message
from pisess.core import js
from pisess.core.analyses import page
from pisess.core.model import kinds, text
from pisess.core.model.text import as_text, one_line
from test_js_dates import _one_line_whole

# --- generated messages --------------------------------------------------------------------------

PIECES = ["word ", "x" * 150, " " * 90, "\n", "\t", "\u200d", "\x1b", "\r\n", "\u2028", "é", "😀", "\ud800", "<", ""]
TEXTS = st.one_of(st.text(max_size=12), st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.just(-0.0),
                st.just([]), st.just({}), st.just([1, "a"]), st.just({"k": "v", "n": 1.5}))
NUMBERS = st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=True), st.just(-0.0), st.just(1e999), st.none(),
                    st.booleans(), st.just("12"))


def _pick(*strategies):
    """One of ``strategies``, each as likely (``st.one_of`` flattens nested choices into one list:
    a choice among many odd values would crowd out the blocks)."""
    return st.integers(0, len(strategies) - 1).flatmap(lambda i: strategies[i])


def _maybe(strategy):
    """A member's value, or the member missing (``DROP``)."""
    return _pick(st.just(DROP), strategy, strategy)


DROP = object()


def _object(**members):
    return st.fixed_dictionaries({k: _maybe(v) for k, v in members.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not DROP})


ARGUMENTS = _pick(
    ODD,
    _object(path=st.one_of(TEXTS, ODD), content=TEXTS),
    _object(file_path=st.sampled_from(["a.py", "", "b/c.ts"]), oldText=TEXTS, newText=TEXTS),
    _object(command=st.one_of(st.sampled_from(["ls > out.txt", "echo x >> log 2>&1", "cat a > /dev/null"]), TEXTS)),
    st.dictionaries(st.sampled_from(["path", "x", "filePath"]), st.one_of(TEXTS, ODD), max_size=3),
)
def _block(type_, **members):
    """A content block of type ``type_``, its other members there or not."""
    return _object(**members).map(lambda d: {"type": type_, **d})


BLOCKS = _pick(
    _block("text", text=st.one_of(TEXTS, TEXTS, ODD)),
    _block("thinking", thinking=TEXTS),
    _block("toolCall", id=st.one_of(st.sampled_from(["c1", "c2", "c3"]), ODD),
           name=st.one_of(st.sampled_from(["write", "edit", "bash", "read", "Write"]), ODD), arguments=ARGUMENTS),
    _block("image", mimeType=st.sampled_from(["image/png", "x"]), data=st.sampled_from(["iVBORw==", ""])),
    _block("text", text=st.sampled_from(["", " ", "\n\t", "\u3000"])),
    _object(type=ODD, text=TEXTS), ODD, TEXTS,
)
CONTENT = _pick(st.lists(BLOCKS, min_size=1, max_size=5), st.lists(BLOCKS, min_size=1, max_size=5), TEXTS, ODD,
                st.just([]))
USAGE = _pick(_object(input=NUMBERS, output=NUMBERS, cacheRead=NUMBERS, cacheWrite=NUMBERS,
                      cost=_pick(_object(total=NUMBERS), _object(total=NUMBERS), ODD)), ODD)
MESSAGES = _object(
    role=_pick(st.sampled_from(["user", "assistant", "toolResult", "assistant", "toolResult"]), ODD),
    content=CONTENT, usage=USAGE, stopReason=st.one_of(st.sampled_from(["stop", "toolUse", "error", "aborted"]), ODD),
    errorMessage=st.one_of(TEXTS, ODD), provider=st.one_of(st.sampled_from(["openai", "google"]), ODD),
    model=st.one_of(st.sampled_from(["gpt", "gemini"]), ODD), responseModel=st.one_of(st.just("gpt-r"), ODD),
    thinkingLevel=st.one_of(st.sampled_from(["high", ""]), ODD), isError=st.one_of(st.booleans(), ODD),
    toolName=st.one_of(st.sampled_from(["read", "bash"]), ODD), toolCallId=st.one_of(st.sampled_from(["c1", "c2"]), ODD),
)
WIDTHS = st.sampled_from([0, 1, 2, 10, 40, 64])


def _outcome(f, *args):
    try:
        return "value", f(*args)
    except Exception as e:  # noqa: BLE001 - both ways must fail alike
        return "raises", type(e)


# --- the tree's preview line -----------------------------------------------------------------------


def _assistant_preview_whole(m):
    """``kinds._assistant_preview`` as it was written before its head: every text joined whole."""
    content = m.get("content")
    out = kinds.content_text(content)
    calls = ([b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]
             if isinstance(content, list) else [])
    if calls:
        out = (out + " " if out else "") + " ".join("\u2192 " + kinds.tool_call_text(c, 40) for c in calls)
    stop = m.get("stopReason")
    if stop in ("error", "aborted"):
        err = as_text(m.get("errorMessage"))
        out = f"[{stop}{': ' + err if err else ''}] " + out
    if not out and isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "thinking"
                                                     for b in content):
        out = "(thinking only)"
    return out


def _tool_result_preview_whole(m):
    t = kinds.content_text(m.get("content"))
    lines = t.count("\n") + 1 if t else 0
    mark = "\u2717 error" if m.get("isError") else "\u2713"
    first = t.strip().split("\n", 1)[0]
    return (f"{as_text(m.get('toolName'))} {mark} {lines} line{'s' if lines != 1 else ''}"
            + (f" \u00b7 {first}" if first else ""))


def _content_text_whole(content):
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return as_text(content)
    parts = []
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text":
            parts.append(as_text(b.get("text")))
        elif isinstance(b, dict) and b.get("type") == "image":
            parts.append(text.image_ref(b, escape=lambda x: x))
    return " ".join(p for p in parts if p)


@given(MESSAGES, WIDTHS)
def test_a_messages_line_is_its_whole_previews_line(m, width):
    """``message_line`` reads only the heads of long texts; its line is the whole preview's."""
    assert _outcome(kinds.message_line, m, width) == _outcome(lambda: one_line(kinds.message_preview(m), width))
    entry = {"type": "message", "id": "a", "message": m}
    assert _outcome(kinds.preview_line, entry, 8, width) == _outcome(lambda: one_line(kinds.preview(entry), width))


@given(MESSAGES)
def test_the_previews_are_as_they_were_written_whole(m):
    assert _outcome(kinds.content_text, m.get("content")) == _outcome(_content_text_whole, m.get("content"))
    assert _outcome(kinds._assistant_preview, m) == _outcome(_assistant_preview_whole, m)
    assert _outcome(kinds._tool_result_preview, m) == _outcome(_tool_result_preview_whole, m)


LONG_TEXTS = st.lists(st.sampled_from(["word ", "x" * 150, " " * 90, "\n", "é", "\x1b"]), min_size=2, max_size=20).map("".join)


@given(st.sampled_from(["assistant", "toolResult", "user"]),
       st.lists(st.tuples(st.sampled_from(["text", "text", "image", "thinking", "toolCall", None]), LONG_TEXTS),
                min_size=1, max_size=4),
       st.sampled_from([None, "stop", "error"]), WIDTHS)
def test_long_texts_make_the_whole_previews_line(role, blocks, stop, width):
    """Texts longer than a line reads, one or several, after an error or not: each cut where
    the line stops reading, and the line is the whole preview's."""
    content = [{"type": t, "text": x} if t else {"text": x} for t, x in blocks]
    m = {"role": role, "content": content, "toolName": "read", "stopReason": stop, "errorMessage": "bad"}
    whole = {"assistant": _assistant_preview_whole, "toolResult": _tool_result_preview_whole,
             "user": lambda m: _content_text_whole(m["content"])}[role](m)
    assert kinds.message_line(m, width) == one_line(kinds.message_preview(m), width) == one_line(whole, width)


def test_a_head_of_whitespace_takes_the_whole_preview():
    """A reply whose first few hundred characters fold to less than a line: the rest is read."""
    for t in (" " * 400 + "the answer", "\n" * 330 + "x" * 500, "a" + " " * 600 + "b" * 70):
        m = {"role": "assistant", "content": [{"type": "text", "text": t}], "stopReason": "stop"}
        assert kinds.message_line(m, 64) == one_line(_assistant_preview_whole(m), 64) != ""
        r = {"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": t}]}
        assert kinds.message_line(r, 64) == one_line(_tool_result_preview_whole(r), 64)


def test_a_row_registered_later_gives_its_own_preview():
    """``message_line`` remembers each role's row until the table changes."""
    import dataclasses

    m = {"role": "user", "content": "hello"}
    assert kinds.message_line(m, 64) == "hello"
    own = dataclasses.replace(kinds.of("message", "user"), preview=lambda m, width=8: "mine")
    kinds.register(own)
    try:
        assert kinds.message_line(m, 64) == "mine"
    finally:
        kinds.register(dataclasses.replace(own, preview=kinds._content_preview))
    assert kinds.message_line(m, 64) == "hello"


# --- what an entry did, its trace item ---------------------------------------------------------------


@given(MESSAGES, st.sampled_from(["assistant", "toolResult", "user", None]), st.sampled_from(["1.6.0", "0.80.0"]))
def test_what_a_message_did_is_what_its_tally_counts(m, role, pi_version):
    e = {"type": "message", "id": "a", "message": m if role is None else {**m, "role": role}}
    got, want = _outcome(page._did, e, pi_version), _outcome(page._did_tallied, e, pi_version)
    assert got == want
    assert got[0] == "raises" or orjson.dumps(got[1]) == orjson.dumps(want[1])  # (1.0 is no 1 on the page)


def _trace_item_as_written(e, call_code):
    """``page._trace_item``'s step of an assistant message as it was written: ``trace.spent``."""
    from pisess.core.model.trace import failure, spent

    m = e["message"]
    tokens_in, tokens_out, cost = spent(e)
    content = js.get(m, "content")
    calls = [call_code.setdefault(key, len(call_code))
             for key in (page._key_text(b.get("id")) for b in (content if isinstance(content, list) else [])
                         if isinstance(b, dict) and b.get("type") == "toolCall")]
    return ["s", tokens_in, tokens_out, cost, failure(m), calls]


@given(MESSAGES)
def test_an_assistants_step_is_what_trace_reads(m):
    m = {**m, "role": "assistant"}
    e = {"type": "message", "id": "a", "message": m}
    mine: dict = {}
    theirs: dict = {}
    assert _outcome(page._trace_item, e, mine) == _outcome(_trace_item_as_written, e, theirs)
    assert mine == theirs
    left_out = _outcome(lambda: page._assistant_facts(m, True, {})[2])
    assert left_out == _outcome(page._untexted, m) or left_out[0] == _outcome(page._did_tallied, e, "1.6.0")[0] == "raises"


# --- the whole page, each entry the general way ------------------------------------------------------


def _page(path, fast, redact=False):
    from pisess.core.reading.session import open_session

    s = open_session(path)
    saved = page._FAST_ROLES
    page._FAST_ROLES = saved if fast else ()
    try:
        data = page.page_data(s, page.PageOptions(redact=redact))
    finally:
        page._FAST_ROLES = saved
    return data.rest, data.table.json_range(0, len(data.table))


STAMPS = st.one_of(st.sampled_from(["2025-03-03T09:02:07.914Z", "2025-03-03T09:02:59.001Z", "2025-03-03T09:03:00.000Z",
                                    "2025-03-03T09:02:7.914Z", "2025-03-03T09:02:60.000Z", "x"]), ODD, st.just(DROP))


@given(st.lists(st.tuples(MESSAGES, STAMPS, st.sampled_from(["e", None, "label", "label to none"])), min_size=1,
                max_size=8), st.booleans())
def test_the_page_is_the_page_of_every_entry_taken_the_general_way(tmp_path, messages, redact):
    """Messages of every shape, some without an id, some labelled (a label without a target names
    the entries without an id, as in pi's Map), with any timestamp."""
    lines: list = [header()]
    parent = None
    for i, (m, ts, how) in enumerate(messages):
        e = {**message(f"e{i}", parent, m), "timestamp": ts}
        if how is None:
            del e["id"]
        if ts is DROP:
            del e["timestamp"]
        lines.append(e)
        parent = e.get("id", parent)
        if how is not None and how.startswith("label"):
            mark = {"type": "label", "id": f"l{i}", "parentId": parent, "timestamp": "2025-03-03T09:02:08.000Z",
                    "targetId": f"e{i}", "label": f"mark {i}"}
            if how == "label to none":
                del mark["targetId"]
            lines.append(mark)
            parent = f"l{i}"
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))  # (ASCII: a lone surrogate escaped)
    assert _page(str(path), True, redact) == _page(str(path), False, redact)


# --- dates, visible text ------------------------------------------------------------------------------

DIGITS = st.sampled_from(list("0123456789") * 4 + ["\u0663", " ", "+", "_", "x", "\u00b2"])


@given(st.integers(1990, 2040), st.integers(0, 13), st.integers(0, 32), st.integers(0, 24), st.integers(0, 60),
       st.lists(st.tuples(st.lists(DIGITS, min_size=2, max_size=2), st.lists(DIGITS, min_size=3, max_size=3),
                          st.sampled_from([".", ","]), st.sampled_from(["Z", "z"])), min_size=1, max_size=6))
def test_a_remembered_hour_reads_as_the_general_rule(y, mo, d, h, mi, seconds):
    """Stamps of one hour, the hour read once: each minute, second and millisecond (some of them
    no ASCII digits, or out of range) as ``_parse_date_general`` reads the whole stamp."""
    js._HOURS.clear()
    hour = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:"
    for k, (sec, ms, dot, zone) in enumerate([(["0", "0"], ["0", "0", "0"], ".", "Z"), *seconds]):
        minute = (sec if k % 2 else [f"{mi:02d}"]) if k else ["00"]  # (the stamp read first is a plain one)
        stamp = hour + "".join(minute) + ":" + "".join(sec) + dot + "".join(ms) + zone
        got, want = js.parse_date(stamp), js._parse_date_general(stamp)
        assert got == want and type(got) is type(want), stamp
        assert js.date_ms(stamp) == js.date_ms(js.JSArray([stamp]))  # (a string, or String() of a value)


@given(st.one_of(st.text(), st.lists(st.sampled_from(["ab", " ", "é", "\u00a0", "\u3000", "x" * 100, "\t", "😀"]))
                 .map("".join)), WIDTHS)
def test_a_line_is_cut_as_the_whole_text_folded(s, width):
    """``one_line``'s short way for text that is a line already (printable, single spaces inside)."""
    assert one_line(s, width) == _one_line_whole(s, width)


_CONTROL = re.compile(f"[{text.CONTROL_CHARS}]|{text.LOOSE_JOINER}")


@given(st.text(max_size=40))
def test_printable_text_is_visible_as_it_is(s):
    """``visible`` returns printable text at once: the control characters it rewrites (and CR)
    are never printable."""
    whole = _CONTROL.sub(text._visible_char, s.replace("\r\n", "\n"))
    assert text.visible(s) == whole


def test_no_character_visible_rewrites_is_printable():
    rewritten = [chr(c) for c in range(0x110000) if _CONTROL.fullmatch(chr(c))] + ["\r"]
    assert len(rewritten) > 2000 and not any(c.isprintable() for c in rewritten)
