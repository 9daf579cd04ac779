"""What rp1 would answer to one `emit --type status_change`, worked out from a run's events (read-only).

An operator whose agent's emit was rejected needs rp1's own answer, not a guess. The rules, as rp1
applies them before it persists an event:
- no state machine for the workflow (or the workflow is `unknown`), or a namespaced `agent:state`
  step: nothing is validated;
- a step that is not a state of the machine is rejected with the message naming the valid states
  and, when the run has a current state (its latest step-level row, by id), the valid transitions
  from it;
- a step-level move must follow an edge from the current workflow step, and a run's first step must
  be an initial state (re-entering the current step is always allowed);
- once accepted, earlier steps (machine order) that never had a status row are recorded `skipped`,
  and, for a step-level `running` or `completed` emit, predecessors of the step (transitive, in the
  graph) whose latest status is `running` or `waiting` are recorded `completed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rcs_tui.core.machine import StateMachine
from rcs_tui.rp1.projection import Event

if TYPE_CHECKING:
    from rcs_tui.rp1.source import Rp1Source

EMIT_STATUSES = ("running", "waiting", "completed", "failed", "skipped")


class CheckError(ValueError):
    """The check itself cannot be made (unknown run, unreadable database, machine that fails to load)."""


@dataclass(frozen=True)
class EmitCheck:
    """rp1's answer to one emit: accepted or rejected (with its messages) and what it would record."""

    workflow: str
    step: str
    status: str
    unit: str | None
    run_id: str | None
    tracked: bool
    errors: tuple[str, ...]
    current_state: str | None
    valid_states: tuple[str, ...]
    valid_transitions: tuple[str, ...] | None
    would_skip: tuple[str, ...]
    would_complete: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def accepted(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        return {"workflow": self.workflow, "step": self.step, "status": self.status, "unit": self.unit,
                "run": self.run_id, "tracked": self.tracked, "verdict": "accepted" if self.accepted else "rejected",
                "errors": list(self.errors), "current_state": self.current_state,
                "valid_states": list(self.valid_states),
                "valid_transitions": None if self.valid_transitions is None else list(self.valid_transitions),
                "would_skip": list(self.would_skip), "would_complete": list(self.would_complete),
                "notes": list(self.notes)}


def _current_state(ordered: Sequence[Event]) -> str | None:
    """rp1's current state of a run: the step of its latest step-level status row (by id)."""
    for ev in reversed(ordered):
        if ev.type == "status_change" and ev.step and not ev.unit:
            return ev.step
    return None


def _workflow_position(ordered: Sequence[Event]) -> str | None:
    """The workflow step a transition starts from: the latest plain step row (not a sub-agent's)."""
    for ev in reversed(ordered):
        if ev.is_workflow_row and ev.status:
            return ev.step
    return None


def check_emit(workflow: str, step: str, machine: StateMachine | None, events: Sequence[Event] = (), *,
               status: str = "running", unit: str | None = None, run_id: str | None = None,
               notes: Sequence[str] = (), run_flow: str | None = None) -> EmitCheck:
    """rp1's answer to emitting `step` (with `status`, `unit`) into the run whose rows are `events`."""
    ordered = sorted(events, key=lambda e: e.sort_key)
    current = _current_state(ordered)
    namespaced = ":" in step
    unknown = "unknown" in (workflow, run_flow)
    skip_all = machine is None or unknown or namespaced
    out_notes = list(notes)
    if unknown and machine is not None:
        out_notes.append('the workflow of this run is "unknown": rp1 does not validate its steps')
        machine = None
    elif machine is None:
        out_notes.append(f'no state machine for "{workflow}": rp1 records the step without validating it')
    elif namespaced:
        out_notes.append("namespaced sub-agent step: not validated against the parent machine")
    if skip_all or machine is None:
        return EmitCheck(workflow, step, status, unit, run_id, machine is not None, (), current,
                         machine.states if machine else (), None, (), (), tuple(out_notes))

    errors: list[str] = []
    transitions = machine.next_states(current) if current is not None else None
    bad_step = machine.validate_step(step, current)
    if bad_step:
        errors.append(bad_step)
    elif not unit:
        bad_move = machine.validate_transition(_workflow_position(ordered), step)
        if bad_move:
            errors.append(bad_move)
    if errors:
        return EmitCheck(workflow, step, status, unit, run_id, True, tuple(errors), current, machine.states,
                         transitions, (), (), tuple(out_notes))

    order = machine.bfs_order()
    seen = {ev.step for ev in ordered if ev.type == "status_change" and ev.step}
    skip = tuple(s for s in order[:order.index(step)] if s not in seen) if step in order else ()
    complete: tuple[str, ...] = ()
    if not unit and status in ("running", "completed"):
        latest = {ev.step: ev.status for ev in ordered if ev.is_workflow_row and ev.status}
        preds = machine.transitive_predecessors(step) - {step}
        complete = tuple(s for s in order if s in preds and s not in skip and latest.get(s) in ("running", "waiting"))
    return EmitCheck(workflow, step, status, unit, run_id, True, (), current, machine.states, transitions,
                     skip, complete, tuple(out_notes))


def check_in_source(source: Rp1Source, workflow: str, step: str, run_id: str | None = None, *,
                    status: str = "running", unit: str | None = None) -> EmitCheck:
    """`check_emit` against a run of `source`'s database (None: a new run) and its machine registry."""
    events: list[Event] = []
    notes: list[str] = []
    run_flow: str | None = None
    if run_id is not None:
        with source.lock:  # a source shared with another thread: its state is this read's
            for _attempt in range(source.db.retries):
                with source.db.snapshot() as snap:  # the run row and its events of one database state
                    run = source.db.run(run_id)
                    events = source.db.events([run.id]).get(run.id, []) if run is not None else []
                if not snap.again:
                    break
            if run is None:
                raise CheckError(source.state.message or f"rp1: no run {run_id!r} in {source.db.path}")
            if not source.state.ok:
                raise CheckError(source.state.message or f"rp1: cannot read run {run_id!r}")
        run_id, run_flow = run.id, run.flow
        if run.flow not in (workflow, "unknown"):
            notes.append(f'run {run.id} belongs to workflow "{run.flow}", not "{workflow}"')
    info = source.machines.infos.get(workflow)
    if info is not None and info.error:
        raise CheckError(f'state machine of "{workflow}" ({info.source}) cannot be loaded: {info.error}')
    return check_emit(workflow, step, source.machines.get(workflow), events, status=status, unit=unit,
                      run_id=run_id, notes=notes, run_flow=run_flow)


def check_lines(d: dict[str, Any]) -> list[str]:
    """The check (its JSON) as an operator reads it: verdict, rp1's messages, what rp1 would record.
    Strings are not sanitised here: each output path does that."""
    where = f"run {d['run']}" if d["run"] else "a new run"
    unit = f" --unit {d['unit']}" if d["unit"] else ""
    lines = [f"emit {d['workflow']} {d['step']} ({d['status']}{unit}) into {where}: {d['verdict'].upper()}"]
    lines += [f"  Error: {e}" for e in d["errors"]]
    lines += [f"  note: {n}" for n in d["notes"]]
    if d["tracked"]:
        current = d["current_state"]
        lines.append(f"current state: {current or '(none yet)'}")
        if d["valid_transitions"] is not None:
            lines.append(f"valid transitions from {current}: {', '.join(d['valid_transitions']) or '(none)'}")
        if d["verdict"] == "accepted":
            lines.append(f"would record skipped: {', '.join(d['would_skip']) or '-'}")
            lines.append(f"would auto-complete: {', '.join(d['would_complete']) or '-'}")
    return lines
