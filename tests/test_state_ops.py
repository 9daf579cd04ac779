"""State operations on real trees: clear, write/activation, reconciliation, dry-run, CAS, undo; what each
operation plans and answers (the refusals' words, the result JSON, the scopes a preview shows before and after)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.modes import TRACKED_MODES, BadName
from rcs_tui.core.policy import is_approved_set
from rcs_tui.files.io import digest
from rcs_tui.state import ops
from rcs_tui.state.journal import read_journal, undo
from rcs_tui.state.ops import PolicyDenied, plan_clear, plan_write
from rcs_tui.state.reader import read_snapshot
from rcs_tui.state.txn import ChangedUnderneath, TxnError
from tests.conftest import tree_digest
from tests.statefix import canonical, mode, pointer, read, state_dir, write

ROOT = ops.ROOT_SCOPE


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



def _refusal(call, *args, **kwargs) -> tuple[str, str]:
    with pytest.raises(TxnError) as caught:
        call(*args, **kwargs)
    return str(caught.value), caught.value.error_kind


def test_an_infrastructure_file_is_not_a_mode(tmp_path: Path) -> None:
    assert _refusal(ops.plan_clear, tmp_path, "skill-active") == (
        "'skill-active' is an infrastructure file, not a workflow mode", kinds.BAD_INPUT)
    assert ops.check_mode("forge") == "forge"


def test_a_missing_named_session_is_refused_listing_the_known_ones(tmp_path: Path) -> None:
    for sid in ("s2", "s1"):
        (state_dir(tmp_path, sid)).mkdir(parents=True)
    (state_dir(tmp_path) / "sessions" / "not a name").mkdir()
    (state_dir(tmp_path) / "sessions" / "afile").write_text("")
    assert _refusal(ops.plan_clear, tmp_path, "forge", "s3") == (
        "no session 's3': .rcs/state/sessions/s3/ does not exist (known sessions: s1, s2); nothing was changed",
        kinds.NOT_FOUND)
    assert _refusal(ops.plan_drop_entry, tmp_path, "forge", "s3")[0].startswith("no session 's3'")


def test_a_long_list_of_sessions_is_cut_at_twenty(tmp_path: Path) -> None:
    for n in range(25):
        (state_dir(tmp_path, f"s{n:02d}")).mkdir(parents=True)
    message, _ = _refusal(ops.require_session, ops.Layout(tmp_path), "x")
    shown = ", ".join(f"s{n:02d}" for n in range(20))
    assert f"(known sessions: {shown}, … (25 in all));" in message


def test_no_sessions_at_all_says_none(tmp_path: Path) -> None:
    message, _ = _refusal(ops.require_session, ops.Layout(tmp_path), "x")
    assert "(known sessions: none)" in message
    (state_dir(tmp_path, "x")).mkdir(parents=True)
    assert ops.require_session(ops.Layout(tmp_path), "x") == "x"


def test_an_unknown_mode_is_refused_naming_the_known_modes(tmp_path: Path) -> None:
    write(state_dir(tmp_path) / "mymode-state.json", {"active": False})
    write(state_dir(tmp_path, "s1") / "other-state.json", {"active": False})
    write(state_dir(tmp_path) / "hud-state.json", {})
    write(state_dir(tmp_path) / "sessions" / "bad name" / "zzz-state.json", {})
    message, kind = _refusal(ops.plan_clear, tmp_path, "nosuch", ROOT)
    assert kind == kinds.NOT_FOUND
    assert message == ("unknown mode 'nosuch': not a tracked mode and no nosuch-state.json or canonical entry "
                       "anywhere in .rcs/state; known modes: autopilot, autoresearch, blueprint, deep-interview, "
                       "forge, mymode, other, team, ultraqa, ultrawork; nothing was changed")


@pytest.mark.parametrize("where", ["file in a session", "canonical entry", "canonical skill"])
def test_a_mode_known_only_from_the_tree_is_cleared_quietly(tmp_path: Path, where: str) -> None:
    (state_dir(tmp_path) / "sessions" / "a bad name").mkdir(parents=True)  # listed first, passed over
    if where == "file in a session":
        write(state_dir(tmp_path, "s1") / "mymode-state.json", {"active": False})
    elif where == "canonical entry":
        write(state_dir(tmp_path, "s1") / "skill-active-state.json", {"active_skills": [{"skill": "mymode"}]})
    else:
        write(state_dir(tmp_path, "s1") / "skill-active-state.json", {"skill": "mymode", "active_skills": "x"})
    op = ops.plan_clear(tmp_path, "mymode", ROOT)
    assert op.result["cleared"] is False
    assert op.result["message"] == "nothing to clear: mymode has no mode file and no canonical entry in root"


def test_clearing_what_is_not_there_changes_nothing_and_says_so(tmp_path: Path) -> None:
    canonical(tmp_path, [])
    op = ops.plan_clear(tmp_path, "forge", ROOT)
    path = state_dir(tmp_path) / "forge-state.json"
    assert op.result == {"cleared": False, "mode": "forge", "path": str(path),
                         "message": "nothing to clear: forge has no mode file and no canonical entry in root"}
    assert op.plan.changes == () and op.plan.summary["canonical_removed"] == []
    assert op.run(tmp_path) == op.result
    assert read_journal(tmp_path) == []


def test_clearing_an_already_tombstoned_session_copy_says_so(tmp_path: Path) -> None:
    mode(tmp_path, "forge")
    canonical(tmp_path, ["forge"])
    (state_dir(tmp_path, "s1")).mkdir(parents=True)
    first = ops.plan_clear(tmp_path, "forge", "s1")
    assert [c.why for c in first.plan.changes] == ["tombstone (root copy exists)"]
    first.run(tmp_path)
    again = ops.plan_clear(tmp_path, "forge", "s1")
    assert again.result["message"] == "nothing to clear: forge is already cleared (tombstoned) in s1"
    assert again.plan.summary["scope"] == "s1"


def test_a_clear_plan_names_its_scopes_before_and_after(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "team", current_phase="team-exec")
    canonical(tmp_path, ["forge", "team"])
    op = ops.plan_clear(tmp_path, "team", ROOT)
    assert op.result == {"cleared": True, "mode": "team", "path": str(state_dir(tmp_path) / "team-state.json")}
    s = op.plan.summary
    assert (s["mode"], s["scope"], s["canonical_removed"], s["active_after"]) == ("team", "root", ["root:team"],
                                                                                  ["forge"])
    assert s["scopes"] == [{"scope": "root", "before": ["forge", "team"], "after": ["forge"]}]
    assert [(c.path.name, c.action, c.why) for c in op.plan.changes] == [
        ("team-state.json", "delete", "mode file deleted"),
        ("skill-active-state.json", "write", "canonical entry removed: team")]
    done = op.run(tmp_path, actor="tester")
    entry = read_journal(tmp_path)[-1]
    assert done == {**op.result, "journal_id": entry["id"]} and entry["actor"] == "tester"
    assert entry["action"] == "state clear team"


def test_clearing_in_every_session_warns_and_counts(tmp_path: Path) -> None:
    for sid in (None, "s1", "s2"):
        mode(tmp_path, "team", sid, current_phase="team-exec")
        canonical(tmp_path, ["team"], sid)
    mode(tmp_path, "forge", "s2", current_phase="executing")
    canonical(tmp_path, ["team", "forge"], "s2")
    op = ops.plan_clear(tmp_path, "team", all_sessions=True)
    warning = "clearing team in root and 2 sessions: agents still running in those sessions may write it again"
    paths = [str(state_dir(tmp_path, sid) / "team-state.json") for sid in (None, "s1", "s2")]
    assert op.result == {"cleared": True, "mode": "team", "all_sessions": True, "removed": 3, "paths": paths,
                         "warning": warning}
    s = op.plan.summary
    assert (s["scope"], s["warning"], s["canonical_removed"]) == ("all_sessions", warning,
                                                                  ["root:team", "s1:team", "s2:team"])
    assert [x["scope"] for x in s["scopes"]] == ["root", "s1", "s2"]
    assert s["scopes"][2] == {"scope": "s2", "before": ["forge", "team"], "after": ["forge"]}
    whys = [(c.path.relative_to(tmp_path).as_posix(), c.action, c.why) for c in op.plan.changes]
    assert (".rcs/state/sessions/s1/skill-active-state.json", "delete", "canonical set emptied (team)") in whys
    assert (".rcs/state/skill-active-state.json", "write", "canonical entry removed: team") in whys
    assert (".rcs/state/sessions/s2/skill-active-state.json", "write", "canonical entry removed: team") in whys
    assert (".rcs/state/team-state.json", "delete", "mode file deleted (all sessions)") in whys
    op.run(tmp_path)
    assert not (state_dir(tmp_path, "s1") / "skill-active-state.json").exists()
    assert read(state_dir(tmp_path) / "skill-active-state.json")["active_skills"] == []
    assert [e["skill"] for e in read(state_dir(tmp_path, "s2") / "skill-active-state.json")["active_skills"]] == [
        "forge"]


def test_clearing_in_every_session_with_nothing_there_says_so(tmp_path: Path) -> None:
    (state_dir(tmp_path, "s1")).mkdir(parents=True)
    op = ops.plan_clear(tmp_path, "forge", all_sessions=True)
    message = "nothing to clear: forge has no mode file and no canonical entry in root or any session"
    assert op.result == {"cleared": False, "mode": "forge", "all_sessions": True, "removed": 0, "paths": [],
                         "message": message}
    assert op.plan.summary == {"mode": "forge", "scope": "all_sessions", "canonical_removed": [], "message": message}
    assert op.plan.action == "state clear forge --all-sessions"


def test_a_file_that_cannot_be_read_is_never_planned_on(tmp_path: Path) -> None:
    (state_dir(tmp_path)).mkdir(parents=True)
    os.mkfifo(state_dir(tmp_path) / "forge-state.json")
    assert _refusal(ops.plan_clear, tmp_path, "forge", ROOT)[0] == (
        ".rcs/state/forge-state.json: not a regular file (a FIFO); not read; refusing to plan a change to a file "
        "that could not be read (nothing was changed)")
    os.unlink(state_dir(tmp_path) / "forge-state.json")
    write(state_dir(tmp_path) / "forge-state.json", "{broken")
    write(state_dir(tmp_path) / "skill-active-state.json", "[1]")
    assert _refusal(ops.plan_write, tmp_path, "forge", {"active": True})[0] == (
        ".rcs/state/forge-state.json: invalid JSON at line 1 column 2: Expecting property name enclosed in double "
        "quotes (truncated mid-write?); fix or clear it first (nothing was changed)")
    assert _refusal(ops.plan_clear, tmp_path, "team", ROOT)[0] == (
        ".rcs/state/skill-active-state.json: expected a JSON object, got list; fix or clear it first "
        "(nothing was changed)")


def test_dropping_a_stale_entry_keeps_the_mode_file(tmp_path: Path) -> None:
    write(state_dir(tmp_path, "s1") / "forge-state.json", {"active": False, "current_phase": "complete"})
    canonical(tmp_path, ["forge"], "s1")
    op = ops.plan_drop_entry(tmp_path, "forge", "s1")
    assert op.result == {"dropped": True, "mode": "forge"}
    assert op.plan.action == "drop stale canonical entry forge"
    assert op.plan.summary == {"mode": "forge", "scope": "s1", "canonical_removed": ["s1:forge"], "active_after": []}
    op.run(tmp_path)
    assert (state_dir(tmp_path, "s1") / "forge-state.json").exists()
    assert read(state_dir(tmp_path, "s1") / "skill-active-state.json")["active_skills"] == []
    again = ops.plan_drop_entry(tmp_path, "forge", "s1")
    assert again.result == {"dropped": False, "mode": "forge"} and again.plan.changes == ()


def test_a_stale_pointer_is_removed_only_if_still_there(tmp_path: Path) -> None:
    pointer(tmp_path, "s1")
    op = ops.plan_delete_pointer(tmp_path)
    assert op.result == {"removed": True} and op.plan.action == "remove stale-dead session.json"
    assert [(c.action, c.why) for c in op.plan.changes] == [("delete", "stale-dead session-pointer".replace(
        "session-pointer", "session pointer"))]
    op.run(tmp_path)
    assert not (state_dir(tmp_path) / "session.json").exists()
    assert ops.plan_delete_pointer(tmp_path).result == {"removed": False}


def test_reading_a_mode_says_which_scope_answered(tmp_path: Path) -> None:
    mode(tmp_path, "forge", None, current_phase="executing")
    root_file = state_dir(tmp_path) / "forge-state.json"
    got = ops.read_mode(tmp_path, "forge", "s1")
    assert got == {"active": True, "current_phase": "executing",
                   "_scope": {"scope": "root", "session_id": None, "fallback": True, "path": str(root_file)}}
    got = ops.read_mode(tmp_path, "forge", ROOT)
    assert got["_scope"] == {"scope": "root", "session_id": None, "fallback": False, "path": str(root_file)}
    mode(tmp_path, "forge", "s1", current_phase="verifying")
    got = ops.read_mode(tmp_path, "forge", "s1")
    assert got["current_phase"] == "verifying" and got["_scope"] == {
        "scope": "session", "session_id": "s1", "fallback": False,
        "path": str(state_dir(tmp_path, "s1") / "forge-state.json")}
    assert ops.read_mode(tmp_path, "team", ROOT) == {
        "exists": False, "mode": "team", "_scope": {"searched": [str(state_dir(tmp_path) / "team-state.json")]}}
    write(state_dir(tmp_path) / "team-state.json", "[]")
    assert _refusal(ops.read_mode, tmp_path, "team", ROOT)[0] == (
        ".rcs/state/team-state.json: expected a JSON object, got list")


def test_status_lists_each_mode_once_from_the_first_scope_holding_it(tmp_path: Path) -> None:
    mode(tmp_path, "forge", None, current_phase="executing")
    mode(tmp_path, "team", None, current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="verifying")
    canonical(tmp_path, ["forge"], "s1")
    pointer(tmp_path, "s1")
    snap = read_snapshot(tmp_path)
    status = ops.get_status(snap)["statuses"]
    assert list(status) == ["forge", "team"]
    assert (status["forge"]["phase"], status["forge"]["scope"], status["forge"]["fallback"]) == (
        "verifying", "session", False)
    assert (status["team"]["scope"], status["team"]["session_id"], status["team"]["fallback"]) == ("root", None, True)
    assert "path" in status["team"] and "error" not in status["team"]
    assert list(ops.get_status(snap, "team")["statuses"]) == ["team"]
    assert ops.list_active(snap) == {"active_modes": list(snap.active_set())}


def test_a_write_merges_fields_and_reports_the_change(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing", iteration=1)
    canonical(tmp_path, ["forge"])
    op = ops.plan_write(tmp_path, "forge", {"iteration": 2, "mode": "x", "session_id": "y", "all_sessions": True,
                                            "workingDirectory": "/", "state": {"note": "n"}}, ROOT)
    path = state_dir(tmp_path) / "forge-state.json"
    assert op.result == {"success": True, "mode": "forge", "path": str(path), "changed": True}
    assert op.plan.summary == {"mode": "forge", "scope": "root", "decision": None, "active_after": ["forge"]}
    op.run(tmp_path)
    assert read(path) == {"active": True, "current_phase": "executing", "iteration": 2, "note": "n"}


def test_a_write_of_values_already_held_writes_nothing(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    before = (state_dir(tmp_path) / "forge-state.json").read_bytes()
    op = ops.plan_write(tmp_path, "forge", {"current_phase": "executing"}, ROOT)
    message = "nothing to write: .rcs/state/forge-state.json already holds every given field"
    assert op.result == {"success": True, "mode": "forge", "path": str(state_dir(tmp_path) / "forge-state.json"),
                         "changed": False, "message": message}
    assert op.plan.changes == () and op.plan.summary["message"] == message
    op.run(tmp_path)
    assert (state_dir(tmp_path) / "forge-state.json").read_bytes() == before and read_journal(tmp_path) == []


def test_deactivating_by_a_write_drops_the_canonical_entry(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "team", current_phase="team-exec")
    canonical(tmp_path, ["forge", "team"])
    op = ops.plan_write(tmp_path, "team", {"active": False}, ROOT)
    assert op.plan.summary["active_after"] == ["forge"]
    assert [c.why for c in op.plan.changes] == ["canonical entry removed: team", "merged write"]
    op.run(tmp_path)
    assert [e["skill"] for e in read(state_dir(tmp_path) / "skill-active-state.json")["active_skills"]] == ["forge"]
    assert read(state_dir(tmp_path) / "team-state.json")["active"] is False


def test_an_activation_records_the_policy_decision(tmp_path: Path) -> None:
    canonical(tmp_path, [])
    op = ops.plan_write(tmp_path, "forge", {"active": True, "current_phase": "executing"}, ROOT)
    assert op.plan.summary["decision"]["allowed"] is True and op.plan.summary["active_after"] == ["forge"]
    assert [c.why for c in op.plan.changes][-2:] == [f"canonical set: {op.plan.summary['decision']['decision']} forge",
                                                     "merged write"]
    op.run(tmp_path)
    canon = read(state_dir(tmp_path) / "skill-active-state.json")
    assert [(e["skill"], e.get("phase", e.get("current_phase"))) for e in canon["active_skills"]][0][0] == "forge"


def test_an_auto_completing_activation_terminalizes_the_stale_root_copy(tmp_path: Path) -> None:
    mode(tmp_path, "blueprint", None, current_phase="planning")
    canonical(tmp_path, ["blueprint"])
    mode(tmp_path, "blueprint", "s1", current_phase="planning")
    canonical(tmp_path, ["blueprint"], "s1")
    op = ops.plan_write(tmp_path, "forge", {"active": True}, "s1")
    if op.plan.summary["decision"]["decision"] != "auto-complete":
        pytest.skip("policy does not auto-complete blueprint → forge")
    whys = [c.why for c in op.plan.changes]
    assert "stale root copy terminalized so it cannot resurrect" in whys
    assert op.result["transition"] == op.plan.summary["decision"]["message"]
    op.run(tmp_path)
    assert read(state_dir(tmp_path) / "blueprint-state.json")["active"] is False
    assert read(state_dir(tmp_path, "s1") / "forge-state.json")["transition_message"] == op.result["transition"]
    assert "blueprint" not in json.dumps(read(state_dir(tmp_path) / "skill-active-state.json")["active_skills"])


def test_an_operation_with_journal_bookkeeping_only_is_journaled(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    op = ops.Operation(ops.Plan("roll back x"), {"ok": True}, {"undoes": "x"})
    out = op.run(tmp_path)
    entry = read_journal(tmp_path)[-1]
    assert out == {"ok": True, "journal_id": entry["id"]} and entry["undoes"] == "x"
    assert ops.Operation(ops.Plan("a")).preview(tmp_path)["dry_run"] is True


def test_a_mode_is_known_from_any_valid_session_past_an_invalid_directory_name(tmp_path: Path) -> None:
    (state_dir(tmp_path) / "sessions" / "a bad name").mkdir(parents=True)
    write(state_dir(tmp_path, "s1") / "mymode-state.json", {"active": False, "current_phase": "cleared"})
    write(state_dir(tmp_path) / "mymode-state.json", {"active": True})
    op = ops.plan_clear(tmp_path, "mymode", "s1")
    assert op.result["message"] == "nothing to clear: mymode is already cleared (tombstoned) in s1"


def test_a_canonical_set_naming_other_modes_or_leading_outside_does_not_make_a_mode_known(tmp_path: Path) -> None:
    write(state_dir(tmp_path) / "skill-active-state.json", {"skill": "forge", "active_skills": [{"skill": "forge"}]})
    outside = write(tmp_path / "elsewhere.json", {"skill": "mymode", "active_skills": [{"skill": "mymode"}]})
    (state_dir(tmp_path, "s1")).mkdir(parents=True)
    os.symlink(outside, state_dir(tmp_path, "s1") / "skill-active-state.json")
    message, _ = _refusal(ops.plan_clear, tmp_path, "mymode", ROOT)
    assert message.startswith("unknown mode 'mymode'")


def test_a_tombstone_that_is_not_usable_state_is_written_again(tmp_path: Path) -> None:
    mode(tmp_path, "forge")
    canonical(tmp_path, ["forge"])
    path = state_dir(tmp_path, "s1") / "forge-state.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"active": false, "current_phase": "cleared", "mode": "forge", "session_id": "s1", '
                    '"note": "\\ud800"}')
    op = ops.plan_clear(tmp_path, "forge", "s1")
    assert [c.why for c in op.plan.changes] == ["tombstone (root copy exists)"]


def test_clearing_in_every_session_refuses_a_file_it_cannot_read(tmp_path: Path) -> None:
    (state_dir(tmp_path, "s1")).mkdir(parents=True)
    os.mkfifo(state_dir(tmp_path, "s1") / "forge-state.json")
    assert _refusal(ops.plan_clear, tmp_path, "forge", all_sessions=True)[0] == (
        ".rcs/state/sessions/s1/forge-state.json: not a regular file (a FIFO); not read; refusing to plan a change "
        "to a file that could not be read (nothing was changed)")


def test_reading_a_mode_nowhere_lists_every_scope_searched(tmp_path: Path) -> None:
    assert ops.read_mode(tmp_path, "forge", "s9") == {
        "exists": False, "mode": "forge",
        "_scope": {"searched": [str(state_dir(tmp_path, "s9") / "forge-state.json"),
                                str(state_dir(tmp_path) / "forge-state.json")]}}


def test_reading_a_mode_file_linked_outside_the_project_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere.json", {"active": True})
    (state_dir(tmp_path)).mkdir(parents=True)
    os.symlink(outside, state_dir(tmp_path) / "forge-state.json")
    assert _refusal(ops.read_mode, tmp_path, "forge", ROOT)[0] == (
        ".rcs/state/forge-state.json: symlink leads outside .rcs/; not followed")


def test_status_of_an_explicit_session_is_that_session_alone_each_field_named(tmp_path: Path) -> None:
    mode(tmp_path, "team", None, current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="verifying", iteration=2)
    write(state_dir(tmp_path, "s1") / "ultrawork-state.json", "{torn")
    status = ops.get_status(read_snapshot(tmp_path, "s1"))["statuses"]
    forge_path = state_dir(tmp_path, "s1") / "forge-state.json"
    assert status["forge"] == {"active": True, "phase": "verifying", "path": str(forge_path),
                               "data": {"active": True, "current_phase": "verifying", "iteration": 2},
                               "scope": "session", "session_id": "s1", "fallback": False}
    assert list(status["forge"]) == ["active", "phase", "path", "data", "scope", "session_id", "fallback"]
    assert status["ultrawork"]["error"].startswith("invalid JSON at line 1 column 2")
    assert "team" not in status
    assert ops.get_status(read_snapshot(tmp_path, "s9"))["statuses"]["team"]["fallback"] is True


def test_plans_shown_together_share_one_read_of_each_file(tmp_path: Path) -> None:
    write(state_dir(tmp_path, "s1") / "forge-state.json", {"active": False, "current_phase": "complete"})
    canonical(tmp_path, ["forge", "team"], "s1")
    pointer(tmp_path, "s1")
    reads = ops.PlanReads()
    first = ops.plan_drop_entry(tmp_path, "forge", "s1", reads)
    canon = state_dir(tmp_path, "s1") / "skill-active-state.json"
    canon.write_text(canon.read_text() + " ")  # changed after the shared read: the shared plans do not see it
    again = ops.plan_drop_entry(tmp_path, "forge", "s1", reads)
    assert again.plan.changes[0].expect == first.plan.changes[0].expect != read_target_sha(canon)
    assert ops.plan_drop_entry(tmp_path, "forge", None).plan.changes[0].expect == read_target_sha(canon)
    pointer_reads = ops.PlanReads()
    before = ops.plan_delete_pointer(tmp_path, pointer_reads)
    pointer(tmp_path, "s2")
    assert ops.plan_delete_pointer(tmp_path, pointer_reads).plan.changes == before.plan.changes
    snap = read_snapshot(tmp_path)
    reads.use(snap)
    assert reads.scope(ops.Layout(tmp_path), "s1") is snap.scope("s1")


def read_target_sha(path: Path) -> str:
    return digest(path.read_bytes())


def test_a_pointer_plan_removes_only_a_pointer_there_and_refuses_an_unreadable_one(tmp_path: Path) -> None:
    (state_dir(tmp_path)).mkdir(parents=True)
    op = ops.plan_delete_pointer(tmp_path)
    assert op.plan.changes == () and op.result == {"removed": False}
    assert op.preview(tmp_path) == {"dry_run": True, "action": "remove stale-dead session.json", "changes": [],
                                    "plan_fingerprint": op.plan.fingerprint(tmp_path)}
    os.mkfifo(state_dir(tmp_path) / "session.json")
    assert _refusal(ops.plan_delete_pointer, tmp_path)[0] == (
        ".rcs/state/session.json: not a regular file (a FIFO); not read; refusing to plan a change to a file that "
        "could not be read (nothing was changed)")


def test_a_dropped_entry_leaves_a_timestamped_canonical_set(tmp_path: Path) -> None:
    write(state_dir(tmp_path) / "forge-state.json", {"active": False, "current_phase": "complete"})
    write(state_dir(tmp_path) / "skill-active-state.json", {"skill": "forge", "active": True})
    ops.plan_drop_entry(tmp_path, "forge", ROOT).run(tmp_path)
    canon = read(state_dir(tmp_path) / "skill-active-state.json")
    assert canon["active"] is False and canon["updated_at"].endswith("Z")


def test_clearing_an_unknown_mode_in_every_session_is_refused(tmp_path: Path) -> None:
    (state_dir(tmp_path, "s1")).mkdir(parents=True)
    message, kind = _refusal(ops.plan_clear, tmp_path, "nosuch", all_sessions=True)
    assert message.startswith("unknown mode 'nosuch'") and kind == kinds.NOT_FOUND


def test_clearing_in_every_session_says_which_mode(tmp_path: Path) -> None:
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    write(state_dir(tmp_path) / "skill-active-state.json", {"skill": "team", "active": True})
    op = ops.plan_clear(tmp_path, "team", all_sessions=True)
    assert op.plan.summary["mode"] == "team" and op.plan.action == "state clear team --all-sessions"
    op.run(tmp_path)
    assert read(state_dir(tmp_path) / "skill-active-state.json")["updated_at"].endswith("Z")
    empty = ops.plan_clear(tmp_path, "team", all_sessions=True)
    assert empty.plan.changes == ()


def test_a_write_names_a_bad_session_id(tmp_path: Path) -> None:
    with pytest.raises(BadName) as caught:
        ops.plan_write(tmp_path, "forge", {"active": True}, "../x")
    assert str(caught.value) == "invalid session id '../x': must match ^[A-Za-z0-9_-]{1,64}$"


def test_a_write_into_a_new_session_activates_there(tmp_path: Path) -> None:
    (tmp_path / ".rcs").mkdir()
    op = ops.plan_write(tmp_path, "forge", {"active": True, "current_phase": "executing"}, "s9")
    op.run(tmp_path)
    canon = read(state_dir(tmp_path, "s9") / "skill-active-state.json")
    assert canon["source"] == "rcs-tui" and canon["session_id"] == "s9"
    assert canon["active_skills"][0]["phase"] == "executing" and canon["active_skills"][0]["session_id"] == "s9"
    ops.plan_write(tmp_path, "ultrawork", {"active": True}, "s9", source="cli test").run(tmp_path)
    canon = read(state_dir(tmp_path, "s9") / "skill-active-state.json")
    assert [e["skill"] for e in canon["active_skills"]] == ["forge", "ultrawork"] and canon["source"] == "cli test"


def test_a_write_that_changes_nothing_is_named_as_a_write(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    assert ops.plan_write(tmp_path, "forge", {"active": True}, ROOT).plan.action == "state write forge"


def test_deactivating_without_a_canonical_set_writes_only_the_mode_file(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    op = ops.plan_write(tmp_path, "forge", {"active": False}, ROOT)
    assert [c.path.name for c in op.plan.changes] == ["forge-state.json"]


def test_deactivating_in_a_session_drops_only_that_session_s_entry(tmp_path: Path) -> None:
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    write(state_dir(tmp_path, "s1") / "skill-active-state.json",
          {"skill": "team", "active": True, "session_id": "s1",
           "active_skills": [{"skill": "team", "active": True, "session_id": "s2"},
                             {"skill": "team", "active": True, "session_id": "s1"}]})
    ops.plan_write(tmp_path, "team", {"active": False}, "s1").run(tmp_path)
    entries = read(state_dir(tmp_path, "s1") / "skill-active-state.json")["active_skills"]
    assert entries == [{"skill": "team", "active": True, "session_id": "s2"}]


def test_a_loopback_from_a_review_that_is_not_clean_completes_autopilot(tmp_path: Path) -> None:
    mode(tmp_path, "autopilot", current_phase="code-review", code_review_verdict="changes requested")
    canonical(tmp_path, ["autopilot"])
    op = ops.plan_write(tmp_path, "blueprint", {"active": True}, ROOT, source="runtime")
    message = op.plan.summary["decision"]["message"]
    assert op.plan.summary["decision"]["decision"] == "auto-complete"
    assert op.plan.changes[0].why == f"auto-completed ({message})"
    op.run(tmp_path)
    done = read(state_dir(tmp_path) / "autopilot-state.json")
    assert (done["active"], done["transition_source"], done["transition_target_mode"]) == (
        False, "runtime", "blueprint")
    assert done["completed_at"].endswith("Z")


def test_an_auto_completion_in_a_session_also_ends_the_active_root_copy(tmp_path: Path) -> None:
    mode(tmp_path, "blueprint", None, current_phase="planning", iteration=4)
    canonical(tmp_path, ["blueprint"])
    mode(tmp_path, "blueprint", "s1", current_phase="planning")
    canonical(tmp_path, ["blueprint"], "s1")
    ops.plan_write(tmp_path, "forge", {"active": True}, "s1", source="runtime").run(tmp_path)
    root_copy = read(state_dir(tmp_path) / "blueprint-state.json")
    assert root_copy["iteration"] == 4
    assert (root_copy["active"], root_copy["transition_source"], root_copy["transition_target_mode"]) == (
        False, "runtime", "forge")
    root_canon = read(state_dir(tmp_path) / "skill-active-state.json")
    assert root_canon["active_skills"] == [] and root_canon["updated_at"].endswith("Z")


def test_an_operation_runs_only_the_plan_confirmed(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    op = ops.plan_clear(tmp_path, "forge", ROOT)
    with pytest.raises(TxnError) as caught:
        op.run(tmp_path, expect_plan="sha256:other")
    assert caught.value.error_kind == kinds.PLAN_CHANGED and (state_dir(tmp_path) / "forge-state.json").exists()
    op.run(tmp_path, expect_plan=op.plan.fingerprint(tmp_path))
    assert not (state_dir(tmp_path) / "forge-state.json").exists()


def test_a_named_session_must_be_a_valid_name(tmp_path: Path) -> None:
    with pytest.raises(BadName) as caught:
        ops.plan_clear(tmp_path, "forge", "../x")
    assert str(caught.value) == "invalid session id '../x': must match ^[A-Za-z0-9_-]{1,64}$"


@pytest.mark.parametrize(("count", "suffix"), [(20, ""), (21, ", … (21 in all)")])
def test_twenty_known_sessions_are_all_named(tmp_path: Path, count: int, suffix: str) -> None:
    for n in range(count):
        (state_dir(tmp_path, f"s{n:02d}")).mkdir(parents=True)
    message, _ = _refusal(ops.require_session, ops.Layout(tmp_path), "x")
    assert f"s19{suffix}); nothing was changed" in message


def test_a_dropped_entry_in_a_session_shows_that_session_s_active_set(tmp_path: Path) -> None:
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    write(state_dir(tmp_path, "s1") / "forge-state.json", {"active": False, "current_phase": "complete"})
    canonical(tmp_path, ["forge", "team"], "s1")
    assert ops.plan_drop_entry(tmp_path, "forge", "s1").plan.summary["active_after"] == ["team"]
    write(state_dir(tmp_path) / "forge-state.json", {"active": False, "current_phase": "complete"})
    canonical(tmp_path, ["forge"])
    assert ops.plan_drop_entry(tmp_path, "forge", ROOT).plan.summary["scope"] == "root"


def test_plans_shown_with_a_diagnosis_show_the_active_sets_it_read(tmp_path: Path) -> None:
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")
    write(state_dir(tmp_path, "s1") / "forge-state.json", {"active": False, "current_phase": "complete"})
    canonical(tmp_path, ["forge", "team"], "s1")
    reads = ops.PlanReads()
    reads.use(read_snapshot(tmp_path))
    mode(tmp_path, "team", "s1", active=False, current_phase="complete")  # changed after the diagnosis read
    assert ops.plan_drop_entry(tmp_path, "forge", "s1", reads).plan.summary["active_after"] == ["team", "ultrawork"]
    scopes = ops.plan_clear(tmp_path, "ultrawork", "s1", reads=reads).plan.summary["scopes"]
    assert scopes == [{"scope": "s1", "before": ["team", "ultrawork"], "after": ["team"]}]


def test_a_preview_lists_root_first_then_sessions_by_name(tmp_path: Path) -> None:
    mode(tmp_path, "team", "s2", current_phase="team-exec")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    layout = ops.Layout(tmp_path)
    changes = [ops.FileChange(layout.mode_file("team", sid), "delete", None, None) for sid in ("s2", "s9", None, "s1")]
    assert [(s["scope"], s["before"], s["after"]) for s in ops.scope_changes(layout, changes)] == [
        ("root", [], []), ("s1", ["team"], []), ("s2", ["team"], []), ("s9", [], [])]


def test_a_preview_s_after_set_follows_the_planned_bytes_of_each_mode_file(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "ultrawork", current_phase="executing")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    layout = ops.Layout(tmp_path)

    def planned(mode_name: str, sid: str | None, doc: dict) -> ops.FileChange:
        return ops.FileChange(layout.mode_file(mode_name, sid), "write", json.dumps(doc).encode(), None)

    changes = [planned("forge", None, {"active": False, "current_phase": "complete"}),
               planned("blueprint", None, {"active": True, "current_phase": "planning"}),
               planned("mymode", None, {"active": True}),
               planned("autopilot", None, {"active": False}),
               planned("ultraqa", "s1", {"active": True, "current_phase": "qa"}),
               ops.FileChange(layout.mode_file("team", "s1"), "delete", None, None)]
    assert [(s["scope"], s["before"], s["after"]) for s in ops.scope_changes(layout, changes)] == [
        ("root", ["forge", "ultrawork"], ["blueprint", "ultrawork"]), ("s1", ["team"], ["ultraqa"])]
