"""The Linux watcher's batches: what a burst of real writes yields, and that stopping it leaves nothing
running. Linux only (inotify)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project.loader import WorldLoader
from rcs_tui.project.watch import inotify_batches, watch_targets

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
    batches = inotify_batches(watch_targets(loader))
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)  # the watches are in place
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
    await asyncio.to_thread(lambda: None)  # the loop's own worker thread, which stays: not the watcher's
    threads, kinds = set(threading.enumerate()), open_kinds()
    batches = inotify_batches(watch_targets(loader))
    pending = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)
    assert "anon_inode:inotify" in open_kinds()
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    await batches.aclose()
    assert [t for t in threading.enumerate() if t not in threads and t.is_alive()] == []
    assert open_kinds() == kinds


async def test_what_changes_while_the_consumer_is_busy_comes_as_one_batch(tmp_path):
    """A console busy loading one batch gets everything that changed meanwhile at once, not a backlog
    of stale batches to load one after another."""
    loader = tree(tmp_path)
    session = tmp_path / ".rcs" / "state" / "sessions" / "s1"
    batches = inotify_batches(watch_targets(loader))
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)
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
