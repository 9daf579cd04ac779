"""One task: its lifecycle graph (drawn from the state machine, current phase highlighted), the
guards on each move out of it (`next`), and its transcript: first the phases as bars over time, then
(under the graph and guards) the newest moves as text with their exact times."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.core.machine import StateMachine, load_task_lifecycle
from rcs_tui.state.task_spans import task_chart
from rcs_tui.state.tasks import Task, load_task, next_report
from rcs_tui.state.txn import TxnError
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import plain, rel
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.updates import Parts, show_content
from rcs_tui.views.timeline_bars import Bars
from rcs_tui.views.world import World

TRANSCRIPT_LINES = 12


def graph_text(machine: StateMachine, current: str) -> Text:
    """The lifecycle as a BFS spine plus each phase's outgoing edges; the current phase is reversed."""
    out = Text()
    order = machine.bfs_order()
    reach = machine.reachable_from(current)
    for i, state in enumerate(order):
        if i:
            out.append(" → ", style="dim")
        style = "bold reverse" if state == current else ("" if state in reach else "dim")
        out.append(f"[{state}]" if state == current else state, style=style)
    out.append("\n\n")
    for state in order:
        targets = [t for t in machine.next_states(state)]
        mark = "▶ " if state == current else "  "
        out.append(mark, style="bold")
        out.append(f"{state:<12}", style="bold reverse" if state == current else "bold")
        out.append(" → " + (", ".join(targets) if targets else "(end)") + "\n",
                   style="" if state == current else "dim")
    return out


def guards_text(task: Task, machine: StateMachine) -> Text:
    report = next_report(task, machine)
    out = Text()
    if report["terminal"]:
        out.append(plain(report["redo"]) + "\n", style="dim")  # the core's text already says it is terminal
    for item in report["justified"]:
        out.append("  ✓ ", style="bold green")
        out.append(f"{item['to']:<12}", style="green")
        out.append(plain(item["why"]) + "\n")
    for item in report["not_justified"]:
        out.append("  ✗ ", style="bold red")
        out.append(f"{item['to']:<12}", style="red")
        out.append(plain(item["why"]) + "\n", style="dim")
    out.append("  reachable by override: ", style="bold")
    out.append(", ".join(report["reachable"]) or "(none)")
    out.append("\n")
    return out


def transcript_text(task: Task, root) -> Text:
    t = task.transcript
    out = Text()
    out.append(rel(t.path, root) + "\n", style="underline")
    if t.error:
        out.append(plain(t.error) + "\n", style="red")
    if t.bad_lines:
        out.append(f"lines that are not JSON objects: {', '.join(map(str, t.bad_lines[:10]))}\n", style="yellow")
    for e in t.entries[-TRANSCRIPT_LINES:]:
        out.append(plain(e.get("at", "?"), 24) + " ", style="dim")
        out.append(f"{plain(e.get('from') or '∅')} → {plain(e.get('to'))}", style="bold")
        out.append(f" {plain(e.get('kind', ''))}", style="cyan")
        out.append(f" by {plain(e.get('actor', '?'), 40)}: {plain(e.get('reason', ''), 80)}\n")
    if not t.entries:
        out.append("(empty)\n", style="dim")
    return out


def task_text(root, task_id: str, now: float | None = None) -> Any:
    """The task detail: a `Text`, or `Parts` with the transcript's bars drawn at the widget's width."""
    machine = load_task_lifecycle()
    try:
        task = load_task(root, task_id, machine)
    except (TxnError, ValueError) as exc:
        return Text(f"{task_id}: {plain(exc)}", style="bold red")
    head = Text()
    head.append(f"task {task.id}", style="bold")
    head.append(f"  phase {task.phase}", style="cyan")
    out = Text()
    out.append("\nlifecycle\n", style="bold")
    out.append_text(graph_text(machine, task.phase))
    out.append("\nguards (next)\n", style="bold")
    out.append_text(guards_text(task, machine))
    out.append("\ntranscript\n", style="bold")
    out.append_text(transcript_text(task, root))
    if not task.transcript.entries:
        return head + Text("\n") + out
    return Parts(head, Text("\nphases over time", style="bold"), Bars(task_chart(task, machine), now), out)


class TaskScreen(Screen):
    """Pushed by enter on a task; `o` overrides its phase, esc goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, task_id: str) -> None:
        super().__init__()
        self.task_id = task_id

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="task-scroll"):
            yield Static(id="task-text")
        yield FittedFooter()

    def current_task(self) -> str | None:
        return self.task_id

    def selection(self) -> tuple[Path | None, str | None]:
        from rcs_tui.ui.console.main import task_state_path

        return task_state_path(console_app(self).root, self.task_id), self.task_id

    def show(self, world: World, now: float) -> None:
        show_content(self.query_one("#task-text", Static), task_text(world.root, self.task_id, now))
