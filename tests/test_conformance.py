"""Conformance: every state machine rcs-tui ships and every state diagram of the contracts, parsed and
checked against hand-written expectations (states in order, initial and terminal states, edges).

The packaged machines are read through the same extractor rp1 uses on a SKILL.md / agent file; the
contract diagrams are copied here verbatim (the contract pages are not part of the package), and each
is also checked against the Mermaid rules rcs-tui follows: every id is a Mermaid id, and each diagram
round-trips through the markdown extractor unchanged when wrapped in a `## STATE-MACHINE` section.
"""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from rcs_tui.core.machine import extract_state_machine, load_task_lifecycle, machine_from_markdown, parse_machine
from rcs_tui.rp1.machines import builtin_machines

# name -> (states in declaration order, initial, terminal, edges (source, target, label))
Expected = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[tuple[str, str, str | None], ...]]
SHIPPED: dict[str, Expected] = {
    "build": (("requirements", "design", "tasks", "build", "verify", "archive"), ("requirements",), ("archive",), (
        ("requirements", "design", "requirements_ready"), ("design", "tasks", "design_ready"),
        ("tasks", "build", "tasks_ready"), ("build", "verify", "build_complete"),
        ("verify", "build", "verification_failed"), ("verify", "archive", "verified"))),
    "build-fast": (("plan", "build", "review"), ("plan",), ("review",), (
        ("plan", "build", "plan_ready"), ("build", "review", "build_complete"))),
    "pr-review": (("split", "review", "synthesize", "post"), ("split",), ("post",), (
        ("split", "review", "split_ready"), ("review", "synthesize", "reviews_done"),
        ("synthesize", "post", "synthesized"))),
    "deep-research": (("clarify", "plan", "explore", "synthesize", "report"), ("clarify",), ("report",), (
        ("clarify", "plan", "clarified"), ("plan", "explore", "planned"), ("explore", "synthesize", "explored"),
        ("synthesize", "report", "synthesized"))),
    "blueprint": (("detect", "charter", "prd"), ("detect",), ("prd",), (
        ("detect", "charter", "no_charter"), ("detect", "prd", "charter_exists"), ("charter", "prd", "charter_ready"))),
    **{agent: ((work, "completed", "failed"), (work,), ("completed", "failed"), (
        (work, "completed", f"{work}_success"), (work, "failed", f"{work}_error")))
       for agent, work in {"task-builder": "building", "task-reviewer": "reviewing",
                           "feature-verifier": "verifying", "hypothesis-tester": "testing"}.items()},
}

SHIPPED_KIND = {"task-builder": "agent", "task-reviewer": "agent", "feature-verifier": "agent",
                "hypothesis-tester": "agent"}

# BFS order from the initial states: the order rp1 lists steps and marks earlier ones skipped.
SHIPPED_ORDER = {
    "build": ("requirements", "design", "tasks", "build", "verify", "archive"),
    "blueprint": ("detect", "charter", "prd"),
}

MERMAID_ID = re.compile(r"[^:\s{-]+")


def _packaged_markdown() -> dict[str, str]:
    folder = files("rcs_tui.rp1").joinpath("machines")
    return {e.name[:-3]: e.read_text(encoding="utf-8") for e in folder.iterdir() if e.name.endswith(".md")}


