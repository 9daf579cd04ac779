"""Task-lifecycle guards on artifacts (seed 003 §3, §6), evaluated purely from described artifacts."""

from __future__ import annotations

import pytest

from rcs_tui.core.machine import load_task_lifecycle, parse_machine
from rcs_tui.core.task_lifecycle import Artifacts, Doc, Verdict, evaluate, failing_tests, is_terminal, missing_guards

PLAN_AI = "planning/planning.ai.json"
PLAN_FILES = "plan.files.json"
PLAN_REVIEW = "review/plan-review.json"
CODEGEN = "code/codegen.json"
CODE_REVIEW = "review/code-review.json"
RESULTS = "test/results.json"
DECISION = "accept/decision.json"


def arts(diff: bool = False, files: tuple[str, ...] = (), **docs) -> Artifacts:
    """Artifacts from keyword docs: a dict/list is parsed JSON, a str is a read error."""
    names = {"plan_ai": PLAN_AI, "plan_files": PLAN_FILES, "plan_review": PLAN_REVIEW, "codegen": CODEGEN,
             "code_review": CODE_REVIEW, "results": RESULTS, "decision": DECISION}
    parsed = {names[k]: (Doc(True, error=v) if isinstance(v, str) else Doc(True, data=v)) for k, v in docs.items()}
    return Artifacts(parsed, diff, files)


def verdict(phase: str, to: str, a: Artifacts) -> Verdict:
    return next(v for v in evaluate(phase, a) if v.to == to)


def ok(phase: str, to: str, a: Artifacts) -> bool:
    return verdict(phase, to, a).ok


def test_every_edge_has_a_guard_and_done_is_the_only_terminal_phase():
    m = load_task_lifecycle()
    assert missing_guards(m) == set()
    assert [p for p in m.states if is_terminal(p)] == ["done"]


def test_verdicts_list_every_next_phase_with_kind_and_label():
    out = evaluate("accept", Artifacts())
    assert [(v.to, v.kind, v.label) for v in out] == [
        ("done", "progress", "accepted"), ("codegen", "regression", "requires further changes"),
        ("review", "regression", "unclear / needs review"), ("planning", "regression", "upstream problem"),
        ("revert", "progress", "revert requested")]
    assert [v.to for v in evaluate("codegen", Artifacts())] == ["review", "planning", "plan_review"]
    assert evaluate("nowhere", Artifacts()) == () and evaluate("done", Artifacts()) == ()
    assert verdict("plan_review", "planning", Artifacts()).label == "review needs changes"
    assert verdict("revert", "done", Artifacts()).as_dict() == {
        "to": "done", "kind": "progress", "label": None, "why": "revert is complete; done is terminal"}


# planning → plan_review
@pytest.mark.parametrize("a, why", [
    (arts(plan_files=["a.py"]), "needs planning/planning.ai.json (missing)"),
    (arts(plan_ai="bad JSON", plan_files=["a.py"]), "needs planning/planning.ai.json (unreadable: bad JSON)"),
    (arts(plan_ai=["q"], plan_files=["a.py"]), "needs planning/planning.ai.json (not a JSON object)"),
    (arts(plan_ai={"blocking_questions": ["db?", "auth?"]}, plan_files=["a.py"]),
     "needs no blocking questions in planning/planning.ai.json (2 open)"),
    (arts(plan_ai={"blocking_questions": 3}, plan_files=["a.py"]),
     "needs no blocking questions in planning/planning.ai.json (3 open)"),
    (arts(plan_ai={"questions": [{"blocking": True}, {"blocking": True, "answered": False}]}, plan_files=["a.py"]),
     "needs no blocking questions in planning/planning.ai.json (2 open)"),
    (arts(plan_ai={}), 'needs a valid plan.files.json or a "files" list in planning/planning.ai.json '
                       "(plan.files.json is missing)"),
    (arts(plan_ai={}, plan_files="bad JSON"), 'needs a valid plan.files.json or a "files" list in '
                                              "planning/planning.ai.json (plan.files.json unreadable: bad JSON)"),
    (arts(plan_ai={}, plan_files={"files": [1]}), 'needs a valid plan.files.json or a "files" list in '
                                                  "planning/planning.ai.json (plan.files.json is not a list of paths)"),
    (arts(plan_ai={"files": ["a.py", 2]}), 'needs a valid plan.files.json or a "files" list in '
                                           "planning/planning.ai.json (plan.files.json is missing)"),
])
def test_planning_guard_refusals(a, why):
    v = verdict("planning", "plan_review", a)
    assert not v.ok and v.why == f"planning → plan_review {why}" and v.kind == "progress"


