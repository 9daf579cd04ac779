"""The team runtime directory `.rcs/state/team/<team>/`, read without writing.

One `Team` per directory: config, phase, task counts by status, per-worker status/heartbeat and the
tail of the event log. Damaged files become entries in `Team.errors`; reading never raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcs_tui.core import health
from rcs_tui.core.health import HEARTBEAT_STALE_SECONDS  # noqa: F401 (read here by the doctor)
from rcs_tui.core.modes import TEAM_RE
from rcs_tui.core.values import count
from rcs_tui.files import inputs
from rcs_tui.files.io import loads_strict, read_bounded, read_json
from rcs_tui.state.session import process_matches

TASK_STATUSES: tuple[str, ...] = ("pending", "blocked", "in_progress", "completed", "failed")
WORKER_STATES: tuple[str, ...] = ("idle", "working", "blocked", "done", "failed", "draining", "unknown")
MAX_TASK_FILES = 2000
EVENT_TAIL_BYTES = 64 * 1024


def worker_condition(dead_reason: str | None, alive: bool | None, last_turn_at: str | None, now: float) -> str:
    """The core's worker rule (`health.worker_condition`) for plain fields, the last turn as written: a
    snapshot document read from another host is judged exactly like a worker read here."""
    from rcs_tui.state.metrics import parse_time

    at = parse_time(last_turn_at)
    return health.worker_condition(dead_reason, alive, None if at is None else now - at)


@dataclass(frozen=True)
class Worker:
    name: str
    state: str = "unknown"
    current_task_id: str | None = None
    reason: str | None = None
    alive: bool | None = None
    turn_count: int | None = None
    last_turn_at: str | None = None
    pid: int | None = None
    pid_running: bool | None = None

    def heartbeat_age(self, now: float) -> float | None:
        """Seconds since the last heartbeat turn, None when it carries no readable time."""
        from rcs_tui.state.metrics import parse_time

        at = parse_time(self.last_turn_at)
        return None if at is None else now - at

    def beat_is_stale(self, now: float) -> bool:
        return health.beat_is_stale(self.heartbeat_age(now))

    def condition(self, now: float) -> str:
        """`dead`, `silent`, `not reporting` or `alive` at `now` (see `worker_condition`)."""
        return worker_condition(self.dead_reason, self.alive, self.last_turn_at, now)

    @property
    def dead_reason(self) -> str | None:
        """Why this worker counts as dead (its pid is gone, or its heartbeat says so), else None.

        The one rule the doctor, the console and the HUD share: a heartbeat that claims `alive: true`
        for a pid that is not running is dead, not alive.
        """
        if self.pid_running is False:
            return f"pid {self.pid} is not running"
        if self.alive is False:
            return "heartbeat says alive: false"
        return None


@dataclass(frozen=True)
class TeamTask:
    id: str
    subject: str
    status: str
    owner: str | None = None


@dataclass(frozen=True)
class Team:
    """What the team dir says; `worker_count` prefers config, then the number of worker dirs."""

    name: str
    dir: Path
    task: str | None = None
    phase: str | None = None
    worker_count: int | None = None
    workers: tuple[Worker, ...] = ()
    tasks: tuple[TeamTask, ...] = ()
    events: tuple[dict[str, Any], ...] = ()
    errors: tuple[tuple[Path, str], ...] = ()
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.counts.get("completed", 0)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _pid_running(pid: int | None) -> bool | None:
    if pid is None:
        return None
    return process_matches(pid)[0]


def _int(value: Any) -> int | None:
    return count(value)


def _pid(value: Any) -> int | None:
    """Any whole number names a pid to check (one no process can have is reported as not running)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _listdir(path: Path) -> list[str]:
    try:
        return sorted(inputs.listdir(path))
    except OSError:
        return []


def _tail_events(path: Path, limit: int, errors: list[tuple[Path, str]],
                 within: Path | None) -> tuple[dict[str, Any], ...]:
    """The last `limit` JSON objects of events.ndjson; a torn last line is skipped, not fatal."""
    got = read_bounded(path, within=within, max_bytes=EVENT_TAIL_BYTES, part="tail")
    if got.raw is None:
        if got.error:
            errors.append((path, got.error))
        return ()
    lines = got.raw.splitlines()
    if got.truncated and lines:
        lines = lines[1:]  # first line may be cut by the seek
    out = []
    for line in lines[-limit:]:
        try:
            item = loads_strict(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict):
            out.append(item)
    return tuple(out)


def read_team(team_dir: Path, *, within: Path | None = None, event_limit: int = 20) -> Team:
    """Read one team directory."""
    errors: list[tuple[Path, str]] = []
    name = team_dir.name

    def load(path: Path) -> dict[str, Any] | None:
        r = read_json(path, within=within or team_dir)
        if r.error:
            errors.append((path, r.error))
        return r.data if r.ok else None

    config = load(team_dir / "config.json") or {}
    phase_doc = load(team_dir / "phase.json") or {}
    tasks: list[TeamTask] = []
    counts: dict[str, int] = {}
    for fname in _listdir(team_dir / "tasks")[:MAX_TASK_FILES]:
        if not (fname.startswith("task-") and fname.endswith(".json")):
            continue
        doc = load(team_dir / "tasks" / fname)
        if doc is None:
            continue
        raw = doc.get("status")
        status = raw if isinstance(raw, str) and raw in TASK_STATUSES else "pending"
        counts[status] = counts.get(status, 0) + 1
        tasks.append(TeamTask(str(doc.get("id", fname[5:-5])), _str(doc.get("subject")) or "", status,
                              _str(doc.get("owner"))))
    workers: list[Worker] = []
    for wname in _listdir(team_dir / "workers"):
        wdir = team_dir / "workers" / wname
        if not inputs.is_dir(wdir):
            continue
        wdoc = load(wdir / "status.json") or {}
        beat = load(wdir / "heartbeat.json") or {}
        raw = wdoc.get("state")
        state = raw if isinstance(raw, str) and raw in WORKER_STATES else "unknown"
        alive = beat.get("alive") if isinstance(beat.get("alive"), bool) else None
        workers.append(Worker(wname, state, _str(wdoc.get("current_task_id")), _str(wdoc.get("reason")),
                              alive, _int(beat.get("turn_count")), _str(beat.get("last_turn_at")),
                              _pid(beat.get("pid")), _pid_running(_pid(beat.get("pid")))))
    count = _int(config.get("worker_count"))
    if count is None and isinstance(config.get("workers"), list):
        count = len(config["workers"])
    if count is None and workers:
        count = len(workers)
    events = _tail_events(team_dir / "events" / "events.ndjson", event_limit, errors, within or team_dir)
    return Team(name, team_dir, _str(config.get("task")), _str(phase_doc.get("current_phase")), count,
                tuple(workers), tuple(tasks), events, tuple(errors), counts)


def read_teams(team_root: Path, *, within: Path | None = None) -> dict[str, Team]:
    """Every valid team directory under `.rcs/state/team/`; invalid names are skipped."""
    out = {}
    for name in _listdir(team_root):
        path = team_root / name
        if TEAM_RE.fullmatch(name) and inputs.is_dir(path) and not inputs.is_symlink(path):
            out[name] = read_team(path, within=within)
    return out
