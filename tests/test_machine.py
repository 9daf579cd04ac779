"""The Mermaid state-machine model: extraction, parsing, graph questions and seed 004's messages."""

from __future__ import annotations

import pytest

from rcs_tui.core.machine import (
    Edge,
    MachineError,
    extract_state_machine,
    load_task_lifecycle,
    machine_from_markdown,
    parse_machine,
)

BUILD = """stateDiagram-v2
    [*] --> requirements
    requirements --> design : requirements_done
    design --> tasks : design_done
    tasks --> build : tasks_ready
    build --> verify : build_complete
    verify --> build : verify_failed
    verify --> archive : verified
    archive --> [*]
"""

BUILD_FAST = """stateDiagram-v2
    [*] --> plan
    plan --> build : plan_ready
    build --> review : build_complete
    review --> [*] : done
"""

PR_REVIEW = """stateDiagram-v2
    [*] --> split
    split --> review
    review --> synthesize
    synthesize --> post
    post --> [*]
"""

DEEP_RESEARCH = """stateDiagram-v2
    %% five linear steps
    [*] --> clarify
    clarify --> plan
    plan --> explore
    explore --> synthesize
    synthesize --> report
    report --> [*]
"""

BLUEPRINT = """stateDiagram-v2
    state detect : Detect what exists
    state charter : Write the charter
    [*] --> detect
    detect --> charter : no_charter
    detect --> prd : charter_exists
    charter --> prd : charter_done
    prd : Product requirements
    prd --> [*]
"""


def agent(working: str) -> str:
    return f"""stateDiagram-v2
    [*] --> {working}
    {working} --> completed : success
    {working} --> failed : error
    completed --> [*]
    failed --> [*]
"""


AGENTS = {"task-builder": "building", "task-reviewer": "reviewing",
          "feature-verifier": "verifying", "hypothesis-tester": "testing"}


def skill_md(body: str, before: str = "# Build\n\nIntro.\n\n", after: str = "") -> str:
    return f"{before}## STATE-MACHINE\n\n```mermaid\n{body}```\n\nOn each phase transition, report.\n{after}"


# ---- real machines of formats.md §8 -------------------------------------------------------------

def test_build_has_its_verify_build_loop_and_linear_order():
    m = parse_machine(BUILD, "build")
    assert m.states == ("requirements", "design", "tasks", "build", "verify", "archive")
    assert m.initial == ("requirements",) and m.terminal == ("archive",)
    assert m.next_states("verify") == ("build", "archive")
    assert m.has_edge("verify", "build") and not m.has_edge("build", "archive")
    assert m.direct_predecessors("build") == ("tasks", "verify")
    assert m.transitive_predecessors("verify") == {"requirements", "design", "tasks", "build", "verify"}
    assert m.transitive_predecessors("requirements") == frozenset()
    assert m.reachable_from("verify") == {"build", "verify", "archive"}
    assert m.bfs_order() == m.states
    assert Edge("verify", "build", "verify_failed") in m.edges


def test_build_fast_pr_review_deep_research_are_linear():
    for text, name, order in [
        (BUILD_FAST, "build-fast", ("plan", "build", "review")),
        (PR_REVIEW, "pr-review", ("split", "review", "synthesize", "post")),
        (DEEP_RESEARCH, "deep-research", ("clarify", "plan", "explore", "synthesize", "report")),
    ]:
        m = parse_machine(text, name)
        assert m.states == order and m.bfs_order() == order
        assert m.initial == order[:1] and m.terminal == order[-1:]
        assert [(e.source, e.target) for e in m.edges] == list(zip(order, order[1:], strict=False))
    assert parse_machine(BUILD_FAST).edges[0] == Edge("plan", "build", "plan_ready")
    assert parse_machine(PR_REVIEW).edges[0].label is None


