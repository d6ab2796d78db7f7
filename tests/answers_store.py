"""A small hand-written sessions root for search, stats and du (not a test module).

* ``P`` (project webapp, pi command): two branches off ``a2`` (a regex attempt ``u2 a3 t2``,
  abandoned; the UTC fix ``u3 a4 t3``), a compaction ``c1`` keeping from ``u3`` (so ``m1 .. a2``
  sit before the checkpoint), a label and a name.
* ``F`` (project webapp, pi command): forked from ``P`` at ``a4`` (``parentSession`` = P's path):
  ``m1 .. a4`` copied with their ids and timestamps, the label re-created, then its own turn.  Its
  header is padded with spaces to 1,000 bytes, so sizes do not depend on where the test runs.
* ``H`` (project api, pi's SDK): a ``leaf`` record moving back from an aborted answer, a branch
  summary, a custom_message, a bash run with escape sequences, a base64 image, markup-like text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CWD = "/home/you/projects/webapp"
CWD_API = "/home/you/projects/api"
P_ID = "01955000-aaaa-7aaa-8aaa-aaaaaaaaaaaa"
F_ID = "0195a1f0-bbbb-7bbb-8bbb-bbbbbbbbbbbb"
H_ID = "0195b2c0-cccc-7ccc-8ccc-cccccccccccc"
IMAGE = "iVBORw0KGgo" + "A" * 1989  # 2,000 base64 characters


def usage(i: int, o: int, cr: int = 0, cw: int = 0, cost: float = 0.0) -> dict:
    return {"input": i, "output": o, "cacheRead": cr, "cacheWrite": cw, "totalTokens": i + o + cr + cw,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


class Writer:
    def __init__(self, day: str, start_minute: int = 0):
        self.day = day
        self.n = start_minute * 60
        self.lines: list = []

    def ts(self) -> str:
        self.n += 7
        return f"{self.day}T09:{self.n // 60:02d}:{self.n % 60:02d}.000Z"

    def add(self, type_: str, id_: str, parent, **fields) -> dict:
        e = {"type": type_, "id": id_, "parentId": parent, "timestamp": self.ts(), **fields}
        self.lines.append(e)
        return e

    def msg(self, id_: str, parent, role: str, **m) -> dict:
        return self.add("message", id_, parent, message={"role": role, **m, "timestamp": 1740000000000 + self.n})


def assistant(content: list, u: dict, stop: str = "stop", model: str = "claude-opus-4-5",
              provider: str = "anthropic", **extra) -> dict:
    return {"content": content, "api": "anthropic-messages", "provider": provider, "model": model, "usage": u,
            "stopReason": stop, **extra}


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def call(id_: str, name: str, args: dict) -> dict:
    return {"type": "toolCall", "id": id_, "name": name, "arguments": args}


def write(path: Path, header: dict, entries: list, header_width: int = 0) -> Path:
    """One JSON per line; the header padded with spaces (JSON whitespace) to ``header_width``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in [header, *entries]]
    assert len(lines[0]) <= header_width or not header_width, "the sessions root path is too long"
    lines[0] = lines[0].ljust(header_width)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def parent_entries() -> list:
    w = Writer("2025-03-01")
    w.add("model_change", "m1", None, provider="anthropic", modelId="claude-opus-4-5")
    w.add("thinking_level_change", "th1", "m1", thinkingLevel="medium")
    w.msg("u1", "th1", "user", content=[text("Fix the flaky date parser in src/date.ts")])
    w.msg("a1", "u1", "assistant", **assistant([text("I'll read the parser first."),
                                                 call("c-1", "read", {"path": "src/date.ts"})],
                                                usage(1000, 100, 0, 500, 0.01), "toolUse"))
    w.msg("t1", "a1", "toolResult", toolCallId="c-1", toolName="read", isError=False,
          content=[text("export function parseDate(s) {\n  return new Date(s); // local time!\n}")])
    w.msg("a2", "t1", "assistant", **assistant([text("The date is parsed in local time; I can switch to UTC or use "
                                                      "a regex.")], usage(1200, 80, 900, 0, 0.008)))
    w.msg("u2", "a2", "user", content=[text("Try a regex approach")])
    w.msg("a3", "u2", "assistant", **assistant([call("c-2", "bash", {"command": "npm test -- date"})],
                                                usage(1500, 60, 1000, 0, 0.009), "toolUse"))
    w.msg("t2", "a3", "toolResult", toolCallId="c-2", toolName="bash", isError=True,
          content=[text("FAIL tests/date.test.ts\n  expected 2025-03-01T00:00:00Z")])
    w.msg("u3", "a2", "user", content=[text("Use the UTC helper instead")])
    w.msg("a4", "u3", "assistant", **assistant([call("c-3", "edit", {"path": "src/date.ts",
                                                                     "newText": "return parseUtc(s);"})],
                                                usage(1800, 120, 1000, 0, 0.012), "toolUse"))
    return w, w.lines


