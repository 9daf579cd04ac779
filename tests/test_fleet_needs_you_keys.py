"""`n` / `N` jump to the next / previous project that needs you (from the table and from a project view),
and `a` acknowledges what a project needs you for: recorded, and no alert about it until it changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from statefix import mode
from test_fleet import NOW, fleet_dir

from rcs_tui.fleet.acks import StateDirAcknowledger
from rcs_tui.fleet.alerts import AlertSettings
from rcs_tui.fleet.projects import expand_projects
from rcs_tui.project.feed import SnapshotFeed
from rcs_tui.ui.fleet.app import FleetApp, FleetScreen
from rcs_tui.ui.fleet.project import ProjectScreen
from rcs_tui.ui.linetable import LineTable


def fleet(tmp_path: Path, **kw) -> tuple[FleetApp, Path]:
    base = fleet_dir(tmp_path)
    found, _ = expand_projects([f"{base}/*"])
    app = FleetApp(found, live=False, acknowledger=StateDirAcknowledger(str(tmp_path / "acks.jsonl")),
                   actor="me@fleet", **kw)
    for project in found:
        app.rows[project.key].take(SnapshotFeed(Path(project.path), clock=lambda: NOW).document(), NOW)
    return app, base


def names(keys):
    return [Path(k).name for k in keys]


async def test_n_and_shift_n_walk_the_projects_that_need_you(tmp_path):
    app, _ = fleet(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#fleet-table", LineTable)
        assert names(table.keys) == ["api", "billing", "docs", "web", "notes"]  # web and notes need nothing
        table.select_key(table.keys[4])  # notes
        visited = []
        for _ in range(4):
            await pilot.press("n")
            visited.append(Path(table.selected).name)
        assert visited == ["api", "billing", "docs", "api"]  # wraps, skipping running and idle projects
        await pilot.press("N")
        assert Path(table.selected).name == "docs"
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, ProjectScreen) and Path(app.screen.key).name == "docs"
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, ProjectScreen) and Path(app.screen.key).name == "api"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, FleetScreen)


async def test_a_acknowledges_and_the_entry_stays_quiet_until_it_changes(tmp_path):
    clock = [NOW]
    app, base = fleet(tmp_path, alerts=AlertSettings(bell=True, min_interval=0, hold={"waiting": 5.0}),
                      clock=lambda: clock[0])
    web = str(base / "web")
    feed = SnapshotFeed(base / "web", clock=lambda: NOW)
    async with app.run_test(size=(120, 30)) as pilot:
        for row in app.rows.values():
            app.tracker.observe(row)  # the baseline
        mode(base / "web", "autopilot", active=False, lifecycle_outcome="askuserQuestion")
        row = app.rows[web]
        row.take(feed.document(), NOW)
        assert app.tracker.observe(row) == []  # waiting must last 5 s first
        table = app.screen.query_one("#fleet-table", LineTable)
        app.redraw()
        table.select_key(web)
        await pilot.press("a")
        clock[0] += 5
        (alert,) = app.tracker.tick()
        assert (alert.member, alert.delivery) == ("root/autopilot", "quiet (acknowledged)")
        [line] = [json.loads(x) for x in (tmp_path / "acks.jsonl").read_text().splitlines()]
        assert (line["root"], line["item"], line["actor"]) == (web, "waiting:root/autopilot", "me@fleet")
        path = mode(base / "web", "autopilot", active=False, lifecycle_outcome="askuserQuestion", question="again?")
        os.utime(path, (NOW + 60, NOW + 60))  # asked again a minute later
        row.take(feed.document(), NOW)
        app.tracker.observe(row)
        clock[0] += 5
        (again,) = app.tracker.tick()  # a new state of the same member: it alerts again
        await pilot.pause()
        assert again.member == "root/autopilot" and again.delivery == "sent"  # the bell rang


async def test_a_read_only_fleet_still_acknowledges(tmp_path):
    """Read-only (as in the browser) offers no action that writes a project, but acknowledging writes only
    rcs-tui's own record, so it stays."""
    app, base = fleet(tmp_path, readonly=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#fleet-table", LineTable)
        table.select_key(str(base / "api"))
        before = {p: p.read_bytes() for p in (base / "api").rglob("*") if p.is_file()}
        await pilot.press("a")
        await pilot.pause()
        lines = (tmp_path / "acks.jsonl").read_text().splitlines()
        assert lines and all(json.loads(line)["actor"] == "me@fleet" for line in lines)
        assert {p: p.read_bytes() for p in (base / "api").rglob("*") if p.is_file()} == before


def test_the_fleet_records_a_local_acknowledgement_in_the_projects_history(tmp_path):
    """What `a` acknowledges in a local project is an `ack` in its history, so `rcs-tui history` and the
    console see the came-back member as acknowledged; a remote project's stays on this host."""
    from rcs_tui.files.fsafe import Tree
    from rcs_tui.fleet.acks import HistoryAcknowledger
    from rcs_tui.project.recorder import HISTORY_REL, _line, open_comebacks, read_history

    root = tmp_path / "p"
    mode(root, "forge", current_phase="executing")
    Tree(root).append(str(HISTORY_REL), _line({"v": 1, "id": "h1", "at": "2026-11-27T00:00:00.000Z", "ts": 1.0,
                                               "kind": "came_back", "subject": "root/forge"}))
    assert [e["id"] for e in open_comebacks(read_history(root))] == ["h1"]
    fallback = StateDirAcknowledger(str(tmp_path / "acks.jsonl"))
    HistoryAcknowledger(fallback).acknowledge(str(root), "came_back:root/forge", "me@fleet")
    history = read_history(root)
    assert open_comebacks(history) == [] and history[-1]["actor"] == "me@fleet"
    assert not (tmp_path / "acks.jsonl").exists()
    HistoryAcknowledger(fallback).acknowledge("ssh://box/srv/p", "waiting:s1/forge", "me@fleet")
    assert json.loads((tmp_path / "acks.jsonl").read_text())["root"] == "ssh://box/srv/p"