@pytest.mark.parametrize("a, why", [
    (arts(plan_ai={"questions": [{"blocking": True, "answered": True}, {"blocking": True, "resolved": True},
                                 {"blocking": "true"}, "text"], "blocking_questions": True},
          plan_files={"files": ["a.py", "b.py"]}),
     "planning/planning.ai.json present, no blocking questions, plan files plan.files.json (2)"),
    (arts(plan_ai={"blocking_questions": -1, "files": ["a.py"]}),
     "planning/planning.ai.json present, no blocking questions, plan files inferred from "
     "planning/planning.ai.json (1)"),
])
def test_planning_guard_passes(a, why):
    v = verdict("planning", "plan_review", a)
    assert v.ok and v.why == why


# plan_review → codegen / planning
@pytest.mark.parametrize("review, detail", [
    ({"ok": True}, "ok=true, blocked=missing"), ({"ok": True, "blocked": True}, "ok=true, blocked=true"),
    ({"ok": "true", "blocked": False}, "ok='true', blocked=false"), ({"blocked": False}, "ok=missing, blocked=false"),
])
def test_plan_review_needs_ok_true_and_blocked_false(review, detail):
    v = verdict("plan_review", "codegen", arts(plan_review=review))
    assert not v.ok and v.why == ("plan_review → codegen needs review/plan-review.json with ok=true and "
                                  f"blocked=false ({detail})")
    assert ok("plan_review", "codegen", arts(plan_review={"ok": True, "blocked": False}))
    assert verdict("plan_review", "codegen", arts()).why.endswith("blocked=false (missing)")


@pytest.mark.parametrize("review, signals", [
    ({"needs_changes": True}, "needs_changes"), ({"needs_changes": "plan"}, "needs_changes"),
    ({"blocked": True}, "blocked"), ({"structural_flaw": True}, "structural_flaw"),
    ({"reviews": [{"ok": False, "severity": "blocking"}, {"severity": "blocking"}, {"ok": True, "severity": "blocking"},
                  {"ok": False, "severity": "minor"}]}, "2 blocking reviewers"),
    ({"needs_changes": True, "blocked": True, "structural_flaw": True, "reviews": [{"severity": "blocking"}]},
     "needs_changes, blocked, structural_flaw, 1 blocking reviewer"),
])
def test_plan_review_back_to_planning_signals(review, signals):
    v = verdict("plan_review", "planning", arts(plan_review=review))
    assert v.ok and v.why == f"review/plan-review.json signals {signals}" and v.kind == "regression"


@pytest.mark.parametrize("review", [{"ok": True, "blocked": False}, {"needs_changes": "someday"},
                                    {"blocked": "true"}, {"reviews": "blocking"}])
def test_plan_review_without_a_signal_stays(review):
    v = verdict("plan_review", "planning", arts(plan_review=review))
    assert not v.ok and v.why.endswith("(none found)")
    assert verdict("plan_review", "planning", arts()).why.endswith("severity blocking (missing)")


# codegen → review / planning / plan_review
def test_codegen_needs_a_patch_and_generated_files():
    assert ok("codegen", "review", arts(diff=True, files=("a.py",)))
    assert verdict("codegen", "review", arts(diff=True, files=("a.py", "b.py"))).why == (
        "code/diff.patch present and 2 files in code/files/")
    assert verdict("codegen", "review", arts(files=("a.py",))).why == (
        "codegen → review needs code/diff.patch and generated files in code/files/ (code/diff.patch missing or empty)")
    assert verdict("codegen", "review", arts(diff=True)).why == (
        "codegen → review needs code/diff.patch and generated files in code/files/ (no files in code/files/)")


