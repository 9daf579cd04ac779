"""The doctor's list of repairs is planned from one read of each file: every plan it shows, and every byte a
repair writes, is the one a plan made alone against the same files gives."""

from __future__ import annotations

import json
import os
import random

import pytest

from rcs_tui.core import reconcile
from rcs_tui.files.io import dump_json
from rcs_tui.files.layout import Layout
from rcs_tui.project.doctor import diagnose, fix
from rcs_tui.state.ops import PlanReads, plan_clear, plan_drop_entry
from rcs_tui.state.reader import read_scope_alone, read_snapshot
from tests.statefix import T0, canonical, dead_pid, mode, pointer, read, state_dir, write

MODES = ["forge", "team", "ultrawork", "autopilot", "blueprint", "ultraqa"]


def _tree(root, sessions=12, extra_root=40):
    """Stale members in sessions and in a large root set, orphans, a root survivor, a stale-dead pointer."""
    rng = random.Random(7)
    for i in range(sessions):
        sid = f"s{i:02d}"
        listed = rng.sample(MODES, 3)
        for m in listed[:2]:
            mode(root, m, sid, current_phase="executing")
        mode(root, listed[2], sid, active=False, current_phase="complete")  # stale member
        if i % 3 == 0:
            mode(root, "autoresearch", sid, current_phase="explore")  # orphan
        canonical(root, listed, sid)
    mode(root, "team", "s00", active=False, current_phase="cleared")  # tombstone over an active root copy
    mode(root, "team", None, current_phase="team-exec")
    skills = [f"m-{i:03d}" for i in range(extra_root)] + ["team", "m-001"]  # a duplicate entry too
    entries = [{"skill": s, "active": True, "activated_at": T0} for s in skills]
    entries.insert(5, {"skill": "m-002", "active": True, "session_id": "elsewhere"})
    write(state_dir(root) / "skill-active-state.json",
          {"version": 1, "active": True, "skill": "m-000", "active_skills": entries})
    pointer(root, "s01", pid=dead_pid())


def test_plans_shown_together_are_the_plans_made_one_by_one(tmp_path):
    _tree(tmp_path)
    findings = diagnose(tmp_path)
    assert sum(f.plan is not None for f in findings) > 50
    shared = PlanReads()
    together = [f.as_json(tmp_path, with_plan=True, reads=shared) for f in findings]
    alone = [f.as_json(tmp_path, with_plan=True) for f in findings]
    assert together == alone
    root_drop = next(f for f in together if f["id"] == "stale:root:m-001")
    assert root_drop["plan"]["canonical_removed"] == ["root:m-001", "root:m-001"]


def _links(root, how):
    """Ways a canonical set can be reached that the apply step refuses to walk (or reads differently)."""
    sessions = state_dir(root) / "sessions"
    if how == "session-dir-link":
        os.rename(sessions / "s02", sessions / "s02-real")
        os.symlink(sessions / "s02-real", sessions / "s02")
    elif how == "canonical-link":
        target = sessions / "s03" / "kept.json"
        os.rename(sessions / "s03" / "skill-active-state.json", target)
        os.symlink(target, sessions / "s03" / "skill-active-state.json")
    elif how == "sessions-link":
        os.rename(sessions, state_dir(root) / "sessions-real")
        os.symlink(state_dir(root) / "sessions-real", sessions)
    elif how == "state-link":
        os.rename(state_dir(root), root / ".rcs" / "state-real")
        os.symlink(root / ".rcs" / "state-real", state_dir(root))
    elif how == "unparsable":
        (sessions / "s04" / "skill-active-state.json").write_text('{"active_skills": [')


@pytest.mark.parametrize("how", ["plain", "session-dir-link", "canonical-link", "sessions-link", "state-link",
                                 "unparsable"])
def test_plans_from_the_diagnosis_read_are_the_plans_made_alone(tmp_path, how):
    """The doctor shows plans made from its own read of the tree; each is the plan made alone against the
    files, also where the way to a file holds a link (refused alike) or the file does not parse."""
    _tree(tmp_path, sessions=6)
    _links(tmp_path, how)
    reads = PlanReads()
    findings = diagnose(tmp_path, reads=reads)
    assert any(f.plan is not None for f in findings)
    shown = [f.as_json(tmp_path, with_plan=True, reads=reads) for f in findings]
    assert shown == [f.as_json(tmp_path, with_plan=True) for f in findings]


