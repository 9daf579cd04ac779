"""ConsoleApp: loads the world, refreshes the views, and turns keys into calls to the core.

The console decides nothing: every preview, write, refusal and repair comes from `rcs_tui.state`
and `rcs_tui.core`; this module only wires them to screens. The shared watcher reloads changed
sections in a thread and posts `WorldUpdated`; the handler owns `self.world` and skips redraws
while a modal is open. A reload and every write run in thread workers too (`background.off_thread`),
and answer with a message: the UI thread never waits on the store lock, a database or the loader, so
keys keep working while a write waits for the lock (the status bar says what is being applied).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import App
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Input

from rcs_tui.core import times
from rcs_tui.core.acknowledged import Acknowledged
from rcs_tui.core.attention import Verdict
from rcs_tui.core.modes import BadName
from rcs_tui.files.collector import paused
from rcs_tui.project.feed import REJUDGE_S
from rcs_tui.project.loader import WorldLoader
from rcs_tui.state.txn import ChangedUnderneath, Plan, TxnError, default_actor
from rcs_tui.ui.console.background import Answered, OneAtATime, off_thread
from rcs_tui.ui.console.clearwatch import DEFAULT_WATCH_SECONDS, ClearWatch
from rcs_tui.ui.console.commands import ConsoleCommands
from rcs_tui.ui.console.editor import edit_file
from rcs_tui.ui.console.help import HelpModal
from rcs_tui.ui.console.main import TABS, MainScreen
from rcs_tui.ui.console.needs import Needs, member_item
from rcs_tui.ui.console.notice import Notice
from rcs_tui.ui.console.refusals import Refusal, busy_writer_advice, refusal_record
from rcs_tui.ui.console.scopes import COLLAPSE_OVER, ScopesPane
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.hud_app import stylesheet
from rcs_tui.ui.notices import PlainNotices
from rcs_tui.ui.watcher import WatchStatus, WorldUpdated, start_watcher
from rcs_tui.views.text import strip_controls
from rcs_tui.views.world import World

if TYPE_CHECKING:
    from rcs_tui.state.ops import Operation
    from rcs_tui.ui.recording import WorldRecorder

_Result = TypeVar("_Result")  # what a write returns, handed to its `done`

MUTATING = frozenset({"clear", "clear_all", "override", "undo", "redo", "edit"})
# Actions that act on a selected row of one kind: offered (footer, palette, key) only where such a row is.
ACTS_ON = {"clear": ("scopes", "current_member"), "clear_all": ("scopes", "current_member"),
           "override": ("tasks", "current_task")}
# Keys a dialog also answers to: for a moment after a dialog closes they do nothing, so the extra
# presses of a `y` that confirmed a plan do not go on to copy (a burst of "copied" toasts).
AFTER_DIALOG = frozenset({"copy"})
AFTER_DIALOG_SECONDS = 0.5
MESSAGE_SECONDS = 8.0  # a refusal's line in the status bar clears after this long, or at the next key
KEEP_MESSAGE_SECONDS = 0.3  # ... but not at a key this soon after it: the one that closed its dialog


def iso(ts: float) -> str:
    """The runtime's timestamp form, for what an operator action records."""
    return times.iso(ts, ms=True)


