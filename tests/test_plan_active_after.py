"""The active set a plan says a scope keeps is worked out from the bytes the plan would write, and a plan shown
with a diagnosis takes a session's existence from that diagnosis's read."""

from __future__ import annotations

import json

import pytest
from statefix import canonical, mode, state_dir

from rcs_tui.files.layout import Layout
from rcs_tui.state.ops import PlanReads, _active_after, plan_clear, plan_drop_entry
from rcs_tui.state.reader import read_snapshot
from rcs_tui.state.txn import FileChange, TxnError


def _doc(**fields) -> bytes:
    return json.dumps(fields).encode()


@pytest.fixture
def project(tmp_path):
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="executing")
    mode(tmp_path, "blueprint", "s1", active=False, current_phase="complete")
    canonical(tmp_path, ["team", "forge"], "s1")
    return tmp_path


def test_a_session_clear_that_leaves_a_tombstone_drops_the_mode_from_what_stays_active(project):
    mode(project, "forge", None, current_phase="executing")  # a root copy: the session's file becomes a tombstone
    summary = plan_clear(project, "forge", "s1").plan.summary
    assert summary["active_after"] == ["team"]
    assert summary["scopes"] == [{"scope": "s1", "before": ["forge", "team"], "after": ["team"]}]


def test_a_root_clear_that_deletes_the_file_drops_the_mode(project):
    mode(project, "ultrawork", None, current_phase="executing")
    mode(project, "team", None, current_phase="team-exec")
    canonical(project, ["ultrawork", "team"])
    assert plan_clear(project, "ultrawork", "<root>").plan.summary["active_after"] == ["team"]


def test_written_bytes_decide_each_mode_file_the_plan_changes(project):
    layout = Layout(project)
    s1 = state_dir(project, "s1")
    changes = [
        FileChange(s1 / "blueprint-state.json", "write", _doc(active=True, current_phase="executing")),  # revived
        FileChange(s1 / "team-state.json", "write", _doc(active=False, current_phase="complete")),  # ended
        FileChange(s1 / "ultraqa-state.json", "write", _doc(active=True, current_phase="qa")),  # a new file
        FileChange(s1 / "autopilot-state.json", "write", _doc(active=False)),  # a new file, not active
        FileChange(s1 / "autoresearch-state.json", "write", b""),  # a new file with nothing in it: not active
        FileChange(s1 / "hud-state.json", "write", _doc(active=True)),  # not a workflow mode
        FileChange(state_dir(project, "s2") / "autoresearch-state.json", "write", _doc(active=True)),  # elsewhere
        FileChange(state_dir(project) / "deep-interview-state.json", "write", _doc(active=True)),  # root
    ]
    assert _active_after(layout, "s1", changes) == ["blueprint", "forge", "ultraqa"]
    assert _active_after(layout, "s1", changes[:1] + [FileChange(s1 / "forge-state.json", "delete")]) == \
        ["blueprint", "team"]
    assert _active_after(layout, None, changes) == ["deep-interview"]
    emptied = [FileChange(s1 / "forge-state.json", "write", b"")]  # a file left empty is not active
    assert _active_after(layout, "s1", emptied) == ["team"]
    assert _active_after(layout, "s1", [FileChange(s1 / "skill-active-state.json", "write", _doc())]) == \
        ["forge", "team"]  # the canonical set does not decide what is active


def test_a_new_file_in_a_scope_not_read_yet_counts_once(project):
    s3 = state_dir(project, "s3")
    s3.mkdir(parents=True)
    changes = [FileChange(s3 / "forge-state.json", "write", _doc(active=True, current_phase="executing"))]
    assert _active_after(Layout(project), "s3", changes) == ["forge"]


def test_a_plan_shown_with_a_diagnosis_names_no_session_that_read_did_not_find(project):
    reads = PlanReads()
    reads.use(read_snapshot(project))
    with pytest.raises(TxnError, match="no session 'ghost'"):
        plan_drop_entry(project, "team", "ghost", reads=reads)
    assert plan_drop_entry(project, "blueprint", "s1", reads=reads).plan.summary["canonical_removed"] == []
    canonical(project, ["team", "forge"], "s9")  # a session that began after that read: read from disk
    assert plan_drop_entry(project, "team", "s9", reads=reads).plan.summary["canonical_removed"] == ["s9:team"]


def test_repairs_shown_with_a_diagnosis_read_no_canonical_set_again(project, monkeypatch):
    """Showing ten thousand repairs must not read ten thousand canonical sets a second time: the sets the
    diagnosis read cleanly are taken from its read (root's and each session's)."""
    from rcs_tui.project.doctor import diagnose

    canonical(project, ["forge", "ultraqa"])  # root: a stale entry
    for sid in ("s2", "s3"):
        mode(project, "forge", sid, active=False, current_phase="complete")
        canonical(project, ["forge"], sid)
    again: list[str] = []
    real = PlanReads.target

    def target(self, layout, path):
        again.append(path.name)
        return real(self, layout, path)

    monkeypatch.setattr(PlanReads, "target", target)
    reads = PlanReads()
    findings = diagnose(project, reads=reads)
    plans = [f.as_json(project, with_plan=True, reads=reads)["plan"] for f in findings if f.plan is not None]
    assert {p["scope"] for p in plans if "scope" in p} >= {"root", "s2", "s3"}
    assert "skill-active-state.json" not in again
    alone = [f.as_json(project, with_plan=True)["plan"] for f in findings if f.plan is not None]
    assert alone == plans and "skill-active-state.json" in again  # made alone, each reads its set
