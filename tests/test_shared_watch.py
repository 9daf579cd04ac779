"""The fleet's shared inotify instance: each project's batches hold only its own changes (a directory
several watch, like the rp1 database's, reaches each of them), renamed and moved-away session directories
are followed, a project that leaves gives its watches back, the last one closes the instance, lost events
are made good by a rescan, and a project that cannot be watched is told so. Linux only (inotify)."""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project.shared_watch import SharedWatcher
from rcs_tui.project.watch import WatchTargets
from tests.procfix import inotify_instances

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def targets(root: Path, shared: Path | None = None) -> WatchTargets:
    (root / "sessions" / "s1").mkdir(parents=True, exist_ok=True)
    dirs = (root,) if shared is None else (root, shared)
    return WatchTargets(dirs, lambda p: p.suffix in (".json", ".db"), frozenset({shared} if shared else ()))




async def gather(batches, want: set[Path], timeout: float = 5.0) -> set[Path]:
    """Everything yielded until every path in `want` was (or the timeout passed)."""
    seen: set[Path] = set()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not want <= seen and loop.time() < end:
        try:
            seen |= await asyncio.wait_for(anext(batches), end - loop.time())
        except TimeoutError:
            break
    return seen


async def test_each_project_hears_only_its_own_changes_and_a_shared_directory_reaches_all(tmp_path):
    rp1 = tmp_path / "rp1"
    rp1.mkdir()
    watcher = SharedWatcher()
    a = await watcher.subscribe(targets(tmp_path / "a", rp1))
    b = await watcher.subscribe(targets(tmp_path / "b", rp1))
    assert watcher.instances == 1 and inotify_instances() >= 1
    atomic_write(tmp_path / "a" / "sessions" / "s1" / "forge-state.json", dump_json({"active": True}))
    (tmp_path / "b" / "sessions" / "s2").mkdir()  # a new session: watched as it appears
    atomic_write(tmp_path / "b" / "sessions" / "s2" / "team-state.json", dump_json({"active": True}))
    (rp1 / "rp1.db").write_text("x")
    seen_a = await gather(a, {tmp_path / "a" / "sessions" / "s1" / "forge-state.json", rp1 / "rp1.db"})
    seen_b = await gather(b, {tmp_path / "b" / "sessions" / "s2" / "team-state.json", rp1 / "rp1.db"})
    assert seen_a == {tmp_path / "a" / "sessions" / "s1" / "forge-state.json", rp1 / "rp1.db"}
    assert seen_b == {tmp_path / "b" / "sessions" / "s2" / "team-state.json", rp1 / "rp1.db"}
    await a.aclose()
    await b.aclose()


async def test_leaving_gives_the_watches_back_and_the_last_one_closes_the_instance(tmp_path):
    before = inotify_instances()
    watcher = SharedWatcher()
    a = await watcher.subscribe(targets(tmp_path / "a"))
    b = await watcher.subscribe(targets(tmp_path / "b"))
    both = watcher.watches
    await a.aclose()
    assert watcher.watches == both // 2 and watcher.instances == 1
    atomic_write(tmp_path / "b" / "sessions" / "s1" / "x.json", dump_json({}))
    assert await gather(b, {tmp_path / "b" / "sessions" / "s1" / "x.json"}) == {
        tmp_path / "b" / "sessions" / "s1" / "x.json"}  # the other project still watched
    await b.aclose()
    assert watcher.instances == 0 and inotify_instances() == before
    c = await watcher.subscribe(targets(tmp_path / "c"))  # a later project gets a fresh instance
    assert watcher.instances == 1
    await c.aclose()


async def test_a_renamed_session_is_followed_under_its_new_name_and_one_moved_away_is_dropped(tmp_path):
    root = tmp_path / "p"
    sessions = root / "sessions"
    (sessions / "s0").mkdir(parents=True)
    (sessions / "s1" / "deep").mkdir(parents=True)
    watcher = SharedWatcher()
    batches = await watcher.subscribe(targets(root))
    os.rename(sessions / "s1", sessions / "s2")
    atomic_write(sessions / "s2" / "deep" / "a.json", dump_json({}))
    seen = await gather(batches, {sessions / "s2" / "deep" / "a.json"})
    assert sessions / "s2" / "deep" / "a.json" in seen and not any(sessions / "s1" in p.parents for p in seen)
    watched = watcher.watches
    os.rename(sessions / "s2", tmp_path / "away")
    atomic_write(tmp_path / "away" / "b.json", dump_json({}))
    atomic_write(sessions / "s0" / "c.json", dump_json({}))
    seen = await gather(batches, {sessions / "s0" / "c.json"})
    assert seen == {sessions / "s0" / "c.json"}  # nothing reported under the path it left
    assert watcher.watches == watched - 2  # s2 and s2/deep given back
    await batches.aclose()


async def test_lost_events_are_made_good_by_a_rescan(tmp_path, monkeypatch):
    from asyncinotify import Inotify

    root = tmp_path / "p"
    watcher = SharedWatcher()
    batches = await watcher.subscribe(targets(root))
    real = Inotify.sync_get
    lost = [SimpleNamespace(mask=0x4000, name=None, path=None)]  # the kernel's queue overflowed

    def overflowing(self):
        if lost:  # every event ready now is lost: only the overflow marker arrives
            while real(self) is not None:
                pass
            return lost.pop()
        return real(self)

    monkeypatch.setattr(Inotify, "sync_get", overflowing)
    (root / "sessions" / "s9").mkdir()  # its events are lost in the overflow
    (root / "sessions" / "s9" / "m.json").write_text("{}")
    seen = await gather(batches, {root / "sessions" / "s9" / "m.json"})
    assert root / "sessions" / "s9" / "m.json" in seen
    atomic_write(root / "sessions" / "s9" / "n.json", dump_json({}))  # watched after the rescan
    assert root / "sessions" / "s9" / "n.json" in await gather(batches, {root / "sessions" / "s9" / "n.json"})
    await batches.aclose()


async def test_a_project_that_cannot_be_watched_is_told_and_leaves_nothing_behind(tmp_path, monkeypatch):
    from asyncinotify import Inotify

    watcher = SharedWatcher()
    ok = await watcher.subscribe(targets(tmp_path / "a"))
    watched = watcher.watches

    def exhausted(self, path, mask):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Inotify, "add_watch", exhausted)
    with pytest.raises(OSError) as caught:
        await watcher.subscribe(targets(tmp_path / "b"))
    assert caught.value.errno == errno.ENOSPC
    assert watcher.watches == watched  # the first project is untouched
    await ok.aclose()
