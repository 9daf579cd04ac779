"""Task lifecycle (seed 003): guards on artifacts, advance, override, redo, undo and bad input."""

from __future__ import annotations

import json

import pytest
from fixtures_tasks import FORWARD, make_task, transcript

from rcs_tui.core.machine import load_task_lifecycle
from rcs_tui.core.modes import BadName
from rcs_tui.core.task_lifecycle import missing_guards
from rcs_tui.state import journal
from rcs_tui.state.tasks import (
    TaskError,
    apply_plan,
    load_task,
    next_report,
    plan_advance,
    plan_override,
    plan_redo,
)
from rcs_tui.state.txn import JOURNAL_REL, ChangedUnderneath

ACTOR = "alice@test"
AT = "2026-01-02T03:04:05.678Z"

# (from, to, artifacts that satisfy the guard, artifacts that do not, the refusal's reason)
EDGES = [
    ("planning", "plan_review", FORWARD["planning"],
     {"planning/planning.ai.json": {"questions": [{"q": "which db?", "blocking": True}]},
      "plan.files.json": ["src/a.py"]},
     "planning → plan_review needs no blocking questions in planning/planning.ai.json (1 open)"),
    ("plan_review", "codegen", FORWARD["plan_review"],
     {"review/plan-review.json": {"ok": True, "blocked": True}},
     "plan_review → codegen needs review/plan-review.json with ok=true and blocked=false (ok=true, blocked=true)"),
    ("plan_review", "planning", {"review/plan-review.json": {"ok": False, "needs_changes": True}},
     FORWARD["plan_review"],
     "plan_review → planning needs review/plan-review.json signalling needs_changes, blocked, a structural "
     "flaw or a reviewer with ok=false and severity blocking (none found)"),
    ("codegen", "review", FORWARD["codegen"], {"code/diff.patch": ""},
     "codegen → review needs code/diff.patch and generated files in code/files/ "
     "(code/diff.patch missing or empty; no files in code/files/)"),
    ("codegen", "planning", {"plan.files.json": ["src/a.py"], "code/files/src/b.py": "y = 2\n"},
     FORWARD["codegen"],
     "codegen → planning needs a scope mismatch: generated files outside the plan's file list, "
     "or scope_mismatch=true in code/codegen.json (none found)"),
    ("codegen", "plan_review", {"code/codegen.json": {"plan_unclear": True}},
     {"code/codegen.json": {"plan_unclear": "true"}},
     "codegen → plan_review needs code/codegen.json with plan_unclear=true, blocked=true or "
     "missing_plan_parts (no such signal)"),
    ("review", "test", FORWARD["review"],
     {"review/code-review.json": {"issues": [{"severity": "blocking", "text": "sql injection"}]}},
     "review → test needs review/code-review.json with no blocking issues, or an override with a reason "
     "(1 blocking issue(s))"),
    ("review", "codegen", {"review/code-review.json": {"ok": False, "needs_changes": True}}, FORWARD["review"],
     "review → codegen needs review/code-review.json with needs_changes=true/\"code\" or blocking issues "
     "(none found)"),
    ("review", "planning", {"review/code-review.json": {"ok": False, "needs_changes": "plan"}},
     {"review/code-review.json": {"ok": False, "needs_changes": True}},
     "review → planning needs review/code-review.json with needs_changes=\"plan\" or plan_flawed=true "
     "(none found)"),
    ("test", "accept", FORWARD["test"], {"test/results.json": {"passed": 10, "failed": 2}},
     "test → accept needs completed tests in test/results.json without failures (2 failed)"),
    ("test", "codegen", {"test/results.json": {"failed": 0, "lint_ok": False}}, FORWARD["test"],
     "test → codegen needs failing tests or lint in test/results.json (no failures recorded)"),
    ("accept", "done", FORWARD["accept"], {"accept/decision.json": {"decision": "revert"}},
     "accept → done needs accept/decision.json with decision='accepted' (decision='revert')"),
    ("accept", "codegen", {"accept/decision.json": {"decision": "changes"}}, {},
     "accept → codegen needs accept/decision.json with decision='changes' (missing)"),
    ("accept", "review", {"accept/decision.json": {"decision": "review"}},
     {"accept/decision.json": "{not json"},
     "accept → review needs accept/decision.json with decision='review' (unreadable: invalid JSON at line 1 "
     "column 2: Expecting property name enclosed in double quotes (truncated mid-write?))"),
    ("accept", "planning", {"accept/decision.json": {"decision": "replan"}}, FORWARD["accept"],
     "accept → planning needs accept/decision.json with decision='replan' (decision='accepted')"),
    ("accept", "revert", {"accept/decision.json": {"decision": "accepted", "regression": True}},
     FORWARD["accept"],
     "accept → revert needs accept/decision.json with decision='revert' (decision='accepted')"),
    ("revert", "done", {}, None, None),
]


