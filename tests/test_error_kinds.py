"""Errors between processes carry a kind: `{"error": ..., "kind": ...}` on stderr with a named exit status.

Other processes (the fleet, scripts) decide on `kind` and the exit status, never on the wording of `error`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import ERROR, USAGE
from rcs_tui.fleet.actions import ActionError, CliActions, PlanChangedError
from rcs_tui.fleet.projects import parse_project
from rcs_tui.fleet.transport import error_line, failure_reason
from rcs_tui.state.txn import PLAN_CHANGED
from tests.statefix import canonical, mode


def last_line(result) -> dict:
    return json.loads(result.stderr.strip().splitlines()[-1])


def project(root: Path) -> Path:
    mode(root, "forge", iteration=2, phase="execute")
    canonical(root, ["forge"])
    return root


def test_a_usage_error(run_cli):
    result = run_cli("state", "nosuch")
    assert result.code == USAGE
    assert last_line(result) == {"error": "No such command 'nosuch'.", "kind": "usage"}


def test_no_project(run_cli, tmp_path):
    result = run_cli("state", "read", "--mode", "team", "--root", str(tmp_path / "nope"))
    assert result.code == ERROR
    assert last_line(result) == {"error": f"--root {tmp_path / 'nope'}: not a directory", "kind": "no_project"}


def test_no_project_on_the_quick_path(run_cli, tmp_path):
    result = run_cli("hud", "--once", "--root", str(tmp_path / "nope"))
    assert result.code == ERROR
    assert last_line(result) == {"error": f"--root {tmp_path / 'nope'}: not a directory", "kind": "no_project"}


def test_not_found(run_cli, tmp_path):
    root = project(tmp_path / "p")
    result = run_cli("undo", "e-nope", "--root", str(root))
    assert result.code == ERROR
    assert last_line(result) == {"error": "no journal entry 'e-nope' in .rcs/logs/rcs-tui-journal.jsonl",
                                 "kind": "not_found"}


def test_bad_input(run_cli, tmp_path):
    root = project(tmp_path / "p")
    result = run_cli("state", "write", "--mode", "team", "--input", "[1]", "--root", str(root))
    assert last_line(result) == {"error": "--input: expected a JSON object, got list", "kind": "bad_input"}
    result = run_cli("state", "read", "--mode", "../x", "--root", str(root))
    assert last_line(result) == {"error": "invalid mode name '../x': must match ^[A-Za-z0-9_-]{1,64}$",
                                 "kind": "bad_input"}


def test_plan_changed(run_cli, tmp_path):
    root = project(tmp_path / "p")
    result = run_cli("state", "clear", "--mode", "forge", "--in-root", "--expect-plan", "sha256:0", "--root",
                     str(root))
    assert result.code == ERROR
    assert last_line(result) == {"error": PLAN_CHANGED, "kind": "plan_changed"}


def test_every_kind_is_named_once():
    assert len(set(kinds.KINDS)) == len(kinds.KINDS)
    assert all(k == k.lower() and " " not in k for k in kinds.KINDS)


class TestTheFleetReadsTheKind:
    def test_plan_changed_is_told_by_its_kind(self, tmp_path):
        root = project(tmp_path / "p")
        acts = CliActions(parse_project(str(root)))
        with pytest.raises(PlanChangedError) as caught:
            acts.clear("forge", "root", expect="sha256:0")
        assert caught.value.kind == kinds.PLAN_CHANGED and str(caught.value) == PLAN_CHANGED

    def test_the_same_words_under_another_kind_are_not_a_changed_plan(self, tmp_path):
        stderr = json.dumps({"error": PLAN_CHANGED, "kind": "refused"})
        assert error_line(stderr) == (PLAN_CHANGED, "refused")

    def test_another_refusal_keeps_its_kind(self, tmp_path):
        root = project(tmp_path / "p")
        with pytest.raises(ActionError) as caught:
            CliActions(parse_project(str(root))).undo("e-nope")
        assert type(caught.value) is ActionError and caught.value.kind == kinds.NOT_FOUND

    def test_a_usage_error_means_too_old(self):
        project_ = parse_project("/srv/api")
        line = json.dumps({"error": "No such option: --expect-plan", "kind": "usage"})
        assert "too old" in failure_reason(USAGE, line, project_)
        old = json.dumps({"error": "no such flag --frobnicate"})  # an rcs-tui from before kinds: the status tells
        assert "too old" in failure_reason(USAGE, old, project_)
        assert failure_reason(ERROR, json.dumps({"error": "boom", "kind": "refused"}), project_) == "boom"
