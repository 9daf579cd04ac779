"""The console says why each row needs you and how sure that is (reported by the runtime or rp1, or inferred
by rcs-tui), in the table where the width allows, under it for the selected row, and in full on the member's
page; its verdicts are the very ones `snapshot --json` prints for the same project and time."""

from __future__ import annotations

import pytest

from rcs_tui.ui.console.main import MainScreen
from rcs_tui.ui.console.member import MemberScreen
from rcs_tui.ui.linetable import LineTable
from tests.console_fixtures import NOW, SESSION, app, member_row, select_row, settle
from tests.statefix import mode

SIZES = [(80, 24), (120, 36)]


def detail(console) -> str:
    return str(console.screen.query_one("#scopes-detail").render())


def row_text(console, key: str) -> str:
    return " ".join(console.screen.query_one("#scopes-table", LineTable).drawn(key))


def waiting_forge(root) -> None:
    mode(root, "forge", SESSION, mode="forge", current_phase="executing", iteration=3, max_iterations=10,
         session_id=SESSION, lifecycle_outcome="askuserQuestion", updated_at="2026-11-25T21:44:30.000Z")


@pytest.mark.parametrize("size", SIZES)
async def test_the_selected_row_says_why_it_needs_you_and_whether_that_is_inferred(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert console.screen.query_one("#scopes-table", LineTable).selected == member_row("blueprint")
        text = detail(console)
        assert "needs you: stale · inferred — blueprint is in the canonical set of" in text, text
        assert "mode file is inactive" in text
        wide = size[0] >= 120
        assert ("stale · inferred" in row_text(console, member_row("blueprint"))) is wide  # the why column
        assert "why" in str(console.screen.query_one("#scopes-table", LineTable).render_line(0).text) or not wide


@pytest.mark.parametrize("size", SIZES)
async def test_a_member_waiting_for_an_answer_is_reported_by_the_runtime(tmp_path, size):
    console = app(tmp_path)
    waiting_forge(console.root)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        select_row(console, "scopes-table", member_row("forge"))
        await settle(pilot)
        assert "needs you: waiting · reported — " in detail(console)
        assert "forge waits for your answer (lifecycle outcome askuserQuestion)" in detail(console)
        if size[0] >= 120:
            assert "waiting · reported" in row_text(console, member_row("forge"))
        assert "why" not in row_text(console, member_row("team")) and "·" not in row_text(console, member_row("team"))


@pytest.mark.parametrize("size", SIZES)
async def test_the_members_page_gives_the_verdict_in_full(tmp_path, size):
    console = app(tmp_path)
    async with console.run_test(size=size) as pilot:
        await settle(pilot)
        select_row(console, "scopes-table", member_row("blueprint"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(console.screen, MemberScreen)
        text = str(console.screen.query_one("#member-text").render())
        assert "needs you: stale · inferred — blueprint is in the canonical set of" in text
        assert "rcs-tui concluded it from what it saw on disk" in text
        assert "a acknowledges it" in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(console.screen, MainScreen)


async def test_the_console_judges_exactly_as_the_snapshot_document_does(tmp_path):
    """One source of truth: the console's verdicts are the snapshot document's `needs_you`, entry for entry."""
    from rcs_tui.project.feed import SnapshotFeed
    from rcs_tui.views.snapshot_doc import iso

    console = app(tmp_path)
    waiting_forge(console.root)
    async with console.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        mine = [v.as_json(iso) for v in console.needs.verdicts]
    doc = SnapshotFeed(console.root, rp1_db=tmp_path / "rp1.db", clock=lambda: NOW).build()
    assert mine == doc["needs_you"]
    kinds = {v["kind"] for v in mine}
    assert {"waiting", "stale", "dead"} <= kinds, kinds  # a member, a finding and a worker, all judged here
