"""Build rp1 databases the way rp1's writer does: for tests, the demo and the benchmark.

`create_db` lays down the real v6 schema or the v17 one; `Rp1Writer` appends events with rp1's
side effects (synthetic `skipped` rows for earlier unreported steps, `completed` rows for
predecessors still running, both stamped 1 ms before the real event; run-level rows; the
`runs.status` cache). This module writes; nothing in the reader path imports it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rcs_tui.core.machine import StateMachine
from rcs_tui.core.times import iso_of
from rcs_tui.rp1.machines import MachineRegistry

_NOW_SQL = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

# rp1's schema as created at version 6 (runs without project roots, artifacts without storage_root).
SCHEMA_V6 = f"""
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (6);
CREATE TABLE runs (
    id TEXT PRIMARY KEY NOT NULL, flow TEXT NOT NULL, feature_id TEXT NOT NULL,
    project_path TEXT NOT NULL, name TEXT DEFAULT NULL, harness TEXT DEFAULT NULL,
    status TEXT NOT NULL DEFAULT 'not_started'
        CHECK(status IN ('not_started', 'running', 'waiting', 'completed', 'failed', 'skipped')),
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL}, updated_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_runs_project ON runs(project_path);
CREATE INDEX idx_runs_feature ON runs(project_path, feature_id);
CREATE INDEX idx_runs_status ON runs(status);
CREATE INDEX idx_runs_feature_status ON runs(project_path, feature_id, status);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
    type TEXT NOT NULL CHECK(type IN ('status_change', 'artifact_registered', 'annotation_updated',
                                      'waiting_for_user', 'btw_update', 'subflow_registered')),
    step TEXT, unit TEXT, data TEXT, parent_step_id TEXT,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_events_run_id ON events(run_id);
CREATE INDEX idx_events_type ON events(type);
CREATE INDEX idx_events_created ON events(created_at);
CREATE INDEX idx_events_run_step ON events(run_id, step);
CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT UNIQUE NOT NULL, run_id TEXT REFERENCES runs(id),
    path TEXT NOT NULL, type TEXT NOT NULL DEFAULT 'other', project_path TEXT NOT NULL,
    feature TEXT NOT NULL, step TEXT, subflow INTEGER NOT NULL DEFAULT 0, baseline TEXT DEFAULT NULL,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_artifacts_doc_id ON artifacts(doc_id);
CREATE INDEX idx_artifacts_run ON artifacts(run_id);
CREATE INDEX idx_artifacts_project_feature ON artifacts(project_path, feature);
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL REFERENCES artifacts(doc_id),
    run_id TEXT REFERENCES runs(id), content TEXT NOT NULL, data TEXT,
    parent_id INTEGER REFERENCES annotations(id),
    status TEXT NOT NULL DEFAULT 'open' CHECK(status IN ('open', 'resolved')),
    author TEXT NOT NULL DEFAULT 'user',
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL}, updated_at TEXT NOT NULL DEFAULT {_NOW_SQL});
"""

# Version 17: project roots and project id on runs, wider run statuses, artifact storage roots,
# plus columns this reader does not know (it must ignore them).
SCHEMA_V17 = f"""
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (17);
CREATE TABLE runs (
    id TEXT PRIMARY KEY NOT NULL, flow TEXT NOT NULL, feature_id TEXT NOT NULL,
    project_path TEXT NOT NULL, rp1_project_root TEXT, rp1_kb_root TEXT, rp1_work_root TEXT,
    project_id TEXT DEFAULT NULL, name TEXT DEFAULT NULL, harness TEXT DEFAULT NULL,
    status TEXT NOT NULL DEFAULT 'not_started'
        CHECK(status IN ('not_started', 'running', 'waiting', 'completed', 'failed', 'skipped',
                         'inactive', 'cancelled', 'abandoned')),
    worktree_path TEXT DEFAULT NULL,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL}, updated_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_runs_project ON runs(project_path);
