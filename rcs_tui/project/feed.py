"""One project's snapshot documents, built as files change: what `snapshot --json [--follow]` prints and
the fleet reads, locally or over ssh.

`SnapshotFeed` keeps the project's loaders open so a follower rebuilds only the sections a change
touches; `follow_documents` yields the first document, then one per batch of changes the watcher sees.
Nothing here imports Textual (the fleet's remote side runs it headless). Nothing here writes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from rcs_tui.project.loader import WorldLoader
from rcs_tui.project.verdicts import doctor_part, judge, rp1_part
from rcs_tui.state.metrics import parse_time
from rcs_tui.views.snapshot_doc import (
    CONTRACT_VERSION,
    iso,
    same_content,
    summary_scopes,
    tasks_json,
    team_json,
)
from rcs_tui.views.snapshot_json import snapshot_json
from rcs_tui.views.world import World

REJUDGE_S = 15.0  # how often a followed document is judged again as time passes (a silent worker: 120 s)
REJUDGE: Any = object()  # the clock's mark in a follower's queue


class SnapshotFeed:
    """One project's snapshot documents, rebuilt section by section as files change."""

    def __init__(self, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                 clock: Callable[[], float] = time.time, with_doctor: bool = True, summary: bool = False,
                 scopes: bool = True, journal: bool = True) -> None:
        """`summary`: documents carry `summary_scopes` instead of every mode file of every scope (what the
        fleet keeps per project; no per-scope JSON is cached then). `scopes=False` (with `summary`): no
        `scopes` at all, for a reader that reports only the attention and the active set (`fleet --once`).
        `journal=False`: the doctor part leaves out the journal's findings (interrupted actions, leftover
        temporary files: a scan of the tree that no attention list or verdict reads), for that same reader."""
        self.loader = WorldLoader(root, session_id=session_id, rp1_db=rp1_db if rp1_db is not None else True,
                                  clock=clock)
        self.clock = clock
        self.with_doctor = with_doctor
        self.summary = summary
        self.scopes = scopes
        self.journal = journal
        self._rp1_source: Any = None
        self._rp1: dict[str, Any] | None = None
        self._doctor: dict[str, Any] | None = None
        self._scopes: dict[int, Any] = {}
        self._findings: dict[Any, Any] = {}  # per-scope doctor findings, reused while a scope is unchanged
        self._adopted: World | None = None
        self.seq = 0

    @property
    def root(self) -> Path:
        return self.loader.root

    def document(self, changed: Iterable[Path] | None = None) -> dict[str, Any]:
        """The next document in sequence (`seq` counts from 1)."""
        return self._numbered(self.build(changed))

    def _numbered(self, doc: dict[str, Any]) -> dict[str, Any]:
        self.seq += 1
        doc["seq"] = self.seq
        return doc

    @property
    def world(self) -> World | None:
        """The World the last document was built from (its own loader's, or the one `adopt` was given)."""
        return self._adopted if self._adopted is not None else self.loader.world

    def adopt(self, world: World) -> dict[str, Any]:
        """The next document, built from a complete World another reader of this project loaded (the console
        loads every session anyway): a recorder riding on it keeps no second picture of the project."""
        self._adopted = world
        self._rp1 = self._rp1_json()
        self._doctor = self._doctor_json(world)
        return self._numbered(self._build(world))

    def first_look(self) -> dict[str, Any]:
        """A quick first document from the root and the current session only (the other sessions, and the
        doctor, come with the next `document()`), marked `"partial": true` and without a sequence number: what
        a fleet row shows while the full reads of many projects queue up. It never leaves this process."""
        world = self.loader.load(defer=("state",))
        self._rp1 = self._rp1_json()
        self._doctor = {"count": None, "findings": []}  # the doctor scans the whole tree: the full read runs it
        doc = self._build(world)
        self._doctor = None
        doc["partial"] = True
        return doc

    def build(self, changed: Iterable[Path] | None = None) -> dict[str, Any]:
        """A full document without a sequence number; `changed` (paths) limits the re-reading to their sections."""
        paths = None if changed is None else list(changed)
        sections = self.loader.sections_for(paths) if paths is not None else None
        if self.loader.deferred:  # after first_look(): the full read (it sees every change so far)
            world = self.loader.world
            assert world is not None  # first_look() loaded it
            while self.loader.deferred:
                world = self.loader.load_deferred() or world
            sections = None
        else:
            world = self.loader.load(paths)
        if sections is None or "rp1" in sections or self._rp1 is None:
            self._rp1 = self._rp1_json()
        if sections is None or sections & {"state", "team"} or self._doctor is None:
            self._doctor = self._doctor_json(world)
        return self._build(world)

    def rejudge(self) -> dict[str, Any] | None:
        """The last full document judged again at the current time, from the same reads (no file is read):
        what needs you changes with time alone (a worker's heartbeat going silent). None before a full read."""
        world = self.world
        if world is None or self.loader.deferred or self._doctor is None:
            return None
        return self._build(world)

    # -- sections ---------------------------------------------------------------------------
    def _rp1_json(self) -> dict[str, Any]:
        path = self.loader.rp1_path
        if self._rp1_source is None and path is not None and path.exists():
            from rcs_tui.rp1.machines import MachineRegistry
            from rcs_tui.rp1.source import Rp1Source

            self._rp1_source = Rp1Source(path, root=self.root, machines=MachineRegistry({}))
        return rp1_part(self._rp1_source, path)

    def _doctor_json(self, world: World) -> dict[str, Any]:
        if not self.with_doctor:
            return {"count": None, "findings": []}
        with self.loader.processes.noting("doctor"):  # a dead owner is a finding no file change announces
            return doctor_part(world, self._findings, journal=self.journal)

    def _build(self, world: World) -> dict[str, Any]:
        snap = world.snapshot
        doc: dict[str, Any] = {"version": CONTRACT_VERSION, "kind": "snapshot", "seq": 0,
                               "taken_at": iso(self.clock()), "has_rcs": self.loader.layout.rcs.is_dir()}
        if self.summary:
            doc.update(snapshot_json(snap, with_scopes=False))
            if self.scopes:
                doc["scopes"] = summary_scopes(snap)
        else:
            doc.update(snapshot_json(snap, self._scopes))
        health = Counter(m.health for m in snap.members)
        tasks = tasks_json(world)
        rp1 = self._rp1 or {}
        doc.update({
            "health": dict(sorted(health.items())),
            "team": team_json(world),
            "tasks": tasks,
            "tasks_by_phase": dict(sorted(Counter(t["phase"] or "unreadable" for t in tasks).items())),
            "rp1": rp1,
            "doctor": self._doctor,
            "badges": [b.text(world.root) for b in world.badges],
        })
        doc["attention"], verdicts = judge(doc, snap, self.clock())
        doc["needs_you"] = [v.as_json(iso) for v in verdicts]
        times = [world.newest_write, *(t.mtime for t in world.tasks)]

        times.append(parse_time(rp1.get("last_activity")))
        known = [t for t in times if t is not None]
        doc["last_activity"] = iso(max(known)) if known else None
        return doc


