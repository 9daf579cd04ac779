"""The narrow status path (`Rp1Db.status_rows` + `project`) gives exactly the full projection's statuses."""

from __future__ import annotations

import sqlite3

import pytest

from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.projection import project
from rcs_tui.rp1.source import Rp1Source

PROJECT = "/work/proj"


def build(db):
    with Rp1Writer(db, clock=FakeClock()) as w:
        def run(flow, rid):
            return w.start_run(flow, project_path=PROJECT, run_id=rid)
        r = run("deep-research", "waiting")
        w.step(r, "clarify")
        w.wait_for_user(r, "clarify", "Which region?")
        r = run("deep-research", "answered")
        w.step(r, "clarify")
        w.wait_for_user(r, "clarify", "Which region?")
        w.step(r, "plan")
        r = run("build-fast", "failed")
        w.step(r, "plan")
        w.step(r, "build")
        w.step(r, "build", "failed")
        r = run("build-fast", "cancelled")
        w.step(r, "plan")
        w.end_run(r, "cancelled")
        r = run("build-fast", "abandoned-then-ran")
        w.step(r, "plan")
        w.end_run(r, "abandoned")
        w.step(r, "build")
        r = run("pr-review", "inactive")
        w.step(r, "split")
        w.run_status(r, "inactive")
        r = run("pr-review", "reactivated")
        w.step(r, "split")
        w.run_status(r, "inactive")
        w.step(r, "review")
        r = run("pr-review", "inactive-unit-activity")
        w.step(r, "split")
        w.run_status(r, "inactive")
        w.step(r, "split", unit="T1")
        r = run("build", "units")
        for step in ["requirements", "design", "tasks", "build"]:
            w.step(r, step)
        w.step(r, "task-builder:building", unit="T1")
        w.step(r, "task-builder:failed", "failed", unit="T1")
        w.step(r, "build", "failed", unit="T2")
        w.step(r, "build", "completed")
        r = run("build", "namespaced-prompt")
        w.step(r, "requirements")
        w.wait_for_user(r, "feature-verifier:verifying", "ok?")
        w.step(r, "feature-verifier:verifying", "completed")
        r = run("build", "unit-prompt")
        w.step(r, "requirements")
        w.wait_for_user(r, None, "anything?")
        w.step(r, "requirements", unit="T9")
        r = run("build", "stepless-prompt")
        w.step(r, "requirements")
        w.wait_for_user(r, None, "anything?")
        r = run("build", "units-only")  # no plain step row: each unit counts on its own
        w.step(r, "building", "failed", unit="T1")
        w.step(r, "building", "completed", unit="T2")
        r = run("build", "agent-only")
        w.step(r, "task-builder:building")
        r = run("blueprint", "completed")
        w.step(r, "detect")
        w.step(r, "prd")
        w.step(r, "prd", "completed")
        w.artifact(r, "prd", "prd.md")
        run("build", "empty")
        r = run("homegrown", "no-status")
        w.step(r, "gather")
        w._insert(r, "status_change", "gather", None, {"note": "no status"}, w.clock())
        w._insert(r, "status_change", "gather", None, {"status": ""}, w.clock())
        r = run("homegrown", "odd-payload")
        w.step(r, "gather")
        w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, 'status_change',"
                       " 'gather', '{\"status\": \"failed\", \"n\": NaN}', '2026-11-26T00:00:00.000Z')", (r,))


def full_statuses(db):
    events = Rp1Db(db).events([r[0] for r in sqlite3.connect(db).execute("SELECT id FROM runs")])
    return {rid: project(evs).status for rid, evs in events.items()}