def test_blueprint_branches_and_keeps_labels():
    m = parse_machine(BLUEPRINT, "blueprint")
    assert m.states == ("detect", "charter", "prd")
    assert m.labels == {"detect": "Detect what exists", "charter": "Write the charter",
                        "prd": "Product requirements"}
    assert m.next_states("detect") == ("charter", "prd")
    assert m.direct_predecessors("prd") == ("detect", "charter")
    assert m.bfs_order() == ("detect", "charter", "prd")
    assert m.validate_transition("detect", "prd") is None
    assert m.validate_transition("charter", "detect") == (
        "Invalid transition from 'charter' to 'detect'. Valid next states: prd")


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_agent_machines_have_an_error_branch(name):
    working = AGENTS[name]
    m = parse_machine(agent(working), name)
    assert m.states == (working, "completed", "failed")
    assert m.initial == (working,) and m.terminal == ("completed", "failed")
    assert m.next_states(working) == ("completed", "failed")
    assert m.sinks() == ("completed", "failed")


# ---- validation messages of seed 004 ------------------------------------------------------------

def test_unknown_step_message_without_and_with_current_state():
    m = parse_machine(BUILD, "build")
    assert m.validate_step("biulding") == (
        'step "biulding" is not a valid state in the "build" state machine. '
        "Valid states: [requirements, design, tasks, build, verify, archive].")
    assert m.validate_step("biulding", "tasks") == (
        'step "biulding" is not a valid state in the "build" state machine. '
        "Valid states: [requirements, design, tasks, build, verify, archive]. "
        'Current state: "tasks". Valid transitions from "tasks": [build].')
    assert m.validate_step("build") is None


def test_namespaced_steps_bypass_the_parent_machine():
    m = parse_machine(BUILD, "build")
    assert m.validate_step("task-builder:building") is None
    assert m.validate_transition("tasks", "task-builder:building") is None
    assert m.validate_transition(None, "feature-verifier:failed") is None


def test_transition_messages_first_step_and_idempotent_reentry():
    m = parse_machine(BUILD, "build")
    assert m.validate_transition("requirements", "verify") == (
        "Invalid transition from 'requirements' to 'verify'. Valid next states: design")
    assert m.validate_transition(None, "requirements") is None
    assert m.validate_transition(None, "design") == (
        "Invalid first step 'design'. The first step must be an initial state: requirements")
    assert m.validate_transition("design", "design") is None
    assert m.validate_transition("verify", "build") is None
    assert m.validate_transition("archive", "build") == (
        "Invalid transition from 'archive' to 'build'. Valid next states: (none)")
    assert m.validate_transition("tasks", "nope").startswith('step "nope" is not a valid state')


def test_self_loops_and_cycles_are_safe():
    m = parse_machine("stateDiagram-v2\n[*] --> a\na --> a : again\na --> b\nb --> a\nc --> c\n")
    assert m.has_edge("a", "a")
    assert m.reachable_from("a") == {"a", "b"}
    assert m.transitive_predecessors("a") == {"a", "b"}
    assert m.transitive_predecessors("c") == {"c"}
    assert m.bfs_order() == ("a", "b", "c")


# ---- extraction ----------------------------------------------------------------------------------

def test_extracts_first_state_diagram_fence_in_the_section():
    md = skill_md(BUILD_FAST)
    assert extract_state_machine(md) == BUILD_FAST
    m = machine_from_markdown(md, "build-fast")
    assert m is not None and m.states == ("plan", "build", "review")


def test_section_heading_rules():
    fence = f"```mermaid\n{BUILD_FAST}```\n"
    assert extract_state_machine(f"## STATE-MACHINE   \n{fence}") == BUILD_FAST
    assert extract_state_machine(f"### STATE-MACHINE\n{fence}") is None
    assert extract_state_machine(f"## State-Machine\n{fence}") is None
    assert extract_state_machine(f"# STATE-MACHINE\n{fence}") is None
    assert extract_state_machine(f"## STATE-MACHINES\n{fence}") is None
    # the section ends at the next level-2 heading
    assert extract_state_machine(f"## STATE-MACHINE\ntext\n## Next\n{fence}") is None
    # a level-3 heading does not end it
    assert extract_state_machine(f"## STATE-MACHINE\n### detail\n{fence}") == BUILD_FAST
    assert machine_from_markdown("# no section here\n", "x") is None


def test_skips_mermaid_fences_without_a_state_diagram_and_other_languages():
    md = ("## STATE-MACHINE\n```mermaid\nflowchart TD\n  A --> B\n```\n"
          f"```text\n{PR_REVIEW}```\n```mermaid\n{DEEP_RESEARCH}```\n```mermaid\n{BUILD}```\n")
    assert extract_state_machine(md) == DEEP_RESEARCH


