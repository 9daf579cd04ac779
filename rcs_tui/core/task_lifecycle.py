"""Guards of the task lifecycle: which transitions the artifacts justify, and why not.

The graph is the packaged diagram (`load_task_lifecycle`); this module adds one guard per edge.
Guards see a plain description of the task's artifacts (`Artifacts`, built by `state.tasks`),
so they are pure and testable without files. Artifact values are untrusted: a flag counts only
when it is a real JSON boolean (`"true"` the string is not `true`).

Signals read from the artifacts:
- `planning/planning.ai.json`: `blocking_questions` (list or count) or `questions[]` with
  `blocking: true` and not `answered`/`resolved`; an optional `files` list to infer the plan.
- `plan.files.json`: a list of paths or `{"files": [...]}`.
- `review/plan-review.json`: `ok`, `blocked`, `needs_changes`, `structural_flaw`,
  `reviews[]` with `ok`/`severity`.
- `code/diff.patch` (non-empty), `code/files/` (at least one file), `code/codegen.json`:
  `scope_mismatch`, `plan_unclear`, `missing_plan_parts`, `needs_changes`.
- `review/code-review.json`: `ok`, `blocked`, `needs_changes` (`true`/"code" → codegen,
  "plan" → planning), `plan_flawed`, `issues[]` with `severity`.
- `test/results.json`: `failed` (count), `ok`, `lint_ok`, `static_ok`.
- `accept/decision.json`: `decision` ∈ accepted | changes | review | replan | revert,
  `regression`, `revert_requested`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from rcs_tui.core.machine import StateMachine, load_task_lifecycle
from rcs_tui.core.words import plural

PLANNING_AI = "planning/planning.ai.json"
PLAN_FILES = "plan.files.json"
PLAN_REVIEW = "review/plan-review.json"
DIFF_PATCH = "code/diff.patch"
CODE_FILES = "code/files/"
CODEGEN_REPORT = "code/codegen.json"
CODE_REVIEW = "review/code-review.json"
TEST_RESULTS = "test/results.json"
DECISION = "accept/decision.json"
JSON_ARTIFACTS: tuple[str, ...] = (PLANNING_AI, PLAN_FILES, PLAN_REVIEW, CODEGEN_REPORT, CODE_REVIEW,
                                   TEST_RESULTS, DECISION)

DECISIONS: dict[str, str] = {"accepted": "done", "changes": "codegen", "review": "review",
                             "replan": "planning", "revert": "revert"}


@dataclass(frozen=True)
class Doc:
    """One JSON artifact as read from disk: missing, broken (with the reason) or parsed."""

    exists: bool = False
    error: str | None = None
    data: Any = None

    @property
    def ok(self) -> bool:
        return self.exists and self.error is None

    def get(self, key: str) -> Any:
        return self.data.get(key) if self.ok and isinstance(self.data, dict) else None


@dataclass(frozen=True)
class Artifacts:
    """What the guards inspect, keyed by path relative to the task directory."""

    docs: Mapping[str, Doc] = field(default_factory=dict)
    diff_patch: bool = False
    code_files: tuple[str, ...] = ()

    def doc(self, rel: str) -> Doc:
        return self.docs.get(rel, Doc())


@dataclass(frozen=True)
class Verdict:
    """Whether the artifacts justify moving to `to` now, and the reason either way."""

    to: str
    ok: bool
    why: str
    kind: Literal["progress", "regression"]
    label: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"to": self.to, "kind": self.kind, "label": self.label, "why": self.why}


Check = tuple[bool, str]


def _state(doc: Doc) -> str:
    """Why a JSON artifact cannot be used (empty when it is a readable object)."""
    if not doc.exists:
        return "missing"
    if doc.error:
        return f"unreadable: {doc.error}"
    if not isinstance(doc.data, dict):
        return "not a JSON object"
    return ""


def _shown(value: Any) -> str:
    if value is None:
        return "missing"
    text = repr(value) if not isinstance(value, bool) else str(value).lower()
    return text[:40]


def _target(value: Any) -> str | None:
    """Normalise a `needs_changes` signal to the phase it asks for."""
    if value is True:
        return "codegen"
    if isinstance(value, str):
        return {"code": "codegen", "codegen": "codegen", "plan": "planning", "planning": "planning",
                "plan_review": "plan_review"}.get(value.strip().lower())
    return None


def _blocking(items: Any) -> int:
    if not isinstance(items, list):
        return 0
    return sum(1 for i in items if isinstance(i, dict) and i.get("severity") == "blocking"
               and i.get("ok") is not True)


def plan_file_list(a: Artifacts) -> tuple[str, list[str] | None]:
    """(where the plan's file list comes from or why there is none, the list or None)."""
    doc = a.doc(PLAN_FILES)
    if doc.exists:
        if not doc.ok:
            return f"{PLAN_FILES} unreadable: {doc.error}", None
        files = doc.data.get("files") if isinstance(doc.data, dict) else doc.data
        if isinstance(files, list) and all(isinstance(x, str) for x in files):
            return PLAN_FILES, files
        return f"{PLAN_FILES} is not a list of paths", None
    inferred = a.doc(PLANNING_AI).get("files")
    if isinstance(inferred, list) and all(isinstance(x, str) for x in inferred):
        return f"inferred from {PLANNING_AI}", inferred
    return f"{PLAN_FILES} is missing", None


def open_questions(doc: Doc) -> int:
    bq = doc.get("blocking_questions")
    if isinstance(bq, list):
        return len(bq)
    if isinstance(bq, int) and not isinstance(bq, bool):
        return max(bq, 0)
    qs = doc.get("questions")
    if not isinstance(qs, list):
        return 0
    return sum(1 for q in qs if isinstance(q, dict) and q.get("blocking") is True
               and q.get("answered") is not True and q.get("resolved") is not True)


def _planning_to_plan_review(a: Artifacts) -> Check:
    doc = a.doc(PLANNING_AI)
    if bad := _state(doc):
        return False, f"needs {PLANNING_AI} ({bad})"
    if n := open_questions(doc):
        return False, f"needs no blocking questions in {PLANNING_AI} ({n} open)"
    source, files = plan_file_list(a)
    if files is None:
        return False, f"needs a valid {PLAN_FILES} or a \"files\" list in {PLANNING_AI} ({source})"
    return True, f"{PLANNING_AI} present, no blocking questions, plan files {source} ({len(files)})"


def _plan_review_to_codegen(a: Artifacts) -> Check:
    doc = a.doc(PLAN_REVIEW)
    need = f"needs {PLAN_REVIEW} with ok=true and blocked=false"
    if bad := _state(doc):
        return False, f"{need} ({bad})"
    if doc.get("ok") is True and doc.get("blocked") is False:
        return True, f"{PLAN_REVIEW} has ok=true and blocked=false"
    return False, f"{need} (ok={_shown(doc.get('ok'))}, blocked={_shown(doc.get('blocked'))})"


def _plan_review_to_planning(a: Artifacts) -> Check:
    doc = a.doc(PLAN_REVIEW)
    need = (f"needs {PLAN_REVIEW} signalling needs_changes, blocked, a structural flaw "
            "or a reviewer with ok=false and severity blocking")
    if bad := _state(doc):
        return False, f"{need} ({bad})"
    signals = [k for k in ("needs_changes", "blocked", "structural_flaw") if doc.get(k) is True
               or (k == "needs_changes" and _target(doc.get(k)) is not None)]
    if n := _blocking(doc.get("reviews")):
        signals.append(plural(n, "blocking reviewer"))
    if signals:
        return True, f"{PLAN_REVIEW} signals {', '.join(signals)}"
    return False, f"{need} (none found)"


def _codegen_to_review(a: Artifacts) -> Check:
    missing = []
    if not a.diff_patch:
        missing.append(f"{DIFF_PATCH} missing or empty")
    if not a.code_files:
        missing.append(f"no files in {CODE_FILES}")
    if missing:
        return False, f"needs {DIFF_PATCH} and generated files in {CODE_FILES} ({'; '.join(missing)})"
    return True, f"{DIFF_PATCH} present and {plural(len(a.code_files), 'file')} in {CODE_FILES}"


def _codegen_to_planning(a: Artifacts) -> Check:
    doc = a.doc(CODEGEN_REPORT)
    if doc.get("scope_mismatch") is True or _target(doc.get("needs_changes")) == "planning":
        return True, f"{CODEGEN_REPORT} signals a scope mismatch"
    source, planned = plan_file_list(a)
    if planned is not None and a.code_files:
        extra = [f for f in a.code_files if f not in planned]
        if extra:
            shown = ", ".join(extra[:3]) + (" …" if len(extra) > 3 else "")
            return True, f"scope mismatch: {plural(len(extra), 'generated file')} not in the plan ({shown})"
    return False, (f"needs a scope mismatch: generated files outside the plan's file list, or "
                   f"scope_mismatch=true in {CODEGEN_REPORT} (none found)")


def _codegen_to_plan_review(a: Artifacts) -> Check:
    doc = a.doc(CODEGEN_REPORT)
    missing = doc.get("missing_plan_parts")
    if (doc.get("plan_unclear") is True or doc.get("blocked") is True
            or _target(doc.get("needs_changes")) == "plan_review" or (isinstance(missing, list) and missing)):
        return True, f"{CODEGEN_REPORT} signals the plan is unclear or incomplete"
    return False, (f"needs {CODEGEN_REPORT} with plan_unclear=true, blocked=true or missing_plan_parts "
                   f"({_state(doc) or 'no such signal'})")


def _review_signals(a: Artifacts) -> tuple[Doc, str | None, int]:
    doc = a.doc(CODE_REVIEW)
    target = _target(doc.get("needs_changes"))
    if doc.get("plan_flawed") is True or doc.get("plan_misaligned") is True:
        target = "planning"
    return doc, target, _blocking(doc.get("issues"))


def _review_to_test(a: Artifacts) -> Check:
    doc, target, blocking = _review_signals(a)
    need = f"needs {CODE_REVIEW} with no blocking issues, or an override with a reason"
    if bad := _state(doc):
        return False, f"{need} ({bad})"
    found = []
    if doc.get("blocked") is True:
        found.append("blocked=true")
    if doc.get("ok") is False:
        found.append("ok=false")
    if target:
        found.append(f"needs_changes → {target}")
    if blocking:
        found.append(f"{blocking} blocking issue(s)")
    if found:
        return False, f"{need} ({', '.join(found)})"
    return True, f"{CODE_REVIEW} reports no blocking issues"


def _review_to_codegen(a: Artifacts) -> Check:
    doc, target, blocking = _review_signals(a)
    if target == "codegen" or (target is None and (blocking or doc.get("blocked") is True)):
        return True, f"{CODE_REVIEW} asks for code changes"
    return False, f"needs {CODE_REVIEW} with needs_changes=true/\"code\" or blocking issues (none found)"


def _review_to_planning(a: Artifacts) -> Check:
    _doc, target, _ = _review_signals(a)
    if target == "planning":
        return True, f"{CODE_REVIEW} reports the plan is flawed"
    return False, f"needs {CODE_REVIEW} with needs_changes=\"plan\" or plan_flawed=true (none found)"


def failing_tests(doc: Doc) -> list[str]:
    """Why the recorded test run counts as failing (empty = passing)."""
    out = []
    failed = doc.get("failed")
    if isinstance(failed, int) and not isinstance(failed, bool) and failed > 0:
        out.append(f"{failed} failed")
    for key in ("ok", "lint_ok", "static_ok"):
        if doc.get(key) is False:
            out.append(f"{key}=false")
    return out


def _test_to_accept(a: Artifacts) -> Check:
    doc = a.doc(TEST_RESULTS)
    need = f"needs completed tests in {TEST_RESULTS} without failures"
    if bad := _state(doc):
        return False, f"{need} ({bad})"
    if failures := failing_tests(doc):
        return False, f"{need} ({', '.join(failures)})"
    return True, f"{TEST_RESULTS} records a completed run without failures"


def _test_to_codegen(a: Artifacts) -> Check:
    doc = a.doc(TEST_RESULTS)
    if failures := failing_tests(doc):
        return True, f"{TEST_RESULTS}: {', '.join(failures)}"
    return False, f"needs failing tests or lint in {TEST_RESULTS} ({_state(doc) or 'no failures recorded'})"


def _accept_to(target: str, a: Artifacts) -> Check:
    """accept → `target` needs the decision that names it (revert also follows a regression or a request)."""
    wanted = next(k for k, v in DECISIONS.items() if v == target)
    doc = a.doc(DECISION)
    value = doc.get("decision")
    if value == wanted:
        return True, f"{DECISION} records decision={wanted}"
    if target == "revert" and (doc.get("regression") is True or doc.get("revert_requested") is True):
        return True, f"{DECISION} reports a regression or a revert request"
    return False, f"needs {DECISION} with decision={wanted!r} ({_state(doc) or 'decision=' + _shown(value)})"


GUARDS: dict[tuple[str, str], Callable[[Artifacts], Check]] = {
    ("planning", "plan_review"): _planning_to_plan_review,
    ("plan_review", "codegen"): _plan_review_to_codegen,
    ("plan_review", "planning"): _plan_review_to_planning,
    ("codegen", "review"): _codegen_to_review,
    ("codegen", "planning"): _codegen_to_planning,
    ("codegen", "plan_review"): _codegen_to_plan_review,
    ("review", "test"): _review_to_test,
    ("review", "codegen"): _review_to_codegen,
    ("review", "planning"): _review_to_planning,
    ("test", "accept"): _test_to_accept,
    ("test", "codegen"): _test_to_codegen,
    ("accept", "done"): partial(_accept_to, "done"),
    ("accept", "codegen"): partial(_accept_to, "codegen"),
    ("accept", "review"): partial(_accept_to, "review"),
    ("accept", "planning"): partial(_accept_to, "planning"),
    ("accept", "revert"): partial(_accept_to, "revert"),
    ("revert", "done"): lambda a: (True, "revert is complete; done is terminal"),
}

# Forward order of the phases; a move to an earlier phase is a regression.
ORDER = ("planning", "plan_review", "codegen", "review", "test", "accept", "revert", "done")


def missing_guards(machine: StateMachine) -> set[tuple[str, str]]:
    """Edges (other than self-loops) without a guard, and guards without an edge; empty when in sync."""
    edges = {(e.source, e.target) for e in machine.edges if e.source != e.target}
    return edges ^ set(GUARDS)


def evaluate(phase: str, artifacts: Artifacts, machine: StateMachine | None = None) -> tuple[Verdict, ...]:
    """One verdict per phase reachable by one edge from `phase` (self-loops are redo, not listed)."""
    m = machine or load_task_lifecycle()
    out = []
    for target in m.next_states(phase):
        if target == phase:
            continue
        label = next((e.label for e in m.edges if e.source == phase and e.target == target), None)
        guard = GUARDS.get((phase, target))
        ok, why = guard(artifacts) if guard else (False, "no guard defined for this edge")
        kind: Literal["progress", "regression"] = (
            "regression" if target in ORDER and phase in ORDER and ORDER.index(target) < ORDER.index(phase)
            else "progress")
        if not ok:
            why = f"{phase} → {target} {why}"
        out.append(Verdict(target, ok, why, kind, label))
    return tuple(out)


def override_targets(phase: str, machine: StateMachine | None = None) -> list[str]:
    """The phases an override may move a task in `phase` to: every phase the lifecycle reaches from it by
    some path, in the lifecycle's order, not the phase itself (re-running a phase is a redo). The override's
    plan checks the same rule again, so a list made from an older reading of the phase cannot slip past it."""
    m = machine or load_task_lifecycle()
    reach = m.reachable_from(phase) if phase in m.states else frozenset()
    return [s for s in m.states if s in reach and s != phase]


def is_terminal(phase: str, machine: StateMachine | None = None) -> bool:
    """`done` (no outgoing edge): the task advances no further unless reopened with redo."""
    return phase in (machine or load_task_lifecycle()).sinks()
