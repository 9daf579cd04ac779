"""Post one `WorldUpdated` per batch of changes to a Textual node (the watching itself is `project.watch`).

`start_watcher(node, loader)` runs a Textual worker (exclusive, `exit_on_error=False`) over the batches
of `project.watch`. For each batch it rebuilds only the sections the paths belong to
(`WorldLoader.load(changed)`, in a thread) and posts `WorldUpdated` to `node`; batches touching only
sessions the views do not show are pooled and loaded a few times a second. If native watching cannot
start it falls back to polling and says so with `WatchStatus`; an error inside the loop is reported the
same way and the loop restarts. Once the watches are in place, the files written since the loader's
first read began are loaded again: placing them takes seconds on a loaded machine, and a change made
meanwhile would otherwise stay off the screen until the next one. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker

from rcs_tui.project.loader import WorldLoader
from rcs_tui.project.processes import moved_batches
from rcs_tui.project.watch import DEBOUNCE_MS, native_batches, poll_batches, watch_targets, written_since
from rcs_tui.views.world import World


class WorldUpdated(Message):
    """A new World, and the paths that caused it (empty on the initial load)."""

    def __init__(self, world: World, changed: frozenset[Path]) -> None:
        super().__init__()
        self.world = world
        self.changed = changed


class WatchStatus(Message):
    """How the watcher is running: `native`, `polling` (with the reason) or `error` (retrying)."""

    def __init__(self, mode: str, detail: str = "") -> None:
        super().__init__()
        self.mode = mode
        self.detail = detail


BACKGROUND_MS = 250  # batches touching only sessions the views do not show: delivered at most this often


DRAWN_WAIT_S = 1.0  # the longest a deferred load waits for the World before it to be drawn


async def drawn(node: DOMNode, timeout: float = DRAWN_WAIT_S) -> None:
    """Until the screen has refreshed after the messages posted so far (at most `timeout`): a World loaded
    in a thread is drawn by the UI thread, and a next load started at once would share the interpreter with
    that drawing (a long list of sessions drew at half speed beside the full read that followed it)."""
    done = asyncio.Event()
    node.call_after_refresh(done.set)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(done.wait(), timeout)


def start_watcher(node: DOMNode, loader: WorldLoader, *, force_polling: bool = False,
                  debounce_ms: int = DEBOUNCE_MS, background_ms: int = BACKGROUND_MS,
                  lock: threading.Lock | None = None) -> Worker[None]:
    """Run the watcher as a worker of `node` (an App, Screen or Widget); messages go to `node`.

    A batch that touches what the views show is loaded and posted at once (with any background paths
    still pending). A batch touching only other sessions (`loader.off_view`) changes nothing on screen
    but the age of the newest write and those sessions' rows, so such batches are pooled and loaded
    together at most once per `background_ms`: a runtime writing 50 times a second elsewhere costs a
    few loads a second, not fifty. Loads never overlap (one lock), so the loader sees them in order;
    `lock`, when given, is held around each load too (the node's own reloads take it as well).
    """
    held = lock if lock is not None else contextlib.nullcontext()

    def load(batch: frozenset[Path]) -> World:
        with held:
            return loader.load(batch)

    def load_deferred() -> World | None:
        with held:
            return loader.load_deferred()

    async def run() -> None:
        polling = force_polling
        node.post_message(WatchStatus("polling" if polling else "native",
                                      "polling requested" if polling else ""))
        failures = 0
        loop = asyncio.get_running_loop()
        in_order = asyncio.Lock()
        pending: set[Path] = set()
        flush: asyncio.Task[None] | None = None
        last_flush = -1e9

        async def deliver(paths: frozenset[Path]) -> None:
            async with in_order:
                batch = paths | pending
                pending.clear()
                if not batch:
                    return
                world = await asyncio.to_thread(load, frozenset(batch))
                if node.app.is_running:  # shutting down: its widgets may be gone already
                    node.post_message(WorldUpdated(world, frozenset(batch)))

        catch_up: asyncio.Task[None] | None = None

        def watching() -> None:
            """The watches are in place (first start only): load what was written before they were."""
            nonlocal catch_up
            since = loader.read_from_ns
            if catch_up is None and since is not None:
                catch_up = asyncio.create_task(load_written_since(since))

        async def load_written_since(since: int) -> None:
            try:
                missed = await asyncio.to_thread(written_since, watch_targets(loader), since)
                if missed and node.app.is_running:
                    await deliver(missed)
            except Exception as exc:  # noqa: BLE001 - the watcher must never take the app down
                node.post_message(WatchStatus("error", f"watcher error ({exc}) reading what changed as it started"))

        async def flush_later(delay: float) -> None:
            nonlocal flush, last_flush
            await asyncio.sleep(delay)
            flush, last_flush = None, loop.time()
            try:
                await deliver(frozenset())
            except Exception as exc:  # noqa: BLE001 - the watcher must never take the app down
                node.post_message(WatchStatus("error", f"watcher error ({exc}); retrying"))

        async def check_processes() -> None:
            """A process on screen (a session's owner, a worker) started or stopped without writing anything:
            load again the section that showed it."""
            while True:
                try:
                    async for moved in moved_batches(loader.processes_moved):
                        if node.app.is_running:
                            await deliver(moved)
                except Exception as exc:  # noqa: BLE001 - the watcher must never take the app down
                    node.post_message(WatchStatus("error", f"watcher error ({exc}) checking processes; retrying"))

        while (deferred := await asyncio.to_thread(load_deferred)) is not None:  # e.g. the console's
            if not node.app.is_running:  # sessions, then its rp1 section
                return
            node.post_message(WorldUpdated(deferred, frozenset()))
            await drawn(node)
        checker = asyncio.create_task(check_processes())
        try:
            while True:
                try:
                    targets = watch_targets(loader)
                    batches = (poll_batches(targets, resync=failures > 0, on_ready=watching) if polling
                               else native_batches(targets, debounce_ms=debounce_ms, on_ready=watching))
                    async for paths in batches:
                        if not node.app.is_running:
                            return
                        if loader.off_view(paths):
                            pending.update(paths)
                            if flush is None:
                                wait = max(0.0, last_flush + background_ms / 1000 - loop.time())
                                flush = asyncio.create_task(flush_later(wait))
                            continue
                        await deliver(paths)
                        failures = 0
                    return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the watcher must never take the app down
                    failures += 1
                    if not polling:
                        polling = True
                        node.post_message(WatchStatus("polling", f"native watching unavailable ({exc}); polling"))
                    else:
                        node.post_message(WatchStatus("error", f"watcher error ({exc}); retrying"))
                    await asyncio.sleep(min(5.0, 0.5 * failures))
        finally:
            checker.cancel()
            if flush is not None:
                flush.cancel()
            if catch_up is not None:
                catch_up.cancel()

    return node.run_worker(run(), name="rcs-watcher", group="rcs-watcher", exclusive=True, exit_on_error=False)
