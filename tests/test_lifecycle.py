"""Seed 002: one labelling function with lifecycle_outcome > run_outcome > inference."""

import pytest

from rcs_tui.core.lifecycle import (
    Outcome,
    handoff_softeners,
    has_question,
    is_active_doc,
    is_terminal_phase,
    lifecycle_outcome,
)
from rcs_tui.core.modes import INACTIVE_PHASES


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


# --- Rules pinned one by one ---

@pytest.mark.parametrize("value, expected", [
    ("finished", "finished"), ("blocked", "blocked"), ("failed", "failed"), ("userinterlude", "userinterlude"),
    ("askuserQuestion", "askuserQuestion"), ("ASKUSERQUESTION", "askuserQuestion"), (" Finished ", "finished"),
    ("finish", "finished"), ("DONE", "finished"), ("fail", "failed"), ("error", "failed"), ("Errored", "failed"),
    ("cancel", "cancelled"), ("cleared", "cancelled"), ("BLOCKED", "blocked"), ("user_interlude", "userinterlude"),
    ("interrupted", "userinterlude"), ("paused", "userinterlude"), ("blocked-on-user", "userinterlude"),
    ("waiting_on_user", "userinterlude"),
])
def test_every_recorded_spelling_maps_to_its_outcome(value, expected):
    for field in ("lifecycle_outcome", "run_outcome"):
        out = lifecycle_outcome({field: value})
        assert (out.value, out.source, out.raw) == (expected, field, value)


@pytest.mark.parametrize("value", ["progress", "continue", "running", "in_progress", "active"])
def test_non_terminal_canonical_value_wins_over_a_terminal_run_outcome(value):
    out = lifecycle_outcome({"lifecycle_outcome": value, "run_outcome": "finish", "current_phase": "completed"})
    assert (out.value, out.source, out.terminal, out.display) == (None, "lifecycle_outcome", False, None)


def test_lifecycle_outcome_beats_run_outcome_and_phase():
    out = lifecycle_outcome({"lifecycle_outcome": "failed", "run_outcome": "finish", "current_phase": "completed"})
    assert (out.value, out.source, out.raw) == ("failed", "lifecycle_outcome", "failed")


@pytest.mark.parametrize("lifecycle", ["", "   ", "someday", 3, None])
def test_unusable_lifecycle_outcome_falls_back_to_run_outcome(lifecycle):
    out = lifecycle_outcome({"lifecycle_outcome": lifecycle, "run_outcome": "done", "current_phase": "failed"})
    assert (out.value, out.source, out.raw) == ("finished", "run_outcome", "done")


def test_run_outcome_beats_inference_from_phase():
    out = lifecycle_outcome({"run_outcome": "blocked", "current_phase": "completed", "active": False})
    assert (out.value, out.source) == ("blocked", "run_outcome")


@pytest.mark.parametrize("doc, expected", [
    ({"current_phase": "completed"}, ("finished", "inferred", "completed")),
    ({"current_phase": " Cancelled "}, ("cancelled", "inferred", " Cancelled ")),
    ({"run_outcome": "mystery", "current_phase": "failed"}, ("failed", "inferred", "failed")),
    ({"active": False, "current_phase": "running", "error": "boom"}, ("failed", "inferred", "error")),
    ({"active": False, "error": "boom", "completed_at": "2026-01-01T00:00:00Z"}, ("failed", "inferred", "error")),
    ({"active": False, "completed_at": "2026-01-01T00:00:00Z"}, ("finished", "inferred", "completed_at")),
    ({"active": False, "current_phase": "   ", "completed_at": "t"}, ("finished", "inferred", "completed_at")),
    ({"active": False, "error": "", "completed_at": ""}, (None, None, None)),
    ({"active": False}, (None, None, None)),
    ({"active": True, "error": "boom", "completed_at": "t"}, (None, None, None)),
    ({"error": "boom"}, (None, None, None)),
    ({"active": True, "current_phase": "executing"}, (None, None, None)),
    (None, (None, None, None)),
    (["completed"], (None, None, None)),
])
def test_inference_fallbacks(doc, expected):
    out = lifecycle_outcome(doc)
    assert (out.value, out.source, out.raw) == expected


