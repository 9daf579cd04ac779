"""The installed CLI against a tree built from formats.md's literal examples and hazards."""

from __future__ import annotations

import pytest

from tests.conftest import tree_digest
from tests.statefix import read, state_dir, write

SID = "rcs-1764106896953-k3j9x2"

FORGE = {"active": True, "mode": "forge", "current_phase": "executing", "iteration": 3, "max_iterations": 10,
         "started_at": "2026-11-25T21:41:36.953Z", "updated_at": "2026-11-25T21:41:36.953Z",
         "session_id": SID, "thread_id": "thr-01", "turn_id": "turn-07",
         "context_snapshot_path": ".rcs/context/login-flow-20261125.md",
         "owner_rcs_session_id": SID, "run_outcome": "continue"}
TEAM = {"active": True, "mode": "team", "iteration": 0, "max_iterations": 50, "current_phase": "team-exec",
        "task_description": "implement login flow across api and ui", "started_at": "2026-11-25T21:41:58.290Z",
        "transition_message": "mode transiting: blueprint -> team", "team_name": "login-flow",
        "agent_count": 3, "agent_types": "executor", "run_outcome": "continue"}
ULTRAWORK = {"active": True, "reinforcement_count": 1, "started_at": "2026-11-25T21:42:10.000Z",
             "run_outcome": "continue"}
BLUEPRINT_DONE = {"active": False, "mode": "blueprint", "current_phase": "completed",
                  "completed_at": "2026-11-25T21:41:36.954Z",
                  "auto_completed_reason": "mode transiting: blueprint -> forge",
                  "completion_note": "Auto-completed blueprint during allowlisted transition to forge.",
                  "transition_source": "keyword-detector", "transition_target_mode": "forge",
                  "run_outcome": "finish", "lifecycle_outcome": "finished"}
CANONICAL = {"version": 1, "active": True, "skill": "forge", "keyword": "$forge", "phase": "executing",
             "activated_at": "2026-11-25T21:41:36.953Z", "updated_at": "2026-11-25T21:42:02.962Z",
             "source": "keyword-detector", "session_id": SID,
             "active_skills": [
                 {"skill": "forge", "phase": "executing", "active": True,
                  "activated_at": "2026-11-25T21:41:36.953Z", "session_id": SID},
                 {"skill": "team", "phase": "team-exec", "active": True,
                  "activated_at": "2026-11-25T21:41:58.302Z", "session_id": SID}]}


@pytest.fixture
def tree(tmp_path):
    s = state_dir(tmp_path, SID)
    write(s / "forge-state.json", FORGE)
    write(s / "team-state.json", TEAM)
    write(s / "blueprint-state.json", BLUEPRINT_DONE)
    write(s / "skill-active-state.json", CANONICAL)
    write(s / "run-state.json", {"active": True, "mode": "forge", "summary": "derived"})
    write(s / "hud-state.json", {"last_turn_at": "2026-11-25T21:42:20.000Z", "turn_count": 14})
    # root: an ultrawork file with no `mode` field and an emptied canonical set with a stale `skill`
    write(state_dir(tmp_path) / "ultrawork-state.json", ULTRAWORK)
    write(state_dir(tmp_path) / "skill-active-state.json",
          {"active": False, "skill": "ultrawork", "phase": "executing", "active_skills": []})
    write(state_dir(tmp_path) / "native-stop-state.json", {"active": True})
    return tmp_path


def test_session_combined_set_ignores_infrastructure_and_completed_source(run_cli, tree):
    r = run_cli("state", "list-active", "--session-id", SID, "--root", str(tree))
    assert r.json == {"active_modes": ["forge", "team"]}


def test_root_scope_orphan_from_file_without_mode_field(run_cli, tree):
    out = run_cli("snapshot", "--root", str(tree)).json
    assert out["active_set"] == ["ultrawork"]
    assert [(m["mode"], m["health"]) for m in out["members"]] == [("ultrawork", "orphan")]


def test_session_view_flags_root_ultrawork_as_survivor(run_cli, tree):
    out = run_cli("snapshot", "--session-id", SID, "--root", str(tree)).json
    assert sorted((m["mode"], m["health"]) for m in out["members"]) == [
        ("forge", "live"), ("team", "live"), ("ultrawork", "root-survivor")]


def test_clear_team_keeps_forge_entry_timestamps_and_derived_files(run_cli, tree):
    s = state_dir(tree, SID)
    keep = {p: (s / p).read_bytes() for p in ("forge-state.json", "run-state.json", "hud-state.json",
                                              "blueprint-state.json")}
    r = run_cli("state", "clear", "--input", f'{{"mode":"team","session_id":"{SID}"}}', "--json",
                "--root", str(tree))
    assert r.code == 0 and r.json["path"] == str(s / "team-state.json")
    assert not (s / "team-state.json").exists()  # no root team file → deleted, not tombstoned
    for name, data in keep.items():
        assert (s / name).read_bytes() == data
    c = read(s / "skill-active-state.json")
    assert c["active_skills"] == [CANONICAL["active_skills"][0]]
    assert (c["skill"], c["phase"], c["keyword"]) == ("forge", "executing", "$forge")


def test_activating_blueprint_again_is_a_denied_rollback(run_cli, tree):
    before = tree_digest(tree)
    r = run_cli("state", "write", "--input", '{"mode":"blueprint","active":true}', "--session-id", SID,
                "--root", str(tree))
    assert r.code == 1 and "Execution-to-planning rollback auto-complete is not allowed" in r.error
    assert tree_digest(tree) == before


def test_ultrawork_overlap_joins_team_forge(run_cli, tree):
    r = run_cli("state", "write", "--input", '{"mode":"ultrawork","active":true}', "--session-id", SID,
                "--root", str(tree))
    assert r.code == 0 and "transition" not in r.json
    c = read(state_dir(tree, SID) / "skill-active-state.json")
    assert [e["skill"] for e in c["active_skills"]] == ["forge", "team", "ultrawork"]
    assert c["active_skills"][:2] == CANONICAL["active_skills"]
