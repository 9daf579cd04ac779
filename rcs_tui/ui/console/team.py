"""Team runtime: every team's workers (state, task, heartbeat age, dead, why one needs you) and its tasks by
status; the line under the workers says why the selected one needs you (dead, silent) and how sure that is."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.core.words import plural
from rcs_tui.state.team import TASK_STATUSES, Worker
from rcs_tui.ui.console.format import STATUS_STYLE, age, parse_ts, plain, styled
from rcs_tui.ui.console.needs import Needs, why_cell, why_text
from rcs_tui.ui.console.table import Column, DrawnFrom, Row, matches, project, set_columns
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.linetable import LineTable
from rcs_tui.ui.updates import show_content
from rcs_tui.views.health import WORKER_GLYPH
from rcs_tui.views.world import World

# `why` (the verdict in short, as in the scopes view) shows when the width allows; the line under the table
# says it whole at every width.
WORKER_COLUMNS = (Column("team", 12, 5, grow=12), Column("worker", 10, 9, grow=10), Column("state", 8, 8),
                  Column("task", 5, 4), Column("beat", 6, 3), Column("heartbeat", 16, 7),
                  Column("why", 24, 0, grow=30))
TASK_COLUMNS = (Column("team", 12, 3, grow=12), Column("id", 4, 8), Column("status", 11, 9),
                Column("owner", 9, 4, grow=6), Column("subject", 30, 6, grow=60))
STATUS_ORDER = {s: i for i, s in enumerate(("in_progress", "blocked", "failed", "pending", "completed"))}


def heartbeat(worker: Worker, now: float) -> Text:
    """Dead, silent past the runtime's threshold, not reporting, or alive: only a recent beat is `♥ alive`."""
    condition = worker.condition(now)
    glyph, style = WORKER_GLYPH[condition]
    since = " " + age(worker.heartbeat_age(now)) if condition == "silent" else ""
    return Text(f"{glyph} {condition}{since}", style=style)


def worker_keys(world: World) -> list[str]:
    """Every worker's key (`team/worker`, also its "needs you" entry), in the order the table lists them."""
    return [f"{name}/{w.name}" for name, team in sorted(world.teams.items()) for w in team.workers]


def worker_rows(world: World, now: float, needs: Needs | None = None) -> list[Row]:
    rows: list[Row] = []
    for name, team in sorted(world.teams.items()):
        for w in team.workers:
            beat = parse_ts(w.last_turn_at)
            key = f"{name}/{w.name}"
            rows.append((key, [styled(name), styled(w.name), styled(w.state, STATUS_STYLE.get(
                w.state, "")), styled(w.current_task_id or "-"), Text(age(now - beat) if beat else "-"),
                heartbeat(w, now), why_cell(needs, key) if needs is not None else Text("")]))
    return rows


def worker_detail(world: World, key: str | None, now: float, needs: Needs | None = None) -> Text:
    """The line under the workers: the selected worker's heartbeat and task, and why it needs you, if it does."""
    out = Text(no_wrap=False)
    team_name, _, name = (key or "").partition("/")
    team = world.teams.get(team_name)
    worker = next((w for w in team.workers if w.name == name), None) if team else None
    if worker is None:
        return out
    out.append(f"{plain(name)} ", style="bold")
    out.append(f"of {plain(team_name)}: ")
    out.append_text(heartbeat(worker, now))
    out.append(f", {plain(worker.state)}" + (f" on task {plain(worker.current_task_id)}" if worker.current_task_id
                                               else ""))
    if needs is not None and needs.of(key):
        out.append("\n")
        out.append_text(why_text(needs, key))
    return out


def task_rows(world: World) -> list[Row]:
    rows: list[Row] = []
    for name, team in sorted(world.teams.items()):
        for t in sorted(team.tasks, key=lambda t: (STATUS_ORDER.get(t.status, 9), t.id)):
            rows.append((f"{name}/{t.id}", [styled(name), styled(t.id), styled(t.status, STATUS_STYLE.get(
                t.status, "")), styled(t.owner or "-"), styled(t.subject, width=200)]))
    return rows


def team_summary(world: World) -> Text:
    out = Text()
    if not world.teams:
        return out.append("No team runtime directories under .rcs/state/team/.", style="dim")
    for name, team in sorted(world.teams.items()):
        out.append(plain(name), style="bold")
        out.append(f" {plain(team.phase or '-')} ", style="cyan")
        out.append(f"{team.done}/{team.total} done  ")
        for status in TASK_STATUSES:
            if team.counts.get(status):
                out.append(f"{status}:{team.counts[status]} ", style=STATUS_STYLE.get(status, ""))
        dead = sum(1 for w in team.workers if w.dead_reason)
        if dead:
            out.append(f" {plural(dead, 'dead worker')}", style="bold red")
        out.append("\n")
    return out


class TeamPane(Vertical):
    # The task rows of the teams last shown: a section the loader did not reload is the same object, so
    # its rows are handed over as the same objects and the table skips them without comparing cells.
    _tasks_of: object = None
    _task_rows: list[Row] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.drawn = DrawnFrom()

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter workers/tasks…", id="team-filter", classes="filter")
        yield Static(id="team-summary", classes="summary")
        workers = LineTable(id="team-workers")
        set_columns(workers, WORKER_COLUMNS, self.app.size.width)
        yield workers
        yield Static(id="team-detail", classes="detail")
        tasks = LineTable(id="team-tasks")
        set_columns(tasks, TASK_COLUMNS, self.app.size.width)
        yield tasks

    def show(self, world: World, now: float) -> None:
        width = self.app.size.width
        needle = self.query_one("#team-filter", Input).value.strip()
        needs = console_app(self).needs
        if self.drawn.same(now, world.teams, needle, width, needs):
            return
        summary = team_summary(world)
        summary.rstrip()
        show_content(self.query_one("#team-summary", Static), summary)
        if world.teams is not self._tasks_of:
            self._tasks_of, self._task_rows = world.teams, task_rows(world)
        for table_id, columns, rows in (("#team-workers", WORKER_COLUMNS, worker_rows(world, now, needs)),
                                        ("#team-tasks", TASK_COLUMNS, self._task_rows)):
            table = self.query_one(table_id, LineTable)
            rows = [r for r in rows if matches(needle, r[0], *r[1])] if needle else rows
            table.set_rows(project(rows, columns, set_columns(table, columns, width, rows)))
        self._detail(world, now)

    def _detail(self, world: World, now: float) -> None:
        show_content(self.query_one("#team-detail", Static),
                     worker_detail(world, self.selected_worker(), now, console_app(self).needs))

    def selected_worker(self) -> str | None:
        return self.query_one("#team-workers", LineTable).selected

    def shown_workers(self) -> list[str]:
        return list(self.query_one("#team-workers", LineTable).keys)

    def reveal(self, key: str) -> None:
        """Select worker `key` (n / N went to it), emptying the filter when it hides the worker."""
        table = self.query_one("#team-workers", LineTable)
        app = console_app(self)
        field = self.query_one("#team-filter", Input)
        if key not in table.keys and field.value and app.world is not None:
            field.value = ""
            field.remove_class("shown")
            self.show(app.world, app.clock())
        table.select_key(key)
        table.focus()

    def on_line_table_highlighted(self, event: LineTable.Highlighted) -> None:
        if event.table.id == "team-workers":
            app = console_app(self)
            if app.world is not None:
                self._detail(app.world, app.clock())
            self.screen.refresh_bindings()  # `a` is offered only on a worker that needs you
