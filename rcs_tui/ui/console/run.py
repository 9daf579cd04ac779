"""One rp1 run's step timeline: the steps as bars on a time axis (work, waits, work done, quiet stretches
folded), then the steps in machine order with their start times, durations, retries, units, sub-agents,
artifacts, prompts and validation violations. Refreshed live as events arrive; read in a worker (the
database may be busy), the timeline on screen staying until the fresh one comes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.core.spans import moment
from rcs_tui.core.words import plural
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.spans import run_chart
from rcs_tui.rp1.timeline import SubEntry, Timeline
from rcs_tui.ui.console.background import OneAtATime
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import STATUS_STYLE, plain
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.updates import Parts, show_content
from rcs_tui.views.text import duration
from rcs_tui.views.timeline_bars import Bars
from rcs_tui.views.world import World

GLYPH = {"completed": "✓", "running": "▶", "waiting": "?", "failed": "✖", "skipped": "↷", "not_started": "·"}


def _sub(out: Text, sub: SubEntry, kind: str) -> None:
    status = sub.status or "-"
    out.append(f"      {kind} ", style="dim")
    out.append(plain(sub.key, 30), style="bold")
    if sub.state and sub.state != sub.key:
        out.append(f" {plain(sub.state, 20)}")
    out.append(f" {plain(status, 20)}", style=STATUS_STYLE.get(status, ""))
    if sub.violation:
        out.append(f"  ⚠ {plain(sub.violation, 80)}", style="bold red")
    out.append("\n")


def clock_time(stamp: str | None) -> str:
    """A stored timestamp as the local time of day (`HH:MM:SS`), or empty when it is not a time."""
    t = moment(stamp)
    return "" if t is None else time.strftime("%H:%M:%S", time.localtime(t))


def header_text(t: Timeline) -> Text:
    out = Text()
    out.append(f"run {plain(t.run.id)}\n", style="bold")
    out.append(f"{plain(t.workflow)}", style="cyan")
    out.append(f"  {plain(t.run.name or t.run.feature_id or '')}  ")
    out.append(plain(t.status, 20), style=STATUS_STYLE.get(t.status, "bold"))
    out.append(f"  step {plain(t.current_step or '-')}")
    if not t.tracked:
        out.append("  (no state machine found for this workflow)", style="yellow")
    out.append("\n")
    return out


def timeline_text(t: Timeline) -> Text:
    """The steps as text rows: status, duration and start time (the exact figures the bars round off)."""
    out = Text()
    for s in t.steps:
        style = STATUS_STYLE.get(s.status, "")
        out.append(f"{GLYPH.get(s.status, '·')} ", style=style)
        out.append(f"{plain(s.name, 20):<14}", style="bold" if s.status in ("running", "waiting") else "")
        out.append(f"{plain(s.status, 20):<12}", style=style)
        out.append(f"{duration(s.duration_s):>7}")
        if s.started_at:
            out.append(f"  {clock_time(s.started_at)}", style="dim")
        if s.retried:
            out.append(f"  retried ×{s.attempts}", style="yellow")
        if not s.in_machine:
            out.append("  not in machine", style="bold red")
        out.append("\n")
        if s.violation:
            out.append(f"      ⚠ {plain(s.violation, 100)}\n", style="bold red")
        for u in s.units:
            _sub(out, u, "unit ")
        for a in s.agents:
            _sub(out, a, "agent")
        for art in s.artifacts:
            out.append("      artifact ", style="dim")
            out.append(plain(art.get("path"), 70) + "\n")
        for p in s.prompts:
            out.append("      " + ("waiting: " if p.pending else "asked: "), style="yellow" if p.pending else "dim")
            out.append(plain(p.message, 80) + "\n")
    for sub in t.unattached:
        _sub(out, sub, "orphan")
    for art in t.run_artifacts:
        out.append("  artifact ", style="dim")
        out.append(plain(art.get("path"), 70) + "\n")
    if t.violations:
        out.append(f"\n{plural(len(t.violations), 'validation violation')}\n", style="bold red")
        for v in t.violations:
            out.append(f"  {plain(v.get('step'))}: {plain(v.get('message'), 100)}\n", style="red")
    return out


class RunScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("c", "check_emit", "Check emit")]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.reads = OneAtATime("timeline")
        self.timeline: Timeline | None = None  # the one on screen
        self.source: Rp1Source | None = None  # the source it was read from
        self.answered = False

    def selection(self) -> tuple[None, str]:
        return None, self.run_id

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="run-scroll"):
            yield Static(id="run-text")
        yield FittedFooter()

    def show(self, world: World, now: float, source: Callable[[], Rp1Source | None] = lambda: None) -> None:
        """Read the timeline from `source()` in a worker, then draw it."""
        run_id = self.run_id

        def read() -> tuple[Rp1Source | None, Timeline | None, Any]:
            opened = source()
            if opened is None:
                return None, None, Text("no rp1 database", style="yellow")
            with opened.lock:  # the state is the one this read ended with, not the loader's next read
                t = opened.timeline(run_id)
                problem = opened.state.message
            if t is None:
                return opened, t, Text(f"run {plain(run_id)} not found ({plain(problem or 'unknown run')})",
                                       style="yellow")
            return opened, t, Parts(header_text(t), Bars(run_chart(t), now), Text(""), timeline_text(t))

        if not self.answered:
            show_content(self.query_one("#run-text", Static), Text("loading the timeline…", style="dim"))
        self.reads.run(self, read, self._draw)

    def _draw(self, answer: tuple[Rp1Source | None, Timeline | None, Any], _: BaseException | None) -> None:
        self.answered = True
        self.source, self.timeline, text = answer
        show_content(self.query_one("#run-text", Static), text)

    def action_check_emit(self) -> None:
        """What rp1 would answer to an emit into this run, prefilled with the step after the current one."""
        from rcs_tui.ui.console.emitcheck import EmitCheckModal

        source, t = self.source, self.timeline  # as last read (by the worker): nothing is read here
        if source is None or t is None:
            self.app.bell()
            return
        machine = source.machines.get(t.workflow)
        nxt = machine.next_states(t.current_step) if machine and t.current_step else ()
        self.app.push_screen(EmitCheckModal(source, t.workflow, self.run_id, nxt[0] if nxt else ""))