def test_status_rows_match_full_projection(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    build(db)
    full = full_statuses(db)
    rows, odd = Rp1Db(db).status_rows(None)
    fast = {rid: project(rows.get(rid, ())).status for rid in full if rid not in odd}
    assert odd == {"units-only", "agent-only"}  # no plain step row: every unit row counts
    assert (full["units-only"], full["agent-only"]) == ("failed", "running")
    assert fast == {rid: s for rid, s in full.items() if rid not in odd}
    assert {full[k] for k in full} >= {"waiting", "failed", "cancelled", "inactive", "running", "completed",
                                       "not_started"}
    assert full["namespaced-prompt"] == "waiting" and full["inactive-unit-activity"] == "running"


def test_filtered_feed_uses_the_same_statuses(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    build(db)
    with Rp1Writer(db, clock=FakeClock("2026-12-01T00:00:00.000Z")) as w:  # enough runs for the narrow path
        for i in range(60):
            r = w.start_run("build-fast", project_path=PROJECT, run_id=f"bulk-{i:02d}")
            w.step(r, "plan", "failed" if i % 3 == 0 else "running")
    full = full_statuses(db)
    for status in set(full.values()):
        feed = Rp1Source(db, root=PROJECT, plugin_roots=[]).feed(status=status, limit=1000)
        assert feed.total == sum(1 for s in full.values() if s == status)
        assert {r.run.id for r in feed.runs} == {rid for rid, s in full.items() if s == status}
        assert all(r.status == status for r in feed.runs)


def test_payload_shapes_and_odd_cells_agree_with_full_projection(tmp_path):
    """Payloads whose status is missing, null, a number, or not an object read as "no status" on both
    paths; a step SQL groups differently from Python (a blob) sends its run to the full path; a blob
    time changes nothing; a later no-status row does not hide an earlier status of the same step."""
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        shapes = {"number": '{"status": 3}', "null": '{"status": null}', "array": "[1, 2]", "none": None,
                  "empty-object": "{}", "nested": '{"status": {"status": "failed"}}'}
        for name, payload in shapes.items():
            r = w.start_run("build-fast", project_path=PROJECT, run_id=f"shape-{name}")
            w.step(r, "plan", "completed")
            w.step(r, "build", "failed" if name == "nested" else "running")
            w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                           " (?, 'status_change', 'build', ?, '2026-11-26T00:00:00.000Z')", (r, payload))
        r = w.start_run("build-fast", project_path=PROJECT, run_id="blob-step")
        w.step(r, "plan")
        w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                       " (?, 'status_change', CAST('plan' AS BLOB), '{\"status\": \"failed\"}', 'x')", (r,))
        r = w.start_run("build-fast", project_path=PROJECT, run_id="blob-time")
        w.step(r, "plan", "failed")
        w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                       " (?, 'status_change', 'plan', '{\"status\": \"completed\"}', X'31')", (r,))
    full = full_statuses(db)
    rows, odd = Rp1Db(db).status_rows(None)
    assert odd == {"blob-step"}
    assert {rid: project(rows[rid]).status for rid in full if rid not in odd} == {
        rid: s for rid, s in full.items() if rid not in odd}
    assert full["shape-number"] == full["shape-null"] == full["shape-none"] == "running"
    assert full["shape-nested"] == "failed" and full["blob-time"] == "completed"


def test_events_with_a_missing_number_or_bytes_run_id_are_read_once(tmp_path):
    """A missing run id and a bytes one send their run to the full path; a number is read as its text.
    Every other run's rows come back once, as each run's own."""
    from rcs_tui.rp1.fixtures import SCHEMA_V17

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
    rows, odd = Rp1Db(path).status_rows(None)
    assert odd == {"", "run-3"}
    assert set(rows) == {"7", *(f"run-{i}" for i in range(6) if i != 3)}
    assert all(len(rs) == 2 and {r.run_id for r in rs} == {rid} for rid, rs in rows.items())
    assert {rid: project(rs).status for rid, rs in rows.items()} == dict.fromkeys(rows, "running")


