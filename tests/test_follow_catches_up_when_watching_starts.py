"""Following a project (`snapshot --follow`, the flight recorder, the fleet's rows): a change made after the
first document but before the watcher watches every directory is still sent, however long the watcher took
to start (seconds on a loaded machine). Before, the catching-up re-read ran half a second after the start,
and a change made between then and the watches being in place was lost for good."""

from __future__ import annotations

import asyncio
import sys

import pytest

from rcs_tui.project.feed import SnapshotFeed, follow_documents
from tests.statefix import canonical, mode
from tests.watchfix import hold_watches

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the held-back watches are inotify's")


def phase(doc: dict) -> str | None:
    root = next(s for s in doc["scopes"] if s["scope"] == "root")
    return root["modes"]["forge"]["phase"]


async def test_a_change_made_while_the_watches_are_being_placed_is_sent(tmp_path, monkeypatch):
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    placing, release = hold_watches(monkeypatch)  # the watches wait until the test has written its change
    docs = follow_documents(SnapshotFeed(tmp_path))
    try:
        assert phase(await anext(docs)) == "executing"
        following = asyncio.ensure_future(anext(docs))
        assert await asyncio.to_thread(placing.wait, 60)
        await asyncio.sleep(1.0)  # later than the old half-second re-read: never earlier, whatever the load
        mode(tmp_path, "forge", current_phase="verifying")  # no directory is watched yet
        release.set()
        assert phase(await asyncio.wait_for(following, 60)) == "verifying"
        mode(tmp_path, "forge", current_phase="fixing")  # and the watches, now in place, see what follows
        assert phase(await asyncio.wait_for(anext(docs), 60)) == "fixing"
    finally:
        release.set()
        await docs.aclose()


def session_modes(doc: dict, sid: str) -> list[str] | None:
    scope = next((s for s in doc["scopes"] if s["scope"] == sid), None)
    return None if scope is None else sorted(scope["modes"])


async def test_a_file_deleted_while_the_watches_are_being_placed_is_gone_from_what_is_sent(tmp_path, monkeypatch):
    """A deletion leaves no file behind to find by its time: the catching-up re-read finds it by its directory."""
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "ultrawork", "s1", current_phase="executing")
    await asyncio.sleep(2.2)  # written well before the follower starts: not read again for being recent
    placing, release = hold_watches(monkeypatch)
    docs = follow_documents(SnapshotFeed(tmp_path))
    try:
        assert session_modes(await anext(docs), "s1") == ["team", "ultrawork"]
        following = asyncio.ensure_future(anext(docs))
        assert await asyncio.to_thread(placing.wait, 60)
        (tmp_path / ".rcs" / "state" / "sessions" / "s1" / "ultrawork-state.json").unlink()
        release.set()
        assert session_modes(await asyncio.wait_for(following, 60), "s1") == ["team"]
    finally:
        release.set()
        await docs.aclose()


async def test_a_session_moved_away_while_the_watches_are_being_placed_is_gone_from_what_is_sent(
        tmp_path, monkeypatch):
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "team", "s2", current_phase="team-exec")
    await asyncio.sleep(2.2)
    placing, release = hold_watches(monkeypatch)
    docs = follow_documents(SnapshotFeed(tmp_path))
    try:
        assert session_modes(await anext(docs), "s2") == ["team"]
        following = asyncio.ensure_future(anext(docs))
        assert await asyncio.to_thread(placing.wait, 60)
        (tmp_path / ".rcs" / "state" / "sessions" / "s2").rename(tmp_path / "s2-kept")
        release.set()
        assert session_modes(await asyncio.wait_for(following, 60), "s2") is None
    finally:
        release.set()
        await docs.aclose()
