"""Loading a project's World from disk, section by section.

`WorldLoader.load(changed)` rebuilds only the sections the changed paths belong to. Every section shows
what is on disk now: a file that cannot be read is a `Badge` (and, for a mode file, that member shows as
unreadable), never a reason to keep an older picture. Only a single file whose meaning has no partial
form (`metrics.json`, `hud-config.json`, the rp1 database while busy) keeps its last good value, and
its badge says so. Nothing here writes.
"""

from __future__ import annotations

import os
import time
from _thread import allocate_lock
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rcs_tui.core.modes import NAME_RE, check_name, mode_from_filename
from rcs_tui.files import inputs
from rcs_tui.files.io import read_json
from rcs_tui.files.layout import Layout
from rcs_tui.project.processes import Processes
from rcs_tui.state.metrics import HudConfig, HudState, Metrics, parse_time, read_hud_config, read_metrics
from rcs_tui.state.plans import plan_names
from rcs_tui.state.reader import read_active_sets, read_snapshot, refresh_snapshot
from rcs_tui.state.snapshot import Snapshot
from rcs_tui.state.team import Team, read_teams
from rcs_tui.views.world import SECTIONS, Badge, RunInfo, TaskInfo, World

RP1_DIR = ".rp1"  # the project's own rp1 directory, holding `project_id` (`rp1.db.PROJECT_ID_FILE`)


def section_of(path: Path, layout: Layout, rp1_db: Path | None) -> str | None:
    """Which section a changed path belongs to (None: not ours, ignore it). rp1's files are its database
    and its WAL and shared memory, beside the database path and beside the file it leads to (`RP1_DB` a
    link: SQLite keeps the WAL beside the file itself). Asked of every event a watcher gets: where the
    database's link leads is resolved only for a path that no cheaper rule places."""
    if rp1_db is not None and _beside(path, rp1_db):
        return "rp1"  # its files, or its directory coming or going
    section = _rcs_section(path, layout)
    if section is not None:
        return section
    if rp1_db is not None and _beside(path, Path(os.path.realpath(rp1_db))):
        return "rp1"
    if (path.parent == layout.root and path.name == RP1_DIR) or (
            path.parent.parent == layout.root and path.parent.name == RP1_DIR):
        return "rp1"  # the project's `.rp1/` (its `project_id` names which runs are the project's)
    return None


def _beside(path: Path, db: Path) -> bool:
    """`path` is the database's directory, or a file of the database (itself, its WAL, its shared memory)."""
    return path == db.parent or (path.parent == db.parent and path.name.startswith(db.name))


def _rcs_section(path: Path, layout: Layout) -> str | None:
    try:
        rel = path.relative_to(layout.rcs)
    except ValueError:
        return None
    parts = rel.parts
    if not parts:
        return None
    if parts[0] == "state":
        return "team" if len(parts) > 1 and parts[1] == "team" else "state"
    if parts[0] == "plans":
        return "state"
    if parts[0] == "tasks":
        return "tasks"
    if rel == Path("metrics.json"):
        return "metrics"
    if rel == Path("hud-config.json"):
        return "config"
    return None


