"""The live fleet watches any number of local projects within the kernel's inotify limits: every local
project shares one inotify instance, a project that cannot be watched is polled and says why (in its
row, the status line and the project view), and changes still reach every row."""

from __future__ import annotations

import asyncio
import errno
import os
import time
from pathlib import Path

import pytest

from rcs_tui.fleet.hub import FleetHub
from rcs_tui.fleet.projects import expand_projects
from rcs_tui.fleet.rows import once_json
from rcs_tui.project.shared_watch import SharedWatcher, poll_reason
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.ui.linetable import LineTable
from tests.procfix import inotify_instances
from tests.statefix import canonical, mode

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="counts descriptors in /proc")




async def until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


def projects(base: Path, count: int) -> list:
    for i in range(count):
        root = base / f"p{i:03d}"
        mode(root, "forge", current_phase="execute")
        mode(root, "forge", session=f"s{i}", current_phase="execute")
        canonical(root, ["forge"])
    return expand_projects([f"{base}/*"])[0]


def phase(row, scope: str = "root") -> str | None:
    for s in (row.doc or {}).get("scopes", []):
        if s.get("scope") == scope:
            return (s["modes"].get("forge") or {}).get("phase")
    return None


async def test_150_projects_share_one_inotify_instance_and_every_row_follows_changes(tmp_path):
    found = projects(tmp_path / "code", 150)
    before = inotify_instances()
    hub = FleetHub(found)
    hub.start()
    try:
        await until(lambda: all(r.watch == "inotify" for r in hub.rows.values()), timeout=60)
        assert inotify_instances() - before == 1 and hub.watcher is not None and hub.watcher.instances == 1
        for i in (0, 77, 149):  # a root file, then a session's: each reaches its own row only
            mode(tmp_path / "code" / f"p{i:03d}", "forge", current_phase=f"verify-{i}")
            mode(tmp_path / "code" / f"p{i:03d}", "forge", session=f"s{i}", current_phase=f"review-{i}")
        rows = [hub.rows[str(tmp_path / "code" / f"p{i:03d}")] for i in (0, 77, 149)]
        await until(lambda: [phase(r) for r in rows] == ["verify-0", "verify-77", "verify-149"])
        await until(lambda: [phase(r, f"s{i}") for r, i in zip(rows, (0, 77, 149), strict=True)]
                    == ["review-0", "review-77", "review-149"])
        assert phase(hub.rows[str(tmp_path / "code" / "p001")]) == "execute"
        assert all(r.watch_reason is None for r in hub.rows.values())
    finally:
        await hub.stop()
    assert inotify_instances() == before  # released when the fleet stops


async def test_a_new_session_in_a_watched_project_is_seen(tmp_path):
    found = projects(tmp_path / "code", 3)
    hub = FleetHub(found)
    hub.start()
    try:
        await until(lambda: all(r.watch == "inotify" and r.doc and not r.doc.get("partial")
                                for r in hub.rows.values()))
        mode(tmp_path / "code" / "p002", "forge", session="fresh", current_phase="plan")
        row = hub.rows[str(tmp_path / "code" / "p002")]
        await until(lambda: phase(row, "fresh") == "plan")
    finally:
        await hub.stop()


async def test_a_project_that_cannot_be_watched_is_polled_and_says_why(tmp_path, monkeypatch):
    async def refuse(self, targets):
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(SharedWatcher, "subscribe", refuse)
    found = projects(tmp_path / "code", 2)
    app = FleetApp(found)
    async with app.run_test(size=(160, 30)):
        await until(lambda: all(r.watch == "poll" for r in app.rows.values()))
        row = app.rows[str(tmp_path / "code" / "p001")]
        assert row.watch_reason.startswith("inotify instances used up (fs.inotify.max_user_instances = ")
        mode(tmp_path / "code" / "p001", "forge", current_phase="verify")
        await until(lambda: phase(row) == "verify")  # polled, but followed all the same
        await until(lambda: f"2 polled: {row.watch_reason}" in str(app.screen.query_one("#fleet-status").render()))
        table = app.screen.query_one("#fleet-table", LineTable)
        assert table.drawn(table.keys[0])[2] == "polled"  # the HOST column
        assert app.hub.watcher.polled == 2 and app.hub.watcher.poll_interval() == 0.5
        assert once_json([row])[0]["watch"] == "poll"
        assert once_json([row])[0]["watch_reason"] == row.watch_reason


def test_the_reasons_name_the_limit_to_raise():
    assert poll_reason(OSError(errno.ENOSPC, "No space left on device")).startswith(
        "inotify watches used up (fs.inotify.max_user_watches = ")
    assert poll_reason(OSError(errno.EACCES, "Permission denied")) == "inotify failed: Permission denied"


def test_many_polled_projects_share_a_budget_of_scans():
    watcher = SharedWatcher()
    watcher.polled = 10
    assert watcher.poll_interval() == 0.5  # a few: as often as a lone project
    watcher.polled = 200
    assert watcher.poll_interval() == 10.0  # 200 trees, 20 scans a second between them


async def test_what_the_fleet_holds_is_frozen_once_read_and_given_back_when_it_closes(tmp_path):
    import gc

    found = projects(tmp_path / "code", 3)
    before = gc.get_freeze_count()
    app = FleetApp(found)
    async with app.run_test(size=(120, 30)):
        await until(lambda: all(r.doc is not None and not r.doc.get("partial") for r in app.rows.values()))
        await asyncio.sleep(0.1)
        assert gc.get_freeze_count() > before  # out of the full collections' walk
    assert gc.get_freeze_count() == 0


def test_re_reading_a_project_leaves_nothing_frozen_as_cyclic_garbage(tmp_path):
    """What the fleet froze must be freed by reference counts alone once a re-read replaces it: a frozen
    object that became cyclic garbage would leak for as long as the fleet runs."""
    import gc

    from rcs_tui.project.feed import SnapshotFeed

    root = tmp_path / "p"
    for i in range(20):
        mode(root, "forge", session=f"s{i}", current_phase="execute")
    canonical(root, ["forge"])
    feed = SnapshotFeed(root, summary=True)
    feed.first_look()
    held = feed.document()  # a row holds its latest document, as the feed holds its loaders
    gc.collect()
    gc.freeze()
    try:
        for i in range(30):  # every session re-read, some twice, then the whole project
            changed = mode(root, "forge", session=f"s{i % 20}", current_phase=f"p{i}")
            held = feed.document([changed])
        held = feed.document()
        assert held["kind"] == "snapshot"
        gc.collect()  # the garbage made since the freeze (json's encoder makes some on every write)
    finally:
        gc.unfreeze()
    assert gc.collect() == 0  # none among what was frozen
