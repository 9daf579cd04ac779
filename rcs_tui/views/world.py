"""The "world": the immutable picture of one project that the HUD and console render.

Sections are the state snapshot (`.rcs/state` minus the team dir, plus `.rcs/plans`), the team dirs,
`metrics.json`, `hud-config.json`, the task dirs and the rp1 database. A `Badge` names a problem with
one section or file and the reason. Loading it from disk is `rcs_tui.project.loader`; nothing here reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcs_tui.files.io import rel_of
from rcs_tui.state.metrics import HudConfig, HudState, Metrics
from rcs_tui.state.snapshot import Snapshot
from rcs_tui.state.team import Team

SECTIONS: tuple[str, ...] = ("state", "team", "metrics", "config", "tasks", "rp1")


@dataclass(frozen=True)
class Badge:
    """A problem to show: which section, which file, why, and whether older data is shown instead."""

    section: str
    path: Path | None
    reason: str
    kept_last_good: bool = False

    def text(self, root: Path) -> str:
        where = ""
        if self.path is not None:
            where = rel_of(root, self.path)
        prefix = f"{where}: " if where else ""
        kept = "showing last good data · " if self.kept_last_good else ""
        return f"{kept}{prefix}{self.reason}"


@dataclass(frozen=True)
class TaskInfo:
    """One task dir: its phase (None when unreadable), error, and when its state last changed."""

    id: str
    phase: str | None
    error: str | None
    mtime: float | None
    terminal: bool = False


@dataclass(frozen=True)
class RunInfo:
    """The project's current rp1 run, reduced to what a status line shows."""

    id: str
    flow: str
    status: str
    step: str | None
    waiting: int = 0
    last_activity: float | None = None


@dataclass(frozen=True)
class World:
    root: Path
    snapshot: Snapshot
    teams: dict[str, Team] = field(default_factory=dict)
    metrics: Metrics | None = None
    hud_state: HudState | None = None
    config: HudConfig = field(default_factory=HudConfig)
    tasks: tuple[TaskInfo, ...] = ()
    run: RunInfo | None = None
    badges: tuple[Badge, ...] = ()
    loaded_at: float = 0.0
    newest_write: float | None = None
    session_started: float | None = None
    plans: tuple[str, ...] = ()  # file names under .rcs/plans/ (they decide the forge gate)
    pending: tuple[str, ...] = ()  # sections not read yet (a first frame's deferred ones), in SECTIONS' order
    # While the full read of every session is still pending: each session's active set, read ahead of it
    # (session id -> active modes) so a long list can show every session sooner; None otherwise.
    listed: dict[str, tuple[str, ...]] | None = field(default=None, compare=False, repr=False)

    def current_task(self) -> TaskInfo | None:
        """The task most recently written that is not finished (else the most recent one)."""
        live = [t for t in self.tasks if t.phase and not t.terminal]
        pool = live or [t for t in self.tasks if t.phase]
        return max(pool, key=lambda t: t.mtime or 0.0, default=None)

    def team_for(self, name: str | None) -> Team | None:
        if name and name in self.teams:
            return self.teams[name]
        return None


HUD_JSON_VERSION = "2.0"  # 2.0: `scopes` and `errors` cover root and the current session, as the line does
HUD_JSON_KIND = "hud"


def world_json_extra(world: World) -> dict[str, Any]:
    """The parts of a World beyond the snapshot, for `hud --once --json`."""
    m = world.metrics
    task = world.current_task()
    run = world.run
    return {
        "teams": {n: {"phase": t.phase, "worker_count": t.worker_count, "tasks": dict(t.counts),
                      "workers": {w.name: w.state for w in t.workers}} for n, t in sorted(world.teams.items())},
        "metrics": None if m is None else {"session_turns": m.session_turns, "total_turns": m.total_turns,
                                           "session_total_tokens": m.total_tokens, "five_hour_limit_pct":
                                           m.five_hour_pct, "weekly_limit_pct": m.weekly_pct},
        "task": None if task is None else {"id": task.id, "phase": task.phase},
        "rp1_run": None if run is None else {"id": run.id, "flow": run.flow, "status": run.status,
                                             "step": run.step, "waiting": run.waiting},
        "preset": world.config.preset,
        "badges": [b.text(world.root) for b in world.badges],
    }
