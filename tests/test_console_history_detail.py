"""Enter on a History entry opens it in full: when, the member, what changed from → to, who or what did it
(the runtime, the operator with the journal entry, the session and pid that wrote the file), how long after
the clear a member came back and whether that was acknowledged, then every field; long values are never cut;
esc goes back to the History view."""

from __future__ import annotations

import pytest

from rcs_tui.project.recorder import acknowledge
from rcs_tui.ui.console.history_entry import HistoryEntryScreen
from rcs_tui.ui.console.main import MainScreen
from tests.console_fixtures import NOW, app, select_row, settle
from tests.test_history_view import story  # noqa: F401 - the recorded story, as a fixture

SIZES = [(80, 24), (120, 36)]


async def open_entry(pilot, pick) -> str:
    """History view, select the entry `pick(entries)` names, enter; the detail page's text with its wrapping and
    spacing folded into single spaces."""
    await settle(pilot)
    await pilot.press("6")
    await settle(pilot)
    console = pilot.app
    from rcs_tui.ui.console.history import HistoryPane

    pane = console.screen.query_one(HistoryPane)
    select_row(console, "history-table", pick(pane.entries)["id"])
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(console.screen, HistoryEntryScreen)
    return " ".join(console.screen.query_one("#history-entry-text").render().plain.split())


def kind(name: str):
    return lambda entries: next(e for e in entries if e.get("kind") == name)


@pytest.mark.parametrize("size", SIZES)
async def test_a_comeback_in_full_and_back(story, size):  # noqa: F811
    console = app(story, away=True)
    async with console.run_test(size=size) as pilot:
        text = await open_entry(pilot, kind("came_back"))
        assert "kind came back after a clear (came_back)" in text
        assert "member rcs-1764107012400-p8d2qa/ultrawork" in text
        assert "change not in the active set → no phase, dead" in text
        assert "by written by session rcs-intruder-77, pid 4242; the runtime cleared it" in text
        assert "came back 3h38m after the clear (cleared 2026-11-25 17:46:30)" in text
        assert "acknowledged not yet: it stays in attention until acknowledged" in text
        assert '"owner_pid"' not in text and '"writer": {' in text and '"pid": 4242' in text  # every field
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(console.screen, MainScreen) and console.screen.tab == "history"


async def test_an_acknowledged_comeback_says_by_whom_and_a_long_value_is_not_cut(story):  # noqa: F811
    long_actor = "operator-" + "x" * 240 + "-end"
    acknowledge(story / "project", "h6", long_actor, clock=lambda: NOW - 60)
    console = app(story, away=True)
    async with console.run_test(size=(80, 24)) as pilot:
        text = await open_entry(pilot, kind("came_back"))
        whole = text.replace(" ", "")  # a value longer than a line breaks across lines, whole
        assert f"acknowledgedby{long_actor}at2026-11-25T21:44:00.000Zentry" in whole
        await pilot.press("escape")
        await settle(pilot)
        text = await open_entry(pilot, kind("ack"))
        assert "kind acknowledged (ack)" in text
        assert f"bytheoperator{long_actor}entry" in text.replace(" ", "")


@pytest.mark.parametrize("size", SIZES)
async def test_a_runtime_clear_and_a_phase_change_say_what_changed(story, size):  # noqa: F811
    console = app(story, away=True)
    async with console.run_test(size=size) as pilot:
        text = await open_entry(pilot, kind("cleared"))
        assert "by the runtime (no operator clear in the journal)" in text
        assert "change no phase, live → gone from the active set" in text
        await pilot.press("escape")
        await settle(pilot)
        text = await open_entry(pilot, kind("phase"))
        assert "change executing → verifying" in text
        assert "by written by session rcs-1764106896953-k3j9x2" in text
