"""The Linux watcher's batches: what a burst of real writes yields, that stopping it leaves nothing
running, and that a session directory renamed, moved out of the tree, or made while the kernel's queue
overflowed or no watch was left is still reported under its present name (or the watcher stops and
polling takes over). Linux only (inotify)."""

from __future__ import annotations

import asyncio
import errno
import os
import sys
import threading
from pathlib import Path

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project.loader import WorldLoader
from rcs_tui.project.watch import TreeWatch, inotify_batches, watch_targets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def tree(tmp_path: Path) -> WorldLoader:
    (tmp_path / ".rcs" / "state" / "sessions" / "s1").mkdir(parents=True)
    return WorldLoader(tmp_path, rp1_db=False)


async def collect(batches, want: set[Path], timeout: float = 5.0) -> list[frozenset[Path]]:
    got: list[frozenset[Path]] = []
    seen: set[Path] = set()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not want <= seen and loop.time() < end:
        try:
            batch = await asyncio.wait_for(anext(batches), end - loop.time())
        except TimeoutError:
            break
        got.append(batch)
        seen |= batch
    return got


async def watching(targets, **kwargs):
    """The watcher's batches and its first batch pending, once every directory is watched (`on_ready`):
    what the test writes next is seen, however long the watches took to place on a loaded machine."""
    ready = asyncio.Event()
    batches = inotify_batches(targets, on_ready=ready.set, **kwargs)
    first = asyncio.ensure_future(anext(batches))
    await asyncio.wait_for(ready.wait(), 60)
    return batches, first


