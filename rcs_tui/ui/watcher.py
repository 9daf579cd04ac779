"""Watch the RCS tree and the rp1 database; post one `WorldUpdated` per batch of changes.

`start_watcher(node, loader)` runs a Textual worker (exclusive, `exit_on_error=False`) over *directories*
(atomic renames replace a file's inode), with our own filter (watchfiles' default one silently drops
`.git`, `.venv`, … paths) and a small debounce. On Linux it reads inotify in a thread of its own
(`inotify_batches`), which sleeps until the kernel has an event (idle costs no wake-ups at all) and hands
the event loop one finished batch at a time.
Elsewhere it uses `watchfiles.awatch`, whose Rust loop wakes every `step` ms even when nothing changes
(100 wake-ups/s at 10 ms; a larger step costs latency, since a batch is yielded only after one quiet step).
For each batch it rebuilds only the sections the paths belong to (`WorldLoader.load(changed)`, in a thread) and posts
`WorldUpdated` to `node`; batches touching only sessions the views do not show are pooled and loaded a few
times a second. If native watching cannot start it falls back to polling stat signatures every
500 ms (our own, so a same-second atomic rename still counts) and says so with `WatchStatus`;
an error inside the loop is reported the same way and the loop restarts. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker

from rcs_tui.views.world import World, WorldLoader

DEBOUNCE_MS = 20  # a batch is yielded at most this long after its first event
QUIET_MS = 5  # ... or as soon as this long passes without a new event (inotify)
STEP_MS = 10  # watchfiles' wake-up period (non-Linux)
POLL_MS = 500


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


@dataclass(frozen=True)
class WatchTargets:
    """What to watch: directories for awatch, plus the filter deciding which paths matter."""

    dirs: tuple[Path, ...]
    accept: Callable[[Path], bool]
    # Watched without their subdirectories: the rp1 database's directory (it may be /tmp or $HOME).
    flat: frozenset[Path] = frozenset()


def temp_name(name: str) -> bool:
    """The temp half of an atomic write (`.name.XXXX.tmp`): its rename is what counts, not its writes."""
    return name.startswith(".") and name.endswith(".tmp")


def watch_targets(loader: WorldLoader) -> WatchTargets:
    """`.rcs/` (state, team, tasks, plans, metrics, hud-config) and the rp1 database's directory."""
    dirs = [loader.layout.rcs]
    if loader.rp1_path is not None and loader.rp1_path.parent.is_dir():
        dirs.append(loader.rp1_path.parent)

    def accept(path: Path) -> bool:
        return not temp_name(path.name) and bool(loader.sections_for([path]))

    existing = tuple(d for d in dirs if d.is_dir())
    return WatchTargets(existing, accept, frozenset(d for d in existing if d != loader.layout.rcs))


async def watch_batches(targets: WatchTargets, *, stop_event: asyncio.Event | None = None,
                        debounce_ms: int = DEBOUNCE_MS):
    """Yield sets of relevant changed paths (native events, our filter, small debounce)."""
    from watchfiles import awatch

    def keep(_change: object, path: str) -> bool:
        return targets.accept(Path(path))

    async for batch in awatch(*targets.dirs, watch_filter=keep, debounce=debounce_ms, step=STEP_MS,
                              stop_event=stop_event, force_polling=False,
                              ignore_permission_denied=True, rust_timeout=60_000):
        paths = frozenset(Path(p) for _, p in batch)
        if paths:
            yield paths


MAX_DIRS = 8192
# inotify's event bits (inotify(7)), as plain ints for the per-event test.
_OVERFLOW, _IGNORED, _ISDIR, _NEW = 0x4000, 0x8000, 0x40000000, 0x100 | 0x80  # IN_CREATE | IN_MOVED_TO



