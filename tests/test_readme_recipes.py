"""The README's recipes, run exactly as written after the one step it asks for (putting `rcs-tui` on PATH
with `bash scripts/demo.sh --link`), against a demo workspace: the tmux status line (both forms, in a real
tmux server on a socket of the test's own, read off a real client's screen), the agent statusline command and
the fleet's one-line summary."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def recipe(marker: str) -> str:
    """The code block right after `<!-- MARKER -->` in the README, as written."""
    after = README.read_text().split(f"<!-- {marker} -->", 1)[1]
    opening = after.index("```")
    body = after.index("\n", opening) + 1
    return after[body:after.index("```", body)]


@pytest.fixture
def demo(run_cli, tmp_path) -> Path:
    built = run_cli("demo", "--build-only", "--dir", str(tmp_path / "demo"))
    assert built.code == 0, built.stderr
    return tmp_path / "demo" / "project"


@pytest.fixture
def on_path(tmp_path) -> dict[str, str]:
    """Take the README's PATH step as written, with a venv that already holds this rcs-tui (so the script
    installs nothing); returns the environment of a new login shell afterwards (~/.local/bin on PATH)."""
    venv, home = tmp_path / "venv", tmp_path / "home"
    (venv / "bin").mkdir(parents=True)
    home.mkdir()
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "bin" / "rcs-tui").symlink_to(Path(sys.executable).parent / "rcs-tui")
    stamp = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest() + "-compat "
    (venv / ".rcs-tui-installed").write_text(stamp + "\n")  # what scripts/venv.sh records after an install
    env = {**os.environ, "HOME": str(home), "RCS_TUI_VENV": str(venv), "PATH": "/usr/bin:/bin"}
    step = subprocess.run(["bash", "-c", recipe("recipe: path")], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert step.returncode == 0, step.stderr
    assert (home / ".local" / "bin" / "rcs-tui").resolve() == (Path(sys.executable).parent / "rcs-tui").resolve()
    return {"HOME": str(home), "PATH": f"{home}/.local/bin:/usr/bin:/bin"}


def hud_line(project: Path, env: dict[str, str], *width: str) -> str:
    """What `hud --once` prints for the project now, without colour: what the recipes must show."""
    out = subprocess.run(["rcs-tui", "hud", "--once", *width, "--root", str(project)], capture_output=True,
                         text=True, env={**os.environ, **env, "NO_COLOR": "1"}, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def head(line: str) -> str:
    """The part of a HUD line that does not move with the clock (ages come last)."""
    return line.split(" | ")[0]


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def status_shown(tmux, tmp_path, want: str) -> str:
    from tmuxfix import attached

    with attached(tmux, tmp_path) as screen:
        shown = tmux.wait(lambda: screen().rstrip("\n").splitlines()[-1] if screen().strip() else "",
                          lambda last: want in last)
    return shown


@needs_tmux
def test_tmux_recipe_typed_in_a_shell_shows_the_hud_in_the_status_bar(demo, on_path, tmp_path):
    from tmuxfix import tmux_server

    script = tmp_path / "recipe.sh"
    script.write_text(recipe("recipe: tmux-shell"))
    want = head(hud_line(demo, on_path, "--width", "60"))
    assert want.startswith("[RCS] ")
    with tmux_server(tmp_path, env=on_path) as tmux:
        # typed in a shell inside tmux, in the project
        tmux.run("respawn-pane", "-k", "-t", "t", "-c", str(demo), f"sh {script}; sleep 600")
        status = status_shown(tmux, tmp_path, want)
    assert want in status, status


@needs_tmux
def test_tmux_conf_recipe_shows_the_hud_in_the_status_bar(demo, on_path, tmp_path):
    from tmuxfix import tmux_server

    conf = tmp_path / "tmux.conf"
    conf.write_text(recipe("recipe: tmux-conf").replace("/path/to/project", str(demo)))
    want = head(hud_line(demo, on_path, "--width", "60"))
    with tmux_server(tmp_path, env=on_path) as tmux:  # a tmux started after the PATH step
        tmux.run("source-file", str(conf))
        status = status_shown(tmux, tmp_path, want)
    assert want in status, status


def test_agent_statusline_recipe_prints_the_hud_of_the_session_project(demo, on_path, tmp_path):
    settings = json.loads(recipe("statusline-settings"))
    command = settings["statusLine"]["command"]
    payload = {"session_id": "abc", "cwd": str(tmp_path), "workspace": {"current_dir": str(demo / "src")}}
    (demo / "src").mkdir()
    ran = subprocess.run(["sh", "-c", command], input=json.dumps(payload), cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, **on_path}, timeout=60)
    assert (ran.returncode, ran.stderr) == (0, "")
    assert head(ANSI.sub("", ran.stdout.strip())) == head(hud_line(demo, on_path))


def test_fleet_once_recipe_prints_the_summary_of_the_configured_projects(demo, on_path, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'projects = ["{demo}"]\n')
    ran = subprocess.run(["sh", "-c", recipe("recipe: fleet-once")], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, **on_path, "RCS_TUI_CONFIG": str(config)}, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert re.fullmatch(r"fleet: 1 of 1 needs? you: project \(.+\)\n", ran.stdout), ran.stdout