class ConsoleApp(PlainNotices):
    """The operator recovery console."""

    TITLE = "rcs-tui console"
    CSS = stylesheet("console.tcss")
    COMMANDS = App.COMMANDS | {ConsoleCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("d", "clear", "Clear"),
        Binding("o", "override", "Override"),
        Binding("u", "undo", "Undo"),
        Binding("U", "redo", "Redo", show=False),
        Binding("D", "doctor", "Doctor"),
        Binding("w", "whatif", "What-if"),
        Binding("C", "clear_all", "Clear ALL sessions", show=False),
        # Textual adds its own ctrl+p only when no binding opens the palette: `:` does, so name both.
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True),
        Binding("colon", "command_palette", "Commands", show=False),
        Binding("slash", "filter", "Filter", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("y", "copy", "Copy", show=False),
        Binding("r", "reload", "Reload", show=False),
        Binding("space", "pause", "Pause", show=False),
        Binding("n", "needs_you(1)", "Next needing you", show=False),
        Binding("N", "needs_you(-1)", "Previous needing you", show=False),
        # `a` is shown where the selected row needs you; elsewhere the second binding says there is nothing.
        Binding("a", "acknowledge", "Acknowledge"),
        Binding("a", "acknowledge_nothing", "Acknowledge", show=False),
        Binding("j", "cursor('down')", "Down", show=False),
        Binding("k", "cursor('up')", "Up", show=False),
        *[Binding(str(i + 1), f"tab('{tab}')", tab, show=False) for i, tab in enumerate(TABS)],
    ]

    def __init__(self, root: Path, *, session_id: str | None = None, readonly: bool = False,
                 rp1_db: Path | None = None, clock: Callable[[], float] = time.time, live: bool = True,
                 force_polling: bool = False, watch_seconds: float = DEFAULT_WATCH_SECONDS, blink: bool = True,
                 actor: str | None = None, theme: str | None = None, banner: str | None = None,
                 record: bool = False, away: bool | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.record = record  # also run the project's flight recorder (when no other rcs-tui does)
        self._recording: WorldRecorder | None = None
        self.away = record if away is None else away  # say "while you were away" on opening
        self.seen_before: float | None = None  # when this user last looked at the history, before this run
        self.banner = banner
        self.root = Path(root)
        self.session_id = session_id
        self.readonly = readonly
        self.clock = clock
        self.monotonic = monotonic  # measures the short windows keys depend on (wall time may jump)
        self.live = live
        self.force_polling = force_polling
        self.watch_mode = "off"
        self.watch_seconds = watch_seconds
        self.blink = blink
        self.actor = actor or default_actor("console")
        # A long list of sessions shows from their active sets, read ahead of the full read of every session.
        self.loader = WorldLoader(self.root, session_id=session_id, clock=clock,
                                  rp1_db=rp1_db if rp1_db is not None else True, list_over=COLLAPSE_OVER)
        self.rp1_db = self.loader.rp1_path
        self._rp1 = None
        self.world: World | None = None
        self.paused = False
        self.last_error: str | None = None
        self._passing = False  # last_error is a passing message (a refusal), not a lasting condition
        self._said_at = 0.0
        self.watches: list[ClearWatch] = []
        self._redraw_due = False
        self._settled = False  # the whole first World is loaded and drawn (its objects then live long)
        self.refusals: dict[str, list[Refusal]] = {}
        self.dialog_closed_at = float("-inf")  # when the last dialog closed, on `monotonic` (see AFTER_DIALOG)
        self.applying: str | None = None  # the write a worker is applying now (one at a time)
        self.load_lock = threading.Lock()  # the loader's reloads and the watcher's loads never overlap
        self.acked = Acknowledged()  # what the operator acknowledged (here, or recorded in the history)
        self.needs = Needs(acked=self.acked)  # who needs the operator and why, judged off the UI thread
        self._judging = OneAtATime("verdicts")
        self._judged: World | None = None
        self.rejudge_seconds = REJUDGE_S  # time alone changes what needs you (and every age): judged again this often
        self._history_stamp: object = None
        self._findings: dict[Any, Any] = {}  # the doctor's per-scope findings, kept while a scope is unchanged
        if theme:
            self.theme = theme

    # -- data -------------------------------------------------------------------------------
    @property
    def rp1(self):
        """The rp1 feed/timeline source, opened on first use (None when there is no database); shared with
        the loader, which reads it in its thread (the source holds its own lock)."""
        if self._rp1 is None and self.rp1_db is not None and os.path.exists(self.rp1_db):  # never raises
            self._rp1 = self.loader.rp1_source()  # the loader's own: what one reads, the other need not
        return self._rp1

    def on_mount(self) -> None:
        # What the start built (modules, styles, this app) lives as long as the console: out of the
        # collector's full passes, one of which (about 50 ms) otherwise landed right on the first frame.
        gc.freeze()
        # First frame sooner: when live, the first load reads root and the current session only and
        # skips the team, tasks and rp1 sections (the first frame shows the scopes view; rp1 shows only
        # as badges here, the rp1 view has its own source); the watcher loads every session, then
        # those sections, right after it, first thing.
        self.world = self.loader.load(defer=("rp1", "state", "team", "tasks") if self.live else ())
        self.push_screen(MainScreen())
        self.call_after_refresh(self.judge_needs)
        self.set_interval(0.5, self._check_watches)
        self.set_interval(self.rejudge_seconds, self._judge_again)
        if self.live:  # after the first frame: its deferred loads would only slow that frame down
            self.call_after_refresh(start_watcher, self, self.loader, force_polling=self.force_polling,
                                    lock=self.load_lock)
        elif self.record:
            self._start_recording()
        if self.away:
            self.call_after_refresh(self._while_away)

    def _while_away(self) -> None:
        """On opening: one line of what changed since this user last looked (read off the UI thread), then
        remember this look."""
        from rcs_tui.ui.recording import while_away

        while_away(self, self.root, self.clock())

    def on_answered(self, message: Answered) -> None:
        """The answer of a read or write run off the UI thread (see `background`)."""
        message.deliver()

    def on_world_updated(self, message: WorldUpdated) -> None:
        """Keep the newest World; draw once for a run of updates that queued up while drawing.

        The redraw is a callback queued behind the updates already waiting, so a busy source (a
        runtime writing many files, rp1 appending events) gets one redraw of its latest state, not
        one per stale batch.
        """
        self.world = message.world
        if self._recording is not None:
            self._recording.offer(message.world)
        if not self.paused and not self._redraw_due:
            self._redraw_due = True
            self.call_later(self._redraw)

    def _redraw(self) -> None:
        self._redraw_due = False
        if not self.paused:
            self.refresh_views()
            self.judge_needs()
        if self.live and not self._settled and not self.loader.deferred:
            self._settle()

    def _settle(self) -> None:
        """Once every deferred section is loaded and drawn, exempt what exists then (modules, widgets,
        the first World) from the collector's full passes: at 1 000 sessions a full pass over it took
        110-150 ms, a pause that landed on a keypress every few view switches. What is created later is
        still collected; it all goes back to the collector when the console exits."""
        self._settled = True
        gc.freeze()
        if self.record:
            self._start_recording()

    def _start_recording(self) -> None:
        """The flight recorder rides on the console's own Worlds (no second read of the tree, no second
        picture of it: at 10 000 sessions that copy was 195 MB): started once the console's first reads are
        drawn, so recording never competes with the read the list waits for."""
        from rcs_tui.ui.recording import WorldRecorder

        self._recording = WorldRecorder(self, self.root, session_id=self.session_id, rp1_db=self.rp1_db,
                                        actor=self.actor)
        self._recording.offer(self.world)

    def on_unmount(self) -> None:
        gc.unfreeze()
        if self._recording is not None:
            self._recording.close()

    def on_watch_status(self, message: WatchStatus) -> None:
        self.watch_mode = message.mode
        if message.mode == "error":
            self.last_error, self._passing = message.detail, False
            self.refresh_views()

    def reload_now(self, note: str | None = None) -> None:
        """Read everything again in a worker; the new World is drawn when it comes (then `note` is said)."""

        def load() -> World:
            with self.load_lock:
                return self.loader.load()

        def loaded(world: World, _: BaseException | None) -> None:
            self.world = world  # drawn even while paused, as an explicit reload always was
            if self._recording is not None:
                self._recording.offer(world)
            self.refresh_views()
            self.judge_needs()
            if note:
                self.notify(note, timeout=1.5)

        off_thread(self, load, loaded, group="reload")

    # -- who needs you ----------------------------------------------------------------------
    def _judge_again(self) -> None:
        """What the screen says changes with time alone, no file written: a worker whose heartbeat goes
        silent needs you, a comeback's window ends, every age and the data's age under the live mark move.
        The newest World is judged again at the current time and the screen drawn again, as the followed
        documents are (not while paused: a paused console shows one moment on purpose)."""
        if self.paused or self.world is None:
            return
        self._judged = None
        self.judge_needs()
        self.refresh_views()

    def judge_needs(self) -> None:
        """Judge who needs the operator in the newest World, off the UI thread (the same verdicts the fleet
        and `snapshot --json` show); the views redraw with them when they come."""
        world = self.world
        if world is None or world is self._judged:
            return
        self._judged = world
        now, seen = self.clock(), self._history_stamp
        from rcs_tui.ui.console.needs import compute

        def judged() -> tuple[tuple[Verdict, ...], object, dict[str, float] | None]:
            with self.loader.processes.noting("doctor"):  # a dead owner: the watcher asks again every few seconds
                return compute(world, now, self.root, lambda: self.rp1, self.rp1_db, self._findings, seen)

        self._judging.run(self, judged, self._needs_judged)

    def _needs_judged(self, answer: tuple[tuple[Verdict, ...], object, dict[str, float] | None] | None,
                      _: BaseException | None) -> None:
        if answer is None:
            return
        verdicts, self._history_stamp, recorded = answer
        before = (dict(self.acked.recorded), dict(self.acked.here))
        if recorded is not None:
            self.acked.recorded = recorded
        self.acked.forget_changed(verdicts)
        if verdicts == self.needs.verdicts and before == (self.acked.recorded, self.acked.here):
            return  # the same verdicts: what is on screen says them already (no second draw of a new World)
        self.needs = Needs(verdicts, self.acked)
        self.refresh_views()
        self.screen.refresh_bindings()

    def selected_item(self) -> str | None:
        """The "needs you" entry of what is selected: the row of the view on screen (a member, the stale-dead
        pointer, a worker, a run) or the page on screen (a member's, a worker's, a run's)."""
        screen = self.screen
        if isinstance(screen, MainScreen):
            return screen.needs_item()
        getter = getattr(screen, "needs_item", None)
        if getter is not None:
            return getter()
        member = getattr(screen, "current_member", None)
        if member is None:
            return None
        sid, mode = member()
        return member_item(sid, mode)

    def refresh_views(self) -> None:
        """Redraw the visible screen; skipped while a modal is open (it redraws when the modal closes).
        The rows of a long table are a bulk build of acyclic objects: the collector waits for it."""
        screen = self.screen
        if self.world is None or isinstance(screen, ModalScreen):
            return
        with paused():
            self._refresh_views(screen, self.world)

    def _refresh_views(self, screen: Screen, world: World) -> None:
        now = self.clock()
        for bar in screen.query(StatusBar):
            bar.show(world, now, paused=self.paused, readonly=self.readonly, last_error=self.last_error,
                     watching=self.watch_mode, busy=self.applying)
        if isinstance(screen, MainScreen):
            tab = screen.tab
            panes = screen.query(f"#{'runs' if tab == 'rp1' else tab}-pane")
            if not panes or not panes.first().is_mounted:
                return  # a view being built right after the first frame (children not there yet): drawn once it is
            # a pane other than the scopes one is built after the first frame: its module is imported by now
            if tab == "scopes":
                panes.first(ScopesPane).show(world, now)
            elif tab == "team":
                from rcs_tui.ui.console.team import TeamPane

                panes.first(TeamPane).show(world, now)
            elif tab == "tasks":
                from rcs_tui.ui.console.tasks import TasksPane

                panes.first(TasksPane).show(world, now)
            elif tab == "rp1":
                from rcs_tui.ui.console.runs import RunsPane

                panes.first(RunsPane).show(lambda: self.rp1, now)  # opened (and read) in the pane's worker
            elif tab == "journal":
                from rcs_tui.ui.console.journal import JournalPane

                panes.first(JournalPane).show(self.root)
            elif tab == "history":
                from rcs_tui.ui.console.history import HistoryPane

                panes.first(HistoryPane).show(self.root, now, self.seen_before)
            return
        from rcs_tui.ui.console.run import RunScreen  # not needed for the first frame

        if isinstance(screen, RunScreen):
            screen.show(world, now, lambda: self.rp1)
        elif hasattr(screen, "show"):
            screen.show(world, now)

    # -- layout -----------------------------------------------------------------------------
    def on_resize(self) -> None:
        # Runs before the app takes the new size: refit the tables' columns once it has.
        self.call_after_refresh(self.refresh_views)

    # -- selection --------------------------------------------------------------------------
    def _selected_member(self) -> tuple[str | None, str] | None:
        getter = getattr(self.screen, "current_member", None)
        return getter() if getter else None

    def _selected_task(self) -> str | None:
        getter = getattr(self.screen, "current_task", None)
        return getter() if getter else None

    def open_member(self, sid: str | None, mode: str) -> None:
        from rcs_tui.ui.console.member import MemberScreen

        self.push_screen(MemberScreen(sid, mode))
        self.call_after_refresh(self.refresh_views)

    def open_task(self, task_id: str) -> None:
        from rcs_tui.ui.console.task import TaskScreen

        self.push_screen(TaskScreen(task_id))
        self.call_after_refresh(self.refresh_views)

    def open_details(self, kind: str, key: str) -> None:
        """Enter on a scope header (`key` its session id, empty for root) or a worker row (`team/worker`)."""
        from rcs_tui.ui.console.details import ScopeScreen, WorkerScreen

        self.push_screen(ScopeScreen(key or None) if kind == "scope" else WorkerScreen(key))
        self.call_after_refresh(self.refresh_views)

    def open_entry(self, entry_id: str) -> None:
        from rcs_tui.ui.console.entry import EntryScreen

        self.push_screen(EntryScreen(entry_id))
        self.call_after_refresh(self.refresh_views)

    def open_history_entry(self, entry: dict[str, Any], acknowledged: dict[str, Any] | None) -> None:
        from rcs_tui.ui.console.history_entry import HistoryEntryScreen

        self.push_screen(HistoryEntryScreen(entry, acknowledged))
        self.call_after_refresh(self.refresh_views)

    def _selection(self) -> tuple[Path | None, str | None]:
        getter = getattr(self.screen, "selection", None)
        return getter() if getter else (None, None)

    def action_edit(self) -> None:
        path, _ = self._selection()
        if path is None:
            self.notify("nothing to edit here: select a member, scope, task or journal entry", severity="warning")
            return
        ran, message = edit_file(self, path)
        self.notify(message, severity="information" if ran else "error", timeout=5)
        if ran:
            self.reload_now()

    def action_copy(self) -> None:
        path, ident = self._selection()
        text = str(path) if path is not None else ident
        if not text:
            self.notify("nothing to copy here", severity="warning")
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied:\n{text}", timeout=3)

    def open_run(self, run_id: str) -> None:
        from rcs_tui.ui.console.run import RunScreen

        self.push_screen(RunScreen(run_id))
        self.call_after_refresh(self.refresh_views)

    # -- keys -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.readonly and action in MUTATING:
            return False
        if action == "acknowledge":
            return bool(self.needs.open(self.selected_item()))
        if action in AFTER_DIALOG and self.monotonic() < self.dialog_closed_at + AFTER_DIALOG_SECONDS:
            return False
        if action in ACTS_ON:
            return self.acts_here(action)
        return True

    def acts_here(self, action: str) -> bool:
        """Whether `action` has something to act on in the view on screen: clearing in the scopes view and
        a member's page, overriding in the tasks view and a task's page."""
        view, getter = ACTS_ON[action]
        screen = self.screen
        if isinstance(screen, MainScreen):
            return screen.tab == view
        return hasattr(screen, getter)

    def pop_screen(self) -> AwaitComplete:
        """Close the top screen; a dialog closing starts the moment its keys do nothing here."""
        if isinstance(self.screen, ModalScreen):
            self.dialog_closed_at = self.monotonic()
        return super().pop_screen()

    def palette_commands(self) -> list[tuple[str, str, str]]:
        items = [
            ("Clear selected member", "clear the selected mode in its scope (previewed first)", "clear"),
            ("Clear selected mode across ALL sessions", "root + every session copy (previewed first)", "clear_all"),
            ("Override task phase", "move the selected task to a reachable phase, with a reason", "override"),
            ("Undo last action", "restore the before-image of the newest journal entry", "undo"),
            ("Redo", "re-apply the most recently undone (or selected) journal entry", "redo"),
            ("Doctor", "find stale state and repair it through the core", "doctor"),
            ("What-if", "see the policy's decision for a request; writes nothing", "whatif"),
            ("Reload", "read everything again now", "reload"),
            ("Pause / resume live updates", "freeze the view while you read", "pause"),
            ("Help", "all keys", "help"),
            *[(f"View: {tab}", f"switch to the {tab} view", f"tab('{tab}')") for tab in TABS],
            ("Quit", "leave the console", "quit"),
        ]
        return [i for i in items if not (self.readonly and i[2] in MUTATING)
                and (i[2] not in ACTS_ON or self.acts_here(i[2]))]

    def action_help(self) -> None:
        self.push_screen(HelpModal(self.readonly))

    def action_tab(self, tab: str) -> None:
        while not isinstance(self.screen, MainScreen) and len(self.screen_stack) > 2:
            self.pop_screen()
        if isinstance(self.screen, MainScreen):
            self.screen.show_tab(tab)

    def action_needs_you(self, step: int) -> None:
        """n / N: to the next / previous row that needs you (and has not been acknowledged in its present state),
        from any view, across the views: the scopes view's pointer and members, the team's workers, the rp1 runs
        (see `walk`); the view holding it is shown with its row selected."""
        if self.world is None:
            return
        while not isinstance(self.screen, MainScreen) and len(self.screen_stack) > 2:
            self.pop_screen()
        screen = self.screen
        if not isinstance(screen, MainScreen):
            return
        from rcs_tui.ui.console.walk import next_stop

        target = next_stop(*screen.walk(), step)
        if target is None:
            acked = any(self.acked.covers(v) for v in self.needs.verdicts)
            self.notify("nothing needs you" + (": what is left is acknowledged until it changes" if acked else ""),
                        timeout=3)
            return
        screen.go_to(target)

    def action_acknowledge(self) -> None:
        """a: the operator has seen why the selected row needs them. Recorded in the project's history as the
        fleet's `a` records it (rcs-tui's own file: read-only mode too); n / N pass it by until it changes."""
        item = self.selected_item()
        verdicts = self.needs.open(item)
        if item is None or not verdicts:
            self.action_acknowledge_nothing()
            return
        from rcs_tui.fleet.acks import HistoryAcknowledger, item_id, record_all

        self.needs.acknowledge(item)
        self.needs = Needs(self.needs.verdicts, self.acked)  # a new object: the views draw it again
        failed = record_all(HistoryAcknowledger(), str(self.root.absolute()),
                            [item_id(v.kind, v.item) for v in verdicts], self.actor)
        if failed is not None:
            self.notify(f"acknowledged here, but not recorded: {failed}", severity="warning")
        else:
            self.notify(f"{item}: acknowledged — n / N pass it by until it changes", timeout=4)
        self.refresh_views()
        self.screen.refresh_bindings()

    def action_acknowledge_nothing(self) -> None:
        item = self.selected_item()
        if item is not None and self.needs.of(item):
            self.notify(f"{item} is acknowledged already: it needs you again when it changes", timeout=3)
        else:
            self.notify("nothing to acknowledge here: this row needs nothing from you", timeout=3)

    def action_cursor(self, direction: str) -> None:
        focused = self.focused
        action = getattr(focused, f"action_cursor_{direction}", None) if focused else None
        if action is not None and not isinstance(focused, Input):
            action()
        elif focused is not None and hasattr(focused, f"action_scroll_{direction}"):
            getattr(focused, f"action_scroll_{direction}")()

    def action_filter(self) -> None:
        field = self.screen.filter_input() if isinstance(self.screen, MainScreen) else None
        if field is None:
            self.notify("this view has no filter", severity="warning")
            return
        field.add_class("shown")
        field.focus()

    def action_reload(self) -> None:
        self.reload_now(note="reloaded")

    def action_pause(self) -> None:
        self.paused = not self.paused
        if not self.paused:
            self.reload_now()
        else:
            self.refresh_views()

    def _say_passing(self, text: str) -> None:
        """Put a refusal in the status bar for a few seconds (or until the next key): a harmless refusal
        must not keep the bar's slot from what is wrong now."""
        self.last_error, self._passing, self._said_at = text, True, self.monotonic()
        said = self._said_at
        self.set_timer(MESSAGE_SECONDS, lambda: self._forget_passing(said))

    def _forget_passing(self, said: float | None = None) -> None:
        if self._passing and self.last_error is not None and (said is None or said == self._said_at):
            self.last_error, self._passing = None, False
            self.refresh_views()

    def on_key(self, event) -> None:
        """A key on the main views clears a passing message (not the key that closes its dialog)."""
        soon = self.monotonic() - self._said_at <= KEEP_MESSAGE_SECONDS
        if self._passing and not isinstance(self.screen, ModalScreen) and not soon:
            self._forget_passing()

    def _refuse(self, title: str, exc: BaseException, replan: Callable[[], None] | None = None) -> None:
        """Show a refusal. A "changed underneath" one offers re-planning in one key (`r`), and once it
        repeats, says which file keeps changing, how often, and what to do about the writer."""
        self._say_passing(str(exc))
        body = str(exc) if "nothing was changed" in str(exc).lower() else f"{exc}\n\nNothing was changed."
        offers: tuple[tuple[str, str, str], ...] = ()
        if isinstance(exc, ChangedUnderneath) and replan is not None:
            history = self.refusals.setdefault(title, [])
            history.append(refusal_record(self.root, str(exc)))
            offers = (("r", "Re-plan with fresh data", "replan"),)
            if len(history) >= 2:
                body += "\n\n" + busy_writer_advice(history)
                offers += (("D", "Open doctor", "doctor"),)
        self.push_screen(Notice(title, body, offers=offers),
                         lambda choice: replan() if choice == "replan" and replan else
                         self.action_doctor() if choice == "doctor" else None)
        self.refresh_views()

    # -- writes -----------------------------------------------------------------------------
    def _still_applying(self) -> bool:
        """One write at a time: a second one is planned on the bytes the first is about to change."""
        if self.applying is None:
            return False
        self.notify(f"still applying {self.applying}; try again when it is done", severity="warning", timeout=3)
        return True

    def _apply(self, what: str, write: Callable[[], _Result], done: Callable[[_Result], None],
               refused: Callable[[BaseException], None]) -> None:
        """Run `write` in a worker (it may wait up to the store lock's timeout); then `done(result)` or
        `refused(error)` on the UI thread. Meanwhile the status bar says what is being applied."""
        self.applying = what

        def answered(result: Any, error: BaseException | None) -> None:  # `write`'s value (or None on error)
            self.applying = None
            if error is not None:
                refused(error)
            else:
                done(result)
            self.refresh_views()

        off_thread(self, write, answered, group="write", exclusive=False, errors=(TxnError, BadName))
        self.refresh_views()

    # -- clear ------------------------------------------------------------------------------
    def action_clear(self) -> None:
        if self._still_applying():
            return
        member = self._selected_member()
        if member is None:
            self.notify("select a member row in Scopes first (enter opens it)", severity="warning")
            return
        from rcs_tui.state.ops import ROOT_SCOPE, plan_clear

        sid, mode = member
        where = "root" if sid is None else f"session {sid}"
        title = f"Clear {mode} in {where}"
        self._confirm_clear(title, "Clear", lambda: plan_clear(self.root, mode, sid if sid is not None else ROOT_SCOPE),
                            mode, sid, everywhere=False)

    def action_clear_all(self) -> None:
        if self._still_applying():
            return
        member = self._selected_member()
        if member is None:
            self.notify("select a member row in Scopes first", severity="warning")
            return
        from rcs_tui.state.ops import plan_clear

        _, mode = member
        self._confirm_clear(f"Clear {mode} in ROOT AND ALL SESSIONS", "Clear everywhere",
                            lambda: plan_clear(self.root, mode, all_sessions=True), mode, None, everywhere=True)

    def _confirm_clear(self, title: str, label: str, planner: Callable[[], Operation], mode: str, sid: str | None,
                       everywhere: bool) -> None:
        from rcs_tui.ui.console.confirm import ConfirmPlan

        try:
            modal = ConfirmPlan(title, confirm_label=label, planner=planner, root=self.root)
        except (TxnError, BadName) as exc:
            self._refuse(f"Cannot clear {mode}", exc)
            return
        again = lambda: self._confirm_clear(title, label, planner, mode, sid, everywhere)  # noqa: E731
        self.push_screen(modal, lambda op: self._run_clear(op, mode, sid, everywhere, again) if op else None)

    def _run_clear(self, op: Operation, mode: str, sid: str | None, everywhere: bool = False,
                   again: Callable[[], None] | None = None) -> None:
        if self._still_applying():
            return
        scopes = [None, *sorted(self.world.snapshot.sessions)] if everywhere and self.world else [sid]

        def write() -> tuple[dict, list[ClearWatch]]:
            result = op.run(self.root, actor=self.actor)
            if result.get("cleared") is False:
                return result, []
            # Watched from right after the write (in this thread): a rewrite a moment later is caught too.
            now = time.time()
            return result, [ClearWatch.start(self.root, mode, scope, now, self.watch_seconds) for scope in scopes]

        self._apply(f"clear {mode}", write, lambda answer: self._cleared(*answer, mode),
                    lambda exc: self._refuse(f"Clear {mode} refused", exc, again))

    def _cleared(self, result: dict, watches: list[ClearWatch], mode: str) -> None:
        self.last_error = None
        self.refusals.pop(f"Clear {mode} refused", None)
        if result.get("cleared") is False:
            self.notify(strip_controls(result.get("message") or "nothing to clear"), timeout=4)
            self.reload_now()
            return
        self.watches.extend(watches)
        self.notify(f"cleared {mode}; watching it for {self.watch_seconds:.0f}s in case something rewrites it",
                    timeout=4)
        from rcs_tui.ui.console.member import MemberScreen

        if isinstance(self.screen, MemberScreen):
            self.pop_screen()
        self.reload_now()

    def _check_watches(self) -> None:
        if self.applying is not None:
            return  # an undo being applied brings files back on purpose: its answer says which
        now = time.time()
        for watch in list(self.watches):
            found = watch.check()
            if found is not None:
                self.watches.remove(watch)
                message = found.message(self.root, watch.cleared_at)
                self.last_error, self._passing = f"{found.mode} came back after clear", False
                self.bell()
                self.push_screen(Notice(f"⚠ {found.mode.upper()} CAME BACK AFTER THE CLEAR",
                                        message + "\n\nSomething (a hook or a stale copy) rewrote it. The doctor "
                                        "finds root survivors and stale copies that resurrect modes.",
                                        offer_doctor=True),
                                 lambda choice: self.action_doctor() if choice == "doctor" else None)
                self.reload_now()
            elif watch.expired(now):
                self.watches.remove(watch)

    # -- override / undo --------------------------------------------------------------------
    def action_override(self) -> None:
        if self._still_applying():
            return
        task_id = self._selected_task()
        if task_id is None:
            self.notify("select a task in Tasks first", severity="warning")
            return
        from rcs_tui.ui.console.override import OverrideModal

        try:
            modal = OverrideModal(self.root, task_id, self.actor, lambda: iso(self.clock()))
        except (TxnError, BadName) as exc:
            self._refuse(f"Cannot override {task_id}", exc)
            return
        self.push_screen(modal, self._run_override)

    def _run_override(self, result: tuple[Plan, str, Callable[[str], Plan]] | None) -> None:
        if result is None:
            return
        from rcs_tui.state.tasks import apply_plan

        if self._still_applying():
            return
        plan, actor, replan = result
        confirmed = plan.fingerprint(self.root)

        def apply() -> object:
            # made again now, so the record carries the time it is applied; it must be the confirmed plan
            return apply_plan(self.root, replan(iso(self.clock())), actor=actor, expect_plan=confirmed)

        self._apply(f"override {plan.summary['task']}", apply,
                    lambda _: self._overridden(plan), lambda exc: self._refuse("Override refused", exc))

    def _overridden(self, plan: Plan) -> None:
        self.last_error = None
        self.notify(f"task {plan.summary['task']}: {plan.summary['from']} → {plan.summary['to']} (recorded)")
        self.reload_now()

    def action_undo(self, entry_id: str | None = None) -> None:
        getter = getattr(self.screen, "current_entry", None)
        entry_id = entry_id or (getter() if getter else None)
        from rcs_tui.state.redo import undo_operation

        self._confirm_history("Undo", lambda: undo_operation(self.root, entry_id))

    def action_redo(self, entry_id: str | None = None) -> None:
        getter = getattr(self.screen, "current_entry", None)
        entry_id = entry_id or (getter() if getter else None)
        from rcs_tui.state.redo import redo_operation

        self._confirm_history("Redo", lambda: redo_operation(self.root, entry_id))

    def _confirm_history(self, verb: str, planner: Callable[[], Operation]) -> None:
        """Undo or redo: previewed (following the files while open), then applied through the core."""
        from rcs_tui.ui.console.confirm import ConfirmPlan

        if self._still_applying():
            return
        try:
            modal = ConfirmPlan("", confirm_label=verb, planner=planner, root=self.root)
        except (TxnError, BadName) as exc:
            self._refuse(f"{verb} refused", exc)
            return
        modal.title_text = f"{verb}: {modal.preview.get('action', '')}"
        again = lambda: self._confirm_history(verb, planner)  # noqa: E731
        self.push_screen(modal, lambda op: self._run_history(verb, op, again) if op else None)

    def _run_history(self, verb: str, op: Operation, again: Callable[[], None]) -> None:
        if self._still_applying():
            return
        self._apply(verb.lower(), lambda: op.run(self.root, actor=self.actor),
                    lambda result: self._history_done(verb, result),
                    lambda exc: self._refuse(f"{verb} refused", exc, again))

    def _history_done(self, verb: str, result: dict) -> None:
        self.last_error = None
        restored = " ".join(result["restored"])  # the operator brought these back: not a resurrection
        self.watches = [w for w in self.watches if f"{w.mode}-state.json" not in restored]
        target = result.get("undone") or result.get("redone")
        done = "undone" if verb == "Undo" else "redone"
        self.notify(f"{done} {target}; restored:\n" + ("\n".join(result["restored"]) or "nothing"))
        if hasattr(self.screen, "entry_id"):
            self.pop_screen()
        self.reload_now()

    # -- doctor / what-if -------------------------------------------------------------------
    def action_doctor(self) -> None:
        sid = self.world.snapshot.session_id if self.world else self.session_id
        from rcs_tui.ui.console.doctor import DoctorScreen

        self.push_screen(DoctorScreen(self.root, sid, str(self.rp1_db) if self.rp1_db else None,
                                      self.readonly, self.actor, self.clock))

    def action_whatif(self) -> None:
        if self.world is None:
            return
        from rcs_tui.ui.console.whatif import WhatIfModal

        self.push_screen(WhatIfModal(self.world.snapshot.authoritative, iso(self.clock())))
