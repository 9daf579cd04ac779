"""Run projection and timelines over the real rp1 machines, from events written like rp1 does."""

from __future__ import annotations

import json

import pytest

from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.projection import project
from rcs_tui.rp1.source import Rp1Source

PROJECT = "/work/proj"


@pytest.fixture
def writer(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        yield w


def timeline(writer, run_id):
    return Rp1Source(writer.path, root=PROJECT, all_projects=True, plugin_roots=[]).timeline(run_id)


def states(t):
    return {s.name: s.status for s in t.steps}


def test_build_with_verify_retry(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="b1")
    for step in ["requirements", "design", "tasks", "build", "verify", "build", "verify"]:
        writer.step(r, step)
    t = timeline(writer, "b1")
    assert states(t) == {"requirements": "completed", "design": "completed", "tasks": "completed",
                         "build": "completed", "verify": "running", "archive": "not_started"}
    assert t.status == "running" and t.current_step == "verify"
    assert [(s.name, s.attempts, s.retried) for s in t.steps if s.attempts] == [
        ("requirements", 1, False), ("design", 1, False), ("tasks", 1, False),
        ("build", 2, True), ("verify", 2, True)]
    assert t.violations == []
    writer.step(r, "archive")
    writer.step(r, "archive", "completed")
    t = timeline(writer, "b1")
    assert t.status == "completed" and set(states(t).values()) == {"completed"}


def test_blueprint_skipping_charter(writer):
    r = writer.start_run("blueprint", project_path=PROJECT, run_id="bp")
    writer.step(r, "detect")
    writer.step(r, "prd")
    t = timeline(writer, "bp")
    assert states(t) == {"detect": "completed", "charter": "skipped", "prd": "running"}
    assert t.violations == []
    writer.step(r, "prd", "completed")
    assert timeline(writer, "bp").status == "completed"


def test_task_builder_units_nest_under_build(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="u1")
    for step in ["requirements", "design", "tasks", "build"]:
        writer.step(r, step)
    writer.step(r, "task-builder:building", unit="T1")
    writer.step(r, "task-builder:building", unit="T2")
    writer.step(r, "task-builder:completed", "completed", unit="T1")
    writer.step(r, "task-builder:failed", "failed", unit="T2")
    writer.step(r, "build", "running", unit="T3")
    t = timeline(writer, "u1")
    build = t.step("build")
    assert [(a.key, a.state, a.status) for a in build.agents] == [
        ("task-builder::T1", "completed", "completed"), ("task-builder::T2", "failed", "failed")]
    assert [(u.key, u.state, u.status) for u in build.units] == [("T3", "build", "running")]
    # unit and sub-agent rows do not drive the workflow projection
    assert states(t)["build"] == "running" and t.status == "running"


def test_cancelled_run_completes_its_running_steps(writer):
    r = writer.start_run("build-fast", project_path=PROJECT, run_id="c1")
    writer.step(r, "plan")
    writer.step(r, "build")
    end = writer.end_run(r, "cancelled")
    t = timeline(writer, "c1")
    assert t.status == "cancelled"
    assert states(t) == {"plan": "completed", "build": "completed", "review": "not_started"}
    ended = next(e for e in Rp1Db(writer.path).events(["c1"])["c1"] if e.id == end).created_at
    assert t.step("build").ended_at == ended and t.step("build").duration_s == 1.0


def test_inactive_run_and_reactivation(writer):
    r = writer.start_run("pr-review", project_path=PROJECT, run_id="i1")
    writer.step(r, "split")
    writer.run_status(r, "inactive")
    t = timeline(writer, "i1")
    assert t.status == "inactive" and states(t)["split"] == "running"
    writer.step(r, "review")
    assert timeline(writer, "i1").status == "running"


def test_waiting_run_until_answered(writer):
    r = writer.start_run("deep-research", project_path=PROJECT, run_id="w1")
    writer.step(r, "clarify")
    writer.wait_for_user(r, "clarify", "Which region?")
    t = timeline(writer, "w1")
    assert t.status == "waiting" and states(t)["clarify"] == "waiting"
    assert [(p.step, p.message, p.pending) for p in t.step("clarify").prompts] == [("clarify", "Which region?", True)]
    writer.step(r, "plan")
    t = timeline(writer, "w1")
    assert t.status == "running" and states(t)["clarify"] == "completed"
    assert t.step("clarify").prompts[0].pending is False


def test_failed_beats_running(writer):
    r = writer.start_run("build-fast", project_path=PROJECT, run_id="f1")
    writer.step(r, "plan")
    writer.step(r, "build")
    writer.step(r, "build", "failed")
    assert timeline(writer, "f1").status == "failed"


def test_invalid_step_is_marked_with_seed_message(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="v1")
    for step in ["requirements", "design", "tasks"]:
        writer.step(r, step)
    writer.step(r, "biulding")
    t = timeline(writer, "v1")
    assert t.violations[0]["message"] == (
        'step "biulding" is not a valid state in the "build" state machine. Valid states: '
        '[requirements, design, tasks, build, verify, archive]. Current state: "tasks". '
        'Valid transitions from "tasks": [build].')
    assert t.step("biulding").in_machine is False


def test_untracked_workflow_keeps_event_order(writer):
    r = writer.start_run("homegrown", project_path=PROJECT, run_id="x1")
    writer.step(r, "gather")
    writer.step(r, "gather", "completed")
    writer.step(r, "write")
    t = timeline(writer, "x1")
    assert t.tracked is False and t.violations == []
    assert states(t) == {"gather": "completed", "write": "running"}


def test_artifacts_attach_to_their_step(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="a1")
    writer.step(r, "requirements")
    writer.artifact(r, "requirements", ".rp1/work/features/f/requirements.md")
    t = timeline(writer, "a1")
    assert [a["path"] for a in t.step("requirements").artifacts] == [".rp1/work/features/f/requirements.md"]


def test_markup_in_strings_stays_plain_data(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="m1")
    writer.step(r, "requirements")
    writer.wait_for_user(r, "requirements", "[bold red]pick[/] \x1b[31m")
    assert timeline(writer, "m1").prompts[0].message == "[bold red]pick[/] \x1b[31m"


# -- rows written literally, as rp1 stores them -----------------------------------------------

def insert(writer, run_id, rows):
    """Insert (step, unit, status, created_at) rows in the given order; ids follow that order."""
    for step, unit, status, at in rows:
        writer.conn.execute(
            "INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, 'status_change', ?, ?, ?, ?)",
            (run_id, step, unit, json.dumps({"status": status}), at))


def both_paths(writer, run_id, *, narrow=True):
    """The status by the full projection and by the narrow SQL path; they must agree. A run without
    plain step rows is left to the full projection (`narrow=False`)."""
    full = project(Rp1Db(writer.path).events([run_id])[run_id])
    rows, odd = Rp1Db(writer.path).status_rows(None)
    if narrow:
        assert run_id not in odd
        assert project(rows[run_id]).status == full.status
    else:
        assert run_id in odd and run_id not in rows
    return full


def test_same_millisecond_rows_are_read_in_id_order(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="ms")
    insert(writer, r, [("requirements", None, "running", "2026-11-25T21:00:05.000Z"),
                       ("requirements", None, "completed", "2026-11-25T21:00:04.999Z"),
                       ("design", None, "running", "2026-11-25T21:00:05.000Z")])
    p = both_paths(writer, r)
    assert p.steps == {"requirements": "completed", "design": "running"}
    assert p.status == "running" and p.current_step == "design"
    assert p.last_activity == "2026-11-25T21:00:05.000Z"
    assert states(timeline(writer, r))["requirements"] == "completed"


def test_failed_row_stamped_earlier_but_written_later_wins(writer):
    r = writer.start_run("build-fast", project_path=PROJECT, run_id="ms2")
    insert(writer, r, [("plan", None, "running", "2026-11-25T21:00:05.000Z"),
                       ("plan", None, "failed", "2026-11-25T21:00:04.000Z")])
    assert both_paths(writer, r).status == "failed"


@pytest.mark.parametrize(("rows", "status", "current"), [
    ([("task-builder:building", None, "running", "2026-11-25T21:00:01.000Z")], "running", "task-builder"),
    ([("task-builder:building", "T1", "running", "2026-11-25T21:00:01.000Z"),
      ("task-builder:failed", "T1", "failed", "2026-11-25T21:00:02.000Z")], "failed", "task-builder::T1"),
    ([("building", "T1", "running", "2026-11-25T21:00:01.000Z"),
      ("building", "T1", "failed", "2026-11-25T21:00:02.000Z")], "failed", "building::T1"),
    # units progress independently: T1's failure stands although T2 completed later
    ([("building", "T1", "failed", "2026-11-25T21:00:01.000Z"),
      ("building", "T2", "completed", "2026-11-25T21:00:02.000Z")], "failed", "building::T1"),
    ([("task-builder:building", "T1", "running", "2026-11-25T21:00:01.000Z"),
      ("task-builder:completed", "T1", "completed", "2026-11-25T21:00:02.000Z")], "completed", "task-builder::T1"),
])
def test_run_without_plain_rows_uses_the_diagnostic_projection(writer, rows, status, current):
    r = writer.start_run("build", project_path=PROJECT, run_id="diag")
    insert(writer, r, rows)
    p = both_paths(writer, r, narrow=False)
    assert (p.status, p.current_step, p.steps) == (status, current, {})


def test_sub_agent_rows_do_not_drive_a_run_with_plain_rows(writer):
    r = writer.start_run("build", project_path=PROJECT, run_id="mixed")
    insert(writer, r, [("requirements", None, "completed", "2026-11-25T21:00:01.000Z"),
                       ("task-builder:failed", "T1", "failed", "2026-11-25T21:00:02.000Z")])
    assert both_paths(writer, r).status == "completed"


@pytest.mark.parametrize("end", ["cancelled", "abandoned"])
def test_manual_end_completes_running_and_waiting_steps(writer, end):
    r = writer.start_run("blueprint", project_path=PROJECT, run_id="end")
    insert(writer, r, [("detect", None, "completed", "2026-11-25T21:00:01.000Z"),
                       ("charter", None, "waiting", "2026-11-25T21:00:02.000Z"),
                       ("prd", None, "running", "2026-11-25T21:00:03.000Z"),
                       (None, None, end, "2026-11-25T21:00:04.000Z")])
    p = both_paths(writer, r)
    assert p.status == end
    assert p.steps == {"detect": "completed", "charter": "completed", "prd": "completed"}


def test_a_remembered_payload_is_still_a_dict_of_its_own_for_each_row():
    """Short flat payloads are parsed once and remembered by their text; no row's dict is another's, so
    nothing one reader changes shows in another row."""
    from rcs_tui.rp1.projection import parse_data

    first, second = parse_data('{"status": "running"}'), parse_data('{"status": "running"}')
    assert first == second == {"status": "running"} and first is not second
    first["status"] = "failed"
    assert parse_data('{"status": "running"}') == {"status": "running"}
    nested = '{"status": "waiting", "options": ["a", "b"]}'
    one, two = parse_data(nested), parse_data(nested)
    assert one == two and one["options"] is not two["options"]  # a payload with a list is parsed every time
    assert parse_data('{"status": NaN}') == {"_raw": '{"status": NaN}'}
    assert parse_data('["x"]') == {"_value": ["x"]}
    assert parse_data(b'{"status": "done"}') == {"status": "done"}