def test_only_the_first_state_machine_section_counts():
    md = skill_md(BUILD_FAST) + skill_md(PR_REVIEW, before="")
    assert extract_state_machine(md) == BUILD_FAST


# ---- rejected constructs -------------------------------------------------------------------------

@pytest.mark.parametrize("line, why", [
    ("state Parent {", "composite states"),
    ("state join1 <<join>>", "fork/join"),
    ("state fork1 <<fork>>", "fork/join"),
    ("note right of a : hello", "notes are not supported"),
    ("note left of a", "notes are not supported"),
    ("--", "concurrency regions"),
    ("direction LR", "direction directives"),
    ("a -> b", "not valid Mermaid: unexpected '-' at column 3"),
    ("classDef hot fill:#f00", "unsupported syntax"),
])
def test_rejected_constructs_name_the_line(line, why):
    text = f"stateDiagram-v2\n    [*] --> a\n    {line}\n    a --> [*]\n"
    with pytest.raises(MachineError) as exc:
        parse_machine(text, "x")
    msg = str(exc.value)
    assert msg.startswith(f"line 3: {line!r}") and why in msg


def test_missing_initial_state_and_missing_header():
    with pytest.raises(MachineError, match=r"^No initial state defined\. Add a '\[\*\] --> state_id' transition\.$"):
        parse_machine("stateDiagram-v2\n a --> b\n b --> [*]\n")
    with pytest.raises(MachineError, match="line 1: 'graph TD': expected the diagram to start with"):
        parse_machine("graph TD\n[*] --> a\n")
    with pytest.raises(MachineError, match="^No initial state defined"):  # `[*] --> [*]` is skipped
        parse_machine("stateDiagram-v2\n[*] --> [*]\n")


def test_a_composite_inside_a_skill_markdown_is_an_error_not_untracked():
    body = "stateDiagram-v2\n  [*] --> a\n  state a {\n    [*] --> b\n  }\n"
    with pytest.raises(MachineError, match="line 3"):
        machine_from_markdown(skill_md(body), "x")


# ---- the packaged task lifecycle (seed 003 §2) ---------------------------------------------------

SEED_003_EDGES = [
    ("planning", "plan_review", "planning succeeded"),
    ("planning", "planning", "re-plan (redo)"),
    ("plan_review", "codegen", "review ok"),
    ("plan_review", "planning", "review needs changes"),
    ("plan_review", "planning", "review blocked"),
    ("codegen", "review", "codegen completed"),
    ("codegen", "planning", "scope mismatch"),
    ("codegen", "plan_review", "plan unclear"),
    ("codegen", "codegen", "re-run codegen"),
    ("review", "test", "review passes"),
    ("review", "codegen", "needs code changes"),
    ("review", "planning", "plan flawed"),
    ("test", "accept", "tests complete"),
    ("test", "codegen", "test failures"),
    ("accept", "done", "accepted"),
    ("accept", "codegen", "requires further changes"),
    ("accept", "review", "unclear / needs review"),
    ("accept", "planning", "upstream problem"),
    ("accept", "revert", "revert requested"),
    ("revert", "done", None),
]

# seed 003 §3.1-3.12, one pair per rule (3.5 and 3.7 name two targets each)
SEED_003_RULES = {
    ("planning", "plan_review"), ("plan_review", "codegen"), ("plan_review", "planning"),
    ("codegen", "review"), ("codegen", "planning"), ("codegen", "plan_review"), ("review", "test"),
    ("review", "codegen"), ("review", "planning"), ("test", "accept"), ("test", "codegen"),
    ("accept", "done"), ("accept", "revert"), ("revert", "done"),
}


def test_packaged_lifecycle_equals_seed_003_diagram():
    m = load_task_lifecycle()
    assert [(e.source, e.target, e.label) for e in m.edges] == SEED_003_EDGES
    assert m.states == ("planning", "plan_review", "codegen", "review", "test", "accept", "done", "revert")
    assert m.initial == ("planning",)
    assert m.sinks() == ("done",)
    assert SEED_003_RULES <= {(e.source, e.target) for e in m.edges}
    assert load_task_lifecycle() is m


