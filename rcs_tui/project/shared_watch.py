"""One inotify instance for many projects' trees: how the live fleet watches its local projects.

The kernel gives each user a small number of inotify instances (`fs.inotify.max_user_instances`, 128 on
many systems) and many more watches (`max_user_watches`). One instance per project ran out at a fleet of a
hundred or so, and every project past the limit polled its whole tree. Here every subscriber's
directories are watches on one shared instance, read on the event loop; each event is routed by the
directory it names to the subscribers watching that directory, and each subscriber gathers its own
batches with `inotify_batches`' timing (a batch closes `QUIET_MS` after its latest event or
`DEBOUNCE_MS` after its first). A subscriber that cannot be watched (the instance cannot be made, the
watches ran out) gets the `OSError`, so its caller can poll and say why (`poll_reason`); the callers
that poll share a budget of scans (`poll_interval`), so a fleet that cannot watch at all does not re-scan
every tree twice a second.
"""

from __future__ import annotations

import asyncio
import errno
import threading
from pathlib import Path
from typing import Any

from rcs_tui.project.watch import (
    _ATTRIB,
    _IGNORED,
    _ISDIR,
    _OVERFLOW,
    DEBOUNCE_MS,
    MAX_DIRS,
    POLL_MS,
    QUIET_MS,
    WatchTargets,
    arriving,
    directory_event,
    list_dir,
    mode_of,
    scan,
    temp_name,
    too_many_dirs,
)

LIMITS = {errno.EMFILE: "max_user_instances", errno.ENOSPC: "max_user_watches"}
POLL_SCANS_PER_S = 20  # tree scans a second for all polled projects together (each scan stats every file)


def poll_reason(exc: OSError) -> str:
    """Why a project is polled instead of watched, in a few words a user can act on."""
    key = LIMITS.get(exc.errno or 0)
    if key is None:
        return f"inotify failed: {exc.strerror or exc}"
    try:
        limit = Path(f"/proc/sys/fs/inotify/{key}").read_text().strip()
    except OSError:
        limit = "?"
    what = "instances" if exc.errno == errno.EMFILE else "watches"
    return f"inotify {what} used up (fs.inotify.{key} = {limit})"


class _Subscriber:
    """One tree's watches and the batch it is gathering."""

    def __init__(self, targets: WatchTargets) -> None:
        self.targets = targets
        self.dirs: set[Path] = set()
        self.paths: set[Path] = set()  # the batch being gathered
        self.closed: set[Path] = set()  # closed batches not yet taken, merged
        self.first = self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.wake = asyncio.Event()
        self.failed: list[Exception] = []
        self.overflow = False


class Subscription:
    """One tree's batches of changed paths (an async iterator); `aclose()` stops watching it, whether or
    not a batch was ever asked for."""

    def __init__(self, watcher: SharedWatcher, sub: _Subscriber) -> None:
        self.watcher, self.sub = watcher, sub

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> frozenset[Path]:
        sub = self.sub
        while True:
            if sub.failed:
                await self.aclose()
                raise sub.failed[0]
            if sub.overflow:  # events were lost: watch every directory again and count every file changed
                sub.overflow = False
                sub.closed |= await asyncio.to_thread(self.watcher._rewatch, sub)
            if sub.closed:
                taken = frozenset(sub.closed)
                sub.closed.clear()
                return taken
            await sub.wake.wait()
            sub.wake.clear()

    async def aclose(self) -> None:
        self.watcher._leave(self.sub)


