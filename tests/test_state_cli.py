"""`rcs-tui state …`, `undo`, `journal`, `snapshot` run as the installed command against real trees."""

from __future__ import annotations

import json

import pytest

from tests.conftest import tree_digest
from tests.statefix import canonical, mode, read, state_dir, write


@pytest.fixture
def project(tmp_path):
    mode(tmp_path, "team", "s1", current_phase="team-exec", team_name="login-flow")
    mode(tmp_path, "forge", "s1", current_phase="executing", iteration=3, max_iterations=10)
    canonical(tmp_path, ["forge", "team"], "s1")
    return tmp_path


def test_list_active_from_root_option_env_and_cwd(run_cli, project):
    expected = {"active_modes": ["forge", "team"]}
    args = ("state", "list-active", "--session-id", "s1", "--json")
    assert run_cli(*args, "--root", str(project)).json == expected
    assert run_cli(*args, env={"RCS_ROOT": str(project)}).json == expected
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    assert run_cli(*args, cwd=sub).json == expected


def test_no_root_is_a_clear_error(run_cli, tmp_path):
    r = run_cli("state", "list-active", cwd=tmp_path)
    assert r.code == 1 and "no .rcs/ directory" in r.error


def test_clear_prints_contract_json_and_keeps_other_member(run_cli, project):
    r = run_cli("state", "clear", "--input", '{"mode":"team","session_id":"s1"}', "--json", "--root", str(project))
    assert r.code == 0
    out = r.json
    assert {k: out[k] for k in ("cleared", "mode", "path")} == {
        "cleared": True, "mode": "team", "path": str(project / ".rcs/state/sessions/s1/team-state.json")}
    assert out["journal_id"]
    assert run_cli("state", "list-active", "--session-id", "s1", "--root", str(project)).json == \
        {"active_modes": ["forge"]}


def test_env_session_resolution_is_used_by_clear(run_cli, project):
    r = run_cli("state", "clear", "--mode", "forge", "--root", str(project), env={"RCS_SESSION_ID": "s1"})
    assert r.code == 0 and not (project / ".rcs/state/sessions/s1/forge-state.json").exists()


def test_clear_dry_run_touches_nothing(run_cli, project):
    before = tree_digest(project)
    r = run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--dry-run", "--root", str(project))
    assert tree_digest(project) == before
    assert r.json["dry_run"] is True and r.json["active_after"] == ["forge"]
    assert r.json["canonical_removed"] == ["s1:team"]


def test_write_denial_is_json_error_exit_1_and_no_change(run_cli, project):
    before = tree_digest(project)
    r = run_cli("state", "write", "--input", '{"mode":"autopilot","active":true}', "--session-id", "s1",
                "--root", str(project))
    assert r.code == 1
    assert r.error.startswith("Cannot activate autopilot: forge, team already active.")
    assert "rcs state" in r.error and "rcs_state.*" in r.error
    assert tree_digest(project) == before


def test_write_handoff_reports_transition(run_cli, tmp_path):
    mode(tmp_path, "deep-interview", current_phase="intent-first")
    canonical(tmp_path, ["deep-interview"])
    r = run_cli("state", "write", "--input", '{"mode":"blueprint","active":true,"current_phase":"planning"}',
                "--root", str(tmp_path))
    assert r.code == 0
    assert {k: r.json[k] for k in ("success", "mode", "transition")} == {
        "success": True, "mode": "blueprint", "transition": "mode transiting: deep-interview -> blueprint"}
    assert read(state_dir(tmp_path) / "deep-interview-state.json")["lifecycle_outcome"] == "finished"


def test_undo_skips_a_clear_that_changed_nothing(run_cli, project):
    # Clearing a member twice journals a second, empty action; a plain `undo` must restore the real
    # clear, not spend itself on the no-op.
    before = tree_digest(project / ".rcs" / "state")
    for _ in range(2):
        run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project))
    r = run_cli("undo", "--root", str(project), "--json")
    assert r.code == 0 and r.json["restored"]
    assert tree_digest(project / ".rcs" / "state") == before


def test_a_rewrite_and_its_undo_keep_the_file_permissions(run_cli, project):
    import stat

    canon = project / ".rcs" / "state" / "sessions" / "s1" / "skill-active-state.json"
    canon.chmod(0o644)
    run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project))
    assert stat.S_IMODE(canon.stat().st_mode) == 0o644
    run_cli("undo", "--root", str(project))
    assert stat.S_IMODE(canon.stat().st_mode) == 0o644


def test_read_and_get_status(run_cli, project):
    assert run_cli("state", "read", "--mode", "ultraqa", "--session-id", "s1", "--root", str(project)).json == {
        "exists": False, "mode": "ultraqa",
        "_scope": {"searched": [str(project / ".rcs/state/sessions/s1/ultraqa-state.json")]}}
    assert run_cli("state", "read", "--mode", "forge", "--session-id", "s1", "--root", str(project)).json[
        "iteration"] == 3
    st = run_cli("state", "get-status", "--session-id", "s1", "--root", str(project)).json["statuses"]
    assert set(st) == {"forge", "team"} and st["forge"]["phase"] == "executing" and st["forge"]["active"] is True