def test_lifecycle_forbids_skipping_phases():
    m = load_task_lifecycle()
    assert m.validate_transition("planning", "test") == (
        "Invalid transition from 'planning' to 'test'. Valid next states: plan_review, planning")
    assert "done" in m.reachable_from("planning")
    assert m.reachable_from("done") == frozenset()


# ---- agreement with Mermaid's state-diagram grammar and rp1's extractor ---------------------------

def test_mid_line_comments_are_ignored_but_a_label_runs_to_the_end_of_its_line():
    m = parse_machine("stateDiagram-v2 %% header comment\n"
                      "    %% a whole-line comment\n"
                      "    [*] --> a %% start here\n"
                      "    a --> b %% trailing comment\n"
                      "    b --> c : go %% still the label\n"
                      "    c --> [*]%%tight\n", "x")
    assert m.states == ("a", "b", "c")
    assert [(e.source, e.target, e.label) for e in m.edges] == [("a", "b", None), ("b", "c", "go %% still the label")]
    assert m.initial == ("a",) and m.terminal == ("c",)


def test_an_unclosed_fence_means_no_machine():
    md = "# Build\n\n## STATE-MACHINE\n\n```mermaid\nstateDiagram-v2\n    [*] --> plan\n    plan --> [*]\n\nReport.\n"
    assert extract_state_machine(md) is None
    assert machine_from_markdown(md, "build-fast") is None


def test_only_a_bare_closing_fence_ends_the_block():
    md = ("## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n    [*] --> plan\n```text\n    plan --> build\n"
          "```\n")
    assert extract_state_machine(md) == "stateDiagram-v2\n    [*] --> plan\n```text\n    plan --> build\n"
    # Mermaid reads "```text" as one more state id; so does rcs-tui
    m = machine_from_markdown(md, "x")
    assert m is not None and m.states == ("plan", "```text", "build")
    # a fence with trailing spaces closes it; "```mermaid" inside the block is body, then unclosed
    assert extract_state_machine("## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n[*] --> a\n```   \n") == (
        "stateDiagram-v2\n[*] --> a\n")
    assert extract_state_machine("## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n```mermaid\n[*] --> a\n") is None


def test_start_to_end_line_is_skipped():
    m = parse_machine("stateDiagram-v2\n    [*] --> [*]\n    [*] --> a\n    a --> [*]\n", "x")
    assert (m.states, m.initial, m.terminal, m.edges) == (("a",), ("a",), ("a",), ())


def test_mermaid_state_ids():
    m = parse_machine("stateDiagram-v2\n    [*] --> état\n    lonely\n    état --> fin : étape_1\n"
                      "    lonely : A state alone\n    fin --> [*]\n", "x")
    assert m.states == ("état", "lonely", "fin")
    assert m.labels == {"lonely": "A state alone"}
    assert m.initial == ("état",) and m.edges == (Edge("état", "fin", "étape_1"),)
    assert m.validate_step("lonely") is None
    # several statements on one line, as Mermaid reads them
    assert parse_machine("stateDiagram-v2\n[*] --> a b\n", "x").states == ("a", "b")


@pytest.mark.parametrize("line, why", [
    ("a --> x-ray",
     "line 3: 'a --> x-ray': not valid Mermaid: unexpected '-' at column 8 (a state id cannot contain '-')"),
    # Mermaid's comment rule swallows the single character before a `%%`, leaving no target
    ("a --> b%%x", "line 3: 'a --> b%%x': not valid Mermaid: expected a state id, found the end of the line"),
    ("a -->", "line 3: 'a -->': not valid Mermaid: expected a state id, found the end of the line"),
    ("--> a", "line 3: '--> a': not valid Mermaid: expected a state id, found '-->'"),
    (": label", "line 3: ': label': not valid Mermaid: expected a state id, found 'label'"),
    ("state x-ray", "line 3: 'state x-ray': unsupported state declaration"),
])
def test_diagrams_mermaid_cannot_read_are_errors_naming_the_line(line, why):
    with pytest.raises(MachineError) as exc:
        parse_machine(f"stateDiagram-v2\n    [*] --> a\n    {line}\n", "x")
    assert str(exc.value) == why


def test_braces_inside_a_label_are_label_text():
    m = parse_machine("stateDiagram-v2\n[*] --> a\na --> b : {retry}\n", "x")
    assert m.edges == (Edge("a", "b", "{retry}"),)


