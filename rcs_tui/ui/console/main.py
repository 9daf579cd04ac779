"""The main screen: status bar, the six views as tabs (scopes, team, tasks, rp1, journal, history), footer.

The first frame holds the scopes view only; the other views are built right after it (their modules
imported then too), so the console shows something sooner on a big tree.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from rcs_tui.files.layout import Layout
from rcs_tui.state.txn import JOURNAL_REL
from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.scopes import ScopesPane, parse_member_key, row_item, split_member_key
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.console.typed_app import console_app
from rcs_tui.ui.console.walk import AFTER, SCOPE_ROW, Stop, run_item, stops
from rcs_tui.ui.linetable import LineTable

TABS = ("scopes", "team", "tasks", "rp1", "journal", "history")


def task_state_path(root: Path, task_id: str) -> Path | None:
    """A task's state.json, also when it is unreadable (editing it is how one fixes that)."""
    from rcs_tui.core.modes import BadName, check_name
    from rcs_tui.state.tasks import STATE, tasks_dir

    try:
        return tasks_dir(root) / check_name(task_id, "task id") / STATE
    except BadName:
        return None


class MainScreen(Screen):
    BINDINGS = [Binding("escape", "clear_filter", "Clear filter", show=False)]
    views_built = False
    _drawn_tab: str | None = None  # the view `show_tab` drew before the tabs announced it

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        banner = getattr(self.app, "banner", None)
        if banner:
            yield Static(Text(banner, style="bold"), id="banner")
        with TabbedContent(initial="scopes", id="tabs"):
            with TabPane("1 Scopes", id="scopes"):
                yield ScopesPane(id="scopes-pane")
            yield TabPane("2 Team", id="team")
            yield TabPane("3 Tasks", id="tasks")
            yield TabPane("4 rp1", id="rp1")
            yield TabPane("5 Journal", id="journal")
            yield TabPane("6 History", id="history")
        yield FittedFooter(id="footer")

    def on_mount(self) -> None:
        # The scopes view is drawn before the first frame, not by the screen's resume after it: that frame
        # then already shows the sessions, instead of an empty table one frame (and a busy loader) earlier.
        console_app(self).refresh_views()
        self.call_after_refresh(self.focus_table)  # j/k/enter work from the first keypress
        # The other views are built after the first frame is on the terminal. Textual holds every frame
        # of its start-up (the first refresh ends it), so one refresh later is the first frame shown.
        self.call_after_refresh(self.call_after_refresh, self._build_views)

    async def _build_views(self) -> None:
        """Mount the views after the scopes one, then draw the one on screen (a key may have switched).
        Nothing is mounted into a screen already being taken down (the console quit before they were
        built)."""
        from rcs_tui.ui.console.history import HistoryPane
        from rcs_tui.ui.console.journal import JournalPane
        from rcs_tui.ui.console.runs import RunsPane
        from rcs_tui.ui.console.tasks import TasksPane
        from rcs_tui.ui.console.team import TeamPane

        for tab, pane in (("team", TeamPane(id="team-pane")), ("tasks", TasksPane(id="tasks-pane")),
                          ("rp1", RunsPane(id="runs-pane")), ("journal", JournalPane(id="journal-pane")),
                          ("history", HistoryPane(id="history-pane"))):
            host = self.query_one(f"#{tab}", TabPane)
            if not host.is_attached:
                return
            await host.mount(pane)
        self.views_built = True
        if self.tab != "scopes":
            console_app(self).refresh_views()
            self.focus_table()

    @property
    def tab(self) -> str:
        return self.query_one("#tabs", TabbedContent).active or "scopes"

    def show_tab(self, tab: str) -> None:
        """Switch to view `tab`, drawn before the next frame: waiting for the tabs' own activation message
        cost a switch two more trips through the message queue (10-20 ms of a 50-90 ms switch)."""
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active == tab:
            return
        tabs.active = tab
        self._drawn_tab = tab
        console_app(self).refresh_views()
        self.focus_table()
        self.refresh_bindings()  # the footer offers the keys that act in this view

    def focus_table(self) -> None:
        pane = self.query_one(f"#{self.tab}", TabPane)
        tables = pane.query(LineTable)
        if tables:
            tables.first().focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A view chosen with the mouse (a key's view is drawn already by `show_tab`)."""
        if self._drawn_tab != self.tab:
            console_app(self).refresh_views()
        self._drawn_tab = None
        self.call_after_refresh(self.focus_table)
        self.refresh_bindings()

    def current_member(self) -> tuple[str | None, str] | None:
        if self.tab != "scopes":
            return None
        return parse_member_key(self.query_one(ScopesPane).selected())

    def needs_item(self) -> str | None:
        """The "needs you" entry of the selected row: a member or the stale-dead pointer (scopes), a worker
        (team, its workers' table), a run (rp1); None elsewhere."""
        tab = self.tab
        if tab == "scopes":
            return row_item(self.query_one(ScopesPane).selected())
        focused = self.focused
        if tab == "team" and isinstance(focused, LineTable) and focused.id == "team-workers":
            return focused.selected
        if tab == "rp1" and self.views_built:
            from rcs_tui.ui.console.runs import RunsPane  # imported already: its pane is built

            run = self.query_one(RunsPane).selected()
            return run_item(run) if run else None
        return None

    def walk(self) -> tuple[list[Stop], tuple[int, int]]:
        """Every row that needs you across the views, in the order n / N walk them, and where the cursor is in
        that order (see `walk`): on the selected row of the view on screen; past the team's workers when its
        tasks table has the focus."""
        app = console_app(self)
        scopes = self.query_one("#scopes-table", LineTable)
        workers: list[str] = []
        worker_keys: list[str] = []
        run_keys: list[str] = []
        reach: tuple[str, ...] = ("scopes",)
        if self.views_built and app.world is not None:
            from rcs_tui.ui.console.team import worker_keys as all_workers  # imported already: built

            workers = all_workers(app.world)
            worker_keys = list(self.query_one("#team-workers", LineTable).keys)
            run_keys = list(self.query_one("#runs-table", LineTable).keys)
            reach = TABS
        walk = stops(app.needs, TABS, reach, scopes.keys, row_item, workers, worker_keys, run_keys)
        tab, focused = self.tab, self.focused
        row = -1  # a view without rows that need you: before its place's first row
        if tab == "scopes":
            row = scopes.cursor
        elif tab == "rp1" and self.views_built:
            row = self.query_one("#runs-table", LineTable).cursor
        elif tab == "team" and isinstance(focused, LineTable):
            row = focused.cursor if focused.id == "team-workers" else AFTER
        return walk, (TABS.index(tab), row)

    def go_to(self, stop: Stop) -> None:
        """Show the view holding `stop` and select its row."""
        self.show_tab(stop.view)
        if stop.view == "scopes":
            table = self.query_one("#scopes-table", LineTable)
            if stop.key.startswith(SCOPE_ROW):  # a scope listed as one row: open it, then its member's row
                sid, mode = stop.item.split("/", 1)
                self.query_one(ScopesPane).toggle(stop.key)
                member = f"member:{sid}:{sid}:{mode}"
                table.select_key(member if member in table.keys else stop.key)
            else:
                table.select_key(stop.key)
        elif stop.view == "team":
            from rcs_tui.ui.console.team import TeamPane  # imported already: its pane is built

            self.query_one(TeamPane).reveal(stop.key)
        elif stop.view == "rp1":
            from rcs_tui.ui.console.runs import RunsPane  # imported already: its pane is built

            self.query_one(RunsPane).reveal(stop.key)
        self.refresh_bindings()

    def current_task(self) -> str | None:
        panes = self.query("#tasks-pane")
        if self.tab != "tasks" or not panes:
            return None
        from rcs_tui.ui.console.tasks import TasksPane  # imported already: its pane is built

        return panes.first(TasksPane).selected()

    def current_entry(self) -> str | None:
        panes = self.query("#journal-pane")
        if self.tab != "journal" or not panes:
            return None
        from rcs_tui.ui.console.journal import JournalPane  # imported already: its pane is built

        return panes.first(JournalPane).selected()

    def filter_input(self) -> Input | None:
        found = self.query_one(f"#{self.tab}", TabPane).query(".filter")
        return found.first(Input) if found else None

    def action_clear_filter(self) -> None:
        """Esc: empty the filter of this view and hide its bar (the rp1 filter bar stays, emptied)."""
        field = self.filter_input()
        if field is None or not (field.value or field.has_class("shown")):
            return
        field.value = ""
        field.remove_class("shown")
        self.focus_table()
        console_app(self).refresh_views()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            field = self.filter_input()
            return field is not None and bool(field.value or field.has_class("shown"))
        return True

    def selection(self) -> tuple[Path | None, str | None]:
        """The selected row's file (what `e` edits, `y` copies) and id."""
        root = console_app(self).root
        if self.tab == "scopes":
            key = self.query_one(ScopesPane).selected()
            parts = split_member_key(key)
            if parts is not None:
                _, scope, mode = parts
                return Layout(root).mode_file(mode, scope), mode
            if key and key.startswith("scope:"):
                sid = key.split(":", 1)[1] or None
                return Layout(root).canonical_file(sid), sid or "root"
        elif self.tab == "tasks":
            task_id = self.current_task()
            if task_id:
                return task_state_path(root, task_id), task_id
        elif self.tab == "journal":
            entry = self.current_entry()
            return root / JOURNAL_REL, entry
        elif self.tab == "history":
            from rcs_tui.project.recorder import HISTORY_REL
            from rcs_tui.ui.console.history import HistoryPane  # imported already: its pane is built

            panes = self.query("#history-pane")
            return root / HISTORY_REL, panes.first(HistoryPane).selected() if panes else None
        elif self.tab == "rp1":
            panes = self.query("#runs-pane")
            if not panes:
                return None, None
            from rcs_tui.ui.console.runs import RunsPane  # imported already: its pane is built

            return None, panes.first(RunsPane).selected()
        elif self.tab == "team":
            focused = self.focused
            return None, focused.selected if isinstance(focused, LineTable) else None
        return None, None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.has_class("filter"):
            console_app(self).refresh_views()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.has_class("filter"):
            self.focus_table()

    def on_line_table_selected(self, event: LineTable.Selected) -> None:
        key = event.key
        app = console_app(self)
        table = event.table.id
        member = parse_member_key(key)
        if table == "scopes-table" and member:
            app.open_member(*member)
        elif table == "scopes-table" and key and key.startswith("scope:"):
            # a collapsed (or expanded) scope of a long list shows or hides its members; any other opens
            if not self.query_one(ScopesPane).toggle(key):
                app.open_details("scope", key.split(":", 1)[1])
        elif table == "team-workers" and key:
            app.open_details("worker", key)
        elif table == "tasks-table" and key:
            app.open_task(key)
        elif table == "runs-table" and key:
            app.open_run(key)
        elif table == "journal-table" and key:
            app.open_entry(key)
        elif table == "history-table" and key:
            from rcs_tui.ui.console.history import HistoryPane  # imported already: its pane is built

            found = self.query_one(HistoryPane).entry(key)
            if found is not None:
                app.open_history_entry(*found)

    def on_screen_resume(self) -> None:
        console_app(self).refresh_views()
