"""The fast status reads (`Rp1Db.status_rows`, kept statuses) agree with `project` over every event.

Random runs are written as rows into a real rp1 database: plain steps, sub-agent steps, units,
prompts with and without a step, run-level rows (cancelled, abandoned, inactive), rows without a
status, payloads that are not JSON objects, artifacts, and an empty step. Each run's status from the
narrow rows must be the one `project` derives from all of its events, in id order.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import create_db
from rcs_tui.rp1.machines import MachineRegistry
from rcs_tui.rp1.projection import StatusRow, project
from rcs_tui.rp1.source import FEED_FILTERS, Rp1Source

STEPS = [None, "", "plan", "build", "task-builder:building", "feature-verifier:verifying"]
UNITS = [None, None, None, "", "T1", "T2"]
STATUSES = ["running", "waiting", "completed", "failed", "skipped", "cancelled", "abandoned", "inactive", ""]
PAYLOADS = [None, "{}", "[1]", "not json", '{"status": 3}', '{"status": "failed", "n": NaN}',
            '{"status": "running", "status": "completed"}']
TYPES = ["status_change"] * 6 + ["waiting_for_user", "waiting_for_user", "artifact_registered"]

row = st.tuples(st.sampled_from(TYPES), st.sampled_from(STEPS), st.sampled_from(UNITS),
                st.one_of(st.sampled_from(STATUSES).map(lambda s: json.dumps({"status": s})),
                          st.sampled_from(PAYLOADS)))
# Each run a list of rows; rows of all runs are interleaved in a random order, as concurrent runs are.
runs = st.lists(st.lists(row, max_size=14), min_size=1, max_size=8)


def write(path: Path, run_rows: list[list[tuple]], order: list[int]) -> list[str]:
    create_db(path)
    conn = sqlite3.connect(path)
    ids = [f"run-{i}" for i in range(len(run_rows))]
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path) VALUES (?, 'build', 'f', '/p')",
                     [(r,) for r in ids])
    queues = [list(rows) for rows in run_rows]
    for pick in order:
        live = [i for i, q in enumerate(queues) if q]
        if not live:
            break
        i = live[pick % len(live)]
        type_, step, unit, data = queues[i].pop(0)
        conn.execute("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (ids[i], type_, step, unit, data, "2026-11-26T00:00:00.000Z"))
    for i, q in enumerate(queues):
        for type_, step, unit, data in q:
            conn.execute("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                         (ids[i], type_, step, unit, data, "2026-11-26T00:00:00.000Z"))
    conn.commit()
    conn.close()
    return ids


def narrow_matches_full(path: Path, ids: list[str]) -> None:
    db = Rp1Db(path)
    full = {rid: project(evs).status for rid, evs in db.events(ids).items()}
    rows, odd = db.status_rows(None)
    assert db.state.ok
    narrow = {rid: project(rows.get(rid, ())).status for rid in ids if rid not in odd}
    assert narrow == {rid: full[rid] for rid in narrow}
    # A few runs' rows read by id (the runs that moved) are exactly what the read of every run gives them.
    some = ids[::2]
    rows_of_some, odd_of_some = db.status_rows(None, some)
    assert db.state.ok and odd_of_some == odd & set(some)
    def cells(found: dict) -> dict[str, list[tuple]]:
        return {rid: [tuple(getattr(r, f) for f in StatusRow.__slots__) for r in found.get(rid, [])] for rid in some}

    assert cells(rows_of_some) == cells(rows)
    # Only runs without a plain step row with a status need every row.
    for rid in odd:
        assert not any(e.is_workflow_row and e.status for e in db.events([rid])[rid])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_rows=runs, order=st.lists(st.integers(0, 7), max_size=120))
def test_status_rows_give_the_full_projection_status(tmp_path_factory, run_rows, order):
    path = tmp_path_factory.mktemp("eq") / "rp1.db"
    narrow_matches_full(path, write(path, run_rows, order))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_rows=runs, order=st.lists(st.integers(0, 7), max_size=120))
def test_without_the_run_step_index_the_same_reads_agree_too(tmp_path_factory, run_rows, order):
    path = tmp_path_factory.mktemp("eq") / "rp1.db"
    ids = write(path, run_rows, order)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX idx_events_run_step")
    conn.commit()
    conn.close()
    narrow_matches_full(path, ids)


@pytest.mark.parametrize("seed", range(3))
def test_filtered_feed_matches_full_projection_cold_warm_and_after_new_events(tmp_path, monkeypatch, seed):
    """Every status filter, in a first process, a later one (kept statuses) and after new rows land."""
    import random

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    rng = random.Random(seed)
    run_rows = [[(rng.choice(TYPES), rng.choice(STEPS), rng.choice(UNITS),
                  json.dumps({"status": rng.choice(STATUSES)}) if rng.random() < 0.9 else rng.choice(PAYLOADS))
                 for _ in range(rng.randrange(0, 12))] for _ in range(80)]
    path = tmp_path / "rp1.db"
    ids = write(path, run_rows, [rng.randrange(8) for _ in range(600)])

    live = Rp1Source(path, all_projects=True, machines=MachineRegistry({}))

    def check() -> None:
        every = {rid: project(evs) for rid, evs in Rp1Db(path).events(ids).items()}
        full = {rid: p.status for rid, p in every.items()}
        for source in (Rp1Source(path, all_projects=True, machines=MachineRegistry({})), live):
            for status in FEED_FILTERS:
                feed = source.feed(status=status, limit=1000)
                assert {s.run.id for s in feed.runs} == {r for r, s in full.items() if s == status}, status
                assert feed.total == len(feed.runs)
            # every run's whole projection, kept ones extended with the new events included
            assert {s.run.id: s.projection for s in source.feed(limit=1000).runs} == every

    check()
    check()  # a new source: statuses kept from the first
    conn = sqlite3.connect(path)
    for rid in rng.sample(ids, 10):
        type_, step, unit, data = rng.choice(TYPES), rng.choice(STEPS), rng.choice(UNITS), json.dumps(
            {"status": rng.choice(STATUSES)})
        conn.execute("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (rid, type_, step, unit, data, "2026-11-27T00:00:00.000Z"))
    conn.commit()
    conn.close()
    check()
