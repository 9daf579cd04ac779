"""Mode vocabulary: which modes are tracked, planning or execution, and which names are safe."""

from __future__ import annotations

import pytest

from rcs_tui.core.modes import (
    EXECUTION_LIKE,
    INFRA_STATE_NAMES,
    PLANNING_LIKE,
    TRACKED_MODES,
    BadName,
    check_name,
    check_team_name,
    is_execution,
    is_planning,
    is_tracked,
    mode_from_filename,
)


def test_planning_and_execution_modes_are_the_documented_ones():
    assert PLANNING_LIKE == ("deep-interview", "blueprint", "autoresearch")
    assert EXECUTION_LIKE == ("team", "forge", "autopilot", "ultrawork", "ultraqa")
    assert [m for m in TRACKED_MODES if is_planning(m)] == list(PLANNING_LIKE)
    assert [m for m in TRACKED_MODES if is_execution(m)] == list(EXECUTION_LIKE)
    assert not is_tracked("hud") and not is_planning("team") and not is_execution("blueprint")


@pytest.mark.parametrize("name, mode", [
    ("forge-state.json", "forge"), ("deep-interview-state.json", "deep-interview"), ("ultraqa-state.json", "ultraqa"),
    ("hud-state.json", None), ("skill-active-state.json", None), ("run-state.json", None),
    ("forge.json", None), ("forge-state.json.tmp", None), ("-state.json", None), ("Forge-state.json", None),
])
def test_mode_from_file_name(name, mode):
    assert mode_from_filename(name) == mode


def test_infrastructure_files_are_never_modes():
    assert INFRA_STATE_NAMES >= {"hud", "run", "skill-active", "session"}
    assert not INFRA_STATE_NAMES & set(TRACKED_MODES)
    assert all(mode_from_filename(f"{n}-state.json") is None for n in INFRA_STATE_NAMES)


@pytest.mark.parametrize("value", ["s1", "A-b_9", "x" * 64])
def test_safe_names_pass_unchanged(value):
    assert check_name(value, "session id") == value


@pytest.mark.parametrize("value, shown", [
    ("..", "'..'"), ("a/b", "'a/b'"), ("", "''"), ("x" * 65, repr("x" * 65)), ("y" * 100, repr("y" * 80)),
    ("a b", "'a b'"), ("é", "'é'"), ("s1\n", "'s1\\n'"), (5, "5"), (None, "None"),
])
def test_unsafe_names_are_refused_naming_the_field(value, shown):
    with pytest.raises(BadName) as err:
        check_name(value, "session id")
    assert str(err.value) == f"invalid session id {shown}: must match ^[A-Za-z0-9_-]{{1,64}}$"


@pytest.mark.parametrize("value", ["a", "login-flow", "0" + "x" * 29])
def test_team_names(value):
    assert check_team_name(value) == value


@pytest.mark.parametrize("value", ["", "-a", "Login", "a_b", "a" * 31, "a/b", 3])
def test_bad_team_names(value):
    with pytest.raises(BadName) as err:
        check_team_name(value)
    assert str(err.value) == f"invalid team name {value!r}: must match ^[a-z0-9][a-z0-9-]{{0,29}}$"
