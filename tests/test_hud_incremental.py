"""Updates proportional to what changed: the live HUD and the refresh behind it."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_reader_refresh import apply, op, picture, seed

from rcs_tui.project.loader import WorldLoader
from rcs_tui.state import reader
from rcs_tui.state.reader import read_snapshot, refresh_snapshot
from rcs_tui.ui.hud_app import HudApp
from rcs_tui.ui.widgets import HudView, MemberList

CURRENT = "s-current"


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)


def tree(root: Path, sessions: int) -> Path:
    for i in range(sessions):
        sid = CURRENT if i == 0 else f"s-{i:03d}"
        write(root / ".rcs/state/sessions" / sid / "forge-state.json",
              {"active": True, "current_phase": "executing", "iteration": 1, "max_iterations": 10})
        write(root / ".rcs/state/sessions" / sid / "skill-active-state.json",
              {"version": 1, "active": True, "active_skills": [{"skill": "forge", "active": True, "session_id": sid}]})
    return root


def forge(root: Path, sid: str, i: int) -> Path:
    path = root / ".rcs/state/sessions" / sid / "forge-state.json"
    write(path, {"active": True, "current_phase": "executing", "iteration": i, "max_iterations": 10})
    return path


async def test_a_write_to_another_session_repaints_only_the_age(tmp_path):
    root = tree(tmp_path, 20)
    loader = WorldLoader(root, session_id=CURRENT, rp1_db=False)
    app = HudApp(root, session_id=CURRENT, rp1_db=False, watch=False, loader=loader)
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.press("o")  # the overlay panels are drawn only while shown
        await pilot.pause()
        members_world = app.query_one(MemberList).world
        elsewhere = forge(root, "s-007", 5)
        app._apply(loader.load([elsewhere]))
        await pilot.pause()
        assert app.query_one(HudView).world is app.world  # the age is computed from the newest world
        assert app.query_one(MemberList).world is members_world  # nothing it shows changed: not rebuilt
        mine = forge(root, CURRENT, 6)
        app._apply(loader.load([mine]))
        await pilot.pause()
        assert app.query_one(MemberList).world is app.world
        line = "".join(t for row in app.query_one(HudView).rows(100, 1) for t, _ in row)
        assert "forge:6/10" in line


async def test_age_repaints_only_when_its_text_changes_and_hidden_panels_wait(tmp_path):
    root = tree(tmp_path, 5)
    now = [time.time()]  # every file was written within the last second: "updated 0s ago"
    loader = WorldLoader(root, session_id=CURRENT, rp1_db=False, clock=lambda: now[0])
    app = HudApp(root, session_id=CURRENT, rp1_db=False, watch=False, loader=loader, clock=lambda: now[0])
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        assert app.query_one(MemberList).world is None  # overlay hidden: its panels are not drawn
        repaints = []
        app.query_one(HudView).refresh = lambda *a, **k: repaints.append(1)  # type: ignore[method-assign]
        for i in range(3):  # writes elsewhere that keep the text at "updated 0s ago"
            path = forge(root, "s-002", 5 + i)
            os.utime(path, (now[0], now[0]))
            app._apply(loader.load([path]))
        await pilot.pause(0.4)
        assert repaints == []
        path = forge(root, "s-003", 9)
        os.utime(path, (now[0] - 30, now[0] - 30))  # older than the newest: the text stays too
        app._apply(loader.load([path]))
        now[0] += 12  # it reads "updated 10s ago" now: the next batch repaints the line, once
        app._apply(loader.load([path]))
        await pilot.pause(0.4)
        assert repaints == [1]
        await pilot.press("o")
        await pilot.pause()
        assert app.query_one(MemberList).world is app.world  # shown: drawn with the latest world


def test_refresh_lists_sessions_again_only_when_the_list_can_have_changed(tmp_path, monkeypatch):
    root = tree(tmp_path, 30)
    calls = []
    listing = reader._session_entries

    def counted(layout, errors):
        calls.append(1)
        return listing(layout, errors)

    monkeypatch.setattr(reader, "_session_entries", counted)
    base = read_snapshot(root, CURRENT)
    first = refresh_snapshot(base, [forge(root, "s-003", 4)], CURRENT)  # learns the listing
    calls.clear()
    again = refresh_snapshot(first, [forge(root, "s-004", 5)], CURRENT)
    assert calls == []  # a file rewritten in a known session: the list is reused
    assert again.sessions["s-004"].modes["forge"].iteration == 5
    assert again.sessions.keys() == read_snapshot(root, CURRENT).sessions.keys()
    new = forge(root, "s-new", 2)
    grown = refresh_snapshot(again, [new], CURRENT)
    assert calls and "s-new" in grown.sessions
    calls.clear()
    os.unlink(new)
    new.parent.rmdir()
    shrunk = refresh_snapshot(grown, [new], CURRENT)
    assert calls and "s-new" not in shrunk.sessions
    assert shrunk.sessions.keys() == read_snapshot(root, CURRENT).sessions.keys()


async def test_console_draws_once_for_updates_that_queued_up(tmp_path):
    from rcs_tui.ui.watcher import WorldUpdated
    from tests.console_fixtures import app

    a = app(tmp_path)
    async with a.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        drawn = []
        original = a.refresh_views
        a.refresh_views = lambda: (drawn.append(a.world), original())
        worlds = [a.loader.load() for _ in range(5)]
        for world in worlds:  # five batches arrive before the app gets to draw
            a.post_message(WorldUpdated(world, frozenset()))
        await pilot.pause()
        assert drawn == [worlds[-1]]  # one redraw, of the latest state


@settings(max_examples=60, deadline=None)
@given(rounds=st.lists(st.lists(op, min_size=1, max_size=6), min_size=1, max_size=5),
       explicit=st.sampled_from([None, "s-b"]))
def test_incremental_world_equals_a_fresh_full_read(rounds, explicit):
    """The live views' state, kept from the changed paths batch after batch, is what a fresh full read
    gives: every scope, member, error and the newest write, and so is the World shown, also while a file
    is bad (the bad file is shown as such; nothing older is kept in its place)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed(root)
        live = WorldLoader(root, session_id=explicit, rp1_db=False, environ={})
        live.load()
        for batch in rounds:
            changed: set[Path] = set()
            for action in batch:
                changed |= apply(root, action)
            world = live.load(changed)
            fresh = WorldLoader(root, session_id=explicit, rp1_db=False, environ={}).load()
            on_disk = live._state_base  # what the next refresh builds on
            assert on_disk is not None and picture(on_disk) == picture(fresh.snapshot)
            assert on_disk.mode_newest == fresh.snapshot.mode_newest
            assert picture(world.snapshot) == picture(fresh.snapshot)
            assert world.newest_write == fresh.newest_write
            assert [b.text(root) for b in world.badges] == [b.text(root) for b in fresh.badges]


def test_off_view_paths_are_other_sessions_only(tmp_path):
    root = tree(tmp_path, 4)
    sessions = root / ".rcs/state/sessions"
    loader = WorldLoader(root, session_id=CURRENT, rp1_db=False, environ={})
    loader.load()
    assert loader.off_view([sessions / "s-002" / "forge-state.json", sessions / "s-003" / "team-state.json"])
    assert not loader.off_view([sessions / "s-002" / "forge-state.json", sessions / CURRENT / "forge-state.json"])
    assert not loader.off_view([root / ".rcs/state/forge-state.json"])  # root: shown
    assert not loader.off_view([sessions / "s-new"])  # a new session directory may be the current one
    rooted = WorldLoader(root, rp1_db=False, environ={})  # root authoritative, forge active at root
    write(root / ".rcs/state/forge-state.json", {"active": True, "current_phase": "executing"})
    rooted.load()
    assert not rooted.off_view([sessions / "s-002" / "forge-state.json"])  # its tombstone would change root
    assert rooted.off_view([sessions / "s-002" / "team-state.json"])
