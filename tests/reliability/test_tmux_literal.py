"""Strings from disk or a remote host never become tmux commands: tmux expands `#(…)`, `#{…}` and `#[…]` in
messages and in a pane's start directory, so everything handed to it there is escaped (`#` → `##`).

Run against a real tmux server on a socket of the test's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from rcs_tui.views.text import tmux_literal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def tmux_server(tmp_path):
    """A tmux server of this test's own; yields the value $TMUX has inside it."""
    sock = tmp_path / "tmux.sock"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "-s", "t", "-x", "120", "-y", "20"], check=True)
    pid = subprocess.run(["tmux", "-S", str(sock), "display-message", "-p", "#{pid}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        yield sock, f"{sock},{pid},0"
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)


def test_the_escape_doubles_every_hash():
    assert tmux_literal("w#(touch x) #{pane_id} #[fg=red]\x1b[31m") == "w##(touch x) ##{pane_id} ##[fg=red]"


def test_a_fleet_alert_about_a_hostile_worker_name_shows_it_and_runs_nothing(tmux_server, tmp_path, monkeypatch):
    from rcs_tui.fleet import alert_channels
    from rcs_tui.fleet.alerts import AlertSettings, AlertTracker
    from rcs_tui.fleet.projects import parse_project
    from rcs_tui.fleet.rows import Row

    sock, tmux_env = tmux_server
    marker = tmp_path / "pwned"
    monkeypatch.setenv("TMUX", tmux_env)
    sent: list[list[str]] = []

    async def record(argv, env, timeout=None):
        sent.append(argv)

    monkeypatch.setattr(alert_channels, "run_process", record)
    tracker = AlertTracker(AlertSettings(tmux=True, bell=False, min_interval=0))
    row = Row(parse_project(str(tmp_path)))
    row.take({"version": "1.1", "kind": "snapshot", "attention": {"dead": []}, "team": {}}, now=1.0)
    tracker.observe(row)
    hostile = f"crew/w#(touch {marker})#{{pane_id}}"
    row.take({"version": "1.1", "kind": "snapshot", "team": {}, "attention": {"dead": [hostile]}}, now=2.0)
    assert tracker.observe(row)
    (argv,) = [a for a in sent if os.path.basename(a[0]) == "tmux"]
    assert argv[1:2] == ["display-message"]
    # what tmux makes of that message (-p prints it instead of showing it on a client)
    shown = subprocess.run(["tmux", "-S", str(sock), "display-message", "-p", argv[2]], capture_output=True,
                           text=True).stdout
    time.sleep(0.5)
    assert not marker.exists()
    assert hostile in shown


def test_the_hud_split_from_a_hostile_directory_runs_nothing(tmux_server, tmp_path, monkeypatch, run_cli):
    sock, tmux_env = tmux_server
    marker = tmp_path / "pwned"
    hostile = tmp_path / f"p#(touch {marker})"
    (hostile / ".rcs").mkdir(parents=True)
    res = run_cli("hud", "--tmux", "--root", str(hostile), cwd=hostile, env={"TMUX": tmux_env})
    assert res.code == 0, res.stderr
    time.sleep(1.0)
    assert not marker.exists()
    panes = subprocess.run(["tmux", "-S", str(sock), "list-panes", "-a", "-F", "#{pane_current_path}"],
                           capture_output=True, text=True).stdout
    assert os.fspath(hostile) in panes.splitlines() or not Path(marker).exists()


@pytest.mark.parametrize("value", ["ends in a semicolon;", "two;;", ";", "a; b"])
def test_an_argument_ending_in_a_semicolon_reaches_tmux_whole(tmux_server, value):
    """tmux reads an argument that ends in `;` as the end of its command: the one argument form (used by the
    fleet's tmux alert and the ambient status options) keeps the text as it is."""
    from rcs_tui.views.text import tmux_argument

    sock, _ = tmux_server
    subprocess.run(["tmux", "-S", str(sock), "set-option", "-g", "@rcs_test", tmux_argument(value)], check=True)
    shown = subprocess.run(["tmux", "-S", str(sock), "show-option", "-gv", "@rcs_test"], capture_output=True,
                           text=True, check=True).stdout.rstrip("\n")
    assert shown == value
