"""The transition policy: seed 001's regression list, seed 000's invariants, and property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rcs_tui.core.modes import TRACKED_MODES
from rcs_tui.core.policy import (
    autopilot_review_not_clean,
    decide,
    decide_prompt,
    hands_off,
    is_approved_set,
    may_overlap,
    parse_prompt_skills,
)


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


# --- Rules pinned one by one (each fails when its rule is changed) ---

CLEAN_SPELLINGS = ["clean", "approved", "approve", "pass", "passed", "ok", "lgtm", " LGTM ", "Approved"]


@pytest.mark.parametrize("key", ["code_review_verdict", "review_verdict", "verdict"])
@pytest.mark.parametrize("spelling", CLEAN_SPELLINGS)
def test_every_clean_verdict_spelling_closes_the_autopilot_loopback(key, spelling):
    data = {"autopilot": {"current_phase": "code-review", key: spelling}}
    d = decide("blueprint", ["autopilot"], data)
    assert d.kind == "deny" and d.rollback and d.clear_hint == "autopilot"


@pytest.mark.parametrize("review", [
    {"review_clean": True}, {"code_review_clean": True},
    {"code_review": {"clean": True}}, {"code_review": {"verdict": "Approved"}}, {"code_review": {"verdict": "lgtm"}},
])
def test_clean_review_flags_and_nested_review_close_the_loopback(review):
    assert not autopilot_review_not_clean({"current_phase": "code-review", **review})
    assert decide("blueprint", ["autopilot"], {"autopilot": {"current_phase": "code-review", **review}}).kind == "deny"


@pytest.mark.parametrize("review", [
    {}, {"review_clean": "true"}, {"review_clean": False}, {"code_review_clean": 1},
    {"review_verdict": "changes-requested"}, {"verdict": "needs work"}, {"review_verdict": 1},
    {"code_review": {"clean": "yes", "verdict": "reject"}}, {"code_review": {"verdict": 7}}, {"code_review": "clean"},
])
def test_unclean_or_unrecognised_review_keeps_the_loopback_open(review):
    """Only a real boolean or a known clean spelling closes it: anything else is a not-clean review."""
    data = {"current_phase": "code-review", **review}
    assert autopilot_review_not_clean(data)
    d = decide("blueprint", ["autopilot"], {"autopilot": data})
    assert d.kind == "auto-complete" and d.sources == ("autopilot",) and d.active_after == ("blueprint",)
    assert d.message == "mode transiting: autopilot -> blueprint"


@pytest.mark.parametrize("data", [None, "code-review", {"current_phase": "executing"}, {}])
def test_loopback_needs_autopilot_in_its_code_review_phase(data):
    assert not autopilot_review_not_clean(data)
    assert decide("blueprint", ["autopilot"], {"autopilot": data}).kind == "deny"
    assert decide("blueprint", ["autopilot"]).kind == "deny"


def test_handoffs_are_only_the_allowlisted_pairs():
    pairs = {(a, b) for a in TRACKED_MODES for b in TRACKED_MODES if a != b and hands_off(a, b, None)}
    assert pairs == {("deep-interview", "blueprint"), ("blueprint", "team"), ("blueprint", "forge"),
                     ("blueprint", "autopilot")}


def test_start_noop_and_overlap_results_and_messages():
    start = decide("team", [])
    assert (start.kind, start.active_after, start.sources, start.message) == ("start", ("team",), (), "team started")
    noop = decide("forge", ["team", "forge", "team"])
    assert noop.active_before == noop.active_after == ("team", "forge")
    assert noop.message == "forge already active; no change" and noop.allowed
    over = decide("forge", ["team", "team"])
    assert (over.kind, over.active_before, over.active_after) == ("overlap", ("team",), ("team", "forge"))
    assert over.message == "forge overlaps team" and over.sources == () and not over.rollback


def test_handoff_is_denied_when_a_remaining_member_cannot_overlap_the_destination():
    """blueprint → autopilot would auto-complete blueprint, but ultrawork cannot share with standalone autopilot."""
    d = decide("autopilot", ["blueprint", "ultrawork"])
    assert d.kind == "deny" and d.active_after == ("blueprint", "ultrawork") and d.sources == ()
    assert d.clear_hint == "blueprint" and not d.rollback


def test_handoff_keeps_an_overlapping_member_listed_first():
    d = decide("team", ["forge", "blueprint"])
    assert d.kind == "auto-complete" and d.sources == ("blueprint",) and d.active_after == ("forge", "team")
    assert d.message == "mode transiting: blueprint -> team"


def test_denial_names_the_first_member_that_blocks_not_the_first_member():
    d = decide("blueprint", ["ultrawork", "team"])
    assert d.kind == "deny" and d.rollback and d.clear_hint == "team"
    assert "rcs state clear --input '{\"mode\":\"team\"}' --json" in d.message
    assert 'rcs_state.state_clear({ mode: "team" })' in d.message


def test_denial_message_text_in_full():
    d = decide("autopilot", ["team", "forge"])
    assert not d.rollback and d.clear_hint == "team"
    assert d.message == (
        "Cannot activate autopilot: team, forge already active. Unsupported workflow overlap: team + forge + "
        "autopilot. Current state is unchanged. Clear incompatible workflow state via "
        "`rcs state clear --input '{\"mode\":\"team\"}' --json` or the `rcs_state.*` MCP tools "
        "(`rcs_state.state_clear({ mode: \"team\" })`), then retry.")
    r = decide("deep-interview", ["forge"])
    assert r.message == (
        "Cannot activate deep-interview: forge already active. Unsupported workflow overlap: forge + deep-interview. "
        "Current state is unchanged. Execution-to-planning rollback auto-complete is not allowed. First clear "
        "current state first and retry if this action is intended. Clear incompatible workflow state via "
        "`rcs state clear --input '{\"mode\":\"forge\"}' --json` or the `rcs_state.*` MCP tools "
        "(`rcs_state.state_clear({ mode: \"forge\" })`), then retry.")


@pytest.mark.parametrize("request_, active", [("ultraqa", ["autoresearch"]), ("autopilot", ["team"]),
                                              ("team", ["deep-interview"])])
def test_denials_that_are_not_rollbacks_do_not_say_so(request_, active):
    d = decide(request_, active)
    assert d.kind == "deny" and not d.rollback and "rollback" not in d.message


def test_decision_json_shape():
    d = decide("team", ["blueprint"])
    assert d.as_json() == {"decision": "auto-complete", "allowed": True, "request": "team",
                           "active_before": ["blueprint"], "active_after": ["team"], "auto_completed": ["blueprint"],
                           "message": "mode transiting: blueprint -> team", "rollback": False}
    assert decide("autopilot", ["team"]).as_json()["allowed"] is False


def test_approved_sets():
    assert is_approved_set(["team", "forge", "ultrawork"]) and is_approved_set(["team", "team"])
    assert is_approved_set([]) and is_approved_set(["autopilot"])
    assert not is_approved_set(["team", "autopilot"])
    assert not is_approved_set(["forge", "ultrawork", "autopilot"])
    assert may_overlap("autopilot", "autopilot") and not may_overlap("ultrawork", "autoresearch")


@pytest.mark.parametrize("prompt, skills", [
    ("$brief $crew go", ["deep-interview", "team"]),
    ("$autoforge", ["autopilot"]),
    ("$Forge $TEAM now", ["forge", "team"]),
    ("forge", ["forge"]),
    ("  crew  ", ["team"]),
    ("$team $team $forge", ["team", "forge"]),
    ("$unknown $team", ["team"]),
    ("$team fix $forge", ["team"]),
    ("$team, $forge", []),
    ("please $team", []),
    ("hello", []),
    ("", []),
])
def test_prompt_skills_and_creator_aliases(prompt, skills):
    assert parse_prompt_skills(prompt) == skills


def test_creator_aliases_start_their_runtime_mode():
    assert decide_prompt("$brief clarify the spec", []).final == ("deep-interview",)
    assert decide_prompt("$crew", []).final == ("team",)
    assert decide_prompt("$autoforge ship", []).final == ("autopilot",)


def test_prompt_without_a_skill_decides_nothing():
    r = decide_prompt("just fix the bug", ["team"])
    assert r.requested == () and r.decisions == () and r.final == ()
    assert r.notes == ("no tracked $skill found in the request",)


def test_prompt_stops_at_the_first_denial_and_later_skills_are_not_applied():
    r = decide_prompt("$team $autopilot $forge", [])
    assert [d.kind for d in r.decisions] == ["start", "deny"]
    assert r.final == ("team",) and r.deferred == ()


def test_prompt_of_planning_skills_only_defers_nothing_and_applies_in_order():
    r = decide_prompt("$deep-interview $blueprint", [])
    assert [d.kind for d in r.decisions] == ["start", "auto-complete"]
    assert r.final == ("blueprint",) and r.deferred == () and r.notes == ()


def test_prompt_single_execution_skill_is_not_deferred():
    r = decide_prompt("$forge", ["blueprint"])
    assert r.deferred == () and r.final == ("forge",) and r.decisions[0].sources == ("blueprint",)


def test_prompt_passes_mode_files_to_the_policy():
    dirty = {"autopilot": {"current_phase": "code-review", "review_verdict": "changes-requested"}}
    r = decide_prompt("$blueprint $autopilot", ["autopilot"], dirty)
    assert r.deferred == ("autopilot",) and r.final == ("blueprint",)
    assert r.decisions[0].kind == "auto-complete"
    assert decide_prompt("$blueprint $autopilot", ["autopilot"]).decisions[0].kind == "deny"


def test_prompt_decision_json_shape():
    r = decide_prompt("$autoresearch $team go", [])
    assert r.as_json() == {
        "requested": ["autoresearch", "team"], "deferred": ["team"],
        "decisions": [decide("autoresearch", []).as_json()], "final_active": ["autoresearch"],
        "notes": ["planning preserved over simultaneous execution follow-up; deferred skills: team"]}


def test_every_decision_names_its_request():
    cases = [("team", []), ("team", ["team"]), ("ultrawork", ["team"]), ("forge", ["blueprint"]),
             ("autopilot", ["team"])]
    assert [decide(r, a).request for r, a in cases] == [r for r, _ in cases]
    assert [decide(r, a).as_json()["request"] for r, a in cases] == [r for r, _ in cases]


def test_messages_join_several_members_with_plus():
    assert decide("ultrawork", ["team", "forge"]).message == "ultrawork overlaps team + forge"
    dirty = {"autopilot": {"current_phase": "code-review"}}
    d = decide("blueprint", ["deep-interview", "autopilot"], dirty)  # an unapproved set found on disk
    assert d.sources == ("deep-interview", "autopilot") and d.active_after == ("blueprint",)
    assert d.message == "mode transiting: deep-interview + autopilot -> blueprint"
