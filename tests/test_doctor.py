"""`rcs-tui doctor`: findings, repairs through the core, proof that repairs held, and `locate`."""

from __future__ import annotations

import pytest

from rcs_tui.project.doctor import diagnose, fix
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.state.journal import read_journal
from tests.conftest import tree_digest
from tests.statefix import canonical, dead_pid, mode, pointer, read, state_dir, write


def kinds(findings):
    return {(f.kind, f.subject) for f in findings}


def test_resurrecting_root_survivor_is_repaired_and_holds(run_cli, tmp_path):
    mode(tmp_path, "team", "s1", active=False, current_phase="cleared")  # session tombstone
    mode(tmp_path, "team", None, current_phase="team-exec")             # root copy still active
    canonical(tmp_path, ["team"])
    r = run_cli("doctor", "--json", "--root", str(tmp_path))
    findings = r.json["findings"]
    assert [(f["kind"], f["subject"]) for f in findings] == [("root-survivor", "team")]
    assert findings[0]["plan"]["changes"] == [
        {"path": ".rcs/state/team-state.json", "action": "delete", "why": "mode file deleted"},
        {"path": ".rcs/state/skill-active-state.json", "action": "write", "why": "canonical entry removed: team"}]
    r = run_cli("doctor", "--fix", "--json", "--root", str(tmp_path))
    assert [(a["id"], a["held"]) for a in r.json["fix"]["applied"]] == [("root-survivor:root:team", True)]
    assert not (state_dir(tmp_path) / "team-state.json").exists()
    assert read(state_dir(tmp_path, "s1") / "team-state.json")["current_phase"] == "cleared"
    assert run_cli("doctor", "--json", "--root", str(tmp_path)).json["findings"] == []


def test_fix_only_an_unknown_finding_is_an_error_not_a_silent_success(run_cli, tmp_path):
    mode(tmp_path, "team", "s1", active=False, current_phase="cleared")
    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, ["team"])
    before = tree_digest(tmp_path)
    r = run_cli("doctor", "--fix", "--only", "root-survivor:root:tema", "--root", str(tmp_path))
    assert r.code == 1 and "root-survivor:root:tema" in r.error
    assert tree_digest(tmp_path) == before


def test_report_without_fix_changes_nothing(run_cli, tmp_path):
    canonical(tmp_path, ["forge", "team"], "s1")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    before = tree_digest(tmp_path)
    out = run_cli("doctor", "--json", "--root", str(tmp_path)).json
    assert ("stale-member", "forge") in {(f["kind"], f["subject"]) for f in out["findings"]}
    assert out["fix"] is None and tree_digest(tmp_path) == before


def test_stale_member_and_orphan_repairs_are_journaled(tmp_path):
    canonical(tmp_path, ["forge", "team"], "s1")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", active=False, current_phase="complete", lifecycle_outcome="finished")
    mode(tmp_path, "ultrawork", "s1")
    found = diagnose(tmp_path, "s1")
    assert kinds(found) == {("stale-member", "forge"), ("orphan", "ultrawork")}
    result = fix(tmp_path, found, session_id="s1")
    assert all(a["held"] for a in result["applied"]) and result["failed"] == []
    assert read(state_dir(tmp_path, "s1") / "forge-state.json")["lifecycle_outcome"] == "finished"  # record kept
    assert [e["skill"] for e in read(state_dir(tmp_path, "s1") / "skill-active-state.json")["active_skills"]] \
        == ["team"]
    assert not (state_dir(tmp_path, "s1") / "ultrawork-state.json").exists()
    assert len(read_journal(tmp_path)) == 2


def test_stale_dead_pointer_and_dead_owner(tmp_path):
    pointer(tmp_path, "s9", pid=dead_pid())
    mode(tmp_path, "forge", current_phase="executing", owner_pid=dead_pid())
    found = {f.kind: f for f in diagnose(tmp_path)}
    assert "s9" in found["stale-dead-pointer"].message
    assert "owner process is gone" in found["dead-owner"].message
    fix(tmp_path, list(found.values()))
    assert not (state_dir(tmp_path) / "session.json").exists()
    assert not (state_dir(tmp_path) / "forge-state.json").exists()


def test_live_owner_is_not_flagged(tmp_path):
    import os

    mode(tmp_path, "forge", current_phase="executing", owner_pid=os.getpid())
    assert "dead-owner" not in {f.kind for f in diagnose(tmp_path)}


