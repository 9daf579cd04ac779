"""What commands tell an operator reads right and can be acted on: counted nouns agree with their count,
a suggested command is one this tool has, and a finding without an automatic repair says what to do."""

from __future__ import annotations

from tests.statefix import canonical, mode


def test_fleet_once_with_one_idle_project_says_one_project(run_cli, tmp_path):
    (tmp_path / "api" / ".rcs").mkdir(parents=True)
    res = run_cli("fleet", "--once", "--project", str(tmp_path / "api"))
    assert (res.code, res.stdout) == (0, "fleet: 1 project, none needs you\n"), res.stderr


def test_task_show_counts_one_transcript_entry(run_cli, tmp_path):
    from fixtures_tasks import make_task

    tdir = make_task(tmp_path, phase="codegen")
    (tdir / "transcript.jsonl").write_text('{"kind": "advance", "to": "codegen"}\n')
    res = run_cli("task", "show", "t1", "--root", str(tmp_path))
    assert res.stdout.splitlines()[-1] == "  transcript: 1 entry"


def test_what_if_names_the_rcs_tui_command_that_clears_the_blocker(run_cli, tmp_path):
    """The text an operator reads suggests `rcs-tui state clear`; the runtime's own words stay in `message`."""
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    canonical(tmp_path, ["team", "forge"], "s1")
    args = ("state", "what-if", "autopilot", "--session-id", "s1", "--root", str(tmp_path))
    res = run_cli(*args)
    assert res.code == 0, res.stderr
    assert res.stdout.splitlines() == [
        "requested: autopilot",
        "autopilot: deny — Cannot activate autopilot: forge, team already active. Unsupported workflow overlap: "
        "forge + team + autopilot. Current state is unchanged. Clear it with `rcs-tui state clear --mode forge` "
        "(`--dry-run` shows the plan first), then retry.",
        "final active set: forge, team"]
    assert "rcs state" not in res.stdout
    [decision] = run_cli(*args, "--json").json["decisions"]
    assert decision["operator_message"] in res.stdout
    assert "`rcs state clear --input '{\"mode\":\"forge\"}' --json`" in decision["message"]


def test_a_dead_worker_finding_says_what_to_do(run_cli, tmp_path):
    """No automatic repair exists for a dead worker: the doctor says where to restart it instead."""
    import json

    team = tmp_path / ".rcs" / "state" / "team" / "crew"
    (team / "workers" / "w1").mkdir(parents=True)
    (team / "config.json").write_text(json.dumps({"name": "crew", "workers": ["w1"], "tmux_session": "rcs-crew"}))
    (team / "workers" / "w1" / "status.json").write_text(json.dumps({"state": "working", "current_task_id": "4"}))
    (team / "workers" / "w1" / "heartbeat.json").write_text(json.dumps(
        {"pid": 2_000_000_000, "alive": True, "last_turn_at": "2026-01-01T00:00:00Z"}))
    res = run_cli("doctor", "--root", str(tmp_path))
    assert res.code == 3, res.stderr
    assert res.stdout.splitlines() == [
        "[warn] dead-worker:crew:w1",
        "  team crew worker w1 has a dead heartbeat (pid 2000000000 is not running) while holding task 4",
        "  (no automatic repair) restart w1 from the team's runtime (its tmux session is `tmux_session` in "
        ".rcs/state/team/crew/config.json) or stop the team; task 4 stays in progress until a worker takes it "
        "again; rcs-tui does not start or stop workers"]
    [finding] = run_cli("doctor", "--root", str(tmp_path), "--json").json["findings"]
    assert finding["repair"] is None and finding["advice"].startswith("restart w1 from the team's runtime")