def test_python_sees_the_same_few_rows_however_many_events_a_step_holds(tmp_path, monkeypatch):
    """Steps followed by 5 or by 400 unit, sub-agent, artifact and note rows: the status read hands Python
    the same rows per run (a few per step), by every plan SQLite may take, and the status is the full one."""
    from rcs_tui.rp1 import status_read

    def build(path, trailing):
        with Rp1Writer(path, clock=FakeClock()) as w:
            for i in range(6):
                r = w.start_run("build", project_path=PROJECT, run_id=f"run-{i}")
                for step in ("requirements", "design", "build"):
                    w.step(r, step, "running")
                    for k in range(trailing):
                        kind = k % 4
                        if kind == 0:
                            w.step(r, step, "completed", unit=f"T{k % 7}")
                        elif kind == 1:
                            w.step(r, "task-builder:building", "running", unit=f"T{k % 3}")
                        elif kind == 2:
                            w.artifact(r, step, f"{step}-{k}.md")
                        else:
                            w.btw(r, step, f"note {k}")
                if i % 2:
                    w.wait_for_user(r, "feature-verifier:verifying", "may I?")
                    w.btw(r, "build", "waiting")
        return path

    small = build(create_db(tmp_path / "small.db"), 5)
    big = build(create_db(tmp_path / "big.db"), 400)
    for plan in ((2.0, 0), (-1.0, 10**9), (-1.0, 0)):
        monkeypatch.setattr(status_read, "SCAN_ALL_SHARE", plan[0])
        monkeypatch.setattr(status_read, "SCAN_RATIO", plan[1])
        monkeypatch.setattr(status_read, "OPEN_SCAN_ALL", float("inf") if plan[0] < 0 else 1.0)
        counts = []
        for db in (small, big):
            rows, odd = Rp1Db(db).status_rows(None)
            assert not odd
            assert {rid: project(rs).status for rid, rs in rows.items()} == full_statuses(db)
            counts.append({rid: len(rs) for rid, rs in rows.items()})
        assert counts[0] == counts[1], plan
        assert max(counts[1].values()) <= 8
    assert set(full_statuses(big).values()) == {"running", "waiting"}


def test_cells_that_are_not_text_send_their_run_to_the_full_path_whatever_bytes_they_hold(tmp_path):
    """A run id, step or unit stored as bytes that are not UTF-8 (a hand-edited or foreign database) is read,
    never an error: its run is derived from all its events, under the id shown for it (`\\ufffd` for each bad
    byte), and every other run keeps its narrow rows and status."""
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        for rid in ("plain", "bad-step", "bad-unit"):
            r = w.start_run("build-fast", project_path=PROJECT, run_id=rid)
            w.step(r, "plan", "completed")
            w.step(r, "build", "running")
        w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                       " ('bad-step', 'status_change', X'ff706c616e', '{\"status\": \"failed\"}', 'x')")
        w.conn.execute("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES"
                       " ('bad-unit', 'status_change', NULL, X'54ff', '{\"status\": \"running\"}', 'x')")
        w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                       " (X'72756eff', 'status_change', 'plan', '{\"status\": \"failed\"}', 'x')")
    rows, odd = Rp1Db(db).status_rows(None)
    assert odd == {"bad-step", "bad-unit", "run\ufffd"}
    assert set(rows) == {"plain"} and project(rows["plain"]).status == "running"


def _insert(db, rows):
    """(run id, type, step, unit, data) rows appended in this order."""
    conn = sqlite3.connect(db)
    conn.executemany("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES"
                     " (?, ?, ?, ?, ?, '2026-11-26T00:00:00.000Z')", rows)
    conn.commit()
    conn.close()


def _narrow_and_full(db):
    rows, odd = Rp1Db(db).status_rows(None)
    full = full_statuses(db)
    return {rid: project(rows.get(rid, ())).status for rid in full if rid not in odd}, full, odd


