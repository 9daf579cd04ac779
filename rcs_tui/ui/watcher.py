"""Watch the RCS tree and the rp1 database; post one `WorldUpdated` per batch of changes.

`start_watcher(node, loader)` runs a Textual worker (exclusive, `exit_on_error=False`) over *directories*
(atomic renames replace a file's inode), with our own filter (watchfiles' default one silently drops
`.git`, `.venv`, … paths) and a small debounce. On Linux it reads inotify directly on the event loop
(`inotify_batches`): the process sleeps until the kernel has an event, so idle costs no wake-ups at all.
Elsewhere it uses `watchfiles.awatch`, whose Rust loop wakes every `step` ms even when nothing changes
(100 wake-ups/s at 10 ms; a larger step costs latency, since a batch is yielded only after one quiet step).
For each batch it rebuilds only the sections the paths belong to (`WorldLoader.load(changed)`, in a thread) and posts
`WorldUpdated` to `node`. If native watching cannot start it falls back to polling stat signatures every
500 ms (our own, so a same-second atomic rename still counts) and says so with `WatchStatus`;
an error inside the loop is reported the same way and the loop restarts. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
from collections.abc import Callable
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


def watch_targets(loader: WorldLoader) -> WatchTargets:
    """`.rcs/` (state, team, tasks, plans, metrics, hud-config) and the rp1 database's directory."""
    dirs = [loader.layout.rcs]
    if loader.rp1_path is not None and loader.rp1_path.parent.is_dir():
        dirs.append(loader.rp1_path.parent)

    def accept(path: Path) -> bool:
        name = path.name
        if name.startswith(".") and name.endswith(".tmp"):
            return False  # the temp half of an atomic write; its rename is what counts
        return bool(loader.sections_for([path]))

    existing = tuple(d for d in dirs if d.is_dir())
    return WatchTargets(existing, accept)


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


_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x4000, 0x8000, 0x40000000
_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_WATCH_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
               | _IN_DELETE)
_EVENT = struct.Struct("iIII")
MAX_DIRS = 8192


class Inotify:
    """A non-blocking inotify descriptor watching directory trees (Linux; `OSError` when unavailable)."""

    def __init__(self) -> None:
        import ctypes

        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"inotify_init1: {os.strerror(errno)}")
        self.dirs: dict[int, Path] = {}

    def add_tree(self, top: Path) -> list[Path]:
        """Watch `top` and every directory under it; return the files found (they may be new)."""
        import ctypes

        files: list[Path] = []
        stack = [top]
        while stack and len(self.dirs) < MAX_DIRS:
            path = stack.pop()
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), _WATCH_MASK)
            if wd < 0:
                errno = ctypes.get_errno()
                if path == top or errno == 28:  # ENOSPC: out of watches, so polling is the honest answer
                    raise OSError(errno, f"inotify_add_watch {path}: {os.strerror(errno)}")
                continue
            self.dirs[wd] = path
            try:
                entries = list(os.scandir(path))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    else:
                        files.append(Path(entry.path))
                except OSError:
                    continue
        return files

    def read(self) -> tuple[set[Path], bool]:
        """Drain pending events: the paths they name, and whether the kernel queue overflowed."""
        paths: set[Path] = set()
        overflow = False
        while True:
            try:
                buf = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return paths, overflow
            offset = 0
            while offset + _EVENT.size <= len(buf):
                wd, mask, _cookie, length = _EVENT.unpack_from(buf, offset)
                name = buf[offset + _EVENT.size:offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    overflow = True
                    continue
                if mask & _IN_IGNORED:
                    self.dirs.pop(wd, None)
                    continue
                base = self.dirs.get(wd)
                if base is None or not name:
                    continue
                path = base / os.fsdecode(name)
                if mask & _IN_ISDIR:
                    if mask & (_IN_CREATE | _IN_MOVED_TO):
                        try:
                            paths.update(self.add_tree(path))  # files written before the watch existed
                        except OSError:
                            pass
                    continue
                paths.add(path)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


async def _readable(fd: int, timeout: float | None) -> bool:
    """Wait until `fd` is readable (True) or `timeout` seconds pass (False); no thread, no polling."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, lambda: fut.done() or fut.set_result(None))
    try:
        await asyncio.wait_for(fut, timeout)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)


async def inotify_batches(targets: WatchTargets, *, debounce_ms: int = DEBOUNCE_MS, quiet_ms: int = QUIET_MS):
    """Yield sets of relevant changed paths from inotify: a batch closes after `quiet_ms` without events
    or `debounce_ms` after its first one. An overflowed queue counts as "everything changed"."""
    ino = Inotify()
    try:
        for d in targets.dirs:
            ino.add_tree(d)
        loop = asyncio.get_running_loop()
        while True:
            await _readable(ino.fd, None)
            pending: set[Path] = set()
            first = loop.time()
            while True:
                paths, overflow = ino.read()
                pending.update(p for p in paths if targets.accept(p))
                if overflow:
                    pending.update(scan(targets))
                remaining = first + debounce_ms / 1000 - loop.time()
                if not pending or remaining <= 0 or not await _readable(ino.fd, min(quiet_ms / 1000, remaining)):
                    break
            if pending:
                yield frozenset(pending)
    finally:
        ino.close()


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
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
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


def start_watcher(node: MessagePump, loader: WorldLoader, *, force_polling: bool = False,
                  debounce_ms: int = DEBOUNCE_MS) -> Worker[None]:
    """Run the watcher as a worker of `node` (an App, Screen or Widget); messages go to `node`."""

    async def run() -> None:
        polling = force_polling
        node.post_message(WatchStatus("polling" if polling else "native",
                                      "polling requested" if polling else ""))
        failures = 0
        while True:
            targets = watch_targets(loader)
            try:
                batches = poll_batches(targets) if polling else native_batches(targets, debounce_ms=debounce_ms)
                async for paths in batches:
                    world = await asyncio.to_thread(loader.load, paths)
                    node.post_message(WorldUpdated(world, paths))
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

    return node.run_worker(run(), name="rcs-watcher", group="rcs-watcher", exclusive=True, exit_on_error=False)