def test_every_packaged_machine_has_an_expectation():
    assert sorted(_packaged_markdown()) == sorted(SHIPPED)
    assert sorted(builtin_machines()) == sorted(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_packaged_machine(name):
    states, initial, terminal, edges = SHIPPED[name]
    markdown = _packaged_markdown()[name]
    assert markdown.count("## STATE-MACHINE\n") == 1
    m = machine_from_markdown(markdown, name)
    assert m is not None
    assert m.states == states
    assert m.initial == initial
    assert m.terminal == terminal
    assert tuple((e.source, e.target, e.label) for e in m.edges) == edges
    assert all(MERMAID_ID.fullmatch(s) for s in m.states)
    assert m.bfs_order() == SHIPPED_ORDER.get(name, states)
    info = builtin_machines()[name]
    assert (info.kind, info.error) == (SHIPPED_KIND.get(name, "skill"), None)
    # every state is reachable from an initial state, and every non-terminal state can move on
    reach = set(initial).union(*(m.reachable_from(s) for s in initial))
    assert reach == set(states)
    assert all(m.next_states(s) for s in states if s not in terminal)


# ---- the contracts' diagrams, verbatim ------------------------------------------------------------

TASK_LIFECYCLE = """stateDiagram-v2
    [*] --> planning

    planning --> plan_review: planning succeeded
    planning --> planning: re-plan (redo)
\x20\x20\x20\x20
    plan_review --> codegen: review ok
    plan_review --> planning: review needs changes
    plan_review --> planning: review blocked

    codegen --> review: codegen completed
    codegen --> planning: scope mismatch
    codegen --> plan_review: plan unclear
    codegen --> codegen: re-run codegen

    review --> test: review passes
    review --> codegen: needs code changes
    review --> planning: plan flawed

    test --> accept: tests complete
    test --> codegen: test failures

    accept --> done: accepted
    accept --> codegen: requires further changes
    accept --> review: unclear / needs review
    accept --> planning: upstream problem
    accept --> revert: revert requested

    revert --> done
"""

SKILL_EXAMPLE = """stateDiagram-v2
    [*] --> plan
    plan --> build : plan_ready
    build --> review : build_complete
    review --> [*] : done
"""

AGENT_EXAMPLE = """    stateDiagram-v2
        [*] --> building
        building --> completed : build_success
        building --> failed : build_error
        completed --> [*]
        failed --> [*]
"""

NEW_SKILL_EXAMPLE = """stateDiagram-v2
    [*] --> scan
    scan --> analyze : scan_complete
    analyze --> report : analysis_complete
    report --> [*] : done
"""

# Every row of the "Supported Syntax" table in one diagram.
SUPPORTED_SYNTAX = """stateDiagram-v2
    %% comment text
    state plan : Plan the work
    [*] --> plan
    plan --> build
    build --> review : build_complete
    review --> [*]
"""

CONTRACT_DIAGRAMS = {
    "task lifecycle": (TASK_LIFECYCLE, (
        ("planning", "plan_review", "codegen", "review", "test", "accept", "done", "revert"), ("planning",), (), (
            ("planning", "plan_review", "planning succeeded"), ("planning", "planning", "re-plan (redo)"),
            ("plan_review", "codegen", "review ok"), ("plan_review", "planning", "review needs changes"),
            ("plan_review", "planning", "review blocked"), ("codegen", "review", "codegen completed"),
            ("codegen", "planning", "scope mismatch"), ("codegen", "plan_review", "plan unclear"),
            ("codegen", "codegen", "re-run codegen"), ("review", "test", "review passes"),
            ("review", "codegen", "needs code changes"), ("review", "planning", "plan flawed"),
            ("test", "accept", "tests complete"), ("test", "codegen", "test failures"),
            ("accept", "done", "accepted"), ("accept", "codegen", "requires further changes"),
            ("accept", "review", "unclear / needs review"), ("accept", "planning", "upstream problem"),
            ("accept", "revert", "revert requested"), ("revert", "done", None)))),
    "skill example": (SKILL_EXAMPLE, (("plan", "build", "review"), ("plan",), ("review",), (
        ("plan", "build", "plan_ready"), ("build", "review", "build_complete")))),
    "agent example": (AGENT_EXAMPLE, (("building", "completed", "failed"), ("building",), ("completed", "failed"), (
        ("building", "completed", "build_success"), ("building", "failed", "build_error")))),
    "new skill example": (NEW_SKILL_EXAMPLE, (("scan", "analyze", "report"), ("scan",), ("report",), (
        ("scan", "analyze", "scan_complete"), ("analyze", "report", "analysis_complete")))),
    "supported syntax": (SUPPORTED_SYNTAX, (("plan", "build", "review"), ("plan",), ("review",), (
        ("plan", "build", None), ("build", "review", "build_complete")))),
}


@pytest.mark.parametrize("name", sorted(CONTRACT_DIAGRAMS))
def test_contract_diagram(name):
    text, (states, initial, terminal, edges) = CONTRACT_DIAGRAMS[name]
    m = parse_machine(text, name)
    assert (m.states, m.initial, m.terminal) == (states, initial, terminal)
    assert tuple((e.source, e.target, e.label) for e in m.edges) == edges
    assert all(MERMAID_ID.fullmatch(s) for s in m.states)
    wrapped = f"# {name}\n\n## STATE-MACHINE\n\n```mermaid\n{text}```\n\n## Next\n"
    assert extract_state_machine(wrapped) == text
    assert machine_from_markdown(wrapped, name) == m


def test_supported_syntax_keeps_the_declared_label():
    assert parse_machine(SUPPORTED_SYNTAX, "x").labels == {"plan": "Plan the work"}


def test_packaged_task_lifecycle_is_the_contract_diagram():
    shipped = files("rcs_tui.core").joinpath("task_lifecycle.mmd").read_text(encoding="utf-8")
    assert shipped == TASK_LIFECYCLE
    m = load_task_lifecycle()
    assert m.sinks() == ("done",) and m.terminal == ()


def test_the_documented_machine_shapes_match():
    """The contract's table of existing machines: states and shape of each."""
    table = {"build": "requirements, design, tasks, build, verify, archive", "build-fast": "plan, build, review",
             "pr-review": "split, review, synthesize, post",
             "deep-research": "clarify, plan, explore, synthesize, report", "blueprint": "detect, charter, prd",
             "task-builder": "building, completed, failed", "task-reviewer": "reviewing, completed, failed",
             "feature-verifier": "verifying, completed, failed", "hypothesis-tester": "testing, completed, failed"}
    machines = {n: i.machine for n, i in builtin_machines().items()}
    assert {n: ", ".join(m.states) for n, m in machines.items() if m} == table
    assert machines["build"].has_edge("verify", "build")  # the verify -> build retry loop
    assert machines["blueprint"].next_states("detect") == ("charter", "prd")  # detect -> charter or prd