class SharedWatcher:
    """Many trees watched through one inotify instance (Linux). `subscribe(targets)` starts watching one
    tree and returns its batches of changed paths; the instance is made with the first subscriber and
    closed with the last."""

    def __init__(self, *, debounce_ms: int = DEBOUNCE_MS, quiet_ms: int = QUIET_MS) -> None:
        self.debounce, self.quiet = debounce_ms / 1000, quiet_ms / 1000
        self._inotify: Any = None
        self._mask: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()  # the maps change in a joining thread and on the loop
        self._subs_of: dict[Path, list[_Subscriber]] = {}  # watched directory -> who watches it
        self._watch_of: dict[Path, Any] = {}
        self._mode_of: dict[Path, int | None] = {}  # each watched directory's permission bits (see `TreeWatch.modes`)
        self._subs: set[_Subscriber] = set()
        self.polled = 0  # projects of this fleet polled instead (their callers count themselves in and out)

    def poll_interval(self) -> float:
        """How often each polled project is scanned: every 0.5 s while few are, then less often, so that
        all of them together cost at most `POLL_SCANS_PER_S` scans a second (200 polled: every 10 s)."""
        return max(POLL_MS / 1000, self.polled / POLL_SCANS_PER_S)

    @property
    def instances(self) -> int:
        """inotify instances held: 0 or 1, however many trees are watched."""
        return 0 if self._inotify is None else 1

    @property
    def watches(self) -> int:
        return len(self._watch_of)

    # -- subscribing ------------------------------------------------------------------------
    async def subscribe(self, targets: WatchTargets) -> Subscription:
        """Watch `targets` (in a thread: a large tree must not stall the loop) and return its batches.
        Raises OSError when it cannot be watched (the caller polls); closing the iterator stops watching."""
        loop = asyncio.get_running_loop()
        if self._inotify is None:
            from asyncinotify import Inotify, Mask

            self._mask = (Mask.MODIFY | Mask.ATTRIB | Mask.CLOSE_WRITE | Mask.MOVED_FROM | Mask.MOVED_TO
                          | Mask.CREATE | Mask.DELETE | Mask.ONLYDIR)
            self._inotify = Inotify(cache_size=256)
            self._loop = loop
            loop.add_reader(self._inotify.fd, self._readable)
        sub = _Subscriber(targets)
        self._subs.add(sub)
        try:
            for d in targets.dirs:
                await asyncio.to_thread(self._add_tree, sub, d, collect=False, recursive=d not in targets.flat)
        except BaseException:
            self._leave(sub)
            raise
        return Subscription(self, sub)

    def _leave(self, sub: _Subscriber) -> None:
        if sub not in self._subs:
            return
        self._subs.discard(sub)
        if sub.timer is not None:
            sub.timer.cancel()
        if not self._subs:
            self.close()
            return
        with self._lock:
            for d in sub.dirs:
                self._unwatch(sub, d)
            sub.dirs.clear()

    def _unwatch(self, sub: _Subscriber, directory: Path) -> None:
        """`sub` no longer watches `directory`; the watch goes once nobody does (lock held)."""
        subs = self._subs_of.get(directory)
        if subs is None:
            return
        if sub in subs:
            subs.remove(sub)
        if not subs:
            del self._subs_of[directory]
            watch = self._watch_of.pop(directory, None)
            self._mode_of.pop(directory, None)
            if watch is not None:
                try:
                    self._inotify.rm_watch(watch)
                except OSError:  # already gone with its directory
                    pass

    def close(self) -> None:
        """Stop watching everything and release the instance."""
        inotify, self._inotify = self._inotify, None
        if inotify is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(inotify.fd)
            inotify.close()
        for sub in self._subs:
            if sub.timer is not None:
                sub.timer.cancel()
            sub.failed.append(OSError(errno.EBADF, "the shared watcher was closed"))
            sub.wake.set()
        self._subs_of.clear()
        self._watch_of.clear()
        self._mode_of.clear()

    # -- watches ----------------------------------------------------------------------------
    def _add_tree(self, sub: _Subscriber, top: Path, *, collect: bool = True, recursive: bool = True) -> list[Path]:
        """Watch `top` and (when `recursive`) every directory under it for `sub`; return the files found
        when `collect` (they may be new: a session directory that just appeared)."""
        files: list[Path] = []
        stack = [top]
        while stack:
            if len(sub.dirs) >= MAX_DIRS:
                raise too_many_dirs()
            path = stack.pop()
            with self._lock:
                if self._inotify is None:
                    raise OSError(errno.EBADF, "the shared watcher was closed")
                try:
                    watch = self._inotify.add_watch(path, self._mask)
                except OSError as exc:
                    if path == top or exc.errno == errno.ENOSPC:  # out of watches: polling is the honest answer
                        raise
                    continue
                if watch.path != path:  # a directory renamed in the tree keeps its watch: name the new path
                    watch.path = path
                self._watch_of[path] = watch
                self._mode_of[path] = mode_of(path)
                subs = self._subs_of.setdefault(path, [])
                if sub not in subs:
                    subs.append(sub)
                sub.dirs.add(path)
            list_dir(path, stack if recursive else None, files if collect else None)
        return files

    def _rewatch(self, sub: _Subscriber) -> set[Path]:
        """After an overflow: watch every directory again (the events that made some were lost) and
        return every relevant file, all counted as changed."""
        for d in sub.targets.dirs:
            self._add_tree(sub, d, collect=False, recursive=d not in sub.targets.flat)
        return set(scan(sub.targets))

    def _forget(self, sub: _Subscriber, top: Path) -> None:
        """`top` was moved away: stop watching it and everything under it for `sub` (a move within the
        tree is followed by its arrival, which watches it again under its new name)."""
        with self._lock:
            for d in [d for d in sub.dirs if d == top or top in d.parents]:
                sub.dirs.discard(d)
                self._unwatch(sub, d)

    # -- events -----------------------------------------------------------------------------
    def _readable(self) -> None:
        """Take every event the kernel has ready and hand its paths to the subscribers of its directory."""
        inotify = self._inotify
        if inotify is None:
            return
        inotify.sync_timeout = 0
        loop = asyncio.get_running_loop()
        now = loop.time()
        touched: set[_Subscriber] = set()
        while True:
            try:
                event = inotify.sync_get()
            except OSError:
                break
            if event is None:
                break
            mask = int(event.mask)
            if mask & _OVERFLOW:
                for sub in self._subs:
                    sub.overflow = True
                    sub.wake.set()
                continue
            name, path = event.name, event.path
            if mask & _IGNORED or name is None or path is None:
                continue
            if self._watch_of.get(path.parent) is not event.watch:
                continue  # from a watch of a tree that went (see `TreeWatch.current`): about the past
            if not mask & _ISDIR and temp_name(str(name)):
                continue  # most events of an atomic write: decided before any routing
            for sub in list(self._subs_of.get(path.parent, ())):
                touched.add(sub)
                if not mask & _ISDIR and path not in sub.targets.tops:  # a top (`.rcs`) may be a link
                    if sub.targets.accept(path):
                        sub.paths.add(path)
                    continue
                same = path in sub.dirs and (not mask & _ATTRIB or self._mode_of.get(path) == mode_of(path))
                went, came, named = directory_event(mask, path, sub.targets, same)
                if named:
                    sub.paths.add(path)
                if went or (came and path in sub.targets.tops):  # a link retargeted: its old tree is not ours
                    self._forget(sub, path)
                if came:
                    for tree in arriving(path, sub.targets):
                        try:
                            found = self._add_tree(sub, tree, recursive=tree not in sub.targets.flat)
                            sub.paths.update(p for p in found if sub.targets.accept(p))
                        except OSError as exc:
                            if exc.errno == errno.ENOSPC:  # its writes would never be seen: the caller polls
                                sub.failed.append(exc)
                                sub.wake.set()
        for sub in touched:
            sub.last = now
            if sub.paths and sub.timer is None:
                sub.first = now
                sub.timer = loop.call_later(self.quiet, self._close_or_wait, sub)

    def _close_or_wait(self, sub: _Subscriber) -> None:
        assert self._loop is not None
        now = self._loop.time()
        if now - sub.last >= self.quiet or now >= sub.first + self.debounce:
            sub.timer = None
            sub.closed |= sub.paths
            sub.paths = set()
            sub.wake.set()
        else:
            wait = min(sub.last + self.quiet, sub.first + self.debounce) - now
            sub.timer = self._loop.call_later(wait, self._close_or_wait, sub)
