"""The console's rp1 view follows the database live: a new event shows in its run's row, runs that
moved come to the top, and many events in a burst end on the latest state."""

from __future__ import annotations

import asyncio
import time

from rcs_tui.rp1.fixtures import Rp1Writer
from tests.console_fixtures import app


def shown(pilot) -> list[tuple[str, str]]:
    """(run key, text of the row) in screen order."""
    table = pilot.app.screen.query_one("#runs-table")
    out = []
    for key in table.keys:
        out.append((key, " ".join(table.row_text(key))))
    return out


async def until(pilot, check, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.05)
    return check()


async def test_a_new_rp1_event_shows_in_the_live_console(tmp_path):
    console = app(tmp_path, live=True)
    async with console.run_test(size=(120, 30)) as pilot:
        await pilot.press("4")
        assert await until(pilot, lambda: [k for k, _ in shown(pilot)][:1] == ["run-0003-build"])
        with Rp1Writer(tmp_path / "rp1.db") as w:
            w.step("run-0001-research", "report", "failed")  # the finished run fails after all
        assert await until(pilot, lambda: shown(pilot)[0][0] == "run-0001-research"
                           and "failed" in shown(pilot)[0][1])
        with Rp1Writer(tmp_path / "rp1.db") as w:  # a burst: the view ends on the last state
            for i in range(30):
                w.step("run-0002-review", "review" if i % 2 else "synthesize")
            w.step("run-0002-review", "post")
        assert await until(pilot, lambda: shown(pilot)[0][0] == "run-0002-review"
                           and " post " in f" {shown(pilot)[0][1]} ")
        assert [k for k, _ in shown(pilot)] == ["run-0002-review", "run-0001-research", "run-0003-build"]
