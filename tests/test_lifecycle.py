"""Seed 002: one labelling function with lifecycle_outcome > run_outcome > inference."""

import pytest

from rcs_tui.core.lifecycle import handoff_softeners, lifecycle_outcome


@pytest.mark.parametrize("legacy", ["finish", "complete", "completed", "done"])
def test_legacy_finish_values_normalise_to_finished(legacy):
    assert lifecycle_outcome({"run_outcome": legacy}).value == "finished"


def test_canonical_field_wins_over_legacy():
    out = lifecycle_outcome({"lifecycle_outcome": "blocked", "run_outcome": "finish"})
    assert (out.value, out.source) == ("blocked", "lifecycle_outcome")


def test_blocked_on_user_with_question_metadata_is_ask_user_question():
    assert lifecycle_outcome({"run_outcome": "blocked_on_user", "question_id": "q-1"}).value == "askuserQuestion"


def test_blocked_on_user_without_question_is_userinterlude():
    assert lifecycle_outcome({"run_outcome": "blocked_on_user"}).value == "userinterlude"


@pytest.mark.parametrize("value", ["cancelled", "canceled", "abort", "aborted"])
def test_cancelled_is_internal_never_canonical(value):
    out = lifecycle_outcome({"run_outcome": value})
    assert out.value == "cancelled" and out.internal and out.display != "cancelled"


def test_inference_from_phase_when_no_outcome_fields():
    assert lifecycle_outcome({"active": False, "current_phase": "complete"}).source == "inferred"
    assert lifecycle_outcome({"active": False, "current_phase": "failed"}).value == "failed"
    assert lifecycle_outcome({"active": True, "current_phase": "executing", "run_outcome": "continue"}).value is None


def test_softeners_are_flagged():
    note = "Done. If you'd like, I can add tests. Would you like me to continue?"
    hits = handoff_softeners({"completion_note": note})
    assert hits == {"completion_note": ["If you'd like, I can", "Would you like me to continue?"]}
    assert handoff_softeners({"completion_note": "Outcome: finished. Handoff: reviewer."}) == {}
