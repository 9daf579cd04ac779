"""Watching a project's files without any UI: which directories, which paths matter, and batches of changes.

Directories are watched, not files (an atomic rename replaces a file's inode), with our own filter
(watchfiles' default one silently drops `.git`, `.venv`, … paths) and a small debounce. On Linux inotify
is read on the event loop (`inotify_batches`): the process sleeps until the kernel has an event, so idle
watching costs no wake-ups at all (a live view's check of the processes it shows is a timer of its own,
see `project.processes`). Elsewhere `watchfiles.awatch` is used, whose Rust loop wakes every `step` ms even
when nothing changes. `poll_batches` compares our own stat signatures every 500 ms (so a same-second
atomic rename still counts) for when native watching cannot start. The console, the HUD, `snapshot
--follow` and the fleet all watch through this module; nothing here writes.
"""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcs_tui.project.loader import RP1_DIR, WorldLoader

DEBOUNCE_MS = 20  # a batch is yielded at most this long after its first event
QUIET_MS = 5  # ... or as soon as this long passes without a new event (inotify)
STEP_MS = 10  # watchfiles' wake-up period (non-Linux)
POLL_MS = 500
# The most files one scan signs: a bound on what it holds (about 300 bytes a file), far past the largest trees
# (10 000 sessions of 5 files). Past it a tree is polled in part: the files beyond the bound are not compared.
SCAN_LIMIT = 250_000
POLL_SHARE = 0.2  # a poll waits at least this many times its own scan's duration: at most a fifth of a core


@dataclass(frozen=True)
class WatchTargets:
    """What to watch: directories for awatch, plus the filter deciding which paths matter."""

    dirs: tuple[Path, ...]
    accept: Callable[[Path], bool]
    # Watched without their subdirectories: the rp1 database's directory (it may be /tmp or $HOME) and the
    # project's own directory (only for `.rcs` coming and going).
    flat: frozenset[Path] = frozenset()
    # Trees watched whole again when they appear (in a flat directory): `.rcs` created, or replaced by another.
    tops: frozenset[Path] = frozenset()


def temp_name(name: str) -> bool:
    """The temp half of an atomic write (`.name.XXXX.tmp`): its rename is what counts, not its writes."""
    return name.startswith(".") and name.endswith(".tmp")


def watch_targets(loader: WorldLoader) -> WatchTargets:
    """`.rcs/` (state, team, tasks, plans, metrics, hud-config), the rp1 database's directory and the
    project's `.rp1/`, and the project's directory itself: `.rcs` moved away, deleted or put back (a restore
    from a copy) is a change of everything, and a new `.rcs` must be watched."""
    rcs = loader.layout.rcs
    dirs = [rcs, loader.root]
    # the project's own directory deleted and made again, or moved away and replaced by a copy: its parent
    # is watched, flat, for it, so the new one is read whole and watched (the old watches followed the old)
    above = [loader.root.parent] if loader.root.parent != loader.root else []
    dirs += above
    rp1_dirs: list[Path] = []
    if loader.rp1_path is not None:  # beside the database path, and beside the file a link leads to
        # A directory inside `.rcs` is watched whole with it: watched flat as well, it would hide `.rcs`'s
        # subdirectories (a database kept in `.rcs` itself) and name its files twice.
        rp1_dirs = [d for d in dict.fromkeys([loader.rp1_path.parent, Path(os.path.realpath(loader.rp1_path)).parent])
                    if d != rcs and rcs not in d.parents]
        # and their parents, flat: rp1's directory made after the view started (a first use of rp1), or
        # moved away and back, is seen as `.rcs` is in the project's directory
        dirs += [*rp1_dirs, *(d.parent for d in rp1_dirs if d.parent != rcs and rcs not in d.parent.parents)]
        # the project's `.rp1/`, flat: its `project_id` written, changed or removed moves which runs are the
        # project's (made after the view started, it is seen coming in the project's directory)
        rp1_dirs.append(loader.root / RP1_DIR)
        dirs.append(loader.root / RP1_DIR)

    def accept(path: Path) -> bool:
        return not temp_name(path.name) and bool(loader.sections_for([path]))

    existing = tuple(dict.fromkeys(d for d in dirs if os.path.isdir(d)))  # never raises (an unreadable parent)
    return WatchTargets(existing, accept, frozenset(d for d in existing if d != rcs) | frozenset(rp1_dirs),
                        frozenset({rcs, loader.root, *rp1_dirs}))


