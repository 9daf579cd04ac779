"""n / N walk every row that needs you across the console's views (the scopes view's members, then the team's
dead or silent workers, then the rp1 runs waiting for you), showing the view that holds it with its row selected;
`a` on a worker or a run acknowledges it as on a member (the fleet's history line for the same entry), it is
shown acknowledged and passed by until its state changes; the team and rp1 views say why a row needs you and
how sure that is, in a column when the width allows and on the line under the table always."""

from __future__ import annotations

import contextlib

import pytest

from rcs_tui.core.times import iso
from rcs_tui.fleet.acks import HistoryAcknowledger, item_id
from rcs_tui.state.metrics import parse_time
from rcs_tui.ui.linetable import LineTable
from tests.console_fixtures import (
    ACTOR,
    DEAD_WORKER,
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
from tests.statefix import write

SIZES = [(80, 24), (120, 36)]
WORKER_WHY = "needs you: dead worker · reported — worker worker-1 of team login-flow: heartbeat says alive: false"
RUN_WHY = ("needs you: waiting · reported — rp1 run run-0002-review (pr-review) waits for your answer at step review: "
           "Is the session cookie meant to be SameSite=Strict?")



def shown(console, widget: str) -> str:
    """What a widget shows, its wrapped lines joined again."""
    return " ".join(str(console.screen.query_one(widget).render()).split())


def row(console, table: str, key: str) -> str:
    return " ".join(console.screen.query_one(table, LineTable).drawn(key))




async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
async def test_n_goes_from_the_scopes_to_the_dead_worker_then_the_waiting_run(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "n")
        assert at(console) == ("scopes", member_row("blueprint"))
        await press(pilot, "n")
        assert at(console) == ("team", DEAD_WORKER)
        assert console.focused is console.screen.query_one("#team-workers")  # j / k / a act on it at once
        assert WORKER_WHY in shown(console, "#team-detail")
        await press(pilot, "n")
        assert at(console) == ("rp1", WAITING_RUN)
        assert RUN_WHY in shown(console, "#runs-note")
        await press(pilot, "n")
        assert at(console) == ("scopes", member_row("blueprint"))  # round again
        await press(pilot, "N")
        assert at(console) == ("rp1", WAITING_RUN)


@pytest.mark.parametrize("size", SIZES)
async def test_the_team_view_says_why_a_worker_needs_you(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        select_row(console, "team-workers", DEAD_WORKER)
        await settle(pilot)
        assert "worker-1 of login-flow: ✖ dead, idle" in shown(console, "#team-detail")
        assert WORKER_WHY in shown(console, "#team-detail")  # at every width
        assert ("dead worker · reported" in row(console, "#team-workers", DEAD_WORKER)) is (size[0] >= 120)
        assert "a" in footer_keys(console)
        select_row(console, "team-workers", "login-flow/worker-2")  # alive: nothing to say, nothing to acknowledge
        await settle(pilot)
        assert "needs you" not in shown(console, "#team-detail")
        assert "♥ alive" in shown(console, "#team-detail")
        assert "a" not in footer_keys(console)


@pytest.mark.parametrize("size", SIZES)
async def test_the_rp1_view_says_why_a_run_needs_you(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "4")
        select_row(console, "runs-table", WAITING_RUN)
        await settle(pilot)
        assert RUN_WHY in shown(console, "#runs-note")
        assert ("waiting · reported" in row(console, "#runs-table", WAITING_RUN)) is (size[0] >= 120)
        assert "a" in footer_keys(console)
        select_row(console, "runs-table", "run-0003-build")  # running: needs nothing
        await settle(pilot)
        assert "needs you" not in shown(console, "#runs-note")
        assert "a" not in footer_keys(console)


@pytest.mark.parametrize("size", SIZES)
async def test_a_on_the_worker_and_the_run_records_them_as_the_fleet_does_and_n_passes_them_by(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "n", "n")
        assert at(console) == ("team", DEAD_WORKER)
        await press(pilot, "a")
        assert "acknowledged: dead worker · reported" in shown(console, "#team-detail")
        if size[0] >= 120:
            assert "✓ dead worker · reported (acked)" in row(console, "#team-workers", DEAD_WORKER)
        assert "a" not in footer_keys(console)
        await press(pilot, "n")
        assert at(console) == ("rp1", WAITING_RUN)
        await press(pilot, "a")
        assert "acknowledged: waiting · reported" in shown(console, "#runs-note")

        # n now walks the stale member alone
        for _ in range(3):
            await press(pilot, "n")
            assert at(console) == ("scopes", member_row("blueprint"))
        await press(pilot, "a", "n")
        assert toasts(console)[-1] == "nothing needs you: what is left is acknowledged until it changes"

    entries = history(console.root)
    assert [(e["kind"], e["item"], e["actor"]) for e in entries] == [
        ("ack", DEAD_WORKER, ACTOR), ("ack", f"rp1/{WAITING_RUN}", ACTOR), ("ack", f"{SESSION}/blueprint", ACTOR)]
    # the fleet's `a` on the same entries writes the same lines, but for id and time
    fleet = tmp_path / "fleet-copy"
    (fleet / ".rcs").mkdir(parents=True)
    for kind, item in (("dead", DEAD_WORKER), ("waiting", f"rp1/{WAITING_RUN}")):
        HistoryAcknowledger().acknowledge(str(fleet), item_id(kind, item), ACTOR)
    drop = ("id", "at", "ts")
    assert [{k: v for k, v in e.items() if k not in drop} for e in history(fleet)] == [
        {k: v for k, v in e.items() if k not in drop} for e in entries[:2]]


async def test_an_acknowledged_worker_needs_you_again_when_its_heartbeat_changes(tmp_path):
    console = app(tmp_path)
    async with console.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        select_row(console, "team-workers", DEAD_WORKER)
        await press(pilot, "a")
        assert "acknowledged: dead worker" in shown(console, "#team-detail")
        # it took one more turn after the acknowledgement and is still dead: a new state
        later = iso(history(console.root)[-1]["ts"] + 60)
        write(console.root / ".rcs/state/team/login-flow/workers/worker-1/heartbeat.json",
              {"alive": False, "last_turn_at": later})
        await press(pilot, "r", "1", "n", "n")
        assert at(console) == ("team", DEAD_WORKER)
        assert "needs you: dead worker" in shown(console, "#team-detail")


@contextlib.asynccontextmanager
async def reopened_on(tmp_path, view: str, table: str, item: str):
    """A later console (the first one is given its pilot to acknowledge with) showing `item` selected."""
    again = app(tmp_path)
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await press(pilot, view)
        select_row(again, table, item)
        await settle(pilot)
        yield again, pilot


async def acknowledge(tmp_path, view: str, table: str, item: str, before=None) -> None:
    """In a console, `a` on `item` of that view's table (`before(console)` runs once it has settled)."""
    console = app(tmp_path)
    async with console.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        if before is not None:
            before(console)
        await press(pilot, view)
        select_row(console, table, item)
        await press(pilot, "a")


async def test_a_later_console_reads_the_workers_acknowledgement_back(tmp_path):
    await acknowledge(tmp_path, "2", "team-workers", DEAD_WORKER)
    async with reopened_on(tmp_path, "2", "team-workers", DEAD_WORKER) as (again, _pilot):
        assert "acknowledged: dead worker · reported" in shown(again, "#team-detail")
        assert "a" not in footer_keys(again)


async def test_n_empties_a_filter_that_hides_the_row_it_goes_to(tmp_path):
    console = app(tmp_path)
    async with console.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        console.screen.query_one("#team-filter").value = "worker-2"
        await press(pilot, "4")
        console.screen.query_one("#runs-filter").value = "status:running"
        await settle(pilot)
        assert WAITING_RUN not in console.screen.query_one("#runs-table", LineTable).keys
        await press(pilot, "1", "n", "n")
        assert at(console) == ("team", DEAD_WORKER)
        assert console.screen.query_one("#team-filter").value == ""
        await press(pilot, "n")
        assert at(console) == ("rp1", WAITING_RUN)
        assert console.screen.query_one("#runs-filter").value == ""


async def test_a_on_the_workers_page_acknowledges_it(tmp_path):
    console = app(tmp_path)
    async with console.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "2")
        select_row(console, "team-workers", DEAD_WORKER)
        await press(pilot, "enter")
        assert WORKER_WHY in shown(console, "#detail-text")
        await press(pilot, "a")
        assert "acknowledged: dead worker · reported" in shown(console, "#detail-text")
    assert [e["item"] for e in history(console.root)] == [DEAD_WORKER]


async def test_a_later_console_reads_the_runs_acknowledgement_back(tmp_path):
    """A waiting run needs you since rp1 asked its question (rp1's own time): an acknowledgement recorded
    after it holds in the next console, as a member's does."""
    def asked_at_rp1s_time(console) -> None:
        [run] = console.rp1.feed(status="waiting", limit=5).runs
        asked = parse_time(run.projection.pending_prompts[0].created_at)
        [verdict] = [v for v in console.needs.verdicts if v.item == f"rp1/{WAITING_RUN}"]
        assert asked is not None and verdict.since == asked

    await acknowledge(tmp_path, "4", "runs-table", WAITING_RUN, before=asked_at_rp1s_time)
    async with reopened_on(tmp_path, "4", "runs-table", WAITING_RUN) as (again, pilot):
        assert "acknowledged: waiting · reported" in shown(again, "#runs-note")
        assert "✓ waiting · reported (acked)" in row(again, "#runs-table", WAITING_RUN)
        await press(pilot, "n", "n", "n")
        assert at(again)[0] != "rp1"  # passed by


@pytest.mark.parametrize("size", SIZES)
async def test_n_opens_a_scope_listed_as_one_row_and_selects_its_member_that_needs_you(tmp_path, size):
    from tests.console_fixtures import build
    from tests.statefix import canonical, mode

    root = build(tmp_path)
    for i in range(32):  # past 30 sessions, every other session is one row until opened
        mode(root, "forge", f"s-{i:02d}", mode="forge", current_phase="executing")
        canonical(root, ["forge"], f"s-{i:02d}")
    mode(root, "blueprint", "s-17", active=False, mode="blueprint", current_phase="completed",
         lifecycle_outcome="finished")
    canonical(root, ["forge", "blueprint"], "s-17")  # blueprint finished but still in the set: stale
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        table = console.screen.query_one("#scopes-table", LineTable)
        assert "scope:s-17" in table.keys and "member:s-17:s-17:blueprint" not in table.keys
        await press(pilot, "n")
        assert at(console) == ("scopes", member_row("blueprint"))  # the current session's first
        await press(pilot, "n")
        assert at(console) == ("scopes", "member:s-17:s-17:blueprint")
        assert "stale" in row(console, "#scopes-table", "member:s-17:s-17:blueprint")
