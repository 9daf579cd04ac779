"""FleetHub: one asyncio task per project keeps that project's row current; none can block another.

Each task reads its project through a `ProjectSource` (fleet/source.py), local or over ssh alike: it takes
the source's documents into the row, and when the source says the project cannot be read (no `.rcs/`,
permission denied, host unreachable, rcs-tui missing or too old on the host, garbage or silence on the
stream) that becomes the row's reason and the source is opened again with exponential backoff.
`on_change(row)` is called after every change to a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.rows import Row
from rcs_tui.fleet.source import HEARTBEAT, ProjectSource, Unreadable, open_source
from rcs_tui.fleet.transport import Ssh

if TYPE_CHECKING:
    from rcs_tui.project.shared_watch import SharedWatcher

READERS = 2  # local documents built at once: more only fight over the GIL and starve the screen
FIRST_LOOK_PATIENCE = 3.0  # seconds full reads wait for the other rows' first looks at most


class ReadGate:
    """At most `limit` full local reads at once, and none before every row has had its first look (a local
    row its quick partial document, a remote one its first document or its reason for having none) or
    `patience` seconds passed: fifty full reads must not hold up the rows that show each project at once,
    nor take the processor from the hosts' first answers over ssh."""

    def __init__(self, limit: int, waiting_for: int, patience: float = FIRST_LOOK_PATIENCE) -> None:
        self.slots = asyncio.Semaphore(limit)
        self.ready = asyncio.Event()
        self.waiting_for = waiting_for
        if waiting_for <= 0:
            self.ready.set()
        else:
            asyncio.get_running_loop().call_later(patience, self.ready.set)

    def looked(self) -> None:
        """One local row has its first document (or its reason for having none)."""
        self.waiting_for -= 1
        if self.waiting_for <= 0:
            self.ready.set()

    async def __aenter__(self) -> None:
        await self.ready.wait()
        await self.slots.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.slots.release()


class FleetHub:
    """Rows for every project, kept current by background tasks.

    `open_source(project)` gives the source a project is read through (default: `source.open_source` with
    this hub's ssh, heartbeat, polling and read gate).
    """

    def __init__(self, projects: list[Project], on_change: Callable[[Row], None] = lambda row: None, *,
                 ssh: Ssh | None = None, clock: Callable[[], float] = time.time, heartbeat: float = HEARTBEAT,
                 max_backoff: float = 30.0, poll: bool = False, once: bool = False,
                 open_source: Callable[[Project], ProjectSource] | None = None, record: bool = False) -> None:
        self.record = record  # local projects also run their flight recorder (never with `once`)
        self.rows: dict[str, Row] = {p.key: Row(p) for p in projects}
        self.on_change = on_change
        self.ssh = ssh or Ssh()
        self.clock = clock
        self.heartbeat = heartbeat
        self.max_backoff = max_backoff
        self.poll = poll
        self.once = once  # one attempt per project, no reconnecting (`fleet --once`)
        self.open_source = open_source or self._open_source
        self.sources: dict[str, ProjectSource] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self._readers: ReadGate | None = None
        # Every local project is watched on this one inotify instance (Linux): the per-user limit on
        # instances (often 128) must not decide how many projects a fleet can watch.
        self.watcher: SharedWatcher | None = None

    def _open_source(self, project: Project) -> ProjectSource:
        row = self.rows[project.key]
        return open_source(project, ssh=self.ssh, heartbeat=self.heartbeat, poll=self.poll,
                           first_look=not self.once, gate=self._readers, watcher=self.watcher,
                           on_watch=lambda how, reason: self._watched(row, how, reason),
                           record=self.record and not self.once)

    def _watched(self, row: Row, how: str, reason: str | None) -> None:
        """How a local row is watched now: on the shared inotify instance, or polled (and why)."""
        if (row.watch, row.watch_reason) != (how, reason):
            row.watch, row.watch_reason = how, reason
            self._changed(row)

    def start(self, remote: bool = True, local: bool = True) -> None:
        """Start the projects' tasks on the running loop: the remote ones (an ssh session costs this
        process little and the host a second or more, so the sooner the better), the local ones, or both."""
        if local:
            if self.watcher is None and not self.poll and sys.platform.startswith("linux"):
                from rcs_tui.project.shared_watch import SharedWatcher

                self.watcher = SharedWatcher()
            # `--once` takes no first looks: its full reads need not wait for any
            waiting = 0 if self.once else sum(1 for r in self.rows.values() if not r.looked)
            self._readers = ReadGate(READERS, waiting)
        for key, row in self.rows.items():
            if key not in self.sources and (remote if row.project.remote else local):
                source = self.sources[key] = self.open_source(row.project)
                self.tasks.append(asyncio.ensure_future(self._follow(row, source)))

    async def stop(self) -> None:
        """Cancel every task, then let every source end what a cancelled read left behind (an ssh session
        cut short while being ended).

        A task is cancelled again for as long as it runs on: on Python 3.11 `asyncio.wait_for` drops a
        cancellation that lands just as what it waits for completes (a heartbeat line, a process
        ending), and such a task would read on forever while `stop` waited for it.
        """
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            while not task.done():
                await asyncio.wait({task}, timeout=0.5)
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                task.result()
        self.tasks.clear()
        for source in self.sources.values():
            with contextlib.suppress(Exception):
                await source.close()
        if self.watcher is not None:
            self.watcher.close()
        await asyncio.sleep(0.05)  # let the ended processes' pipes close before the loop ends

    def _changed(self, row: Row) -> None:
        try:
            self.on_change(row)
        except Exception:  # noqa: BLE001 - a listener's bug must not stop this project's updates
            pass

    def _looked(self, row: Row) -> None:
        """The row has its first document or its reason for having none (counted once)."""
        if not row.looked:
            row.looked = True
            if self._readers is not None:
                self._readers.looked()

    def _fail(self, row: Row, reason: str) -> None:
        row.fail(reason, self.clock())
        self._changed(row)
        self._looked(row)

    def _take(self, row: Row, doc: dict) -> None:
        row.take(doc, self.clock())
        self._changed(row)
        self._looked(row)

    async def _follow(self, row: Row, source: ProjectSource) -> None:
        """Keep `row` current from `source`: take its documents; when it fails, show why and open it again
        after 1, 2, 4 … seconds (up to `max_backoff`; back to 1 once a document arrives). With `once`, one
        attempt only. A document the row cannot show (a contract too old) ends that attempt with its reason."""
        delay = 1.0
        while True:
            try:
                async with contextlib.aclosing(source.documents()) as docs:
                    async for doc in docs:
                        self._take(row, doc)
                        if row.doc is None and row.error:
                            raise Unreadable(row.error)
                        delay = 1.0
            except Unreadable as exc:
                self._fail(row, str(exc))
            except Exception as exc:  # noqa: BLE001 - one project's failure stays in its row
                self._fail(row, f"read error: {type(exc).__name__}: {exc}")
            if self.once:
                return
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)

