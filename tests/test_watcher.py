"""The watcher and the live HUD: real file changes repaint it, a bad write shows that member unreadable,
polling works and says so (and delivers what native watching lost when it failed), and a HUD session
writes nothing."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from rcs_tui.demo import Simulator, build_workspace
from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project.loader import WorldLoader, section_of
from rcs_tui.project.watch import poll_batches, watch_targets
from rcs_tui.ui.hud_app import HudApp, next_tick
from rcs_tui.ui.watcher import WorldUpdated
from rcs_tui.ui.widgets import HudView
from tests.conftest import tree_digest

SID = "sess-1"


def project(tmp_path: Path) -> Path:
    sess = tmp_path / ".rcs" / "state" / "sessions" / SID
    atomic_write(sess / "forge-state.json", dump_json({"active": True, "current_phase": "executing",
                                                       "iteration": 3, "max_iterations": 10}))
    atomic_write(sess / "skill-active-state.json", dump_json(
        {"version": 1, "active": True, "active_skills": [{"skill": "forge", "active": True, "session_id": SID}]}))
    return tmp_path


def forge_file(root: Path) -> Path:
    return root / ".rcs" / "state" / "sessions" / SID / "forge-state.json"


async def wait_for(pilot, app, needle: str, timeout: float = 8.0) -> str:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        await pilot.pause(0.05)
        text = app.query_one(HudView).render().plain
        if needle in text:
            return text
    raise AssertionError(f"{needle!r} never appeared; HUD shows {text!r}")


def app_for(root: Path, **kw) -> HudApp:
    return HudApp(root, session_id=SID, rp1_db=False, **kw)


async def test_a_real_file_change_repaints_the_hud(tmp_path):
    root = project(tmp_path)
    app = app_for(root)
    async with app.run_test(size=(80, 1)) as pilot:
        await wait_for(pilot, app, "forge:3/10")  # at once: a change before the watches are in place counts too
        atomic_write(forge_file(root), dump_json({"active": True, "current_phase": "executing",
                                                  "iteration": 8, "max_iterations": 10}))
        await wait_for(pilot, app, "forge:8/10", timeout=60)


async def test_a_change_made_while_the_watches_are_being_placed_reaches_the_hud(tmp_path, monkeypatch):
    """Placing the watches takes seconds on a loaded machine: what was written meanwhile is loaded once they
    are in place (it would otherwise stay off the screen until the next change)."""
    from tests.watchfix import hold_watches

    root = project(tmp_path)
    placing, release = hold_watches(monkeypatch)  # the watches wait until the test has written its change
    app = app_for(root)
    try:
        async with app.run_test(size=(80, 1)) as pilot:
            await wait_for(pilot, app, "forge:3/10")
            assert await asyncio.to_thread(placing.wait, 60)
            atomic_write(forge_file(root), dump_json({"active": True, "current_phase": "executing",
                                                      "iteration": 8, "max_iterations": 10}))  # unwatched yet
            release.set()
            await wait_for(pilot, app, "forge:8/10", timeout=60)
    finally:
        release.set()


async def test_one_message_per_batch_and_only_changed_sections_reload(tmp_path):
    root = project(tmp_path)
    seen: list[WorldUpdated] = []
    app = app_for(root)
    async with app.run_test(size=(80, 1), message_hook=lambda m: seen.append(m) if isinstance(
            m, WorldUpdated) else None) as pilot:
        await pilot.pause(0.3)
        assert not app.world.pending  # the sections the first frame deferred are loaded (one message each)
        deferred = len(seen)
        calls: list[str] = []
        original = app.loader._load_metrics
        app.loader._load_metrics = lambda: (calls.append("metrics"), original())[1]
        atomic_write(forge_file(root), dump_json({"active": True, "iteration": 5, "max_iterations": 10}))
        await wait_for(pilot, app, "forge:5/10")
        assert calls == []  # a mode file changed: metrics were not re-read
        atomic_write(root / ".rcs" / "metrics.json", dump_json({"session_turns": 7}))
        await wait_for(pilot, app, "turns:7")
        assert calls == ["metrics"]
        assert all(m.changed for m in seen[deferred:])


async def test_a_torn_write_shows_that_member_unreadable_never_the_past(tmp_path):
    root = project(tmp_path)
    app = app_for(root)
    async with app.run_test(size=(100, 1)) as pilot:
        await pilot.pause(0.3)
        forge_file(root).write_text('{"active": true, "iteration": ')  # a torn, non-atomic write
        text = await wait_for(pilot, app, "! 1 error")
        assert "forge:unreadable" in text and "forge:3/10" not in text  # what is on disk now, not the past
        rows = app.query_one(HudView).rows(100, 10)
        assert not any("last good" in "".join(t for t, _ in r) for r in rows)
        atomic_write(forge_file(root), dump_json({"active": True, "iteration": 4, "max_iterations": 10}))
        text = await wait_for(pilot, app, "forge:4/10")
        assert "error" not in text


async def test_polling_fallback_updates_and_says_so(tmp_path):
    root = project(tmp_path)
    app = app_for(root, force_polling=True)
    async with app.run_test(size=(100, 1)) as pilot:
        await wait_for(pilot, app, "polling")
        await pilot.pause(0.6)
        atomic_write(forge_file(root), dump_json({"active": True, "iteration": 6, "max_iterations": 10}))
        await wait_for(pilot, app, "forge:6/10")


async def test_a_hud_session_writes_nothing(tmp_path):
    ws = build_workspace(tmp_path)
    Simulator(ws).step()
    before = tree_digest(tmp_path)
    app = HudApp(ws.project, rp1_db=ws.rp1_db)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause(0.5)
        await pilot.press("o")
        await pilot.press("r")
        await pilot.pause(0.3)
        await pilot.press("o", "q")
    await asyncio.sleep(0.1)
    assert tree_digest(tmp_path) == before  # .rcs trees, team dirs, tasks and the rp1 database


async def test_simulated_runtime_keeps_the_hud_moving(tmp_path):
    ws = build_workspace(tmp_path)
    app = HudApp(ws.project, rp1_db=ws.rp1_db)
    async with app.run_test(size=(60, 20)) as pilot:
        await wait_for(pilot, app, "forge:3/10")
        await pilot.pause(0.3)
        Simulator(ws).step()
        text = await wait_for(pilot, app, "forge:4/10")
        await wait_for(pilot, app, "rp1:build/build running")
        assert "turns:15" in app.query_one(HudView).render().plain or "turns:15" in text


def test_sections_of_paths(tmp_path):
    loader = WorldLoader(tmp_path, rp1_db=tmp_path / "db" / "rp1.db")
    rcs = tmp_path / ".rcs"
    assert section_of(rcs / "state" / "sessions" / "s" / "forge-state.json", loader.layout, loader.rp1_path) == "state"
    assert section_of(rcs / "state" / "team" / "t" / "tasks" / "task-1.json", loader.layout,
                      loader.rp1_path) == "team"
    assert loader.sections_for([rcs / "metrics.json", rcs / "hud-config.json", rcs / "tasks" / "a" / "state.json",
                                tmp_path / "db" / "rp1.db-wal", rcs / "plans" / "prd-x.md"]) == {
        "metrics", "config", "tasks", "rp1", "state"}
    assert loader.sections_for([rcs / "logs" / "rcs-tui-journal.jsonl", tmp_path / "README.md"]) == set()


def test_idle_repaint_schedule_is_sparse():
    assert next_tick(3) == 1.0
    assert next_tick(23) == 7.0
    assert next_tick(125) == 55.0
    assert next_tick(None) == 60.0


def test_json_snapshot_of_world_is_serialisable(tmp_path):
    from rcs_tui.views.world import world_json_extra

    ws = build_workspace(tmp_path)
    w = WorldLoader(ws.project, rp1_db=ws.rp1_db).load()
    data = world_json_extra(w)
    json.dumps(data)
    assert data["rp1_run"]["flow"] == "build" and data["task"] == {"id": "login-api", "phase": "codegen"}


# -- native watching that fails hands over to polling without losing a change ------------------------------


async def test_polling_after_native_watching_failed_first_delivers_every_file(tmp_path):
    """Changes native watching lost when it failed (an undelivered batch, a session it could not watch)
    are shown once polling takes over, not only the ones made after its first scan."""
    session = tmp_path / ".rcs" / "state" / "sessions" / "s2"
    session.mkdir(parents=True)
    atomic_write(session / "ralph-state.json", dump_json({"active": True}))  # written while unwatched
    batches = poll_batches(watch_targets(WorldLoader(tmp_path, rp1_db=False)), 0.05, resync=True)
    first = await asyncio.wait_for(anext(batches), 5)
    await batches.aclose()
    assert session / "ralph-state.json" in first


async def test_a_change_native_watching_lost_when_it_failed_reaches_the_hud(tmp_path, monkeypatch):
    """Native watching fails holding a change it never delivered: the polling that takes over shows it."""
    from rcs_tui.ui import watcher

    root = project(tmp_path)

    async def failing(targets, **_kw):
        atomic_write(forge_file(root), dump_json({"active": True, "iteration": 9, "max_iterations": 10}))
        raise OSError("the inotify descriptor failed")  # with that change read but not yet delivered
        yield frozenset()  # pragma: no cover - an async generator

    monkeypatch.setattr(watcher, "native_batches", failing)
    app = app_for(root)
    async with app.run_test(size=(100, 1)) as pilot:
        await wait_for(pilot, app, "forge:9/10")



async def test_a_session_owner_that_dies_without_a_write_leaves_the_hud(tmp_path, monkeypatch):
    """No file changes when the session's owner dies: the HUD asks every few seconds whether the processes it
    shows still run, and falls back to root (and says why) instead of showing the dead session as current."""
    import subprocess

    from rcs_tui.project import processes
    from tests.statefix import mode, pointer

    monkeypatch.setattr(processes, "INTERVAL_S", 0.2)
    root = project(tmp_path)
    mode(root, "ultrawork", current_phase="executing")
    owner = subprocess.Popen(["sleep", "600"])
    try:
        pointer(root, SID, pid=owner.pid, cwd=str(root))
        app = HudApp(root, rp1_db=False)
        async with app.run_test(size=(160, 1)) as pilot:
            await wait_for(pilot, app, "forge:3/10")
            await pilot.pause(1.0)
            owner.kill()
            owner.wait()
            text = await wait_for(pilot, app, "stale-dead", timeout=30)
            assert "ultrawork" in text and "forge" not in text
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