def arriving(path: Path, targets: WatchTargets) -> list[Path]:
    """The trees to watch when `path` came (or may be read again): itself, then every watched top lying
    under it that is there now (the project's directory put back from a copy holds its `.rcs`)."""
    return [path, *sorted(t for t in targets.tops if path in t.parents and os.path.isdir(t))]


async def watch_batches(targets: WatchTargets, *, stop_event: asyncio.Event | None = None,
                        debounce_ms: int = DEBOUNCE_MS) -> AsyncIterator[frozenset[Path]]:
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


MAX_DIRS = 65_536  # directories one view watches; past it the view polls and says why (never a silent rest)
# inotify's event bits (inotify(7)), as plain ints for the per-event test.
_OVERFLOW, _IGNORED, _ISDIR, _NEW = 0x4000, 0x8000, 0x40000000, 0x100 | 0x80  # IN_CREATE | IN_MOVED_TO
_MOVED_FROM, _DELETE, _ATTRIB = 0x40, 0x200, 0x4


def directory_event(mask: int, path: Path, targets: WatchTargets, watched: bool = True) -> tuple[bool, bool, bool]:
    """What an event naming a directory asks of a watcher: whether to stop watching its tree (it was moved
    away or deleted), whether to watch its tree (it came: inside a watched tree, or it is one of the watched
    tops itself, as when `.rcs` is replaced by another), and whether to name it as changed (what it held
    went or came with it: the loader reads it again, or finds it gone). A directory whose attributes
    changed while it is not watched as it is (`watched` False: its watch was refused, or its permissions
    moved since) is watched and read as if it came; a watched one's attributes also change with every
    entry made in it, which is no reason to walk it."""
    went = bool(mask & (_MOVED_FROM | _DELETE))
    new = mask & _NEW or (mask & _ATTRIB and not watched)
    came = bool(new) and (path in targets.tops or path.parent not in targets.flat)
    return went, came, (went or came) and targets.accept(path)



def list_dir(path: Path, dirs: list[Path] | None, files: list[Path] | None) -> None:
    """One step of a watched tree's walk: `path`'s subdirectories onto `dirs` and its other entries onto
    `files` (each only when given); links are not followed, and a directory that went is skipped."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if dirs is not None:
                    dirs.append(Path(entry.path))
            elif files is not None:
                files.append(Path(entry.path))
        except OSError:
            continue


def mode_of(path: Path) -> int | None:
    """A directory's permission bits now (None when it cannot be looked at)."""
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def too_many_dirs() -> OSError:
    """The error a watcher gives past `MAX_DIRS`: treated as out of watches, so the view polls, saying why."""
    return OSError(errno.ENOSPC, f"more than {MAX_DIRS} directories to watch")


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
        # The watch held for each watched directory. An event counts only when it comes from that watch: a tree
        # moved away (or deleted) keeps reporting, under the paths it left, the events the kernel queued
        # before its watches went, which would otherwise unwatch the tree now at those paths.
        self.current: dict[Path, Any] = {}
        # Each watched directory's permission bits when watched: an attribute change that moved them (made
        # unreadable, or readable again) is a reason to read it again; one that did not (an entry made in
        # it changes its link count) is none.
        self.modes: dict[Path, int | None] = {}

    def add_tree(self, top: Path, *, collect: bool = True, recursive: bool = True) -> list[Path]:
        """Watch `top` and (when `recursive`) every directory under it; return the files found (they
        may be new) when `collect` (the initial watch of a large tree skips building them)."""
        files: list[Path] = []
        stack = [top]
        while stack:
            if len(self.inotify.watches) >= MAX_DIRS:
                raise too_many_dirs()
            path = stack.pop()
            try:
                watch = self.inotify.add_watch(path, self.mask)
            except OSError as exc:
                if path == top or exc.errno == errno.ENOSPC:  # out of watches, so polling is the honest answer
                    raise
                continue
            if watch.path != path:  # a directory renamed in the tree keeps its watch: events name the new path
                watch.path = path
            self.current[path] = watch
            self.modes[path] = mode_of(path)
            list_dir(path, stack if recursive else None, files if collect else None)
        return files

    def paths_of(self, event: Any, targets: WatchTargets) -> tuple[set[Path], bool]:
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
        if path is None or self.current.get(path.parent) is not event.watch:
            return set(), False  # from a watch of a tree that went: what it says is about the past
        if mask & _ISDIR or path in targets.tops:  # a top (`.rcs`) may be a link to a directory
            same = path in self.current and (not mask & _ATTRIB or self.modes.get(path) == mode_of(path))
            went, came, named = directory_event(mask, path, targets, same)
            out = {path} if named else set()
            if went or (came and path in targets.tops):  # a link retargeted: the tree it led to is not ours
                self.forget_tree(path)
            if came:
                for tree in arriving(path, targets):
                    try:
                        out.update(p for p in self.add_tree(tree, recursive=tree not in targets.flat)
                                   if targets.accept(p))
                    except OSError as exc:
                        if exc.errno == errno.ENOSPC:  # out of watches: its writes would never be seen; poll
                            raise
            return out, False
        return ({path} if targets.accept(path) else set()), False

    def forget_tree(self, top: Path) -> None:
        """Stop watching `top` and every directory under it: it was moved away. Its watches would keep
        reporting its writes under the path it left, loading a session that is no longer there. A move
        within the tree is followed by the arrival event, which watches it again under its new path."""
        for path in [p for p in self.current if p == top or top in p.parents]:
            watch = self.current.pop(path)
            self.modes.pop(path, None)
            try:
                self.inotify.rm_watch(watch)
            except OSError:  # already gone with its directory
                pass

    def drain(self, targets: WatchTargets, into: set[Path]) -> bool:
        """Take every event the kernel has ready (never waiting) and add their relevant paths to `into`;
        whether there was any event at all. An overflowed queue counts as "everything changed"."""
        inotify = self.inotify
        inotify.sync_timeout = 0  # sync_get: a cached or readable event, else None at once
        got = False
        while (event := inotify.sync_get()) is not None:
            got = True
            paths, overflow = self.paths_of(event, targets)
            into |= paths
            if overflow:
                self.rewatch(targets)
                into.update(scan(targets))
        return got

    def rewatch(self, targets: WatchTargets) -> None:
        """Watch every directory again: after an overflow, the events that created some were lost, and
        without a watch their files' later writes would never be seen."""
        for d in targets.dirs:
            try:
                self.add_tree(d, collect=False, recursive=d not in targets.flat)
            except OSError as exc:
                if exc.errno == errno.ENOSPC:  # out of watches: polling is the honest answer
                    raise

    def close(self) -> None:
        self.inotify.close()


