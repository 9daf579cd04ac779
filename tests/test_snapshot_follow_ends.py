"""How `snapshot --json --follow` starts and ends: under cron, nohup or a service (stdin already at its end)
it still prints and keeps following; ctrl+c ends it quietly with the shell's 130; a reader closing stdin ends
it with 0."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import RCS_TUI
from tests.statefix import canonical, mode


def start(root: Path, stdin) -> subprocess.Popen:
    mode(root, "forge", current_phase="executing")
    canonical(root, ["forge"])
    return subprocess.Popen([RCS_TUI, "snapshot", "--json", "--follow", "--root", str(root)], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def first_document(proc: subprocess.Popen) -> dict:
    line = proc.stdout.readline()
    assert line, proc.stderr.read()
    return json.loads(line)


def test_with_stdin_already_at_its_end_it_prints_and_keeps_following(tmp_path):
    proc = start(tmp_path, subprocess.DEVNULL)
    try:
        assert first_document(proc)["kind"] == "snapshot"
        mode(tmp_path, "forge", current_phase="verifying")  # a change still arrives
        assert json.loads(proc.stdout.readline())["seq"] == 2
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_closed_pipe_on_stdin_before_start_is_the_same(tmp_path):
    proc = start(tmp_path, subprocess.PIPE)
    proc.stdin.close()
    try:
        assert first_document(proc)["kind"] == "snapshot"
        time.sleep(0.5)
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(10)


def test_ctrl_c_ends_quietly_with_130(tmp_path):
    proc = start(tmp_path, subprocess.PIPE)
    first_document(proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 130
    assert proc.stderr.read() == "" and proc.stdout.read() == ""


def test_the_reader_closing_stdin_ends_it_with_0(tmp_path):
    proc = start(tmp_path, subprocess.PIPE)
    first_document(proc)
    proc.stdin.close()
    assert proc.wait(10) == 0
