"""Issue 22's low findings and pi's own tracker notes: each small, each with a test that failed
before its fix (the name says which finding)."""

from __future__ import annotations

import os

from conftest import assistant, cli_runner, header, invoke, user, write_session


def small_session(tmp_path, name: str = "session.jsonl") -> str:
    return write_session(tmp_path, [header(), user("a1", None, "hello"), assistant("b2", "a1", "hi there")], name)


def test_export_output_dash_is_stdout(tmp_path, monkeypatch):
    path = small_session(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = invoke(cli_runner(monkeypatch), "export", path, "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert "hello" in r.stdout and "hi there" in r.stdout
    assert not os.path.exists(tmp_path / "-")


def test_search_no_hits_names_the_count_once(tmp_path, monkeypatch):
    path = small_session(tmp_path)
    r = invoke(cli_runner(monkeypatch), "search", "zzzz", path)
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1] == "no hits in 1 file"


def test_search_fifo_is_not_searched(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    r = invoke(cli_runner(monkeypatch), "search", "zzzz", str(fifo))
    assert r.exit_code == 2
    assert "no hits in 1 file" not in r.stderr
    assert "no file searched (1 unreadable)" in r.stderr and "pipe.jsonl: unreadable" in r.stderr


def test_search_binary_garbage_is_invalid_session(tmp_path, monkeypatch):
    import random

    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(bytes(random.Random(3).randrange(256) for _ in range(3000)))
    r = invoke(cli_runner(monkeypatch), "search", "zzzz", str(garbage), small_session(tmp_path))
    assert r.exit_code == 1
    assert "garbage.jsonl: invalid_session" in r.stderr
    assert "no hits in 1 file (1 not a session)" in r.stderr
    j = invoke(cli_runner(monkeypatch), "search", "zzzz", str(garbage), "--json")
    import json

    assert json.loads(j.stdout)["skipped"][0]["code"] == "invalid_session"


def two_fifos(tmp_path) -> list[str]:
    out = []
    for name in ("p1.jsonl", "p2.jsonl"):
        os.mkfifo(tmp_path / name)
        out.append(str(tmp_path / name))
    return out


def test_validate_summary_counts_unreadable_inputs_as_errors(tmp_path, monkeypatch):
    fifos = two_fifos(tmp_path)
    r = invoke(cli_runner(monkeypatch), "validate", *fifos)
    assert r.exit_code == 2
    lines = r.stdout.strip().splitlines()
    assert sum(" error storage: " in ln for ln in lines) == 2
    assert lines[-1].startswith("0 files checked, 2 unreadable \u00b7 2 errors \u00b7 ")
    g = invoke(cli_runner(monkeypatch), "validate", "--format", "github", *fifos)
    assert g.stdout.strip().splitlines()[-1] == "0 files checked, 2 unreadable, 2 errors, 0 warnings"


def test_secrets_summary_counts_unreadable_inputs(tmp_path, monkeypatch):
    fifos = two_fifos(tmp_path)
    r = invoke(cli_runner(monkeypatch), "secrets", *fifos, small_session(tmp_path))
    assert r.exit_code == 2
    assert r.stdout.strip().splitlines()[-1] == "1 file scanned, 2 unreadable \u00b7 no secrets found"
    g = invoke(cli_runner(monkeypatch), "secrets", "--format", "github", *fifos)
    assert g.stdout.strip().splitlines()[-1] == "0 files scanned, 2 unreadable, 0 secrets found, 0 allowlisted"


def test_sdk_refusal_hints_at_the_lenient_reader(tmp_path, monkeypatch):
    path = write_session(tmp_path, [header(), user("a1", None), "{not json", assistant("b2", "a1")])
    for cmd, hint in (("tree", "--lenient"), ("path", "--lenient"), ("context", "--lenient"),
                      ("export", "--reader cli"), ("stats", None)):
        r = invoke(cli_runner(monkeypatch), cmd, path, "--reader", "harness", "--pi-version", "0.82.1")
        if hint is None:  # stats reads leniently already and says so
            assert "refuses" in r.stderr and "reads it as the pi command does" not in r.stderr
            continue
        assert r.exit_code == 1, (cmd, r.stderr)
        assert f"pi's SDK refuses this file; {hint} reads it as the pi command does" in r.stderr, cmd
        assert invoke(cli_runner(monkeypatch), cmd, path, "--reader", "cli").exit_code == 0


def test_tree_and_path_say_the_sdk_refuses_a_v1_file(tmp_path, monkeypatch):
    from conftest import DROP

    v1 = header(version=DROP, provider="anthropic", modelId="claude-sonnet-4-5", thinkingLevel="off")
    msg = {"type": "message", "timestamp": "2025-11-20T23:33:51.000Z",
           "message": {"role": "user", "content": [{"type": "text", "text": "old"}], "timestamp": 1}}
    path = write_session(tmp_path, [v1, msg])
    for cmd in ("tree", "path", "context"):
        r = invoke(cli_runner(monkeypatch), cmd, path, "--reader", "harness", "--pi-version", "0.82.1")
        assert r.exit_code == 0, r.stderr
        assert "pi's SDK refuses it (unsupported session version)" in r.stderr + r.stdout, cmd


def test_demo_keep_keeps_the_root_and_help_names_path(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    r = invoke(cli_runner(monkeypatch, columns=300), "demo", "--keep")
    assert r.exit_code == 0
    kept = [p for p in os.listdir(tmp_path) if p.startswith("pisess-demo-")]
    assert len(kept) == 1 and str(tmp_path / kept[0] / "sessions") in r.stdout
    shutil.rmtree(tmp_path / kept[0])
    r = invoke(cli_runner(monkeypatch, columns=300), "demo")
    assert r.exit_code == 0 and not [p for p in os.listdir(tmp_path) if p.startswith("pisess-demo-")]
    h = invoke(cli_runner(monkeypatch, columns=300), "demo", "--help")
    assert "context, path and validate" in h.stdout and "--keep" in h.stdout


def usage(i: int, cost: float) -> dict:
    return {"input": i, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + 10,
            "cost": {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def with_usage(e: dict, u: dict) -> dict:
    e["message"]["usage"] = u
    return e


def test_stats_columns_keep_one_number_format(tmp_path, monkeypatch):
    """1.8M never stands over 332,555, nor $31.2190 beside $109.81."""
    path = write_session(tmp_path, [
        header(), user("a1", None),
        with_usage(assistant("b2", "a1", model="big"), usage(1_800_000, 109.81)),
        user("c3", "b2"), with_usage(assistant("d4", "c3", model="small"), usage(332_555, 31.219))])
    r = invoke(cli_runner(monkeypatch, columns=120), "stats", "--by", "model", path)
    assert r.exit_code == 0, r.stderr
    rows = {ln.split()[0]: ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith(("anthropic/", "total"))}
    assert rows["anthropic/big"][2] == "1.80M" and rows["anthropic/small"][2] == "0.33M"
    assert rows["anthropic/big"][6] == "$109.81" and rows["anthropic/small"][6] == "$31.22"
    assert rows["total"][6] == "$141.03"
    cost = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("cost"))
    assert cost.split()[1:] == ["$141.03", "$0.00", "$0.00", "$141.03"], cost  # not $0.0000 beside $141.03


def branchy(tmp_path) -> str:
    """Two branch points, three tips."""
    return write_session(tmp_path, [header(), user("a1", None), assistant("b2", "a1"), user("c3", "b2"),
                                    user("c4", "b2"), assistant("d5", "a1"), assistant("d6", "c4")])


def test_watch_summary_counts_branch_points_as_tree_and_marks_the_active_path(tmp_path, monkeypatch):
    path = branchy(tmp_path)
    r = invoke(cli_runner(monkeypatch, columns=120), "watch", path, "--until-idle", "0", "--interval", "0.01")
    assert r.exit_code == 0, r.stderr
    head, *rows = r.stdout.splitlines()
    t = invoke(cli_runner(monkeypatch, columns=120), "tree", path)
    assert "2 branch points" in t.stdout.splitlines()[0] and "2 branch points" in head and "branches" not in head
    assert rows and all("\u25cf " in row and "\u25cb" not in row for row in rows if "d6" in row or "c4" in row)


def test_watch_exit_on_delete_does_not_say_it_waits():
    from pisess.cli.views.watch import _event_row
    from pisess.core.model.follow import Event

    gone = Event("deleted", None, None, {})
    assert "waiting" in _event_row(gone).plain
    ends = _event_row(gone, 8, True).plain
    assert "waiting" not in ends and "ending (--exit-on-delete)" in ends


def test_stats_says_what_an_abandoned_branch_is(tmp_path, monkeypatch):
    r = invoke(cli_runner(monkeypatch, columns=200), "stats", branchy(tmp_path))
    assert "2 abandoned branches (off the active path)" in r.stdout
    h = invoke(cli_runner(monkeypatch), "help", "stats")
    assert "An abandoned branch is one that leaves the active path" in " ".join(h.stdout.split())


def long_id_root(tmp_path) -> str:
    root = tmp_path / "sessions"
    for i in (1, 2, 3):
        sid = f"my-custom-writer-session-long-id-000{i}"
        write_session(root / "--work-proj--", [
            header(id=sid, timestamp=f"2026-07-25T09:1{i}:03.512Z"),
            user(f"a{i}", None, "please refactor the parser module into smaller pieces",
                 ts=f"2026-07-25T09:1{i}:04.512Z")], f"2026-07-25T09-1{i}-03-512Z_{sid}.jsonl")
    return str(root)


def test_ls_at_80_columns_keeps_its_sort_column_and_a_readable_name(tmp_path, monkeypatch):
    root = long_id_root(tmp_path)
    for args in ((), ("--long",)):
        r = invoke(cli_runner(monkeypatch, columns=80), "ls", "--sessions-dir", root, "--cwd", "/work/proj", *args)
        assert r.exit_code == 0, r.stderr
        lines = r.stdout.splitlines()
        at = next(i for i, ln in enumerate(lines) if ln.startswith("  ID "))
        head, rows = lines[at], lines[at + 1:]
        assert "LAST ACTIVE" in head, args  # pi 1.6 lists by last activity: the column stays
        assert all(len(row) <= 80 for row in rows)
        if args:
            assert all("please refactor the" in row for row in rows), rows
    r = invoke(cli_runner(monkeypatch, columns=80), "ls", "--sessions-dir", root, "--all", "--long")
    lines = r.stdout.splitlines()
    rows = lines[next(i for i, ln in enumerate(lines) if ln.startswith("  ID ")) + 1:]
    assert rows and all("please ref" in row and "\u2026rk/proj" in row for row in rows), rows


def test_search_legend_breaks_between_phrases(tmp_path, monkeypatch):
    path = branchy(tmp_path)
    r = invoke(cli_runner(monkeypatch, columns=60), "search", "hi", path)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("\u00bb\u2026\u00ab: "))
    phrases = [p for ln in lines[at:] for p in ln.split(" \u00b7 ")]
    assert phrases == ["\u00bb\u2026\u00ab: the match", "active: in the model's context", "compacted: replaced by its summary",
                       "branch: off the active path"]
    assert all(len(ln) <= 60 for ln in lines[at:])
    assert lines[at - 1].endswith("1 file searched")  # not "1 file searched (1 file)"


def test_secrets_allowlist_hint_keeps_the_scanned_paths(tmp_path, monkeypatch):
    import shlex

    secret = "DB_PASSWORD=" + "hunter2!x"
    path = write_session(tmp_path / "my dir", [header(), user("a1", None, secret)])
    r = invoke(cli_runner(monkeypatch, columns=300), "secrets", path)
    assert r.exit_code == 1
    assert f"pisess secrets {shlex.quote(path)} --format allowlist >> .pisess-secrets-allow" in r.stderr
    allow = str(tmp_path / "allow")
    open(allow, "w").close()
    r = invoke(cli_runner(monkeypatch, columns=300), "secrets", path, "--allowlist", allow)
    assert (f"pisess secrets {shlex.quote(path)} --allowlist {allow} --format allowlist >> {allow}") in r.stderr


def test_context_cuts_a_long_text_with_one_note(tmp_path, monkeypatch):
    long = "\n".join(f"line {i} " + "x" * 90 for i in range(2600))  # ~250,000 characters
    path = write_session(tmp_path, [header(), user("a1", None, long)])
    for args in ((), ("--full",)):
        r = invoke(cli_runner(monkeypatch, columns=120), "context", path, "--no-pager", *args)
        notes = [ln for ln in r.stdout.splitlines() if "more characters" in ln or "more line" in ln]
        assert len(notes) == 1, (args, notes)
        if args:  # cut at 200,000 characters: --full would not show more
            assert notes[0].endswith("lines: pisess context --json]") and "(--full)" not in notes[0]
    path = write_session(tmp_path, [header(), user("a1", None, "y" * 3000 + "\n" + long)], "wide.jsonl")
    r = invoke(cli_runner(monkeypatch, columns=120), "context", path, "--no-pager", "--max-lines", "2")
    flat = " ".join(r.stdout.split())
    assert flat.count("more characters") + flat.count("more line") == 1, flat[-300:]
    assert "more characters in 2,601 lines: pisess context --json]" in flat
    h = invoke(cli_runner(monkeypatch, columns=200), "context", "--help")
    assert "200,000 characters" in h.stdout


def test_help_shows_the_choices_of_color_reader_and_position(monkeypatch):
    runner = cli_runner(monkeypatch, columns=200)
    assert "--color auto|always|never" in invoke(runner, "tree", "--help").stdout
    assert "--reader auto|harness|cli" in invoke(runner, "tree", "--help").stdout
    assert "--position before|at" in invoke(runner, "fork", "--help").stdout
    assert "<str>" not in invoke(runner, "fork", "--help").stdout


def test_color_always_wins_over_a_dumb_terminal(tmp_path, monkeypatch):
    r = invoke(cli_runner(monkeypatch, TERM="dumb"), "tree", small_session(tmp_path), "--color", "always",
               "--no-pager")
    assert "\x1b[" in r.stdout


def test_path_pages_like_tree(tmp_path, monkeypatch):
    from pisess.cli import output

    asked = []
    monkeypatch.setattr(output.Printer, "_page", lambda self, items: asked.append(True) or False)
    path = small_session(tmp_path)
    invoke(cli_runner(monkeypatch), "path", path)
    assert asked == [True]
    invoke(cli_runner(monkeypatch), "path", path, "--no-pager")
    assert asked == [True]


def test_an_empty_listing_with_all_does_not_suggest_all(tmp_path, monkeypatch):
    root = tmp_path / "sessions"
    root.mkdir()
    r = invoke(cli_runner(monkeypatch), "ls", "--all", "--sessions-dir", str(root))
    assert "no sessions" in r.stdout and "--all" not in r.stdout
    for cmd in ("stats", "du", "search"):
        args = [cmd, "--all", "--sessions-dir", str(root)] + (["x"] if cmd == "search" else [])
        if cmd == "search":
            args = [cmd, "x", "--all", "--sessions-dir", str(root)]
        r = invoke(cli_runner(monkeypatch), *args)
        assert "no sessions" in r.stderr and "try --all" not in r.stderr, (cmd, r.stderr)


def test_a_glued_line_is_named_as_validate_names_it(tmp_path, monkeypatch):
    import json

    glued = json.dumps(user("c3", "b2", "one")) + json.dumps(user("c4", "b2", "two"))
    path = write_session(tmp_path, [header(), user("a1", None), assistant("b2", "a1"), glued])
    v = invoke(cli_runner(monkeypatch, columns=300), "validate", path)
    assert ":4: error glued_line: " in v.stdout
    for args in (("tree", path), ("context", path, "--no-pager"), ("search", "one", path)):
        r = invoke(cli_runner(monkeypatch), *args)
        assert f"{path}:4: skipped: glued_line: 2 complete entries with no newline between them" in r.stderr, args
    other = write_session(tmp_path, [header(), user("a1", None), "{not json"], "bad.jsonl")
    assert ":3: skipped: not valid JSON" in invoke(cli_runner(monkeypatch), "tree", other).stderr


def test_validate_and_secrets_name_an_empty_path(monkeypatch):
    for cmd in ("validate", "secrets"):
        r = invoke(cli_runner(monkeypatch), cmd, "")
        assert r.exit_code == 2
        assert r.stdout.splitlines()[0] == "'': error not_found: an empty path names no file", r.stdout


def test_validate_and_secrets_print_paths_as_given(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    elsewhere = small_session(tmp_path / "elsewhere")
    write_session(here, [header(), user("a1", None), "{bad"], "--odd.jsonl")
    monkeypatch.chdir(here)
    secret = "DB_PASSWORD=" + "hunter2!x"
    write_session(tmp_path / "elsewhere", [header(), user("a1", None, secret), "{bad"], "s.jsonl")
    r = invoke(cli_runner(monkeypatch, columns=300), "validate", "--", "--odd.jsonl", str(tmp_path / "elsewhere"))
    assert "./--odd.jsonl:3: error" in r.stdout
    assert f"{tmp_path}/elsewhere/s.jsonl:3: error" in r.stdout and "../" not in r.stdout
    s = invoke(cli_runner(monkeypatch, columns=300), "secrets", str(tmp_path / "elsewhere"))
    assert f"{tmp_path}/elsewhere/s.jsonl:2: " in s.stdout and "../" not in s.stdout
    assert elsewhere


def test_du_and_tree_of_an_empty_file_draw_no_empty_tables(tmp_path, monkeypatch):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    d = invoke(cli_runner(monkeypatch), "du", str(empty))
    assert "top entries by size: none" in d.stdout and "SIZE  SESSION  ENTRY" not in d.stdout
    t = invoke(cli_runner(monkeypatch), "tree", str(empty))
    assert "(no entries)" in t.stdout and "active path" not in t.stdout


def test_ls_says_once_that_a_sqlite_store_is_not_read(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    small_session(agent / "sessions" / "--work-proj--")
    r = invoke(cli_runner(monkeypatch), "ls", "--all", "--sessions-dir", str(agent / "sessions"))
    assert "sqlite" not in r.stderr.lower()
    for name in ("sessions.sqlite", "sessions.sqlite-wal", "sessions.sqlite-shm"):
        (agent / name).write_bytes(b"")
    r = invoke(cli_runner(monkeypatch), "ls", "--all", "--sessions-dir", str(agent / "sessions"))
    assert r.exit_code == 0
    assert r.stderr.count("SQLite session store") == 1 and "sessions.sqlite is pi's" in r.stderr
    assert "SQLite" not in r.stdout


def test_cache_says_when_its_location_cannot_hold_a_cache(tmp_path, monkeypatch):
    from pisess.cli.commands import cache_cmd

    where = tmp_path / "pisess"
    monkeypatch.setattr(cache_cmd, "_directory", lambda: (str(where), True))
    where.write_bytes(b"")
    r = invoke(cli_runner(monkeypatch), "cache")
    assert f"{where} is not a directory: nothing can be cached there" in r.stderr
    where.unlink()
    where.symlink_to(tmp_path / "gone")
    r = invoke(cli_runner(monkeypatch), "cache")
    assert "which does not exist: nothing can be cached there" in r.stderr


def compacted_session(tmp_path) -> str:
    """u1 a1 compacted; the compaction keeps u2 a2 (firstKeptEntryId, and a retainedTail copy for the SDK)."""
    from conftest import entry

    u1, a1 = user("u1", None, "old question"), assistant("a1", "u1", "old answer")
    u2, a2 = user("u2", "a1", "kept question"), assistant("a2", "u2", "kept answer")
    c1 = entry("compaction", "c1", "a2", summary="THE SUMMARY", firstKeptEntryId="u2", tokensBefore=10,
               retainedTail=[u2["message"], a2["message"]])
    return write_session(tmp_path, [header(), u1, a1, u2, a2, c1, user("u3", "c1", "new question")])


def _rule_of(out: str, word: str) -> str:
    return next(ln for ln in out.splitlines() if word in ln)


def test_context_llm_names_the_compaction_summary_as_its_checkpoint_not_retained(tmp_path, monkeypatch):
    path = compacted_session(tmp_path)
    for args in (["--reader", "cli"], ["--reader", "cli", "--pi-version", "0.82.1"], ["--reader", "harness"]):
        r = invoke(cli_runner(monkeypatch, columns=160), "context", path, "--llm", *args)
        assert r.exit_code == 0, r.stderr
        summary = _rule_of(r.stdout, "(from compaction")
        assert "retained" not in summary and "(c1)" in summary, (args, summary)
        plain = invoke(cli_runner(monkeypatch, columns=160), "context", path, *args)
        assert "(c1)" in _rule_of(plain.stdout, "compaction summary")
    # the SDK's retained copies stay named as such, in both views
    r = invoke(cli_runner(monkeypatch, columns=160), "context", path, "--llm", "--reader", "harness")
    assert "(retained in c1)" in _rule_of(r.stdout, "assistant")


def test_stats_counts_custom_message_entries_as_the_messages_the_model_sees(tmp_path, monkeypatch):
    """pi puts a custom_message entry in the context as a ``custom`` role message (spec §7): it
    is a message, in the total, in its placement's column and in the breakdown, view and JSON alike."""
    import json

    from conftest import entry

    ext = entry("custom_message", "c3", "b2", customType="my-ext", content="Injected context", display=True)
    state = entry("custom", "d4", "c3", customType="my-ext", data={"k": 1})  # extension state: no message
    path = write_session(tmp_path, [header(), user("a1", None, "hello"), assistant("b2", "a1", "hi there"), ext,
                                    state, user("e5", "d4", "go on")])
    j = json.loads(invoke(cli_runner(monkeypatch), "stats", path, "--json", "--no-cache").stdout)
    total = j["total"]
    assert total["messageCountByRole"] == {"user": 2, "assistant": 1, "custom": 1}
    assert total["messageCount"] == 4 and j["where"]["active"]["messageCount"] == 4
    r = invoke(cli_runner(monkeypatch), "stats", path, "--no-cache")
    assert r.exit_code == 0, r.stderr
    assert [ln.split() for ln in r.stdout.splitlines() if ln.lstrip().startswith("messages")] == [
        ["messages", "4", "0", "0", "4"], ["messages", "2", "user", "\u00b7", "1", "assistant", "\u00b7", "1", "ext", "msg"]]


def test_a_path_that_starts_with_dashes_is_told_how_to_pass_it(tmp_path, monkeypatch, capsys):
    """pi's project folders are named ``--home-user-proj--``: given as a relative path, click takes
    it for an option; the refusal says how to pass it (exit 2, one message, no traceback)."""
    import json

    from pisess.cli.app import run

    small_session(tmp_path / "--home-user-proj--", "x.jsonl")
    small_session(tmp_path, "--foo.jsonl")
    (tmp_path / "--notes").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    for token in ("--home-user-proj--/x.jsonl", "--foo.jsonl", "--notes", "--missing/y.jsonl"):
        assert run(["tree", token]) == 2
        out = capsys.readouterr()
        assert out.out == "" and "Traceback" not in out.err
        assert f"No such option: {token}" in out.err
        assert f"write ./{token} or put -- before it" in out.err, out.err
        assert run(["tree", token, "--json"]) == 2
        assert f"write ./{token} or put -- before it" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert run(["tree", "--bogus"]) == 2  # an option that is no path: no hint
    assert "put -- before it" not in capsys.readouterr().err
    assert run(["tree", "./--home-user-proj--/x.jsonl"]) == 0 and run(["tree", "--", "--foo.jsonl"]) == 0


def test_search_marks_the_match_in_words_when_there_is_no_colour(tmp_path, monkeypatch):
    """Colour never carries meaning alone (UX.md): without it (NO_COLOR, a pipe, --color never)
    the match in each snippet is between » and «, and the legend says so; with colour, the style
    shows it and the text is the session's own."""
    path = write_session(tmp_path, [header(), user("a1", None, "the cache key is wrong"),
                                    assistant("b2", "a1", "fixed the cache")])
    for args in ([], ["--color", "never"]):
        r = invoke(cli_runner(monkeypatch), "search", "cache", path, *args)
        assert r.exit_code == 0, r.stderr
        rows = [ln for ln in r.stdout.splitlines() if ln.startswith("  ")]
        assert rows[0].endswith("the \u00bbcache\u00ab key is wrong") and rows[1].endswith("fixed the \u00bbcache\u00ab")
        assert "\u00bb\u2026\u00ab: the match" in r.stdout
    r = invoke(cli_runner(monkeypatch), "search", "cache", path, "--color", "always")  # (over NO_COLOR)
    assert r.exit_code == 0 and "\x1b[" in r.stdout
    assert "\u00bb" not in r.stdout and "\u00ab" not in r.stdout


def _batch(tmp_path, *, answered: tuple = ("call_1",), stop: str = "toolUse", name: str = "batch.jsonl") -> str:
    """An assistant that asked for read and bash at once, the results of ``answered``, then the user."""
    from conftest import message

    calls = [{"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a"}},
             {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "ls"}}]
    a = message("a1", "u1", {"role": "assistant", "content": calls, "api": "anthropic-messages", "provider": "p",
                             "model": "m", "stopReason": stop, "timestamp": 2})
    lines, parent = [header(), user("u1", None, "go"), a], "a1"
    for i, call in enumerate(answered):
        text = "data" if call == "call_1" else "Operation aborted"
        lines.append(message(f"t{i}", parent, {"role": "toolResult", "toolCallId": call, "toolName": "x",
                                               "content": [{"type": "text", "text": text}],
                                               "isError": call != "call_1", "timestamp": 3}))
        parent = f"t{i}"
    lines.append(user("u2", parent, "next"))
    return write_session(tmp_path, lines, name)


def test_validate_notes_a_tool_call_pi_before_1_6_left_without_result(tmp_path, monkeypatch):
    """pi #9986: before pi 1.6, Esc during a batch of tool calls left the calls that had not started
    without a result (pi 1.6 writes "Operation aborted" for each). Such a call is a note, never a
    failure (exit 0, with --strict too), and says which pi leaves it so."""
    import json

    path = _batch(tmp_path)
    r = invoke(cli_runner(monkeypatch, columns=400), "validate", path)
    assert r.exit_code == 0, r.stdout
    line = next(ln for ln in r.stdout.splitlines() if "tool_call_without_result" in ln)
    assert ":3: info tool_call_without_result: " in line
    assert "call_2 (bash)" in line and "call_1" not in line
    assert "pi before 1.6 did not record tool calls that never started" in line and "pi #9986" in line
    assert " \u00b7 0 errors \u00b7 0 warnings \u00b7 1 note \u00b7 " in r.stdout.strip().splitlines()[-1]
    old = invoke(cli_runner(monkeypatch, columns=400), "validate", path, "--pi-version", "0.82.1")
    assert old.exit_code == 0 and "pi 0.82 does not record tool calls that never started" in old.stdout
    assert invoke(cli_runner(monkeypatch), "validate", path, "--strict").exit_code == 0
    g = invoke(cli_runner(monkeypatch), "validate", path, "--format", "github")
    assert g.exit_code == 0 and "::notice " in g.stdout and "::error" not in g.stdout
    doc = json.loads(invoke(cli_runner(monkeypatch), "validate", path, "--json").stdout)
    [f] = [f for f in doc["files"][0]["findings"] if f["code"] == "tool_call_without_result"]
    assert f["severity"] == "info" and f["entryId"] == "a1" and f["line"] == 3
    assert doc["files"][0]["ok"] is True


def test_validate_is_quiet_about_answered_and_abandoned_tool_calls(tmp_path, monkeypatch):
    """Every call answered (pi 1.6's "Operation aborted" included), or an assistant message pi's
    provider layer drops (stopReason error or aborted: its calls never ran): nothing to note."""
    for kw in ({"answered": ("call_1", "call_2"), "name": "all.jsonl"},
               {"answered": (), "stop": "aborted", "name": "aborted.jsonl"},
               {"answered": (), "stop": "error", "name": "error.jsonl"}):
        r = invoke(cli_runner(monkeypatch), "validate", _batch(tmp_path, **kw))
        assert r.exit_code == 0 and "tool_call_without_result" not in r.stdout, (kw, r.stdout)


def test_tool_calls_without_result_are_found_on_either_read(tmp_path):
    """The compact index's read (a clean file) and the line scan (a damaged one) find the same."""
    from pisess.core.analyses.validate import validate_bytes, validate_file

    path = _batch(tmp_path, answered=())
    with open(path, "rb") as fh:
        data = fh.read()
    for report in (validate_file(path), validate_bytes(data, path), validate_bytes(data + b"{not json\n", path)):
        [f] = [f for f in report.findings if f.code == "tool_call_without_result"]
        assert f.severity == "info" and "call_1 (read), call_2 (bash)" in f.message


def _not_only_sessions(tmp_path) -> tuple[str, dict]:
    """A project folder whose ``.jsonl`` files are sessions and not (pi #11956), each named
    ``<timestamp>_<id>.jsonl`` as pi names its files; returns the root and {tag: file name}."""
    import json

    ts = "2026-07-25T09:14:03.512Z"
    project = tmp_path / "sessions" / "--work-proj--"
    project.mkdir(parents=True)

    def hdr(sid, **kw) -> bytes:
        return json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": ts, "cwd": "/work/proj",
                           **kw}).encode()

    def sid(n: int, head: str = "01984a3c") -> str:
        return f"{head}-0000-7000-8000-{n:012d}"

    u = json.dumps(user("a1", None, "hello")).encode()
    files = {
        "session": (sid(1), hdr(sid(1)) + b"\n" + u + b"\n"),
        "header only": (sid(2), hdr(sid(2)) + b"\n"),
        "header version 4": (sid(3), hdr(sid(3), version=4) + b"\n" + u + b"\n"),
        "header without id": (sid(4), b'{"type":"session","version":3,"timestamp":"' + ts.encode() + b'"}\n'),
        "header id null": (sid(5), hdr(None) + b"\n"),
        "header id a number": (sid(6), hdr(14) + b"\n"),
        "garbage, then a header": (sid(7, "ffff0000"), b"garbage\n" + hdr(sid(7, "ffff0000")) + b"\n"),
        "not a session line": (sid(8, "aaaa0000"), b'{"type":"message","id":"x"}\n' + hdr(sid(8, "aaaa0000")) + b"\n"),
        "empty": (sid(9, "aaaa0001"), b""),
        "garbage": (sid(10, "aaaa0002"), b"\x00\xffgarbage not json\n"),
        "sdk v4 header": (sid(11, "aaaa0003"),
                          json.dumps({"v": 4, "kind": "header", "id": sid(11, "aaaa0003"), "cwd": "/work/proj"}).encode()
                          + b"\n"),
        "blank lines": (sid(12, "aaaa0004"), b"\n\n"),
        "byte order mark": (sid(13, "aaaa0005"), b"\xef\xbb\xbf" + hdr(sid(13, "aaaa0005")) + b"\n"),
        "cut-off header": (sid(14, "aaaa0006"), hdr(sid(14, "aaaa0006"))[:40]),
    }
    names = {}
    for tag, (id_, data) in files.items():
        names[tag] = f"2026-07-25T09-14-03-512Z_{id_}.jsonl"
        (project / names[tag]).write_bytes(data)
    (project / "notes.jsonl").write_text('{"hello":"world"}\n')
    names["notes"] = "notes.jsonl"
    return str(tmp_path / "sessions"), names


# pi 1.6.0's answer on that folder (pi-oracle `list ROOT --cwd /work/proj --pi 1.6.0`): the files it
# lists; every other .jsonl is skipped
PI16_LISTS = {"session", "header only", "header version 4", "header without id", "header id null",
              "header id a number", "garbage, then a header"}


def test_ls_lists_the_jsonl_files_pi_lists_and_skips_the_rest(tmp_path, monkeypatch):
    import json

    root, names = _not_only_sessions(tmp_path)
    for scope in (["--cwd", "/work/proj"], ["--all"]):
        r = invoke(cli_runner(monkeypatch), "ls", "--sessions-dir", root, *scope, "--json", "--no-cache")
        doc = json.loads(r.stdout)
        listed = {os.path.basename(s["path"]) for s in doc["sessions"]}
        skipped = {os.path.basename(s["path"]) for s in doc["skipped"]}
        assert listed == {names[t] for t in PI16_LISTS}, scope
        assert skipped == set(names.values()) - listed, scope


def test_an_id_never_names_a_file_pi_does_not_take_for_a_session(tmp_path, monkeypatch):
    """pi finds a session by the id in its header (a string: pi compares it and calls startsWith
    on it), never by a file name, so ids of files that are no sessions, and headers whose id is
    null or a number, name nothing; a header behind a garbage line is one (pi skips the line)."""
    root, names = _not_only_sessions(tmp_path)
    for arg in ("aaaa", "aaaa0000-0000-7000-8000-000000000008", "aaaa0003-0000-7000-8000-000000000011",
                "aaaa0005", "aaaa0006", "null", "nu", "14"):
        r = invoke(cli_runner(monkeypatch), "path", arg, "--sessions-dir", root, "--cwd", "/work/proj", "--no-cache")
        assert r.exit_code == 1 and f"no session matches {arg!r}" in r.stderr, (arg, r.stdout, r.stderr)
    r = invoke(cli_runner(monkeypatch), "path", "ffff", "--sessions-dir", root, "--cwd", "/work/proj", "--no-cache")
    assert r.exit_code == 0 and r.stdout.startswith("ffff0000 \u00b7 "), r.stderr


def test_tool_calls_beside_messages_without_a_message_object(tmp_path):
    """A message entry with no message object (or another value) between an assistant and its
    results: pi throws building the context (context_fails says so); the tool-call note does not."""
    from conftest import entry, message
    from pisess.core.analyses.validate import validate_file

    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    a = message("a1", "u1", {"role": "assistant", "content": [call], "stopReason": "toolUse"})
    for odd in (entry("message", "m1", "a1"), entry("message", "m1", "a1", message=[1]),
                entry("message", "m1", "a1", message={"role": 3})):
        t = message("t1", "m1", {"role": "toolResult", "toolCallId": "c1", "content": [], "isError": False})
        path = write_session(tmp_path, [header(), user("u1", None), a, odd, t], "odd.jsonl")
        codes = [f.code for f in validate_file(path).findings]
        assert "tool_call_without_result" in codes, (odd, codes)  # the result is behind no assistant turn


def test_the_calls_the_read_counted_give_the_same_unanswered_calls(tmp_path, monkeypatch):
    """``validate``'s unanswered tool calls read back only the assistants with more calls than
    results where the read counted each one's calls (``store.tool_call_counts``): the findings
    are the ones reading every line back gives, for calls answered, unanswered, named in a text,
    in a message pi drops, beside blocks that are no object, with the file read in one part or
    two."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from conftest import entry, examples, header, write_session
    from pisess.core import parallel
    from pisess.core.analyses.validate import unanswered_tool_calls
    from pisess.core.reading import compact
    from pisess.core.reading.session import open_session

    turn = st.tuples(st.integers(0, 3), st.integers(0, 4), st.sampled_from(["stop", "toolUse", "error"]),
                     st.booleans(), st.booleans(), st.booleans())

    @settings(max_examples=examples(60), deadline=None)
    @given(turns=st.lists(turn, min_size=1, max_size=8), parts=st.sampled_from([1, 2]))
    def check(turns, parts):
        lines, parent, k = [header()], None, 0
        for calls, answered, stop, mention, odd, string in turns:
            k += 1
            content = [{"type": "toolCall", "id": f"c{k}-{j}", "name": "bash", "arguments": {}} for j in range(calls)]
            if mention:
                content.append({"type": "text", "text": 'a "toolCall" named in words, twice: "toolCall"'})
            if odd:
                content.append("not a block")
            message = {"role": "assistant", "content": "just text" if string else content, "stopReason": stop,
                       "timestamp": 2}
            lines.append(entry("message", f"a{k}", parent, message=message))
            parent = f"a{k}"
            for j in range(answered):
                lines.append(entry("message", f"r{k}-{j}", parent, message={
                    "role": "toolResult", "toolCallId": f"c{k}-{j}", "toolName": "bash",
                    "content": [{"type": "text", "text": "ok"}], "isError": False, "timestamp": 3}))
                parent = f"r{k}-{j}"
        path = write_session(tmp_path, lines, name="calls.jsonl")
        monkeypatch.setattr(compact, "SPLIT_MIN", 0 if parts == 2 else 1 << 62)
        previous = parallel.configure(parallel.Settings(jobs=parts))
        try:
            s = open_session(path, "cli", light=True)
        finally:
            parallel.configure(previous)
        counted = s.store.tool_call_counts()
        assert counted is not None and len(counted) == len(turns)
        got = list(unanswered_tool_calls(s))
        monkeypatch.setattr(type(s.store), "tool_call_counts", lambda self: None)
        assert got == list(unanswered_tool_calls(open_session(path, "cli", light=True)))
        monkeypatch.undo()
    check()
