"""Compatibility reads fall back to root per mode; authoritative decisions stay on the resolved scope.

Read precedence: the explicit session, else the current session, then root. An explicit session whose
directory exists owns its state and is read alone (as the runtime does); a missing explicit session, or
a current session found through the environment or `session.json`, falls back to root for each mode it
lacks. Every answer says which scope it came from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT_FORGE = {"active": True, "current_phase": "executing", "marker": "root-forge"}


def write(root: Path, rel: str, doc: dict) -> Path:
    path = root / ".rcs" / "state" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def state(run_cli, root, *args, env=None):
    r = run_cli("state", *args, "--root", str(root), "--json", env=env)
    assert r.code == 0, r.stderr
    return r.json


@pytest.fixture
def root_forge(tmp_path):
    write(tmp_path, "forge-state.json", ROOT_FORGE)
    return tmp_path


def test_missing_explicit_session_reads_root(run_cli, root_forge):
    path = root_forge / ".rcs" / "state" / "forge-state.json"
    assert state(run_cli, root_forge, "read", "--mode", "forge", "--session-id", "sess-zz") == {
        **ROOT_FORGE, "_scope": {"scope": "root", "session_id": None, "fallback": True, "path": str(path)}}
    assert state(run_cli, root_forge, "get-status", "--session-id", "sess-zz") == {"statuses": {"forge": {
        "active": True, "phase": "executing", "path": str(path), "data": ROOT_FORGE,
        "scope": "root", "session_id": None, "fallback": True}}}


def test_current_session_from_env_falls_back_per_mode(run_cli, root_forge):
    write(root_forge, "sessions/sess-a/team-state.json", {"active": True, "current_phase": "team-exec"})
    write(root_forge, "ultrawork-state.json", {"active": True})
    write(root_forge, "sessions/sess-a/ultrawork-state.json", {"active": False, "current_phase": "cleared"})
    env = {"RCS_SESSION_ID": "sess-a"}
    read = state(run_cli, root_forge, "read", "--mode", "forge", env=env)
    assert read["marker"] == "root-forge" and read["_scope"]["scope"] == "root" and read["_scope"]["fallback"]
    # the session's own file wins, a tombstone included
    read = state(run_cli, root_forge, "read", "--mode", "ultrawork", env=env)
    assert read["current_phase"] == "cleared"
    assert read["_scope"] == {"scope": "session", "session_id": "sess-a", "fallback": False,
                              "path": str(root_forge / ".rcs/state/sessions/sess-a/ultrawork-state.json")}
    statuses = state(run_cli, root_forge, "get-status", env=env)["statuses"]
    assert {m: (s["scope"], s["session_id"], s["fallback"], s["phase"]) for m, s in statuses.items()} == {
        "forge": ("root", None, True, "executing"),
        "team": ("session", "sess-a", False, "team-exec"),
        "ultrawork": ("session", "sess-a", False, "cleared")}
    assert state(run_cli, root_forge, "get-status", "--mode", "forge", env=env)["statuses"].keys() == {"forge"}
    # the authoritative set is the session's alone: root's active forge is not part of it
    assert state(run_cli, root_forge, "list-active", env=env) == {"active_modes": ["team"]}
    hud = run_cli("hud", "--once", "--json", "--root", str(root_forge), env=env).json
    assert hud["active_set"] == ["team"]
    assert {m["mode"]: m["health"] for m in hud["members"]}["forge"] == "root-survivor"


def test_current_session_from_session_json_falls_back(run_cli, root_forge):
    write(root_forge, "sessions/sess-p/team-state.json", {"active": True, "current_phase": "team-exec"})
    write(root_forge, "session.json", {"session_id": "sess-p", "cwd": str(root_forge), "pid": os.getpid()})
    read = state(run_cli, root_forge, "read", "--mode", "forge")
    assert read["marker"] == "root-forge" and read["_scope"]["fallback"] is True
    assert state(run_cli, root_forge, "list-active") == {"active_modes": ["team"]}


def test_explicit_existing_session_owns_its_state(run_cli, root_forge):
    write(root_forge, "sessions/sess-b/team-state.json", {"active": True, "current_phase": "team-exec"})
    searched = str(root_forge / ".rcs/state/sessions/sess-b/forge-state.json")
    assert state(run_cli, root_forge, "read", "--mode", "forge", "--session-id", "sess-b") == {
        "exists": False, "mode": "forge", "_scope": {"searched": [searched]}}
    assert set(state(run_cli, root_forge, "get-status", "--session-id", "sess-b")["statuses"]) == {"team"}


def test_root_scope_reads_root_without_fallback(run_cli, root_forge):
    read = state(run_cli, root_forge, "read", "--mode", "forge")
    assert read["_scope"] == {"scope": "root", "session_id": None, "fallback": False,
                              "path": str(root_forge / ".rcs/state/forge-state.json")}
    assert state(run_cli, root_forge, "list-active") == {"active_modes": ["forge"]}
    missing = state(run_cli, root_forge, "read", "--mode", "team")
    assert missing == {"exists": False, "mode": "team",
                       "_scope": {"searched": [str(root_forge / ".rcs/state/team-state.json")]}}


def test_session_file_wins_over_root(run_cli, root_forge):
    write(root_forge, "sessions/sess-c/forge-state.json", {"active": True, "current_phase": "verifying"})
    read = state(run_cli, root_forge, "read", "--mode", "forge", env={"RCS_SESSION_ID": "sess-c"})
    assert read["current_phase"] == "verifying" and read["_scope"]["scope"] == "session"
    assert "marker" not in read


@pytest.mark.parametrize("session", [None, "s1"])
def test_overlay_phase_falls_back_to_the_canonical_entry(run_cli, tmp_path, session):
    prefix = f"sessions/{session}/" if session else ""
    write(tmp_path, f"{prefix}team-state.json", {"active": True, "team_name": "delta"})
    write(tmp_path, f"{prefix}forge-state.json", {"active": True, "iteration": 2, "max_iterations": 5})
    entry = {"active": True, **({"session_id": session} if session else {})}
    write(tmp_path, f"{prefix}skill-active-state.json", {
        "version": 1, "active": True, "skill": "team",
        "active_skills": [{"skill": "team", "phase": "running", **entry},
                          {"skill": "forge", "phase": "executing", **entry}]})
    (tmp_path / ".rcs" / "plans").mkdir()
    (tmp_path / ".rcs" / "plans" / "prd-x.md").write_text("x")
    (tmp_path / ".rcs" / "plans" / "test-spec-x.md").write_text("x")
    env = {"RCS_SESSION_ID": session} if session else None
    r = run_cli("overlay", "--root", str(tmp_path), env=env)
    assert r.code == 0 and r.stdout.splitlines() == [
        "**Active Modes:**", "- forge: iteration 2/5, phase: executing", "- team: phase: running",
        "**Forge Blueprint-First Gate:** UNLOCKED"]
    # the file's own phase wins over the entry's
    write(tmp_path, f"{prefix}team-state.json", {"active": True, "current_phase": "team-exec"})
    assert "- team: phase: team-exec" in run_cli("overlay", "--root", str(tmp_path), env=env).stdout.splitlines()
