"""Reconciliation documents: audit-complete, tombstone, and the canonical set with one member added or removed."""

from __future__ import annotations

import copy

import pytest

from rcs_tui.core.reconcile import audit_complete, canonical_with, canonical_without, tombstone

NOW = "2026-11-26T05:00:00.000Z"
T0 = "2026-11-25T21:41:36.953Z"


def entry(skill: str, session: str | None = None, **extra) -> dict:
    return {"skill": skill, "active": True, "activated_at": T0, **({"session_id": session} if session else {}),
            **extra}


def canonical(*entries: dict, **extra) -> dict:
    return {"version": 1, "active": True, "skill": entries[0]["skill"] if entries else None,
            "active_skills": list(entries), "updated_at": T0, **extra}


def test_audit_complete_records_seed_fields_and_keeps_the_rest():
    source = {"active": True, "current_phase": "critic-review", "iteration": 2}
    before = copy.deepcopy(source)
    out = audit_complete(source, "blueprint", "forge", NOW)
    assert source == before
    assert out == {"active": False, "current_phase": "completed", "iteration": 2, "completed_at": NOW,
                   "auto_completed_reason": "mode transiting: blueprint -> forge",
                   "completion_note": "Auto-completed blueprint during allowlisted transition to forge.",
                   "transition_source": "rcs-tui", "transition_target_mode": "forge",
                   "run_outcome": "finish", "lifecycle_outcome": "finished"}
    assert audit_complete(None, "a", "b", NOW, transition_source="console")["transition_source"] == "console"


def test_tombstone_in_session_and_root():
    assert tombstone("team", "s1", NOW) == {"mode": "team", "active": False, "current_phase": "cleared",
                                            "updated_at": NOW, "completed_at": NOW, "session_id": "s1"}
    assert "session_id" not in tombstone("team", None, NOW)


def test_clearing_the_primary_moves_skill_and_phase_to_the_first_remaining_member():
    doc = canonical(entry("team", phase="team-exec"), {"skill": "ultrawork", "active": False},
                    {"skill": 7, "active": True}, entry("forge", phase="executing"), phase="team-exec")
    before = copy.deepcopy(doc)
    out, removed = canonical_without(doc, ["team"], None, NOW)
    assert doc == before and removed == ["team"]
    assert out["skill"] == "forge" and out["phase"] == "executing" and out["active"] is True
    assert [e["skill"] for e in out["active_skills"]] == ["ultrawork", 7, "forge"]
    assert out["updated_at"] == NOW and out["version"] == 1


def test_new_primary_without_a_phase_does_not_inherit_the_cleared_one():
    out, _ = canonical_without(canonical(entry("team"), entry("forge"), phase="team-exec"), ["team"], None, NOW)
    assert out["skill"] == "forge" and "phase" not in out


def test_primary_that_stays_live_keeps_its_place_and_phase():
    doc = canonical(entry("forge", phase="executing"), entry("ultrawork"), entry("team", phase="team-exec"),
                    skill="team", phase="team-exec", active=False)
    out, removed = canonical_without(doc, ["ultrawork"], None, NOW)
    assert removed == ["ultrawork"] and (out["skill"], out["phase"]) == ("team", "team-exec")
    assert out["active"] is True, "live members remain, so the set is active"


def test_clearing_the_last_live_member_keeps_an_inactive_file():
    doc = canonical(entry("forge"), {"skill": "team", "active": False}, skill="forge")
    out, removed = canonical_without(doc, ["forge"], None, NOW)
    assert removed == ["forge"] and out["active"] is False and out["skill"] == "forge"
    assert out["active_skills"] == [{"skill": "team", "active": False}] and out["updated_at"] == NOW


def test_session_clear_removes_its_own_and_unscoped_entries_only():
    doc = canonical(entry("team", "s2"), entry("team", "s1"), entry("team"), entry("forge", "s1"))
    out, removed = canonical_without(doc, ["team"], "s1", NOW)
    assert removed == ["team", "team"]
    assert out["active_skills"] == [entry("team", "s2"), entry("forge", "s1")] and out["skill"] == "team"
    everywhere, removed = canonical_without(doc, ["team"], None, NOW)
    assert removed == ["team", "team", "team"] and [e["skill"] for e in everywhere["active_skills"]] == ["forge"]


@pytest.mark.parametrize("doc", [None, canonical(entry("forge")), {"active_skills": "team", "skill": "team"},
                                 {"skill": "team", "active": False}, {"skill": "forge", "active": True},
                                 {"skill": "team", "active": "true"}])
def test_nothing_to_remove_changes_nothing(doc):
    assert canonical_without(doc, ["team"], None, NOW) == (None, [])


def test_clearing_a_legacy_canonical_file():
    """A legacy file has one `skill` and no `active_skills`: clearing that skill makes it inactive."""
    doc = {"skill": "team", "active": True, "phase": "team-exec", "updated_at": T0}
    out, removed = canonical_without(doc, ["team"], "s1", NOW)
    assert removed == ["team"]
    assert out == {"skill": "team", "active": False, "phase": "team-exec", "updated_at": NOW}
    assert doc["active"] is True


def test_written_mode_gets_an_active_entry_and_becomes_primary():
    out = canonical_with(None, "forge", "starting", "s1", NOW)
    assert out == {"version": 1, "active": True, "skill": "forge", "updated_at": NOW, "source": "rcs-tui",
                   "activated_at": NOW, "phase": "starting", "session_id": "s1",
                   "active_skills": [{"skill": "forge", "active": True, "activated_at": NOW, "updated_at": NOW,
                                      "phase": "starting", "session_id": "s1"}]}