async def follow_documents(feed: SnapshotFeed, *, poll: bool = False, gate: Any = None, first_look: bool = False,
                           watcher: Any = None,
                           on_watch: Callable[[str, str | None], None] | None = None,
                           process_check_s: float | None = None,
                           ) -> AsyncIterator[dict[str, Any]]:
    """The first document, then one per batch of changes the watcher sees (what arrives meanwhile is merged).

    The watcher needs a moment to start (seconds on a loaded machine); once it watches every directory, the
    files written since just before the first read are re-read (a cheap stat scan finds them), catching a
    change made in that gap, however long it was; the document is sent only when it differs. A watcher that
    cannot start natively falls back to polling.
    `gate` (an asyncio semaphore) bounds how many followers build a document at once. `first_look` yields a
    partial document (root and current session, see `SnapshotFeed.first_look`) before waiting at the gate.
    `watcher` (a `SharedWatcher`) watches the project on an inotify instance shared with other projects
    instead of one of its own. `on_watch(how, reason)` hears how the project is watched once that is known:
    `("inotify", None)`, or `("poll", why)` when native watching could not start or stopped.
    `process_check_s`: how often to ask whether a process the document shows alive or gone started or stopped
    (a few signals and `/proc` reads, on the event loop); the fleet asks less often than a single view.
    """
    import asyncio
    import contextlib

    def gated() -> Any:
        return gate if gate is not None else contextlib.nullcontext()

    from rcs_tui.project.processes import moved_batches
    from rcs_tui.project.watch import native_batches, poll_batches, watch_targets, written_since

    started = time.time_ns()
    if first_look:
        yield await asyncio.to_thread(feed.first_look)
    async with gated():
        last = await asyncio.to_thread(feed.document)
    yield last

    def written_since_start() -> frozenset[Path]:
        """Files written since just before the first read: what the watcher may have missed while starting."""
        return written_since(watch_targets(feed.loader), started)

    queue: asyncio.Queue[frozenset[Path] | None] = asyncio.Queue()

    def heard(how: str, reason: str | None) -> None:
        if on_watch is not None:
            on_watch(how, reason)

    def watching() -> None:
        """The watcher sees every change from now on: re-read what changed before (`None` asks for that)."""
        queue.put_nowait(None)

    async def pump() -> None:
        from rcs_tui.project.shared_watch import poll_reason

        targets = watch_targets(feed.loader)
        batches: Any  # an async iterator with `aclose`
        try:
            if poll:
                heard("poll", "polling was asked for")
                batches = poll_batches(targets, on_ready=watching)
            elif watcher is not None:
                batches = await watcher.subscribe(targets)
                watching()
                heard("inotify", None)
            else:
                batches = native_batches(targets, on_ready=watching)
            async with contextlib.aclosing(batches):  # a shared watch is given back however the pump ends
                async for paths in batches:
                    queue.put_nowait(paths)
        except OSError as exc:
            if poll:
                raise
            heard("poll", poll_reason(exc))
            if watcher is None:
                async for paths in poll_batches(targets, on_ready=watching):
                    queue.put_nowait(paths)
                return
            watcher.polled += 1  # the projects polling share one budget of scans
            try:
                async for paths in poll_batches(targets, watcher.poll_interval, on_ready=watching):
                    queue.put_nowait(paths)
            finally:
                watcher.polled -= 1

    async def processes() -> None:
        """A process the document shows alive or gone that started or stopped: its part is read again."""
        async for moved in moved_batches(feed.loader.processes_moved, process_check_s):
            queue.put_nowait(moved)

    async def clock() -> None:
        """Time passing changes what needs you with no file written (a heartbeat goes silent): judged again."""
        while True:
            await asyncio.sleep(REJUDGE_S)
            queue.put_nowait(REJUDGE)

    task = asyncio.ensure_future(pump())
    checker = asyncio.ensure_future(processes())
    ticker = asyncio.ensure_future(clock())
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                task.result()  # the watcher failed: raise its error
                return
            items = [getter.result()]
            while not queue.empty():
                items.append(queue.get_nowait())
            if all(item is REJUDGE for item in items):  # time passed, nothing changed: judge the same reads
                async with gated():
                    judged = await asyncio.to_thread(feed.rejudge)
                if judged is None or same_content(judged, last):
                    continue
                doc = judged
            else:
                items = [item for item in items if item is not REJUDGE]  # a read judges at the current time anyway
                resync = any(item is None for item in items)
                paths = frozenset().union(*(i for i in items if i is not None))
                if resync:
                    paths |= await asyncio.to_thread(written_since_start)
                    if not paths:
                        continue
                async with gated():
                    doc = await asyncio.to_thread(feed.build, paths)
                if resync and same_content(doc, last):
                    continue
            feed.seq += 1
            doc["seq"] = feed.seq
            last = doc
            yield doc
    finally:
        task.cancel()
        checker.cancel()
        ticker.cancel()
