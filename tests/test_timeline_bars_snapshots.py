"""Snapshots of the run detail and the task detail drawn as time bars, at 80x24 and 120x36 (clock and
time zone fixed: the axis shows UTC times, the console's clock is 2026-11-25 21:45)."""

from __future__ import annotations

import pytest

from tests.barsfix import RUN, TASK, build_night
from tests.console_fixtures import app, select_row, settle

SIZES = [(80, 24), (120, 36)]


pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def console(tmp_path):
    build_night(tmp_path)
    return app(tmp_path)


def _open(view: str, table: str, key: str):
    async def run(pilot) -> None:
        await settle(pilot)
        await pilot.press(view)
        await settle(pilot)
        select_row(pilot.app, table, key)
        await pilot.press("enter")
        await settle(pilot)
    return run


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_detail(console, snap_compare, size):
    assert snap_compare(console, terminal_size=size, run_before=_open("4", "runs-table", RUN))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_task_transcript(console, snap_compare, size):
    assert snap_compare(console, terminal_size=size, run_before=_open("3", "tasks-table", TASK))
