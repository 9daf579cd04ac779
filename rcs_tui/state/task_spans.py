"""A task's transcript as a time chart: one lane per phase, a stretch from each move into the phase to
the next move, the phase it is in now still open (a terminal phase is an instant: nothing runs there).

Phases come in lifecycle order, then any the transcript names that the lifecycle does not (at most
`MAX_PHASES` lanes: a transcript is untrusted). Times are read in line order and never go back.
"""

from __future__ import annotations

from rcs_tui.core.machine import StateMachine
from rcs_tui.core.spans import DONE, RUNNING, Chart, Clamp, Lane, Span
from rcs_tui.core.task_lifecycle import is_terminal
from rcs_tui.state.tasks import Task

MAX_PHASES = 40


def task_chart(task: Task, machine: StateMachine, now: float | None = None) -> Chart:
    """The phases `task` went through, each with its stretches; the current phase marked."""
    spans: dict[str, list[Span]] = {}
    clamp = Clamp()
    open_phase: tuple[str, float] | None = None
    for entry in task.transcript.entries:
        to = entry.get("to")
        if not isinstance(to, str) or not to or (to not in spans and len(spans) >= MAX_PHASES):
            continue
        at = clamp(entry.get("at"))
        if at is None:
            continue
        if open_phase is not None:
            spans[open_phase[0]].append(Span(open_phase[1], at, DONE))
        spans.setdefault(to, [])
        open_phase = (to, at)
    if open_phase is not None:
        phase, since = open_phase
        end = since if is_terminal(phase, machine) else None
        spans[phase].append(Span(since, end, DONE if end is not None else RUNNING))
    order = [p for p in machine.bfs_order() if p in spans or p == task.phase]
    order += [p for p in spans if p not in order]
    lanes = tuple(Lane(p, tuple(spans.get(p, ())), 0, p == task.phase, "now" if p == task.phase else "")
                  for p in order)
    return Chart(lanes, now)
