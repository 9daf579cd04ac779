"""What the doctor says of each member it finds wrong, and which file each repair would change: exact words,
as the operator reads them in the console, the fleet and `doctor --json`."""

from __future__ import annotations

import pytest
from statefix import canonical, mode, pointer

from rcs_tui.project.doctor import diagnose


def shown(root, session):
    out = []
    for f in diagnose(root, session):
        item = f.as_json(root, with_plan=True)
        out.append((item["id"], item["scope"], item["message"], [c["path"] for c in item["plan"]["changes"]]))
    return out


@pytest.fixture
def project(tmp_path):
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "blueprint", "s1", active=False, current_phase="complete")
    mode(tmp_path, "autopilot", "s1", current_phase="executing")
    canonical(tmp_path, ["team", "blueprint", "ultraqa"], "s1")
    mode(tmp_path, "forge", None, current_phase="executing")
    canonical(tmp_path, ["forge"])
    return tmp_path


def test_each_member_finding_says_what_is_wrong_and_which_file_its_repair_changes(project):
    mode(project, "forge", "s2", active=False, current_phase="cleared")  # s2 cleared forge: root's copy survives
    canonical(project, [], "s2")
    pointer(project, "s1")
    s1 = ".rcs/state/sessions/s1/"
    assert shown(project, "s1") == [
        ("root-survivor:root:forge", "root",
         "root forge-state.json is still active (root file active behind a session tombstone; it would resurrect "
         "the mode); it can resurrect forge after a clear",
         [".rcs/state/forge-state.json", ".rcs/state/skill-active-state.json"]),
        ("orphan:s1:autopilot", "s1", "autopilot has an active mode file in s1 that no canonical entry lists",
         [s1 + "autopilot-state.json"]),
        ("stale:s1:blueprint", "s1",
         "blueprint is in the canonical set of s1 but mode file is inactive (phase complete)",
         [s1 + "skill-active-state.json"]),
        ("stale:s1:ultraqa", "s1", "ultraqa is in the canonical set of s1 but no mode file",
         [s1 + "skill-active-state.json"]),
    ]


def test_roots_active_copy_is_a_survivor_while_a_session_is_current(project):
    pointer(project, "s1")
    survivor = [f for f in shown(project, "s1") if f[0].startswith("root-survivor")]
    assert survivor == [("root-survivor:root:forge", "root",
                         "root forge-state.json is still active (root file still active while a session is current); "
                         "it can resurrect forge after a clear",
                         [".rcs/state/forge-state.json", ".rcs/state/skill-active-state.json"])]


def test_with_no_session_current_roots_active_copy_is_no_survivor(project):
    assert not [f for f in shown(project, None) if f[0].startswith("root-survivor")]


def test_a_stale_root_entry_is_repaired_in_roots_set_while_a_session_is_current(project):
    canonical(project, ["forge", "ultraqa"])  # no root ultraqa file
    pointer(project, "s1")
    stale = [f for f in shown(project, "s1") if f[0] == "stale:root:ultraqa"]
    assert stale == [("stale:root:ultraqa", "root", "ultraqa is in the canonical set of root but no mode file",
                      [".rcs/state/skill-active-state.json"])]