class TreeWatch:
    """Recursive inotify watches over directory trees (Linux), on top of asyncinotify.

    inotify watches one directory each, so new subdirectories (a new session) get a watch as they
    appear and the files already inside them count as changed.
    """

    def __init__(self) -> None:
        from asyncinotify import Inotify, Mask

        self.mask = (Mask.MODIFY | Mask.ATTRIB | Mask.CLOSE_WRITE | Mask.MOVED_FROM | Mask.MOVED_TO
                     | Mask.CREATE | Mask.DELETE | Mask.ONLYDIR)
        self.inotify = Inotify(cache_size=256)

    def add_tree(self, top: Path, *, collect: bool = True, recursive: bool = True) -> list[Path]:
        """Watch `top` and (when `recursive`) every directory under it; return the files found (they
        may be new) when `collect` (the initial watch of a large tree skips building them)."""
        files: list[Path] = []
        stack = [top]
        while stack and len(self.inotify.watches) < MAX_DIRS:
            path = stack.pop()
            try:
                self.inotify.add_watch(path, self.mask)
            except OSError as exc:
                if path == top or exc.errno == 28:  # ENOSPC: out of watches, so polling is the honest answer
                    raise
                continue
            try:
                entries = list(os.scandir(path))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if recursive:
                            stack.append(Path(entry.path))
                    elif collect:
                        files.append(Path(entry.path))
                except OSError:
                    continue
        return files

    def paths_of(self, event, targets: WatchTargets) -> tuple[set[Path], bool]:
        """The relevant paths one event names, and whether the kernel queue overflowed."""
        mask = int(event.mask)  # plain ints: the flag type's own operators cost microseconds per event
        if mask & _OVERFLOW:
            return set(), True
        name = event.name
        if mask & _IGNORED or name is None:
            return set(), False
        if not mask & _ISDIR and temp_name(str(name)):
            return set(), False  # most events of an atomic write: decided before any path is built
        path = event.path
        if path is None:
            return set(), False
        if mask & _ISDIR:
            if mask & _NEW and path.parent not in targets.flat:
                try:
                    return {p for p in self.add_tree(path) if targets.accept(p)}, False
                except OSError:
                    pass
            return set(), False
        return ({path} if targets.accept(path) else set()), False

    def batches(self, targets: WatchTargets, stop_fd: int, debounce_ms: int,
                quiet_ms: int) -> Iterator[frozenset[Path]]:
        """Blocking: yield sets of relevant changed paths until `stop_fd` becomes readable.

        It sleeps in `poll` until the kernel has an event, so idle costs no wake-ups. A batch is then
        taken in reads `quiet_ms` apart, and closes at the first read that finds nothing new (or
        `debounce_ms` after its first event): the rest of a burst lands while the thread sleeps, so an
        atomic write (six events) costs one or two reads, not a wake-up per event. An overflowed queue
        counts as "everything changed".
        """
        inotify = self.inotify
        inotify.sync_timeout = 0  # sync_get: a cached or readable event, else None at once
        waiting = select.poll()
        waiting.register(inotify.fd, select.POLLIN)
        waiting.register(stop_fd, select.POLLIN)
        sleeping = select.poll()
        sleeping.register(stop_fd, select.POLLIN)
        while True:
            if any(fd == stop_fd for fd, _ in waiting.poll()):
                return
            pending: set[Path] = set()
            deadline = time.monotonic() + debounce_ms / 1000
            while True:
                if sleeping.poll(max(0.0, min(quiet_ms / 1000, deadline - time.monotonic())) * 1000):
                    return
                new = False
                while (event := inotify.sync_get()) is not None:
                    new = True
                    paths, overflow = self.paths_of(event, targets)
                    pending |= paths
                    if overflow:
                        pending.update(scan(targets))
                if not new or time.monotonic() >= deadline:
                    break
            if pending:
                yield frozenset(pending)

    def close(self) -> None:
        self.inotify.close()


async def inotify_batches(targets: WatchTargets, *, debounce_ms: int = DEBOUNCE_MS, quiet_ms: int = QUIET_MS):
    """Yield sets of relevant changed paths from inotify (see `TreeWatch.batches`).

    The kernel's events are read and batched in a thread of their own, which hands the event loop
    one finished batch at a time: a runtime writing fifty files a second elsewhere makes ~250 events a
    second, and taking each on the event loop (a reader registered and removed per read, a future,
    a queue hop and a timeout per event) cost the HUD most of its CPU. The thread is never interrupted
    mid-read, so no event already taken from the kernel is lost.
    """
    tree = TreeWatch()
    loop = asyncio.get_running_loop()
    handed: asyncio.Queue[frozenset[Path] | Exception] = asyncio.Queue()
    stop_r, stop_w = os.pipe()
    thread: threading.Thread | None = None

    def hand(item: frozenset[Path] | Exception) -> None:
        try:
            loop.call_soon_threadsafe(handed.put_nowait, item)
        except RuntimeError:  # the loop has closed: nobody is listening any more
            pass

    def read() -> None:
        try:
            for batch in tree.batches(targets, stop_r, debounce_ms, quiet_ms):
                hand(batch)
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            hand(exc)

    try:
        for d in targets.dirs:  # in a thread: a thousand session dirs must not stall the first frames
            await asyncio.to_thread(tree.add_tree, d, collect=False, recursive=d not in targets.flat)
        thread = threading.Thread(target=read, name="rcs-inotify", daemon=True)
        thread.start()
        while True:
            item = await handed.get()
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        os.write(stop_w, b"\0")
        if thread is not None:
            thread.join(timeout=2.0)  # it is at most one batch (a few ms) from seeing the stop
        os.close(stop_r)
        os.close(stop_w)
        tree.close()


