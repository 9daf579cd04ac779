"""`a` in the console: the selected row's "needs you" is acknowledged, recorded in the project's history in the
very form the fleet's `a` writes (read-only too: it is rcs-tui's own record), shown as acknowledged, and
passed by n / N until its state changes; a row that needs nothing says so; the footer offers `a` only where
it acts; a later console reads the acknowledgement back from the history."""

from __future__ import annotations

import os
import shutil

import pytest

from rcs_tui.fleet.acks import HistoryAcknowledger, item_id
from rcs_tui.project.recorder import HISTORY_REL
from rcs_tui.ui.linetable import LineTable
from tests.console_fixtures import (
    ACTOR,
    DEAD_WORKER,
    OTHER,
    SESSION,
    WAITING_RUN,
    app,
    at,
    footer_keys,
    history,
    member_row,
    select_row,
    settle,
    toasts,
)
from tests.statefix import mode

SIZES = [(80, 24), (120, 36)]
BLUEPRINT = f"{SESSION}/blueprint"





async def select(pilot, key: str) -> None:
    select_row(pilot.app, "scopes-table", key)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("readonly", [False, True])
async def test_a_records_the_acknowledgement_as_the_fleet_does_and_shows_it(tmp_path, size, readonly):
    console = app(tmp_path, readonly=readonly)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await select(pilot, member_row("blueprint"))
        await pilot.press("a")
        await settle(pilot)
        detail = str(console.screen.query_one("#scopes-detail").render())
        assert "acknowledged: stale · inferred — blueprint is in the canonical set" in detail, detail
        if size[0] >= 120:
            row = " ".join(console.screen.query_one("#scopes-table", LineTable).drawn(member_row("blueprint")))
            assert "✓ stale · inferred (acked)" in row
        assert any("acknowledged" in t for t in toasts(console))
    [entry] = history(console.root)
    assert entry["kind"] == "ack" and entry["item"] == BLUEPRINT and entry["actor"] == ACTOR and entry["v"] == 1
    assert entry["of"] == "stale"  # what about it: another kind of trouble with it is not acknowledged

    # the fleet's `a` on the same entry of a copy of the project writes the same line, but for id and time
    other = tmp_path / "copy"
    shutil.copytree(console.root, other)
    (other / HISTORY_REL).unlink()
    HistoryAcknowledger().acknowledge(str(other), item_id("stale", BLUEPRINT), ACTOR)
    [fleet] = history(other)
    same = {k: v for k, v in fleet.items() if k not in ("id", "at", "ts")}
    assert {k: v for k, v in entry.items() if k not in ("id", "at", "ts")} == same
    assert set(entry) == set(fleet)


@pytest.mark.parametrize("size", SIZES)
async def test_n_passes_an_acknowledged_member_by_until_it_changes(tmp_path, size):
    console = app(tmp_path)
    mode(console.root, "forge", OTHER)  # an orphan in the other session, beside the stale blueprint
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        table = console.screen.query_one("#scopes-table", LineTable)
        await select(pilot, member_row("blueprint"))
        await pilot.press("a")
        await settle(pilot)
        visited = set()
        for key in "nnnnNNNN":
            await pilot.press(key)
            await settle(pilot)
            visited.add(at(console))
        # the orphan, the dead worker and the waiting run: blueprint no more
        assert visited == {("scopes", member_row("forge", OTHER, OTHER)), ("team", DEAD_WORKER), ("rp1", WAITING_RUN)}
        for view, key in sorted(visited):
            await pilot.press({"scopes": "1", "team": "2", "rp1": "4"}[view])
            await settle(pilot)
            select_row(console, {"scopes": "scopes-table", "team": "team-workers", "rp1": "runs-table"}[view], key)
            await settle(pilot)
            await pilot.press("a")
            await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert toasts(console)[-1] == "nothing needs you: what is left is acknowledged until it changes"

        # blueprint's file is written again: a new state, so it needs you again
        path = console.root / ".rcs" / "state" / "sessions" / SESSION / "blueprint-state.json"
        later = history(console.root)[-1]["ts"] + 60
        os.utime(path, (later, later))
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert table.selected == member_row("blueprint")
        assert "needs you: stale · inferred" in str(console.screen.query_one("#scopes-detail").render())


@pytest.mark.parametrize("size", SIZES)
async def test_a_on_a_row_that_needs_nothing_says_so_and_writes_nothing(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await select(pilot, member_row("team"))
        assert "a" not in footer_keys(console)  # offered only where it acts
        await pilot.press("a")
        await settle(pilot)
        assert toasts(console)[-1] == "nothing to acknowledge here: this row needs nothing from you"
        await select(pilot, member_row("blueprint"))
        assert "a" in footer_keys(console)
        await pilot.press("a")
        await settle(pilot)
        assert "a" not in footer_keys(console)  # acknowledged: nothing left to acknowledge on it
        await pilot.press("a")
        await settle(pilot)
        assert toasts(console)[-1] == f"{BLUEPRINT} is acknowledged already: it needs you again when it changes"
        await pilot.press("3")  # the tasks view: `a` acts on nothing there
        await settle(pilot)
        assert "a" not in footer_keys(console)
    assert [e["kind"] for e in history(console.root)] == ["ack"]


async def test_a_later_console_reads_the_acknowledgement_back(tmp_path):
    console = app(tmp_path)
    async with console.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(pilot, member_row("blueprint"))
        await pilot.press("a")
        await settle(pilot)
    again = app(tmp_path)
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(pilot, member_row("blueprint"))
        assert "acknowledged: stale · inferred" in str(again.screen.query_one("#scopes-detail").render())
        assert "a" not in footer_keys(again)


def test_acknowledging_a_silent_worker_does_not_cover_its_death(tmp_path):
    """A silent worker acknowledged, then dead: its death (dated by its last heartbeat, before the
    acknowledgement) needs the operator; the acknowledged silence stays acknowledged."""
    from rcs_tui.core.acknowledged import Acknowledged, recorded_acks
    from rcs_tui.core.attention import Verdict
    from rcs_tui.project.recorder import read_history

    (tmp_path / ".rcs").mkdir()
    last_beat = 1_795_644_000.0
    HistoryAcknowledger().acknowledge(str(tmp_path), item_id("silent", "crew/w1"), ACTOR)
    acked = Acknowledged(recorded=recorded_acks(read_history(tmp_path)))
    assert acked.covers(Verdict("silent", "crew/w1", "no heartbeat", "inferred", last_beat))
    assert not acked.covers(Verdict("dead", "crew/w1", "worker died", "inferred", last_beat))
    # an acknowledgement recorded before kinds were: it covers the item whatever the kind, as then
    legacy = Acknowledged(recorded=recorded_acks([{"kind": "ack", "item": "crew/w1", "ts": last_beat + 5}]))
    assert legacy.covers(Verdict("dead", "crew/w1", "worker died", "inferred", last_beat))
