"""The console and the live HUD record the project's history from their own reads: every change they load is
in the history file, with no second read of the tree behind it, and the recorder lock goes back when they
close."""

from __future__ import annotations

import asyncio
import time

import pytest

from rcs_tui.project.recorder import RecorderLock
from rcs_tui.ui.console.app import ConsoleApp
from rcs_tui.ui.hud_app import HudApp
from tests.test_flight_recorder import lines, project, runtime_write  # noqa: F401 - the fixture

__all__ = ["project"]


async def _until(predicate, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("face", ["console", "hud"])
async def test_changes_a_face_loads_are_recorded_from_its_own_reads(project, face):  # noqa: F811
    app = ConsoleApp(project, record=True, actor="op@console") if face == "console" else \
        HudApp(project, record=True, rp1_db=False)
    async with app.run_test(size=(120, 36)):
        await _until(lambda: any(e.get("kind") == "baseline" for e in lines(project)), "the recorder to start")
        runtime_write(project, mode="forge", current_phase="verifying", iteration=2, max_iterations=99)
        await _until(lambda: any(e.get("kind") == "phase" for e in lines(project)), "the phase change recorded")
        recording = app._recording
        assert recording is not None and recording.feed.loader.world is None  # no picture of its own
        assert not RecorderLock(project).acquire("another")  # held while the console records
    lock = RecorderLock(project)
    assert lock.acquire("another")  # given back when the console closes
    lock.release()
    phase = [(e["subject"], e["from"], e["to"]) for e in lines(project) if e.get("kind") == "phase"]
    assert phase == [("root/forge", "executing", "verifying")]
