"""rp1 databases for the lock tests: many runs in a chosen journal mode, and commits from another process."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

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