def test_every_edge_of_the_diagram_has_exactly_one_guard_and_one_case_here():
    m = load_task_lifecycle()
    assert missing_guards(m) == set()
    assert {(a, b) for a, b, *_ in EDGES} == {(e.source, e.target) for e in m.edges if e.source != e.target}


@pytest.mark.parametrize("src, dst, good, bad, why", EDGES, ids=[f"{a}->{b}" for a, b, *_ in EDGES])
def test_edge_guard_satisfied_moves_the_task(tmp_path, src, dst, good, bad, why):
    tdir = make_task(tmp_path, phase=src, files=good)
    result = apply_plan(tmp_path, plan_advance(tmp_path, "t1", dst, actor=ACTOR, at=AT), actor=ACTOR)
    assert result["from"] == src and result["to"] == dst and result["changed"] is True
    state = json.loads((tdir / "state.json").read_text())
    assert state["phase"] == dst
    assert state["ticket"] == "RCS-42" and state["actors"]["planning"] == {"round": 3, "status": "workshop"}
    [line] = transcript(tdir)
    assert line["kind"] == "advance" and (line["from"], line["to"], line["actor"], line["at"]) == (src, dst, ACTOR, AT)
    assert line["reason"]  # the justification that held


@pytest.mark.parametrize("src, dst, good, bad, why", [e for e in EDGES if e[3] is not None],
                         ids=[f"{a}->{b}" for a, b, _, bad, _ in EDGES if bad is not None])
def test_edge_guard_unsatisfied_is_refused_and_nothing_changes(tmp_path, digest_tree, src, dst, good, bad, why):
    make_task(tmp_path, phase=src, files=bad)
    before = digest_tree(tmp_path)
    report = next_report(load_task(tmp_path, "t1"))
    assert why in [v["why"] for v in report["not_justified"]]
    with pytest.raises(TaskError) as exc:
        plan_advance(tmp_path, "t1", dst, actor=ACTOR)
    assert str(exc.value) == f"cannot advance t1: {why}"
    assert digest_tree(tmp_path) == before


def test_string_true_is_not_a_boolean_signal(tmp_path):
    make_task(tmp_path, phase="plan_review", files={"review/plan-review.json": {"ok": "true", "blocked": "false"}})
    report = next_report(load_task(tmp_path, "t1"))
    assert report["justified"] == []
    assert report["not_justified"][0]["why"].endswith("(ok='true', blocked='false')")


def test_next_report_shape(tmp_path):
    make_task(tmp_path, phase="test", files={"test/results.json": {"failed": 3}})
    assert next_report(load_task(tmp_path, "t1")) == {
        "id": "t1", "phase": "test", "terminal": False,
        "justified": [{"to": "codegen", "kind": "regression", "label": "test failures",
                       "why": "test/results.json: 3 failed"}],
        "not_justified": [{"to": "accept", "kind": "progress", "label": "tests complete",
                           "why": "test → accept needs completed tests in test/results.json without failures "
                                  "(3 failed)"}],
        "reachable": ["planning", "plan_review", "codegen", "review", "test", "accept", "done", "revert"],
        "redo": "`rcs-tui task redo t1 --reason R` re-runs test",
    }


def test_skipping_a_phase_is_refused_even_with_artifacts(tmp_path, digest_tree):
    files = {k: v for phase in FORWARD.values() for k, v in phase.items()}
    make_task(tmp_path, phase="planning", files=files)
    before = digest_tree(tmp_path)
    with pytest.raises(TaskError, match=r"^cannot advance t1 from planning to test: not an edge of the task "
                                        r"lifecycle \(phases are never skipped\)\. Valid next phases: plan_review\. "
                                        r"To force it, `rcs-tui task override` with a reason\.$"):
        plan_advance(tmp_path, "t1", "test", actor=ACTOR)
    assert digest_tree(tmp_path) == before