def test_undo_via_cli_restores_bytes(run_cli, project):
    before = tree_digest(project / ".rcs" / "state")
    run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project))
    r = run_cli("undo", "--root", str(project), "--json")
    assert r.code == 0 and r.json["restored"]
    assert tree_digest(project / ".rcs" / "state") == before
    j = run_cli("journal", "--root", str(project), "--json").json["entries"]
    assert [e["action"] for e in j] == ["undo state clear team", "state clear team"] and j[1]["undone"]
    again = run_cli("undo", "--root", str(project))
    assert again.code == 1 and again.error == "nothing to undo: the journal has no undoable entry"


@pytest.mark.parametrize("args,needle", [
    (("--input", "{nope"), "--input: invalid JSON at line 1 column 2"),
    (("--input", "[1]"), "--input: expected a JSON object, got list"),
    (("--mode", ".."), "invalid mode name '..'"),
    (("--mode", "a/b"), "invalid mode name 'a/b'"),
    (("--mode", "x" * 65), "invalid mode name"),
    (("--mode", "team", "--session-id", "../s1"), "invalid session id '../s1'"),
    (("--input", '{"mode": 5}'), "input.mode: expected a string"),
    (("--input", '{"mode": "team", "all_sessions": "yes"}'),
     "--input.all_sessions: input should be a valid boolean, got 'yes'"),
])
def test_bad_input_is_a_clear_error_and_touches_nothing(run_cli, project, args, needle):
    before = tree_digest(project)
    r = run_cli("state", "clear", *args, "--root", str(project))
    assert r.code == 1 and needle in r.error
    assert tree_digest(project) == before


@pytest.mark.parametrize("payload,needle", [
    ('{"mode":"forge","active":"yes"}', "--input.active: input should be a valid boolean, got 'yes'"),
    ('{"mode":"forge","iteration":"3"}', "--input.iteration: input should be a valid integer, got '3'"),
    ('{"mode":"forge","state":[1]}', "--input.state: input should be a valid dictionary, got list"),
])
def test_write_rejects_wrongly_typed_known_fields(run_cli, project, payload, needle):
    before = tree_digest(project)
    r = run_cli("state", "write", "--input", payload, "--session-id", "s1", "--root", str(project))
    assert r.code == 1 and r.error == needle
    assert tree_digest(project) == before


def test_write_keeps_unknown_fields(run_cli, project):
    r = run_cli("state", "write", "--input", '{"mode":"forge","iteration":4,"custom":{"x":[1]}}',
                "--session-id", "s1", "--root", str(project))
    assert r.code == 0
    doc = read(project / ".rcs/state/sessions/s1/forge-state.json")
    assert doc["iteration"] == 4 and doc["custom"] == {"x": [1]} and doc["current_phase"] == "executing"


def test_usage_error_exits_2_with_json(run_cli, project):
    r = run_cli("state", "clear", "--root", str(project))
    assert r.code == 2 and "mode is required" in r.error
    r = run_cli("state", "frobnicate")
    assert r.code == 2 and "No such command" in r.error


def test_write_to_corrupt_file_is_refused_clear_repairs_it(run_cli, tmp_path):
    write(state_dir(tmp_path) / "forge-state.json", '{"active": tr')
    r = run_cli("state", "write", "--input", '{"mode":"forge","iteration":2}', "--root", str(tmp_path))
    assert r.code == 1 and "forge-state.json" in r.error and "invalid JSON" in r.error
    assert (state_dir(tmp_path) / "forge-state.json").read_text() == '{"active": tr'
    assert run_cli("state", "clear", "--mode", "forge", "--root", str(tmp_path)).code == 0
    assert not (state_dir(tmp_path) / "forge-state.json").exists()


def test_snapshot_json_reports_health_and_file_errors(run_cli, project):
    write(state_dir(project, "s1") / "ultraqa-state.json", b"\x00\x01".decode("latin-1"))
    mode(project, "blueprint", None, current_phase="planning")
    out = run_cli("snapshot", "--session-id", "s1", "--root", str(project)).json
    assert {(m["mode"], m["health"]) for m in out["members"]} == {
        ("forge", "live"), ("team", "live"), ("blueprint", "root-survivor")}
    assert out["errors"] == [{"path": ".rcs/state/sessions/s1/ultraqa-state.json",
                              "error": "binary content (NUL bytes), not JSON"}]
    assert out["session"]["source"] == "explicit"


def test_what_if_reports_decision_without_writing(run_cli, project):
    before = tree_digest(project)
    r = run_cli("state", "what-if", "$blueprint $team $forge fix it", "--session-id", "s1", "--json",
                "--root", str(project))
    assert tree_digest(project) == before
    d = r.json
    assert d["deferred"] == ["team", "forge"] and d["decisions"][0]["decision"] == "deny"
    assert json.dumps(d["decisions"][0]["rollback"]) == "true"
