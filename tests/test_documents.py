"""The core hands over finished documents: each command's ``--json`` is the core's document as it
is (the command adds only ``version``), and "where the path is cut" is one fact of the context."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import DROP, JSON_VERSIONS, assistant, cli_runner, entry, header, invoke, user, write_session
from pisess.core.analyses.secrets import scan_paths
from pisess.core.analyses.validate import validate_paths
from pisess.core.listing.paths import encode_cwd
from pisess.core.listing.repo import list_sessions
from pisess.core.model.context import build_context
from pisess.core.model.fork import plan_fork
from pisess.core.model.tree import build_tree
from pisess.core.reading.session import open_session

COMMANDS = Path(__file__).resolve().parent.parent / "pisess" / "cli" / "commands"
CWD = "/work/proj"


def comp(id_, parent, fk=DROP, tail=DROP):
    return entry("compaction", id_, parent, summary=f"S-{id_}", firstKeptEntryId=fk, tokensBefore=100,
                 retainedTail=tail)


@pytest.fixture
def compacted(tmp_path):
    """u1 <- a1 <- C (retainedTail) <- u2 <- a2: the SDK reader's path is cut at C."""
    return write_session(tmp_path / "s" / encode_cwd(CWD), [
        header(), user("u1", None), assistant("a1", "u1"), comp("c1", "a1", fk="u1", tail=[]),
        user("u2", "c1"), assistant("a2", "u2")])


def _json(monkeypatch, *args):
    res = invoke(cli_runner(monkeypatch), *args, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc.pop("version") == JSON_VERSIONS[args[0]]
    return doc


def test_context_tree_and_path_documents_are_the_cores(compacted, monkeypatch):
    for reader in ("harness", "cli"):
        s = open_session(compacted, reader)
        ctx = build_context(s)
        assert _json(monkeypatch, "context", compacted, "--reader", reader) == json.loads(json.dumps(ctx.to_json()))
        assert _json(monkeypatch, "path", compacted, "--reader", reader) == json.loads(json.dumps(ctx.path_json()))
        view = build_tree(open_session(compacted, reader))
        assert _json(monkeypatch, "tree", compacted, "--reader", reader) == json.loads(json.dumps(view.to_json()))


def test_the_pi16_context_document_carries_the_usage_breakdown(compacted):
    """The core's context document adds what pi 1.6 derives, the usage breakdown too (the command
    no longer asks the cache for it)."""
    doc = build_context(open_session(compacted, "cli", pi_version="1.6.0")).to_json()
    assert doc["usageBreakdown"] == [] and doc["messageEntryIds"] and "systemMessage" in doc
    assert "usageBreakdown" not in build_context(open_session(compacted, "cli", pi_version="0.82.1")).to_json()


def test_ls_validate_secrets_and_fork_documents_are_the_cores(compacted, monkeypatch, tmp_path):
    root = str(tmp_path / "s")
    listing = list_sessions(root, CWD)
    assert _json(monkeypatch, "ls", "--sessions-dir", root, "--cwd", CWD) == json.loads(json.dumps(listing.to_json()))
    assert listing.to_json()["root"] == root and listing.to_json()["cwd"] == CWD
    got = _json(monkeypatch, "validate", compacted)
    assert got == json.loads(json.dumps(validate_paths([compacted]).to_json(False)))
    got = _json(monkeypatch, "secrets", compacted)
    assert got == json.loads(json.dumps(scan_paths([compacted]).to_json(frozenset(), None)))
    got = _json(monkeypatch, "fork", compacted, "u2", "--dry-run", "--reader", "harness")
    plan = plan_fork(open_session(compacted, "harness"), "u2", "before", new_id=got["id"], now_iso="x",
                     source_path=compacted)
    assert got["entries"] == plan.to_json(got["path"], dry_run=True)["entries"]


def test_where_the_path_is_cut_is_one_fact(compacted, monkeypatch):
    """The SDK reader stops at the compaction with retainedTail: the context says so (cut_at), and
    the path document, the path view and fork's plan all say the same; the pi command's path runs
    to the root: no cut anywhere."""
    s = open_session(compacted, "harness")
    ctx = build_context(s)
    assert ctx.cut_at is ctx.path[0] and ctx.cut_at["id"] == "c1"
    assert ctx.path_json()["cutAtCheckpoint"] is True
    plan = plan_fork(s, "a2", "at", new_id="n", now_iso="x", source_path=compacted)
    assert plan.cut_at is not None and plan.cut_at["id"] == "c1"
    res = invoke(cli_runner(monkeypatch), "path", compacted, "--reader", "harness")
    assert "cut here: compaction with retainedTail (c1)" in res.stdout
    res = invoke(cli_runner(monkeypatch), "fork", compacted, "a2", "--position", "at", "--dry-run", "--reader",
                 "harness")
    assert "path from checkpoint c1" in res.stderr
    cli = build_context(open_session(compacted, "cli"))
    assert cli.cut_at is None and cli.path_json()["cutAtCheckpoint"] is False
    assert plan_fork(open_session(compacted, "cli"), "a2", "at", new_id="n", now_iso="x",
                     source_path=compacted).cut_at is None
    assert "cut here" not in invoke(cli_runner(monkeypatch), "path", compacted, "--reader", "cli").stdout


COMMAND_MODULES = sorted(p.name.removesuffix("_cmd.py") for p in COMMANDS.glob("*_cmd.py"))


def test_every_command_module_is_held_to_it():
    assert {"context", "tree", "ls", "watch", "demo", "cache", "help", "browse", "diff"} <= set(COMMAND_MODULES)


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_command_modules_build_no_documents(name):
    """A command module parses options, calls the core and hands the result on: no dict display
    with string keys (a JSON document being put together) in it."""
    tree = ast.parse((COMMANDS / f"{name}_cmd.py").read_text(encoding="utf-8"))
    built = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                   for k in node.keys)]
    assert built == [], f"{name}_cmd.py builds a document at lines {built}"
