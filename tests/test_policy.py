"""The transition policy: seed 001's regression list, seed 000's invariants, and property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rcs_tui.core.modes import TRACKED_MODES
from rcs_tui.core.policy import decide, decide_prompt, is_approved_set, may_overlap


def test_team_forge_overlap_in_both_orders():
    assert decide("forge", ["team"]).kind == "overlap"
    assert decide("team", ["forge"]).kind == "overlap"
    assert decide("forge", ["team"]).active_after == ("team", "forge")


def test_team_ultrawork_overlap_in_both_orders():
    assert decide("ultrawork", ["team"]).active_after == ("team", "ultrawork")
    assert decide("team", ["ultrawork"]).active_after == ("ultrawork", "team")


@pytest.mark.parametrize("standalone", ["autopilot", "autoresearch"])
@pytest.mark.parametrize("other", ["team", "forge", "ultrawork", "ultraqa"])
def test_standalone_modes_reject_every_overlap(standalone, other):
    assert decide(other, [standalone]).kind == "deny"
    assert not may_overlap(standalone, other)


def test_denial_names_combination_and_both_clearing_surfaces():
    d = decide("forge", ["autopilot"])
    assert d.kind == "deny" and d.active_after == ("autopilot",)
    assert "Unsupported workflow overlap: autopilot + forge." in d.message
    assert "Current state is unchanged." in d.message
    assert "rcs state clear --input '{\"mode\":\"autopilot\"}' --json" in d.message
    assert 'rcs_state.state_clear({ mode: "autopilot" })' in d.message


@pytest.mark.parametrize("planning", ["deep-interview", "blueprint", "autoresearch"])
def test_execution_to_planning_rollback_is_denied(planning):
    d = decide(planning, ["forge"])
    assert d.kind == "deny" and d.rollback
    assert "Execution-to-planning rollback auto-complete is not allowed." in d.message
    assert "First clear current state first and retry if this action is intended." in d.message


@pytest.mark.parametrize("src,dst", [("deep-interview", "blueprint"), ("blueprint", "team"),
                                     ("blueprint", "forge"), ("blueprint", "autopilot")])
def test_allowlisted_handoffs_auto_complete_the_source(src, dst):
    d = decide(dst, [src])
    assert d.kind == "auto-complete" and d.sources == (src,) and d.active_after == (dst,)
    assert d.message == f"mode transiting: {src} -> {dst}"


def test_autopilot_to_blueprint_only_while_code_review_not_clean():
    dirty = {"autopilot": {"current_phase": "code-review", "review_verdict": "changes-requested"}}
    clean = {"autopilot": {"current_phase": "code-review", "review_verdict": "clean"}}
    other_phase = {"autopilot": {"current_phase": "forge"}}
    assert decide("blueprint", ["autopilot"], dirty).kind == "auto-complete"
    for data in (clean, other_phase):
        d = decide("blueprint", ["autopilot"], data)
        assert d.kind == "deny" and d.rollback


def test_ultrawork_overlap_does_not_open_a_gate_for_blueprint_rollback():
    d = decide("blueprint", ["team", "ultrawork"])
    assert d.kind == "deny" and d.rollback


def test_handoff_with_overlapping_companion_keeps_the_companion():
    d = decide("forge", ["blueprint", "ultrawork"])
    assert d.kind == "auto-complete" and d.sources == ("blueprint",)
    assert d.active_after == ("ultrawork", "forge")


def test_noop_and_start():
    assert decide("team", ["team", "forge"]).kind == "noop"
    assert decide("team", []).kind == "start"


def test_multi_skill_prompt_defers_execution_skills():
    r = decide_prompt("$blueprint $team $forge ship this fix", [])
    assert r.final == ("blueprint",)
    assert r.deferred == ("team", "forge")
    assert r.notes == ("planning preserved over simultaneous execution follow-up; deferred skills: team, forge",)


def test_prompt_of_execution_skills_applies_in_order():
    assert decide_prompt("$team $forge go", []).final == ("team", "forge")


modes = st.sampled_from(TRACKED_MODES)
approved_sets = st.lists(modes, unique=True, max_size=4).filter(is_approved_set)


@settings(max_examples=300, deadline=None)
@given(active=approved_sets, request=modes)
def test_every_allowed_result_is_an_approved_shape(active, request):
    d = decide(request, active)
    if d.allowed:
        assert is_approved_set(d.active_after)
        assert request in d.active_after
        assert not set(d.sources) & set(d.active_after)
    else:
        assert d.active_after == tuple(active)