class WorldLoader:
    """Builds `World`s for one project, re-reading only the sections a change touches."""

    def __init__(self, root: Path, *, session_id: str | None = None, all_sessions: bool = True,
                 rp1_db: Path | None | bool = True, clock: Callable[[], float] = time.time,
                 sections: Iterable[str] = SECTIONS, environ: dict[str, str] | None = None,
                 list_over: int | None = None) -> None:
        self.root = Path(root)
        self.layout = Layout(self.root)
        # An explicit session id the operator typed is checked before anything is read: a bad one is their
        # error (BadName, with the reason), never a section that failed to load.
        self.session_id = None if session_id is None else check_name(session_id, "session id")
        self.all_sessions = all_sessions
        self.clock = clock
        self.environ = environ
        self.sections = frozenset(sections)
        self.rp1_path: Path | None = None
        if rp1_db is not False and "rp1" in self.sections:
            from rcs_tui.rp1.db import default_db_path

            self.rp1_path = default_db_path(rp1_db if isinstance(rp1_db, Path) else None)
        self._source: Any = None
        self._source_lock = allocate_lock()
        self._values: dict[str, Any] = {}
        self._badges: dict[str, tuple[Badge, ...]] = {}
        self._state_base: Snapshot | None = None
        self.deferred: frozenset[str] = frozenset()
        self._defer_order: tuple[str, ...] = SECTIONS
        # With more scopes than `list_over`, a deferred full read of the sessions is preceded by a light
        # read of their active sets (a long list of sessions shows from it sooner: `read_active_sets`).
        self.list_over = list_over
        self._listed: dict[str, tuple[str, ...]] | None = None
        self._listing_done = False
        self.world: World | None = None
        self.read_from_ns: int | None = None  # when the latest full read began (wall clock, as file times are)
        self.processes = Processes()  # the processes each section's latest read took as alive or gone

    # -- sections ---------------------------------------------------------------------------
    def _load_state(self, changed: list[Path] | None = None, *, stage: str = "") -> tuple[Snapshot, tuple[Badge, ...]]:
        """The snapshot: re-read only the scopes of `changed` when the last read is known, else everything.

        stage "current": root and the current session only (a first frame; the full read is deferred);
        stage "full": that deferred full read, which replaces the partial picture outright.
        """
        base, self._state_base = self._state_base, None  # dropped if this read fails: the next one is full
        if changed is not None and base is not None and self.all_sessions:
            snap = refresh_snapshot(base, changed, self.session_id, environ=self.environ)
        else:
            every = self.all_sessions and stage != "current"
            snap = read_snapshot(self.root, self.session_id, all_sessions=every, environ=self.environ)
        if stage != "current":
            self._state_base = snap  # refreshes build on what is on disk
        # What is on disk now, always: a file that turned unreadable is that member's or file's problem
        # (shown with its reason), never a reason to keep showing an older picture of everything else.
        return snap, tuple(Badge("state", e.path, e.reason) for e in snap.errors)

    def _load_team(self) -> tuple[dict[str, Team], tuple[Badge, ...]]:
        """Every team as on disk now; a bad file of a team is a badge, never a reason to show that team's
        older picture."""
        teams = read_teams(self.layout.team, within=self.layout.rcs)
        badges = tuple(Badge("team", p, r) for team in teams.values() for p, r in team.errors)
        return teams, badges

    def _load_metrics(self) -> tuple[Metrics | None, tuple[Badge, ...]]:
        metrics, error = read_metrics(self.layout.metrics, self.layout.rcs)
        if error:
            prev = self._values.get("metrics")
            return prev, (Badge("metrics", self.layout.metrics, error, prev is not None),)
        return metrics, ()

    def _load_config(self) -> tuple[HudConfig, tuple[Badge, ...]]:
        config, error = read_hud_config(self.layout.hud_config, self.layout.rcs)
        if error:
            prev: HudConfig | None = self._values.get("config")
            if prev is not None and config.note is None:
                return prev, (Badge("config", self.layout.hud_config, error, True),)
            return config, (Badge("config", self.layout.hud_config, error, False),)
        return config, ()

    def _load_tasks(self) -> tuple[tuple[TaskInfo, ...], tuple[Badge, ...]]:
        """Each task dir's phase from its `state.json` (guards are the console's business, not the HUD's)."""
        base = self.layout.tasks
        if not inputs.is_dir(base):
            return (), ()
        from rcs_tui.core.machine import load_task_lifecycle
        from rcs_tui.core.task_lifecycle import is_terminal

        machine = load_task_lifecycle()
        out, badges = [], []
        for name in sorted(inputs.listdir(base)):
            tdir = base / name
            if (name.startswith(".") or not NAME_RE.fullmatch(name) or inputs.is_symlink(tdir)
                    or not inputs.is_dir(tdir)):
                continue
            path = tdir / "state.json"
            read = read_json(path, within=tdir)
            phase = read.data.get("phase") if read.ok else None
            error = read.error if read.exists else "state.json missing"
            if read.ok and phase not in machine.states:
                error = f'field "phase": unknown phase {str(phase)[:40]!r}'
                phase = None
            terminal = isinstance(phase, str) and bool(phase) and is_terminal(phase, machine)
            out.append(TaskInfo(name, phase, error, inputs.mtime(path), terminal))
            if error:
                badges.append(Badge("tasks", path, error))
        return tuple(out), tuple(badges)

    def rp1_source(self) -> Any:
        """The one rp1 source of this loader, opened on first use (None without a database path).

        A console's views use it too (its feed and timelines): a run read for one is not read again
        for the other, which halves the rp1 work of every batch on a busy database. Machines (needed
        only by timelines) are the built-in ones, found on first use.
        """
        if self.rp1_path is None:
            return None
        with self._source_lock:
            if self._source is None:
                from rcs_tui.rp1.source import Rp1Source

                self._source = Rp1Source(self.rp1_path, root=self.root, plugin_roots=[])
            return self._source

    def _load_rp1(self) -> tuple[RunInfo | None, tuple[Badge, ...]]:
        if self.rp1_path is None or not inputs.exists(self.rp1_path):
            return None, ()
        source = self.rp1_source()
        with source.lock:
            summary = source.current()
            state = source.state
        if not state.ok:
            prev = self._values.get("rp1")
            return prev, (Badge("rp1", self.rp1_path, state.message or state.code, prev is not None),)
        if summary is None:
            return None, ()
        p = summary.projection
        return RunInfo(summary.run.id, summary.run.flow, p.status, p.current_step, len(p.pending_prompts),
                       parse_time(p.last_activity)), ()

    _LOADERS: dict[str, str] = {"state": "_load_state", "team": "_load_team", "metrics": "_load_metrics",
                                "config": "_load_config", "tasks": "_load_tasks", "rp1": "_load_rp1"}

    # -- public -----------------------------------------------------------------------------
    def sections_for(self, paths: Iterable[Path | str]) -> set[str]:
        """The sections the changed `paths` touch; every one for `.rcs` itself (moved, deleted, put back)."""
        out = set()
        for p in paths:
            path = Path(p)
            if path == self.layout.rcs or path == self.layout.root:
                return set(self.sections)
            sec = section_of(path, self.layout, self.rp1_path)
            if sec in self.sections:
                out.add(sec)
        return out

    def processes_moved(self) -> frozenset[Path]:
        """Paths to load again because a process a section (or the doctor's findings, noted as "doctor")
        showed alive or gone started, stopped or was replaced since it was read: the session pointer (its
        owner; the doctor's findings are made again with the state) and the team directory (its workers)."""
        moved = self.processes.moved()
        out: set[Path] = set()
        if moved & {"state", "doctor"}:
            out.add(self.layout.session_pointer)
        if "team" in moved:
            out.add(self.layout.team)
        return frozenset(out)

    def off_view(self, paths: Iterable[Path | str]) -> bool:
        """Whether every path lies in a session other than the one the views show (nor the one the
        session pointer names), so that a batch of them changes only the age of the newest write and
        those sessions' own rows. With root authoritative, a file of a mode active at root is in view
        wherever it is (a session's tombstone of it changes root's members). False until every
        section is loaded."""
        world = self.world
        if world is None or self.deferred:
            return False
        snap = world.snapshot
        shown = {snap.session_id, snap.resolution.pointer.session_id, self.session_id}
        root_active = set(snap.root_scope.active_modes()) if snap.session_id is None else set()
        prefix = os.path.join(os.path.abspath(self.layout.sessions), "")
        for p in paths:
            s = os.path.abspath(p)
            if not s.startswith(prefix):
                return False
            sid, _, rest = s[len(prefix):].partition(os.sep)
            if not rest or sid in shown:
                return False  # a session directory itself (a new one may be the current session)
            if root_active and mode_from_filename(rest.split(os.sep, 1)[0]) in root_active:
                return False
        return True

    def load(self, changed: Iterable[Path | str] | None = None, *, defer: Iterable[str] = (),
             order: Iterable[str] = SECTIONS) -> World:
        """Rebuild the sections `changed` touches (all of them when None or on first load).

        `defer` (first or full load only): sections to leave empty for now, so a first frame can show
        sooner; `load_deferred()` loads them one by one in `order` (the watcher does, first thing). A
        deferred "state" is still read now for root and the current session (the cheap path), and in full
        later. Each World names the sections it still lacks (`World.pending`).
        """
        paths = None if changed is None or self.world is None else [Path(p) for p in changed]
        if paths is not None and (self.layout.rcs in paths or self.layout.root in paths):
            paths = None  # `.rcs` (or the project) itself went or came: nothing read before describes what is there now
        todo = set(self.sections) if paths is None else self.sections_for(paths)
        if paths is None:
            self.read_from_ns = time.time_ns()
            self.deferred = frozenset(defer) & self.sections
            self._listed, self._listing_done = None, False
            self._defer_order = (*order, *SECTIONS)
        todo -= self.deferred  # loaded, in full, by load_deferred()
        if paths is None and "state" in self.deferred:
            return self._load(todo | {"state"}, stage="current")  # every view needs the current scope
        return self._load(todo, paths)

    def load_deferred(self) -> World | None:
        """Load the next section a first load deferred (state first); None when none is left."""
        if not self.deferred or self.world is None:
            return None
        name = next(n for n in self._defer_order if n in self.deferred)
        if name == "state" and self.list_over is not None and not self._listing_done and self.all_sessions:
            self._listing_done = True
            try:
                self._listed = read_active_sets(self.root, over=self.list_over)
            except Exception:  # noqa: BLE001 - only a head start: the full read that follows says what is wrong
                self._listed = None
            if self._listed is not None:  # the World as it is, plus the sessions' active sets
                self.world = self._build()
                return self.world
        self.deferred -= {name}
        if name == "state":
            self._listed = None  # the full read replaces it
        return self._load({name}, stage="full")

    def _load(self, todo: set[str], paths: list[Path] | None = None, stage: str = "") -> World:
        for name in sorted(todo):
            try:
                loader = getattr(self, self._LOADERS[name])
                with self.processes.noting(name):
                    value, badges = loader(paths, stage=stage) if name == "state" else loader()
            except Exception as exc:  # noqa: BLE001 - a viewer must survive any damaged input
                value = self._values.get(name)
                if name == "state" and value is None:
                    raise  # nothing to show at all: the error itself is the answer
                badges = (Badge(name, None, f"could not load: {type(exc).__name__}: {exc}", value is not None),)
            self._values[name] = value
            self._badges[name] = badges
            if name == "state":
                self._values["plans"] = plan_names(self.root)  # `.rcs/plans/` belongs to the state section
        self.world = self._build()
        return self.world

    def _build(self) -> World:
        snap: Snapshot = self._values["state"]
        scope = snap.authoritative
        hud = HudState.from_json(scope.hud_state)
        pointer = snap.resolution.pointer
        started = None
        if pointer.data and pointer.session_id == snap.session_id:
            started = parse_time(pointer.data.get("started_at"))
        badges = tuple(b for name in SECTIONS for b in self._badges.get(name, ()))
        return World(self.root, snap, self._values.get("team") or {}, self._values.get("metrics"), hud,
                     self._values.get("config") or HudConfig(), self._values.get("tasks") or (),
                     self._values.get("rp1"), badges, self.clock(), self._newest_write(snap), started,
                     self._values.get("plans") or (), tuple(n for n in SECTIONS if n in self.deferred),
                     self._listed if "state" in self.deferred else None)

    def _newest_write(self, snap: Snapshot) -> float | None:
        """When the runtime last wrote anything the HUD shows (mode files, canonical sets, metrics).

        The snapshot carries its newest mode-file write (a refresh adjusts it for the scopes it re-read),
        so this costs a few stats, not one look at every session's files.
        """
        scope = snap.authoritative
        extra = [scope.dir / "hud-state.json", self.layout.metrics]
        if scope.canonical is not None:
            extra.append(scope.canonical.path)
        times = [t for t in (snap.mode_newest, *(inputs.mtime(p) for p in extra)) if t is not None]
        return max(times) if times else None
