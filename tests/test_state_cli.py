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


def test_dry_run_of_clear_all_sessions_shows_every_scope_before_and_after(run_cli, project):
    mode(project, "team", None, current_phase="team-exec")
    mode(project, "ultrawork", None)
    canonical(project, ["team", "ultrawork"], None)
    mode(project, "ultrawork", "s2")
    mode(project, "team", "s2", current_phase="team-verify")
    canonical(project, ["team", "ultrawork"], "s2")
    r = run_cli("state", "clear", "--mode", "ultrawork", "--all-sessions", "--dry-run", "--root", str(project))
    assert r.code == 0
    assert r.json["scopes"] == [{"scope": "root", "before": ["team", "ultrawork"], "after": ["team"]},
                                {"scope": "s2", "before": ["team", "ultrawork"], "after": ["team"]}]
    assert "active_after" not in r.json and r.json["warning"].startswith("clearing ultrawork in root and")


def test_clear_retry_replans_while_a_writer_keeps_changing_the_file(project):
    """`--retry N`: a refused attempt is re-planned on fresh bytes and journaled only once applied."""
    from rcs_tui.cli import main

    path = state_dir(project, "s1") / "team-state.json"
    from rcs_tui.state import txn

    real_read = txn._read_before
    rewrites = []

    def runtime_writes_first(tree, rel):  # the runtime rewrites the file in the race window, twice
        if rel.endswith("team-state.json") and len(rewrites) < 2:
            rewrites.append(1)
            mode(project, "team", "s1", current_phase="team-exec", iteration=len(rewrites))
        return real_read(tree, rel)

    txn._read_before = runtime_writes_first
    try:
        with pytest.raises(SystemExit) as done:
            main(["state", "clear", "--mode", "team", "--session-id", "s1", "--retry", "1", "--root", str(project)])
        assert done.value.code == 1 and path.exists()  # 2 attempts, both refused
        rewrites.clear()
        with pytest.raises(SystemExit) as done:
            main(["state", "clear", "--mode", "team", "--session-id", "s1", "--retry", "3", "--root", str(project)])
        assert done.value.code == 0 and not path.exists()
    finally:
        txn._read_before = real_read
    journal = (project / ".rcs/logs/rcs-tui-journal.jsonl").read_text().splitlines()
    applied = [json.loads(x) for x in journal if '"action"' in x]
    aborted = {json.loads(x)["abort"] for x in journal if '"abort"' in x}
    assert [e["action"] for e in applied if e["id"] not in aborted] == ["state clear team"]


def test_redo_reapplies_an_undone_clear_through_the_journal(run_cli, project):
    path = state_dir(project, "s1") / "team-state.json"
    before = path.read_bytes()
    assert run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project)).code == 0
    assert run_cli("redo", "--root", str(project)).code == 1  # nothing undone yet
    assert run_cli("undo", "--root", str(project)).code == 0
    assert path.read_bytes() == before
    r = run_cli("redo", "--root", str(project))
    assert r.code == 0 and r.json["redone"] and not path.exists()
    entries = run_cli("journal", "--json", "--root", str(project)).json["entries"]
    assert [(e["action"], e["undone"]) for e in entries] == [
        ("redo state clear team", False), ("undo state clear team", False), ("state clear team", False)]
    r = run_cli("undo", "--root", str(project))  # undoing the redo brings the file back again
    assert r.code == 0 and path.read_bytes() == before


def test_undo_refusal_names_the_later_entry_to_undo_first(run_cli, project):
    run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project))
    first = run_cli("journal", "--json", "--root", str(project)).json["entries"][0]["id"]
    run_cli("state", "clear", "--mode", "forge", "--session-id", "s1", "--root", str(project))
    second = run_cli("journal", "--json", "--root", str(project)).json["entries"][0]["id"]
    r = run_cli("undo", first, "--root", str(project))
    assert r.code == 1 and f"undo {second} (state clear forge) first" in r.error


def test_root_given_before_the_subcommand(run_cli, project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    r = run_cli("--root", str(project), "state", "list-active", "--session-id", "s1", "--json", cwd=elsewhere)
    assert r.code == 0 and r.json == {"active_modes": ["forge", "team"]}


def test_usage_error_prints_the_usage_line_then_the_json_error(run_cli, project):
    r = run_cli("state", "clear", "--retry", "x", "--root", str(project))
    assert r.code == 2 and r.stderr.startswith("Usage: rcs-tui state clear [OPTIONS]")
    assert "'x' is not a valid integer" in r.error
    r = run_cli("state", "clear", "--retry")
    assert r.code == 2 and r.stderr.startswith("Usage: rcs-tui") and "requires an argument" in r.error


def test_help_texts_do_not_cite_internal_documents(run_cli):
    for args in (("--help",), ("task", "--help"), ("task", "override", "--help"), ("state", "clear", "--help"),
                 ("state", "write", "--help")):
        out = run_cli(*args).stdout
        assert "seed" not in out and "formats.md" not in out and "§" not in out, args
    assert "tombstone: an inactive marker" in " ".join(run_cli("state", "clear", "--help").stdout.split())


def test_journal_human_output_shows_relative_ages(run_cli, project):
    run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(project))
    out = run_cli("journal", "--root", str(project)).stdout
    assert "s ago  state clear team" in out and "T" not in out.split()[1]
