"""A read of every run's status rows groups the two halves of the run range on two connections.

The halves must hold every row exactly once (odd run ids included), and the second connection's rows
are used only when its read saw the very database the first one reads; otherwise, or when that read
fails, the first connection reads the upper half itself. Each case compares with the one-connection
read of the same database.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rcs_tui.rp1.db as rp1db
from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import SCHEMA_V17, FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.projection import StatusRow, project
from tests.test_rp1_status_equivalence import runs as run_lists
from tests.test_rp1_status_equivalence import write

HELPER = "rp1-status-half"


def cells(found: tuple[dict, set]) -> tuple[dict, set]:
    rows, odd = found
    return ({rid: sorted(tuple(getattr(r, f) for f in StatusRow.__slots__) for r in rs) for rid, rs in rows.items()},
            odd)


def read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[dict, set], tuple[dict, set]]:
    """The status rows of every run read on one connection, then with the run range split."""
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 10**9)
    db = Rp1Db(path)
    single = cells(db.status_rows(None))
    assert db.state.ok
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 1)
    split = cells(db.status_rows(None))
    assert db.state.ok
    return single, split


def statuses(path: Path, monkeypatch: pytest.MonkeyPatch, split: bool) -> dict[str, str]:
    monkeypatch.setattr(rp1db, "_SPLIT_RUNS", 1 if split else 10**9)
    db = Rp1Db(path)
    rows, odd = db.status_rows(None)
    assert db.state.ok
    return {rid: project(rs).status for rid, rs in rows.items() if rid not in odd}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_rows=run_lists, order=st.lists(st.integers(0, 7), max_size=120))
def test_split_read_gives_exactly_the_rows_of_one_read(tmp_path_factory, monkeypatch, run_rows, order):
    path = tmp_path_factory.mktemp("split") / "rp1.db"
    write(path, run_rows, order)
    single, split = read_both(path, monkeypatch)
    assert split == single
    assert not any(t.name == HELPER for t in threading.enumerate())


def test_odd_run_ids_fall_in_exactly_one_half(tmp_path, monkeypatch):
    """Events whose run id is missing, a number or bytes are each read once: a missing id and bytes send
    their run to the full path, a number is stored as its text."""
    path = tmp_path / "rp1.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V17.replace("run_id TEXT NOT NULL REFERENCES runs(id)", "run_id TEXT"))
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path) VALUES (?, 'build', 'f', '/p')",
                     [(f"run-{i}",) for i in range(6)])
    for rid in [None, 7, b"run-3", *(f"run-{i}" for i in range(6))]:
        for step, status in (("plan", "completed"), ("build", "running")):
            conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                         " (?, 'status_change', ?, ?, '2026-11-26T00:00:00.000Z')",
                         (rid, step, f'{{"status": "{status}"}}'))
    conn.commit()
    conn.close()
    single, split = read_both(path, monkeypatch)
    assert split == single
    assert split[1] == {"", "run-3"}
    assert set(split[0]) == {"7", *(f"run-{i}" for i in range(6) if i != 3)}


def two_databases(tmp_path: Path) -> tuple[Path, Path]:
    """A database and a copy whose newest run failed after the copy was taken from it."""
    path = create_db(tmp_path / "rp1.db")
    with Rp1Writer(path, clock=FakeClock()) as w:
        for i in range(8):
            r = w.start_run("build-fast", project_path="/p", run_id=f"run-{i}")
            w.step(r, "plan", "completed")
            w.step(r, "build")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    other = tmp_path / "other.db"
    shutil.copyfile(path, other)
    with Rp1Writer(other, clock=FakeClock("2026-12-01T00:00:00.000Z")) as w:
        w.step("run-7", "build", "failed")
    return path, other


def helper_reads(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """The second connection (the helper thread's) opens `target` instead of the database read."""
    real_uri = Rp1Db._uri

    def uri(self: Rp1Db, immutable: bool) -> str:
        if threading.current_thread().name == HELPER:
            return f"file:{target}?mode=ro"
        return real_uri(self, immutable)

    monkeypatch.setattr(Rp1Db, "_uri", uri)


def test_rows_from_a_read_that_saw_another_database_are_not_used(tmp_path, monkeypatch):
    """The second connection sees a different database (a commit landed between the two reads, here
    played by a copy with one more event): its rows are dropped and the upper half read again."""
    path, other = two_databases(tmp_path)
    assert statuses(other, monkeypatch, split=False)["run-7"] == "failed"
    expected = statuses(path, monkeypatch, split=False)
    assert expected["run-7"] == "running"
    helper_reads(monkeypatch, other)
    assert statuses(path, monkeypatch, split=True) == expected


def test_a_failed_second_read_falls_back_to_one_connection(tmp_path, monkeypatch):
    path, _other = two_databases(tmp_path)
    expected = statuses(path, monkeypatch, split=False)
    helper_reads(monkeypatch, tmp_path / "absent" / "x.db")
    assert statuses(path, monkeypatch, split=True) == expected
    assert not any(t.name == HELPER for t in threading.enumerate())


def test_the_split_read_uses_a_second_connection(tmp_path, monkeypatch):
    """Guards the tests above: with the split on, the helper connection is really opened."""
    path, _other = two_databases(tmp_path)
    opened: list[str] = []
    real_uri = Rp1Db._uri

    def uri(self: Rp1Db, immutable: bool) -> str:
        opened.append(threading.current_thread().name)
        return real_uri(self, immutable)

    monkeypatch.setattr(Rp1Db, "_uri", uri)
    statuses(path, monkeypatch, split=True)
    assert HELPER in opened
    opened.clear()
    statuses(path, monkeypatch, split=False)
    assert HELPER not in opened
