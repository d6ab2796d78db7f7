"""Sessions of screenshots written twice: as pi writes them, and in shapes pi reads the same way.

Standard library only: ``bench.py`` (case 17's odd-shaped variant) and the tests (issue 34's memory
tests) both write their files with it.

``entries(turns, seed)`` makes the turns: a prompt, an assistant call of a ``screenshot`` tool, its
result (a line of text and one PNG; every third result also carries the image in its ``details``),
the answer; every fifth prompt holds an image of its own, every seventh turn ends with a
``custom_message`` holding one.  Message times run five minutes ahead of their entries' (a clock
skew between the machine that made a message and the one that wrote it), and every eleventh entry
is stamped an hour before the one it follows (entries out of time order).

``write_pi`` writes them as pi does (``JSON.stringify``: compact, keys as made, LF, a final newline).
``write_odd`` writes the same values in the shapes real files carry: Python's default separators
with spaces (and tabs) between tokens, keys in another order (``data`` before ``type``,
``mimeType`` first), base64 with ``\\/`` and ``\\u`` escapes, CRLF line ends, no final newline.
Every line of one file parses to the value of the same line of the other.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterable
from datetime import datetime, timezone

SIG = bytes.fromhex("89504e470d0a1a0a0000000d49484452")
START_MS = 1_741_000_000_000
SKEW_MS = 5 * 60_000  # message times ahead of their entries'
CWD = "/home/user/odd-shapes"


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _png(rng: random.Random, kb: int) -> str:
    raw = kb * 1024 * 3 // 4
    return base64.b64encode(SIG + rng.randbytes(raw - len(SIG))).decode("ascii")


def entries(turns: int, seed: int = 34, image_kb: int = 64, session_id: str | None = None) -> list[dict]:
    """The header and entries of ``turns`` screenshot turns (see the module's note)."""
    rng = random.Random(seed)
    sid = session_id or f"0199{seed:04x}-0000-7000-8000-{seed:012x}"
    ms = START_MS
    out: list[dict] = [{"type": "session", "version": 3, "id": sid, "timestamp": _iso(ms), "cwd": CWD}]
    parent: str | None = None
    count = 0

    def add(kind: str, **fields) -> dict:
        nonlocal parent, ms, count
        count += 1
        ms += 1000 + rng.randrange(1000)
        stamp = ms - 3_600_000 if count % 11 == 0 else ms
        e = {"type": kind, "id": f"{count:08x}", "parentId": parent, "timestamp": _iso(stamp), **fields}
        parent = e["id"]
        out.append(e)
        return e

    def message(m: dict) -> dict:
        return add("message", message={**m, "timestamp": ms + 1000 + SKEW_MS})

    add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    add("thinking_level_change", thinkingLevel="off")
    add("session_info", name="odd-shaped screenshots")
    usage = {"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1280,
             "cost": {"input": 0.0036, "output": 0.0012, "cacheRead": 0, "cacheWrite": 0, "total": 0.0048}}
    model = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    for t in range(turns):
        prompt: list[dict] = [{"type": "text", "text": f"Take a screenshot of step {t} — café ✓"}]
        if t % 5 == 4:
            prompt.append({"type": "image", "data": _png(rng, image_kb), "mimeType": "image/png"})
        message({"role": "user", "content": prompt})
        cid = f"call-{t}"
        message({"role": "assistant", "content": [
            {"type": "text", "text": f"Capturing #step-{t}."},
            {"type": "toolCall", "id": cid, "name": "screenshot", "arguments": {"selector": f"#step-{t}"}}],
            **model, "usage": usage, "stopReason": "toolUse"})
        image = {"type": "image", "data": _png(rng, image_kb), "mimeType": "image/png"}
        result = {"role": "toolResult", "toolCallId": cid, "toolName": "screenshot",
                  "content": [{"type": "text", "text": f"Screenshot of #step-{t} (1280x800)"}, image],
                  "isError": False}
        if t % 3 == 2:
            result["details"] = {"images": [{"type": "image", "data": _png(rng, image_kb), "mimeType": "image/png"}],
                                 "path": f"/tmp/step-{t}.png"}
        message(result)
        message({"role": "assistant", "content": [{"type": "text", "text": f"Step {t} shows the form."}],
                 **model, "usage": usage, "stopReason": "stop"})
        if t % 7 == 6:
            add("custom_message", customType="screen-watch", display=True,
                content=[{"type": "text", "text": f"watcher saw step {t}"},
                         {"type": "image", "data": _png(rng, image_kb), "mimeType": "image/png"}])
    return out


def pi_line(v: dict) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def write_pi(path: str, values: Iterable[dict]) -> None:
    """As pi writes: one compact line per value, LF, a final newline."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for v in values:
            fh.write(pi_line(v) + "\n")


def _reordered(v, n: list[int]):
    """``v`` with keys in another order: an image block's ``data`` first or ``mimeType`` first (in
    turn), any other object's keys reversed."""
    if isinstance(v, list):
        return [_reordered(x, n) for x in v]
    if not isinstance(v, dict):
        return v
    if v.get("type") == "image" and "data" in v:
        n[0] += 1
        keys = ["data", "mimeType", "type"] if n[0] % 2 else ["mimeType", "data", "type"]
        keys += [k for k in v if k not in keys]
        return {k: _reordered(v[k], n) for k in keys if k in v}
    return {k: _reordered(v[k], n) for k in reversed(list(v))}


def odd_line(v: dict, number: int) -> str:
    """One value in an odd shape: default separators (tabs as well on every other line), keys in
    another order, base64's ``/`` written ``\\/`` on odd lines and its ``A`` written ``\\u0041``
    on every third."""
    n = [number]
    text = json.dumps(_reordered(v, n), ensure_ascii=number % 4 == 0)
    if number % 2:
        text = text.replace('", "', '",\t "').replace("/", "\\/")
    if number % 3 == 0:
        text = _escape_base64_a(text)
    return " " + text + "\t"


def _escape_base64_a(text: str) -> str:
    """Each ``A`` of a long string (an image's base64) as ``\\u0041``."""
    out, pos = [], 0
    while True:
        k = text.find('"data": "', pos)
        if k < 0:
            break
        start = k + len('"data": "')
        end = text.index('"', start)
        out += (text[pos:start], text[start:end].replace("A", "\\u0041"))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def write_odd(path: str, values: Iterable[dict]) -> None:
    """The same values in the odd shapes (see ``odd_line``), CRLF line ends, no final newline."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        for k, v in enumerate(values):
            fh.write(("\r\n" if k else "") + odd_line(v, k))
