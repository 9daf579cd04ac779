"""A run's timeline: steps in machine order with times, retries, units, sub-agents, artifacts,
prompts and validation violations. Pure: built from rows the reader already fetched."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from rcs_tui.core.machine import StateMachine
from rcs_tui.rp1.db import Artifact, RunRow, run_json
from rcs_tui.rp1.projection import MANUAL_END, Event, Projection, project

OPEN = ("running", "waiting")
CLOSED = ("completed", "failed", "skipped")


def seconds_between(start: str | None, end: str | None) -> float | None:
    """Seconds from one rp1 timestamp to another (None if either is missing or unparsable)."""
    if not start or not end:
        return None
    try:
        return round((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 3)
    except ValueError:
        return None


@dataclass
class SubEntry:
    """A unit (`--unit T1`) or a namespaced sub-agent group (`agent`, or `agent::unit`) under a step."""

    key: str
    state: str | None
    status: str | None
    started_at: str | None = None
    ended_at: str | None = None
    agent: str | None = None
    unit: str | None = None
    violation: str | None = None

    def feed(self, ev: Event, state: str | None) -> None:
        self.state, self.status = state, ev.status
        if ev.status in OPEN and self.started_at is None:
            self.started_at = ev.created_at
        if ev.status in CLOSED:
            self.ended_at = ev.created_at
        elif ev.status in OPEN:
            self.ended_at = None


class Change(NamedTuple):
    """One status a step, unit or sub-agent took, in the order rp1 wrote it (for the time chart).

    `step` is the workflow step (a unit's or sub-agent's parent; None for a run-level end or an unattached
    unit), `sub` the unit / sub-agent key (`u:T1`, `a:agent::T1`) or None, `status` a step status,
    `prompt` (a question asked) or `ended` (the run ended by hand)."""

    step: str | None
    sub: str | None
    status: str
    at: str


@dataclass
class Prompt:
    step: str | None
    message: str
    created_at: str
    pending: bool


@dataclass
class StepEntry:
    name: str
    status: str = "not_started"
    started_at: str | None = None
    ended_at: str | None = None
    duration_s: float | None = None
    attempts: int = 0
    retried: bool = False
    in_machine: bool = True
    violation: str | None = None
    units: list[SubEntry] = field(default_factory=list)
    agents: list[SubEntry] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)


@dataclass
class Timeline:
    run: RunRow
    workflow: str
    tracked: bool
    status: str
    current_step: str | None
    steps: list[StepEntry]
    violations: list[dict[str, Any]]
    unattached: list[SubEntry]
    run_artifacts: list[dict[str, Any]]
    prompts: list[Prompt]
    last_event_id: int
    last_activity: str | None
    changes: list[Change] = field(default_factory=list)  # not part of the JSON answer

    def step(self, name: str) -> StepEntry | None:
        return next((s for s in self.steps if s.name == name), None)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("changes")
        out["run"] = run_json(self.run)
        return out


def _prompt_text(data: dict[str, Any]) -> str:
    for key in ("message", "question", "prompt", "text"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


def build_timeline(run: RunRow, events: list[Event], artifacts: list[Artifact],
                   machine: StateMachine | None, agent_machines: dict[str, StateMachine | None] | None = None,
                   projection: Projection | None = None) -> Timeline:
    """Assemble the timeline; `agent_machines` maps agent name -> machine for sub-agent checks."""
    ordered = sorted(events, key=lambda e: e.sort_key)
    proj = projection or project(ordered)
    states = set(machine.states) if machine else set()
    names = list(machine.bfs_order()) if machine else []
    for ev in ordered:
        if ev.is_workflow_row and ev.step not in names:
            names.append(ev.step or "")
    steps = {n: StepEntry(n, proj.steps.get(n, "not_started"), in_machine=(not machine or n in states))
             for n in names}
    violations: list[dict[str, Any]] = []
    subs: dict[tuple[str | None, str], SubEntry] = {}
    active: str | None = None
    last_entered: str | None = None
    flagged: set[str] = set()
    agents = agent_machines or {}
    changes: list[Change] = []

    for ev in ordered:
        if ev.is_run_row and ev.status in MANUAL_END:  # a run ended by hand ends its open steps
            for entry in steps.values():
                if entry.attempts and entry.ended_at is None:
                    entry.ended_at = ev.created_at
            active = None
            changes.append(Change(None, None, "ended", ev.created_at))
            continue
        if ev.type == "waiting_for_user" and ev.step in steps:
            changes.append(Change(ev.step, None, "prompt", ev.created_at))
            continue
        if ev.is_workflow_row:
            entry = steps[ev.step or ""]
            if ev.status:
                changes.append(Change(ev.step, None, ev.status, ev.created_at))
            if machine:
                _check(machine, ev, last_entered, entry, violations, flagged)
            if ev.status in OPEN:
                if entry.started_at is None or entry.ended_at is not None or entry.attempts == 0:
                    entry.attempts += 1
                    entry.started_at = entry.started_at or ev.created_at
                    entry.ended_at = None
                if ev.status == "running":
                    last_entered = ev.step
                active = ev.step
            elif ev.status in CLOSED and entry.attempts:
                entry.ended_at = ev.created_at
                if active == ev.step:
                    active = None
            continue
        if ev.type == "status_change" and ev.step and (ev.unit or ev.namespaced):
            parent = _parent(ev, states if machine else set(steps), active, last_entered)
            if ev.namespaced:
                agent, _, state = (ev.step or "").partition(":")
                key = f"{agent}::{ev.unit}" if ev.unit else agent
                sub = subs.setdefault((parent, "a:" + key), SubEntry(key, None, None, agent=agent, unit=ev.unit))
                sub.feed(ev, state)
                kind = "a:" + key
                agent_machine = agents.get(agent)
                if agent_machine and sub.violation is None:
                    sub.violation = agent_machine.validate_step(state)
            else:
                key = ev.unit or ""
                sub = subs.setdefault((parent, "u:" + key), SubEntry(key, None, None, unit=ev.unit))
                sub.feed(ev, ev.step)
                kind = "u:" + key
            if ev.status:
                changes.append(Change(parent if parent in steps else None, kind, ev.status, ev.created_at))

    for entry in steps.values():
        entry.retried = entry.attempts > 1
        if entry.status in CLOSED and entry.attempts:
            entry.duration_s = seconds_between(entry.started_at, entry.ended_at)
        else:
            entry.ended_at = entry.ended_at if entry.status in CLOSED else None
    unattached: list[SubEntry] = []
    for (parent, kind), sub in subs.items():
        target = steps.get(parent or "")
        if target is None:
            unattached.append(sub)
        elif kind.startswith("a:"):
            target.agents.append(sub)
        else:
            target.units.append(sub)

    run_artifacts = _attach_artifacts(steps, ordered, artifacts)
    pending = {p.id for p in proj.pending_prompts}
    prompts = [Prompt(ev.step, _prompt_text(ev.data), ev.created_at, ev.id in pending)
               for ev in ordered if ev.type == "waiting_for_user"]
    for prompt in prompts:
        if prompt.step in steps:
            steps[prompt.step].prompts.append(prompt)

    return Timeline(run, run.flow, machine is not None, proj.status, proj.current_step, list(steps.values()),
                    violations, unattached, run_artifacts, prompts, proj.last_event_id, proj.last_activity,
                    changes)


def _check(machine: StateMachine, ev: Event, last_entered: str | None, entry: StepEntry,
           violations: list[dict[str, Any]], flagged: set[str]) -> None:
    """Record rp1's message for an unknown step or an illegal entry into a step."""
    step = ev.step or ""
    message = machine.validate_step(step, last_entered)
    if message is None and ev.status == "running" and step != last_entered:
        message = machine.validate_transition(last_entered, step)
    if message is None:
        return
    key = f"{last_entered}->{step}"
    if key in flagged:
        return
    flagged.add(key)
    entry.violation = entry.violation or message
    violations.append({"event_id": ev.id, "step": step, "message": message, "created_at": ev.created_at})