def build_store(root: Path) -> dict:
    """Write the three sessions under ``root`` (the sessions root); return their paths."""
    w, _ = parent_entries()
    w.msg("t3", "a4", "toolResult", toolCallId="c-3", toolName="edit", isError=False,
          content=[text("Successfully replaced 1 block(s) in src/date.ts.")])
    w.add("compaction", "c1", "t3", summary="## Goal\nParse dates as UTC in src/date.ts.\n## Done\nSwitched parseDate "
          "to the UTC helper.", firstKeptEntryId="u3", tokensBefore=5000, details={"readFiles": ["src/date.ts"],
                                                                                    "modifiedFiles": []},
          usage=usage(3000, 200, 0, 0, 0.02), fromHook=False)
    w.msg("u4", "c1", "user", content=[text("Now update the changelog for the UTC fix")])
    w.msg("a5", "u4", "assistant", **assistant([{"type": "thinking", "thinking": "The changelog lives in CHANGELOG.md"},
                                                 text("Added a line about UTC date parsing to CHANGELOG.md.")],
                                                usage(900, 150, 2000, 0, 0.007)))
    w.add("label", "l1", "a5", targetId="u1", label="start-of-date-work")
    w.add("session_info", "n1", "l1", name="Date parser fix")
    proj = root / "--home-you-projects-webapp--"
    p = write(proj / f"2025-03-01T09-00-00-000Z_{P_ID}.jsonl",
              {"type": "session", "version": 3, "id": P_ID, "timestamp": "2025-03-01T09:00:00.000Z", "cwd": CWD},
              w.lines)

    # the fork: the root path to a4 copied verbatim (no labels on it), the label re-created, a new turn
    _, copied = parent_entries()
    copied = [e for e in copied if e["id"] not in ("u2", "a3", "t2")]
    f = Writer("2025-03-02", 0)
    f.lines = [dict(e) for e in copied]
    label_ts = next(e for e in w.lines if e["id"] == "l1")["timestamp"]
    f.lines.append({"type": "label", "id": "lf1", "parentId": "a4", "timestamp": label_ts, "targetId": "u1",
                    "label": "start-of-date-work"})
    f.msg("u5", "lf1", "user", content=[text("Also add a test for parseDate in UTC")])
    f.msg("a6", "u5", "assistant", **assistant([call("c-4", "write", {"path": "tests/date.test.ts"})],
                                                usage(2000, 300, 1500, 0, 0.015), "toolUse"))
    f.msg("t4", "a6", "toolResult", toolCallId="c-4", toolName="write", isError=False,
          content=[text("Wrote 20 lines to tests/date.test.ts")])
    fk = write(proj / f"2025-03-02T10-00-00-000Z_{F_ID}.jsonl",
               {"type": "session", "version": 3, "id": F_ID, "timestamp": "2025-03-02T10:00:00.000Z", "cwd": CWD,
                "parentSession": str(p)}, f.lines, header_width=1000)

    h = Writer("2025-03-03")
    h.add("model_change", "hm1", None, provider="anthropic", modelId="claude-sonnet-4-5")
    h.msg("hu1", "hm1", "user", content="Show me the failing test output")
    h.msg("hb1", "hu1", "bashExecution", command="npm test", exitCode=1, cancelled=False, truncated=False,
          output="FAIL src/api.test.ts\n  x returns 404 for unknown users (12 ms)\n\x1b[31mError\x1b[0m: expected 404,"
                 " got 500 in src/users.ts")
    h.msg("ha1", "hb1", "assistant", **assistant([text("The handler throws before the 404 check. [bold]Fix[/bold] "
                                                       "coming in src/users.ts.")], usage(700, 90, 0, 0, 0.004),
                                                 model="claude-sonnet-4-5"))
    h.msg("hu2", "ha1", "user", content=[text("Here is a screenshot of the error page"),
                                         {"type": "image", "mimeType": "image/png", "data": IMAGE}])
    h.msg("ha2", "hu2", "assistant", **assistant([], usage(100, 0, 0, 0, 0.0005), "aborted",
                                                 model="claude-sonnet-4-5", errorMessage="Request was aborted"))
    h.add("leaf", "hl1", "ha2", targetId="ha1")
    h.add("branch_summary", "hs1", "ha1", fromId="ha1", summary="Tried to read the screenshot of the error page; "
          "aborted.", usage=usage(400, 50, 0, 0, 0.002), fromHook=False)
    h.add("custom_message", "hc1", "hs1", customType="reminder", content="Remember: never return 500 for a missing "
          "user", display=True)
    h.msg("ha3", "hc1", "assistant", **assistant([text("Fixed: missing users now return 404.")],
                                                 usage(800, 60, 300, 0, 0.005), model="claude-sonnet-4-5"))
    hp = write(root / "--home-you-projects-api--" / f"2025-03-03T09-00-00-000Z_{H_ID}.jsonl",
               {"type": "session", "version": 3, "id": H_ID, "timestamp": "2025-03-03T09:00:00.000Z", "cwd": CWD_API},
               h.lines)
    return {"P": p, "F": fk, "H": hp}


# --- test plumbing shared by test_search / test_stats / test_du ------------------------------------

@pytest.fixture()
def store(tmp_path, monkeypatch, golden_env):
    """The store under ``tmp_path/sessions``, the working directory ``tmp_path``, golden settings
    (``golden_env``)."""
    paths = build_store(tmp_path / "sessions")
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return {"root": tmp_path / "sessions", **paths}


def invoke(*args: str):
    """``pisess ARGS`` through a fresh ``CliRunner`` (the settings are ``store``'s)."""
    import conftest  # (here, not above: conftest imports this module)

    return conftest.invoke(conftest.new_runner(), *args)


