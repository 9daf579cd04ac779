"""How the first status read of every run picks its rows: through the index when most steps end with a row
that settles them, by one scan grouping the deciding rows when most steps end with a unit row (the index
pass would be followed by that scan anyway), and the same statuses either way."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rcs_tui.rp1 import status_read
from rcs_tui.rp1.fixtures import SHAPES, build_shaped_db
from rcs_tui.rp1.projection import project
from rcs_tui.rp1.schema import discover


def _read(path: Path) -> tuple[dict[str, str], list[str]]:
    """Each run's status from the rows the read picks, and the statements it ran."""
    conn = sqlite3.connect(path)
    ran: list[str] = []
    conn.set_trace_callback(ran.append)
    rows, odd = status_read.deciding_rows(conn, discover(conn), "", [])
    conn.close()
    assert not odd
    return {run: project(kept).status for run, kept in rows.items()}, ran


def _full(path: Path) -> dict[str, str]:
    from rcs_tui.rp1.db import Rp1Db

    with sqlite3.connect(path) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM runs")]
    return {run: project(events).status for run, events in Rp1Db(path).events(ids).items()}


@pytest.mark.parametrize(("shape", "scans"), [("a", False), ("e", True)])
def test_the_read_scans_once_exactly_when_most_steps_end_with_a_unit_row(tmp_path: Path, shape: str,
                                                                          scans: bool) -> None:
    path = build_shaped_db(tmp_path / "rp1.db", SHAPES[shape].scaled(300))
    statuses, ran = _read(path)
    index_pass = [s for s in ran if "INDEXED BY" in s and "GROUP BY run_id, step)" in s]
    one_scan = [s for s in ran if "NOT INDEXED" in s and "GROUP BY run_id, step, type" in s]
    assert (len(one_scan), len(index_pass)) == ((1, 0) if scans else (0, 1))
    assert statuses == _full(path)
    assert len(set(statuses.values())) >= (3 if scans else 1)  # e: its runs end in several ways


def test_the_read_scans_once_when_deciding_rows_are_few_though_steps_end_settled(tmp_path: Path) -> None:
    """Runs whose steps are mostly artifacts and notes between their own status rows: the few deciding rows are
    grouped by one scan (the index pass would read a table row for every step), with the full statuses."""
    from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db

    path = create_db(tmp_path / "rp1.db")
    with Rp1Writer(path, clock=FakeClock()) as w:
        for i in range(60):
            run = w.start_run("build", project_path="/p", run_id=f"run-{i}")
            for step in ("plan", "build"):
                w.step(run, step, "running")
                for k in range(20):
                    w.artifact(run, step, f"{step}-{k}.md")
                w.step(run, step, ("completed", "failed", "running")[i % 3] if step == "build" else "completed")
    statuses, ran = _read(path)
    assert [s for s in ran if "NOT INDEXED" in s and "GROUP BY run_id, step, type" in s]
    assert not [s for s in ran if "INDEXED BY" in s and "GROUP BY run_id, step)" in s]
    assert statuses == _full(path) and set(statuses.values()) == {"completed", "failed", "running"}


def test_a_sample_of_steps_left_open_counts_unit_rows_prompts_and_rows_without_a_status(tmp_path: Path) -> None:
    path = build_shaped_db(tmp_path / "rp1.db", SHAPES["a"].scaled(20))
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM events")
    rows = [("r1", "status_change", "build", None, '{"status": "running"}'),  # settles
            ("r1", "status_change", "build", "T1", '{"status": "running"}'),  # a unit row came last: open
            ("r2", "status_change", "plan", None, '{"status": "completed"}'),  # settles
            ("r3", "waiting_for_user", "plan", None, '{"message": "ok?"}'),  # a prompt: open
            ("r4", "status_change", "task-builder:building", "T2", "{}"),  # a sub-agent's status row: settles
            ("r5", "status_change", None, None, "{}"),  # a run-level row without a status: open
            ("r6", "status_change", "check", None, "not json")]  # no status: open
    conn.executemany("INSERT INTO events (run_id, type, step, unit, data) VALUES (?, ?, ?, ?, ?)", rows)
    conn.commit()
    # groups: (r1, build) open, (r2, plan) settled, (r3, plan) open, (r4, agent) settled, (r5, -) open, (r6, check)
    assert status_read._open_share(conn) == pytest.approx(4 / 6)
    conn.close()
