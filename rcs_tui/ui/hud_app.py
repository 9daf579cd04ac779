"""The live HUD app: watches the tree, repaints on change, costs next to nothing while idle.

Keys: `o` toggles the AGENTS-overlay view, `r` reloads everything, `q` quits. The clock is injected
(`clock=`) so snapshots are deterministic; `watch=False` skips the watcher (snapshot tests).

When live, the first frame comes from root and the current session alone (what the line shows); the team,
tasks, rp1 and then every other session are read after it, as the console does, and until they are the
line says what is still loading, so a partial picture never passes for the whole one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.timer import Timer
from textual.widgets import Static

from rcs_tui.project.loader import WorldLoader
from rcs_tui.ui.hud_help import KEY_HINT, HudHelp
from rcs_tui.ui.notices import PlainNotices
from rcs_tui.ui.watcher import WatchStatus, WorldUpdated, start_watcher
from rcs_tui.ui.widgets import HudView, MemberList, OverlayBlockView
from rcs_tui.views.hud_line import STALE_AFTER, header, template_segments
from rcs_tui.views.line_fit import Seg, ends_in, plain
from rcs_tui.views.world import World

if TYPE_CHECKING:
    from rcs_tui.ui.recording import WorldRecorder


def stylesheet(name: str) -> str:
    """A stylesheet shipped in the `rcs_tui.styles` package."""
    return resources.files("rcs_tui.styles").joinpath(name).read_text(encoding="utf-8")


AGE_REPAINT_S = 0.25  # an age-only change repaints the line at most this often
# Read after the first frame, in this order: what the line shows first, every other session last.
DEFERRED = ("team", "tasks", "rp1", "state")
PENDING_NAMES = {"state": "sessions"}


def loading_note(world: World | None) -> str | None:
    """"loading team, rp1, sessions…" while a World lacks sections a first frame deferred; else None."""
    if world is None or not world.pending:
        return None
    names = sorted(world.pending, key=lambda n: DEFERRED.index(n) if n in DEFERRED else len(DEFERRED))
    return "loading " + ", ".join(PENDING_NAMES.get(n, n) for n in names) + "…"


def age_text(world: World | None, now: float) -> str | None:
    """The "updated Ns ago" / "stale Nm" text a World shows at `now` (None without any write)."""
    if world is None or world.newest_write is None:
        return None
    seg = Seg("age", (), at=world.newest_write).timed(now)
    return None if seg is None else plain(seg.spans)


def next_tick(age: float | None) -> float:
    """Seconds until the "updated Ns ago / stale Nm" text would change (`data_age`: 1 s, 10 s, per minute)."""
    if age is None:
        return 60.0
    if age < 10:
        return 1.0
    if age < 60:
        return max(1.0, 10.0 - (age % 10.0))
    return max(1.0, 60.0 - (age % 60.0))


class HudApp(PlainNotices):
    """Full-screen (or `--inline`) HUD over one project."""

    CSS = stylesheet("hud.tcss")
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),  # as in the console, not ctrl+q
        Binding("o", "toggle_overlay", "overlay"),
        Binding("r", "reload", "reload"),
        Binding("question_mark", "help", "help"),
    ]
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, root: Path, *, session_id: str | None = None, preset: str | None = None,
                 ascii_only: bool = False, force_polling: bool = False, watch: bool = True,
                 clock: Callable[[], float] = time.time, rp1_db: Path | None | bool = True,
                 loader: WorldLoader | None = None, theme: str = "ansi-dark", record: bool = False) -> None:
        super().__init__()
        self.root = Path(root)
        self.record = record  # also run the project's flight recorder (when no other rcs-tui does)
        self._recording: WorldRecorder | None = None  # once recording
        self.session_id = session_id
        self.clock = clock
        self.watch_enabled = watch
        self.force_polling = force_polling
        self.ascii_only = ascii_only
        self.preset = preset
        self.loader = loader or WorldLoader(self.root, session_id=session_id, rp1_db=rp1_db, clock=clock)
        self.world: World | None = None
        self.notices: tuple[str, ...] = ()
        self.updates = 0
        self._tick: Timer | None = None
        self._timed: list[Seg] = []
        self._age_timer: Timer | None = None
        self._age_repainted = 0.0
        self._age_shown: str | None = None
        self._shown: tuple[object, ...] | None = None
        self.theme = theme

    def compose(self) -> ComposeResult:
        yield HudView(self.clock, self.preset, self.ascii_only, id="hud")
        with Container(id="overlay"):
            yield OverlayBlockView(id="overlay-block")
            yield MemberList(self.ascii_only, id="members")
        yield Static(Text(KEY_HINT, style="dim"), id="hud-keys")

    def on_mount(self) -> None:
        if self.is_inline:
            self.add_class("-inline")
        self._fit_hint()
        self._apply(self.loader.load(defer=DEFERRED if self.watch_enabled else (), order=DEFERRED))
        if self.watch_enabled:  # after the first frame: the deferred reads would only delay it
            self.call_after_refresh(start_watcher, self, self.loader, force_polling=self.force_polling)
            if self.record:  # on the HUD's own complete Worlds: no second read or picture of the project
                from rcs_tui.state.txn import default_actor
                from rcs_tui.ui.recording import WorldRecorder

                self._recording = WorldRecorder(self, self.root, session_id=self.session_id,
                                                rp1_db=self.loader.rp1_path, actor=default_actor("hud"))
                self._recording.offer(self.world)

    def on_unmount(self) -> None:
        if self._recording is not None:
            self._recording.close()

    # -- data -------------------------------------------------------------------------------
    def _notices(self, world: World) -> tuple[str, ...]:
        """The watcher's notice, and what is still loading."""
        loading = loading_note(world)
        return self.notices if loading is None else (*self.notices, loading)

    def _view_key(self, world: World) -> tuple[object, ...]:
        """What the views show of a World, apart from its data age ("updated … ago")."""
        preset = self.preset or world.config.preset
        segs = template_segments(world, preset, ascii_only=self.ascii_only, notices=self._notices(world))
        self._timed = [s for s in segs if s.kind == "outcomes"]  # what goes by the clock alone (`_schedule_tick`)
        return ([s.as_json() for s in segs if s.kind != "age"], header(world), world.snapshot.members,
                world.snapshot.authoritative.canonical, world.snapshot.authoritative.modes)

    def _apply(self, world: World) -> None:
        """Show a new World: in full when anything shown changed, else only its age text, when that
        text changed, at most 4x/s.

        A batch of writes to sessions the view does not show changes nothing on screen but the age of
        the newest write, so it costs a key comparison and, only when the age text would read
        differently, one repaint of the line (while writes keep coming it reads "updated 0s ago").
        The overlay panels are drawn only while shown.
        """
        previous, self.world = self.world, world
        self.updates += 1
        if self._recording is not None:
            self._recording.offer(world)
        key = self._view_key(world)
        views = self.query(HudView)
        if previous is not None and key == self._shown and views:
            views.first().world = world
            if age_text(world, self.clock()) != self._age_shown:
                self._age_changed()
            self._schedule_tick()
            return
        self._shown = key
        self._age_repainted = time.monotonic()
        self._age_shown = age_text(world, self.clock())
        self.query_one(HudView).show(world, self._notices(world))
        if self.has_class("-show-overlay"):
            self._show_overlay(world)
        self._schedule_tick()

    def _show_overlay(self, world: World) -> None:
        self.query_one(OverlayBlockView).show(world)
        self.query_one(MemberList).show(world)

    def _age_changed(self) -> None:
        if self._age_timer is not None:
            return  # a repaint is already due
        wait = AGE_REPAINT_S - (time.monotonic() - self._age_repainted)
        if wait <= 0:
            self._repaint_age()
        else:
            self._age_timer = self.set_timer(wait, self._repaint_age)

    def _repaint_age(self) -> None:
        self._age_timer = None
        self._age_repainted = time.monotonic()
        self._age_shown = age_text(self.world, self.clock())
        views = self.query(HudView)  # none while the app is closing
        if views:
            views.first().refresh()

    def _schedule_tick(self) -> None:
        """Repaint only when the age text would change: no busy loop while idle."""
        if self._tick is not None:
            self._tick.stop()
        world = self.world
        age = None if world is None or world.newest_write is None else self.clock() - world.newest_write
        if age is not None and age > 24 * STALE_AFTER * 30:
            age = None
        wait = next_tick(age)
        ends = ends_in(self._timed, self.clock())
        if ends is not None:
            wait = min(wait, ends + 0.05)  # just past the moment the element goes
        self._tick = self.set_timer(wait, self._on_tick)

    def _on_tick(self) -> None:
        self._age_shown = age_text(self.world, self.clock())
        self.query_one(HudView).refresh()
        self._schedule_tick()

    def on_world_updated(self, message: WorldUpdated) -> None:
        if self.is_running:  # a batch can arrive while the app is closing and its widgets are gone
            self._apply(message.world)

    def on_watch_status(self, message: WatchStatus) -> None:
        if not self.is_running:
            return
        self._shown = None  # the notice line is part of what is shown
        self.notices = () if message.mode == "native" else (f"{message.mode}: {message.detail}".strip(": "),)
        if message.mode == "polling":
            self.notices = (message.detail or "polling",)
        self.query_one(HudView).show(self.world, self._notices(self.world)) if self.world else None

    def on_resize(self) -> None:
        self.query_one("#overlay").set_class(self.size.width < 70, "-narrow")
        self._fit_hint()

    def _fit_hint(self) -> None:
        """The key hint takes a row only when the HUD has rows to spare (never in a 1–3 row or inline HUD)."""
        self.query_one("#hud-keys").display = self.size.height >= 4 and not self.is_inline

    # -- actions ----------------------------------------------------------------------------
    def action_toggle_overlay(self) -> None:
        self.toggle_class("-show-overlay")
        if self.has_class("-show-overlay") and self.world is not None:
            self._show_overlay(self.world)

    def action_help(self) -> None:
        self.push_screen(HudHelp(self.ascii_only))

    def action_reload(self) -> None:
        self._apply(self.loader.load())
