"""The doctor's findings and repair plans, in-process: what each finding says, which repair it proposes,
and what `fix` reports and leaves on disk."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rcs_tui.project import doctor
from rcs_tui.project.doctor import Finding, diagnose, fix, snapshot_findings
from rcs_tui.state import txn
from rcs_tui.state.journal import read_journal
from rcs_tui.state.ops import plan_clear
from rcs_tui.state.reader import read_snapshot
from tests.statefix import canonical, dead_pid, mode, pointer, read, state_dir, write


def _one(found: list[Finding], kind: str) -> Finding:
    [f] = [f for f in found if f.kind == kind]
    return f


def _row(f: Finding) -> tuple:
    return (f.id, f.severity, f.scope, f.subject, f.repair)


def test_an_orphaned_active_mode_file_is_found_with_its_repair(tmp_path: Path) -> None:
    forge = mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, [])
    found = [f for f in diagnose(tmp_path) if f.kind == "orphan"]
    assert [_row(f) for f in found] == [("orphan:root:forge", "warn", "root", "forge", "clear the orphaned mode file")]
    assert found[0].message == "forge has an active mode file in root that no canonical entry lists"
    op = found[0].plan()  # type: ignore[misc]
    assert [c.path for c in op.plan.changes] == [forge]


def test_a_stale_member_is_dropped_and_its_mode_file_kept(tmp_path: Path) -> None:
    canonical(tmp_path, ["forge"], "s1")
    mode(tmp_path, "forge", "s1", active=False, current_phase="complete")
    f = _one(diagnose(tmp_path, "s1"), "stale-member")
    assert _row(f) == ("stale:s1:forge", "warn", "s1", "forge",
                       "drop the stale canonical entry (the mode file is kept)")
    assert f.message.startswith("forge is in the canonical set of s1 but ") and "but but" not in f.message
    result = fix(tmp_path, [f], session_id="s1")
    assert result["failed"] == [] and result["applied"][0]["held"] is True
    assert (state_dir(tmp_path, "s1") / "forge-state.json").exists()


def test_an_unreadable_member_is_reported_never_repaired(tmp_path: Path) -> None:
    canonical(tmp_path, ["forge"])
    write(state_dir(tmp_path) / "forge-state.json", "{torn")
    f = _one(diagnose(tmp_path), "unreadable-member")
    assert _row(f) == ("stale:root:forge", "warn", "root", "forge", None) and f.plan is None
    assert f.message == ("forge is in the canonical set of root but its mode file could not be read (invalid JSON "
                         "at line 1 column 2: Expecting property name enclosed in double quotes (truncated "
                         "mid-write?)); not repaired: fix or clear the file by hand")


def test_a_root_survivor_is_an_error_with_a_repair_of_the_root_copy(tmp_path: Path) -> None:
    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, [], "s1")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    canonical(tmp_path, ["forge"], "s1")
    f = _one(diagnose(tmp_path, "s1"), "root-survivor")
    assert _row(f) == ("root-survivor:root:team", "error", "root", "team", "clear the root copy")
    assert f.message.startswith("root team-state.json is still active (")
    assert f.message.endswith("); it can resurrect team after a clear")
    [change] = f.plan().plan.changes  # type: ignore[misc]
    assert change.path == state_dir(tmp_path) / "team-state.json"


@pytest.mark.parametrize(("keys", "found"), [
    ({"owner_pid": "dead"}, True), ({"pid": "dead"}, True), ({"owner_pid": "live", "pid": "dead"}, False),
    ({"owner_pid": "live"}, False), ({}, False)])
def test_a_dead_owner_is_judged_by_the_first_pid_recorded(tmp_path: Path, keys: dict, found: bool) -> None:
    pids = {"dead": dead_pid(), "live": os.getpid()}
    mode(tmp_path, "forge", current_phase="executing", **{k: pids[v] for k, v in keys.items()})
    mode(tmp_path, "team", "s1", active=False, current_phase="complete", owner_pid=dead_pid())
    canonical(tmp_path, ["forge"])
    hits = [f for f in diagnose(tmp_path) if f.kind == "dead-owner"]
    assert len(hits) == found
    if found:
        assert _row(hits[0]) == ("dead-owner:root:forge", "error", "root", "forge", "clear the mode")
        assert hits[0].message.startswith("forge is marked active but its owner process is gone (")


def test_a_dead_owner_in_a_session_is_cleared_there(tmp_path: Path) -> None:
    mode(tmp_path, "forge", "s1", current_phase="executing", owner_pid=dead_pid())
    canonical(tmp_path, ["forge"], "s1")
    f = _one(diagnose(tmp_path, "s1"), "dead-owner")
    assert f.id == "dead-owner:s1:forge" and f.scope == "s1"
    fix(tmp_path, [f], session_id="s1")
    assert not (state_dir(tmp_path, "s1") / "forge-state.json").exists()


def test_a_softener_is_reported_with_its_field_and_phrases(tmp_path: Path) -> None:
    mode(tmp_path, "forge", "s1", active=False, current_phase="complete", run_outcome="finish",
         completion_note="All green. If you want, I can also refactor the API.")
    f = _one(diagnose(tmp_path, "s1"), "softener")
    assert _row(f) == ("softener:s1:forge", "info", "s1", "forge", None)
    assert f.message.startswith("forge ended (") and "with an optional follow-up softener (completion_note: " in \
        f.message and f.message.endswith("); the terminal handoff should state the outcome and next owner")


def test_a_stale_dead_pointer_is_removed(tmp_path: Path) -> None:
    pointer(tmp_path, "s9", pid=dead_pid())
    f = _one(diagnose(tmp_path), "stale-dead-pointer")
    assert _row(f) == ("stale-dead-pointer", "warn", "root", "session.json", "remove the stale-dead session.json")
    assert f.message.startswith("session.json points at s9, but ") and "stale-dead:" not in f.message


def test_a_file_error_names_the_file(tmp_path: Path) -> None:
    write(state_dir(tmp_path) / "forge-state.json", "[1]")
    f = _one(diagnose(tmp_path), "file-error")
    assert _row(f) == ("file-error:.rcs/state/forge-state.json", "warn", "-", ".rcs/state/forge-state.json", None)
    assert f.message == ".rcs/state/forge-state.json: expected a JSON object, got list"


def test_findings_are_ordered_by_severity_then_kind(tmp_path: Path) -> None:
    pointer(tmp_path, "s9", pid=dead_pid())
    mode(tmp_path, "forge", current_phase="executing", owner_pid=dead_pid())
    mode(tmp_path, "team", current_phase="team-exec")
    write(state_dir(tmp_path) / "ultrawork-state.json", "[1]")
    mode(tmp_path, "blueprint", active=False, current_phase="complete", run_outcome="finish",
         completion_note="Done. If you want, I can also add tests.")
    canonical(tmp_path, ["forge"])
    assert [f.kind for f in diagnose(tmp_path)] == ["dead-owner", "file-error", "orphan", "stale-dead-pointer",
                                                    "softener"]


def _interrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canonical(tmp_path, ["forge", "team"], "s1")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    real = txn._swap
    calls: list[object] = []

    def killed(step: object) -> None:
        calls.append(step)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(step)  # type: ignore[arg-type]

    monkeypatch.setattr(txn, "_swap", killed)
    with pytest.raises(KeyboardInterrupt):
        plan_clear(tmp_path, "team", "s1").run(tmp_path)
    monkeypatch.undo()


def test_an_interrupted_action_says_how_many_files_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt(tmp_path, monkeypatch)
    [entry] = read_journal(tmp_path)
    f = _one(diagnose(tmp_path, "s1"), "interrupted-action")
    assert _row(f) == (f"interrupted:{entry['id']}", "error", "journal", "state clear team",
                       "roll back to the before-images")
    assert f.message == (f"operator action 'state clear team' (journal {entry['id']}) was interrupted: "
                         "1 of 2 files changed")


def test_fix_rolls_back_an_interruption_first_then_repairs_what_is_still_wrong(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt(tmp_path, monkeypatch)
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")  # an orphan the rollback leaves in place
    found = diagnose(tmp_path, "s1")
    result = fix(tmp_path, found, session_id="s1")
    assert [a["id"].split(":")[0] for a in result["applied"]] == ["interrupted", "orphan"]
    assert all(a["held"] for a in result["applied"]) and result["failed"] == [] and result["remaining"] == []
    assert (state_dir(tmp_path, "s1") / "team-state.json").exists()
    assert not (state_dir(tmp_path, "s1") / "ultrawork-state.json").exists()


def test_fix_of_chosen_ids_repairs_only_those(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "team", current_phase="team-exec")
    canonical(tmp_path, [])
    found = diagnose(tmp_path)
    result = fix(tmp_path, found, ["orphan:root:team"])
    assert [a["id"] for a in result["applied"]] == ["orphan:root:team"]
    assert result["remaining"] == ["orphan:root:forge"]
    assert (state_dir(tmp_path) / "forge-state.json").exists()
    assert not (state_dir(tmp_path) / "team-state.json").exists()


def test_a_repair_that_fails_is_reported_and_the_rest_still_run(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "team", current_phase="team-exec")
    canonical(tmp_path, [])
    found = diagnose(tmp_path)
    (state_dir(tmp_path) / "forge-state.json").write_text('{"active": true, "changed": 1}')
    found_forge = next(f for f in found if f.id == "orphan:root:forge")

    def stale_plan(reads: object = None) -> object:
        op = found_forge.plan()  # type: ignore[misc]
        (state_dir(tmp_path) / "forge-state.json").write_text('{"active": true, "changed": 2}')
        return op

    broken = Finding(**{**found_forge.__dict__, "plan": stale_plan})
    result = fix(tmp_path, [broken, *[f for f in found if f.id != broken.id]])
    assert [x["id"] for x in result["failed"]] == ["orphan:root:forge"]
    assert "changed underneath" in result["failed"][0]["error"]
    assert [a["id"] for a in result["applied"]] == ["orphan:root:team"]
    assert result["remaining"] == ["orphan:root:forge"]


def test_a_repair_not_confirmed_stops_it_and_every_later_one(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    mode(tmp_path, "team", current_phase="team-exec")
    mode(tmp_path, "ultrawork", current_phase="executing")
    canonical(tmp_path, [])
    found = [f for f in diagnose(tmp_path) if f.kind == "orphan"]
    prints = [f.plan().plan.fingerprint(tmp_path) for f in found]  # type: ignore[misc]
    result = fix(tmp_path, found, expected=[prints[0], prints[2]])
    ids = [f.id for f in found]
    assert [a["id"] for a in result["applied"]] == [ids[0]]
    assert result["failed"] == [
        {"id": ids[1], "kind": "plan_changed",
         "error": "the files changed since you confirmed; nothing was written; review the new plan (the repair "
                  "planned now is not one you confirmed)"},
        {"id": ids[2], "kind": "not_run",
         "error": f"not run: the repair of {ids[1]} was no longer the plan you confirmed"}]
    assert (state_dir(tmp_path) / f"{ids[2].split(':')[-1]}-state.json").exists()


def test_each_confirmed_plan_is_used_once(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, [])
    [f] = [f for f in diagnose(tmp_path) if f.kind == "orphan"]
    twice = Finding(**{**f.__dict__, "id": "again"})
    result = fix(tmp_path, [f, twice], expected=[f.plan().plan.fingerprint(tmp_path)])  # type: ignore[misc]
    assert [a["id"] for a in result["applied"]] == [f.id]
    assert [x["kind"] for x in result["failed"]] == ["plan_changed"]


def test_a_confirmed_rollback_that_changed_stops_every_repair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt(tmp_path, monkeypatch)
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")
    mode(tmp_path, "team", None, current_phase="team-exec")  # a root survivor seen from s1 only
    found = diagnose(tmp_path, "s1")
    result = fix(tmp_path, found, session_id="s1", expected=["sha256:not-this-one"])
    assert "root-survivor:root:team" in result["remaining"]
    assert result["applied"] == [] and [x["kind"] for x in result["failed"]] == ["plan_changed"]
    assert (state_dir(tmp_path, "s1") / "ultrawork-state.json").exists()
    assert any(r.startswith("interrupted:") for r in result["remaining"])


def test_leftover_temp_files_are_listed_and_removed(tmp_path: Path) -> None:
    base = state_dir(tmp_path)
    base.mkdir(parents=True)
    names = [f".f{n}.json.0123456789.rcs-tui.tmp" for n in range(6)]
    for name in names:
        (base / name).write_text("")
    f = _one(diagnose(tmp_path), "leftover-temp")
    assert _row(f) == ("leftover-temps", "warn", "-", "6 files", "remove them")
    shown = ", ".join(f".rcs/state/{n}" for n in names[:5])
    assert f.message == f"temp files left by an interrupted rcs-tui write: {shown} …"
    out = f.as_json(tmp_path, with_plan=True)
    assert out["plan"]["action"] == "remove leftover temp files"
    assert out["plan"]["remove"] == [f".rcs/state/{n}" for n in names]
    result = fix(tmp_path, [f])
    assert result["applied"] == [{"id": "leftover-temps", "journal_id": None, "held": True}]
    assert os.listdir(base) == []
    assert read_journal(tmp_path) == []


def test_a_single_leftover_temp_is_listed_without_an_ellipsis(tmp_path: Path) -> None:
    base = state_dir(tmp_path)
    base.mkdir(parents=True)
    (base / ".a.rcs-tui.tmp").write_text("")
    f = _one(diagnose(tmp_path), "leftover-temp")
    assert (f.subject, f.message) == ("1 file", "temp files left by an interrupted rcs-tui write: "
                                                ".rcs/state/.a.rcs-tui.tmp")


def test_temp_cleanup_runs_only_the_confirmed_plan(tmp_path: Path) -> None:
    base = state_dir(tmp_path)
    base.mkdir(parents=True)
    (base / ".a.rcs-tui.tmp").write_text("")
    op = doctor._temp_cleanup([".rcs/state/.a.rcs-tui.tmp"])
    with pytest.raises(txn.PlanChanged):
        op.run(tmp_path, expect_plan="sha256:other")
    assert (base / ".a.rcs-tui.tmp").exists()
    assert op.run(tmp_path, expect_plan=op.plan.fingerprint(tmp_path)) == {
        "removed": [".rcs/state/.a.rcs-tui.tmp"], "journal_id": None}
    assert not (base / ".a.rcs-tui.tmp").exists()


def test_journal_warnings_are_findings(tmp_path: Path) -> None:
    write(tmp_path / ".rcs/logs/rcs-tui-journal.jsonl", "not json\n[1]\n")
    found = [f for f in diagnose(tmp_path) if f.kind == "journal-line"]
    assert [_row(f) for f in found] == [("journal-line:0", "warn", "journal", "journal", None),
                                        ("journal-line:1", "warn", "journal", "journal", None)]
    assert [f.message for f in found] == [
        ".rcs/logs/rcs-tui-journal.jsonl line 1: not JSON (torn or foreign line); skipped",
        ".rcs/logs/rcs-tui-journal.jsonl line 2: not a JSON object; skipped"]


def test_a_finding_as_json_carries_its_plan_or_why_it_has_none(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, [])
    f = _one(diagnose(tmp_path), "orphan")
    plain = f.as_json()
    assert plain == {"id": f.id, "kind": "orphan", "severity": "warn", "scope": "root", "subject": "forge",
                     "message": f.message, "repair": "clear the orphaned mode file", "advice": None}
    assert f.as_json(tmp_path) == plain and f.as_json(None, with_plan=True) == plain
    assert f.as_json(tmp_path, with_plan=True)["plan"]["action"] == "state clear forge"

    def broken(reads: object = None) -> object:
        raise ValueError("cannot plan this")

    assert Finding(**{**f.__dict__, "plan": broken}).as_json(tmp_path, with_plan=True)["plan_error"] == \
        "cannot plan this"


def test_the_live_view_reuses_a_scope_s_findings_until_it_changes(tmp_path: Path) -> None:
    mode(tmp_path, "forge", "s1", current_phase="executing")
    canonical(tmp_path, [], "s1")
    mode(tmp_path, "team", "s2", current_phase="team-exec")
    canonical(tmp_path, [], "s2")
    cache: doctor.FindingCache = {}
    first = snapshot_findings(read_snapshot(tmp_path), cache)
    assert sorted(f.id for f in first) == ["orphan:s1:forge", "orphan:s2:team"]
    assert ("members", "s1") in cache and ("softeners", "s2") in cache
    again = snapshot_findings(read_snapshot(tmp_path), cache)
    assert [f.id for f in again] == [f.id for f in first]
    assert all(a is b for a, b in zip(again, first, strict=True))
    mode(tmp_path, "forge", "s1", active=False, current_phase="complete")
    after = snapshot_findings(read_snapshot(tmp_path), cache)
    assert sorted(f.id for f in after) == ["orphan:s2:team"]
    shutil.rmtree(state_dir(tmp_path, "s2"))
    snapshot_findings(read_snapshot(tmp_path), cache)
    assert not any(k[1] == "s2" for k in cache)


def test_a_fix_whose_repair_did_not_hold_says_so(tmp_path: Path) -> None:
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, [])
    f = _one(diagnose(tmp_path), "orphan")

    class NoOp:
        def __init__(self) -> None:
            self.plan = txn.Plan("nothing")

        def run(self, root: Path, actor: object = None, expect_plan: object = None) -> dict:
            return {"journal_id": None}

    result = fix(tmp_path, [Finding(**{**f.__dict__, "plan": lambda reads=None: NoOp()})])
    assert result["applied"] == [{"id": f.id, "journal_id": None, "held": False}]
    assert result["remaining"] == [f.id]
    assert read(state_dir(tmp_path) / "forge-state.json")["active"] is True


def _survivor_in_s1(tmp_path: Path) -> None:
    mode(tmp_path, "team", None, current_phase="team-exec")
    canonical(tmp_path, [], "s1")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    canonical(tmp_path, ["forge"], "s1")


def test_fix_judges_what_remains_from_the_session_it_was_asked_for(tmp_path: Path) -> None:
    _survivor_in_s1(tmp_path)
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")
    found = diagnose(tmp_path, "s1")
    result = fix(tmp_path, found, ["orphan:s1:ultrawork"], session_id="s1", actor="carol")
    assert result["remaining"] == ["root-survivor:root:team"]
    assert [e["actor"] for e in read_journal(tmp_path)] == ["carol"]


def test_after_a_rollback_the_session_s_other_repairs_are_made(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupt(tmp_path, monkeypatch)
    mode(tmp_path, "team", None, current_phase="team-exec")  # a root survivor seen from s1
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")
    write(state_dir(tmp_path) / "autopilot-state.json", "[1]")  # a finding without a repair
    found = diagnose(tmp_path, "s1")
    wanted = [f.id for f in found if f.kind in ("interrupted-action", "root-survivor")]
    result = fix(tmp_path, found, wanted, session_id="s1", actor="dave")
    assert sorted(a["id"].split(":")[0] for a in result["applied"]) == ["interrupted", "root-survivor"]
    assert result["failed"] == []
    assert (state_dir(tmp_path, "s1") / "ultrawork-state.json").exists()
    assert [e["actor"] for e in read_journal(tmp_path) if e.get("undoes")] == ["dave"]
    everything = fix(tmp_path, diagnose(tmp_path, "s1"), session_id="s1")
    assert everything["failed"] == [] and "file-error:.rcs/state/autopilot-state.json" in everything["remaining"]


def test_one_confirmation_confirms_one_repair_even_when_two_plans_are_the_same(tmp_path: Path) -> None:
    base = state_dir(tmp_path)
    base.mkdir(parents=True)
    (base / ".a.rcs-tui.tmp").write_text("")
    f = _one(diagnose(tmp_path), "leftover-temp")
    twice = Finding(**{**f.__dict__, "id": "again"})
    result = fix(tmp_path, [f, twice], expected=[f.plan().plan.fingerprint(tmp_path)])  # type: ignore[misc]
    assert [a["id"] for a in result["applied"]] == ["leftover-temps"]
    assert [(x["id"], x["kind"]) for x in result["failed"]] == [("again", "plan_changed")]


def test_temp_cleanup_holds_the_store_lock_as_its_actor(tmp_path: Path) -> None:
    base = state_dir(tmp_path)
    base.mkdir(parents=True)
    op = doctor._temp_cleanup([])
    op.run(tmp_path, actor="erin")
    assert json.loads((tmp_path / ".rcs/logs/rcs-tui.lock").read_text())["holder"] == "erin"
    op.run(tmp_path)
    assert json.loads((tmp_path / ".rcs/logs/rcs-tui.lock").read_text())["holder"] == txn.default_actor()


def test_temp_cleanup_under_a_busy_lock_says_who_holds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rcs_tui.core import error_kinds as kinds
    from rcs_tui.files.fsafe import Tree
    from rcs_tui.state import lock

    (tmp_path / ".rcs").mkdir()
    monkeypatch.setattr(lock, "LOCK_TIMEOUT_S", 0.1)
    with lock.store_lock(Tree(tmp_path), "holder-x"):
        pid = os.fork()
        if pid == 0:
            try:
                doctor._temp_cleanup([]).run(tmp_path)
                os._exit(1)
            except txn.TxnError as exc:
                ok = exc.error_kind == kinds.LOCK_BUSY and str(exc).startswith(
                    "another rcs-tui process holds .rcs/logs/rcs-tui.lock (held by holder-x")
                os._exit(0 if ok else 2)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_plans_shown_with_findings_are_made_from_the_diagnosis_s_read(tmp_path: Path) -> None:
    from rcs_tui.state.ops import PlanReads

    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, [])
    reads = PlanReads()
    f = _one(diagnose(tmp_path, reads=reads), "orphan")
    shown = f.as_json(tmp_path, with_plan=True, reads=reads)["plan"]
    mode(tmp_path, "forge", current_phase="verifying")  # changed after the diagnosis
    assert f.as_json(tmp_path, with_plan=True, reads=reads)["plan"] == shown
    assert f.as_json(tmp_path, with_plan=True)["plan"]["plan_fingerprint"] != shown["plan_fingerprint"]
