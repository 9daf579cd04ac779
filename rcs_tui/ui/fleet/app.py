"""FleetApp: one row per project, kept current by the hub, with an Alerts view.

The hub's tasks run on this app's event loop and call `_row_changed` directly; redraws are coalesced
(one every `FLUSH_S` at most), work out the cells of the rows that changed only, and the line table
draws again only rows whose cells differ (a re-sort just reorders the drawn lines). Ssh sessions start
at mount, local reads after the first frame.
Enter opens the project's console: this machine's rcs-tui for a local project, the host's over `ssh -t`
for a remote one (its lock, journal and undo apply there). `i` opens the project view, whose actions run
through the project's own `rcs-tui … --json`.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane

from rcs_tui.core.attention import NEEDS_YOU
from rcs_tui.core.words import plural
from rcs_tui.fleet.acks import Acknowledger, HistoryAcknowledger, item_id, record_all
from rcs_tui.fleet.alerts import Alert, AlertSettings, AlertTracker
from rcs_tui.fleet.hub import FleetHub
from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.rows import Row, sorted_rows
from rcs_tui.fleet.transport import Ssh
from rcs_tui.ui.console.background import Answered
from rcs_tui.ui.fleet.help import FleetHelp
from rcs_tui.ui.fleet.table import cell_widths, columns_for, row_cells, shown_cells
from rcs_tui.ui.hud_app import stylesheet
from rcs_tui.ui.linetable import LineTable, content_widths
from rcs_tui.ui.notices import PlainNotices
from rcs_tui.ui.updates import show_content
from rcs_tui.views.text import clip

FLUSH_S = 0.03
ALERT_COLUMNS = ("WHEN", "PROJECT", "HOST", "KIND", "MEMBER", "SENT", "WHY")
ALERT_TICK_S = 1.0
TICK_S = 15.0
PROJECT_ACTIONS = frozenset({"details", "filter", "clear_filter", "open_console"})  # need the projects tab
LIST_ACTIONS = frozenset({"details", "filter", "clear_filter", "tab"})  # the list's, not a project view's
FREEZE_EVERY = 25  # projects read in full between two freezes of what the fleet holds (see `_settle`)


class FleetScreen(Screen):
    def compose(self) -> ComposeResult:
        yield Static(id="fleet-status")
        with TabbedContent(initial="projects", id="fleet-tabs"):
            with TabPane("1 Projects", id="projects"):
                yield Input(placeholder="filter projects (esc clears)", id="fleet-filter")
                yield LineTable(id="fleet-table", zebra_stripes=True, run_on=True)
            with TabPane("2 Alerts", id="alerts"):
                yield LineTable(id="alerts-table")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#alerts-table", LineTable).set_columns(ALERT_COLUMNS, [len(c) for c in ALERT_COLUMNS])
        self.call_after_refresh(self.query_one("#fleet-table", LineTable).focus)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane = event.pane.id or "projects"
        table = "#fleet-table" if pane == "projects" else "#alerts-table"
        self.call_after_refresh(self.query_one(table).focus)
        self.refresh_bindings()  # the footer offers the keys that act in this tab


class FleetApp(PlainNotices):
    """The fleet view."""

    TITLE = "rcs-tui fleet"
    CSS = stylesheet("console.tcss") + "\n" + stylesheet("fleet.tcss")
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),  # as in the console, not ctrl+q
        Binding("question_mark", "help", "Help"),
        Binding("enter", "open_console", "Console", priority=False),
        Binding("i", "details", "Details"),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("1", "tab('projects')", "Projects"),
        Binding("2", "tab('alerts')", "Alerts"),
        Binding("n", "next_needing(1)", "Next needs you", show=False),
        Binding("N", "next_needing(-1)", "Previous needs you", show=False),
        Binding("a", "acknowledge", "Acknowledge", show=False),
        Binding("j", "cursor('down')", "Down", show=False),
        Binding("k", "cursor('up')", "Up", show=False),
        Binding("y", "copy", "Copy", show=False),
        Binding("colon", "palette", "Palette", show=False),
    ]

    def __init__(self, projects: list[Project], *, ssh: Ssh | None = None, alerts: AlertSettings | None = None,
                 readonly: bool = False, clock: Callable[[], float] = time.time, live: bool = True,
                 max_backoff: float = 30.0, heartbeat: float = 10.0, acknowledger: Acknowledger | None = None,
                 actor: str | None = None, record: bool = False) -> None:
        super().__init__()
        self.acknowledger: Acknowledger = acknowledger or HistoryAcknowledger()
        self.actor = actor or f"{os.environ.get('USER') or 'operator'}@fleet"
        self.ssh = ssh or Ssh()
        self.readonly = readonly
        self.clock = clock
        self.live = live
        self.hub = FleetHub(projects, self._row_changed, ssh=self.ssh, clock=clock, max_backoff=max_backoff,
                            heartbeat=heartbeat, record=record and live)
        self.tracker = AlertTracker(alerts or AlertSettings(), bell=self.bell, clock=clock, focused=self.looked_at)
        self._looked: tuple[float, frozenset[str]] = (float("-inf"), frozenset())
        self.filter_text = ""
        self._dirty: set[str] = set()
        self._alerts_dirty = False
        self._flush_pending = False
        self._cells: dict[str, dict[str, Text]] = {}
        self._widths: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}  # each row's `cell_widths`
        self.changes = 0  # rows updated since start (benchmarks read it)
        self.painted: dict[str, float] = {}  # project key -> when its latest change reached the screen
        self._read_in_full: set[str] = set()
        self._froze = False

    @property
    def rows(self) -> dict[str, Row]:
        return self.hub.rows

    # -- lifecycle --------------------------------------------------------------------------
    def on_mount(self) -> None:
        self.push_screen(FleetScreen())
        self.call_after_refresh(self.redraw)
        if self.live:  # ssh sessions now; local reads after the first frame (rows show "connecting" till then)
            self.hub.start(local=False)
            self.call_after_refresh(self.hub.start, remote=False)
        self.set_interval(TICK_S, self._tick)  # relative ages ("3m ago", "since …") move on
        self.set_interval(ALERT_TICK_S, self._alert_tick)  # entries whose hold time has passed fire

    def on_resize(self) -> None:
        """Another width fits other columns: work them out at once, not at the next change."""
        self.call_after_refresh(self.redraw)

    def on_answered(self, message: Answered) -> None:
        """The answer of a call a dialog ran off the UI thread (the doctor's, an override's dry run)."""
        message.deliver()

    async def on_unmount(self) -> None:
        if self._froze:
            gc.unfreeze()
        await self.hub.stop()
        await self.tracker.drain()

    def _settle(self, row: Row) -> None:
        """Every `FREEZE_EVERY` projects read in full (and once all are), move what the process holds out of
        the collector's reach (`gc.freeze`). A full collection walks every object: at 200 projects of 100
        sessions that stalled the event loop about two seconds each time, and loading them ran a dozen.
        The documents and loaders a row keeps form no cycles (a re-read frees the old ones by their
        counts), so nothing that becomes garbage later needs the collector; new objects are collected as
        before, and the frozen ones go back to it when the fleet closes."""
        if row.doc is None or row.doc.get("partial") or row.project.key in self._read_in_full:
            return
        self._read_in_full.add(row.project.key)
        if len(self._read_in_full) % FREEZE_EVERY == 0 or len(self._read_in_full) == len(self.rows):
            gc.collect(1)  # the young garbage first (cheap): it must not be frozen
            gc.freeze()
            self._froze = True

    def looked_at(self) -> frozenset[str]:
        """Projects in front of the operator now: the one this fleet's project view shows, and every local
        project a console shows (its marker, read at most once a second)."""
        from rcs_tui.fleet.focus import looked_at
        from rcs_tui.ui.fleet.project import ProjectScreen

        now = time.monotonic()
        if now - self._looked[0] >= 1.0:
            roots = looked_at()
            self._looked = (now, frozenset(k for k, r in self.rows.items()
                                           if not r.project.remote and os.path.realpath(r.project.path) in roots))
        shown = {self.screen.key} if self.screen_stack and isinstance(self.screen, ProjectScreen) else set()
        return self._looked[1] | shown

    def _announce(self, fresh: list[Alert]) -> None:
        if fresh:
            self._alerts_dirty = True
            first = fresh[0]
            self.notify(first.message + (f" (+{len(fresh) - 1} more)" if len(fresh) > 1 else ""),
                        title="needs you", severity="warning", timeout=6)

    def _alert_tick(self) -> None:
        self._announce(self.tracker.tick())
        if self.tracker.alerts and isinstance(self.screen, FleetScreen):
            self._draw_alerts(self.screen)  # deliveries move on (sending → sent, failed, retrying)

    def _row_changed(self, row: Row) -> None:
        self.changes += 1
        self._settle(row)
        self._announce(self.tracker.observe(row))
        self._dirty.add(row.project.key)
        if not self._flush_pending:
            self._flush_pending = True
            self.set_timer(FLUSH_S, self._redraw_dirty)

    def _redraw_dirty(self) -> None:
        # not `_flush`: Textual's App calls its `_flush(stderr=...)` when captured output is flushed
        self._flush_pending = False
        dirty, self._dirty = self._dirty, set()
        self.redraw(dirty)

    def _tick(self) -> None:
        """Relative ages move on: every row's cells are worked out again, only rows whose text changed
        (an age that ticked over, "since …" on an error) are drawn again."""
        self.redraw()

    # -- drawing ----------------------------------------------------------------------------
    def _visible(self) -> list[Row]:
        rows = sorted_rows(self.rows.values())
        if self.filter_text:
            needle = self.filter_text.lower()
            rows = [r for r in rows if needle in r.project.key.lower() or needle in r.project.name.lower()]
        return rows

    def redraw(self, dirty: set[str] | None = None) -> None:
        """Bring the screen up to date; `dirty` (project keys) limits which rows are worked out again
        (None: every row). The table draws only the rows whose cells changed."""
        if not self.is_running or not self.screen_stack:  # quitting: the hub may still report a last row
            return
        screen = self.screen
        if not isinstance(screen, FleetScreen):
            from rcs_tui.ui.fleet.project import ProjectScreen

            if isinstance(screen, ProjectScreen) and (dirty is None or screen.key in dirty):
                screen.show()
            return
        if not screen.query("#fleet-table"):
            return  # the screen is being taken down (a timer firing as the fleet exits) or not built yet
        now = self.clock()
        self._draw_status(screen, now)
        table = screen.query_one("#fleet-table", LineTable)
        # Rows never worked out yet (a row that changed before the first full drawing) are worked out too.
        keys = set(self.rows) if dirty is None else {k for k in dirty if k in self.rows} | (self.rows.keys()
                                                                                           - self._cells.keys())
        for key in keys:
            row = self.rows[key]
            self._cells[key] = cells = row_cells(row, row.cells(now))
            self._widths[key] = cell_widths(cells)
        visible = self._visible()
        # Each column as wide as its widest cell on screen allows (a column's width changes only when the
        # widest cell does, so most changes keep the columns and draw only their own row).
        measured = [self._widths[r.project.key] for r in visible]
        content = [max(col) for col in zip(*(m[0] for m in measured), strict=True)] or None
        running = [max(col) for col in zip(*(m[1] for m in measured), strict=True)] or None
        shown, widths = columns_for(self.size.width, content, running)
        table.set_columns([c.label for c in shown], widths)
        table.set_rows([(r.project.key, shown_cells(self._cells[r.project.key], shown)) for r in visible])
        painted = self.clock()
        for key in keys:
            self.painted[key] = painted
        if self._alerts_dirty:
            self._alerts_dirty = False
            self._draw_alerts(screen)

    def _draw_status(self, screen: FleetScreen, now: float) -> None:
        rows = list(self.rows.values())
        need = [r for r in rows if r.needs_you_now]
        remote = sum(1 for r in rows if r.project.remote)
        text = Text()
        text.append(" FLEET ", style="bold reverse")
        text.append(f" {plural(len(rows), 'project')} ({remote} remote) · ")
        text.append(f"{len(need)} need you", style="bold magenta" if need else "green")
        if self.tracker.alerts:
            last = self.tracker.alerts[0]
            text.append(f" · last alert {datetime.fromtimestamp(last.at).strftime('%H:%M:%S')}: ", style="dim")
            text.append(clip(last.message, max(10, self.size.width - len(text.plain) - 2)), style="yellow")
        polled = [r for r in rows if r.watch == "poll"]
        if polled:  # a polled project's changes show up to half a second late and cost a scan each time
            text.append(f" · {len(polled)} polled: {polled[0].watch_reason}", style="yellow")
        if self.filter_text:
            text.append(f" · filter: {self.filter_text}", style="cyan")
        if self.readonly:
            text.append(" · READ-ONLY", style="bold magenta")
        show_content(screen.query_one("#fleet-status", Static), text)

    def _draw_alerts(self, screen: FleetScreen) -> None:
        tables = screen.query("#alerts-table")  # none while the screen is being taken down (or not yet built)
        if not tables:
            return
        table = tables.first(LineTable)
        rows = alert_rows(self.tracker.alerts)
        table.set_columns(ALERT_COLUMNS, content_widths(ALERT_COLUMNS, rows))
        table.set_rows(rows)

    # -- selection and keys -----------------------------------------------------------------
    def selected_key(self) -> str | None:
        if not isinstance(self.screen, FleetScreen):
            return None
        return self.screen.query_one("#fleet-table", LineTable).selected

    def on_line_table_selected(self, event: LineTable.Selected) -> None:
        if event.table.id == "fleet-table":
            event.stop()
            self.action_open_console(event.key)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer and the keys offer what acts in the tab on screen: a project's keys on Projects only,
        and the key of the other tab (not of the one shown)."""
        screen = self.screen
        if not isinstance(screen, FleetScreen):  # a project's view: the list's own keys do nothing there
            return action not in LIST_ACTIONS
        tab = screen.query_one("#fleet-tabs", TabbedContent).active or "projects"
        if action == "tab":
            return parameters[:1] != (tab,)
        if action in PROJECT_ACTIONS:
            return tab == "projects"
        return True

    def action_cursor(self, direction: str) -> None:
        focused = self.focused
        if isinstance(focused, LineTable):
            getattr(focused, f"action_cursor_{direction}")()
        elif focused is not None and hasattr(focused, f"action_scroll_{direction}"):
            getattr(focused, f"action_scroll_{direction}")()

    def action_tab(self, tab: str) -> None:
        if isinstance(self.screen, FleetScreen):
            self.screen.query_one("#fleet-tabs", TabbedContent).active = tab
            if tab == "alerts":
                self._draw_alerts(self.screen)

    def action_next_needing(self, step: int) -> None:
        """Move to the next (`step` 1) or previous (-1) project that needs you, in the order shown, wrapping;
        from a project view, open that project's view."""
        from rcs_tui.ui.fleet.project import ProjectScreen

        rows = [r for r in self._visible() if r.needs_you_now]
        if not rows:
            hidden = sum(r.needs_you_now for r in self.rows.values())
            if hidden and self.filter_text:  # the filter must not make "nothing needs you" out of a hidden one
                self.notify(f"{hidden} {'project needs' if hidden == 1 else 'projects need'} you, hidden by the "
                            f"filter: esc clears it", severity="warning", timeout=5)
            else:
                self.notify("nothing needs you", timeout=3)
            return
        order = [r.project.key for r in self._visible()]
        current = self.screen.key if isinstance(self.screen, ProjectScreen) else self.selected_key()
        at = order.index(current) if current in order else (-1 if step > 0 else len(order))
        keys = [r.project.key for r in rows]
        after = [k for k in keys if (order.index(k) - at) * step > 0]
        target = (after[0] if step > 0 else after[-1]) if after else (keys[0] if step > 0 else keys[-1])
        if isinstance(self.screen, ProjectScreen):
            self.pop_screen()
            self.push_screen(ProjectScreen(target))
            self.call_after_refresh(self.redraw, {target})
        elif isinstance(self.screen, FleetScreen):
            self.screen.query_one("#fleet-tabs", TabbedContent).active = "projects"
            self.screen.query_one("#fleet-table", LineTable).select_key(target)

    def action_palette(self) -> None:
        """: opens the command palette (ctrl+p too), as in the console."""
        self.action_command_palette()

    def action_copy(self) -> None:
        """y: the selected project's address (its path, or its ssh:// URL) to the clipboard, as `--project`
        takes it."""
        from rcs_tui.ui.fleet.project import ProjectScreen

        key = self.screen.key if isinstance(self.screen, ProjectScreen) else self.selected_key()
        if key is None:
            self.notify("nothing to copy here", severity="warning")
            return
        self.copy_to_clipboard(key)
        self.notify(f"copied:\n{key}", timeout=3)

    def action_acknowledge(self, key: str | None = None) -> None:
        """Acknowledge what the selected project (or the project view's) needs you for now: each entry is
        recorded (`Acknowledger`) and alerts no more until its state changes."""
        from rcs_tui.ui.fleet.project import ProjectScreen

        key = key or (self.screen.key if isinstance(self.screen, ProjectScreen) else self.selected_key())
        row = self.rows.get(key) if key else None
        if key is None or row is None or not row.needs_you_now or row.error:
            self.notify("nothing to acknowledge here", timeout=3)
            return
        entries = [(k.key, item) for k in NEEDS_YOU for item in row.attention.get(k.key, [])]
        for kind, item in entries:
            self.tracker.acknowledge(key, kind, item)
        failed = record_all(self.acknowledger, row.project.path if not row.project.remote else key,
                            [item_id(kind, item) for kind, item in entries], self.actor)
        if failed is not None:
            self.notify(f"acknowledged here, but not recorded: {failed}", severity="warning")
        else:
            self.notify(f"{row.project.name}: acknowledged {len(entries)} — quiet until it changes", timeout=4)

    def action_help(self) -> None:
        self.push_screen(FleetHelp(self.readonly))

    def action_filter(self) -> None:
        if isinstance(self.screen, FleetScreen):
            field = self.screen.query_one("#fleet-filter", Input)
            field.add_class("shown")
            field.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "fleet-filter":
            self.filter_text = event.value.strip()
            self.redraw()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "fleet-filter" and isinstance(self.screen, FleetScreen):
            self.screen.query_one("#fleet-table", LineTable).focus()

    def action_clear_filter(self) -> None:
        if not isinstance(self.screen, FleetScreen):
            return
        field = self.screen.query_one("#fleet-filter", Input)
        field.value = ""
        field.remove_class("shown")
        self.filter_text = ""
        self.screen.query_one("#fleet-table", LineTable).focus()
        self.redraw()

    def action_details(self) -> None:
        key = self.selected_key()
        if key is None:
            return
        from rcs_tui.ui.fleet.project import ProjectScreen

        self.push_screen(ProjectScreen(key))
        self.call_after_refresh(self.redraw, {key})

    def console_argv(self, project: Project) -> list[str]:
        """The console of `project`: ours for a local root, the host's over `ssh -t` for a remote one."""
        extra = ["--readonly"] if self.readonly else []
        if project.remote:
            argv = self.ssh.argv(project, ["console", "--root", project.path, *extra])
            return [argv[0], "-t", *[a for a in argv[1:] if a != "-T"]]
        return [sys.executable, "-m", "rcs_tui", "console", "--root", project.path, *extra]

    def action_open_console(self, key: str | None = None) -> None:
        key = key or self.selected_key()
        if key is None or key not in self.rows:
            return
        row = self.rows[key]
        if row.doc is None or row.error:
            self.notify(f"{row.project.name}: {row.error or 'not read yet'}", severity="warning")
            return
        argv = self.console_argv(row.project)
        try:
            with self.suspend():
                code = subprocess.call(argv)
        except Exception as exc:  # noqa: BLE001 - SuspendNotSupported (no terminal), a missing binary, …
            self.notify(f"cannot open the console here: {exc or type(exc).__name__}", severity="error")
            return
        if code not in (0, None):
            self.notify(f"console of {row.project.name} ended with status {code}", severity="warning")