def native_batches(targets: WatchTargets, *, debounce_ms: int = DEBOUNCE_MS):
    """inotify on Linux, watchfiles elsewhere."""
    if sys.platform.startswith("linux"):
        return inotify_batches(targets, debounce_ms=debounce_ms)
    return watch_batches(targets, debounce_ms=debounce_ms)


def scan(targets: WatchTargets, limit: int = 20_000) -> dict[Path, tuple[int, int, int]]:
    """Stat signature (inode, size, mtime_ns) of every relevant file under the watched directories."""
    out: dict[Path, tuple[int, int, int]] = {}
    stack = list(targets.dirs)
    while stack and len(out) < limit:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if top not in targets.flat:
                        stack.append(Path(entry.path))
                elif targets.accept(Path(entry.path)):
                    st = entry.stat(follow_symlinks=False)
                    out[Path(entry.path)] = (st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                continue
    return out


async def poll_batches(targets: WatchTargets, interval: float = POLL_MS / 1000):
    """Polling fallback: compare stat signatures (inode included, so same-second renames count)."""
    before = await asyncio.to_thread(scan, targets)
    while True:
        await asyncio.sleep(interval)
        after = await asyncio.to_thread(scan, targets)
        changed = frozenset(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        before = after
        if changed:
            yield changed


BACKGROUND_MS = 250  # batches touching only sessions the views do not show: delivered at most this often


def start_watcher(node: MessagePump, loader: WorldLoader, *, force_polling: bool = False,
                  debounce_ms: int = DEBOUNCE_MS, background_ms: int = BACKGROUND_MS) -> Worker[None]:
    """Run the watcher as a worker of `node` (an App, Screen or Widget); messages go to `node`.

    A batch that touches what the views show is loaded and posted at once (with any background paths
    still pending). A batch touching only other sessions (`loader.off_view`) changes nothing on screen
    but the age of the newest write and those sessions' rows, so such batches are pooled and loaded
    together at most once per `background_ms`: a runtime writing 50 times a second elsewhere costs a
    few loads a second, not fifty. Loads never overlap (one lock), so the loader sees them in order.
    """

    async def run() -> None:
        polling = force_polling
        node.post_message(WatchStatus("polling" if polling else "native",
                                      "polling requested" if polling else ""))
        failures = 0
        loop = asyncio.get_running_loop()
        lock = asyncio.Lock()
        pending: set[Path] = set()
        flush: asyncio.Task[None] | None = None
        last_flush = -1e9

        async def deliver(paths: frozenset[Path]) -> None:
            async with lock:
                batch = paths | pending
                pending.clear()
                if not batch:
                    return
                world = await asyncio.to_thread(loader.load, batch)
                if node.app.is_running:  # shutting down: its widgets may be gone already
                    node.post_message(WorldUpdated(world, frozenset(batch)))

        async def flush_later(delay: float) -> None:
            nonlocal flush, last_flush
            await asyncio.sleep(delay)
            flush, last_flush = None, loop.time()
            try:
                await deliver(frozenset())
            except Exception as exc:  # noqa: BLE001 - the watcher must never take the app down
                node.post_message(WatchStatus("error", f"watcher error ({exc}); retrying"))

        while (deferred := await asyncio.to_thread(loader.load_deferred)) is not None:  # e.g. the console's
            if not node.app.is_running:  # sessions, then its rp1 section
                return
            node.post_message(WorldUpdated(deferred, frozenset()))
        try:
            while True:
                targets = watch_targets(loader)
                try:
                    batches = poll_batches(targets) if polling else native_batches(targets, debounce_ms=debounce_ms)
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
            if flush is not None:
                flush.cancel()

    return node.run_worker(run(), name="rcs-watcher", group="rcs-watcher", exclusive=True, exit_on_error=False)