def test_a_skill_whose_fence_never_closes_is_untracked(tmp_path):
    from rcs_tui.rp1.machines import discover_machines

    skill = tmp_path / "plugins" / "base" / "skills" / "half-done"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n  [*] --> a\n  a --> b\n")
    closed = tmp_path / "plugins" / "base" / "skills" / "done"
    closed.mkdir(parents=True)
    (closed / "SKILL.md").write_text("## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n  [*] --> a\n```\n")
    found = discover_machines([tmp_path], builtins=False)
    assert sorted(found) == ["done"] and found["done"].error is None


# --- Graph rules pinned one by one ---

BRANCHY = """stateDiagram-v2
    state late
    [*] --> start
    mid --> late
    start --> far
    start --> mid
    far --> mid
    far --> late
    island --> island2
"""


def test_bfs_order_is_breadth_first_not_declaration_order():
    m = parse_machine(BRANCHY, "b")
    assert m.states == ("late", "start", "mid", "far", "island", "island2")
    assert m.bfs_order() == ("start", "far", "mid", "late", "island", "island2")


def test_bfs_starts_from_every_initial_state_in_order():
    m = parse_machine("stateDiagram-v2\n[*] --> b\n[*] --> a\na --> c\nb --> d\n", "two")
    assert m.initial == ("b", "a") and m.bfs_order() == ("b", "a", "d", "c")


def test_transition_from_an_unknown_state_says_so():
    m = parse_machine(BUILD, "build")
    assert m.validate_transition("ghost", "design") == (
        "Invalid transition from 'ghost' to 'design'. 'ghost' is not a state of \"build\"")
    assert m.validate_transition("ghost", "ghost").startswith('step "ghost" is not a valid state')


def test_a_state_without_outgoing_edges_lists_none():
    m = parse_machine(BUILD, "build")
    assert m.validate_transition("archive", "design") == (
        "Invalid transition from 'archive' to 'design'. Valid next states: (none)")
    assert m.next_states("archive") == () and m.sinks() == ("archive",)


def test_graph_queries_return_distinct_states_in_diagram_order():
    m = parse_machine(BRANCHY, "b")
    assert m.next_states("start") == ("far", "mid") and m.next_states("late") == ()
    assert m.direct_predecessors("late") == ("mid", "far") and m.direct_predecessors("start") == ()
    assert m.has_edge("far", "late") and not m.has_edge("late", "far")
    assert m.reachable_from("start") == {"far", "mid", "late"}
    assert m.transitive_predecessors("late") == {"mid", "far", "start"}
    assert m.sinks() == ("late", "island2")


def test_repeated_edges_and_initial_lines_count_once():
    m = parse_machine("stateDiagram-v2\n[*] --> a\n[*] --> a\na --> b : go\na --> b : go\na --> b : again\n"
                      "b --> [*]\nb --> [*]\n", "r")
    assert m.initial == ("a",) and m.terminal == ("b",)
    assert m.edges == (Edge("a", "b", "go"), Edge("a", "b", "again")) and m.next_states("a") == ("b",)


def test_unknown_step_lists_every_state_and_current_transitions():
    m = parse_machine(BRANCHY, "b")
    assert m.validate_step("nope", "start") == (
        'step "nope" is not a valid state in the "b" state machine. '
        "Valid states: [late, start, mid, far, island, island2]. "
        'Current state: "start". Valid transitions from "start": [far, mid].')


@pytest.mark.parametrize("line, why", [
    ("--", "concurrency regions (`--`) are not supported"),
    ("state fork1 <<fork>>", "fork/join/choice pseudo-states are not supported"),
    ("state c1 [[choice]]", "fork/join/choice pseudo-states are not supported"),
    ("state Parent {", "composite states (`state X { ... }`) are not supported"),
    ("}", "composite states (`state X { ... }`) are not supported"),
    ("note right of a : hello", "notes are not supported"),
    ("end note", "notes are not supported"),
    ("direction LR", "direction directives are not supported"),
    ("direction", "direction directives are not supported"),
    ("a --> b direction TB", "direction directives are not supported"),
    ("classDef hot fill:#f00", "unsupported syntax: styling and accessibility statements are not supported"),
    ("hide empty description", "unsupported syntax: styling and accessibility statements are not supported"),
    ("a:::hot", "unsupported syntax: styling and accessibility statements are not supported"),
    ("%%{init: {'theme': 'dark'}}%%", "unsupported syntax: directives (`%%{...}%%`) are not supported"),
    ("stateDiagram-v2", "a second 'stateDiagram-v2' header; one state machine per diagram"),
    ("a -b", "not valid Mermaid: unexpected '-' at column 3"),
    ("a x-ray", "not valid Mermaid: unexpected '-' at column 4 (a state id cannot contain '-')"),
])
def test_each_rejection_message_in_full(line, why):
    with pytest.raises(MachineError) as exc:
        parse_machine(f"stateDiagram-v2\n    [*] --> a\n    {line}\n", "x")
    assert str(exc.value) == f"line 3: {line!r}: {why}"


