"""A realistic RCS workspace in a directory, and a simulator that keeps it moving like the runtime would.

`build_workspace(base)` lays down two project copies and an rp1 database; `Simulator(ws).start()`
advances it every ~2 s on a background thread (forge iterations, team tasks completing, rp1 events,
a task moving through its lifecycle, turn metrics) until `stop()`. Every JSON write is atomic
(temp file + rename in the same directory) and logs are appended one line per write, as the
runtime does. This module writes; no viewer imports it.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rcs_tui.core.times import iso_of
from rcs_tui.files.io import append_line, atomic_write, dump_json
from rcs_tui.state.session import pid_start_ticks

MARKER = ".rcs-tui-demo"  # in the base directory: the demo made it, so a later demo may replace it
SESSION = "rcs-1764106896953-k3j9x2"
OTHER_SESSION = "rcs-1764107012400-p8d2qa"
DEAD_SESSION = "rcs-1764020000000-zz91aa"
TEAM = "login-flow"
OTHER_TEAM = "docs-sweep"
DEAD_PID = 2_000_000_000  # above any Linux pid_max: never alive
HEARTBEAT_TICKS = 5  # live workers beat every this many ticks: well inside the two minutes that make one silent
BUILD_STEPS = ("requirements", "design", "tasks", "build", "verify", "archive")
TASK_PATH = ("planning", "plan_review", "codegen", "review", "test", "accept", "done")


def iso(t: datetime) -> str:
    return iso_of(t)


@dataclass
class DemoWorkspace:
    """Where the demo lives: `project` is the one to open; `copy` holds the stale-dead pointer."""

    base: Path
    project: Path
    copy: Path
    rp1_db: Path
    session_id: str = SESSION
    other_session: str = OTHER_SESSION
    runs: dict[str, str] = field(default_factory=dict)


def _write(path: Path, data: Any) -> None:
    atomic_write(path, dump_json(data))


def _text(path: Path, text: str) -> None:
    atomic_write(path, text.encode("utf-8"))


def _int(value: object, default: int) -> int:
    """`value` when it is an int (as read from a state file), else `default`."""
    return value if isinstance(value, int) else default


def _mode(state: Path, mode: str, data: dict[str, Any]) -> None:
    _write(state / f"{mode}-state.json", data)


def _canonical(state: Path, sid: str | None, skills: list[tuple[str, str]], at: str) -> None:
    entries = [{"skill": s, "phase": p, "active": True, "activated_at": at, "session_id": sid} for s, p in skills]
    _write(state / "skill-active-state.json", {
        "version": 1, "active": True, "skill": skills[0][0], "keyword": f"${skills[0][0]}", "phase": skills[0][1],
        "activated_at": at, "updated_at": at, "source": "keyword-detector", "session_id": sid,
        "active_skills": entries})


def _team_dir(state: Path, name: str, task: str, workers: list[str], tasks: list[tuple[str, str, str]],
              at: str, pids: list[int], beat: str) -> None:
    """A team started at `at` whose workers last beat at `beat` (the simulator keeps beating for the live)."""
    tdir = state / "team" / name
    _write(tdir / "config.json", {"name": name, "task": task, "agent_type": "executor",
                                  "worker_count": len(workers), "max_workers": 6, "created_at": at,
                                  "tmux_session": f"rcs-team-{name}", "workers": workers})
    _write(tdir / "phase.json", {"current_phase": "team-exec", "max_fix_attempts": 3, "current_fix_attempt": 0,
                                 "transitions": [{"from": "team-plan", "to": "team-prd", "at": at},
                                                 {"from": "team-prd", "to": "team-exec", "at": at}]})
    for i, (subject, status, owner) in enumerate(tasks, start=1):
        doc = {"id": str(i), "subject": subject, "description": subject, "status": status, "owner": owner,
               "depends_on": [], "version": 1, "created_at": at}
        if status == "completed":
            doc["completed_at"] = at
            doc["result"] = "done"
        _write(tdir / "tasks" / f"task-{i}.json", doc)
    for i, w in enumerate(workers):
        current = next((str(k) for k, (_, s, o) in enumerate(tasks, 1) if o == w and s == "in_progress"), None)
        _write(tdir / "workers" / w / "status.json", {"state": "working" if current else "idle",
                                                      "current_task_id": current, "updated_at": at})
        _write(tdir / "workers" / w / "heartbeat.json", {"pid": pids[i], "last_turn_at": beat,
                                                         "turn_count": 3 + i, "alive": True})
    events = tdir / "events" / "events.ndjson"
    for n, w in enumerate(workers):
        append_line(events, json.dumps({"event_id": f"ev-{n}", "team": name, "type": "worker_started",
                                        "worker": w, "created_at": at}))


# The last one written is the "current" task a HUD shows.
TASKS: dict[str, str] = {"session-store": "review", "rate-limit": "planning", "ui-form": "test",
                         "audit-log": "done", "password-reset": "plan_review", "login-api": "codegen"}


def _task(tasks: Path, tid: str, phase: str, at: str) -> None:
    """A task dir with the artifacts its phase implies (so the guards have something to inspect)."""
    tdir = tasks / tid
    order = ("planning", "plan_review", "codegen", "review", "test", "accept", "done")
    reached = order.index(phase)
    actors: dict[str, dict[str, str | int | None]] = {
        p: {"status": "done" if i < reached else ("workshop" if i == reached else None)}
        for i, p in enumerate(order[:-1])}
    actors["planning"]["round"] = 2
    _write(tdir / "state.json", {"phase": phase, "actors": actors, "title": tid.replace("-", " ")})
    if reached >= 1:
        _write(tdir / "planning" / "planning.ai.json", {"summary": f"plan for {tid}", "blocking_questions": [],
                                                        "files": [f"src/{tid}.py"]})
        _write(tdir / "plan.files.json", {"files": [f"src/{tid}.py", f"tests/test_{tid}.py"]})
    if reached >= 2:
        _write(tdir / "review" / "plan-review.json", {"ok": True, "blocked": False, "reviews": []})
    if reached >= 3:
        _text(tdir / "code" / "diff.patch", f"--- a/src/{tid}.py\n+++ b/src/{tid}.py\n@@ -0,0 +1 @@\n+pass\n")
        _text(tdir / "code" / "files" / f"{tid}.py", "pass\n")
    if reached >= 4:
        _write(tdir / "review" / "code-review.json", {"ok": True, "blocked": False, "issues": []})
    if reached >= 5:
        _write(tdir / "test" / "results.json", {"ok": True, "failed": 0, "lint_ok": True, "static_ok": True})
    if reached >= 6:
        _write(tdir / "accept" / "decision.json", {"decision": "accepted", "by": "reviewer"})
    append_line(tdir / "transcript.jsonl", json.dumps({"at": at, "actor": "orchestrator", "from": None,
                                                       "to": phase, "reason": "seeded", "kind": "advance"}))


def build_workspace(base: str | os.PathLike[str], *, pid: int | None = None,
                    now: datetime | None = None) -> DemoWorkspace:
    """Lay the demo down under `base` (created if needed). `pid` owns the live session (default: us)."""
    base = Path(base).resolve()
    t = now or datetime.now(UTC)
    at, earlier = iso(t), iso(t - timedelta(minutes=4))
    project, copy = base / "project", base / "project-copy"
    ws = DemoWorkspace(base, project, copy, base / "rp1" / "rp1.db")
    state = project / ".rcs" / "state"
    sess = state / "sessions" / SESSION
    other = state / "sessions" / OTHER_SESSION
    owner = pid or os.getpid()
    _text(base / MARKER, "A demo workspace made by `rcs-tui demo`; a later `rcs-tui demo --dir` replaces it.\n")
    pointer = {"session_id": SESSION, "started_at": iso(t - timedelta(minutes=42)), "cwd": str(project),
               "pid": owner, "platform": "linux"}
    ticks = pid_start_ticks(owner)
    if ticks is not None:
        pointer["pid_start_ticks"] = ticks
    _write(state / "session.json", pointer)

    # Current session: team + forge, plus a stale canonical member (blueprint resurrected after handoff).
    _mode(sess, "forge", {"active": True, "mode": "forge", "current_phase": "executing", "iteration": 3,
                          "max_iterations": 10, "started_at": earlier, "updated_at": at, "session_id": SESSION,
                          "task_description": "implement login flow", "run_outcome": "continue"})
    _mode(sess, "team", {"active": True, "mode": "team", "iteration": 0, "max_iterations": 50,
                         "current_phase": "team-exec", "task_description": "implement login flow across api and ui",
                         "started_at": earlier, "transition_message": "mode transiting: blueprint -> team",
                         "team_name": TEAM, "agent_count": 3, "agent_types": "executor", "run_outcome": "continue"})
    _mode(sess, "blueprint", {"active": False, "mode": "blueprint", "current_phase": "completed",
                              "iteration": 2, "completed_at": earlier,
                              "auto_completed_reason": "mode transiting: blueprint -> forge",
                              "completion_note": "Auto-completed blueprint during allowlisted transition to forge.",
                              "transition_source": "keyword-detector", "transition_target_mode": "forge",
                              "run_outcome": "finish", "lifecycle_outcome": "finished"})
    _mode(sess, "deep-interview", {"active": False, "mode": "deep-interview", "current_phase": "complete",
                                   "completed_at": iso(t - timedelta(minutes=3)), "run_outcome": "finish",
                                   "lifecycle_outcome": "finished"})
    _canonical(sess, SESSION, [("forge", "executing"), ("team", "team-exec"), ("blueprint", "planning")], earlier)
    _write(sess / "hud-state.json", {"last_turn_at": at, "turn_count": 14,
                                     "last_agent_output": "Ran the api tests: 41 passed."})
    _text(sess / "AGENTS.md", "# Session notes\n")
    # Root survivor: ultrawork still active at root while the session is current.
    _mode(state, "ultrawork", {"active": True, "reinforcement_count": 1, "started_at": iso(t - timedelta(hours=2)),
                               "run_outcome": "continue"})
    # Another scope: team + ultrawork.
    _mode(other, "team", {"active": True, "mode": "team", "current_phase": "team-verify", "team_name": OTHER_TEAM,
                          "agent_count": 2, "started_at": earlier, "run_outcome": "continue"})
    _mode(other, "ultrawork", {"active": True, "reinforcement_count": 2, "started_at": earlier,
                               "run_outcome": "continue"})
    _canonical(other, OTHER_SESSION, [("team", "team-verify"), ("ultrawork", "executing")], earlier)

    _team_dir(state, TEAM, "implement login flow across api and ui", ["worker-1", "worker-2", "worker-3"],
              [("api: POST /login", "completed", "worker-1"), ("api: session cookie", "in_progress", "worker-1"),
               ("ui: login form", "in_progress", "worker-2"), ("ui: error states", "pending", "worker-2"),
               ("e2e: happy path", "blocked", "worker-3"), ("docs: auth flow", "pending", "worker-3")], earlier,
              [owner] * 3, at)
    # worker-2 of the other team died holding a task: its heartbeat still says alive (a doctor finding), and
    # it is the team's one problem: every other worker beats on.
    _team_dir(state, OTHER_TEAM, "refresh the operator docs", ["worker-1", "worker-2"],
              [("docs: install", "completed", "worker-1"), ("docs: recovery", "in_progress", "worker-2")], earlier,
              [owner, DEAD_PID], at)

    _write(project / ".rcs" / "metrics.json", {"total_turns": 231, "session_turns": 14,
                                                "last_activity": at, "session_input_tokens": 701_200,
                                                "session_output_tokens": 152_400, "session_total_tokens": 853_600,
                                                "five_hour_limit_pct": 38, "weekly_limit_pct": 12})
    _text(project / ".rcs" / "plans" / "prd-login-flow.md", "# PRD: login flow\n")
    for tid, phase in TASKS.items():
        _task(project / ".rcs" / "tasks", tid, phase, earlier)

    # A second copy of the project whose session.json points at a dead process.
    cstate = copy / ".rcs" / "state"
    _write(cstate / "session.json", {"session_id": DEAD_SESSION, "started_at": iso(t - timedelta(days=1)),
                                     "cwd": str(copy), "pid": DEAD_PID, "platform": "linux"})
    _mode(cstate / "sessions" / DEAD_SESSION, "forge", {"active": True, "current_phase": "executing",
                                                        "iteration": 7, "max_iterations": 10,
                                                        "started_at": iso(t - timedelta(days=1))})
    _canonical(cstate / "sessions" / DEAD_SESSION, DEAD_SESSION, [("forge", "executing")], iso(t - timedelta(days=1)))
    _mode(cstate, "forge", {"active": True, "current_phase": "fixing", "iteration": 9, "max_iterations": 10})

    _seed_rp1(ws, t)
    return ws


def _seed_rp1(ws: DemoWorkspace, t: datetime) -> None:
    from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db

    create_db(ws.rp1_db)
    clock = FakeClock(t - timedelta(minutes=30), timedelta(seconds=7))
    with Rp1Writer(ws.rp1_db, clock=clock) as w:
        done = w.start_run("deep-research", project_path=ws.project, feature_id="auth-options", name="auth options")
        for step in ("clarify", "plan", "explore", "synthesize", "report"):
            w.step(done, step, "running")
        w.step(done, "report", "completed")
        review = w.start_run("pr-review", project_path=ws.project, feature_id="login-flow", name="PR #42 review")
        w.step(review, "split")
        w.step(review, "review")
        w.wait_for_user(review, "review", "Is the session cookie meant to be SameSite=Strict?")
        build = w.start_run("build", project_path=ws.project, feature_id="login-flow", name="login flow")
        w.step(build, "requirements")
        w.artifact(build, "requirements", ".rp1/work/features/login-flow/requirements.md")
        w.step(build, "design")
        w.step(build, "tasks")
        w.step(build, "task-builder:building", unit="T1")
    ws.runs = {"build": build, "pr-review": review, "deep-research": done}


class Simulator:
    """Plays the runtime on a workspace: one `step()` per tick, or `start()` a thread ticking every `interval`."""

    def __init__(self, ws: DemoWorkspace, interval: float = 2.0) -> None:
        self.ws = ws
        self.interval = interval
        self.ticks = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.state = ws.project / ".rcs" / "state"
        self.sess = self.state / "sessions" / ws.session_id
        self.build_step = BUILD_STEPS.index("tasks")
        self.task_phase = 0

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> Simulator:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="rcs-demo-simulator", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.step()
            except OSError:
                continue  # the workspace may be going away under us; try again next tick

    # -- one tick ---------------------------------------------------------------------------
    def step(self) -> list[str]:
        """Advance the workspace once; returns what changed, for logs and tests."""
        self.ticks += 1
        now = datetime.now(UTC)
        at = iso(now)
        done = [self._forge(at), self._metrics(at)]
        if self.ticks % HEARTBEAT_TICKS == 1:
            done.append(self._heartbeats(at))
        if self.ticks % 2 == 0:
            done.append(self._team_task(at))
        if self.ticks % 2 == 1:
            done.append(self._rp1())
        if self.ticks % 3 == 0:
            done.append(self._advance_task(at))
        return [d for d in done if d]

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _forge(self, at: str) -> str:
        path = self.sess / "forge-state.json"
        data = self._read(path)
        if data.get("active") is not True:
            return ""  # cleared or ended by the operator: a stopped loop does not tick (or recreate the file)
        top = _int(data.get("max_iterations"), 10)
        i = _int(data.get("iteration"), 0)
        data.update({"iteration": i + 1 if i < top else 1, "updated_at": at, "last_turn_at": at,
                     "current_phase": "verifying" if (i + 1) % 4 == 0 else "executing"})
        _write(path, data)
        return f"forge iteration {data['iteration']}/{top}"

    def _metrics(self, at: str) -> str:
        metrics_path = self.ws.project / ".rcs" / "metrics.json"
        m = self._read(metrics_path)
        m["session_turns"] = int(m.get("session_turns", 0)) + 1
        m["total_turns"] = int(m.get("total_turns", 0)) + 1
        m["session_total_tokens"] = int(m.get("session_total_tokens", 0)) + 4_200 + 300 * (self.ticks % 7)
        m["last_activity"] = at
        _write(metrics_path, m)
        hud = self._read(self.sess / "hud-state.json")
        hud.update({"last_turn_at": at, "turn_count": int(hud.get("turn_count", 0)) + 1})
        _write(self.sess / "hud-state.json", hud)
        return f"turn {m['session_turns']}"

    def _heartbeats(self, at: str) -> str:
        """Every live worker takes a turn, as a healthy team's do; the dead one (its pid gone) stays silent."""
        beats = 0
        for path in sorted((self.state / "team").glob("*/workers/*/heartbeat.json")):
            doc = self._read(path)
            if not doc or doc.get("pid") == DEAD_PID:
                continue
            doc.update({"last_turn_at": at, "turn_count": _int(doc.get("turn_count"), 0) + 1})
            _write(path, doc)
            beats += 1
        return f"{beats} workers beat"

    def _team_task(self, at: str) -> str:
        tdir = self.state / "team" / TEAM
        tasks = sorted((tdir / "tasks").glob("task-*.json"))
        docs = [(p, self._read(p)) for p in tasks]
        target = next(((p, d) for p, d in docs if d.get("status") == "in_progress"), None) or \
            next(((p, d) for p, d in docs if d.get("status") in ("pending", "blocked")), None)
        if target is None:  # everything done: a new round of work arrives
            for p, d in docs[1:]:
                d.update({"status": "pending", "completed_at": None})
                _write(p, d)
            return "team: new round of tasks"
        path, doc = target
        worker = doc.get("owner") or "worker-1"
        if doc.get("status") == "in_progress":
            doc.update({"status": "completed", "completed_at": at, "result": "done",
                        "version": int(doc.get("version", 1)) + 1})
            kind, msg = "task_completed", f"team task {doc.get('id')} completed"
            state = "idle"
        else:
            doc.update({"status": "in_progress", "version": int(doc.get("version", 1)) + 1})
            kind, msg = "task_claimed", f"team task {doc.get('id')} claimed by {worker}"
            state = "working"
        _write(path, doc)
        _write(tdir / "workers" / str(worker) / "status.json",
               {"state": state, "current_task_id": doc.get("id") if state == "working" else None, "updated_at": at})
        append_line(tdir / "events" / "events.ndjson", json.dumps(
            {"event_id": f"ev-{self.ticks}", "team": TEAM, "type": kind, "worker": worker,
             "task_id": doc.get("id"), "created_at": at}))
        return msg

    def _rp1(self) -> str:
        from rcs_tui.rp1.fixtures import Rp1Writer

        with Rp1Writer(self.ws.rp1_db) as w:
            run = self.ws.runs["build"]
            if self.build_step + 1 >= len(BUILD_STEPS):
                w.step(run, BUILD_STEPS[-1], "completed")
                run = w.start_run("build", project_path=self.ws.project, feature_id="login-flow",
                                  name=f"login flow #{self.ticks}")
                self.ws.runs["build"] = run
                self.build_step = 0
            else:
                self.build_step += 1
            step = BUILD_STEPS[self.build_step]
            w.step(run, step, "running")
            return f"rp1 build → {step}"

    def _advance_task(self, at: str) -> str:
        """Move `login-api` one phase along planning → … → done (a finished task reopens at the start), as
        the task lifecycle allows: the move is planned by the transition core, guards included, and its
        bytes written the way the runtime writes them (artifacts first, then state, then transcript)."""
        from rcs_tui.state.tasks import plan_advance, plan_redo
        from rcs_tui.state.txn import TxnError

        root = self.ws.project
        tasks = root / ".rcs" / "tasks"
        tid = "login-api"
        current = self._read(tasks / tid / "state.json").get("phase", "codegen")
        try:
            if current == "done":
                for sub in ("review/code-review.json", "test/results.json", "accept/decision.json"):
                    try:
                        (tasks / tid / sub).unlink()
                    except FileNotFoundError:
                        pass
                plan = plan_redo(root, tid, "demo: the next feature", actor="orchestrator", at=at)
            else:
                target = TASK_PATH[(TASK_PATH.index(current) + 1) if current in TASK_PATH else 0]
                _task_artifacts(tasks / tid, target)
                plan = plan_advance(root, tid, target, actor="orchestrator", at=at)
        except TxnError as exc:
            return f"task {tid}: stays {current} ({exc})"
        for change in plan.changes:
            data = change.data()
            if data is not None:
                atomic_write(change.path, data)
        for add in plan.appends:
            append_line(add.path, add.line)
        return f"task {tid}: {current} → {plan.summary['to']}"


def _task_artifacts(tdir: Path, phase: str) -> None:
    if phase == "review":
        _text(tdir / "code" / "diff.patch", "--- a/src/login.py\n+++ b/src/login.py\n@@ -0,0 +1 @@\n+pass\n")
        _text(tdir / "code" / "files" / "login.py", "pass\n")
    elif phase == "test":
        _write(tdir / "review" / "code-review.json", {"ok": True, "blocked": False, "issues": []})
    elif phase == "accept":
        _write(tdir / "test" / "results.json", {"ok": True, "failed": 0, "lint_ok": True, "static_ok": True})
    elif phase == "done":
        _write(tdir / "accept" / "decision.json", {"decision": "accepted", "by": "reviewer"})
