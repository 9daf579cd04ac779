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