def test_a_run_level_status_behind_run_level_rows_without_one_is_still_found(tmp_path, monkeypatch):
    """Run-level rows (no step) with a unit count as run-level rows: when the newest ones carry no status, the
    read goes back past them, through rows it already holds, to the one that does (here: cancelled by hand)."""
    from rcs_tui.rp1 import status_read

    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        for rid in ("cancelled", "plain"):
            r = w.start_run("build-fast", project_path=PROJECT, run_id=rid)
            w.step(r, "plan", "completed")
            w.step(r, "build", "running")
    _insert(db, [("cancelled", "status_change", None, "T1", '{"status": "cancelled"}'),
                 ("cancelled", "status_change", None, "T1", "{}"),
                 ("cancelled", "status_change", None, None, "{}")])
    for plan in ((2.0, 0), (-1.0, 10**9), (-1.0, 0)):  # one scan of all; the index, then a scan; seeks
        monkeypatch.setattr(status_read, "SCAN_ALL_SHARE", plan[0])
        monkeypatch.setattr(status_read, "SCAN_RATIO", plan[1])
        monkeypatch.setattr(status_read, "OPEN_SCAN_ALL", float("inf") if plan[0] < 0 else 1.0)
        narrow, full, odd = _narrow_and_full(db)
        assert not odd and narrow == full == {"cancelled": "cancelled", "plain": "running"}, plan


def test_empty_run_ids_as_text_or_as_bytes_are_read_like_any_other(tmp_path):
    """A run whose id is empty and whose only rows are units is derived from all its events, like any run
    without a plain step row; a row whose run id is an empty blob sends the run shown as "" there too."""
    db = create_db(tmp_path / "rp1.db")
    conn = sqlite3.connect(db)
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path) VALUES (?, 'build', 'f', '/p')",
                     [("",), ("plain",)])
    conn.commit()
    conn.close()
    _insert(db, [("", "status_change", "build", "T1", '{"status": "failed"}'),
                 ("plain", "status_change", "build", None, '{"status": "running"}'),
                 (b"", "status_change", "build", None, '{"status": "completed"}')])
    narrow, full, odd = _narrow_and_full(db)
    assert odd == {""} and narrow == {"plain": "running"}
    assert full[""] == "failed"  # its unit row


@pytest.mark.parametrize("indexes", [
    ' CREATE INDEX "by ""run"" step" ON events(run_id, step); CREATE INDEX "by ""run""" ON events(run_id);',
    "",
], ids=["names-holding-a-double-quote", "none"])
def test_the_run_id_indexes_named_oddly_or_missing_give_the_same_statuses(tmp_path, indexes):
    """The status read names the `(run_id, step)` and `(run_id)` indexes it walks: a name with `"` in it is
    quoted, and a database without them (an old or hand-made one) is read without naming any; either way the
    statuses are the full projection's."""
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        for i in range(4):
            r = w.start_run("build-fast", project_path=PROJECT, run_id=f"run-{i}")
            w.step(r, "plan", "completed")
            w.step(r, "build", "running" if i % 2 else "failed")
            w.wait_for_user(r, None, "ok?")
    conn = sqlite3.connect(db)
    conn.executescript("DROP INDEX idx_events_run_step; DROP INDEX idx_events_run_id;" + indexes)
    conn.close()
    narrow, full, odd = _narrow_and_full(db)
    assert not odd and narrow == full and set(full.values()) == {"waiting"}


def test_a_number_in_a_run_id_column_without_a_type_names_its_run_by_its_text(tmp_path):
    """An events table whose `run_id` column has no declared type keeps a number as a number: that run is
    derived from all its events under the number's text, never under a made-up name."""
    from rcs_tui.rp1.fixtures import SCHEMA_V17

    path = tmp_path / "rp1.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V17.replace("run_id TEXT NOT NULL REFERENCES runs(id)", "run_id"))
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path) VALUES (?, 'build', 'f', '/p')",
                     [("7",), ("plain",)])
    conn.executemany("INSERT INTO events (run_id, type, step, data, created_at) VALUES"
                     " (?, 'status_change', 'plan', '{\"status\": \"failed\"}', 'x')", [(7,), ("plain",)])
    conn.commit()
    conn.close()
    rows, odd = Rp1Db(path).status_rows(None)
    assert odd == {"7"} and set(rows) == {"plain"}
