"""Task list: every task dir with its phase and the moves its artifacts justify now."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.state.tasks import list_tasks
from rcs_tui.ui.console.format import age, plain, styled
from rcs_tui.ui.console.table import Column, DrawnFrom, Row, project, set_columns
from rcs_tui.ui.linetable import LineTable
from rcs_tui.views.world import World

COLUMNS = (Column("task", 18, 9, grow=20), Column("phase", 12, 8), Column("next (guards hold)", 22, 5, grow=30),
           Column("age", 6, 3))


def task_rows(world: World, now: float, needle: str = "") -> list[Row]:
    justified = {t["id"]: t for t in list_tasks(world.root)}
    rows: list[Row] = []
    for info in sorted(world.tasks, key=lambda t: t.id):
        if needle and needle not in info.id and needle not in (info.phase or ""):
            continue
        if info.error:
            rows.append((info.id, [styled(info.id), Text("unreadable", style="bold red"), styled(info.error, "red"),
                                   Text("-")]))
            continue
        nxt = justified.get(info.id, {}).get("justified") or []
        phase_style = "green" if info.terminal else "cyan"
        rows.append((info.id, [styled(info.id), styled(info.phase, phase_style),
                               styled(", ".join(nxt) or ("(terminal)" if info.terminal else "(none)"), "dim"),
                               Text(age(now - info.mtime) if info.mtime else "-")]))
    return rows


class TasksPane(Vertical):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.drawn = DrawnFrom()

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter tasks…", id="tasks-filter", classes="filter")
        table = LineTable(id="tasks-table")
        set_columns(table, COLUMNS, self.app.size.width)
        yield table
        yield Static(Text("enter: lifecycle graph, guards, transcript   o: override phase", style="dim"),
                     classes="detail")

    def show(self, world: World, now: float) -> None:
        needle = plain(self.query_one("#tasks-filter", Input).value.strip())
        if self.drawn.same(now, world.tasks, needle, self.app.size.width):
            return
        table = self.query_one("#tasks-table", LineTable)
        rows = task_rows(world, now, needle)
        table.set_rows(project(rows, COLUMNS, set_columns(table, COLUMNS, self.app.size.width, rows)))

    def selected(self) -> str | None:
        return self.query_one("#tasks-table", LineTable).selected