def test_added_member_keeps_existing_entries_version_and_activation_time():
    doc = canonical(entry("team"), version=2, activated_at=T0, phase="team-exec")
    out = canonical_with(doc, "forge", None, None, NOW, source="console")
    assert out["active_skills"] == [entry("team"), {"skill": "forge", "active": True, "activated_at": NOW,
                                                    "updated_at": NOW}]
    assert (out["version"], out["activated_at"], out["source"], out["skill"]) == (2, T0, "console", "forge")
    assert "phase" not in out and "session_id" not in out, "team's phase is not forge's"


def test_already_listed_member_is_not_added_twice_and_an_inactive_entry_is_replaced():
    live = canonical(entry("forge", "s1", phase="executing"))
    assert canonical_with(live, "forge", "verifying", "s1", NOW)["active_skills"] == [
        entry("forge", "s1", phase="executing")]
    stale = canonical(entry("team", "s1"), {"skill": "forge", "active": False, "session_id": "s1"})
    out = canonical_with(stale, "forge", None, "s1", NOW)
    assert out["active_skills"] == [entry("team", "s1"), {"skill": "forge", "active": True, "activated_at": NOW,
                                                          "updated_at": NOW, "session_id": "s1"}]


def test_completed_sources_leave_the_set_and_never_come_back():
    doc = canonical(entry("blueprint", "s1"), entry("ultrawork", "s1"))
    out = canonical_with(doc, "forge", "starting", "s1", NOW, completed=["blueprint"])
    assert [e["skill"] for e in out["active_skills"]] == ["ultrawork", "forge"] and out["skill"] == "forge"


def test_legacy_active_skill_is_kept_as_an_entry_when_another_mode_is_added():
    legacy = {"skill": "team", "active": True, "phase": "team-exec"}
    out = canonical_with(legacy, "forge", None, None, NOW)
    assert out["active_skills"] == [{"skill": "team", "active": True, "phase": "team-exec"},
                                    {"skill": "forge", "active": True, "activated_at": NOW, "updated_at": NOW}]
    assert [e["skill"] for e in canonical_with({"skill": "team", "active": True, "phase": 3}, "forge", None, None,
                                               NOW)["active_skills"]] == ["team", "forge"]
    assert "phase" not in canonical_with({"skill": "team", "active": True, "phase": 3}, "forge", None, None,
                                         NOW)["active_skills"][0]


@pytest.mark.parametrize("legacy", [{"skill": "team", "active": False}, {"skill": "team", "active": "true"},
                                    {"skill": 5, "active": True}, {"skill": "forge", "active": True}])
def test_inactive_odd_or_same_legacy_skill_is_not_carried_over(legacy):
    out = canonical_with(legacy, "forge", None, None, NOW)
    assert [e["skill"] for e in out["active_skills"]] == ["forge"]


def test_completed_legacy_skill_is_not_carried_over():
    out = canonical_with({"skill": "blueprint", "active": True}, "team", None, None, NOW, completed=["blueprint"])
    assert out["active_skills"] == [{"skill": "team", "active": True, "activated_at": NOW, "updated_at": NOW}]


def test_outputs_share_nothing_with_their_inputs():
    """Editing a returned document never reaches back into the document it was made from."""
    source = {"active": True, "input_lock": {"active": True}}
    audit_complete(source, "blueprint", "forge", NOW)["input_lock"]["active"] = False
    assert source["input_lock"] == {"active": True}
    doc = canonical(entry("team"), entry("forge"), extra={"k": 1})
    out, _ = canonical_without(doc, ["team"], None, NOW)
    out["active_skills"][0]["phase"] = "x"
    out["extra"]["k"] = 2
    added = canonical_with(doc, "ultrawork", None, None, NOW)
    added["active_skills"][0]["phase"] = "y"
    added["extra"]["k"] = 3
    assert doc == canonical(entry("team"), entry("forge"), extra={"k": 1})


def test_completed_source_leaves_every_scope_entry_of_the_file():
    doc = canonical(entry("blueprint", "s2"), entry("blueprint"), entry("blueprint", "s1"), entry("ultrawork", "s1"),
                    phase="planning")
    out = canonical_with(doc, "forge", None, "s1", NOW, completed=["blueprint"])
    assert [e["skill"] for e in out["active_skills"]] == ["ultrawork", "forge"]
    assert out["skill"] == "forge" and "phase" not in out


def test_another_sessions_entry_for_the_mode_is_neither_reused_nor_removed():
    other = entry("forge", "s2", phase="executing")
    doc = canonical(other, {"skill": "forge", "active": False, "session_id": "s1"})
    out = canonical_with(doc, "forge", "starting", "s1", NOW)
    assert out["active_skills"] == [other, {"skill": "forge", "active": True, "activated_at": NOW, "updated_at": NOW,
                                            "phase": "starting", "session_id": "s1"}]


def test_a_phase_that_is_not_text_is_not_carried_to_the_top_level():
    out, _ = canonical_without(canonical(entry("team"), entry("forge", phase=7), phase="team-exec"), ["team"], None,
                               NOW)
    assert out["skill"] == "forge" and "phase" not in out