def test_dead_team_worker_is_reported_without_a_repair(tmp_path):
    team = state_dir(tmp_path) / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "worker_count": 1})
    write(team / "workers" / "worker-1" / "status.json", {"state": "working", "current_task_id": "3"})
    write(team / "workers" / "worker-1" / "heartbeat.json", {"pid": dead_pid(), "alive": True})
    [f] = [f for f in diagnose(tmp_path) if f.kind == "dead-worker"]
    assert f.plan is None and "holding task 3" in f.message


def test_console_team_view_agrees_with_the_doctor_on_a_dead_worker(tmp_path):
    # A heartbeat that still says alive:true for a pid that is gone must read "dead" in the team view,
    # as the doctor reports it, not "alive".
    import os
    import time

    from rcs_tui.state.team import read_teams
    from rcs_tui.ui.console.team import heartbeat

    team = state_dir(tmp_path) / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "worker_count": 2})
    write(team / "workers" / "worker-1" / "heartbeat.json", {"pid": dead_pid(), "alive": True})
    write(team / "workers" / "worker-2" / "heartbeat.json", {"pid": os.getpid(), "alive": True})
    workers = {w.name: w for w in read_teams(team.parent)["login-flow"].workers}
    now = time.time()
    assert heartbeat(workers["worker-1"], now).plain == "✖ dead"
    assert heartbeat(workers["worker-2"], now).plain == "♥ alive"
    assert [f.subject for f in diagnose(tmp_path) if f.kind == "dead-worker"] == ["worker-1"]


def test_idle_rp1_run_is_reported_and_db_untouched(tmp_path):
    db = tmp_path / "rp1.db"
    create_db(db)
    with Rp1Writer(db, clock=FakeClock("2026-11-25T08:00:00.000Z")) as w:
        run = w.start_run("build-fast", project_path=tmp_path)
        w.step(run, "plan", "running")
    (tmp_path / ".rcs").mkdir()
    before = tree_digest(tmp_path)
    from datetime import datetime

    now = datetime.fromisoformat("2026-11-25T12:00:00+00:00").timestamp()
    [f] = [f for f in diagnose(tmp_path, rp1_db=str(db), now=now) if f.kind == "idle-run"]
    assert "idle for 239 min" in f.message and f.plan is None  # FakeClock steps 1 s per event
    assert tree_digest(tmp_path) == before


def test_file_errors_are_findings(tmp_path):
    write(state_dir(tmp_path) / "forge-state.json", "{oops")
    [f] = diagnose(tmp_path)
    assert f.kind == "file-error" and f.subject == ".rcs/state/forge-state.json"


def test_softener_in_terminal_handoff_is_reported(tmp_path):
    mode(tmp_path, "forge", active=False, current_phase="complete", run_outcome="finish",
         completion_note="All green. If you want, I can also refactor the API.")
    [f] = diagnose(tmp_path)
    assert f.kind == "softener" and "If you want, I can" in f.message


@pytest.mark.parametrize("as_json", [True, False])
def test_locate_prints_paths(run_cli, tmp_path, as_json):
    (tmp_path / ".rcs").mkdir()
    r = run_cli("locate", "--root", str(tmp_path), *(["--json"] if as_json else []))
    if as_json:
        assert r.json["journal"] == str(tmp_path / ".rcs/logs/rcs-tui-journal.jsonl")
        assert r.json["session"] == {"id": None, "source": "root", "dir": str(tmp_path / ".rcs/state"),
                                     "stale_dead_pointer": False}
    else:
        assert "journal" in r.stdout and str(tmp_path) in r.stdout


def test_interrupted_operator_action_is_found_and_rolled_back(tmp_path, monkeypatch):
    from rcs_tui.state import txn
    from rcs_tui.state.ops import plan_clear

    canonical(tmp_path, ["forge", "team"], "s1")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    before = tree_digest(tmp_path / ".rcs" / "state")

    real_swap = txn._swap
    calls = []

    def killed(step):
        calls.append(step)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies after replacing the first file
        return real_swap(step)

    monkeypatch.setattr(txn, "_swap", killed)
    with pytest.raises(KeyboardInterrupt):
        plan_clear(tmp_path, "team", "s1").run(tmp_path)
    monkeypatch.undo()
    [f] = [f for f in diagnose(tmp_path, "s1") if f.kind == "interrupted-action"]
    assert "'state clear team'" in f.message and "1 of 2 files changed" in f.message
    result = fix(tmp_path, [f], session_id="s1")
    assert result["applied"][0]["held"] is True
    assert tree_digest(tmp_path / ".rcs" / "state") == before