def test_advance_to_the_same_phase_is_idempotent_and_writes_nothing(tmp_path, digest_tree):
    make_task(tmp_path, phase="codegen")
    before = digest_tree(tmp_path)
    plan = plan_advance(tmp_path, "t1", "codegen", actor=ACTOR)
    assert plan.changes == () and plan.appends == ()
    assert apply_plan(tmp_path, plan, actor=ACTOR)["changed"] is False
    assert digest_tree(tmp_path) == before


def test_done_is_terminal_until_redo_reopens_it(tmp_path):
    tdir = make_task(tmp_path, phase="done")
    with pytest.raises(TaskError, match="t1 is done \\(terminal\\) and does not advance; reopen it with"):
        plan_advance(tmp_path, "t1", "planning", actor=ACTOR)
    with pytest.raises(TaskError, match="redo needs a non-empty --reason"):
        plan_redo(tmp_path, "t1", "  ", actor=ACTOR)
    apply_plan(tmp_path, plan_redo(tmp_path, "t1", "customer reopened", actor=ACTOR, at=AT), actor=ACTOR)
    state = json.loads((tdir / "state.json").read_text())
    assert state["phase"] == "planning"
    assert state["actors"]["planning"] == {"round": 4, "status": "pending"}
    assert transcript(tdir) == [{"at": AT, "actor": ACTOR, "from": "done", "to": "planning",
                                 "reason": "customer reopened", "kind": "redo"}]


def test_redo_reruns_the_current_phase(tmp_path):
    tdir = make_task(tmp_path, phase="codegen")
    apply_plan(tmp_path, plan_redo(tmp_path, "t1", "flaky generator", actor=ACTOR), actor=ACTOR)
    state = json.loads((tdir / "state.json").read_text())
    assert state["phase"] == "codegen" and state["actors"]["codegen"] == {"round": 2, "status": "pending"}
    assert transcript(tdir)[0]["kind"] == "redo"


# ---- override (seed 003 §7) ---------------------------------------------------------------------

@pytest.mark.parametrize("reason", [None, "", "   \n"])
def test_override_without_a_reason_is_refused(tmp_path, digest_tree, reason):
    make_task(tmp_path, phase="review")
    before = digest_tree(tmp_path)
    with pytest.raises(TaskError, match="^override needs a non-empty --reason"):
        plan_override(tmp_path, "t1", "test", reason, actor=ACTOR)
    assert digest_tree(tmp_path) == before


def test_override_to_an_unreachable_phase_lists_the_reachable_ones(tmp_path):
    make_task(tmp_path, phase="done")
    with pytest.raises(TaskError) as exc:
        plan_override(tmp_path, "t1", "review", "why not", actor=ACTOR)
    assert str(exc.value) == ("cannot override t1 from done to review: review is not reachable from done in the "
                              "task lifecycle. Reachable phases: none: done is terminal; reopen it with "
                              "`rcs-tui task redo t1 --reason R`")
    with pytest.raises(TaskError, match=r"^unknown phase 'shipping'; phases: planning, plan_review"):
        plan_override(tmp_path, "t1", "shipping", "why not", actor=ACTOR)


def test_override_skips_guards_records_the_reason_and_undo_restores_state_byte_for_byte(tmp_path):
    tdir = make_task(tmp_path, phase="review")
    original = (tdir / "state.json").read_bytes()
    plan = plan_override(tmp_path, "t1", "accept", "  I accept the risk of skipping review ", actor=ACTOR, at=AT)
    result = apply_plan(tmp_path, plan, actor=ACTOR)
    assert result == {"task": "t1", "kind": "override", "from": "review", "to": "accept", "changed": True,
                      "journal_id": result["journal_id"], "transcript": ".rcs/tasks/t1/transcript.jsonl"}
    assert json.loads((tdir / "state.json").read_text())["phase"] == "accept"
    assert transcript(tdir) == [{"at": AT, "actor": ACTOR, "from": "review", "to": "accept",
                                 "reason": "I accept the risk of skipping review", "kind": "override"}]
    entry = journal.read_journal(tmp_path)[-1]
    assert entry["id"] == result["journal_id"] and entry["action"] == "task override"
    assert entry["actor"] == ACTOR and entry["files"][0]["path"] == ".rcs/tasks/t1/state.json"

    journal.undo(tmp_path, result["journal_id"])
    assert (tdir / "state.json").read_bytes() == original
    # undo takes back the line the override appended (here it created the file), so the transcript agrees
    # with state.json again
    assert not (tdir / "transcript.jsonl").exists()