class _Batch:
    """The batch being gathered: its paths, when its first relevant event and its latest event came."""

    __slots__ = ("paths", "first", "last", "timer")

    def __init__(self) -> None:
        self.paths: set[Path] = set()
        self.first = self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None


async def inotify_batches(targets: WatchTargets, *, debounce_ms: int = DEBOUNCE_MS, quiet_ms: int = QUIET_MS,
                          on_ready: Callable[[], None] | None = None) -> AsyncIterator[frozenset[Path]]:
    """Yield sets of relevant changed paths from inotify: a batch closes `quiet_ms` after its latest
    event or `debounce_ms` after its first relevant one. `on_ready` is called once every directory is
    watched: a change made before then may have gone unseen (on a loaded machine that takes seconds).

    The inotify descriptor is registered with the event loop, whose callback takes everything the
    kernel has ready in one read (an atomic write is six events) and times the batch with one timer:
    no task, future, queue hop or timeout per event. At 50 runtime writes a second elsewhere in the
    tree that per-event machinery was most of the live HUD's CPU. It stays on the event loop rather
    than in a thread of its own, which would contend with the loads and the drawing for the
    interpreter lock. Idle, the process sleeps until the kernel has an event.

    The descriptor is read only while the consumer waits for a batch: while it loads and draws one,
    the kernel keeps the new events and the next read takes them all at once. A busy source costs
    one batch per load, never a backlog of stale batches, and no wake-ups while the loads run.
    """
    tree = TreeWatch()
    loop = asyncio.get_running_loop()
    closed: set[Path] = set()  # closed batches the consumer has not taken yet, merged
    failed: list[Exception] = []
    wake = asyncio.Event()
    batch = _Batch()
    quiet, debounce = quiet_ms / 1000, debounce_ms / 1000

    def close_or_wait() -> None:
        now = loop.time()
        if now - batch.last >= quiet or now >= batch.first + debounce:
            batch.timer = None
            closed.update(batch.paths)
            batch.paths.clear()
            wake.set()
        else:
            wait = min(batch.last + quiet, batch.first + debounce) - now
            batch.timer = loop.call_later(wait, close_or_wait)

    def readable() -> None:
        try:
            got = tree.drain(targets, batch.paths)
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            failed.append(exc)
            wake.set()
            return
        if got:
            batch.last = loop.time()
        if batch.paths and batch.timer is None:
            batch.first = batch.last
            batch.timer = loop.call_later(quiet, close_or_wait)

    registered = False
    try:
        for d in targets.dirs:  # in a thread: a thousand session dirs must not stall the first frames
            await asyncio.to_thread(tree.add_tree, d, collect=False, recursive=d not in targets.flat)
        if on_ready is not None:
            on_ready()
        while True:
            loop.add_reader(tree.inotify.fd, readable)
            registered = True
            await wake.wait()
            loop.remove_reader(tree.inotify.fd)
            registered = False
            wake.clear()
            if failed:
                raise failed[0]
            if closed:
                taken = frozenset(closed)
                closed.clear()
                yield taken
    finally:
        if batch.timer is not None:
            batch.timer.cancel()
        if registered and not loop.is_closed():
            loop.remove_reader(tree.inotify.fd)
        tree.close()