@pytest.mark.parametrize("key", ["question", "questions", "pending_question", "question_id", "blocking_question",
                                 "ask_user_question", "question_metadata", "user_question"])
def test_question_metadata_keys_at_top_level_and_under_state(key):
    assert has_question({key: "q-1"}) and has_question({"state": {key: ["which db?"]}})
    assert lifecycle_outcome({"run_outcome": "blocked_on_user", key: "q-1"}).value == "askuserQuestion"
    assert lifecycle_outcome({"run_outcome": "blocked_on_user", "state": {key: "q-1"}}).value == "askuserQuestion"


def test_empty_question_metadata_proves_nothing():
    assert not has_question({"question": "", "questions": [], "state": {"question_id": None}})
    assert not has_question({"state": "question"})
    assert lifecycle_outcome({"run_outcome": "blocked_on_user", "questions": []}).value == "userinterlude"


def test_outcome_display_and_terminal():
    assert Outcome("finished", "run_outcome").display == "finished"
    assert Outcome("cancelled", "run_outcome").display == "stopped (admin)"
    assert not Outcome("finished", "run_outcome").internal and Outcome("blocked", None).terminal


@pytest.mark.parametrize("phase", sorted(INACTIVE_PHASES) + ["Completed", " cancelled "])
def test_active_true_with_a_terminal_phase_is_not_active(phase):
    assert is_terminal_phase(phase)
    assert not is_active_doc({"active": True, "current_phase": phase})


def test_terminal_phases_are_the_documented_ones():
    assert INACTIVE_PHASES == {"complete", "completed", "cancelled", "canceled", "failed", "inactive", "cleared"}


@pytest.mark.parametrize("doc, active", [
    ({"active": True}, True), ({"active": True, "current_phase": "executing"}, True),
    ({"active": True, "current_phase": None}, True), ({"active": True, "current_phase": 3}, True),
    ({"active": "true"}, False), ({"active": 1}, False), ({"active": False, "current_phase": "executing"}, False),
    ({}, False), (None, False), ([("active", True)], False),
])
def test_active_doc(doc, active):
    assert is_active_doc(doc) is active


@pytest.mark.parametrize("note, hits", [
    ("If you want I can tidy up.", ["If you want I can"]),
    ("if you want, I can", ["if you want, I can"]),
    ("If you’d like, I can", ["If you’d like, I can"]),
    ("If youd like I can", ["If youd like I can"]),
    ("Would you like me to continue", ["Would you like me to continue"]),
    ("Outcome: finished. If you wanted I can't say.", []),
])
def test_each_softener_is_found(note, hits):
    assert handoff_softeners({"completion_note": note}) == ({"completion_note": hits} if hits else {})


def test_softeners_are_checked_in_every_handoff_field_and_only_in_text():
    fields = ["completion_note", "last_output", "last_agent_output", "handoff", "handoff_summary",
              "terminal_message", "summary"]
    doc = {f: "Would you like me to continue?" for f in fields} | {"note": "Would you like me to continue?",
                                                                  "summary": ["If you want, I can"]}
    assert set(handoff_softeners(doc)) == set(fields) - {"summary"}
    assert handoff_softeners(None) == {} and handoff_softeners({"summary": 3}) == {}


def test_mixed_case_user_interlude_and_phase_inference_with_question_metadata():
    assert lifecycle_outcome({"run_outcome": "UserInterlude"}).value == "userinterlude"
    out = lifecycle_outcome({"current_phase": "blocked_on_user", "question_id": "q-7"})
    assert (out.value, out.source) == ("askuserQuestion", "inferred")
    assert lifecycle_outcome({"current_phase": "blocked_on_user"}).value == "userinterlude"
