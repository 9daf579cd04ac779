"""Every rp1 status answer is read from one database state, however rp1 commits meanwhile.

rp1's writer here keeps an invariant in every commit: exactly `RUNNING` runs are running (each commit
completes the run the previous commit started and starts a new one, so two commits in a row touch the
same run). An answer that mixed two commits (the run list
of one, the statuses of another) would count a different number. The reader answers
`--status running` through the kept status store (a new source, as a new process does), through an
in-process refresh, and as the command, and every answer must count exactly `RUNNING`.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import create_db
from rcs_tui.rp1.machines import MachineRegistry
from rcs_tui.rp1.source import Rp1Source

RUNNING, DONE = 12, 60  # runs running at every commit; runs completed before the writer starts


class Writer:
    """rp1's side: each `commit()` completes the newest running run and starts one, in one transaction."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.running = [f"run-{i:05d}" for i in range(DONE, DONE + RUNNING)]
        self.next = DONE + RUNNING
        self.commits = 0

    def _event(self, run: str, status: str) -> None:
        now = f"2026-11-26T{self.next // 3600 % 24:02d}:{self.next // 60 % 60:02d}:{self.next % 60:02d}.000Z"
        self.conn.execute("INSERT INTO events (run_id, type, step, data, created_at)"
                          " VALUES (?, 'status_change', 'plan', ?, ?)", (run, json.dumps({"status": status}), now))
        self.conn.execute("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?", (status, now, run))

    def start(self, run: str) -> None:
        self.conn.execute("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at)"
                          " VALUES (?, 'build-fast', 'f', '/p', '2026-11-26T00:00:00.000Z',"
                          " '2026-11-26T00:00:00.000Z')", (run,))
        self._event(run, "running")

    def commit(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        self._event(self.running.pop(), "completed")
        run = f"run-{self.next:05d}"
        self.next += 1
        self.start(run)
        self.running.append(run)
        self.conn.execute("COMMIT")
        self.commits += 1

    def close(self) -> None:
        self.conn.close()


def make_db(path: Path) -> Path:
    """`DONE` completed runs and `RUNNING` running ones."""
    create_db(path)
    w = Writer(path)
    w.conn.execute("BEGIN")
    for i in range(DONE + RUNNING):
        w.next = i
        w.start(f"run-{i:05d}")
        if i < DONE:
            w._event(f"run-{i:05d}", "completed")
    w.conn.execute("COMMIT")
    w.close()
    return path


def running(source: Rp1Source) -> int:
    feed = source.feed(status="running", limit=1000)
    assert feed.state.ok, feed.state
    assert len(feed.runs) == feed.total and all(s.status == "running" for s in feed.runs)
    return feed.total


def new_source(path: Path) -> Rp1Source:
    return Rp1Source(path, all_projects=True, machines=MachineRegistry({}))


@pytest.fixture
def commit_before_every_read(monkeypatch):
    """rp1 commits once right before each database read the reader makes: the worst interleaving,
    every time (no timing involved)."""
    def install(writer: Writer) -> None:
        real = Rp1Db.read

        def read(self, fn, default):
            writer.commit()
            return real(self, fn, default)

        monkeypatch.setattr(Rp1Db, "read", read)
    return install


def test_the_kept_store_path_answers_from_one_state(tmp_path, commit_before_every_read):
    """A new source (a new process) starting from what the last one kept: its run list, statuses and
    rows read again must all be of one commit."""
    path = make_db(tmp_path / "rp1.db")
    assert running(new_source(path)) == RUNNING  # first ever: keeps the store
    writer = Writer(path)
    commit_before_every_read(writer)
    try:
        for _ in range(15):
            assert running(new_source(path)) == RUNNING
        assert writer.commits >= 15
    finally:
        writer.close()


def test_an_in_process_refresh_answers_from_one_state(tmp_path, commit_before_every_read):
    path = make_db(tmp_path / "rp1.db")
    source = new_source(path)
    assert running(source) == RUNNING
    writer = Writer(path)
    commit_before_every_read(writer)
    try:
        for _ in range(15):
            writer.commit()  # the files changed: the source looks at the database again
            assert running(source) == RUNNING
        assert writer.commits >= 30
    finally:
        writer.close()


def test_the_current_run_and_a_timeline_are_read_from_one_state(tmp_path, commit_before_every_read):
    """The current run is the most recently active running run of the state it was read from: in every
    commit that is the run the commit started (never one of the older running runs), shown with that
    state's events. A timeline is read in one state too."""
    path = make_db(tmp_path / "rp1.db")
    source = new_source(path)
    writer = Writer(path)
    commit_before_every_read(writer)
    try:
        for _ in range(10):
            writer.commit()
            current = source.current()
            assert current is not None and current.status == "running"
            assert int(current.run.id.removeprefix("run-")) >= DONE + RUNNING - 1  # one the writer started
            assert current.projection.last_event_id == current.run.last_event_id  # row and events of one state
            timeline = source.timeline(current.run.id)
            assert timeline is not None
    finally:
        writer.close()


WRITER = """
import sys, time
sys.path.insert(0, sys.argv[3])
from tests.test_rp1_consistent_reads import Writer
w = Writer(__import__("pathlib").Path(sys.argv[1]))
for _ in range(int(sys.argv[2])):
    w.commit()
    time.sleep(0.002)
w.close()
"""


def test_answers_while_another_process_commits(tmp_path, run_cli):
    """rp1 as its own process committing while the command and a long-lived source answer: a bounded
    number of answers, each counting exactly `RUNNING`."""
    path = make_db(tmp_path / "rp1.db")
    code_root = str(Path(__file__).resolve().parent.parent)
    live = new_source(path)
    assert running(live) == RUNNING
    args = ("rp1", "runs", "--all-projects", "--status", "running", "--json", "--limit", "1000", "--db", str(path))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "2000", code_root])
    try:
        for _ in range(8):
            res = run_cli(*args, cwd=tmp_path)
            assert res.code == 0, res.stderr
            assert res.json["status"] is None and res.json["total"] == RUNNING
            for _ in range(5):
                assert running(live) == RUNNING
                assert running(new_source(path)) == RUNNING
    finally:
        writer.kill()
        writer.wait()
    assert running(new_source(path)) == RUNNING
