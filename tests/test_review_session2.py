"""Behaviour a user relies on around the quick commands' fast exit and the console status line at any
width (and the database helpers `test_rp1_db_locks.py` uses)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rcs_tui.rp1.fixtures import create_db

EVENT = ("INSERT INTO events (run_id, type, step, data, created_at)"
         " VALUES ('run-1', 'status_change', 'build', '{\"status\": \"failed\"}', '2026-11-26T00:00:09.000Z')")


def many_runs(path: Path, journal: str = "wal") -> Path:
    """A database of 40 runs, each with a completed plan and a running build, in `journal` mode."""
    create_db(path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path) VALUES (?, 'build-fast', 'f', '/p')",
                     [(f"run-{i}",) for i in range(40)])
    for i in range(40):
        for step, status in (("plan", "completed"), ("build", "running")):
            conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                         " (?, 'status_change', ?, ?, '2026-11-26T00:00:00.000Z')",
                         (f"run-{i}", step, f'{{"status": "{status}"}}'))
    conn.commit()
    conn.close()
    return path


def other_process(path: Path, sql: str) -> str:
    """Run `sql` then commit in another process (it never waits for a lock): "ok" or SQLite's refusal."""
    code = ("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=0)\n"
            "try:\n    c.execute(sys.argv[2]); c.commit(); c.close(); print('ok')\n"
            "except sqlite3.Error as e:\n    print(e)\n")
    return subprocess.run([sys.executable, "-c", code, str(path), sql], capture_output=True, text=True,
                          timeout=30).stdout.strip()


# -- the quick commands' fast exit ----------------------------------------------------------------
RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")


@pytest.mark.parametrize("closed", ["1", "2"])
@pytest.mark.parametrize("argv", [["hud", "--once"], ["rp1", "runs", "--json"]])
def test_a_quick_command_with_a_closed_stream_ends_quietly_with_its_status(tmp_path, closed, argv):
    """`rcs-tui hud --once >&-` (or `2>&-`) in a status-line script: the command still ends with status 0
    and writes no traceback; the stream left open gets the whole answer."""
    from rcs_tui.demo import build_workspace

    ws = build_workspace(tmp_path)
    env = {**os.environ, "RP1_DB": str(ws.rp1_db), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "RCS_TUI_CONFIG": str(tmp_path / "no-config.toml")}
    cmd = [RCS_TUI, *argv, "--root", str(ws.project)]
    whole = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert whole.returncode == 0 and whole.stdout.strip(), whole.stderr
    shell = f'exec "$@" {closed}>&-'
    got = subprocess.run(["bash", "-c", shell, "rcs-tui", *cmd], capture_output=True, text=True, env=env,
                         timeout=60)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr and got.stderr == ""
    assert got.stdout == ("" if closed == "1" else whole.stdout)


# -- the console status line ------------------------------------------------------------------------
LONG_FIRST_WORD = ("/home/operator/work/project/.rcs/state/sessions/rcs-1764106896953-k3j9x2/forge-state.json"
                   " changed underneath; nothing was changed")


@pytest.mark.parametrize("paused", [False, True])
@pytest.mark.parametrize("readonly", [False, True])
def test_an_error_whose_first_word_is_long_still_shows_at_every_width(tmp_path, paused, readonly):
    """An error starting with a long path never shows as a bare "…": at any width the line holds either
    whole words of the error or its mark, and it fits."""
    from rcs_tui.ui.console.statusbar import status_text
    from tests.console_fixtures import NOW, app

    world = app(tmp_path).loader.load()
    for width in range(22, 121):
        text = status_text(world, NOW, width=width, paused=paused, readonly=readonly, last_error=LONG_FIRST_WORD,
                           watching="native").plain
        assert len(text) <= width, (width, text)
        shown = text.rsplit(" │ ", 1)[-1]
        words = shown.rstrip("…").split()
        assert shown.startswith("✖") or (words and words[0] in LONG_FIRST_WORD.split()), (width, text)
