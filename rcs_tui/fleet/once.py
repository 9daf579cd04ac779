"""`fleet --once`: every project read once, each within its own time limit, and nothing followed.

A local project's document is built once and dropped: no watcher starts and no feed is kept, so memory
holds one project's tree per reader plus, per row, only what `--once` reports. Local projects are read by
this process (in a reader thread) and, when there are many, by `helpers` helper processes
(`fleet/reader_worker.py`) pulling from the same queue, so a second core reads too. A remote project's
stream is read up to its first document, then its ssh session is ended.

Each project gets `timeout` seconds from the moment its own read starts (a local project waiting for a
reader is not yet timed): past it the row says so, a helper reading it is killed and replaced, and an
in-process read is abandoned to its daemon thread. The whole run ends within `deadline` seconds: a
project with no answer by then is a row saying so. No project is ever left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rcs_tui.fleet.local import local_problem
from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.rows import Row
from rcs_tui.fleet.source import ProjectSource, Unreadable, open_source
from rcs_tui.fleet.transport import Ssh

HELPERS_FROM = 16  # local projects from which a helper process pays for its start (≈ 0.3 s)
MAX_HELPERS = 3
MAX_LINE = 64 * 1024 * 1024
# What `--once` reports of a document (`Row.take` and `once_json` read no other key).
ONCE_KEYS = ("version", "kind", "seq", "taken_at", "has_rcs", "active_set", "attention", "needs_you", "rp1",
             "last_activity")
LocalReader = Callable[[Path], dict[str, Any]]


def once_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A document cut to what `fleet --once` reports (the rp1 part to its counts)."""
    out = {k: doc[k] for k in ONCE_KEYS if k in doc}
    if isinstance(out.get("rp1"), dict):
        out["rp1"] = {"counts": out["rp1"].get("counts")}
    return out


def read_local(root: Path) -> dict[str, Any]:
    """One local project's full document without its scopes and the doctor's journal findings (`--once`
    reports the attention and the active set, which are worked out from every scope all the same and read
    no journal finding), or `Unreadable` with the row's reason."""
    from rcs_tui.project.feed import SnapshotFeed

    problem = local_problem(root)
    if problem:
        raise Unreadable(problem)
    return SnapshotFeed(root, summary=True, scopes=False, journal=False).document()


def default_helpers(local: int) -> int:
    """Helper processes for `local` local projects: none for a few (a helper's start would cost more than
    it reads), else one per further core, at most `MAX_HELPERS`."""
    return 0 if local < HELPERS_FROM else max(0, min(MAX_HELPERS, (os.cpu_count() or 1) - 1))


def in_daemon_thread(fn: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run `fn` in a thread of its own and return a future for its result. The thread is a daemon: one
    stuck in a read (a hung network mount) is left behind when its time is up, never waited for at exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def run() -> None:
        try:
            result, ok = fn(), True
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting task
            result, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, ok, result)

    threading.Thread(target=run, name="fleet-once-read", daemon=True).start()
    return future


class Helper:
    """One helper process reading local projects; started on first use, killed when a read runs late."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start the process unless it runs (OSError when it cannot start)."""
        if self.proc is None:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "rcs_tui.fleet.reader_worker", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=MAX_LINE,
                start_new_session=True)

    async def read(self, root: Path, timeout: float) -> dict[str, Any]:
        """The document of the project at `root`, read by this helper within `timeout` seconds."""
        await self.start()
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(str(root)).encode() + b"\n")
            async with asyncio.timeout(timeout):
                await proc.stdin.drain()
                line = await proc.stdout.readline()
        except BaseException:
            await self.stop()
            raise
        try:
            answer = json.loads(line)
        except ValueError:  # it ended (an empty line) or wrote something else: start afresh
            await self.stop()
            raise Unreadable("read error: the reader process ended") from None
        if "doc" in answer:
            return dict(answer["doc"])
        raise Unreadable(str(answer.get("unreadable") or answer.get("error")))

    async def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)


async def _first_document(source: ProjectSource) -> dict[str, Any]:
    """The source's first document; its stream (an ssh session) is closed right after."""
    async with contextlib.aclosing(source.documents()) as docs:
        async for doc in docs:
            return doc
    raise Unreadable("the stream ended without a document")


async def _read_in_thread(read: LocalReader, root: Path, timeout: float) -> dict[str, Any]:
    """`read(root)` in a daemon thread; past `timeout` the read is abandoned (TimeoutError)."""
    future = in_daemon_thread(lambda: once_doc(read(root)))
    done, _ = await asyncio.wait({future}, timeout=timeout)
    if not done:
        future.cancel()
        raise TimeoutError
    return dict(future.result())


async def gather_once(projects: list[Project], *, ssh: Ssh | None = None, timeout: float = 15.0,
                      deadline: float = 60.0, helpers: int | None = None, read: LocalReader = read_local,
                      open_remote: Callable[[Project], ProjectSource] | None = None,
                      clock: Callable[[], float] = time.time) -> list[Row]:
    """Every project read once: what `fleet --once` prints. `read` builds a local project's document in
    this process; `helpers` (default: `default_helpers`) helper processes read local projects too;
    `open_remote` opens a remote project's source (default: over `ssh`)."""
    rows = {p.key: Row(p) for p in projects}
    local = [r for r in rows.values() if not r.project.remote]
    queue = list(reversed(local))  # popped from the end: in the order given
    helpers = default_helpers(len(local)) if helpers is None else helpers
    sources: list[ProjectSource] = []
    running: list[Helper] = []

    async def answer(row: Row, reading: Awaitable[dict[str, Any]]) -> None:
        try:
            row.take(await reading, clock())
        except TimeoutError:
            row.fail(f"no answer within {timeout:g}s", clock())
        except Unreadable as exc:
            row.fail(str(exc), clock())
        except Exception as exc:  # noqa: BLE001 - one project's failure stays in its row
            row.fail(f"read error: {type(exc).__name__}: {exc}", clock())

    async def remote(row: Row) -> None:
        source = (open_remote or (lambda p: open_source(p, ssh=ssh or Ssh())))(row.project)
        sources.append(source)

        async def first() -> dict[str, Any]:
            async with asyncio.timeout(timeout):
                return await _first_document(source)

        await answer(row, first())

    async def reader(helper: Helper | None) -> None:
        if helper is not None:
            try:
                await helper.start()
            except OSError:
                return  # no helper: this process reads them all
        while queue:
            row = queue.pop()
            root = Path(row.project.path)
            if helper is None:
                await answer(row, _read_in_thread(read, root, timeout))
            else:
                await answer(row, helper.read(root, timeout))

    tasks = [asyncio.ensure_future(remote(r)) for r in rows.values() if r.project.remote]
    tasks.append(asyncio.ensure_future(reader(None)))
    for _ in range(helpers if local else 0):
        running.append(Helper())
        tasks.append(asyncio.ensure_future(reader(running[-1])))
    try:
        _, late = await asyncio.wait(tasks, timeout=deadline)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)
    finally:
        for helper in running:
            await helper.stop()
        for source in sources:
            with contextlib.suppress(Exception):
                await source.close()
    for row in rows.values():
        if row.doc is None and row.error is None:
            row.fail(f"no answer within the fleet's overall {deadline:g}s", clock())
    return list(rows.values())
