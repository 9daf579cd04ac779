"""The AGENTS-overlay Active Modes section (formats.md §5) and `rcs-tui overlay`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rcs_tui.state.plans import plan_names
from rcs_tui.state.reader import read_snapshot
from rcs_tui.views.overlay import build_overlay, runtime_would_list

SID = "sess-1"


def write(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def project(tmp_path: Path, modes: dict[str, dict], canonical: list[str]) -> Path:
    sess = tmp_path / ".rcs" / "state" / "sessions" / SID
    for mode, data in modes.items():
        write(sess / f"{mode}-state.json", data)
    write(sess / "skill-active-state.json", {"version": 1, "active": True, "skill": canonical[0], "active_skills": [
        {"skill": m, "active": True, "session_id": SID} for m in canonical]})
    return tmp_path


def block(root: Path):
    return build_overlay(read_snapshot(root, SID, all_sessions=False), plan_names(root))


TEAM_FORGE = {"forge": {"active": True, "current_phase": "executing", "iteration": 3, "max_iterations": 10},
              "team": {"active": True, "current_phase": "team-exec", "iteration": 0, "max_iterations": 50}}


def test_team_forge_lists_both_sorted_with_blocked_gate(tmp_path):
    root = project(tmp_path, TEAM_FORGE, ["team", "forge"])  # activation order must not matter
    write(tmp_path / ".rcs" / "plans" / "prd-login.md", "# prd")
    assert block(root).text == (
        "**Active Modes:**\n"
        "- forge: iteration 3/10, phase: executing\n"
        "- team: iteration 0/50, phase: team-exec\n"
        "**Forge Blueprint-First Gate:** BLOCKED (missing test-spec-*.md in .rcs/plans/)")


def test_gate_unlocked_when_both_plans_exist(tmp_path):
    root = project(tmp_path, TEAM_FORGE, ["forge", "team"])
    write(tmp_path / ".rcs" / "plans" / "prd-login.md", "# prd")
    write(tmp_path / ".rcs" / "plans" / "test-spec-login.md", "# spec")
    assert block(root).lines[-1] == "**Forge Blueprint-First Gate:** UNLOCKED"


def test_team_ultrawork_without_forge_has_no_gate_and_active_line(tmp_path):
    root = project(tmp_path, {"team": {"active": True, "current_phase": "team-exec"},
                              "ultrawork": {"active": True, "reinforcement_count": 1},
                              "blueprint": {"active": True, "iteration": 2}}, ["ultrawork", "team", "blueprint"])
    assert block(root).lines == ("**Active Modes:**", "- blueprint: iteration 2/?", "- team: phase: team-exec",
                                 "- ultrawork: active")


def test_stale_canonical_member_is_not_listed_but_flagged(tmp_path):
    root = project(tmp_path, {**TEAM_FORGE, "blueprint": {"active": False, "current_phase": "completed"}},
                   ["forge", "team", "blueprint"])
    snap = read_snapshot(root, SID, all_sessions=False)
    assert "blueprint" not in build_overlay(snap, plan_names(snap.root)).text
    flagged = [m.mode for m in snap.members if runtime_would_list(m)]
    assert flagged == ["blueprint"]


def test_600_character_cap_keeps_whole_lines_and_the_gate(tmp_path):
    long = "p" * 200
    modes = {m: {"active": True, "current_phase": long + m, "iteration": 1, "max_iterations": 9}
             for m in ("forge", "team", "ultrawork", "blueprint", "autopilot", "ultraqa", "deep-interview")}
    root = project(tmp_path, modes, list(modes))
    b = block(root)
    assert len(b.text) <= 600
    assert b.lines[0] == "**Active Modes:**" and b.lines[-1].startswith("**Forge Blueprint-First Gate:**")
    assert b.lines[-2].startswith("- … (") and b.truncated == int(b.lines[-2].split("(")[1].split()[0])
    assert all(line.endswith("…") for line in b.lines[1:-2])  # each phase clipped, each line whole
    assert b.truncated > 0


def test_untrusted_phase_is_one_clean_line(tmp_path):
    root = project(tmp_path, {"team": {"active": True, "current_phase": "exec\n- forge: active\x1b[2J"}}, ["team"])
    assert block(root).lines == ("**Active Modes:**", "- team: phase: exec - forge: active")


def test_cli_prints_the_block_and_json(tmp_path):
    root = project(tmp_path, TEAM_FORGE, ["forge", "team"])
    exe = str(Path(sys.executable).parent / "rcs-tui")
    env = {**os.environ, "RCS_SESSION_ID": SID}
    text = subprocess.run([exe, "overlay", "--root", str(root)], capture_output=True, text=True, env=env)
    assert text.returncode == 0 and text.stdout.rstrip("\n") == block(root).text
    data = json.loads(subprocess.run([exe, "overlay", "--root", str(root), "--json"], capture_output=True,
                                     text=True, env=env).stdout)
    assert data["gate"].endswith("BLOCKED (missing prd-*.md, test-spec-*.md in .rcs/plans/)")
    assert data["chars"] == len(data["text"]) <= 600
