"""A fixed workspace for the console tests: deterministic timestamps, ids and actor, so snapshots are stable."""

from __future__ import annotations

import asyncio
import json
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

from tests.fixtures_tasks import FORWARD, make_task
from tests.statefix import canonical, mode, pointer, write

SESSION = "rcs-1764106896953-k3j9x2"
OTHER = "rcs-1764107012400-p8d2qa"
NOW = datetime.fromisoformat("2026-11-25T21:45:00+00:00").timestamp()
T = "2026-11-25T21:41:36.953Z"
ACTOR = "operator@console"


def clock() -> float:
    return NOW


def build(base: Path, *, rp1: bool = True) -> Path:
    """`base/project`: a current session with team + forge, another session with team + ultrawork,
    an orphan-free root, a team dir, two tasks and (optionally) an rp1 database with three runs."""
    root = base / "project"
    root.mkdir(parents=True)
    pointer(root, SESSION)
    mode(root, "forge", SESSION, mode="forge", current_phase="executing", iteration=3, max_iterations=10,
         started_at=T, updated_at="2026-11-25T21:44:30.000Z", session_id=SESSION)
    mode(root, "team", SESSION, mode="team", current_phase="team-exec", iteration=0, max_iterations=50,
         started_at=T, updated_at="2026-11-25T21:43:00.000Z", team_name="login-flow", source="keyword-detector")
    mode(root, "blueprint", SESSION, active=False, mode="blueprint", current_phase="completed",
         completed_at=T, auto_completed_reason="mode transiting: blueprint -> forge", lifecycle_outcome="finished")
    canonical(root, ["team", "forge", "blueprint"], SESSION)
    mode(root, "team", OTHER, current_phase="team-verify", started_at=T)
    mode(root, "ultrawork", OTHER, started_at=T)
    canonical(root, ["team", "ultrawork"], OTHER)
    team = root / ".rcs" / "state" / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "task": "login flow", "worker_count": 2})
    write(team / "phase.json", {"current_phase": "team-exec"})
    for i, (subject, status, owner) in enumerate([("api: POST /login", "completed", "worker-1"),
                                                  ("ui: login form", "in_progress", "worker-2"),
                                                  ("e2e: happy path", "blocked", "worker-1")], start=1):
        write(team / "tasks" / f"task-{i}.json", {"id": str(i), "subject": subject, "status": status, "owner": owner})
    write(team / "workers" / "worker-1" / "status.json", {"state": "idle"})
    write(team / "workers" / "worker-1" / "heartbeat.json", {"alive": False, "last_turn_at": "2026-11-25T21:30:00Z"})
    write(team / "workers" / "worker-2" / "status.json", {"state": "working", "current_task_id": "2"})
    write(team / "workers" / "worker-2" / "heartbeat.json", {"alive": True, "last_turn_at": "2026-11-25T21:44:50Z"})
    files = {**FORWARD["planning"], **FORWARD["plan_review"], **FORWARD["codegen"]}
    tdir = make_task(root, "login-api", "codegen", files)
    (tdir / "transcript.jsonl").write_text(json.dumps({"at": T, "actor": "orchestrator", "from": "plan_review",
                                                       "to": "codegen", "reason": "review ok", "kind": "advance"})
                                           + "\n")
    make_task(root, "docs", "planning")
    for p in (root / ".rcs" / "tasks").glob("*/state.json"):
        os.utime(p, (NOW - 120, NOW - 120))
    if rp1:
        build_rp1(base / "rp1.db", root)
    return root


