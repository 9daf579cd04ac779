"""State operations on real trees: clear, write/activation, reconciliation, dry-run, CAS, undo."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcs_tui.core.modes import TRACKED_MODES, BadName
from rcs_tui.core.policy import is_approved_set
from rcs_tui.state.journal import read_journal, undo
from rcs_tui.state.ops import PolicyDenied, plan_clear, plan_write
from rcs_tui.state.reader import read_snapshot
from rcs_tui.state.txn import ChangedUnderneath, TxnError
from tests.conftest import tree_digest
from tests.statefix import canonical, mode, read, state_dir, write


def team_forge(root: Path, session: str | None = "s1") -> None:
    mode(root, "team", session, current_phase="team-exec", team_name="login-flow")
    mode(root, "forge", session, current_phase="executing", iteration=3, max_iterations=10)
    canonical(root, ["forge", "team"], session)


@pytest.mark.parametrize("session", [None, "s1"])
def test_clear_team_from_team_forge_keeps_forge(tmp_path, session):
    team_forge(tmp_path, session)
    before_forge = (state_dir(tmp_path, session) / "forge-state.json").read_bytes()
    forge_entry = read(state_dir(tmp_path, session) / "skill-active-state.json")["active_skills"][0]
    plan_clear(tmp_path, "team", session).run(tmp_path)
    d = state_dir(tmp_path, session)
    assert not (d / "team-state.json").exists()
    assert (d / "forge-state.json").read_bytes() == before_forge
    c = read(d / "skill-active-state.json")
    assert c["active_skills"] == [forge_entry] and c["skill"] == "forge" and c["active"] is True
    assert read_snapshot(tmp_path, session).active_set() == ("forge",)


def test_clear_in_session_with_root_copy_writes_tombstone_and_leaves_root(tmp_path):
    team_forge(tmp_path)
    root_team = mode(tmp_path, "team", None, current_phase="team-exec")
    root_bytes = root_team.read_bytes()
    plan_clear(tmp_path, "team", "s1").run(tmp_path)
    tomb = read(state_dir(tmp_path, "s1") / "team-state.json")
    assert {k: tomb[k] for k in ("mode", "active", "current_phase", "session_id")} == \
        {"mode": "team", "active": False, "current_phase": "cleared", "session_id": "s1"}
    assert root_team.read_bytes() == root_bytes


def test_clearing_last_member_keeps_an_inactive_canonical_file(tmp_path):
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    plan_clear(tmp_path, "forge").run(tmp_path)
    c = read(state_dir(tmp_path) / "skill-active-state.json")
    assert c["active"] is False and c["active_skills"] == []


def test_clear_all_sessions(tmp_path):
    team_forge(tmp_path, "s1")
    mode(tmp_path, "team", "s2", current_phase="team-exec")
    canonical(tmp_path, ["team"], "s2")
    mode(tmp_path, "team", None)
    canonical(tmp_path, ["team"])
    run_state = write(state_dir(tmp_path, "s1") / "run-state.json", {"x": 1})
    op = plan_clear(tmp_path, "team", all_sessions=True)
    result = op.run(tmp_path)
    assert result["removed"] == 3 and result["all_sessions"] is True
    warning = "clearing team in root and 2 sessions: agents still running in those sessions may write it again"
    assert result["warning"] == op.plan.summary["warning"] == warning  # the preview and the result say the same
    assert not list(tmp_path.glob(".rcs/state/**/team-state.json"))
    assert not (state_dir(tmp_path, "s2") / "skill-active-state.json").exists()  # emptied session copy deleted
    assert read(state_dir(tmp_path) / "skill-active-state.json")["active"] is False  # root copy kept
    assert [e["skill"] for e in read(state_dir(tmp_path, "s1") / "skill-active-state.json")["active_skills"]] \
        == ["forge"]
    assert run_state.read_text() == '{\n  "x": 1\n}'


def test_dry_run_prints_plan_and_touches_nothing(tmp_path):
    team_forge(tmp_path)
    before = tree_digest(tmp_path)
    preview = plan_clear(tmp_path, "team", "s1").preview(tmp_path)
    assert tree_digest(tmp_path) == before
    assert preview["dry_run"] is True and preview["active_after"] == ["forge"]
    assert [(c["path"], c["action"]) for c in preview["changes"]] == [
        (".rcs/state/sessions/s1/team-state.json", "delete"),
        (".rcs/state/sessions/s1/skill-active-state.json", "write")]


def test_file_changed_between_plan_and_apply_is_refused(tmp_path):
    team_forge(tmp_path)
    op = plan_clear(tmp_path, "team", "s1")
    mode(tmp_path, "team", "s1", current_phase="team-verify")  # the runtime writes meanwhile
    before = tree_digest(tmp_path / ".rcs" / "state")
    with pytest.raises(ChangedUnderneath, match="changed underneath"):
        op.run(tmp_path)
    assert tree_digest(tmp_path / ".rcs" / "state") == before
    assert read_journal(tmp_path) == []


def test_undo_restores_bytes_and_refuses_after_a_later_change(tmp_path):
    team_forge(tmp_path)
    before = tree_digest(tmp_path / ".rcs" / "state")
    plan_clear(tmp_path, "team", "s1").run(tmp_path)
    undo(tmp_path)
    assert tree_digest(tmp_path / ".rcs" / "state") == before
    entry = plan_clear(tmp_path, "forge", "s1").run(tmp_path)
    mode(tmp_path, "forge", "s1", current_phase="verifying")
    with pytest.raises(TxnError, match="changed since"):
        undo(tmp_path, entry["journal_id"])
    actions = [e["action"] for e in read_journal(tmp_path)]
    assert actions == ["state clear team", "undo state clear team", "state clear forge"]


def test_activation_auto_completes_source_with_audit_fields(tmp_path):
    mode(tmp_path, "blueprint", "s1", current_phase="critic-review", iteration=2)
    canonical(tmp_path, ["blueprint"], "s1")
    result = plan_write(tmp_path, "forge", {"active": True, "current_phase": "starting"}, "s1").run(tmp_path)
    assert result["transition"] == "mode transiting: blueprint -> forge"
    bp = read(state_dir(tmp_path, "s1") / "blueprint-state.json")
    assert bp["active"] is False and bp["current_phase"] == "completed" and bp["iteration"] == 2
    assert bp["auto_completed_reason"] == "mode transiting: blueprint -> forge"
    assert bp["run_outcome"] == "finish" and bp["lifecycle_outcome"] == "finished"
    assert bp["transition_target_mode"] == "forge" and bp["completed_at"] and bp["completion_note"]
    c = read(state_dir(tmp_path, "s1") / "skill-active-state.json")
    assert [e["skill"] for e in c["active_skills"]] == ["forge"]
    assert read_snapshot(tmp_path, "s1").active_set() == ("forge",)


def test_sync_never_resurrects_source_from_a_stale_root_copy(tmp_path):
    mode(tmp_path, "blueprint", "s1", current_phase="planning")
    canonical(tmp_path, ["blueprint"], "s1")
    mode(tmp_path, "blueprint", None, current_phase="planning")  # stale root copy
    canonical(tmp_path, ["blueprint"])
    plan_write(tmp_path, "team", {"active": True, "current_phase": "team-plan"}, "s1").run(tmp_path)
    assert read(state_dir(tmp_path) / "blueprint-state.json")["active"] is False
    assert read(state_dir(tmp_path) / "skill-active-state.json")["active_skills"] == []
    snap = read_snapshot(tmp_path, "s1")
    assert [m.mode for m in snap.members] == ["team"]


def test_denied_activation_changes_nothing(tmp_path):
    team_forge(tmp_path)
    before = tree_digest(tmp_path)
    with pytest.raises(PolicyDenied, match="Unsupported workflow overlap: forge \\+ team \\+ autopilot"):
        plan_write(tmp_path, "autopilot", {"active": True}, "s1")
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("bad", ["..", "a/b", "x" * 65, "", "../../etc"])
def test_bad_names_are_refused_before_touching_anything(tmp_path, bad):
    team_forge(tmp_path)
    before = tree_digest(tmp_path)
    with pytest.raises(BadName):
        plan_clear(tmp_path, bad, "s1")
    with pytest.raises(BadName):
        plan_clear(tmp_path, "team", bad)
    assert tree_digest(tmp_path) == before


def test_infrastructure_names_are_not_modes(tmp_path):
    with pytest.raises(TxnError, match="infrastructure"):
        plan_clear(tmp_path, "skill-active")


modes = st.sampled_from(TRACKED_MODES)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(active=st.lists(modes, unique=True, max_size=3).filter(is_approved_set), request=modes,
       session=st.sampled_from([None, "s1"]), with_root_copies=st.booleans())
def test_property_denials_change_no_byte_and_sync_never_resurrects(active, request, session, with_root_copies):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".rcs" / "state").mkdir(parents=True)
        for m in active:
            mode(root, m, session, current_phase="executing")
            if with_root_copies and session:
                mode(root, m, None, current_phase="executing")
        canonical(root, list(active), session)
        before = tree_digest(root)
        try:
            op = plan_write(root, request, {"active": True}, session)
        except PolicyDenied:
            assert tree_digest(root) == before
            return
        op.run(root)
        snap = read_snapshot(root, session)
        final = snap.active_set()
        assert is_approved_set(final) and request in final
        sources = op.plan.summary["decision"]["auto_completed"] if op.plan.summary["decision"] else []
        for src in sources:
            assert src not in final
            assert src not in (snap.authoritative.canonical.members if snap.authoritative.canonical else ())
            if session and (root / ".rcs/state" / f"{src}-state.json").exists():
                assert read(root / ".rcs/state" / f"{src}-state.json")["active"] is False


def test_interrupted_apply_leaves_a_pending_entry_that_undo_rolls_back(tmp_path, monkeypatch):
    """A process killed between two renames: the write-ahead entry lets undo restore the old bytes."""
    from rcs_tui.state import txn
    from rcs_tui.state.journal import interrupted

    team_forge(tmp_path)
    before = tree_digest(tmp_path / ".rcs" / "state")
    real_swap = txn._swap
    calls = []

    def dying_swap(*args):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt  # stands in for kill -9 after the first file was replaced
        return real_swap(*args)

    monkeypatch.setattr(txn, "_swap", dying_swap)
    with pytest.raises(KeyboardInterrupt):
        plan_clear(tmp_path, "team", "s1").run(tmp_path)
    monkeypatch.setattr(txn, "_swap", real_swap)
    assert tree_digest(tmp_path / ".rcs" / "state") != before  # half applied
    [pending] = interrupted(read_journal(tmp_path))
    assert pending["action"] == "state clear team" and pending["complete"] is False
    undo(tmp_path, pending["id"])
    assert tree_digest(tmp_path / ".rcs" / "state") == before
    assert interrupted(read_journal(tmp_path)) == []


def test_refused_apply_leaves_no_undoable_entry(tmp_path, monkeypatch):
    """A runtime write landing while the journal is fsynced is caught by the compare-and-swap."""
    from rcs_tui.state import txn

    team_forge(tmp_path)
    op = plan_clear(tmp_path, "team", "s1")
    real_write_ahead = txn.write_ahead

    def racing_write_ahead(tree, line):
        start = real_write_ahead(tree, line)
        mode(tmp_path, "team", "s1", current_phase="team-verify")
        return start

    monkeypatch.setattr(txn, "write_ahead", racing_write_ahead)
    with pytest.raises(ChangedUnderneath):
        op.run(tmp_path)
    assert read(state_dir(tmp_path, "s1") / "team-state.json")["current_phase"] == "team-verify"
    assert read_journal(tmp_path) == []