def test_error_names_a_long_line_by_its_first_120_characters():
    line = "a --> " + "b" * 130 + " -"
    with pytest.raises(MachineError) as exc:
        parse_machine(f"stateDiagram-v2\n[*] --> a\n{line}\n", "x")
    assert str(exc.value).startswith(f"line 3: {line[:120]!r}: not valid Mermaid")


@pytest.mark.parametrize("text", ["", "%% only a comment\n", "\n\n"])
def test_empty_diagram_message(text):
    with pytest.raises(MachineError) as exc:
        parse_machine(text, "x")
    assert str(exc.value) == "empty diagram: expected 'stateDiagram-v2'"


def test_comments_before_and_after_the_header():
    m = parse_machine("%% leading note\nstateDiagram-v2  %% the header\n[*] --> a\n", "x")
    assert m.states == ("a",) and m.initial == ("a",)


def test_state_declarations_are_case_insensitive_and_their_label_keeps_percent_signs():
    m = parse_machine("stateDiagram-v2\nSTATE a : Load %% 50 %% done\n[*] --> a\n", "x")
    assert m.states == ("a",) and m.labels == {"a": "Load %% 50 %% done"}


def test_label_without_a_space_after_the_colon():
    m = parse_machine("stateDiagram-v2\n[*] --> a\na --> b :go\nb :Build it\n", "x")
    assert m.edges == (Edge("a", "b", "go"),) and m.labels == {"b": "Build it"}


def test_start_to_end_does_not_hide_the_statements_after_it_on_the_line():
    assert parse_machine("stateDiagram-v2\n[*] --> [*] [*] --> a\n", "x").initial == ("a",)


def test_bfs_does_not_stop_at_a_state_queued_twice():
    m = parse_machine("stateDiagram-v2\nstate island\n[*] --> a\n[*] --> b\na --> c\nb --> c\nc --> d\n", "x")
    assert m.bfs_order() == ("a", "b", "c", "d", "island")


def test_first_step_message_lists_every_initial_state():
    m = parse_machine("stateDiagram-v2\n[*] --> a\n[*] --> b\na --> c\n", "x")
    assert m.validate_transition(None, "c") == "Invalid first step 'c'. The first step must be an initial state: a, b"


def test_unknown_target_message_names_the_current_state():
    m = parse_machine(BUILD, "build")
    assert m.validate_transition("tasks", "nope") == (
        'step "nope" is not a valid state in the "build" state machine. Valid states: [requirements, design, '
        'tasks, build, verify, archive]. Current state: "tasks". Valid transitions from "tasks": [build].')


def test_machine_names_and_an_exact_extracted_body():
    assert machine_from_markdown(skill_md(BUILD), "build").name == "build"
    assert parse_machine(BUILD).name == ""
    md = "## STATE-MACHINE\n```mermaid\nstateDiagram-v2\n[*] --> a\n\n```\n"
    assert extract_state_machine(md) == "stateDiagram-v2\n[*] --> a\n"


def test_a_label_runs_to_the_end_of_the_line_colons_included():
    """`a --> b : x: y:z` is one transition labelled `x: y:z`, as rp1 reads it (a workflow whose labels hold
    colons once had no machine here while rp1 ran it)."""
    m = parse_machine("stateDiagram-v2\n[*] --> a\na : one : two\na --> b : x: y:z %% not a comment\n", "x")
    assert m.labels == {"a": "one : two"}
    assert m.edges == (Edge("a", "b", "x: y:z %% not a comment"),)