CREATE INDEX idx_runs_project_id ON runs(project_id);
CREATE INDEX idx_runs_feature ON runs(project_path, feature_id);
CREATE INDEX idx_runs_status ON runs(status);
CREATE INDEX idx_runs_feature_status ON runs(project_path, feature_id, status);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
    type TEXT NOT NULL CHECK(type IN ('status_change', 'artifact_registered', 'annotation_updated',
                                      'waiting_for_user', 'btw_update', 'subflow_registered')),
    step TEXT, unit TEXT, data TEXT, parent_step_id TEXT, session_id TEXT DEFAULT NULL,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_events_run_id ON events(run_id);
CREATE INDEX idx_events_type ON events(type);
CREATE INDEX idx_events_created ON events(created_at);
CREATE INDEX idx_events_run_step ON events(run_id, step);
CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT UNIQUE NOT NULL, run_id TEXT REFERENCES runs(id),
    path TEXT NOT NULL, type TEXT NOT NULL DEFAULT 'other',
    storage_root TEXT NOT NULL DEFAULT 'project' CHECK(storage_root IN ('absolute', 'project', 'work_dir')),
    project_path TEXT NOT NULL, feature TEXT NOT NULL, step TEXT, subflow INTEGER NOT NULL DEFAULT 0,
    baseline TEXT DEFAULT NULL, label TEXT DEFAULT NULL,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE INDEX idx_artifacts_doc_id ON artifacts(doc_id);
CREATE INDEX idx_artifacts_run ON artifacts(run_id);
CREATE INDEX idx_artifacts_project_feature ON artifacts(project_path, feature);
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL REFERENCES artifacts(doc_id),
    run_id TEXT REFERENCES runs(id), content TEXT NOT NULL, data TEXT,
    parent_id INTEGER REFERENCES annotations(id),
    status TEXT NOT NULL DEFAULT 'open' CHECK(status IN ('open', 'resolved')),
    author TEXT NOT NULL DEFAULT 'user',
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL}, updated_at TEXT NOT NULL DEFAULT {_NOW_SQL});
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, description TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', payload TEXT, project_path TEXT, result TEXT,
    created_at TEXT NOT NULL DEFAULT {_NOW_SQL}, updated_at TEXT NOT NULL DEFAULT {_NOW_SQL});
"""

SCHEMAS = {6: SCHEMA_V6, 17: SCHEMA_V17}


def iso_ms(dt: datetime) -> str:
    """rp1's timestamp format: ISO-8601 UTC, milliseconds, `Z`."""
    return iso_of(dt)


class FakeClock:
    """A deterministic clock: each call returns the previous time plus `step`."""

    def __init__(self, start: datetime | str = "2026-11-25T21:00:00.000Z", step: timedelta = timedelta(seconds=1)):
        self.now = datetime.fromisoformat(start) if isinstance(start, str) else start
        self.step = step

    def __call__(self) -> datetime:
        self.now = self.now + self.step
        return self.now


