"""The main screen: status bar, the five views as tabs (scopes, team, tasks, rp1, journal), footer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, TabbedContent, TabPane

from rcs_tui.ui.console.journal import JournalPane
from rcs_tui.ui.console.runs import RunsPane
from rcs_tui.ui.console.scopes import ScopesPane, parse_member_key
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.table import selected_key
from rcs_tui.ui.console.tasks import TasksPane
from rcs_tui.ui.console.team import TeamPane

TABS = ("scopes", "team", "tasks", "rp1", "journal")


class MainScreen(Screen):
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with TabbedContent(initial="scopes", id="tabs"):
            with TabPane("1 Scopes", id="scopes"):
                yield ScopesPane(id="scopes-pane")
            with TabPane("2 Team", id="team"):
                yield TeamPane(id="team-pane")
            with TabPane("3 Tasks", id="tasks"):
                yield TasksPane(id="tasks-pane")
            with TabPane("4 rp1", id="rp1"):
                yield RunsPane(id="runs-pane")
            with TabPane("5 Journal", id="journal"):
                yield JournalPane(id="journal-pane")
        yield Footer(id="footer")

    def on_mount(self) -> None:
        self.call_after_refresh(self.focus_table)  # j/k/enter work from the first keypress

    @property
    def tab(self) -> str:
        return self.query_one("#tabs", TabbedContent).active or "scopes"

    def show_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab
        self.focus_table()

    def focus_table(self) -> None:
        pane = self.query_one(f"#{self.tab}", TabPane)
        tables = pane.query(DataTable)
        if tables:
            tables.first().focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.app.refresh_views()  # type: ignore[attr-defined]
        self.call_after_refresh(self.focus_table)

    def current_member(self) -> tuple[str | None, str] | None:
        if self.tab != "scopes":
            return None
        return parse_member_key(self.query_one(ScopesPane).selected())

    def current_task(self) -> str | None:
        return self.query_one(TasksPane).selected() if self.tab == "tasks" else None

    def current_entry(self) -> str | None:
        return self.query_one(JournalPane).selected() if self.tab == "journal" else None

    def filter_input(self) -> Input | None:
        found = self.query_one(f"#{self.tab}", TabPane).query(".filter")
        return found.first(Input) if found else None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.has_class("filter"):
            self.app.refresh_views()  # type: ignore[attr-defined]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.has_class("filter"):
            self.focus_table()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = selected_key(event.data_table)
        app = self.app
        table = event.data_table.id
        if table == "scopes-table" and parse_member_key(key):
            app.open_member(*parse_member_key(key))  # type: ignore[attr-defined, misc]
        elif table == "scopes-table":
            self.query_one(ScopesPane).toggle(key)
        elif table == "tasks-table" and key:
            app.open_task(key)  # type: ignore[attr-defined]
        elif table == "runs-table" and key:
            app.open_run(key)  # type: ignore[attr-defined]
        elif table == "journal-table" and key:
            app.action_undo()  # type: ignore[attr-defined]

    def on_screen_resume(self) -> None:
        self.app.refresh_views()  # type: ignore[attr-defined]
