"""Behaviour a user relies on around the split status read, the quick commands' fast exit and the
console status line at any width."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import rcs_tui.rp1.db as rp1db
from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import create_db
from rcs_tui.rp1.projection import project

HELPER = "rp1-status-half"
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


def statuses(db: Rp1Db) -> dict[str, str]:
    rows, odd = db.status_rows(None)
    assert db.state.ok, db.state
    return {rid: project(rs).status for rid, rs in rows.items() if rid not in odd}


def other_process(path: Path, sql: str) -> str:
    """Run `sql` then commit in another process (it never waits for a lock): "ok" or SQLite's refusal."""
    code = ("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=0)\n"
            "try:\n    c.execute(sys.argv[2]); c.commit(); c.close(); print('ok')\n"
            "except sqlite3.Error as e:\n    print(e)\n")
    return subprocess.run([sys.executable, "-c", code, str(path), sql], capture_output=True, text=True,
                          timeout=30).stdout.strip()


def during_the_helper_read(monkeypatch: pytest.MonkeyPatch, action) -> list:
    """Run `action()` in the helper thread once its connection has read, while the first one reads too."""
    done: list = []
    real = rp1db._read_marks

    def marks(conn, schema):
        got = real(conn, schema)
        if threading.current_thread().name == HELPER and not done:
            done.append(action())
        return got

    monkeypatch.setattr(rp1db, "_read_marks", marks)
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 1)
    return done


def test_a_split_read_keeps_writers_out_of_a_rollback_journal_database(tmp_path, monkeypatch):
    """While a status read holds its read transaction, another process cannot commit into the database
    file under it (it would read torn pages: wrong statuses or "database disk image is malformed")."""
    path = many_runs(tmp_path / "rp1.db", journal="delete")
    expected = statuses(Rp1Db(path))
    done = during_the_helper_read(monkeypatch, lambda: other_process(path, EVENT))
    assert statuses(Rp1Db(path)) == expected
    assert done == ["database is locked"]


def test_a_split_read_keeps_the_wal_of_a_database_a_writer_left_open(tmp_path, monkeypatch):
    """A WAL database read while another process writes and closes: that writer is not the last
    connection (this read is attached), so it must not checkpoint and delete the WAL under the read."""
    path = many_runs(tmp_path / "rp1.db")
    crashed = ("import sqlite3, os, sys\nc = sqlite3.connect(sys.argv[1])\n"
               "c.execute(\"UPDATE runs SET name = 'n' WHERE id = 'run-0'\"); c.commit(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", crashed, str(path)], check=True, timeout=30)
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0  # a writer that ended without closing left its WAL behind
    expected = statuses(Rp1Db(path))
    done = during_the_helper_read(monkeypatch, lambda: (other_process(path, EVENT), wal.exists()))
    assert statuses(Rp1Db(path)) == expected
    assert done == [("ok", True)]


def test_a_thread_that_cannot_start_leaves_the_read_on_one_connection(tmp_path, monkeypatch):
    """Where no thread can be started (a process limit), the status read still answers, on one connection."""
    path = many_runs(tmp_path / "rp1.db")
    expected = statuses(Rp1Db(path))
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 1)

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    db = Rp1Db(path)
    assert statuses(db) == expected


def test_an_interrupt_while_the_helper_starts_leaves_no_thread_waiting(tmp_path, monkeypatch):
    """Ctrl-C landing while the helper thread starts ends the read, and the helper too (it does not wait
    forever on its go-ahead, holding a read transaction open)."""
    path = many_runs(tmp_path / "rp1.db")
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 1)
    real = threading.Thread.start

    def start_then_interrupt(self):
        real(self)
        if self.name == HELPER:
            raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        Rp1Db(path).status_rows(None)
    deadline = time.monotonic() + 10
    while any(t.name == HELPER for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == HELPER for t in threading.enumerate())


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
