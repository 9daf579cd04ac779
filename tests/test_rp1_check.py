"""`rcs-tui rp1 check`: rp1's answer to one emit, worked out from the run's rows without writing anything."""

from __future__ import annotations

import hashlib
import json

import pytest

from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db

BUILD_STATES = "[requirements, design, tasks, build, verify, archive]"


@pytest.fixture
def db(tmp_path):
    path = create_db(tmp_path / "rp1.db")
    with Rp1Writer(path, clock=FakeClock()) as w:
        r = w.start_run("build", project_path=str(tmp_path), run_id="b1")
        for step in ["requirements", "design", "tasks"]:
            w.step(r, step)
        r = w.start_run("blueprint", project_path=str(tmp_path), run_id="bp")
        w.step(r, "detect")
        r = w.start_run("build", project_path=str(tmp_path), run_id="sub")
        w.step(r, "requirements")
        w.step(r, "task-builder:building")
        r = w.start_run("unknown", project_path=str(tmp_path), run_id="unk")
        w.step(r, "whatever")
        r = w.start_run("build", project_path=str(tmp_path), run_id="lit")
        for step, status in [("requirements", "running"), ("design", "waiting")]:
            w.conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, 'status_change', ?,"
                           " ?, '2026-11-25T21:00:05.000Z')", (r, step, json.dumps({"status": status})))
    return path


@pytest.fixture
def check(run_cli, db, tmp_path):
    plugins = tmp_path / "no-plugins"
    plugins.mkdir()

    def _check(*args, error=False):
        """The answer; the exit status must say the verdict (0 accepted, 1 rejected, answer on stdout either
        way), or, with `error`, the check could not be made (1, the error on stderr, nothing on stdout)."""
        r = run_cli("rp1", "check", *args, "--db", str(db), "--json", cwd=tmp_path,
                    env={"RP1_PLUGIN_ROOTS": str(plugins)})
        if error:
            assert r.code == 1 and r.stdout == "", r.stdout
            return r.error
        assert r.code == (0 if r.json["verdict"] == "accepted" else 1), (r.code, r.stderr)
        assert r.stderr == ""
        return r.json
    return _check


def test_unknown_step_with_the_current_state(check):
    assert check("build", "biulding", "--run", "b1") == {
        "workflow": "build", "step": "biulding", "status": "running", "unit": None, "run": "b1", "tracked": True,
        "verdict": "rejected",
        "errors": [f'step "biulding" is not a valid state in the "build" state machine. Valid states: {BUILD_STATES}.'
                   ' Current state: "tasks". Valid transitions from "tasks": [build].'],
        "current_state": "tasks",
        "valid_states": ["requirements", "design", "tasks", "build", "verify", "archive"],
        "valid_transitions": ["build"], "would_skip": [], "would_complete": [], "notes": []}


def test_unknown_step_on_a_first_emit(check):
    out = check("build", "biulding")
    assert out["errors"] == [f'step "biulding" is not a valid state in the "build" state machine.'
                             f' Valid states: {BUILD_STATES}.']
    assert (out["run"], out["current_state"], out["valid_transitions"]) == (None, None, None)


def test_a_skipped_edge_is_an_invalid_transition(check):
    out = check("build", "verify", "--run", "b1")
    assert out["verdict"] == "rejected"
    assert out["errors"] == ["Invalid transition from 'tasks' to 'verify'. Valid next states: build"]


def test_first_step_must_be_initial(check):
    out = check("build", "design")
    assert out["errors"] == ["Invalid first step 'design'. The first step must be an initial state: requirements"]
    assert check("build", "requirements")["verdict"] == "accepted"


def test_accepted_emit_names_the_predecessors_it_completes(check):
    out = check("build", "build", "--run", "b1")
    assert (out["verdict"], out["errors"], out["would_skip"], out["would_complete"]) == (
        "accepted", [], [], ["tasks"])
    # re-entering the current step is allowed and completes nothing
    assert check("build", "tasks", "--run", "b1")["would_complete"] == []
    # a failure completes nothing
    assert check("build", "build", "--run", "b1", "--status", "failed")["would_complete"] == []


def test_branch_skips_the_unvisited_state(check):
    out = check("blueprint", "prd", "--run", "bp")
    assert (out["verdict"], out["would_skip"], out["would_complete"]) == ("accepted", ["charter"], ["detect"])


def test_transitive_predecessors_running_or_waiting_are_completed(check):
    out = check("build", "tasks", "--run", "lit", "--status", "completed")
    assert (out["verdict"], out["would_complete"]) == ("accepted", ["requirements", "design"])


def test_units_and_sub_agents(check):
    out = check("build", "build", "--run", "b1", "--unit", "T1")
    assert (out["verdict"], out["unit"], out["would_complete"]) == ("accepted", "T1", [])
    assert check("build", "building", "--run", "b1", "--unit", "T1")["verdict"] == "rejected"
    out = check("build", "task-builder:anything", "--run", "b1")
    assert out["verdict"] == "accepted"
    assert out["notes"] == ["namespaced sub-agent step: not validated against the parent machine"]


def test_current_state_can_be_a_sub_agent_step(check):
    out = check("build", "biulding", "--run", "sub")
    assert out["current_state"] == "task-builder:building" and out["valid_transitions"] == []
    assert out["errors"][0].endswith(
        'Current state: "task-builder:building". Valid transitions from "task-builder:building": [].')
    # the workflow position for a transition is still the last plain step
    assert check("build", "design", "--run", "sub")["verdict"] == "accepted"


def test_untracked_workflow_is_not_validated(check):
    out = check("homegrown", "anything")
    assert (out["verdict"], out["tracked"], out["valid_states"]) == ("accepted", False, [])
    assert out["notes"] == ['no state machine for "homegrown": rp1 records the step without validating it']


def test_workflow_mismatch_is_noted(check):
    assert check("build-fast", "plan", "--run", "b1")["notes"] == [
        'run b1 belongs to workflow "build", not "build-fast"']


def test_unknown_run_is_an_error_and_the_database_is_untouched(check, db):
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert check("build", "build", "--run", "nope", error=True) == f"rp1: no run 'nope' in {db}"
    check("build", "build", "--run", "b1")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_human_output(run_cli, db, tmp_path):
    """The answer in words; the exit status says the verdict (1 when rp1 would reject), so a script can gate
    on it without parsing the text."""
    r = run_cli("rp1", "check", "build", "verify", "--run", "b1", "--db", str(db), cwd=tmp_path,
                env={"RP1_PLUGIN_ROOTS": str(tmp_path)})
    assert r.code == 1 and r.stdout.splitlines() == [
        "emit build verify (running) into run b1: REJECTED",
        "  Error: Invalid transition from 'tasks' to 'verify'. Valid next states: build",
        "current state: tasks",
        "valid transitions from tasks: build"]
    r = run_cli("rp1", "check", "build", "build", "--run", "b1", "--db", str(db), cwd=tmp_path,
                env={"RP1_PLUGIN_ROOTS": str(tmp_path)})
    assert r.code == 0 and r.stdout.splitlines()[0] == "emit build build (running) into run b1: ACCEPTED"
    assert r.stdout.splitlines()[-2:] == ["would record skipped: -", "would auto-complete: tasks"]


def test_run_of_unknown_workflow_is_not_validated(check):
    out = check("build", "biulding", "--run", "unk")
    assert (out["verdict"], out["tracked"], out["errors"]) == ("accepted", False, [])
    assert out["notes"] == ['the workflow of this run is "unknown": rp1 does not validate its steps']
