"""The rp1 event source the HUD, console and CLI call: feed, one run's timeline, current step.

Projections are cached per run and keyed by the run's newest event id, and whole answers are
cached by the files' stat signature, so a HUD polling every few hundred ms costs two `stat` calls
while nothing changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcs_tui.rp1.db import DbState, Rp1Db, RunRow, Scope, project_scope
from rcs_tui.rp1.machines import MachineRegistry, default_plugin_roots
from rcs_tui.rp1.projection import Projection, project
from rcs_tui.rp1.timeline import Timeline, build_timeline, run_json

FEED_FILTERS = ("running", "waiting", "failed", "completed", "cancelled", "abandoned", "inactive", "not_started")


@dataclass(frozen=True)
class RunSummary:
    """One line of the run feed."""

    run: RunRow
    projection: Projection

    @property
    def status(self) -> str:
        return self.projection.status

    def to_json(self) -> dict[str, Any]:
        p = self.projection
        return {**run_json(self.run), "status": p.status, "current_step": p.current_step,
                "steps": dict(p.steps), "waiting": [_prompt(e) for e in p.pending_prompts],
                "last_event_id": p.last_event_id, "last_activity": p.last_activity}


def _prompt(ev: Any) -> dict[str, Any]:
    msg = next((ev.data[k] for k in ("message", "question", "prompt", "text") if isinstance(ev.data.get(k), str)), "")
    return {"step": ev.step, "message": msg, "created_at": ev.created_at}


@dataclass(frozen=True)
class Feed:
    """A page of runs plus the database status (None when all is well)."""

    runs: tuple[RunSummary, ...]
    total: int
    state: DbState

    @property
    def status(self) -> str | None:
        return self.state.message


class Rp1Source:
    """Read-only facade over one rp1 database, scoped to a project unless `scope` is None."""

    def __init__(self, db_path: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None,
                 all_projects: bool = False, plugin_roots: list[Path] | None = None,
                 machines: MachineRegistry | None = None) -> None:
        self.db = Rp1Db(db_path)
        root_path = Path(root) if root else Path.cwd()
        self.scope: Scope | None = None if all_projects else project_scope(root_path)
        self.machines = machines or MachineRegistry.discover(
            plugin_roots if plugin_roots is not None else default_plugin_roots(root_path.resolve()))
        self._proj: dict[str, tuple[int, Projection]] = {}
        self._status: dict[str, tuple[int, str]] = {}  # run -> (newest event id, derived status)
        self._runs_cache: tuple[tuple[Any, ...], list[RunRow]] | None = None
        self._current_cache: tuple[tuple[Any, ...], RunSummary | None] | None = None

    @property
    def state(self) -> DbState:
        return self.db.state

    # -- runs and projections ---------------------------------------------------------------
    def _runs(self) -> list[RunRow]:
        sig = self.db.signature()
        if self._runs_cache and self._runs_cache[0] == sig and self.db.state.ok:
            return self._runs_cache[1]
        rows = self.db.runs(self.scope)
        if self.db.state.ok:
            self._runs_cache = (sig, rows)
        return rows

    def _project(self, runs: list[RunRow]) -> list[RunSummary]:
        stale = [r.id for r in runs if self._proj.get(r.id, (-1,))[0] != r.last_event_id]
        if stale:
            events = self.db.events(stale)
            if not self.db.state.ok:
                return []
            last = {r.id: r.last_event_id for r in runs}
            for rid in stale:
                self._proj[rid] = (last[rid], project(events.get(rid, [])))
        return [RunSummary(r, self._proj[r.id][1]) for r in runs if r.id in self._proj]

    def _statuses(self, runs: list[RunRow]) -> dict[str, str]:
        """Derived status of each run, from the narrow status rows rather than full events.

        `project` runs over the few rows per run `Rp1Db.status_rows` keeps, so the rule is the same
        one the full projection applies; only a handful of stale runs take the full-event path.
        """
        out: dict[str, str] = {}
        stale: list[RunRow] = []
        for r in runs:
            known = self._status.get(r.id) or self._proj.get(r.id)
            if known and known[0] == r.last_event_id:
                value = known[1]
                out[r.id] = value if isinstance(value, str) else value.status
            else:
                stale.append(r)
        if len(stale) > 50:
            rows, odd = self.db.status_rows(self.scope)
            if not self.db.state.ok:
                return {}
            full = []
            for r in stale:
                if r.id in odd:
                    full.append(r)
                    continue
                out[r.id] = project(rows.get(r.id, ())).status
                self._status[r.id] = (r.last_event_id, out[r.id])
            stale = full
        for i in range(0, len(stale), 500):
            for summary in self._project(stale[i:i + 500]):
                out[summary.run.id] = summary.status
            if not self.db.state.ok:
                return {}
        return out

    def feed(self, *, status: str | None = None, workflow: str | None = None, limit: int = 50,
             offset: int = 0) -> Feed:
        """Runs ordered by latest activity, filtered by derived status and/or workflow."""
        runs = self._runs()
        if not self.db.state.ok:
            return Feed((), 0, self.db.state)
        if workflow:
            runs = [r for r in runs if r.flow == workflow]
        if not status:
            page = self._project(runs[offset:offset + limit])
            return Feed(tuple(page), len(runs), self.db.state)
        statuses = self._statuses(runs)
        if not self.db.state.ok:
            return Feed((), 0, self.db.state)
        matched = [r for r in runs if statuses.get(r.id) == status]
        page = self._project(matched[offset:offset + limit])
        return Feed(tuple(page), len(matched), self.db.state)

    def current(self) -> RunSummary | None:
        """The run this project is in right now: the most recently active non-terminal run, else the latest.

        Cheap on repeat: answered from cache while the files' stat signature is unchanged.
        """
        sig = self.db.signature()
        if self._current_cache and self._current_cache[0] == sig and self.db.state.ok:
            return self._current_cache[1]
        runs = self._runs()
        result: RunSummary | None = None
        for i in range(0, min(len(runs), 200), 20):
            for summary in self._project(runs[i:i + 20]):
                if summary.status in ("running", "waiting"):
                    result = summary
                    break
            if result:
                break
        if result is None and runs:
            first = self._project(runs[:1])
            result = first[0] if first else None
        if self.db.state.ok:
            self._current_cache = (sig, result)
        return result

    def timeline(self, run_id: str) -> Timeline | None:
        """Everything about one run (None if unknown or the database is unreadable)."""
        run = self.db.run(run_id)
        if run is None:
            return None
        events = self.db.events([run.id]).get(run.id, [])
        artifacts = self.db.artifacts(run.id)
        if not self.db.state.ok:
            return None
        agents = {e.step.split(":", 1)[0] for e in events if e.namespaced and e.step}
        return build_timeline(run, events, artifacts, self.machines.get(run.flow),
                              {a: self.machines.get(a) for a in agents})
