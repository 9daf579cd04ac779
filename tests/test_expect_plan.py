"""Applying exactly the plan an operator confirmed: a dry run's `plan_fingerprint` passed back as
`--expect-plan` applies that plan, or nothing when the files changed in between."""

from __future__ import annotations

import json
from pathlib import Path

from rcs_tui.core.exit_codes import ERROR
from rcs_tui.state.txn import PLAN_CHANGED
from tests.conftest import tree_digest
from tests.fixtures_tasks import make_task
from tests.statefix import canonical, mode

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def project(root: Path) -> Path:
    mode(root, "forge", iteration=2, phase="execute")
    canonical(root, ["forge"])
    return root


def refused(result) -> None:
    assert result.code == ERROR
    assert json.loads(result.stderr.strip().splitlines()[-1]) == {"error": PLAN_CHANGED, "kind": "plan_changed"}


class TestClear:
    def test_the_confirmed_plan_is_applied(self, run_cli, tmp_path):
        root = project(tmp_path / "p")
        dry = json.loads(run_cli("state", "clear", "--mode", "forge", "--in-root", "--dry-run", "--root",
                                 str(root)).stdout)
        assert dry["plan_fingerprint"].startswith("sha256:")
        again = json.loads(run_cli("state", "clear", "--mode", "forge", "--in-root", "--dry-run", "--root",
                                   str(root)).stdout)
        assert again["plan_fingerprint"] == dry["plan_fingerprint"]  # nothing changed: the same plan
        done = run_cli("state", "clear", "--mode", "forge", "--in-root", "--expect-plan", dry["plan_fingerprint"],
                       "--root", str(root))
        assert done.code == 0, done.stderr
        assert not (root / ".rcs/state/forge-state.json").exists()

    def test_a_file_changed_after_confirming_writes_nothing(self, run_cli, tmp_path):
        root = project(tmp_path / "p")
        dry = json.loads(run_cli("state", "clear", "--mode", "forge", "--in-root", "--dry-run", "--root",
                                 str(root)).stdout)
        mode(root, "forge", iteration=3, phase="verify")  # the runtime writes between confirm and apply
        before = tree_digest(root)
        result = run_cli("state", "clear", "--mode", "forge", "--in-root", "--expect-plan", dry["plan_fingerprint"],
                         "--root", str(root))
        refused(result)
        assert tree_digest(root) == before
        assert not (root / JOURNAL).exists()

    def test_a_new_root_copy_changes_the_plan(self, run_cli, tmp_path):
        """A file the plan does not write but decided on (a root copy turns a delete into a tombstone)."""
        root = tmp_path / "p"
        mode(root, "forge", session="s1", phase="execute")
        canonical(root, ["forge"], session="s1")
        args = ("state", "clear", "--mode", "forge", "--session-id", "s1", "--root", str(root))
        dry = json.loads(run_cli(*args, "--dry-run").stdout)
        mode(root, "forge", phase="execute")
        before = tree_digest(root)
        refused(run_cli(*args, "--expect-plan", dry["plan_fingerprint"]))
        assert tree_digest(root) == before


def test_undo_applies_only_the_confirmed_restore(run_cli, tmp_path):
    root = project(tmp_path / "p")
    mode(root, "ultrawork", phase="execute")
    canonical(root, ["forge", "ultrawork"])
    assert run_cli("state", "clear", "--mode", "forge", "--in-root", "--root", str(root)).code == 0
    dry = json.loads(run_cli("undo", "--dry-run", "--root", str(root)).stdout)
    # another operator clears a second member: "undo the last action" would now restore that one
    assert run_cli("state", "clear", "--mode", "ultrawork", "--in-root", "--root", str(root)).code == 0
    before = tree_digest(root)
    refused(run_cli("undo", "--expect-plan", dry["plan_fingerprint"], "--root", str(root)))
    assert tree_digest(root) == before


def test_task_override_applies_only_the_confirmed_plan(run_cli, tmp_path):
    root = tmp_path / "p"
    tdir = make_task(root, "t1", phase="codegen")
    args = ("task", "override", "t1", "--to", "test", "--reason", "reviewed by hand", "--root", str(root), "--json")
    dry = json.loads(run_cli(*args, "--dry-run").stdout)
    make_task(root, "t1", phase="review")  # moved on by the runtime meanwhile
    before = tree_digest(root)
    refused(run_cli(*args, "--expect-plan", dry["plan_fingerprint"]))
    assert tree_digest(root) == before
    make_task(root, "t1", phase="codegen")
    dry = json.loads(run_cli(*args, "--dry-run").stdout)
    done = run_cli(*args, "--expect-plan", dry["plan_fingerprint"])
    assert done.code == 0, done.stderr
    assert json.loads((tdir / "state.json").read_text())["phase"] == "test"


