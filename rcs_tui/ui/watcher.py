"""Watch the RCS tree and the rp1 database; post one `WorldUpdated` per batch of changes.

`start_watcher(node, loader)` runs a Textual worker (exclusive, `exit_on_error=False`) around
`watchfiles.awatch` over *directories* (atomic renames replace a file's inode), with our own filter
(the default one silently drops `.git`, `.venv`, … paths) and a small debounce. For each batch it
rebuilds only the sections the paths belong to (`WorldLoader.load(changed)`, in a thread) and posts
`WorldUpdated` to `node`. If native watching cannot start it falls back to polling stat signatures every
500 ms (our own, so a same-second atomic rename still counts) and says so with `WatchStatus`;
an error inside the loop is reported the same way and the loop restarts. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker

from rcs_tui.views.world import World, WorldLoader

DEBOUNCE_MS = 20
STEP_MS = 10
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
                batches = poll_batches(targets) if polling else watch_batches(targets, debounce_ms=debounce_ms)
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
