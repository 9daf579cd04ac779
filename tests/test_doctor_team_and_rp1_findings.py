"""What the doctor says about teams and rp1 runs, field by field, and in which order it lists findings."""

from __future__ import annotations

import os
from datetime import datetime

from rcs_tui.project.doctor import diagnose
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from tests.statefix import canonical, dead_pid, mode, state_dir, write


def fields(f):
    return (f.id, f.kind, f.severity, f.scope, f.subject, f.message, f.plan)


def test_a_team_s_unreadable_file_and_dead_worker_are_both_listed_exactly(tmp_path):
    for name in ("beta", "alpha"):
        team = state_dir(tmp_path) / "team" / name
        write(team / "config.json", {"name": name, "worker_count": 1})
        write(team / "workers" / "worker-1" / "heartbeat.json", {"pid": dead_pid(), "alive": True})
    (state_dir(tmp_path) / "team" / "beta" / "config.json").write_text('{"name": "be')
    rel = ".rcs/state/team/beta/config.json"
    gone = f"has a dead heartbeat (pid {dead_pid()} is not running)"
    assert [fields(f) for f in diagnose(tmp_path)] == [
        ("dead-worker:alpha:worker-1", "dead-worker", "warn", "team alpha", "worker-1",
         f"team alpha worker worker-1 {gone}", None),
        ("dead-worker:beta:worker-1", "dead-worker", "warn", "team beta", "worker-1",  # not hidden by the error
         f"team beta worker worker-1 {gone}", None),
        (f"file-error:{rel}", "file-error", "warn", "team beta", rel,
         f"{rel}: invalid JSON at line 1 column 10: Unterminated string starting at (truncated mid-write?)", None)]


def test_a_team_file_linked_outside_the_state_tree_is_refused_not_read(tmp_path):
    team = state_dir(tmp_path) / "team" / "alpha"
    write(team / "config.json", {"name": "alpha", "worker_count": 1})
    outside = tmp_path / "elsewhere.json"
    write(outside, {"state": "working"})
    (team / "workers" / "worker-1").mkdir(parents=True)
    os.symlink(outside, team / "workers" / "worker-1" / "status.json")
    rel = ".rcs/state/team/alpha/workers/worker-1/status.json"
    [f] = [f for f in diagnose(tmp_path) if f.kind == "file-error"]
    assert (f.id, f.scope, f.subject, f.severity) == (f"file-error:{rel}", "team alpha", rel, "warn")
    assert f.message.startswith(f"{rel}: ")


def _runs(tmp_path):
    db = tmp_path / "rp1.db"
    create_db(db)
    with Rp1Writer(db, clock=FakeClock("2026-11-25T08:00:00.000Z")) as w:
        idle = w.start_run("build-fast", project_path=tmp_path, run_id="aaaaaaaa-1111-2222-3333-444444444444")
        w.step(idle, "plan", "running")
        asking = w.start_run("pr-review", project_path=tmp_path, run_id="bbbbbbbb-1111-2222-3333-444444444444")
        w.step(asking, "review", "waiting")
    return db


def test_idle_running_and_waiting_runs_are_listed_exactly_and_a_run_at_the_bound_is_not(tmp_path):
    db = _runs(tmp_path)
    (tmp_path / ".rcs").mkdir()
    now = datetime.fromisoformat("2026-11-25T12:00:00+00:00").timestamp()
    found = [fields(f) for f in diagnose(tmp_path, rp1_db=str(db), now=now) if f.kind == "idle-run"]
    assert found == [
        ("idle-run:aaaaaaaa-1111-2222-3333-444444444444", "idle-run", "info", "rp1", "build-fast aaaaaaaa",
         "rp1 run aaaaaaaa-1111-2222-3333-444444444444 (build-fast) is running but idle for 239 min; "
         "rp1 marks it inactive after 24 h", None),
        ("idle-run:bbbbbbbb-1111-2222-3333-444444444444", "idle-run", "info", "rp1", "pr-review bbbbbbbb",
         "rp1 run bbbbbbbb-1111-2222-3333-444444444444 (pr-review) is waiting but idle for 239 min; "
         "rp1 marks it inactive after 24 h", None)]
    # the idle bound itself: reported only past it; the minutes are whole ones, rounded down
    from rcs_tui.rp1.source import Rp1Source

    [run] = [r for r in Rp1Source(str(db), root=tmp_path).feed(status="running").runs]
    last = datetime.fromisoformat(run.projection.last_activity.replace("Z", "+00:00")).timestamp()
    assert [f.id for f in diagnose(tmp_path, rp1_db=str(db), now=last + 90, idle_seconds=90)
            if f.id.startswith("idle-run:aaaa")] == []
    [f] = [f for f in diagnose(tmp_path, rp1_db=str(db), now=last + 119.5, idle_seconds=90)
           if f.id.startswith("idle-run:aaaa")]
    assert "idle for 1 min" in f.message


def test_the_doctor_names_at_most_200_idle_runs_of_each_status(tmp_path):
    db = tmp_path / "rp1.db"
    create_db(db)
    with Rp1Writer(db, clock=FakeClock("2026-11-25T08:00:00.000Z")) as w:
        for i in range(201):
            w.step(w.start_run("build-fast", project_path=tmp_path, run_id=f"run-{i:03d}"), "plan", "running")
    (tmp_path / ".rcs").mkdir()
    now = datetime.fromisoformat("2026-11-26T08:00:00+00:00").timestamp()
    assert len([f for f in diagnose(tmp_path, rp1_db=str(db), now=now) if f.kind == "idle-run"]) == 200


def test_errors_come_before_warnings_before_notes_whatever_their_kinds(tmp_path):
    mode(tmp_path, "team", "s1", active=False, current_phase="cleared")  # a session's tombstone
    mode(tmp_path, "team", None, current_phase="team-exec")             # the root copy still active: error
    canonical(tmp_path, ["team"])
    write(state_dir(tmp_path, "s2") / "forge-state.json", "{oops")       # a file error: warning
    db = _runs(tmp_path)
    now = datetime.fromisoformat("2026-11-25T12:00:00+00:00").timestamp()
    found = diagnose(tmp_path, rp1_db=str(db), now=now)
    assert [f.severity for f in found] == sorted((f.severity for f in found),
                                                 key=["error", "warn", "info"].index)
    assert [f.kind for f in found][:2] == ["root-survivor", "file-error"]
    assert found[-1].kind == "idle-run"