def build_rp1(db: Path, root: Path) -> None:
    from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db

    create_db(db)
    start = datetime.fromisoformat("2026-11-25T21:20:00+00:00")
    with Rp1Writer(db, clock=FakeClock(start, timedelta(seconds=7))) as w:
        done = w.start_run("deep-research", project_path=root, run_id="run-0001-research", name="auth options")
        for step in ("clarify", "plan", "explore", "synthesize", "report"):
            w.step(done, step, "running")
        w.step(done, "report", "completed")
        review = w.start_run("pr-review", project_path=root, run_id="run-0002-review", name="PR #42 review")
        w.step(review, "split")
        w.step(review, "review")
        w.wait_for_user(review, "review", "Is the session cookie meant to be SameSite=Strict?")
        build = w.start_run("build", project_path=root, run_id="run-0003-build", name="login flow")
        w.step(build, "requirements")
        w.artifact(build, "requirements", ".rp1/work/features/login-flow/requirements.md")
        w.step(build, "design")
        w.step(build, "build")
        w.step(build, "design", "running")
        w.step(build, "tasks")
        w.step(build, "task-builder:building", unit="T1")


def app(base: Path, **kwargs):
    """A console over `build(base)`: no live watcher, fixed clock and actor, no cursor blink."""
    from rcs_tui.ui.console.app import ConsoleApp

    root = base / "project"
    if not root.exists():
        build(base)
    opts = {"rp1_db": base / "rp1.db", "clock": clock, "live": False, "blink": False, "actor": ACTOR,
            "theme": "textual-dark", "session_id": None}
    opts.update(kwargs)
    return ConsoleApp(root, **opts)


def select_row(app, table_id: str, key: str) -> None:
    table = app.screen.query_one(f"#{table_id}")
    assert key in table.keys, (key, table.keys)
    table.select_key(key)


DEAD_WORKER = "login-flow/worker-1"  # `build`'s worker whose heartbeat says it is dead
WAITING_RUN = "run-0002-review"  # `build_rp1`'s run waiting on a question


def at(app) -> tuple[str, str | None]:
    """The view on screen and the row selected in it (the workers' table of the team view)."""
    screen = app.screen
    tab = screen.tab
    table = {"scopes": "scopes-table", "team": "team-workers", "rp1": "runs-table", "tasks": "tasks-table"}.get(tab)
    return tab, screen.query_one(f"#{table}").selected if table else None


def member_row(mode_name: str, view: str | None = SESSION, scope: str | None = SESSION) -> str:
    return f"member:{view or ''}:{scope or ''}:{mode_name}"


async def open_override(pilot, task_id: str = "login-api") -> None:
    """Tasks view, select `task_id`, press `o`: the override dialog is open."""
    await pilot.press("3")
    await settle(pilot)
    select_row(pilot.app, "tasks-table", task_id)
    await pilot.press("o")
    await settle(pilot)


async def settle(pilot, timeout: float = 60.0) -> None:
    """Wait until the console's views are built (they are mounted just after the first frame) and its reads
    and writes run off the UI thread have answered and been drawn (an answer may start another read: the
    loop ends after two idle passes). The live watcher's worker runs for as long as the console does and is
    not waited for. The deadline is one only a hang reaches: a loaded machine takes seconds, not minutes."""
    from rcs_tui.ui.console.main import MainScreen

    app = pilot.app
    idle = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause()
        busy = [w for w in app.workers if w.group != "rcs-watcher" and not w.is_finished]
        building = app.is_running and any(isinstance(s, MainScreen) and not s.views_built for s in app.screen_stack)
        if busy:
            idle = 0
            await app.workers.wait_for_complete(busy)
        elif building:
            idle = 0
            await asyncio.sleep(0.01)
        else:
            idle += 1
            if idle == 2:
                return
    raise AssertionError("the console's workers never settled")


def history(root: Path) -> list[dict]:
    """The project's history lines as recorded (none yet: an empty list)."""
    from rcs_tui.project.recorder import HISTORY_REL

    path = root / HISTORY_REL
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def toasts(console) -> list[str]:
    """The notifications the app has shown."""
    return [str(n.message) for n in console._notifications]


def footer_keys(console) -> set[str]:
    """The keys the footer offers now."""
    return {key.key for key in console.screen.query("FooterKey")}


async def until(pilot, check, timeout: float = 15.0) -> bool:
    """Whether `check()` holds within `timeout` seconds, the app running meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        await pilot.pause(0.05)
    return check()