@pytest.mark.parametrize("a, why", [
    (arts(codegen={"scope_mismatch": True}), "code/codegen.json signals a scope mismatch"),
    (arts(codegen={"needs_changes": "planning"}), "code/codegen.json signals a scope mismatch"),
    (arts(plan_files=["a.py"], files=("a.py", "b.py")), "scope mismatch: 1 generated file not in the plan (b.py)"),
    (arts(plan_files=["a.py"], files=("b", "c", "d", "e", "a.py")),
     "scope mismatch: 4 generated files not in the plan (b, c, d …)"),
    (arts(plan_files=["a.py"], files=("b", "c", "d")), "scope mismatch: 3 generated files not in the plan (b, c, d)"),
])
def test_scope_mismatch_sends_codegen_back_to_planning(a, why):
    v = verdict("codegen", "planning", a)
    assert v.ok and v.why == why and v.kind == "regression"


@pytest.mark.parametrize("a", [arts(codegen={"scope_mismatch": "true"}), arts(codegen={"needs_changes": "code"}),
                               arts(plan_files=["a.py"], files=("a.py",)), arts(files=("b.py",)),
                               arts(plan_files=["a.py"])])
def test_no_scope_mismatch(a):
    assert not ok("codegen", "planning", a)


@pytest.mark.parametrize("report", [{"plan_unclear": True}, {"blocked": True}, {"needs_changes": "plan_review"},
                                    {"missing_plan_parts": ["auth"]}])
def test_unclear_plan_sends_codegen_back_to_plan_review(report):
    v = verdict("codegen", "plan_review", arts(codegen=report))
    assert v.ok and v.why == "code/codegen.json signals the plan is unclear or incomplete"


@pytest.mark.parametrize("report, detail", [({"missing_plan_parts": []}, "no such signal"),
                                            ({"missing_plan_parts": "auth", "blocked": 1}, "no such signal"),
                                            ("bad JSON", "unreadable: bad JSON")])
def test_plan_clear_enough_keeps_codegen(report, detail):
    v = verdict("codegen", "plan_review", arts(codegen=report))
    assert not v.ok and v.why.endswith(f"missing_plan_parts ({detail})")


# review → test / codegen / planning
@pytest.mark.parametrize("review, found", [
    ({"blocked": True}, "blocked=true"), ({"ok": False}, "ok=false"),
    ({"needs_changes": True}, "needs_changes → codegen"), ({"plan_flawed": True}, "needs_changes → planning"),
    ({"plan_misaligned": True}, "needs_changes → planning"),
    ({"issues": [{"severity": "blocking"}, {"severity": "blocking", "ok": True}]}, "1 blocking issue(s)"),
    ({"blocked": True, "ok": False, "needs_changes": "code", "issues": [{"severity": "blocking"}]},
     "blocked=true, ok=false, needs_changes → codegen, 1 blocking issue(s)"),
])
def test_review_guard_blocks_the_move_to_test(review, found):
    v = verdict("review", "test", arts(code_review=review))
    assert not v.ok and v.why == ("review → test needs review/code-review.json with no blocking issues, "
                                  f"or an override with a reason ({found})")


def test_clean_review_moves_to_test():
    v = verdict("review", "test", arts(code_review={"ok": True, "blocked": False, "issues": [{"severity": "minor"}]}))
    assert v.ok and v.why == "review/code-review.json reports no blocking issues"
    assert verdict("review", "test", arts()).why.endswith("override with a reason (missing)")


@pytest.mark.parametrize("review, to_codegen, to_planning", [
    ({"needs_changes": True}, True, False), ({"needs_changes": "code"}, True, False),
    ({"issues": [{"severity": "blocking"}]}, True, False), ({"blocked": True}, True, False),
    ({"needs_changes": "plan"}, False, True), ({"plan_flawed": True, "needs_changes": True}, False, True),
    ({"plan_misaligned": True, "blocked": True}, False, True),
    ({"plan_flawed": "yes", "blocked": "true"}, False, False), ({"ok": False}, False, False),
])
def test_review_regressions_follow_what_the_review_blames(review, to_codegen, to_planning):
    a = arts(code_review=review)
    assert ok("review", "codegen", a) is to_codegen
    assert ok("review", "planning", a) is to_planning