def test_a_worker_silent_past_the_threshold_is_not_alive(tmp_path):
    import os
    from datetime import UTC, datetime

    from rcs_tui.state.team import HEARTBEAT_STALE_SECONDS, read_teams
    from rcs_tui.ui.console.team import heartbeat

    now = datetime(2026, 11, 25, 22, 0, tzinfo=UTC).timestamp()
    team = state_dir(tmp_path) / "team" / "t"
    write(team / "config.json", {"name": "t"})
    write(team / "workers" / "w1" / "heartbeat.json", {"pid": os.getpid(), "alive": True,
                                                        "last_turn_at": "2026-11-25T21:50:00Z"})
    write(team / "workers" / "w2" / "heartbeat.json", {"pid": os.getpid(), "alive": True,
                                                        "last_turn_at": "2026-11-25T21:59:30Z"})
    workers = {w.name: w for w in read_teams(team.parent)["t"].workers}
    assert HEARTBEAT_STALE_SECONDS < 600
    assert heartbeat(workers["w1"], now).plain == "◌ silent 10m"
    assert heartbeat(workers["w2"], now).plain == "♥ alive"


def test_doctor_exit_status_says_whether_findings_remain(run_cli, tmp_path):
    mode(tmp_path, "team", "s1", active=False, current_phase="cleared")
    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, ["team"])
    r = run_cli("doctor", "--json", "--root", str(tmp_path))
    assert r.code == 3 and r.json["findings"]
    r = run_cli("doctor", "--fix", "--json", "--root", str(tmp_path))
    assert r.code == 0 and r.json["remaining"] == []
    assert run_cli("doctor", "--root", str(tmp_path)).code == 0
    assert "3  findings remain" in run_cli("doctor", "--help").stdout


def test_root_survivor_is_offered_a_repair_when_session_json_is_stale_dead(run_cli, tmp_path):
    import json as _json

    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, ["team"], None)
    mode(tmp_path, "team", "s1", active=False, current_phase="cancelled")
    mode(tmp_path, "forge", "s2", current_phase="executing")
    (state_dir(tmp_path) / "session.json").write_text(_json.dumps({"session_id": "s1", "pid": dead_pid()}))
    findings = {f.kind: f for f in diagnose(tmp_path)}
    assert "stale-dead-pointer" in findings
    assert findings["root-survivor"].plan is not None
    r = run_cli("doctor", "--fix", "--json", "--root", str(tmp_path))
    assert ("root-survivor:root:team", True) in [(a["id"], a["held"]) for a in r.json["fix"]["applied"]]
    assert not (state_dir(tmp_path) / "team-state.json").exists()


def test_fix_dry_run_lists_each_repair_and_its_files_and_writes_nothing(run_cli, tmp_path):
    mode(tmp_path, "team", "s1", active=False, current_phase="cleared")
    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, ["team"])
    before = tree_digest(tmp_path)
    r = run_cli("doctor", "--fix", "--dry-run", "--json", "--root", str(tmp_path))
    assert r.code == 3 and r.json["dry_run"] is True and r.json["fix"] is None
    assert r.json["would_repair"] == ["root-survivor:root:team"]
    fingerprint = r.json["findings"][0]["plan"]["plan_fingerprint"]
    text = run_cli("doctor", "--fix", "--dry-run", "--root", str(tmp_path))
    assert text.stdout.splitlines()[3:] == [
        "  would apply: state clear team",
        "    .rcs/state/team-state.json: delete (mode file deleted)",
        "    .rcs/state/skill-active-state.json: write (canonical entry removed: team)",
        f"    plan {fingerprint}",
        "dry run: 1 repair would be applied; nothing was written"]
    assert tree_digest(tmp_path) == before
    # the printed fingerprint is what --expect-plan confirms
    done = run_cli("doctor", "--fix", "--expect-plan", fingerprint, "--json", "--root", str(tmp_path))
    assert [a["held"] for a in done.json["fix"]["applied"]] == [True]
    usage = run_cli("doctor", "--dry-run", "--root", str(tmp_path))
    assert usage.code == 2 and "--dry-run goes with --fix" in usage.stderr
