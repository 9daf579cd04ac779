"""The UI thread never waits on the store lock or the rp1 database: a write waiting for the lock, or a feed
waiting for a busy source, runs in a worker while the keys keep working; its answer is drawn when it comes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rcs_tui.files.fsafe import Tree
from rcs_tui.state.lock import store_lock
from rcs_tui.ui.console.confirm import ConfirmPlan
from rcs_tui.ui.console.help import HelpModal
from rcs_tui.ui.console.main import MainScreen
from rcs_tui.ui.console.run import RunScreen
from tests.console_fixtures import SESSION, app, member_row, select_row, settle
from tests.screentext import shown
from tests.statefix import state_dir

SIZE = (100, 32)


@contextmanager
def held_elsewhere(take) -> Iterator[threading.Event]:
    """Hold what `take()` returns (a context manager) in another thread until the event is set."""
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with take():
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert taken.wait(10)
    try:
        yield release
    finally:
        release.set()
        thread.join(10)


def status(pilot) -> str:
    return str(pilot.app.screen.query_one("#status").render())


async def test_a_clear_waiting_for_the_store_lock_leaves_the_keys_working(tmp_path):
    a = app(tmp_path)
    team = state_dir(a.root, SESSION) / "team-state.json"
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        select_row(a, "scopes-table", member_row("team"))
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(a.screen, ConfirmPlan)
        with held_elsewhere(lambda: store_lock(Tree(a.root), "another writer")) as release:
            started = time.monotonic()
            await pilot.press("y")  # the write waits for the lock (up to 10 s) in its worker
            await pilot.pause()
            assert a.applying == "clear team" and "applying clear team" in status(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(a.screen, HelpModal)  # a key handled while the write still waits
            assert time.monotonic() - started < 5 and a.applying == "clear team"
            assert team.exists()
            await pilot.press("escape")
            await pilot.press("d")  # one write at a time: the second is not planned on moving bytes
            await pilot.pause()
            assert isinstance(a.screen, MainScreen)
            release.set()
            await settle(pilot)
        assert not team.exists()
        assert a.applying is None and "applying" not in status(pilot)


async def test_a_refusal_after_waiting_for_the_lock_is_still_shown(tmp_path, monkeypatch):
    """The lock stays taken for the whole wait: the write gives up in its worker and the refusal (with
    the holder's name) comes back to the UI, as it did when the wait blocked the screen."""
    import rcs_tui.state.lock as lock_mod
    from rcs_tui.ui.console.notice import Notice

    monkeypatch.setattr(lock_mod, "LOCK_TIMEOUT_S", 0.5)
    monkeypatch.setattr(lock_mod, "_gave_up", set())
    a = app(tmp_path)
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        select_row(a, "scopes-table", member_row("team"))
        await pilot.press("d")
        await settle(pilot)
        with held_elsewhere(lambda: store_lock(Tree(a.root), "another writer")):
            await pilot.press("y")
            await settle(pilot)
            assert isinstance(a.screen, Notice)
            body = "\n".join(str(w.render()) for w in a.screen.query("Static"))
            assert "held by another writer" in body and "nothing was changed" in body.lower()
    assert (state_dir(a.root, SESSION) / "team-state.json").exists()


async def test_a_busy_rp1_source_leaves_the_keys_working(tmp_path):
    """The loader (or another view) is in the middle of a slow read: the source's lock is taken. The feed
    says it is loading and the console keeps answering keys; the runs show once the read is done."""
    a = app(tmp_path)
    source = a.loader.rp1_source()
    async with a.run_test(size=SIZE) as pilot:
        await settle(pilot)
        with held_elsewhere(lambda: source.lock) as release:
            started = time.monotonic()
            await pilot.press("4")
            await pilot.pause()
            assert "loading" in str(a.screen.query_one("#runs-note").render())
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(a.screen, HelpModal)
            assert time.monotonic() - started < 5
            await pilot.press("escape")
            await pilot.press("j")
            await pilot.pause()
            assert a.screen.query_one("#runs-table").row_count == 0  # still waiting for the database
            release.set()
            await settle(pilot)
        table = a.screen.query_one("#runs-table")
        assert table.keys == ["run-0003-build", "run-0002-review", "run-0001-research"]
        assert "3 of 3 runs" in str(a.screen.query_one("#runs-note").render())


async def test_a_busy_rp1_source_leaves_the_timeline_s_keys_working(tmp_path):
    a = app(tmp_path)
    source = a.loader.rp1_source()
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        select_row(a, "runs-table", "run-0003-build")
        with held_elsewhere(lambda: source.lock) as release:
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(a.screen, RunScreen)
            assert "loading the timeline" in shown(a.screen.query_one("#run-text"))
            await pilot.press("c")  # nothing read yet: the emit check has no timeline to start from
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(a.screen, MainScreen)
            await pilot.press("enter")
            await pilot.pause()
            release.set()
            await settle(pilot)
        assert isinstance(a.screen, RunScreen)
        assert "run run-0003-build" in shown(a.screen.query_one("#run-text"))


async def test_a_doctor_repair_waiting_for_the_store_lock_leaves_the_dialog_s_keys_working(tmp_path):
    from rcs_tui.ui.console.doctor import DoctorScreen
    from tests.statefix import mode

    a = app(tmp_path)
    survivor = mode(a.root, "forge", None, current_phase="executing")
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("D")
        await settle(pilot)
        doctor = a.screen
        assert isinstance(doctor, DoctorScreen) and doctor.diagnosed
        select_row(a, "doctor-table", "root-survivor:root:forge")
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(a.screen, ConfirmPlan)
        with held_elsewhere(lambda: store_lock(Tree(a.root), "another writer")) as release:
            await pilot.press("y")
            await pilot.pause()
            assert a.screen is doctor and doctor.applying
            assert "applying the repair" in str(doctor.query_one("#doctor-result").render())
            table = doctor.query_one("#doctor-table")
            before = table.cursor
            await pilot.press("j")  # the list still moves while the repair waits
            assert table.cursor != before or table.row_count == 1
            await pilot.press("escape")  # closing waits for the repair's result
            await pilot.pause()
            assert a.screen is doctor and survivor.exists()
            release.set()
            await settle(pilot)
        assert not doctor.applying and "repaired" in str(doctor.query_one("#doctor-result").render())
    assert not survivor.exists()