# test → accept / codegen
@pytest.mark.parametrize("results, failures", [
    ({"failed": 2}, ["2 failed"]), ({"ok": False}, ["ok=false"]), ({"lint_ok": False}, ["lint_ok=false"]),
    ({"static_ok": False}, ["static_ok=false"]), ({"failed": 1, "ok": False}, ["1 failed", "ok=false"]),
])
def test_failing_results_send_test_back_to_codegen(results, failures):
    a = arts(results=results)
    assert failing_tests(a.doc(RESULTS)) == failures
    back = verdict("test", "codegen", a)
    assert back.ok and back.why == f"test/results.json: {', '.join(failures)}"
    forward = verdict("test", "accept", a)
    assert not forward.ok and forward.why == ("test → accept needs completed tests in test/results.json without "
                                              f"failures ({', '.join(failures)})")


@pytest.mark.parametrize("results", [{"failed": 0, "passed": 3}, {"failed": True}, {"ok": "false"}, {"failed": "2"}])
def test_passing_results_move_to_accept(results):
    a = arts(results=results)
    assert ok("test", "accept", a) and not ok("test", "codegen", a)
    assert verdict("test", "codegen", a).why == ("test → codegen needs failing tests or lint in test/results.json "
                                                 "(no failures recorded)")
    assert verdict("test", "accept", arts()).why.endswith("without failures (missing)")


# accept → *
@pytest.mark.parametrize("decision, target", [("accepted", "done"), ("changes", "codegen"), ("review", "review"),
                                              ("replan", "planning"), ("revert", "revert")])
def test_each_decision_leads_to_its_phase_only(decision, target):
    out = {v.to: v for v in evaluate("accept", arts(decision={"decision": decision}))}
    assert [to for to, v in out.items() if v.ok] == [target]
    assert out[target].why == f"accept/decision.json records decision={decision}"


@pytest.mark.parametrize("doc", [{"regression": True}, {"revert_requested": True}])
def test_regression_or_revert_request_allows_revert(doc):
    v = verdict("accept", "revert", arts(decision=doc))
    assert v.ok and v.why == "accept/decision.json reports a regression or a revert request"
    assert not ok("accept", "done", arts(decision=doc))


def test_refused_decision_names_what_is_recorded():
    assert verdict("accept", "done", arts(decision={"decision": "Accepted"})).why == (
        "accept → done needs accept/decision.json with decision='accepted' (decision='Accepted')")
    assert verdict("accept", "revert", arts(decision={"regression": "yes"})).why == (
        "accept → revert needs accept/decision.json with decision='revert' (decision=missing)")
    assert verdict("accept", "done", arts()).why.endswith("(missing)")


@pytest.mark.parametrize("phase, to", [("plan_review", "codegen"), ("plan_review", "planning"), ("review", "test"),
                                       ("test", "accept"), ("accept", "done"), ("accept", "revert")])
@pytest.mark.parametrize("doc", [None, "bad JSON", ["not", "an", "object"]])
def test_a_missing_or_unusable_artifact_never_satisfies_a_guard(phase, to, doc):
    docs = {"plan_review": doc, "code_review": doc, "results": doc, "decision": doc} if doc is not None else {}
    assert not ok(phase, to, arts(**docs))


def test_a_doc_that_failed_to_read_yields_no_values():
    assert Doc(True, error="truncated", data={"ok": True}).get("ok") is None
    assert Doc(False, data={"ok": True}).get("ok") is None and Doc(True, data={"ok": True}).get("ok") is True


def test_long_recorded_values_are_cut_to_forty_characters():
    v = verdict("plan_review", "codegen", arts(plan_review={"ok": "y" * 60, "blocked": False}))
    assert f"ok={repr('y' * 60)[:40]}, blocked=false)" in v.why


def test_needs_changes_codegen_spelling_asks_for_code_changes():
    assert ok("review", "codegen", arts(code_review={"needs_changes": " CodeGen "}))
    assert not ok("review", "planning", arts(code_review={"needs_changes": "codegen"}))


def test_an_edge_without_a_guard_is_never_taken_and_self_loops_are_skipped_wherever_they_stand():
    m = parse_machine("stateDiagram-v2\n[*] --> planning\nplanning --> planning\nplanning --> done : ship\n", "t")
    [v] = evaluate("planning", Artifacts(), m)
    assert (v.to, v.ok, v.kind, v.label) == ("done", False, "progress", "ship")
    assert v.why == "planning → done no guard defined for this edge"