def test_doctor_json_matches_the_plans_made_one_by_one(run_cli, tmp_path):
    _tree(tmp_path)
    out = run_cli("doctor", "--json", "--root", str(tmp_path)).json
    assert out["findings"] == [f.as_json(tmp_path, with_plan=True) for f in diagnose(tmp_path)]


@pytest.mark.parametrize("sid", [None, "s03", "<root>"])
def test_a_shown_plan_writes_the_bytes_of_the_canonical_set_without_the_entry(tmp_path, sid):
    _tree(tmp_path)
    scope = None if sid in (None, "<root>") else sid
    doc = read(state_dir(tmp_path, scope) / "skill-active-state.json")
    drop = doc["active_skills"][1]["skill"]
    op = plan_drop_entry(tmp_path, drop, sid or "<root>", reads=PlanReads())
    change = next(c for c in op.plan.changes if c.path.name == "skill-active-state.json")
    assert change.content is None  # not built while only shown
    new, removed = reconcile.canonical_without(doc, [drop], scope, json.loads(change.data())["updated_at"])
    assert change.data() == dump_json(new) and len(removed) >= 1


def test_clear_plan_with_shared_reads_is_the_plan_alone(tmp_path):
    _tree(tmp_path)
    shared = PlanReads()
    for sid in ["s00", "s04", "<root>"]:
        for m in ["team", "forge", "autoresearch"]:
            assert plan_clear(tmp_path, m, sid, reads=shared).plan.describe(tmp_path) == \
                plan_clear(tmp_path, m, sid).plan.describe(tmp_path)


def test_one_scope_is_read_as_the_snapshot_of_that_scope_reads_it(tmp_path):
    _tree(tmp_path, sessions=4)
    sessions = state_dir(tmp_path) / "sessions"
    os.symlink(sessions / "s01", sessions / "via-link")  # a link inside .rcs: followed
    outside = tmp_path / "outside"
    mode(outside, "forge", "x")
    os.symlink(state_dir(outside, "x"), sessions / "out-link")  # a link leading out: not a session
    (sessions / "plain-file").write_text("{}")
    layout = Layout(tmp_path)
    for sid in [None, "s00", "s02", "via-link", "out-link", "plain-file", "missing"]:
        assert read_scope_alone(layout, sid) == read_snapshot(tmp_path, sid, all_sessions=False).scope(sid), sid


def test_removed_entries_are_the_ones_canonical_without_removes():
    rng = random.Random(3)
    for _ in range(300):
        entries = [rng.choice([{"skill": rng.choice(MODES), "active": rng.random() < 0.8,
                                **({"session_id": rng.choice(["a", "b"])} if rng.random() < 0.4 else {})},
                               "junk", {"skill": 3}]) for _ in range(rng.randrange(0, 8))]
        doc = rng.choice([{"active_skills": entries, "skill": "forge", "active": True},
                          {"skill": rng.choice(MODES), "active": rng.random() < 0.5}, {"active_skills": "x"}])
        modes = rng.sample(MODES, rng.choice([1, 1, 2]))
        sid = rng.choice([None, "a", "b"])
        want = reconcile.canonical_without(doc, modes, sid, T0)[1]
        assert reconcile.removed_skills(doc, modes, sid) == want
        assert reconcile.removed_skills(doc, modes, sid, reconcile.entries_by_skill(doc)) == want


def test_fix_applies_each_repair_against_the_files_as_they_are_then(tmp_path):
    _tree(tmp_path, sessions=3, extra_root=5)
    result = fix(tmp_path, diagnose(tmp_path))
    assert result["failed"] == [] and all(item["held"] for item in result["applied"])
    root_set = read(state_dir(tmp_path) / "skill-active-state.json")
    assert [e["skill"] for e in root_set["active_skills"]] == []
