"""The rp1 event source the HUD, console and CLI call: feed, one run's timeline, current step.

Projections are cached per run and keyed by the run's newest event id, and whole answers are
cached by the files' stat signature, so a HUD polling every few hundred ms costs two `stat` calls
while nothing changes. The run list, derived statuses and the projections shown also outlive the
process (`StatusStore`, as of the database's newest event id), so a new process reads only the events
written since and derives only the runs they belong to: the status line's "which run is current" and
the status-filtered feed do not re-read every event, nor every run's newest event, on every start.

Every answer (a feed, the current run, a timeline) is read from one database state: all its reads run
in one read transaction (`Rp1Db.snapshot`), so what it derives never mixes two commits of rp1's.
"""

from __future__ import annotations

import os
from _thread import RLock
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rcs_tui.core.frozen import Frozen, set_field
from rcs_tui.files.collector import paused
from rcs_tui.rp1.db import DbState, Marks, Rp1Db, RunRow, Scope, project_id_at, project_scope, run_json
from rcs_tui.rp1.projection import Projection, extend, project, status_of
from rcs_tui.rp1.status_store import StatusStore

if TYPE_CHECKING:
    from rcs_tui.rp1.machines import MachineRegistry
    from rcs_tui.rp1.timeline import Timeline

T = TypeVar("T")
FEED_FILTERS = ("running", "waiting", "failed", "completed", "cancelled", "abandoned", "inactive", "not_started")


class RunSummary(Frozen):
    """One line of the run feed.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("run", "projection")
    run: RunRow
    projection: Projection

    def __init__(self, run: RunRow, projection: Projection) -> None:
        set_field(self, "run", run)
        set_field(self, "projection", projection)

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


class Feed(Frozen):
    """A page of runs plus the database status (None when all is well).
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("runs", "total", "state")
    runs: tuple[RunSummary, ...]
    total: int
    state: DbState

    def __init__(self, runs: tuple[RunSummary, ...], total: int, state: DbState) -> None:
        set_field(self, "runs", runs)
        set_field(self, "total", total)
        set_field(self, "state", state)

    @property
    def status(self) -> str | None:
        return self.state.message


def _activity(run: RunRow) -> tuple[int, str]:
    """The feed's order (newest first when reversed): newest event, then creation time."""
    return run.last_event_id, run.created_at or ""