def native_batches(targets: WatchTargets, *, debounce_ms: int = DEBOUNCE_MS,
                   on_ready: Callable[[], None] | None = None) -> AsyncIterator[frozenset[Path]]:
    """inotify on Linux, watchfiles elsewhere. `on_ready`: called once watching has started (watchfiles
    does not say when: half a second after it is asked to)."""
    if sys.platform.startswith("linux"):
        return inotify_batches(targets, debounce_ms=debounce_ms, on_ready=on_ready)
    if on_ready is not None:
        asyncio.get_running_loop().call_later(0.5, on_ready)
    return watch_batches(targets, debounce_ms=debounce_ms)


Signature = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns


def scan(targets: WatchTargets, limit: int = SCAN_LIMIT, *, dirs: bool = False) -> dict[Path, Signature]:
    """Stat signature (inode, size, mtime_ns, ctime_ns) of every relevant file under the watched directories,
    and with `dirs` of every directory under them too (not the watched tops themselves). The change time is
    part of it: a rewrite of the same size whose modification time was put back still moves it."""
    return dict(signatures(targets, limit, dirs=dirs))


def signatures(targets: WatchTargets, limit: int = SCAN_LIMIT, *,
               dirs: bool = False) -> Iterator[tuple[Path, Signature]]:
    """What `scan` holds, one path at a time: a caller that keeps only a few of them (`written_since`) never
    holds a signature of every file (at 10 000 sessions, tens of megabytes for a moment)."""
    stack = list(targets.dirs)
    tops = set(targets.dirs)
    count = 0
    while stack and count < limit:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    path = Path(entry.path)
                    # a tree to watch that was not there at the start (`.rcs` made, rp1's directory made)
                    # is found in the directory above it, as an event would name it
                    if top not in targets.flat or (path in targets.tops and path not in tops):
                        stack.append(path)
                        if dirs and path not in tops and targets.accept(path):
                            st = entry.stat(follow_symlinks=False)
                            count += 1
                            yield path, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                elif targets.accept(path := Path(entry.path)):
                    st = entry.stat(follow_symlinks=False)
                    count += 1
                    yield path, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            except OSError:
                continue


def written_since(targets: WatchTargets, since_ns: int) -> frozenset[Path]:
    """The relevant files changed since `since_ns` (wall clock, ns), a little earlier included (file times
    are coarse), and the directories whose entries changed since (a file deleted or renamed away leaves
    nothing else behind): what a watcher placed after that moment may have missed. Judged by the change
    time, which no writer can set back."""
    early = since_ns - 2_000_000_000
    return frozenset(p for p, sig in signatures(targets, dirs=True) if sig[3] >= early)


async def poll_batches(targets: WatchTargets, interval: float | Callable[[], float] = POLL_MS / 1000, *,
                       resync: bool = False, on_ready: Callable[[], None] | None = None,
                       ) -> AsyncIterator[frozenset[Path]]:
    """Polling fallback: compare stat signatures (inode included, so same-second renames count).
    `interval` (seconds) may be a function, asked before each wait: the fleet lengthens it as more projects poll.

    `resync`: first yield every file, for a start after native watching failed, which may have lost
    changes (a batch it had not delivered, a directory it could not watch) the first scan cannot tell.
    `on_ready` is called once the first scan is taken (changes before it are not compared against).
    """
    loop = asyncio.get_running_loop()
    took = loop.time()
    before = await asyncio.to_thread(scan, targets)
    took = loop.time() - took
    if on_ready is not None:
        on_ready()
    if resync and before:
        yield frozenset(before)
    while True:
        await asyncio.sleep(max(interval() if callable(interval) else interval, took / POLL_SHARE))
        took = loop.time()
        after = await asyncio.to_thread(scan, targets)
        took = loop.time() - took
        changed = frozenset(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        before = after
        if changed:
            yield changed
