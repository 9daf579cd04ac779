"""FleetHub: one asyncio task per project keeps that project's row current; none can block another.

A local project is read in-process the way `rcs-tui snapshot --json --follow` reads it (a `SnapshotFeed`
rebuilt section by section on the watcher's batches). A remote one runs exactly that command over
`ssh` and reads its lines. Whatever goes wrong (no `.rcs/`, permission denied, host unreachable, rcs-tui
missing or too old on the host, garbage or silence on the stream) becomes the row's reason, and the task
retries with exponential backoff. `on_change(row)` is called after every change to a row.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from rcs_tui.files.io import loads_strict
from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.rows import Row
from rcs_tui.fleet.transport import Ssh, failure_reason

MAX_LINE = 64 * 1024 * 1024
HEARTBEAT = 10.0
READERS = 2  # local documents built at once: more only fight over the GIL and starve the screen
FIRST_LOOK_PATIENCE = 3.0  # seconds full reads wait for the other rows' first looks at most


def local_problem(root: Path) -> str | None:
    """Why a local project cannot be read (None when it can)."""
    try:
        if not root.is_dir():
            return f"no such directory: {root}"
        if not (root / ".rcs").is_dir():
            return f"no .rcs/ in {root}"
        os.listdir(root / ".rcs")
    except PermissionError:
        return f"permission denied: {root}"
    except OSError as exc:
        return f"cannot read {root}: {exc.strerror or exc}"
    return None


async def _end(proc: asyncio.subprocess.Process) -> None:
    """End an ssh session: close its stdin (the remote follower exits on that), then, if it lingers, kill
    its whole process group (it was started in a session of its own), and reap it.

    The group, not only ssh: a child it started (a ProxyCommand, a wrapper's command) keeps the pipes
    open, so they never reach end-of-file and the session's file descriptors outlive it.
    Being cancelled in the grace time (the fleet quitting just then) ends the wait, not the ending: the
    group is killed and reaped all the same, else ssh would run on after the fleet, holding its pipes.
    """
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    try:
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(proc.wait()), 0.5)
    finally:
        if proc.returncode is None:  # still running: its group id is its pid, and still ours
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 5)


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
    """Rows for every project, kept current by background tasks."""

    def __init__(self, projects: list[Project], on_change: Callable[[Row], None] = lambda row: None, *,
                 ssh: Ssh | None = None, clock: Callable[[], float] = time.time, heartbeat: float = HEARTBEAT,
                 max_backoff: float = 30.0, poll: bool = False, once: bool = False) -> None:
        self.rows: dict[str, Row] = {p.key: Row(p) for p in projects}
        self.on_change = on_change
        self.ssh = ssh or Ssh()
        self.clock = clock
        self.heartbeat = heartbeat
        self.max_backoff = max_backoff
        self.poll = poll
        self.once = once  # one attempt per project, no reconnecting (`fleet --once`)
        self.tasks: list[asyncio.Task[None]] = []
        self.procs: set[asyncio.subprocess.Process] = set()
        self._readers: ReadGate | None = None

    def start(self, remote: bool = True, local: bool = True) -> None:
        """Start the projects' tasks on the running loop: the remote ones (an ssh session costs this
        process little and the host a second or more, so the sooner the better), the local ones, or both."""
        if local:
            # `--once` takes no first looks: its full reads need not wait for any
            waiting = 0 if self.once else sum(1 for r in self.rows.values() if not r.looked)
            self._readers = ReadGate(READERS, waiting)
        for row in self.rows.values():
            if (remote and row.project.remote) or (local and not row.project.remote):
                runner = self._remote if row.project.remote else self._local
                self.tasks.append(asyncio.ensure_future(runner(row)))

    async def stop(self) -> None:
        """Cancel every task; each ends (and reaps) its own ssh session on the way out.

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
        for proc in list(self.procs):  # sessions whose own ending was cut short
            await _end(proc)
            self.procs.discard(proc)
        await asyncio.sleep(0.05)  # let the ended processes' pipes close before the loop ends

    def _changed(self, row: Row) -> None:
        try:
            self.on_change(row)
        except Exception:  # noqa: BLE001 - a listener's bug must not stop this project's updates
            pass

    def _fail(self, row: Row, reason: str) -> None:
        row.fail(reason, self.clock())
        self._changed(row)

    def _take(self, row: Row, doc: dict) -> None:
        row.take(doc, self.clock())
        self._changed(row)

    # -- local ------------------------------------------------------------------------------
    def _looked(self, row: Row) -> None:
        """The row has its first document or its reason for having none (counted once)."""
        if not row.looked:
            row.looked = True
            if self._readers is not None:
                self._readers.looked()

    async def _local(self, row: Row) -> None:
        from rcs_tui.project.feed import SnapshotFeed, follow_documents

        root = Path(row.project.path)
        delay = 1.0
        while True:
            problem = await asyncio.to_thread(local_problem, root)
            if problem:
                self._fail(row, problem)
                self._looked(row)
            else:
                try:
                    feed = SnapshotFeed(root, summary=True)
                    async for doc in follow_documents(feed, poll=self.poll, gate=self._readers,
                                                      first_look=not self.once):
                        self._take(row, doc)
                        self._looked(row)
                        delay = 1.0
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one project's failure stays in its row
                    self._fail(row, f"read error: {type(exc).__name__}: {exc}")
                    self._looked(row)
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)

    # -- remote -----------------------------------------------------------------------------
    def remote_argv(self, project: Project) -> list[str]:
        args = ["snapshot", "--json", "--follow", "--heartbeat", f"{self.heartbeat:g}", "--root", project.path]
        return self.ssh.argv(project, args)

    async def _remote(self, row: Row) -> None:
        delay = 1.0
        while True:
            got_data = await self._remote_once(row)
            if self.once:
                return
            if got_data:
                delay = 1.0
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)

    async def _remote_once(self, row: Row) -> bool:
        """One ssh session; True when it delivered at least one document."""
        spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *self.remote_argv(row.project), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=MAX_LINE, start_new_session=True))
        try:
            proc = await asyncio.shield(spawning)
        except OSError as exc:
            self._fail(row, f"cannot run ssh: {exc.strerror or exc}")
            self._looked(row)
            return False
        except asyncio.CancelledError:  # stopped while ssh was starting: end it too, never leave it behind
            with contextlib.suppress(Exception):
                await _end(await spawning)
            raise
        assert proc.stdout is not None and proc.stderr is not None
        self.procs.add(proc)
        stderr_task = asyncio.ensure_future(proc.stderr.read(65536))
        got = False
        reason: str | None = None
        try:
            while True:
                try:  # `asyncio.timeout`, not `wait_for`, which can drop a cancellation (see `stop`)
                    async with asyncio.timeout(self.heartbeat * 3 if got else None):
                        line = await proc.stdout.readline()
                except TimeoutError:
                    reason = f"stalled: no data from {row.project.host} for {self.heartbeat * 3:g}s"
                    break
                except (ValueError, asyncio.LimitOverrunError):
                    reason = "sent a line too long to be a snapshot"
                    break
                if not line:
                    break
                try:
                    doc = loads_strict(line)  # bounded nesting: a hostile host costs its row only
                except (ValueError, UnicodeDecodeError):
                    reason = f"sent data that is not a snapshot ({line[:40]!r}…)"
                    break
                if not isinstance(doc, dict):
                    reason = "sent data that is not a snapshot (not a JSON object)"
                    break
                if doc.get("kind") == "heartbeat":
                    continue
                self._take(row, doc)
                self._looked(row)
                got = got or row.doc is not None
                if row.doc is None and row.error:  # a contract we cannot read: keep the reason, stop here
                    reason = row.error
                    break
        finally:
            await _end(proc)
            self.procs.discard(proc)  # only once ended: a session cut short here is ended by `stop()`
            try:
                err = (await asyncio.wait_for(stderr_task, 1)).decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - no stderr to explain it: the exit status will do
                stderr_task.cancel()
                err = ""
        if reason is None:
            reason = failure_reason(proc.returncode, err, row.project)
        self._fail(row, reason)
        self._looked(row)
        return got


async def gather_once(projects: list[Project], *, ssh: Ssh | None = None, timeout: float = 15.0) -> list[Row]:
    """Every project read once (each bounded by `timeout`): what `fleet --once` prints."""
    pending = {p.key for p in projects}
    done = asyncio.Event()

    def changed(row: Row) -> None:
        if row.doc is not None and row.doc.get("partial"):
            return  # a status line says what the whole project shows
        pending.discard(row.project.key)
        if not pending:
            done.set()

    hub = FleetHub(projects, changed, ssh=ssh, max_backoff=timeout, once=True)
    hub.start()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), timeout)
    await hub.stop()
    for key in pending:
        hub.rows[key].fail(f"no answer within {timeout:g}s")
    return list(hub.rows.values())
