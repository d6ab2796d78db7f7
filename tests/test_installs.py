"""The installs people expect, tried from this checkout in fresh, throw-away homes: pipx, uv's tool
install and a uvx one-off run. Each installed program must run, ship the pi package (package data
that only a real install proves), and complete. Slow (each builds and installs the wheel)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is in the test extra (pip install -e '.[test]')"
    return found


def _run(argv: list[str], env: dict, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, **kw)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done


def _home(tmp_path: Path, **more: str) -> dict:
    """The environment of a user with a fresh home (and no PYTHONPATH, which would put this
    checkout before the installed copy)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "HOME": str(tmp_path), **more}


def _checks(pisess: Path, env: dict) -> None:
    examples = str(CHECKOUT / "pisess" / "examples" / "sessions")
    tree = _run([str(pisess), "tree", "01955b3b-ca80-7e01", "--sessions-dir", examples], env)
    assert "Fix date parsing" in tree.stdout
    help_pi = _run([str(pisess), "help", "pi"], env).stdout
    line = next(x for x in help_pi.splitlines() if x.startswith("pi install "))
    package = Path(line.removeprefix("pi install ").strip("'"))
    assert (package / "extensions" / "pisess.ts").is_file() and (package / "skills" / "pisess" / "SKILL.md").is_file()
    assert not package.is_relative_to(CHECKOUT)  # the installed copy, not this checkout
    # from a bash, as a user types it: Typer names the shell by the process's ancestors, and a run
    # started in the background of a script that has ended has none (its parent is init)
    script = _run(["bash", "-c", '"$0" --show-completion; true', str(pisess)], {**env, "SHELL": "/bin/bash"}).stdout
    assert "_PISESS_COMPLETE" in script


def test_pipx_install(tmp_path: Path) -> None:
    env = _home(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
                PIPX_MAN_DIR=str(tmp_path / "man"))
    # pipx in a venv of its own, as a user has it (its dependencies stay out of the test venv); made
    # with uv, which is in the test extra: a venv with pip in it and pip installing pipx took a
    # quarter of the test's CPU, and neither is what the test is about (pipx makes its own venvs)
    uv_env = {**env, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    _run([_tool("uv"), "venv", "-q", "--python", sys.executable, str(tmp_path / "pipx-venv")], uv_env)
    _run([_tool("uv"), "pip", "install", "-q", "--python", str(tmp_path / "pipx-venv" / "bin" / "python"), "pipx"],
         uv_env)
    _run([str(tmp_path / "pipx-venv" / "bin" / "pipx"), "install", f"{CHECKOUT}[tui]"], env)
    _checks(tmp_path / "bin" / "pisess", env)


def test_uv_tool_install_and_uvx(tmp_path: Path) -> None:
    env = _home(tmp_path, UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
                UV_CACHE_DIR=str(tmp_path / "cache"))
    _run([_tool("uv"), "tool", "install", f"{CHECKOUT}[tui]"], env)
    _checks(tmp_path / "bin" / "pisess", env)
    # what `uvx --from . pisess` runs; validate's exit 1 is the example sessions' own findings
    once = subprocess.run([_tool("uv"), "tool", "run", "--from", str(CHECKOUT), "pisess", "validate",
                           str(CHECKOUT / "pisess" / "examples" / "sessions")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert once.returncode in (0, 1), once.stderr
    assert "3 files checked" in once.stdout + once.stderr
