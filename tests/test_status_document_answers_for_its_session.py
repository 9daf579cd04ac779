"""`hud --once --json` is the status line's data: root and the current session, as the line shows them.

Every session of the project is `snapshot --json`'s to print; a status line that printed them all would
cost a project of ten thousand sessions seconds and tens of megabytes at every refresh.
"""

from __future__ import annotations

import json

from tests.statefix import canonical, mode


def _project(tmp_path):
    root = tmp_path / "proj"
    mode(root, "ultrawork", current_phase="executing")
    canonical(root, ["ultrawork"])
    mode(root, "team", "S1", current_phase="team-exec", team_name="crew")
    canonical(root, ["team"], "S1")
    for other in ("S2", "S3"):
        mode(root, "forge", other, current_phase="executing")
        (root / ".rcs/state/sessions" / other / "ultrawork-state.json").write_text("{not json")
    return root


def test_the_status_document_names_its_version_and_holds_root_and_the_current_session(tmp_path, run_cli):
    root = _project(tmp_path)
    got = run_cli("hud", "--once", "--json", "--root", str(root), "--session", "S1",
                  env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert got.code == 0, got.stderr
    doc = json.loads(got.stdout)
    assert (doc["version"], doc["kind"]) == ("2.0", "hud")
    assert [s["scope"] for s in doc["scopes"]] == ["root", "S1"]
    assert doc["active_set"] == ["team"] and {m["mode"] for m in doc["members"]} == {"team", "ultrawork"}
    assert doc["errors"] == []  # other sessions' unreadable files are not read for the line
    assert "team" in doc["line"] and "forge" not in doc["line"]


def test_every_session_is_in_the_snapshot(tmp_path, run_cli):
    root = _project(tmp_path)
    got = run_cli("snapshot", "--json", "--root", str(root), "--session-id", "S1")
    assert got.code == 0, got.stderr
    doc = json.loads(got.stdout)
    assert [s["scope"] for s in doc["scopes"]] == ["root", "S1", "S2", "S3"]
    assert sorted(e["path"] for e in doc["errors"]) == [".rcs/state/sessions/S2/ultrawork-state.json",
                                                         ".rcs/state/sessions/S3/ultrawork-state.json"]


def test_at_root_a_session_that_cleared_roots_mode_is_judged_not_listed(tmp_path, run_cli):
    """Root's forge survives a clear in S1 (S1 holds its tombstone): root's member says so; S1, of which
    only that file was read, is not listed as a scope holding nothing else."""
    root = tmp_path / "proj"
    mode(root, "forge", current_phase="executing")
    canonical(root, ["forge"])
    mode(root, "forge", "S1", active=False, current_phase="cleared")
    mode(root, "team", "S1", current_phase="team-exec")
    canonical(root, ["team"], "S1")
    got = run_cli("hud", "--once", "--json", "--root", str(root), env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert got.code == 0, got.stderr
    doc = json.loads(got.stdout)
    assert [s["scope"] for s in doc["scopes"]] == ["root"]
    assert [(m["mode"], m["health"]) for m in doc["members"]] == [("forge", "root-survivor")]