def test_doctor_fix_applies_only_the_confirmed_repairs(run_cli, tmp_path):
    root = tmp_path / "p"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team"])  # team listed, no file: a stale member with a repair
    report = json.loads(run_cli("doctor", "--json", "--root", str(root)).stdout)
    plans = {f["id"]: f["plan"]["plan_fingerprint"] for f in report["findings"] if f.get("plan")}
    assert plans
    canonical(root, ["forge", "team", "ultrawork"])  # the record changed since the report was confirmed
    before = tree_digest(root)
    args = ["doctor", "--fix", "--json", "--root", str(root)]
    for fid, fp in plans.items():
        args += ["--only", fid, "--expect-plan", fp]
    refused(run_cli(*args))
    assert tree_digest(root) == before


def test_a_repair_whose_plan_changed_after_an_earlier_repair_is_not_applied(tmp_path):
    """Two confirmed repairs; while the first is applied a member becomes live (the orphan ultraqa is now
    listed). The second repair, planned again, would clear a live member and rewrite the canonical set:
    it is not the plan the operator confirmed, so it stops (and says so), and nothing of it is written."""
    from dataclasses import replace

    from rcs_tui.project.doctor import diagnose, fix

    root = tmp_path / "p"
    mode(root, "forge", phase="execute")
    mode(root, "ultraqa", phase="execute")  # active, not listed: an orphan
    canonical(root, ["forge", "team"])  # team listed without a file: a stale member
    findings = diagnose(root)
    chosen = [f for f in findings if f.kind in ("stale-member", "orphan")]
    assert [f.kind for f in chosen] == ["orphan", "stale-member"]
    confirmed = [f.plan().plan.fingerprint(root) for f in chosen]
    first = chosen[0] if chosen[0].kind == "stale-member" else chosen[1]
    second = chosen[1] if first is chosen[0] else chosen[0]

    class ThenTheRuntimeMoves:
        """The first repair as planned; right after it is applied, the runtime lists ultraqa (live now)."""

        def __init__(self):
            self.op = first.plan()
            self.plan = self.op.plan

        def run(self, *args, **kwargs):
            out = self.op.run(*args, **kwargs)
            canonical(root, ["forge", "ultraqa"])
            return out

    before_canonical = (root / ".rcs" / "state" / "skill-active-state.json")
    ordered = [replace(first, plan=ThenTheRuntimeMoves), second]
    result = fix(root, ordered, expected=confirmed)
    assert [a["id"] for a in result["applied"]] == [first.id]
    assert [(f["id"], f["kind"]) for f in result["failed"]] == [(second.id, "plan_changed")]
    assert "not one you confirmed" in result["failed"][0]["error"]
    ultraqa = json.loads((root / ".rcs" / "state" / "ultraqa-state.json").read_text())
    assert ultraqa.get("active") is not False  # the live member was not cleared
    assert json.loads(before_canonical.read_text())["active_skills"][1]["skill"] == "ultraqa"


def test_two_confirmed_repairs_of_one_file_are_both_applied(run_cli, tmp_path):
    """The second repair of a file is planned on what the first wrote; it is still the repair confirmed."""
    root = tmp_path / "p"
    mode(root, "forge", phase="execute")
    canonical(root, ["forge", "team", "ultrawork"])  # two stale entries in one canonical set
    report = json.loads(run_cli("doctor", "--json", "--root", str(root)).stdout)
    args = ["doctor", "--fix", "--json", "--root", str(root)]
    for f in report["findings"]:
        args += ["--only", f["id"], "--expect-plan", f["plan"]["plan_fingerprint"]]
    done = json.loads(run_cli(*args).stdout)
    assert [a["id"] for a in done["fix"]["applied"]] == ["stale:root:team", "stale:root:ultrawork"]
    assert done["fix"]["failed"] == [] and done["remaining"] == []
    skills = json.loads((root / ".rcs/state/skill-active-state.json").read_text())["active_skills"]
    assert [e["skill"] for e in skills] == ["forge"]


def test_an_undo_preview_names_the_entry_and_each_file_now_and_after(run_cli, tmp_path):
    root = project(tmp_path / "p")
    forge = root / ".rcs/state/forge-state.json"
    canon = root / ".rcs/state/skill-active-state.json"
    sizes = {"forge": len(forge.read_bytes()), "canon": len(canon.read_bytes())}
    assert run_cli("state", "clear", "--mode", "forge", "--in-root", "--root", str(root)).code == 0
    entry = json.loads((root / JOURNAL).read_text().splitlines()[0])
    dry = json.loads(run_cli("undo", "--dry-run", "--root", str(root)).stdout)
    assert dry["entry"] == {k: entry[k] for k in ("id", "action", "at", "actor")}
    assert dry["file_sizes"] == [
        {"path": ".rcs/state/forge-state.json", "now": None, "after": sizes["forge"]},
        {"path": ".rcs/state/skill-active-state.json", "now": len(canon.read_bytes()), "after": sizes["canon"]}]
    done = run_cli("undo", "--expect-plan", dry["plan_fingerprint"], "--root", str(root))
    assert done.code == 0, done.stderr
    redo = json.loads(run_cli("redo", "--dry-run", "--root", str(root)).stdout)
    assert redo["entry"]["id"] == entry["id"] and redo["file_sizes"][0] == {
        "path": ".rcs/state/forge-state.json", "now": sizes["forge"], "after": None}
