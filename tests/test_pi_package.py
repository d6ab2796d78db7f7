"""The pi package shipped in pisess (pisess/pi_package): /pisess and the skill.

The extension is loaded through pi 1.6.0's own extension and skill loaders (node, with pi's
modules from PISESS_TEST_PI_MODULES: .ci/run installs them; without them these tests are skipped
with the reason, and PISESS_REQUIRE_PI=1 turns the skip into a failure). The skill's commands are
run on the example sessions and must print what the skill says they print.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pisess.cli.app import app

PACKAGE = Path(__file__).resolve().parent.parent / "pisess" / "pi_package"
CHECK = Path(__file__).resolve().parent / "pi_package" / "check_extension.mjs"
EXAMPLES = Path(__file__).resolve().parent.parent / "pisess" / "examples" / "sessions"
SESSION = "01955b3b-ca80-7e01"


def _pi_modules() -> Path:
    found = os.environ.get("PISESS_TEST_PI_MODULES")
    path = Path(found) if found else None
    ok = path is not None and (path / "@earendil-works" / "pi-coding-agent" / "dist" / "core").is_dir()
    node = shutil.which("node")
    if path is not None and ok and node:
        return path
    why = ("node is not installed" if not node else
           "PISESS_TEST_PI_MODULES does not name pi 1.6.0's node_modules (.ci/run installs it: "
           "npm install --prefix DIR @earendil-works/pi-coding-agent@1.6.0)")
    if os.environ.get("PISESS_REQUIRE_PI") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _leaf(session_file: Path) -> str:
    result = CliRunner().invoke(app, ["context", str(session_file), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["leafId"]


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What /pisess did in every case (check_extension.mjs), on a session in a directory with a space and a quote."""
    modules = _pi_modules()
    tmp = tmp_path_factory.mktemp("pi")
    project = tmp / "my project's dir"
    project.mkdir()
    source = next(EXAMPLES.glob(f"*/*_{SESSION}*.jsonl"))
    session_file = project / source.name
    shutil.copyfile(source, session_file)
    record = tmp / "argv.json"
    recorder = tmp / "pisess"
    recorder.write_text(f"#!{sys.executable}\nimport json, sys\njson.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n")
    recorder.chmod(0o755)
    leaf = _leaf(session_file)
    done = subprocess.run(
        ["node", str(CHECK), str(modules), str(PACKAGE), str(session_file), leaf, str(record)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PISESS_BIN": str(recorder)},
    )
    assert done.returncode == 0, done.stderr
    return {"out": json.loads(done.stdout), "file": str(session_file), "leaf": leaf}


def test_pi_loads_the_extension_and_the_skill_without_errors(driven: dict) -> None:
    out = driven["out"]
    assert out["loadErrors"] == []
    assert out["commands"] == ["pisess"]
    assert [s["name"] for s in out["skills"]] == ["pisess"]
    assert "earlier pi sessions" in out["skills"][0]["description"]
    assert out["skillDiagnostics"] == []
    assert out["completions"] == ["context", "trace", "diff"]


@pytest.mark.parametrize(("run", "extra"), [
    ("browse", []),
    ("context", ["--screen", "context"]),
    ("trace", ["--screen", "trace"]),
    ("diff", ["--compare", "abc123"]),
])
def test_pisess_runs_browse_at_the_leaf_between_a_stopped_and_restarted_tui(driven: dict, run: str, extra: list) -> None:
    got = driven["out"]["runs"][run]
    # the path is one argument, spaces and quote and all: the program is run without a shell
    assert got["argv"] == ["browse", driven["file"], "--at", driven["leaf"], *extra]
    assert got["events"] == ["tui.stop", "screen.clear", "tui.start", "tui.render"]


@pytest.mark.parametrize(("run", "said"), [
    ("diffMissing", "/pisess diff takes one entry id"),
    ("unknown", "unknown /pisess command 'bogus'"),
    ("noFile", "not saved to a file"),
    ("missing", "pipx install 'pisess[tui]'"),
    ("print", "run it yourself: pisess browse "),
])
def test_what_cannot_run_is_a_notification_and_pi_keeps_its_screen(driven: dict, run: str, said: str) -> None:
    got = driven["out"]["runs"][run]
    assert got["argv"] is None
    assert len(got["events"]) == 1 and said in got["events"][0]["notify"]
    assert "tui.stop" not in got["events"]


def test_the_message_outside_the_terminal_quotes_the_path(driven: dict) -> None:
    said = driven["out"]["runs"]["print"]["events"][0]["notify"]
    quoted = "'" + driven["file"].replace("'", "'\\''") + "'"
    assert quoted in said


def test_browse_takes_every_option_the_extension_passes() -> None:
    text = CliRunner().invoke(app, ["browse", "--help"], env={"COLUMNS": "200"}).stdout
    source = (PACKAGE / "extensions" / "pisess.ts").read_text()
    passed = set(re.findall(r'"(--[a-z-]+)"', source))
    assert passed == {"--at", "--screen", "--compare"}
    for option in passed:
        assert option in text, option


# --- the skill: its commands print what it says ------------------------------------------------------

SKILL = (PACKAGE / "skills" / "pisess" / "SKILL.md").read_text()


def _skill_commands() -> list[str]:
    return re.findall(r"```sh\n(pisess [^\n]+)\n```", SKILL)


def _run(argv: list[str]) -> tuple[int, dict]:
    result = CliRunner().invoke(app, [*argv, "--sessions-dir", str(EXAMPLES)])
    return result.exit_code, json.loads(result.stdout)


def test_the_skill_names_three_commands_each_with_json() -> None:
    commands = _skill_commands()
    assert [c.split()[1] for c in commands] == ["search", "context", "validate"]
    assert all("--json" in c or "--format json" in c for c in commands)


def test_the_skills_search_prints_the_fields_it_names() -> None:
    command = _skill_commands()[0].replace('"TEXT"', "cache").split()[1:]
    code, doc = _run(command)
    assert code == 0 and doc["pattern"] == "cache" and doc["hits"]
    named = ["sessionId", "path", "entryId", "role", "field", "line", "snippet", "where"]
    for key in named:
        assert f"`{key}`" in SKILL
        assert all(key in hit for hit in doc["hits"]), key
    wheres = set(re.findall(r"`(active|retained|compacted|branch)`", SKILL))
    assert {hit["where"] for hit in doc["hits"]} <= wheres
    code, doc = _run(["search", "no such text anywhere 9f8e", "--all", "--json"])
    assert code == 1 and doc["hits"] == []  # the skill's exit code 1: nothing found


def test_the_skills_context_prints_the_fields_it_names() -> None:
    _, hits = _run(["search", "cache", "--all", "--json"])
    hit = hits["hits"][0]
    command = _skill_commands()[1].replace("SESSION", hit["sessionId"]).replace("ENTRY", hit["entryId"]).split()[1:]
    code, doc = _run(command)
    assert code == 0
    for key in ["messages", "messageEntryIds", "leafId", "pathIds", "state"]:
        assert f"`{key}`" in SKILL and key in doc
    assert doc["leafId"] == hit["entryId"] and len(doc["messages"]) == len(doc["messageEntryIds"])
    assert {"model", "thinkingLevel"} <= set(doc["state"])


def test_the_skills_validate_prints_the_fields_it_names(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00Z","cwd":"/x"}\nnot json\n')
    command = _skill_commands()[2].replace("SESSION_OR_DIR", str(bad)).split()[1:]
    result = CliRunner().invoke(app, command)
    doc = json.loads(result.stdout)
    assert result.exit_code == 1  # the skill's exit code 1: validate found errors
    (file,) = doc["files"]
    assert {"path", "ok", "findings"} <= set(file) and file["ok"] is False
    (finding,) = file["findings"]
    for key in ["severity", "code", "line", "message"]:
        assert f"`{key}`" in SKILL and key in finding
    assert finding["severity"] == "error" and finding["line"] == 2


def test_help_pi_names_the_installed_package_directory() -> None:
    result = CliRunner().invoke(app, ["help", "pi"])
    assert result.exit_code == 0
    assert f"pi install {PACKAGE}" in result.stdout
    assert "pi remove" in result.stdout


def test_the_extension_type_checks_against_pi_1_6_0s_declarations(tmp_path: Path) -> None:
    """``tsc --noEmit --strict`` with pi's own .d.ts (typescript and @types/node beside pi's modules)."""
    modules = _pi_modules()
    tsc = modules / ".bin" / "tsc"
    if not tsc.exists() or not (modules / "@types" / "node").is_dir():
        why = f"typescript and @types/node are not installed in {modules} (.ci/run installs them)"
        if os.environ.get("PISESS_REQUIRE_PI") == "1":
            pytest.fail(why)
        pytest.skip(why)
    declarations = modules / "@earendil-works" / "pi-coding-agent" / "dist" / "index.d.ts"
    config = {
        "compilerOptions": {
            "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": True,
            "noEmit": True, "skipLibCheck": True, "types": ["node"], "typeRoots": [str(modules / "@types")],
            "baseUrl": ".", "paths": {"@earendil-works/pi-coding-agent": [str(declarations)]},
        },
        "files": [str(PACKAGE / "extensions" / "pisess.ts")],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    done = subprocess.run([str(tsc), "-p", str(tmp_path / "tsconfig.json")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
