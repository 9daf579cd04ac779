"""ctrl+c quits the console, the fleet and the live HUD alike, in a real terminal (a private tmux server):
the key reaches each app (no ctrl+q demanded) and the command ends with status 0."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.console_fixtures import build
from tests.tmuxfix import tmux_server

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

WORKTREE = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("command", "ready"), [
    (["console"], "Scopes"),
    (["fleet", "--project"], "PROJECT"),
    (["hud"], "q quit"),
], ids=["console", "fleet", "hud"])
def test_ctrl_c_quits(tmp_path, command, ready):
    root = build(tmp_path, rp1=False)
    args = [*command, str(root)] if command[0] == "fleet" else [*command, "--root", str(root)]
    line = shlex.join([sys.executable, "-m", "rcs_tui", *args])
    env = {"PYTHONPATH": str(WORKTREE), "RCS_TUI_CONFIG": str(tmp_path / "no-config.toml"), "TERM": "xterm-256color"}
    with tmux_server(tmp_path, env=env, width=120) as tmux:
        tmux.run("respawn-pane", "-k", "-t", "t", "-c", str(WORKTREE), f"sh -c '{line}; echo EXIT=$?; sleep 60'")
        shown = tmux.wait(lambda: tmux.pane_text("t"), lambda text: ready in text)
        assert ready in shown, shown
        tmux.run("send-keys", "-t", "t", "C-c")
        after = tmux.wait(lambda: tmux.pane_text("t"), lambda text: "EXIT=" in text)
        assert "EXIT=0" in after, after