def test_state_changed_after_planning_is_not_overwritten(tmp_path):
    tdir = make_task(tmp_path, phase="review")
    plan = plan_override(tmp_path, "t1", "test", "hotfix", actor=ACTOR)
    (tdir / "state.json").write_text('{"phase": "codegen"}\n')
    with pytest.raises(ChangedUnderneath, match="state.json changed underneath"):
        apply_plan(tmp_path, plan, actor=ACTOR)
    assert (tdir / "state.json").read_text() == '{"phase": "codegen"}\n'
    assert not (tdir / "transcript.jsonl").exists()
    assert not (tmp_path / JOURNAL_REL).exists() or journal.read_journal(tmp_path) == []


# ---- bad input ----------------------------------------------------------------------------------

def test_malformed_state_json_names_the_file(tmp_path, digest_tree):
    tdir = make_task(tmp_path, phase="review")
    (tdir / "state.json").write_text('{"phase": "review",')
    before = digest_tree(tmp_path)
    with pytest.raises(TaskError, match=r"^\.rcs/tasks/t1/state\.json: invalid JSON at line 1"):
        plan_override(tmp_path, "t1", "test", "x", actor=ACTOR)
    assert digest_tree(tmp_path) == before


@pytest.mark.parametrize("state, message", [
    ({"phase": "deploying"}, 'field "phase": unknown phase \'deploying\'; valid phases: planning, plan_review'),
    ({"actors": {}}, 'field "phase" is missing'),
    ({"phase": 3}, 'field "phase" must be a string, got int'),
    ({"phase": "review", "actors": []}, 'field "actors" must be an object'),
])
def test_unusable_state_fields_are_named(tmp_path, state, message):
    make_task(tmp_path, state=state)
    with pytest.raises(TaskError) as exc:
        load_task(tmp_path, "t1")
    assert str(exc.value).startswith(f".rcs/tasks/t1/state.json: {message}")


@pytest.mark.parametrize("task_id", ["..", "../t1", "a/b", "t1/..", ""])
def test_task_ids_that_could_escape_are_refused(tmp_path, task_id):
    make_task(tmp_path, phase="review")
    with pytest.raises(BadName, match="invalid task id"):
        plan_override(tmp_path, task_id, "test", "x", actor=ACTOR)


def test_missing_task_is_a_clear_error(tmp_path):
    with pytest.raises(TaskError, match=r"^no task 'nope' in \.rcs/tasks/$"):
        load_task(tmp_path, "nope")


def test_non_jsonl_transcript_is_reported_and_appending_does_not_corrupt_it(tmp_path):
    tdir = make_task(tmp_path, phase="review")
    torn = '{"kind": "advance", "to": "review"}\nnot json at all\n{"kind": "adv'
    (tdir / "transcript.jsonl").write_text(torn)
    task = load_task(tmp_path, "t1")
    assert task.transcript.bad_lines == (2, 3) and len(task.transcript.entries) == 1
    apply_plan(tmp_path, plan_override(tmp_path, "t1", "test", "ship it", actor=ACTOR, at=AT), actor=ACTOR)
    text = (tdir / "transcript.jsonl").read_text()
    assert text.startswith(torn + "\n")  # nothing lost, the new record starts on its own line
    assert json.loads(text.splitlines()[-1])["reason"] == "ship it"
    assert load_task(tmp_path, "t1").transcript.bad_lines == (2, 3)


def test_transcript_that_is_a_directory_refuses_the_move(tmp_path, digest_tree):
    tdir = make_task(tmp_path, phase="review")
    (tdir / "transcript.jsonl").mkdir()
    before = digest_tree(tmp_path)
    with pytest.raises(TaskError, match=r"transcript.jsonl: .*not a regular file \(a directory\).*nothing was changed"):
        plan_override(tmp_path, "t1", "test", "x", actor=ACTOR)
    assert digest_tree(tmp_path) == before