def create_db(path: str | Path, schema_version: int = 17) -> Path:
    """Create an empty rp1 database in WAL mode with the v6 or v17 schema."""
    if schema_version not in SCHEMAS:
        raise ValueError(f"schema_version must be one of {sorted(SCHEMAS)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA_V17 if schema_version == 17 else SCHEMA_V6)
        conn.commit()
    finally:
        conn.close()
    return path


class Rp1Writer:
    """Append runs and events like `rp1 agent-tools emit` does. Not used by the reader."""

    def __init__(self, path: str | Path, *, clock: Callable[[], datetime] | None = None,
                 machines: MachineRegistry | None = None) -> None:
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path, timeout=5, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout = 5000")
        self.clock = clock or (lambda: datetime.now(UTC))
        self.machines = machines or MachineRegistry.discover(None)
        self.run_cols = {r[1] for r in self.conn.execute("PRAGMA table_info(runs)")}
        self._flows: dict[str, str] = {}

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Rp1Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------------------------
    def start_run(self, flow: str, *, project_path: str | Path, run_id: str | None = None,
                  feature_id: str = "feature", name: str | None = None, project_id: str | None = None,
                  harness: str | None = None) -> str:
        """Insert a `runs` row (no events yet) and return its id."""
        run_id = run_id or str(uuid.uuid4())
        now = iso_ms(self.clock())
        values: dict[str, Any] = {"id": run_id, "flow": flow, "feature_id": feature_id,
                                  "project_path": str(project_path), "name": name, "harness": harness,
                                  "created_at": now, "updated_at": now}
        if "project_id" in self.run_cols:
            values["project_id"] = project_id
        if "rp1_project_root" in self.run_cols:
            values["rp1_project_root"] = str(project_path)
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.conn.execute(f"INSERT INTO runs ({cols}) VALUES ({marks})", tuple(values.values()))
        self._flows[run_id] = flow
        return run_id

    def step(self, run_id: str, step: str, status: str = "running", *, unit: str | None = None,
             data: dict[str, Any] | None = None, parent_step_id: str | None = None) -> int:
        """A `status_change` event, preceded by rp1's synthetic skipped/completed rows."""
        t = self.clock()
        payload = {"status": status, **(data or {})}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            machine = self.machines.get(self._flow(run_id))
            if machine and unit is None and ":" not in step and step in machine.states:
                self._synthetic(run_id, machine, step, status, t - timedelta(milliseconds=1))
            event_id = self._insert(run_id, "status_change", step, unit, payload, t, parent_step_id)
            self._touch(run_id, t)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return event_id

    def run_status(self, run_id: str, status: str) -> int:
        """A run-level row (no step): `cancelled` / `abandoned` (manual end) or `inactive` (idle 24 h)."""
        t = self.clock()
        event_id = self._insert(run_id, "status_change", None, None, {"status": status}, t)
        self._touch(run_id, t)
        return event_id

    def end_run(self, run_id: str, status: str = "cancelled") -> int:
        return self.run_status(run_id, status)

    def wait_for_user(self, run_id: str, step: str | None, message: str, **extra: Any) -> int:
        """A `waiting_for_user` prompt; the step (and run) wait until a later status row clears it."""
        t = self.clock()
        event_id = self._insert(run_id, "waiting_for_user", step, None, {"message": message, **extra}, t)
        self._touch(run_id, t)
        return event_id

    def artifact(self, run_id: str, step: str | None, path: str, *, type: str = "markdown",
                 subflow: bool = False, feature: str | None = None) -> int:
        """An `artifact_registered` event plus its `artifacts` row (doc_id derived from the path)."""
        t = self.clock()
        row = self.conn.execute("SELECT project_path, feature_id FROM runs WHERE id = ?", (run_id,)).fetchone()
        project_path, feature_id = row if row else ("", "")
        feature = feature or feature_id
        doc_id = hashlib.sha256(f"{project_path}\0{path}".encode()).hexdigest()[:16]
        data: dict[str, Any] = {"path": path, "feature": feature, "docId": doc_id}
        if subflow:
            data["subflow"] = True
        event_id = self._insert(run_id, "artifact_registered", step, None, data, t)
        self.conn.execute(
            "INSERT OR IGNORE INTO artifacts (doc_id, run_id, path, type, project_path, feature, step, subflow,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (doc_id, run_id, path, type, project_path, feature, step, int(subflow), iso_ms(t)))
        return event_id

    def btw(self, run_id: str, step: str | None, message: str) -> int:
        return self._insert(run_id, "btw_update", step, None, {"message": message}, self.clock())

    # -- internals --------------------------------------------------------------------------
    def _flow(self, run_id: str) -> str:
        if run_id not in self._flows:
            row = self.conn.execute("SELECT flow FROM runs WHERE id = ?", (run_id,)).fetchone()
            self._flows[run_id] = row[0] if row else ""
        return self._flows[run_id]

    def _insert(self, run_id: str, type_: str, step: str | None, unit: str | None, data: dict[str, Any],
                t: datetime, parent_step_id: str | None = None) -> int:
        cur = self.conn.execute(
            "INSERT INTO events (run_id, type, step, unit, data, parent_step_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run_id, type_, step, unit, json.dumps(data), parent_step_id, iso_ms(t)))
        return int(cur.lastrowid or 0)

    def _latest(self, run_id: str) -> dict[str, str]:
        rows = self.conn.execute(
            "SELECT step, json_extract(data, '$.status') FROM events WHERE run_id = ? AND type = 'status_change'"
            " AND step IS NOT NULL AND unit IS NULL ORDER BY id", (run_id,))
        return {step: status for step, status in rows if ":" not in step}

    def _synthetic(self, run_id: str, machine: StateMachine, step: str, status: str, t: datetime) -> None:
        latest = self._latest(run_id)
        order = machine.bfs_order()
        for prior in order[:order.index(step)]:
            if prior not in latest:
                self._insert(run_id, "status_change", prior, None, {"status": "skipped"}, t)
        if status in ("running", "completed"):  # rp1 closes open predecessors on either
            for pred in order:
                if (pred != step and pred in machine.transitive_predecessors(step)
                        and latest.get(pred) in ("running", "waiting")):
                    self._insert(run_id, "status_change", pred, None, {"status": "completed"}, t)

    def _touch(self, run_id: str, t: datetime) -> None:
        """Refresh the `runs.status` cache the way rp1 does (step rows only, v6-compatible values)."""
        statuses = list(self._latest(run_id).values())
        if "failed" in statuses:
            derived = "failed"
        elif "running" in statuses:
            derived = "running"
        elif "waiting" in statuses:
            derived = "waiting"
        elif statuses and all(s in ("completed", "skipped") for s in statuses):
            derived = "completed"
        else:
            derived = "not_started"
        self.conn.execute("UPDATE runs SET status = ?, updated_at = ? WHERE id = ?", (derived, iso_ms(t), run_id))


# -- shaped databases for the benchmarks and the equivalence tests -----------------------------
SHAPE_STEPS = ("requirements", "design", "tasks", "build", "verify", "archive")


class Shape:
    """How the runs of a generated database look: `events` rows per run over `steps` workflow steps, each
    with `units` units (`T1…`), `agents` sub-agent steps writing unit rows, artifact and progress (`btw`)
    rows written after a step's own status rows when `extras`, and `agent_prompts` of the runs left
    waiting on an unanswered sub-agent prompt. `plain` reproduces the original benchmark's rows (a unit
    row every third event, step rows alternating running/completed)."""

    __slots__ = ("name", "runs", "events", "steps", "units", "agents", "extras", "agent_prompts", "plain")

    def __init__(self, name: str, runs: int, events: int, *, steps: int = 6, units: int = 0, agents: int = 0,
                 extras: bool = False, agent_prompts: float = 0.0, plain: bool = False) -> None:
        self.name, self.runs, self.events, self.steps, self.units = name, runs, events, steps, units
        self.agents, self.extras, self.agent_prompts, self.plain = agents, extras, agent_prompts, plain

    def scaled(self, runs: int) -> Shape:
        return Shape(self.name, runs, self.events, steps=self.steps, units=self.units, agents=self.agents,
                     extras=self.extras, agent_prompts=self.agent_prompts, plain=self.plain)


# The shapes the status read must be fast on, each 1 000 000 events (a: the original benchmark's rows; b: ~43
# (step, unit) groups per run with unit, sub-agent, artifact and progress rows after the step rows; c: 300
# events per run over 3 steps of 100 units; d: b with half the runs waiting on a sub-agent prompt; e: 100 000
# short runs, for the size of what is kept between processes).
SHAPES = {
    "a": Shape("a", 10_000, 100, plain=True),
    "b": Shape("b", 10_000, 100, steps=5, units=7, agents=3, extras=True),
    "c": Shape("c", 3_334, 300, steps=3, units=100),
    "d": Shape("d", 10_000, 100, steps=5, units=7, agents=3, extras=True, agent_prompts=0.5),
    "e": Shape("e", 100_000, 10, steps=3, units=2),
}


ShapedRow = tuple[str, str | None, str | None, str]


def _shaped_run(shape: Shape, rng: Any) -> list[ShapedRow]:
    """One run's rows (type, step, unit, data) in write order."""
    dumps = json.dumps
    out: list[ShapedRow] = []
    if shape.plain:
        for k in range(shape.events):
            step = SHAPE_STEPS[min(k * len(SHAPE_STEPS) // shape.events, len(SHAPE_STEPS) - 1)]
            unit = f"T{k % 7}" if k % 3 == 0 else None
            out.append(("status_change", "task-builder:building" if unit else step, unit,
                        dumps({"status": "running" if k % 2 == 0 else "completed"})))
        return out
    steps = list(SHAPE_STEPS[:shape.steps])
    reached = len(steps) - rng.choice((0, 0, 1))  # how far the run got
    ending = rng.choice(("completed", "completed", "running", "failed", "waiting"))
    prompt_agent = rng.random() < shape.agent_prompts
    budget = shape.events - (2 if prompt_agent else 0)
    per_step = budget // reached
    for i, step in enumerate(steps[:reached]):
        last = i == reached - 1
        own = ["running"] if last and ending != "completed" else ["running", "completed"]
        if last and ending in ("failed", "waiting"):
            own = ["running", ending]
        out += [("status_change", step, None, dumps({"status": s})) for s in own]
        if last and ending == "waiting" and rng.random() < 0.5:
            out.append(("waiting_for_user", step, None, dumps({"message": f"Approve {step}?"})))
        room = (budget - len(out)) if last else per_step - len(own)
        for k in range(max(0, room)):
            u = k % max(1, shape.units)
            kind = k % 10
            if shape.extras and kind == 8:
                out.append(("artifact_registered", step, None, dumps({"path": f"{step}-{k}.md"})))
            elif shape.extras and kind == 9:
                out.append(("btw_update", step, None, dumps({"message": f"progress {k}"})))
            elif shape.agents and kind == 7:
                agent = ("task-builder:building", "feature-verifier:verifying", "code-checker:checking")[
                    (k // 10) % shape.agents]
                out.append(("status_change", agent, f"T{u % 3 + 1}", dumps({"status": "running"})))
            elif shape.units:
                status = "completed" if (k // shape.units) % 2 or not last else "running"
                out.append(("status_change", step, f"T{u + 1}", dumps({"status": status})))
            else:
                out.append(("btw_update", step, None, dumps({"message": f"progress {k}"})))
    if prompt_agent:
        out.insert(len(out) - 3, ("waiting_for_user", "feature-verifier:verifying", None,
                                  dumps({"message": "May I run the slow suite?"})))
        out.append(("btw_update", steps[reached - 1], None, dumps({"message": "waiting on the verifier"})))
    return out[:shape.events]


def build_shaped_db(path: str | Path, shape: Shape, *, seed: int = 0, schema_version: int = 17,
                    concurrent: int = 64) -> Path:
    """A database of `shape`'s runs, written as rp1 writes concurrent runs: rows of about `concurrent` runs
    interleaved in one time order (so a run's rows are spread over the file). One transaction."""
    import random

    rng = random.Random(seed)
    path = create_db(path, schema_version)
    conn = sqlite3.connect(path)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    clock = [0]

    def stamp() -> str:
        clock[0] += 1
        return iso_ms(t0 + timedelta(milliseconds=clock[0] * 7))

    conn.execute("BEGIN")
    for start in range(0, shape.runs, concurrent):
        # rp1's run ids are random UUIDs: a run's place in the id order says nothing of its place in time
        batch = [(str(uuid.UUID(int=rng.getrandbits(128), version=4)), _shaped_run(shape, rng))
                 for _ in range(start, min(start + concurrent, shape.runs))]
        created = stamp()
        conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at)"
                         " VALUES (?, 'build', 'feat', ?, ?, ?)",
                         [(rid, f"/projects/p{rng.randrange(20)}", created, created) for rid, _ in batch])
        queues = [(rid, rows[::-1]) for rid, rows in batch]
        rows_out = []
        while queues:
            i = rng.randrange(len(queues))
            rid, rows = queues[i]
            type_, step, unit, data = rows.pop()
            rows_out.append((rid, type_, step, unit, data, stamp()))
            if not rows:
                queues[i] = queues[-1]
                queues.pop()
        conn.executemany("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                         rows_out)
    conn.commit()
    conn.close()
    return path