def open_kinds() -> list[str]:
    """What this process's open descriptors are (inotify instances, pipes, ...), sorted."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.append(os.readlink(f"/proc/self/fd/{fd}").split("[")[0])
        except OSError:
            continue
    return sorted(out)


async def test_a_burst_of_writes_yields_every_final_path_and_no_temp_file(tmp_path):
    loader = tree(tmp_path)
    state = tmp_path / ".rcs" / "state"
    batches, first = await watching(watch_targets(loader))
    written = {state / "sessions" / "s1" / f"{m}-state.json" for m in ("ralph", "team", "forge")}
    for path in sorted(written):
        atomic_write(path, dump_json({"active": True}))
    in_place = state / "ultrawork-state.json"
    in_place.write_text('{"active": true}')  # written in place, no rename
    new_session = state / "sessions" / "s2"
    new_session.mkdir()
    (new_session / "ralph-state.json").write_text('{"active": true}')
    want = written | {in_place, new_session / "ralph-state.json"}
    got = [await asyncio.wait_for(first, 5)] + await collect(batches, want - set())
    seen = set().union(*got)
    assert want <= seen
    assert not [p for p in seen if p.name.endswith(".tmp")]
    assert len(got) < 3 * len(want)  # bursts are batched, not one batch per event
    await batches.aclose()


async def test_stopping_the_watcher_leaves_no_thread_and_no_descriptor_behind(tmp_path):
    loader = tree(tmp_path)
    threads, kinds = set(threading.enumerate()), open_kinds()
    batches, pending = await watching(watch_targets(loader))
    assert "anon_inode:inotify" in open_kinds()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await batches.aclose()
    # The loop's own pool of worker threads (`asyncio_N`) stays with the loop: a job handed to it just as the
    # previous one ends may start another, idle once done. Any other thread would be the watcher's.
    left = [t for t in threading.enumerate() if t not in threads and t.is_alive()]
    assert [t for t in left if not t.name.startswith("asyncio_")] == []
    assert open_kinds() == kinds


async def test_what_changes_while_the_consumer_is_busy_comes_as_one_batch(tmp_path):
    """A console busy loading one batch gets everything that changed meanwhile at once, not a backlog
    of stale batches to load one after another."""
    loader = tree(tmp_path)
    session = tmp_path / ".rcs" / "state" / "sessions" / "s1"
    batches, first = await watching(watch_targets(loader))
    atomic_write(session / "ralph-state.json", dump_json({"active": True}))
    assert session / "ralph-state.json" in await asyncio.wait_for(first, 5)
    written = set()
    for i in range(8):  # the consumer is busy: these land over ~0.4 s, well apart
        path = session / f"mode{i}-state.json"
        atomic_write(path, dump_json({"active": True}))
        written.add(path)
        await asyncio.sleep(0.05)
    assert await asyncio.wait_for(anext(batches), 5) == frozenset(written)
    await batches.aclose()


# -- session directories renamed, moved out or made while events were lost ---------------------------------


async def _first_batch_with(batches, path: Path, timeout: float = 3.0) -> set[Path]:
    """Everything yielded until `path` shows up (or the timeout passes)."""
    seen: set[Path] = set()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while path not in seen and loop.time() < end:
        try:
            seen |= await asyncio.wait_for(anext(batches), end - loop.time())
        except TimeoutError:
            break
    return seen


async def test_writes_in_a_renamed_session_directory_are_seen_under_its_new_name(tmp_path):
    """`mv sessions/s1 sessions/s2`: later writes in s2 are reported as s2's files, not as the gone s1's
    (which would load a session that no longer exists and never show s2's change)."""
    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    atomic_write(sessions / "s1" / "ralph-state.json", dump_json({"active": True}))
    batches, first = await watching(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    os.rename(sessions / "s1", sessions / "s2")
    assert sessions / "s2" / "ralph-state.json" in await asyncio.wait_for(first, 5)
    atomic_write(sessions / "s2" / "team-state.json", dump_json({"active": True}))
    seen = await _first_batch_with(batches, sessions / "s2" / "team-state.json")
    await batches.aclose()
    assert sessions / "s2" / "team-state.json" in seen
    assert not any(sessions / "s1" in p.parents for p in seen)


async def test_a_session_created_while_the_kernel_queue_overflowed_is_watched_afterwards(tmp_path, monkeypatch):
    """An overflowed queue loses the new directory's own event: its files are rescanned, and its later
    writes must still reach the screen."""
    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    real = TreeWatch.paths_of

    def lost_in_overflow(self, event, targets):
        if int(event.mask) & 0x40000000 and int(event.mask) & 0x100:  # a new directory's event: dropped
            return set(), True
        return real(self, event, targets)

    monkeypatch.setattr(TreeWatch, "paths_of", lost_in_overflow)
    batches, first = await watching(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    (sessions / "s2").mkdir()
    (sessions / "s2" / "ralph-state.json").write_text('{"active": true}')
    seen = await asyncio.wait_for(first, 5)
    if sessions / "s2" / "ralph-state.json" not in seen:
        seen |= await _first_batch_with(batches, sessions / "s2" / "ralph-state.json")
    assert sessions / "s2" / "ralph-state.json" in seen  # the rescan after the overflow
    await asyncio.sleep(0.1)
    atomic_write(sessions / "s2" / "team-state.json", dump_json({"active": True}))
    seen = await _first_batch_with(batches, sessions / "s2" / "team-state.json")
    await batches.aclose()
    assert sessions / "s2" / "team-state.json" in seen


async def test_running_out_of_watches_for_a_new_session_is_not_silent(tmp_path, monkeypatch):
    """No inotify watch left for a new session's directory: its writes must still be seen (or the watcher
    must stop, so that it falls back to polling); never silently unwatched."""
    from asyncinotify import Inotify

    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    batches, first = await watching(watch_targets(WorldLoader(tmp_path, rp1_db=False)))

    def exhausted(self, path, mask):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Inotify, "add_watch", exhausted)
    (sessions / "s2").mkdir()
    await asyncio.sleep(0.1)
    atomic_write(sessions / "s2" / "ralph-state.json", dump_json({"active": True}))
    seen: frozenset[Path] | OSError | None = None
    try:
        seen = await asyncio.wait_for(first, 2)
    except TimeoutError:  # nothing at all: the new session is silently unwatched (caught first: an OSError)
        pass
    except OSError as exc:  # the watcher stopped: start_watcher then falls back to polling
        seen = exc
    finally:
        await batches.aclose()
    assert isinstance(seen, OSError) or (seen is not None and sessions / "s2" / "ralph-state.json" in seen)


async def test_a_session_directory_moved_out_of_the_tree_is_no_longer_watched(tmp_path):
    """`mv sessions/s1 /elsewhere`: its later writes are not reported under the path it left (each would
    load a session that is gone), and its watches are given back to the kernel."""
    from rcs_tui.project import watch as watcher

    sessions = tmp_path / "p" / ".rcs" / "state" / "sessions"
    (sessions / "s1" / "deep").mkdir(parents=True)
    (sessions / "s0").mkdir()
    atomic_write(sessions / "s1" / "ralph-state.json", dump_json({"active": True}))
    made: list[watcher.TreeWatch] = []
    real = watcher.TreeWatch.__init__

    def spy(self) -> None:
        real(self)
        made.append(self)

    watcher.TreeWatch.__init__ = spy  # type: ignore[method-assign]
    try:
        batches, first = await watching(watch_targets(WorldLoader(tmp_path / "p", rp1_db=False)))
    finally:
        watcher.TreeWatch.__init__ = real  # type: ignore[method-assign]
    watched = {w.path for w in made[0].inotify.watches}
    assert {sessions / "s1", sessions / "s1" / "deep"} <= watched
    away = tmp_path / "away"
    os.rename(sessions / "s1", away)
    atomic_write(sessions / "s0" / "team-state.json", dump_json({"active": True}))
    seen = set(await asyncio.wait_for(first, 5))
    if sessions / "s0" / "team-state.json" not in seen:
        seen |= await _first_batch_with(batches, sessions / "s0" / "team-state.json")
    atomic_write(away / "team-state.json", dump_json({"active": True}))
    atomic_write(away / "deep" / "x-state.json", dump_json({"active": True}))
    atomic_write(sessions / "s0" / "ralph-state.json", dump_json({"active": True}))
    seen |= await _first_batch_with(batches, sessions / "s0" / "ralph-state.json")
    left = {w.path for w in made[0].inotify.watches}
    await batches.aclose()
    assert not any(sessions / "s1" in p.parents for p in seen)
    assert sessions / "s1" not in left and sessions / "s1" / "deep" not in left



async def test_a_directory_whose_permissions_change_is_read_again_and_an_entry_made_in_one_is_not_a_walk(tmp_path):
    """A session directory made unreadable, or readable again, changes nothing but its attributes: it is
    named as changed, so its files are read again (before, what it held stayed as last read until its next
    write). A new session changes its parent's attributes too (the link count), which walks nothing."""
    loader = tree(tmp_path)
    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1" / "forge-state.json").write_text('{"active": true}')
    batches, first = await watching(watch_targets(loader))
    (sessions / "s1").chmod(0o700)
    seen = {await asyncio.wait_for(first, 5)}.pop()
    if sessions / "s1" not in seen:
        seen |= await _first_batch_with(batches, sessions / "s1")
    assert sessions / "s1" in seen
    (sessions / "s2").mkdir()
    (sessions / "s2" / "ralph-state.json").write_text('{"active": true}')
    seen = await _first_batch_with(batches, sessions / "s2" / "ralph-state.json")
    assert sessions / "s2" / "ralph-state.json" in seen and sessions / "s1" / "forge-state.json" not in seen
    await batches.aclose()
