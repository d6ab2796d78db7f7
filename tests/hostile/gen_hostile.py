#!/usr/bin/env python3
"""Generate the hostile-input corpus for pisess (nothing is stored in git; everything is built here).

Usage:
    python tests/hostile/gen_hostile.py OUTDIR [--big]
    python tests/hostile/gen_hostile.py OUTDIR --special   # FIFO + /dev/zero link, a root of their own
    # or: from gen_hostile import generate; manifest = generate(outdir)

OUTDIR is laid out as a pi sessions root, so both ``pisess ls --sessions-dir OUTDIR`` and file
arguments work::

    OUTDIR/--tmp-hostile--/<case>.jsonl          one file per single-file case (cwd /tmp/hostile)
    OUTDIR/--tmp-hostile--/x.jsonl/              a directory named like a session file
    OUTDIR/--tmp-hostile--/link-*.jsonl          symlinked files (to a file, dangling, self-loop)
    OUTDIR/--tmp-hostile-many--/                 300 tiny sessions (10,000 with the big flag)
    OUTDIR/--tmp-hostile-perm--/                 readable sessions and one chmod 000 file
    OUTDIR/--tmp-hostile-linktarget--/           a real project directory ...
    OUTDIR/--tmp-hostile-symlinked--             ... and a symlink to it
    OUTDIR/--tmp-hostile-linkloop--              a symlink to the root itself
    OUTDIR/--tmp-hostile-evil<ESC>[2J<ESC>]0;t<BEL>--/   a project dir and file name full of escapes

Big cases (1,000,000-entry chain, 100,000 siblings, a 100 MB line, 10,000 files) are only made
when ``big=True`` or the environment has ``PISESS_HOSTILE_BIG=1``; medium versions (50,000 chain,
5,000 siblings, 5 MB line, 300 files) are always made.

``generate`` returns a manifest: ``{"root": ..., "cases": {name: Case}, "projects": {...}}``. Each
``Case`` says where the file is, which entry id to fork at, and which exact strings must survive
into ``pisess context --json`` (``exact``), so tests need not re-derive them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

PROJECT = "--tmp-hostile--"
PROJECT_CWD = "/tmp/hostile"
MANY = "--tmp-hostile-many--"
PERM = "--tmp-hostile-perm--"
LINK_TARGET = "--tmp-hostile-linktarget--"
SYMLINKED = "--tmp-hostile-symlinked--"
LINKLOOP = "--tmp-hostile-linkloop--"
EVIL_CWD = "/tmp/hostile-evil\x1b[2J\x1b]0;t\x07"
EVIL_PROJECT = "--tmp-hostile-evil\x1b[2J\x1b]0;t\x07--"
EVIL_FILE = "evil\x1b]0;title\x07\r\b\n[bold red]x.jsonl"

# Text that must never drive a terminal or be read as Rich markup.
ESC_CLEAR = "\x1b[2J"
OSC_TITLE = "\x1b]0;title\x07"
MARKUP_BOLD = "[bold red]x[/]"
MARKUP_LINK = "[link=http://e]y[/link]"
HOSTILE_TEXT = f"A{ESC_CLEAR}B{OSC_TITLE}C\rD\bE {MARKUP_BOLD} {MARKUP_LINK} \x9b31mF\x9d0;t\x9c \x7f G"

TS = "2026-07-25T09:14:03.512Z"


def big_requested() -> bool:
    return os.environ.get("PISESS_HOSTILE_BIG") == "1"


@dataclass
class Case:
    name: str
    path: str  # absolute path of the file (or directory / link) to pass as SESSION
    group: str  # "basic", "truncation", "encoding", "json", "tree", "size", "fs", "escapes"
    description: str
    fork_entry: str = "u1"  # entry id to pass to `pisess fork --dry-run`
    exact: list = field(default_factory=list)  # strings that context --json must carry unchanged
    exact_reader: str = "both"  # which reader's context --json must carry them ("both", "cli", "harness")
    big: bool = False
    is_file: bool = True  # False for directories, dangling links ...
    escapes: bool = False  # holds terminal escapes that must never reach human output raw
    slow: bool = False  # medium/big size: the tests give it a longer timeout


# --- building blocks ------------------------------------------------------------------------------


def session_id(name: str) -> str:
    """A stable UUIDv7-shaped id per case (ls and prefix lookup need distinct ids)."""
    h = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"0198{h[:4]}-{h[4:8]}-7{h[8:11]}-8{h[11:14]}-{h[14:26]}"


def dumps(v: Any) -> str:
    """JSON.stringify-like: compact, non-ASCII kept raw, control characters escaped."""
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def header(name: str, cwd: str = PROJECT_CWD, **extra: Any) -> dict:
    return {"type": "session", "version": 3, "id": session_id(name), "timestamp": TS, "cwd": cwd, **extra}


def ts(i: int) -> str:
    s, ms = divmod(i, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"2026-07-25T{10 + h % 14:02d}:{m:02d}:{s:02d}.{ms:03d}Z"


def entry(type_: str, id_: Any, parent: Any, i: int = 0, **fields: Any) -> dict:
    return {"type": type_, "id": id_, "parentId": parent, "timestamp": ts(i), **fields}


def user(id_: Any, parent: Any, text: str, i: int = 0) -> dict:
    return entry("message", id_, parent, i,
                 message={"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1784970845225 + i})


def assistant(id_: Any, parent: Any, text: str, i: int = 0, tool: tuple | None = None, **msg: Any) -> dict:
    content: list = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "toolCall", "id": tool[0], "name": tool[1], "arguments": tool[2]})
    m = {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
         "model": "claude-opus-5",
         "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                   "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}},
         "stopReason": "toolUse" if tool else "stop", "timestamp": 1784970846225 + i, **msg}
    return entry("message", id_, parent, i, message=m)


def tool_result(id_: Any, parent: Any, call_id: str, tool: str, text: str, i: int = 0) -> dict:
    return entry("message", id_, parent, i, message={
        "role": "toolResult", "toolCallId": call_id, "toolName": tool,
        "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 1784970846300 + i})


def base_entries() -> list[dict]:
    """A small, valid CLI-style conversation: u1 is the user message, a3 the leaf."""
    return [
        entry("model_change", "m0", None, 0, provider="anthropic", modelId="claude-opus-5"),
        entry("thinking_level_change", "t0", "m0", 1, thinkingLevel="medium"),
        user("u1", "t0", "hello", 2),
        assistant("a1", "u1", "let me look", 3, tool=("call_1", "read", {"path": "a.txt"})),
        tool_result("r1", "a1", "call_1", "read", "data", 4),
        assistant("a3", "r1", "done", 5),
    ]


def lines_of(values: Iterable[Any]) -> bytes:
    return "".join(dumps(v) + "\n" for v in values).encode("utf-8")


def valid_bytes(name: str) -> bytes:
    return lines_of([header(name), *base_entries()])


# --- the cases --------------------------------------------------------------------------------------


class _Writer:
    """Writes the corpus; with ``dry=True`` only records what it would write (for test collection)."""

    def __init__(self, root: str, big: bool, dry: bool = False) -> None:
        self.root = root
        self.big = big
        self.dry = dry
        self.cases: dict[str, Case] = {}
        self.projects: dict[str, dict] = {}

    def project(self, dirname: str) -> str:
        d = os.path.join(self.root, dirname)
        self.makedirs(d)
        return d

    def makedirs(self, d: str) -> None:
        if not self.dry:
            os.makedirs(d, exist_ok=True)

    def symlink(self, target: str, path: str) -> None:
        if not self.dry:
            os.symlink(target, path)

    def chmod(self, path: str, mode: int) -> None:
        if not self.dry:
            os.chmod(path, mode)

    def write(self, path: str, data: bytes | Iterable[bytes]) -> None:
        if self.dry:
            return
        with open(path, "wb") as fh:
            if isinstance(data, (bytes, bytearray)):
                fh.write(data)
            else:
                for chunk in data:
                    fh.write(chunk)

    def file(self, name: str, data: bytes | Iterable[bytes], group: str, description: str, *,
             project: str = PROJECT, filename: str | None = None, **kw: Any) -> Case:
        d = self.project(project)
        path = os.path.join(d, filename or f"{name}.jsonl")
        self.write(path, data)
        case = Case(name, path, group, description, **kw)
        self.cases[name] = case
        return case


def _basic(w: _Writer) -> None:
    w.file("valid", valid_bytes("valid"), "basic", "a small valid session (baseline)", exact=["hello", "data"])
    w.file("empty", b"", "basic", "0-byte file", fork_entry="u1")
    w.file("header_only", lines_of([header("header_only")]), "basic", "only the session header line")
    w.file("header_only_no_newline", dumps(header("header_only_no_newline")).encode(), "basic",
           "only the header, without a trailing newline")
    w.file("blank_lines_only", b"\n \n\t\r\n\xe2\x80\xa8\n", "basic", "only blank lines (incl. raw U+2028)")


def _truncation(w: _Writer) -> None:
    last = dumps(user("u9", "a3", "hello \u20ac world \\ end", 9))
    base = lines_of([header("t"), *base_entries()])

    def cut_at(name: str, marker: bytes, keep_marker: bool, desc: str) -> None:
        hb = lines_of([header(name), *base_entries()])
        tail = last.encode("utf-8")
        i = tail.index(marker) + (len(marker) if keep_marker else 0)
        w.file(name, hb + tail[:i], "truncation", desc, exact=["hello", "data"], exact_reader="cli")

    cut_at("trunc_mid_string", b"llo \xe2", False, "final line cut mid-string (no newline)")
    # mid-escape: the text holds "\u12" then the cut
    hb = lines_of([header("trunc_mid_escape"), *base_entries()])
    w.file("trunc_mid_escape", hb + b'{"type":"message","id":"u9","parentId":"a3","timestamp":"' + ts(9).encode()
           + b'","message":{"role":"user","content":[{"type":"text","text":"abc\\u12', "truncation",
           "final line cut in the middle of a \\u escape", exact=["hello"], exact_reader="cli")
    cut_at("trunc_mid_utf8", b"\xe2\x82", True, "final line cut inside a 3-byte UTF-8 sequence (\u20ac)")
    hb = lines_of([header("trunc_mid_utf8_4byte"), *base_entries()])
    emoji = "\U0001F600".encode()
    w.file("trunc_mid_utf8_4byte", hb + b'{"type":"message","id":"u9","parentId":"a3","timestamp":"x","message":'
           b'{"role":"user","content":"smile ' + emoji[:3], "truncation",
           "final line cut inside a 4-byte UTF-8 sequence", exact_reader="cli")
    hb = lines_of([header("trunc_header")])
    w.file("trunc_header", hb[: len(hb) // 2], "truncation", "the header line itself is cut off")
    w.file("trunc_after_newline_nul_padding", base + b"\x00" * 4096, "truncation",
           "crash left NUL padding after the last newline (ext4/xfs delayed allocation)")
    # A fragment, then the next append glued straight onto it (pi 0.82.1 CLI behaviour).
    glued = dumps(user("u9", "a3", "glued on", 9))
    hb = lines_of([header("glued"), *base_entries()])
    w.file("glued", hb + b'{"type":"mess' + glued.encode() + b"\n"
           + lines_of([assistant("a9", "u9", "after the glued line", 10)]), "truncation",
           'a line glued onto a truncated one: {"type":"mess{"type":"message",...}')
    w.file("glued_at_end", hb + b'{"type":"mess' + glued.encode(), "truncation",
           "glued line is the last line, no newline")


def _encoding(w: _Writer) -> None:
    body = valid_bytes("bom")
    w.file("bom", b"\xef\xbb\xbf" + body, "encoding", "UTF-8 BOM before the header")
    w.file("bom_twice", b"\xef\xbb\xbf\xef\xbb\xbf" + body, "encoding", "two BOMs")
    w.file("crlf", valid_bytes("crlf").replace(b"\n", b"\r\n"), "encoding", "CRLF line endings",
           exact=["hello", "data"])
    w.file("cr_only", valid_bytes("cr_only").replace(b"\n", b"\r"), "encoding",
           "old-Mac CR-only line endings: one physical line")
    hb = lines_of([header("nul_bytes"), *base_entries()])
    w.file("nul_bytes", hb + b"\x00\x00\x00\n{\"type\":\"message\",\x00\"id\":\"n1\"}\n"
           + lines_of([user("u9", "a3", "nul \x00 inside", 9)]) + b"\x00", "encoding",
           "NUL bytes: a line of NULs, a NUL inside JSON, an escaped \\u0000 in text, a trailing NUL",
           exact=["nul \x00 inside"], exact_reader="cli")
    hb = lines_of([header("invalid_utf8"), *base_entries()])
    bad = b'{"type":"message","id":"u9","parentId":"a3","timestamp":"' + ts(9).encode() + \
        b'","message":{"role":"user","content":[{"type":"text","text":' \
        b'"bad \xff\xfe \xc0\xaf \x80 \xed\xa0\x80 end"}],' \
        b'"timestamp":1}}\n'
    w.file("invalid_utf8", hb + bad, "encoding",
           "invalid UTF-8 in a string (0xFF 0xFE, overlong C0 AF, lone continuation, CESU surrogate)",
           exact=["bad \ufffd\ufffd \ufffd\ufffd \ufffd \ufffd\ufffd\ufffd end"])
    w.file("invalid_utf8_header", b'{"type":"session","version":3,"id":"\xff\xfe","timestamp":"' + TS.encode()
           + b'","cwd":"/tmp/\xc3hostile"}\n' + lines_of(base_entries()), "encoding",
           "invalid UTF-8 in the header id and cwd")
    # Lone surrogates as JSON escapes (legal for JSON.parse; not encodable as UTF-8).
    hb = lines_of([header("lone_surrogates"), *base_entries()])
    surr = ('{"type":"message","id":"u9","parentId":"a3","timestamp":"%s","message":{"role":"user","content":'
            '[{"type":"text","text":"lo \\ud800 hi \\udfff pair \\ud83d\\ude00 rev \\ude00\\ud83d"}],"timestamp":1}}\n'
            '{"type":"label","id":"l9","parentId":"u9","timestamp":"%s","targetId":"u9","label":"lbl \\udc80"}\n'
            '{"type":"session_info","id":"s9","parentId":"l9","timestamp":"%s","name":"name \\ud800"}\n'
            '{"type":"message","id":"a9","parentId":"s9","timestamp":"%s","message":{"role":"assistant",'
            '"content":[{"type":"text","text":"ok \\udbff"}],"api":"x","provider":"p\\ud800","model":"m",'
            '"stopReason":"stop","timestamp":2}}\n') % (ts(9), ts(10), ts(11), ts(12))
    w.file("lone_surrogates", hb + surr.encode(), "encoding", 'lone surrogates in JSON escapes ("\\ud800") in text, '
           "label, session name, provider", exact=["lo \ud800 hi \udfff pair \U0001F600 rev \ude00\ud83d"],
           fork_entry="u9")
    ids = ('{"type":"message","id":"\\ud800","parentId":"a3","timestamp":"%s","message":{"role":"user",'
           '"content":"x","timestamp":1}}\n'
           '{"type":"message","id":"\\udc00x","parentId":"\\ud800","timestamp":"%s","message":{"role":"user",'
           '"content":"y","timestamp":1}}\n') % (ts(9), ts(10))
    w.file("lone_surrogate_ids", lines_of([header("lone_surrogate_ids"), *base_entries()]) + ids.encode(),
           "encoding", "lone surrogates in entry ids and parentIds", fork_entry="\udc00x")
    raw_seps = "sep \u2028 para \u2029 nel \u0085 end"
    w.file("line_separators", lines_of([header("line_separators"), *base_entries(),
                                        user("u9", "a3", raw_seps, 9),
                                        entry("label", "l9", "u9", 10, targetId="u9", label="lab\u2028el\u0085"),
                                        entry("session_info", "s9", "l9", 11, name="na\u2029me")]),
           "encoding", "raw U+2028 / U+2029 / U+0085 inside strings (one JSON line each)", exact=[raw_seps],
           fork_entry="u9")


def _json_oddities(w: _Writer) -> None:
    hb = lines_of([header("nan_infinity"), *base_entries()])
    w.file("nan_infinity", hb + b'{"type":"message","id":"n1","parentId":"a3","timestamp":"' + ts(9).encode()
           + b'","message":{"role":"assistant","content":[{"type":"text","text":"nan"}],"usage":{"input":NaN,'
           b'"output":Infinity,"cacheRead":-Infinity,"cacheWrite":0,"totalTokens":NaN,"cost":{"total":Infinity}},'
           b'"stopReason":"stop","timestamp":1}}\n' + lines_of([assistant("a9", "a3", "after", 10)]), "json",
           "NaN / Infinity / -Infinity literals (invalid JSON for JSON.parse)")
    hb = lines_of([header("overflow_numbers"), *base_entries()])
    w.file("overflow_numbers", hb + b'{"type":"message","id":"a9","parentId":"a3","timestamp":"' + ts(9).encode()
           + b'","message":{"role":"assistant","content":[{"type":"text","text":"big"}],"usage":{"input":1e400,'
           b'"output":-1e400,"cacheRead":1e-400,"cacheWrite":0,"totalTokens":1e308,"cost":{"total":1e400}},'
           b'"stopReason":"stop","timestamp":1e400}}\n', "json",
           "numbers that overflow a double (1e400 -> Infinity in JS)", exact=["big"])
    hb = lines_of([header("overflow_and_surrogate"), *base_entries()])
    w.file("overflow_and_surrogate", hb + b'{"type":"message","id":"a9","parentId":"a3","timestamp":"'
           + ts(9).encode() + b'","message":{"role":"assistant","content":[{"type":"text","text":"s \\ud800"}],'
           b'"usage":{"input":1e400,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":1,"cost":{"total":1}},'
           b'"stopReason":"stop","timestamp":1}}\n', "json",
           "1e400 and a lone surrogate in the same entry (JSON output fallback path)", exact=["s \ud800"])
    big = 2**53 + 1
    hb = lines_of([header("big_integers"), *base_entries()])
    w.file("big_integers", hb + (
        '{"type":"message","id":"a9","parentId":"a3","timestamp":"%s","message":{"role":"assistant",'
        '"content":[{"type":"text","text":"ints"}],"usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":0,'
        '"totalTokens":%d,"cost":{"total":%d}},"stopReason":"stop","timestamp":%d}}\n'
        '{"type":"message","id":"a10","parentId":"a9","timestamp":"%s","message":{"role":"assistant",'
        '"content":[{"type":"text","text":"more"}],"usage":{"input":%s,"output":1,"cacheRead":0,"cacheWrite":0,'
        '"totalTokens":1,"cost":{"total":1}},"stopReason":"stop","timestamp":1}}\n'
        '{"type":"message","id":12345678901234567890,"parentId":"a10","timestamp":"%s","message":'
        '{"role":"user","content":"numeric id","timestamp":1}}\n'
        % (ts(9), big, -big, 2**64 + 1, 10**30, 2**63, 2**70, ts(10), "9" * 5000, ts(11))).encode(),
        "json", "integers beyond 2^53 (2^53+1, 2^64+1, 10^30, a 5000-digit integer, a numeric id)",
        exact=["ints", "more"], exact_reader="cli")
    w.file("duplicate_keys", lines_of([header("duplicate_keys"), *base_entries()]) + (
        '{"type":"label","type":"message","id":"d1","id":"d2","parentId":null,"parentId":"a3","timestamp":"%s",'
        '"message":{"role":"user","content":"first","content":"second wins","timestamp":1}}\n'
        '{"type":"session","version":3,"version":2,"id":"dup-hdr","timestamp":"%s","cwd":"/x","cwd":"/y"}\n'
        % (ts(9), ts(10))).encode(), "json", "duplicate keys (last wins) and a duplicated session header mid-file",
        exact=["second wins"], exact_reader="cli", fork_entry="d2")
    w.file("deep_nesting", lines_of([header("deep_nesting"), *base_entries()])
           + b'{"type":"custom","customType":"deep","id":"c9","parentId":"a3","timestamp":"x","data":'
           + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
           + b'{"type":"custom","customType":"deep2","id":"c10","parentId":"a3","timestamp":"x","data":'
           + b'{"a":' * 1000 + b"9007199254740993" + b"}" * 1000 + b"}\n"
           + lines_of([user("u9", "c10", "after deep", 9)]), "json",
           "100,000-deep nested array (JS parses it) and 1,000-deep object holding a big integer",
           exact_reader="cli", fork_entry="u9", slow=True)
    w.file("non_object_lines", lines_of([header("non_object_lines"), *base_entries()])
           + b'[1,2]\n"just a string"\n42\n0\nnull\nfalse\ntrue\n[]\n{}\n'
           + lines_of([user("u9", "a3", "after junk", 9)]), "json",
           "arrays, strings, numbers, null, false, true, {} as lines", exact=["after junk"], exact_reader="cli",
           fork_entry="u9")
    w.file("wrong_types", lines_of([header("wrong_types", cwd=["not", "a", "string"]),
                                    entry("message", ["id"], {"p": 1}, 0, message="not an object"),
                                    {"type": 7, "id": "x", "parentId": None, "timestamp": 5},
                                    entry("label", "l1", "x", 1, targetId={"o": 1}, label=["a"]),
                                    entry("session_info", "s1", "l1", 2, name=42),
                                    entry("compaction", "c1", "s1", 3, summary=None, firstKeptEntryId=5,
                                          retainedTail="yes"),
                                    user("u1", "c1", "typed", 4)]),
           "json", "fields of the wrong JSON type everywhere (cwd array, id array, label list, name number)")


def _tree(w: _Writer) -> None:
    big = w.big

    def chain(n: int) -> Iterable[bytes]:
        yield lines_of([header(f"chain_{n}")])
        yield lines_of([user("u1", None, "start of a long chain", 0)])
        buf = []
        prev = "u1"
        for i in range(1, n):
            cur = f"{i:08x}"
            if i % 2:
                buf.append('{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":'
                           '"assistant","content":[{"type":"text","text":"a%d"}],"api":"x","provider":"p","model":'
                           '"m","stopReason":"stop","timestamp":%d}}\n' % (cur, prev, TS, i, i))
            else:
                buf.append('{"type":"message","id":"%s","parentId":"%s","timestamp":"%s","message":{"role":'
                           '"user","content":"u%d","timestamp":%d}}\n' % (cur, prev, TS, i, i))
            prev = cur
            if len(buf) >= 10000:
                yield "".join(buf).encode()
                buf = []
        yield "".join(buf).encode()

    def siblings(n: int) -> Iterable[bytes]:
        yield lines_of([header(f"siblings_{n}"), user("u1", None, "parent of many", 0)])
        buf = []
        for i in range(n):
            buf.append('{"type":"message","id":"s%07d","parentId":"u1","timestamp":"%s","message":{"role":'
                       '"assistant","content":[{"type":"text","text":"sib %d"}],"api":"x","provider":"p","model":"m",'
                       '"stopReason":"stop","timestamp":%d}}\n' % (i, ts(i % 100000), i, i))
            if len(buf) >= 10000:
                yield "".join(buf).encode()
                buf = []
        yield "".join(buf).encode()

    w.file("chain_50000", chain(50_000), "tree", "50,000-entry linear chain", slow=True)
    w.file("siblings_5000", siblings(5_000), "tree", "5,000 siblings under one parent", slow=True)
    if big:
        w.file("chain_1000000", chain(1_000_000), "tree", "1,000,000-entry linear chain", big=True, slow=True)
        w.file("siblings_100000", siblings(100_000), "tree", "100,000 siblings under one parent", big=True, slow=True)

    base = base_entries()
    w.file("cycle_1", lines_of([header("cycle_1"), *base, user("c1", "c1", "I am my own parent", 9)]), "tree",
           "parentId cycle of length 1 (entry is its own parent), the leaf", fork_entry="c1")
    w.file("cycle_2", lines_of([header("cycle_2"), *base, user("c1", "c2", "one", 9),
                                assistant("c2", "c1", "two", 10)]), "tree",
           "parentId cycle of length 2 containing the leaf", fork_entry="c1")
    def cycle(n: int) -> Iterable[bytes]:  # (made only when written: collection's dry run names it alone)
        yield lines_of([header(f"cycle_{n}"), *base,
                        *(user(f"k{i:05d}", f"k{(i - 1) % n:05d}", f"cycle {i}", i) for i in range(n))])

    w.file("cycle_10000", cycle(10_000), "tree",
           "parentId cycle of length 10,000 containing the leaf", fork_entry="k00000", slow=True)
    w.file("cycle_off_path", lines_of([header("cycle_off_path"), user("c1", "c2", "one", 9),
                                       user("c2", "c1", "two", 10), *base]), "tree",
           "a 2-cycle that is not on the leaf path")
    w.file("cycle_via_leaf_record", lines_of([header("cycle_via_leaf_record"), *base,
                                              entry("compaction", "cp", "a3", 9, summary="S", firstKeptEntryId="zz",
                                                    tokensBefore=1),
                                              entry("leaf", "lf", "cp", 10, targetId="cp"),
                                              user("x1", "x2", "a", 11), user("x2", "x1", "b", 12),
                                              entry("leaf", "lf2", "x2", 13, targetId="x1")]), "tree",
           "harness leaf record pointing into a 2-cycle (harness reader walks it)", fork_entry="x1")
    w.file("leaf_self", lines_of([header("leaf_self"), *base, entry("leaf", "lf", "a3", 9, targetId="lf")]), "tree",
           "a harness leaf record whose targetId is itself")
    w.file("leaf_missing", lines_of([header("leaf_missing"), *base, entry("leaf", "lf", "a3", 9, targetId="nope")]),
           "tree", "a leaf record pointing to a missing id")
    w.file("leaf_null", lines_of([header("leaf_null"), *base, entry("leaf", "lf", "a3", 9, targetId=None)]), "tree",
           "a leaf record pointing to null (before the first entry)")
    w.file("leaf_no_target", lines_of([header("leaf_no_target"), *base, entry("leaf", "lf", "a3", 9)]), "tree",
           "a leaf record without targetId")
    w.file("labels_missing_target", lines_of([header("labels_missing_target"), *base,
                                              entry("label", "l1", "a3", 9, targetId="nope", label="ghost"),
                                              entry("label", "l2", "l1", 10, targetId=None, label="null target"),
                                              entry("label", "l3", "l2", 11, label="no target key"),
                                              entry("label", "l4", "l3", 12, targetId="u1", label="   ")]),
           "tree", "labels on missing, null and absent targets; a whitespace-only label")
    w.file("duplicate_ids", lines_of([header("duplicate_ids"), *base,
                                      user("d1", "u1", "first d1", 9),
                                      user("d1", "a3", "second d1, other parent", 10),
                                      user("d1", None, "third d1, a root", 11),
                                      assistant("z9", "d1", "child of d1", 12)]),
           "tree", "the same id three times with different parents (last wins)", fork_entry="d1")
    w.file("dangling_parent", lines_of([header("dangling_parent"), *base,
                                        user("o1", "missing-parent", "orphan", 9),
                                        assistant("o2", "o1", "orphan child", 10)]),
           "tree", "the leaf path reaches a parentId that is not in the file", fork_entry="o1")
    w.file("empty_and_odd_ids", lines_of([header("empty_and_odd_ids"), *base,
                                          user("", "a3", "empty id", 9),
                                          user("__proto__", "", "proto id", 10),
                                          user("constructor", "__proto__", "ctor", 11),
                                          user("toString", "constructor", "last", 12)]),
           "tree", "empty id, and ids named __proto__/constructor/toString", fork_entry="toString")


def _size(w: _Writer) -> None:
    def long_line(name: str, mb: int) -> Iterable[bytes]:
        yield lines_of([header(name), *base_entries()])
        yield b'{"type":"message","id":"big","parentId":"a3","timestamp":"' + ts(9).encode() + \
            b'","message":{"role":"user","content":[{"type":"text","text":"'
        chunk = (b"0123456789abcdef" * 65536)  # 1 MiB
        for _ in range(mb):
            yield chunk
        yield b'"}],"timestamp":1}}\n'
        yield lines_of([assistant("a9", "big", "after the big line", 10)])

    w.file("line_5mb", long_line("line_5mb", 5), "size", "one 5 MB line (user message text)", fork_entry="big",
           slow=True)
    if w.big:
        w.file("line_100mb", long_line("line_100mb", 100), "size", "one 100 MB line (user message text)",
               fork_entry="big", big=True, slow=True)
    w.file("many_lines_no_newline_at_all", b"{" * 2_000_000, "size",
           "2 MB of '{' and no newline: one huge invalid line", slow=True)


def _escapes(w: _Writer) -> None:
    t = HOSTILE_TEXT
    cwd = f"/tmp/hostile{ESC_CLEAR}{OSC_TITLE}[bold]cwd[/bold]\r\b"
    entries = [
        entry("model_change", "m0", None, 0, provider=f"prov{ESC_CLEAR}", modelId=f"model{OSC_TITLE}{MARKUP_BOLD}"),
        entry("thinking_level_change", "t0", "m0", 1, thinkingLevel=f"high{ESC_CLEAR}"),
        user("u1", "t0", "user: " + t, 2),
        assistant("a1", "u1", "assistant: " + t, 3,
                  tool=("call_1", f"bash{ESC_CLEAR}", {"command": f"echo {t}", "[link=http://e]k[/link]": OSC_TITLE})),
        tool_result("r1", "a1", "call_1", f"bash{OSC_TITLE}", "tool output line 1: " + t + "\n"
                    + "\n".join(f"line {i} \x1b[31mred\x1b[0m" for i in range(30)), 4),
        entry("message", "b1", "r1", 5, message={
            "role": "bashExecution", "command": f"printf '{t}'", "output": "out: " + t, "exitCode": 1,
            "cancelled": False, "truncated": False, "timestamp": 1}),
        entry("custom_message", "cm", "b1", 6, customType=f"ext{ESC_CLEAR}", content="custom: " + t,
              display=True),
        entry("custom", "cu", "cm", 7, customType=f"state{OSC_TITLE}", data={"k": t}),
        entry("message", "th", "cu", 8, message={
            "role": "assistant", "content": [{"type": "thinking", "thinking": "thinking: " + t},
                                             {"type": "text", "text": "reply " + MARKUP_LINK}],
            "api": "x", "provider": "p", "model": "m", "stopReason": "error", "errorMessage": "error: " + t,
            "timestamp": 9}),
        entry("label", "l1", "th", 9, targetId="u1", label="label: " + t),
        entry("label", "l2", "l1", 10, targetId="th", label=MARKUP_LINK),
        entry("session_info", "s1", "l2", 11, name="name: " + t),
        entry("branch_summary", "bs", "u1", 12, fromId="u1", summary="branch: " + t),
        entry("compaction", "cp", "s1", 13, summary="compaction: " + t, firstKeptEntryId="u1", tokensBefore=5),
        user("u2", "cp", "after: " + MARKUP_BOLD + " " + ESC_CLEAR, 14),
        entry(f"type{ESC_CLEAR}", f"id{ESC_CLEAR}{OSC_TITLE}", "u2", 15),
        user("u3", f"id{ESC_CLEAR}{OSC_TITLE}", "last", 16),
    ]
    exact = ["user: " + t, "label: " + t, MARKUP_LINK, "name: " + t, cwd, "after: " + MARKUP_BOLD + " " + ESC_CLEAR]
    w.file("escapes", lines_of([header("escapes", cwd=cwd), *entries]), "escapes",
           "Rich markup and ANSI/OSC/C1 escapes, CR, BS in user text, tool output, labels, name, cwd, ids, types",
           exact=exact, escapes=True)
    # Same text in a harness-written file (leaf record + metadata) so both readers' views see it.
    h_entries = entries[:-2] + [entry("leaf", "lf", "u2", 17, targetId="u2")]
    w.file("escapes_harness", lines_of([header("escapes_harness", cwd=cwd, metadata={"m": t}), *h_entries]),
           "escapes", "the escapes, in a harness-written file (metadata, leaf record)",
           exact=["user: " + t, "label: " + t, "name: " + t, cwd], escapes=True)
    w.file("raw_control_bytes", lines_of([header("raw_control_bytes"), *base_entries()])
           + b'{"type":"message","id":"u9","parentId":"a3","timestamp":"x","message":{"role":"user","content":"raw '
           + ESC_CLEAR.encode() + b" " + OSC_TITLE.encode() + b'"}}\n'
           + ESC_CLEAR.encode() + OSC_TITLE.encode() + b"\r\b garbage line\n"
           + lines_of([user("u10", "a3", "after raw", 10)]), "escapes",
           "raw (unescaped) ESC/BEL/CR/BS bytes inside a JSON string (invalid JSON) and as a whole line",
           escapes=True, fork_entry="u10")
    w.file("evil_names", valid_bytes("evil"), "escapes",
           "escapes, CR, BS, newline and markup in the project directory and file name", project=EVIL_PROJECT,
           filename=EVIL_FILE, escapes=True)


def _filesystem(w: _Writer) -> None:
    d = w.project(PROJECT)
    # A directory named like a session file, with a valid session inside it.
    xdir = os.path.join(d, "x.jsonl")
    w.makedirs(xdir)
    w.write(os.path.join(xdir, "inner.jsonl"), valid_bytes("inner"))
    w.cases["dir_named_jsonl"] = Case("dir_named_jsonl", xdir, "fs", "a directory named x.jsonl", is_file=False)
    # Symlinked files.
    w.symlink("valid.jsonl", os.path.join(d, "link-to-valid.jsonl"))
    w.cases["symlink_file"] = Case("symlink_file", os.path.join(d, "link-to-valid.jsonl"), "fs",
                                   "a symlink to a valid session file", exact=["hello"])
    w.symlink("does-not-exist.jsonl", os.path.join(d, "link-dangling.jsonl"))
    w.cases["symlink_dangling"] = Case("symlink_dangling", os.path.join(d, "link-dangling.jsonl"), "fs",
                                       "a dangling symlink", is_file=False)
    w.symlink("link-self.jsonl", os.path.join(d, "link-self.jsonl"))
    w.cases["symlink_loop"] = Case("symlink_loop", os.path.join(d, "link-self.jsonl"), "fs",
                                   "a symlink pointing to itself (ELOOP)", is_file=False)
    w.symlink("x.jsonl", os.path.join(d, "link-to-dir.jsonl"))
    # Symlinked project directories.
    t = w.project(LINK_TARGET)
    w.write(os.path.join(t, "target.jsonl"), lines_of([header("target", cwd="/tmp/hostile-linktarget"),
                                                        *base_entries()]))
    w.symlink(LINK_TARGET, os.path.join(w.root, SYMLINKED))
    w.symlink(".", os.path.join(w.root, LINKLOOP))
    w.projects["symlinked"] = {"dir": os.path.join(w.root, SYMLINKED), "cwd": "/tmp/hostile-symlinked"}
    w.projects["linkloop"] = {"dir": os.path.join(w.root, LINKLOOP), "cwd": "/tmp/hostile-linkloop"}
    # Many tiny files.
    many = w.project(MANY)
    n = 10_000 if w.big else 300
    for i in range(n):
        w.write(os.path.join(many, f"2026-07-25T09-14-{i // 1000:02d}-{i % 1000:03d}Z_tiny{i:05d}.jsonl"),
                lines_of([header(f"tiny{i}", cwd="/tmp/hostile-many"), user("u1", None, f"tiny {i}", i)]))
    w.projects["many"] = {"dir": many, "cwd": "/tmp/hostile-many", "count": n}
    # An unreadable file among readable ones.
    perm = w.project(PERM)
    for nm in ("a", "b"):
        w.write(os.path.join(perm, f"{nm}.jsonl"), lines_of([header(f"perm-{nm}", cwd="/tmp/hostile-perm"),
                                                             *base_entries()]))
    unreadable = os.path.join(perm, "unreadable.jsonl")
    w.write(unreadable, lines_of([header("perm-unreadable", cwd="/tmp/hostile-perm"), *base_entries()]))
    w.chmod(unreadable, 0)
    w.cases["unreadable"] = Case("unreadable", unreadable, "fs", "a chmod 000 file among readable ones")
    w.projects["perm"] = {"dir": perm, "cwd": "/tmp/hostile-perm", "unreadable": unreadable}
    w.projects["main"] = {"dir": d, "cwd": PROJECT_CWD}
    w.projects["evil"] = {"dir": os.path.join(w.root, EVIL_PROJECT), "cwd": EVIL_CWD}


def generate(outdir: str, big: bool | None = None, *, dry: bool = False) -> dict:
    """Write the corpus under ``outdir`` (created if needed) and return its manifest.

    ``dry=True`` writes nothing and only returns the manifest (test collection uses it)."""
    big = big_requested() if big is None else big
    if not dry:
        os.makedirs(outdir, exist_ok=True)
    w = _Writer(os.path.abspath(outdir), big, dry)
    for part in (_basic, _truncation, _encoding, _json_oddities, _tree, _size, _escapes, _filesystem):
        part(w)
    return {"root": w.root, "big": big, "cases": w.cases, "projects": w.projects}


SPECIAL_PROJECT = "--tmp-hostile-special--"


def generate_special(outdir: str) -> dict:
    """A separate sessions root holding files that are not regular files: a FIFO named
    ``fifo.jsonl`` (opening it for reading blocks until a writer appears) and a symlink
    ``zero.jsonl`` to ``/dev/zero`` (endless data, no newline), next to a valid session.

    Kept out of ``generate`` on purpose: a reader that opens them can hang or eat all memory,
    which would take every directory-wide command on the main corpus down with it.  Run anything
    on this root with a timeout and a memory limit."""
    d = os.path.join(os.path.abspath(outdir), SPECIAL_PROJECT)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "valid.jsonl"), "wb") as fh:
        fh.write(lines_of([header("special", cwd="/tmp/hostile-special"), *base_entries()]))
    fifo = os.path.join(d, "fifo.jsonl")
    os.mkfifo(fifo)
    zero = os.path.join(d, "zero.jsonl")
    os.symlink("/dev/zero", zero)
    return {"root": os.path.abspath(outdir), "dir": d, "cwd": "/tmp/hostile-special", "fifo": fifo, "zero": zero,
            "valid": os.path.join(d, "valid.jsonl")}


def case_names(big: bool | None = None) -> list[str]:
    """The names of the single-file cases, without writing anything (made once a process: two
    test modules collect them, and a dry run still makes every file's bytes, 0.13 s)."""
    return list(_case_names(big_requested() if big is None else big))


@functools.cache
def _case_names(big: bool) -> tuple[str, ...]:
    return tuple(generate("/nonexistent-pisess-hostile", big, dry=True)["cases"])


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if "--special" in argv:
        sp = generate_special(args[0])
        print(f"FIFO {sp['fifo']} and /dev/zero link {sp['zero']} under {sp['root']} (run with a timeout!)")
        return 0
    m = generate(args[0], big=True if "--big" in argv else None)
    for c in m["cases"].values():
        print(f"{c.name!a:40} {c.group:10} {c.description}")
    print(f"{len(m['cases'])} cases under {m['root']} (big={m['big']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["generate", "generate_special", "case_names", "Case", "HOSTILE_TEXT"]