class Rp1Source:
    """Read-only facade over one rp1 database, scoped to a project unless `scope` is None.

    One source may serve several threads (the console's views and its loader share one, so a run read
    by one is not read again by the other): `feed`, `current` and `timeline` hold `lock`, and a caller
    reading `state` after a call holds it across both. Each of them reads one database state (`_answer`).
    """

    def __init__(self, db_path: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None,
                 all_projects: bool = False, plugin_roots: list[Path] | None = None,
                 machines: MachineRegistry | None = None) -> None:
        self.db = Rp1Db(db_path)
        self.lock = RLock()
        root_path = Path(root) if root else Path.cwd()
        self.scope: Scope | None = None if all_projects else project_scope(root_path)
        self._machines = machines
        self._plugin_roots, self._root_path = plugin_roots, root_path
        self._proj: dict[str, tuple[int, Projection]] = {}
        self._status: dict[str, tuple[int, str]] = {}  # run -> (newest event id, derived status)
        self._stored_status: dict[str, tuple[int, str | None]] = {}  # the same from a trusted store
        # (signature, answer); a None signature (`_key`: a commit may still be landing) never matches
        self._runs_cache: tuple[tuple[Any, ...] | None, list[RunRow]] | None = None
        self._kept_ids: tuple[list[RunRow], set[str]] | None = None  # a kept list and its run ids
        self._current_cache: tuple[tuple[Any, ...] | None, RunSummary | None] | None = None
        self._store: StatusStore | None = None
        self._derived_from: tuple[list[RunRow], list[RunRow], set[str]] | None = None  # (old, merged, changed)
        self._last_statuses: tuple[list[RunRow], dict[str, str]] | None = None
        self._marks: tuple[Any, Marks] | None = None  # (db inode, where the database stood) of the kept runs
        self._store_sig: Any = None
        self._dirty = False  # something learned since the store was read or written
        self._unverified: set[str] = set()  # runs whose row came from the store and was not read since
        self._untrusted: StatusStore | None = None  # the store the kept rows came from, not yet checked

    @property
    def machines(self) -> MachineRegistry:
        """The workflow definitions, found on first use: only a timeline needs them, not a feed or a status line."""
        if self._machines is None:
            from rcs_tui.rp1.machines import MachineRegistry, default_plugin_roots

            roots = self._plugin_roots
            self._machines = MachineRegistry.discover(
                roots if roots is not None else default_plugin_roots(self._root_path.resolve()))
        return self._machines

    @property
    def state(self) -> DbState:
        return self.db.state

    def _answer(self, answer: Callable[[], T], *, save: bool = True) -> T:
        """`answer()` with all its reads in one read transaction: one database state, never two.

        Answered again when that read must be (the file changed under an `immutable` read: what was
        learned from it is dropped; or the database was busy). What was learned is kept for the next
        process only from an answer read whole. The collector is paused meanwhile: a first answer builds
        a row for every run (and the store keeps them all), and each batch of those set off a collection
        walking every object alive, a quarter of the time at 100 000 runs. The project's rp1 id is looked
        at first: written or removed since, the project's runs are others (`rescope`).
        """
        self.rescope()
        with paused():
            for _attempt in range(self.db.retries):
                with self.db.snapshot() as snap:
                    result = answer()
                if not snap.again:
                    if save and self.db.state.ok:
                        self._save()
                    return result
                if snap.torn:
                    self._forget()
            return result

    # -- runs and projections ---------------------------------------------------------------
    def _key(self, sig: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The signature to cache an answer under: None (look again next time) while a commit may still
        be landing unseen (`Rp1Db.settled`)."""
        return sig if self.db.settled(sig) else None

    def _ids_of(self, rows: list[RunRow]) -> set[str]:
        """The run ids of a kept list (made once per list)."""
        if self._kept_ids is None or self._kept_ids[0] is not rows:
            self._kept_ids = (rows, {r.id for r in rows})
        return self._kept_ids[1]

    def _runs(self) -> list[RunRow]:
        """Runs in scope, newest activity first: all of them once, then only those that changed.

        The starting list is the one this process kept, else the one a previous process left in the
        store (as of the database's newest event then), else every run read from the database. From a
        kept list, the new events' runs, runs updated since and new runs are read and merged in, so a
        refresh (and a later process) costs a range scan of what changed, not a pass over every run.
        """
        sig = self.db.signature()
        if self._runs_cache and self._runs_cache[0] == sig and self.db.state.ok:
            return self._runs_cache[1]
        marks: Marks | None
        head = sig[0][0] if sig[0] else None
        if self._runs_cache is None:
            seeded = self._stored()
            if seeded.rows is not None and seeded.marks is not None:
                self._runs_cache, self._marks = (None, seeded.rows), (head, seeded.marks)
                self._unverified = {r.id for r in seeded.rows}
                self._untrusted = seeded  # until the database shows it is the one the store describes
        kept = self._runs_cache[1] if self._runs_cache else None
        if kept is not None and self._marks is not None and self._marks[0] == head:
            delta = self.db.runs_since(self.scope, self._marks[1])
            if delta is not None and self.db.state.ok:
                if self._untrusted is not None:
                    self._trust(self._untrusted)
                changed, marks, touched = delta
                changed = list({r.id: r for r in changed}.values())  # a new run with events comes twice
                # the runs read again, and kept runs that changed but are no longer in scope (moved to
                # another project): a kept row of either is dropped
                ids = {r.id for r in changed}
                gone = touched - ids
                if gone:  # mostly other projects' runs: only kept ones matter
                    ids |= gone & self._ids_of(kept)
                moved = sorted(changed, key=_activity, reverse=True)
                if not ids:
                    rows = kept  # the same list: what was derived from it still holds
                elif all(r.last_event_id > self._marks[1].top for r in changed):  # all newer than every kept run
                    rows = moved + [r for r in kept if r.id not in ids]
                else:
                    rows = sorted([*moved, *(r for r in kept if r.id not in ids)], key=_activity, reverse=True)
                self._dirty = self._dirty or marks != self._marks[1]
                self._unverified.difference_update(ids)  # read just now
                self._runs_cache, self._marks = (self._key(sig), rows), (head, marks)
                self._derived_from = (kept, rows, ids)
                return rows
            if self.db.state.ok and self.db.describes(self._marks[1]) is False:
                self._forget()  # other contents at this path (a copy written over it): nothing kept holds
        store = self._stored()
        kept_runs = self.db.runs_after(self.scope, store.marks, store.entries) if store.marks is not None else None
        if kept_runs is not None and self.db.state.ok:
            # The store describes this database up to `as_of`: its statuses and projections hold for the
            # runs whose newest event is still the one they were derived at (`_known` checks).
            rows, marks, moved_ids = kept_runs
            self._trust(store)
            self._dirty = self._dirty or bool(moved_ids) or len(rows) != len(store.entries)
        else:
            marks, rows, self._dirty = self.db.runs_marks(), self.db.runs(self.scope), True
        if self.db.state.ok and marks is not None:
            self._runs_cache, self._marks = (self._key(sig), rows), (head, marks)
            self._unverified, self._untrusted = set(), None
        return rows

    def _project(self, runs: list[RunRow]) -> list[RunSummary]:
        """Each run's projection at its newest event: kept, extended, or derived from all its events.

        A kept projection of a run that moved on is extended by the rows written since (one seek of the
        `events(run_id)` index per run), never derived again from every row: on a busy database the
        runs on screen move many times a second, and each has hundreds of rows.
        """
        stale = [r for r in runs if self._proj.get(r.id, (-1,))[0] != r.last_event_id]
        if stale:
            grow = {r.id: kept[1].last_event_id for r in stale
                    if (kept := self._proj.get(r.id)) and kept[1].last_event_id < r.last_event_id}
            fresh = [r.id for r in stale if r.id not in grow]
            events = self.db.events(fresh) if fresh else {}
            more = self.db.events_after(grow) if grow and self.db.state.ok else {}
            if not self.db.state.ok:
                return []
            for r in stale:
                if r.id in grow:
                    projection = extend(self._proj[r.id][1], more.get(r.id, []))
                else:
                    projection = project(events.get(r.id, []))
                self._proj[r.id] = (projection.last_event_id, projection)
                self._remember(r.id, projection.last_event_id, projection.status)
        return [RunSummary(r, self._proj[r.id][1]) for r in runs if r.id in self._proj]

    # -- statuses kept between processes ----------------------------------------------------
    def _stored(self) -> StatusStore:
        """The persistent statuses, read once per database file (again after it is replaced)."""
        head = self.db.signature()[0]
        identity = head[0] if head else None  # the inode: a commit changes size and mtime, not the file
        if self._store is None or self._store_sig != identity:
            if self._store is not None:  # another database file at this path: nothing kept holds
                self._forget()
            scope = None if self.scope is None else (self.scope.project_path, self.scope.project_id)
            self._store = StatusStore(self.db.path, scope).load()
            self._store_sig = identity
        return self._store

    def rescope(self) -> bool:
        """Take in `.rp1/project_id` written, changed or removed since this source began: the project's runs
        are then others (rp1 names a project by that id as well as by its path). True when the scope moved;
        what was learned of the runs in the old scope is dropped, the kept statuses of the new one found."""
        if self.scope is None:
            return False
        scope = Scope(self.scope.project_path, project_id_at(Path(self.scope.project_path)))
        if scope == self.scope:
            return False
        with self.lock:
            self.scope = scope
            self._forget()
            self._kept_ids = None
            self._store = self._store_sig = None
        return True

    def _forget(self) -> None:
        """Drop everything learned of this path's database: it now holds other contents."""
        self._proj, self._status, self._stored_status = {}, {}, {}
        self._runs_cache = self._marks = self._derived_from = self._last_statuses = self._current_cache = None
        self._unverified, self._untrusted = set(), None

    def _trust(self, store: StatusStore) -> None:
        """Take in the store's statuses and projections once it proved to describe this database up to its
        newest event then (`_known` still checks each against the run's newest event id now)."""
        self._untrusted = None
        self._stored_status = store.entries  # consulted after what this process derived (`_known`)
        for rid, proj in store.projections.items():
            self._proj.setdefault(rid, proj)
        rows = store.rows
        if rows is not None and self._last_statuses is None:
            statuses = {rid: st for rid, (_, st) in store.entries.items() if st is not None}
            if len(statuses) == len(store.entries):
                # Every stored run has its status: the next `_statuses` over the list merged from these rows
                # looks only at the runs that moved (as after a refresh in the same process).
                self._last_statuses = (rows, statuses)

    def _remember(self, run_id: str, last_event_id: int, status: str) -> None:
        self._status[run_id] = (last_event_id, status)
        self._dirty = True

    def _save(self) -> None:
        """Keep what this process learned for the next one: the run list as of its marks, each run's
        status where derived at its newest event, and the projections shown."""
        if (not self._dirty or self._store is None or self._runs_cache is None or self._marks is None
                or not self._store.due()):
            return
        runs = self._runs_cache[1]
        statuses = {r.id: self._known(r) for r in runs}
        shown = {r.id: self._proj[r.id] for r in runs if self._proj.get(r.id, (-1,))[0] == r.last_event_id}
        before = self._store.saved_at
        self._store.save(self._marks[1], runs, statuses, shown)
        if self._store.saved_at != before:
            self._dirty = False

    def _known(self, run: RunRow) -> str | None:
        """The run's derived status when one was derived at its current newest event id."""
        proj = self._proj.get(run.id)
        if proj and proj[0] == run.last_event_id:
            return proj[1].status
        known = self._status.get(run.id) or self._stored_status.get(run.id)
        return known[1] if known and known[0] == run.last_event_id else None

    def _statuses(self, runs: list[RunRow]) -> dict[str, str]:
        """Derived status of each run: from the kept statuses, else from the narrow status rows.

        `project` runs over the few rows per run `Rp1Db.status_rows` keeps, so the rule is the same
        one the full projection applies; only a handful of stale runs take the full-event path.
        """
        out: dict[str, str] = {}
        stale: list[RunRow] = []
        last = self._last_statuses
        base = self._derived_from
        if last is not None and last[0] is runs:
            return last[1]
        if last is not None and base is not None and base[0] is last[0] and base[1] is runs:
            # `runs` is the last list with a few runs merged in: only those can have a new status.
            out = dict(last[1])
            candidates = [r for r in runs if r.id in base[2]]
        else:
            candidates = runs
        for r in candidates:
            known = self._known(r)
            if known is not None:
                out[r.id] = known
            else:
                stale.append(r)
        derived = self._derive(stale)
        if derived is None:
            return {}
        out.update(derived)
        self._last_statuses = (runs, out)
        return out

    def _derive(self, stale: list[RunRow]) -> dict[str, str] | None:
        """The status of each run not known at its newest event (None when the database failed).

        A run whose projection is kept is extended by its events since. The others are derived from the
        narrow status rows (`Rp1Db.status_rows`): every run's in scope at once when there are many, else
        only these runs' (a few seeks of the `(run_id, step)` index, not the hundreds of events a full
        projection reads). The runs those rows cannot answer exactly, or that have events but no rows
        there, are projected from all their events.
        """
        out: dict[str, str] = {}
        grow = [r for r in stale if r.id in self._proj]
        stale = [r for r in stale if r.id not in self._proj]
        if grow:
            out.update((summary.run.id, summary.status) for summary in self._project(grow))
            if not self.db.state.ok:
                return None
        if not stale:
            return out
        many = len(stale) > 50
        rows, odd = self.db.status_rows(self.scope, None if many else [r.id for r in stale])
        if not self.db.state.ok:
            return None
        full = []
        for r in stale:
            kept = rows.get(r.id, ())
            if r.id in odd or (not kept and r.last_event_id and not many):
                full.append(r)
                continue
            out[r.id] = status_of(kept)
            self._remember(r.id, r.last_event_id, out[r.id])
        for i in range(0, len(full), 500):
            for summary in self._project(full[i:i + 500]):
                out[summary.run.id] = summary.status
            if not self.db.state.ok:
                return None
        return out

    def _fresh(self, page: list[RunSummary]) -> list[RunSummary]:
        """The page with each run row that came from the store read again by id before it is shown.

        Which runs moved and how they sort is known from the events and `updated_at`; a row rewritten
        without either would otherwise show what a previous process saw. A page is a few hundred rows
        by primary key, once per run per process.
        """
        need = [s.run.id for s in page if s.run.id in self._unverified]
        if not need:
            return page
        fresh = self.db.runs_by_id(need)
        if fresh is None:
            return page
        gone = set(need) - fresh.keys()
        if gone:  # a run the store lists is no longer there: nothing kept holds, read every run next time
            self._forget()
        else:
            self._unverified.difference_update(need)
            kept = self._runs_cache[1] if self._runs_cache else []
            at = {r.id: i for i, r in enumerate(kept)}
            for rid, row in fresh.items():  # the kept list too, so the next page shows the row read now
                if (i := at.get(rid)) is not None:
                    kept[i] = row._replace(last_event_id=kept[i].last_event_id)
        out = []
        for s in page:
            again = fresh.get(s.run.id)
            if s.run.id not in gone:
                out.append(s if again is None else RunSummary(again._replace(last_event_id=s.run.last_event_id),
                                                              s.projection))
        return out

    def feed(self, *, status: str | None = None, workflow: str | None = None, limit: int = 50,
             offset: int = 0) -> Feed:
        """Runs ordered by latest activity, filtered by derived status and/or workflow."""
        with self.lock:
            return self._answer(lambda: self._feed(status=status, workflow=workflow, limit=limit, offset=offset))

    def _feed(self, *, status: str | None = None, workflow: str | None = None, limit: int = 50,
              offset: int = 0) -> Feed:
        runs = self._runs()
        if not self.db.state.ok:
            return Feed((), 0, self.db.state)
        if workflow:
            runs = [r for r in runs if r.flow == workflow]
        if not status:
            page = self._fresh(self._project(runs[offset:offset + limit]))
            return Feed(tuple(page), len(runs), self.db.state)
        statuses = self._statuses(runs)
        if not self.db.state.ok:
            return Feed((), 0, self.db.state)
        matched = [r for r in runs if statuses.get(r.id) == status]
        page = self._fresh(self._project(matched[offset:offset + limit]))
        return Feed(tuple(page), len(matched), self.db.state)

    def current(self) -> RunSummary | None:
        """The run this project is in right now: the most recently active non-terminal run, else the latest.

        Cheap on repeat: answered from cache while the files' stat signature is unchanged; a new process
        derives only the runs whose newest event changed since a status was last kept (the idle case:
        none, so only the latest run's own events are read).
        """
        with self.lock:
            return self._answer(self._current)

    def _current(self) -> RunSummary | None:
        sig = self.db.signature()
        if self._current_cache and self._current_cache[0] == sig and self.db.state.ok:
            return self._current_cache[1]
        runs = self._runs()[:200]
        result: RunSummary | None = None
        for i in range(0, len(runs), 20):
            batch = runs[i:i + 20]
            unknown = [r for r in batch if self._known(r) is None]
            if unknown and self._derive(unknown) is None:
                break
            active = next((r for r in batch if self._known(r) in ("running", "waiting")), None)
            if active is not None:
                found = self._project([active])
                result = found[0] if found else None
                break
        if result is None and runs and self.db.state.ok:
            first = self._project(runs[:1])
            result = first[0] if first else None
        if result is not None:
            result = self._fresh([result])[0]
        if self.db.state.ok:
            self._current_cache = (self._key(sig), result)
        return result

    def timeline(self, run_id: str) -> Timeline | None:
        """Everything about one run (None if unknown or the database is unreadable)."""
        with self.lock:
            return self._answer(lambda: self._timeline(run_id), save=False)

    def _timeline(self, run_id: str) -> Timeline | None:
        run = self.db.run(run_id)
        if run is None:
            return None
        events = self.db.events([run.id]).get(run.id, [])
        artifacts = self.db.artifacts(run.id)
        if not self.db.state.ok:
            return None
        agents = {e.step.split(":", 1)[0] for e in events if e.namespaced and e.step}
        from rcs_tui.rp1.timeline import build_timeline

        return build_timeline(run, events, artifacts, self.machines.get(run.flow),
                              {a: self.machines.get(a) for a in agents})
