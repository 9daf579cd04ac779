"""Snapshots of every console screen and modal at a fixed size, clock, theme and actor (blink off)."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from tests.console_fixtures import SESSION, app, member_row, select_row, settle
from tests.statefix import mode

pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def console(tmp_path):
    return app(tmp_path)


def _keys(*keys: str):
    """Press `keys`, each after what the one before read off the UI thread (a feed, the journal, a
    diagnosis) is drawn."""
    async def run(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
    return run


def _select(table: str, key: str):
    async def run(pilot) -> None:
        await pilot.pause()
        select_row(pilot.app, table, key)
        await pilot.pause()
    return run


class TestViews:
    def test_scopes(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), run_before=_select("scopes-table", member_row("team")))

    def test_scopes_narrow(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(60, 20), run_before=_select("scopes-table", member_row("team")))

    def test_member(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 40), press=["enter"],
                            run_before=_select("scopes-table", member_row("team")))

    def test_team(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), press=["2"])

    def test_tasks(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), press=["3"])

    def test_task_detail(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 40), press=["3", "_", "enter"])

    def test_rp1_feed(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), run_before=_keys("4"))

    def test_run_timeline(self, console, snap_compare):
        async def pick(pilot) -> None:
            await pilot.press("4")
            await settle(pilot)
            select_row(pilot.app, "runs-table", "run-0003-build")
            await pilot.press("enter")
            await settle(pilot)
        assert snap_compare(console, terminal_size=(80, 30), run_before=pick)

    def test_journal_empty(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), run_before=_keys("5"))


class TestModals:
    def test_clear_confirm(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), press=["d"],
                            run_before=_select("scopes-table", member_row("team")))

    def test_clear_all_sessions_confirm(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), press=["C"],
                            run_before=_select("scopes-table", member_row("team")))

    def test_clear_confirm_narrow(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(60, 20), press=["d"],
                            run_before=_select("scopes-table", member_row("team")))

    def test_override(self, console, snap_compare):
        async def pick(pilot) -> None:
            await pilot.press("3")
            await pilot.pause()
            select_row(pilot.app, "tasks-table", "login-api")
            await pilot.press("o", "down", "down")
            await pilot.pause()
            pilot.app.screen.query_one("#override-reason").value = "flaky ci"
            await pilot.pause()
        assert snap_compare(console, terminal_size=(80, 30), run_before=pick)

    def test_doctor(self, tmp_path, snap_compare):
        a = app(tmp_path)
        mode(a.root, "forge", None, current_phase="executing")
        assert snap_compare(a, terminal_size=(80, 24), run_before=_keys("D"))

    def test_whatif(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 30), press=["w", *"autopilot"])

    def test_help(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(80, 24), press=["question_mark"])

    def test_refusal_notice(self, snap_compare):
        base = Path("/tmp/rcs-console-snapshot")  # a fixed place keeps every path in the picture the same
        with open(f"{base}.lock", "w") as lock:  # another test run on this machine may want it at the same time
            fcntl.flock(lock, fcntl.LOCK_EX)
            shutil.rmtree(base, ignore_errors=True)
            console = app(base)

            async def broken(pilot) -> None:
                (console.root / ".rcs/state/sessions" / SESSION / "skill-active-state.json").write_text("{oops")
                select_row(pilot.app, "scopes-table", member_row("team"))
                await pilot.press("d")
                await pilot.pause()
            assert snap_compare(console, terminal_size=(80, 24), run_before=broken)

    def test_readonly(self, tmp_path, snap_compare):
        assert snap_compare(app(tmp_path, readonly=True), terminal_size=(80, 24))


def _journal_with_a_clear(root: Path) -> str:
    """Clear team through the core, then pin the entry's id and time so the snapshot is stable."""
    import re

    from rcs_tui.state.ops import plan_clear

    plan_clear(root, "team", SESSION).run(root, actor="operator@console (console, pid 4242)")
    journal = root / ".rcs/logs/rcs-tui-journal.jsonl"
    text = journal.read_text()
    entry_id = re.search(r'"id": "([^"]+)"', text).group(1)
    text = text.replace(entry_id, "20261125T214400-a1b2c3")
    journal.write_text(re.sub(r'"at": "[^"]+"', '"at": "2026-11-25T21:44:00.000Z"', text))
    return "20261125T214400-a1b2c3"


class TestWide:
    """120×36: columns grow, whole ids and names show."""

    def test_scopes(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(120, 36), run_before=_select("scopes-table", member_row("team")))

    def test_team(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(120, 36), press=["2"])

    def test_member_needing_you_says_why(self, console, snap_compare):
        """The stale member's row says `stale · inferred`, the line under the table the whole reason."""
        assert snap_compare(console, terminal_size=(120, 36), run_before=_keys("n"))

    def test_member_acknowledged(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(120, 36), run_before=_keys("n", "a"))

    def test_worker_acknowledged(self, console, snap_compare):
        """n goes on from the scopes to the dead worker; `a` acknowledges it (ticked, dim)."""
        assert snap_compare(console, terminal_size=(120, 36), run_before=_keys("n", "n", "a"))

    def test_run_needing_you_says_why(self, console, snap_compare):
        """Then to the run waiting for an answer: `waiting · reported`, the question whole under the table."""
        assert snap_compare(console, terminal_size=(120, 36), run_before=_keys("n", "n", "n"))

    def test_journal(self, tmp_path, snap_compare):
        a = app(tmp_path)
        _journal_with_a_clear(a.root)
        assert snap_compare(a, terminal_size=(120, 36), run_before=_keys("5"))

    def test_doctor(self, tmp_path, snap_compare):
        a = app(tmp_path)
        mode(a.root, "forge", None, current_phase="executing")
        assert snap_compare(a, terminal_size=(120, 36), run_before=_keys("D"))

    def test_clear_all_sessions_confirm(self, console, snap_compare):
        assert snap_compare(console, terminal_size=(120, 36), press=["C"],
                            run_before=_select("scopes-table", member_row("team")))


class TestRecovery:

    def test_journal_entry(self, tmp_path, snap_compare):
        a = app(tmp_path)
        _journal_with_a_clear(a.root)
        assert snap_compare(a, terminal_size=(80, 24), run_before=_keys("5", "enter"))

    def test_journal_entry_narrow(self, tmp_path, snap_compare):
        a = app(tmp_path)
        _journal_with_a_clear(a.root)
        assert snap_compare(a, terminal_size=(60, 20), run_before=_keys("5", "enter"))

    def test_confirm_replanned(self, console, snap_compare):
        from tests.statefix import canonical, state_dir

        async def rewrite(pilot) -> None:
            await pilot.pause()  # the other views are built right after the first frame
            select_row(pilot.app, "scopes-table", member_row("team"))
            await pilot.press("d")
            await pilot.pause()
            # The runtime's rewrite lands in one rename, so the dialog's own timer can never see it half-written.
            staged = canonical(console.root.parent / "staging", ["team"], SESSION, source="hook")
            os.replace(staged, state_dir(console.root, SESSION) / "skill-active-state.json")
            pilot.app.screen.follow_files()  # what its timer does; called here so the picture never races it
            await pilot.pause()
        assert snap_compare(console, terminal_size=(80, 24), run_before=rewrite)

    def test_demo_banner(self, tmp_path, snap_compare):
        from rcs_tui.cli.demo_cmd import DEMO_BANNER

        assert snap_compare(app(tmp_path, banner=DEMO_BANNER), terminal_size=(80, 24))
