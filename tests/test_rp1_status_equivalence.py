"""The fast status reads (`Rp1Db.status_rows`, kept statuses) agree with `project` over every event.

Random runs are written as rows into a real rp1 database: plain steps, sub-agent steps, units,
prompts with and without a step, run-level rows (cancelled, abandoned, inactive), rows without a
status, payloads that are not JSON objects, artifacts, and an empty step. Each run's status from the
narrow rows must be the one `project` derives from all of its events, in id order, whichever way SQLite
picks the rows of the steps whose newest row does not settle them (one scan of the table, or step by
step through the index). The same holds on databases shaped like busy real runs (the benchmark's
shapes, smaller), with random rows appended between reads.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcs_tui.rp1 import status_read
from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import SHAPES, build_shaped_db, create_db
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


# The ways `status_read` can pick the rows (its cost model chooses one): (SCAN_ALL_SHARE, SCAN_RATIO)
ALL_AT_ONCE = (2.0, 0)  # one scan grouping every run's deciding rows
SCAN = (-1.0, 10**9)  # each step's newest row by index, then one scan for the steps it leaves open
SEEK = (-1.0, 0)  # the same, then the open steps one by one through the index
PLANS = (ALL_AT_ONCE, SCAN, SEEK)


def use(monkeypatch: pytest.MonkeyPatch, plan: tuple[float, int]) -> None:
    """Read by `plan` whatever the sample of the table says (an index plan never turns into the scan)."""
    monkeypatch.setattr(status_read, "SCAN_ALL_SHARE", plan[0])
    monkeypatch.setattr(status_read, "SCAN_RATIO", plan[1])
    monkeypatch.setattr(status_read, "OPEN_SCAN_ALL", float("inf") if plan[0] < 0 else 1.0)


def cells(found: dict) -> dict[str, list[tuple]]:
    return {rid: sorted(tuple(getattr(r, f) for f in StatusRow.__slots__) for r in rows) for rid, rows in found.items()}


def rows_by_plan(db: Rp1Db, monkeypatch: pytest.MonkeyPatch, run_ids: list[str] | None = None) -> tuple[dict, set]:
    """The status rows read every way: the two index plans read the same rows, and all three give the same
    statuses and odd runs. Returns the index plan's rows."""
    got = []
    for plan in PLANS:
        use(monkeypatch, plan)
        got.append(db.status_rows(None, run_ids))
        assert db.state.ok
    (at_once, odd_at_once), (scanned, odd_scanned), (sought, odd_sought) = got
    assert cells(scanned) == cells(sought) and odd_scanned == odd_sought == odd_at_once
    assert {rid: project(rows).status for rid, rows in at_once.items()} == {
        rid: project(rows).status for rid, rows in sought.items()}
    return scanned, odd_scanned


def narrow_matches_full(path: Path, ids: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = Rp1Db(path)
    full = {rid: project(evs).status for rid, evs in db.events(ids).items()}
    rows, odd = rows_by_plan(db, monkeypatch)
    narrow = {rid: project(rows.get(rid, ())).status for rid in ids if rid not in odd}
    assert narrow == {rid: full[rid] for rid in narrow}
    # A few runs' rows read by id (the runs that moved) are exactly what the read of every run gives them.
    some = ids[::2]
    rows_of_some, odd_of_some = rows_by_plan(db, monkeypatch, some)
    assert odd_of_some == odd & set(some)
    assert cells(rows_of_some) == cells({rid: rows[rid] for rid in some if rid in rows})
    # Only runs without a plain step row with a status need every row.
    for rid in odd:
        assert not any(e.is_workflow_row and e.status for e in db.events([rid])[rid])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_rows=runs, order=st.lists(st.integers(0, 7), max_size=120))
def test_status_rows_give_the_full_projection_status(tmp_path_factory, monkeypatch, run_rows, order):
    path = tmp_path_factory.mktemp("eq") / "rp1.db"
    narrow_matches_full(path, write(path, run_rows, order), monkeypatch)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run_rows=runs, order=st.lists(st.integers(0, 7), max_size=120))
def test_without_the_run_step_index_the_same_reads_agree_too(tmp_path_factory, monkeypatch, run_rows, order):
    path = tmp_path_factory.mktemp("eq") / "rp1.db"
    ids = write(path, run_rows, order)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX idx_events_run_step")
    conn.commit()
    conn.close()
    narrow_matches_full(path, ids, monkeypatch)


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


def append_random(path: Path, rng, count: int) -> None:
    """`count` random rows appended to random runs: the rows of `TYPES`, plus what busy runs write (unit rows
    of their steps, sub-agent prompts and their answers, progress notes, run-level rows)."""
    conn = sqlite3.connect(path)
    ids = [r[0] for r in conn.execute("SELECT id FROM runs")]
    busy = [("status_change", "design", "T3", {"status": "running"}),
            ("status_change", "design", None, {"status": "completed"}),
            ("waiting_for_user", "feature-verifier:verifying", None, {"message": "ok?"}),
            ("status_change", "feature-verifier:verifying", "T1", {"status": "completed"}),
            ("status_change", None, None, {"status": "running"}), ("btw_update", "build", None, {"message": "."}),
            ("waiting_for_user", "design", None, {"message": "approve?"}),
            ("artifact_registered", "design", None, {"path": "d.md"})]
    for _ in range(count):
        if rng.random() < 0.5:
            type_, step, unit, data = rng.choice(busy)
            payload = json.dumps(data)
        else:
            type_, step, unit = rng.choice(TYPES), rng.choice(STEPS), rng.choice(UNITS)
            payload = json.dumps({"status": rng.choice(STATUSES)}) if rng.random() < 0.9 else rng.choice(PAYLOADS)
        conn.execute("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (rng.choice(ids), type_, step, unit, payload, "2027-01-01T00:00:00.000Z"))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("seed", range(2))
def test_shaped_databases_read_fast_give_the_full_projection_status(tmp_path, monkeypatch, shape, seed):
    """The benchmark's shapes (busy steps with units, sub-agents, artifacts and progress notes after the
    step's own rows; 100 units a step; runs waiting on a sub-agent prompt), smaller: the narrow rows
    both ways, a first process, a later one and a live source all give `project`'s status over every
    event, before and after random rows are appended, twice."""
    import random

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    rng = random.Random(seed)
    path = build_shaped_db(tmp_path / "rp1.db", SHAPES[shape].scaled(24 if shape == "c" else 70), seed=seed)
    ids = [r[0] for r in sqlite3.connect(path).execute("SELECT id FROM runs")]
    live = Rp1Source(path, all_projects=True, machines=MachineRegistry({}))
    for round_ in range(3):
        narrow_matches_full(path, ids, monkeypatch)
        full = {rid: project(evs).status for rid, evs in Rp1Db(path).events(ids).items()}
        if round_ == 0 and not SHAPES[shape].plain:
            assert len(set(full.values())) >= 3  # the shape mixes statuses: the filter has something to tell
        for plan in PLANS:
            use(monkeypatch, plan)
            for source in (Rp1Source(path, all_projects=True, machines=MachineRegistry({})), live):
                for status in ("waiting", "running", "failed", "completed"):
                    feed = source.feed(status=status, limit=1000)
                    assert {s.run.id for s in feed.runs} == {r for r, s in full.items() if s == status}, status
        append_random(path, rng, 40)