def _parent(ev: Event, workflow_steps: set[str], active: str | None, last_entered: str | None) -> str | None:
    """The workflow step a unit / sub-agent row belongs to."""
    if ev.parent_step_id and ev.parent_step_id in workflow_steps:
        return ev.parent_step_id
    if not ev.namespaced and ev.step in workflow_steps:
        return ev.step
    return active or last_entered


def _attach_artifacts(steps: dict[str, StepEntry], ordered: list[Event],
                      artifacts: list[Artifact]) -> list[dict[str, Any]]:
    """Artifacts from the table, plus registrations only present as events; per step where known."""
    seen: set[tuple[str | None, str]] = set()
    run_level: list[dict[str, Any]] = []
    items = [a.to_json() for a in artifacts]
    for ev in ordered:
        if ev.type == "artifact_registered" and isinstance(ev.data.get("path"), str):
            items.append({"path": ev.data["path"], "step": ev.step, "type": None,
                          "doc_id": ev.data.get("docId") if isinstance(ev.data.get("docId"), str) else None,
                          "storage_root": None, "subflow": bool(ev.data.get("subflow")),
                          "created_at": ev.created_at})
    for item in items:
        key = (item["step"], item["path"])
        if key in seen:
            continue
        seen.add(key)
        target = steps.get(item["step"] or "")
        (target.artifacts if target else run_level).append(item)
    return run_level