def alert_rows(alerts: Iterable[Alert]) -> list[tuple[str, list[Text]]]:
    """The alerts table's rows, newest first, each keyed by what it says (a repeat gets a count), so the
    cursor stays on its alert as new ones arrive above it."""
    seen: Counter[str] = Counter()
    rows = []
    for a in alerts:
        key = f"{a.at!r}\0{a.project}\0{a.host}\0{a.kind}\0{a.member}"
        seen[key] += 1
        rows.append((f"{key}\0{seen[key]}", list(alert_cells(a))))
    return rows


def alert_cells(alert: Alert) -> tuple[Text, ...]:
    return (Text(datetime.fromtimestamp(alert.at).strftime("%H:%M:%S")), Text(clip(alert.project, 24), style="bold"),
            Text(alert.host), Text(alert.kind, style="magenta" if alert.kind == "waiting" else "yellow"),
            Text(clip(alert.member, 48)), Text(clip(alert.delivery, 40), style=delivery_style(alert.delivery)),
            Text(clip(f"{alert.reason} [{alert.source}]" if alert.reason else "", 80), style="dim"))


def delivery_style(delivery: str) -> str:
    """A failed delivery stands out; a held-back one recedes."""
    return "bold red" if delivery.startswith("failed") else "dim" if delivery.startswith("quiet") else ""
