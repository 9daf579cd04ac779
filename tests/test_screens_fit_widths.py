"""The fleet, the rp1 runs and the journal at 200, 120, 80 and 60 columns: a project's name and why it needs
you, a run's id and a journal action show whole while the width allows; what must be shortened stays
usable (a unique run id prefix, the whole entry a key away)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from rcs_tui.fleet.projects import expand_projects
from rcs_tui.project.feed import SnapshotFeed
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.ui.linetable import LineTable
from tests.console_fixtures import app as console_app
from tests.console_fixtures import build, settle
from tests.screentext import shown as shown_text
from tests.statefix import canonical, write
from tests.test_fleet import NOW, failed, running, stale, waiting

SIZES = [(200, 50), (120, 36), (80, 24), (60, 20)]
LONG_NAMES = ("charlie-waiting-for-review", "alpha-payments-service-backend")
REASONS = "1 waiting, 2 dead workers, 1 stale"
UNREACHABLE = "unreachable since 2m"


def long_fleet(tmp_path: Path) -> FleetApp:
    """Projects with long names: one waiting with dead workers and a stale member (three reasons), one
    failed, one stale, one running, and a host that cannot be reached. Fixed clock, no watcher."""
    base = tmp_path / "code"
    charlie = waiting(base / LONG_NAMES[0])
    canonical(charlie, ["forge", "team"])
    team = charlie / ".rcs" / "state" / "team" / "login-flow"
    write(team / "config.json", {"name": "login-flow", "task": "login flow", "worker_count": 2})
    for worker in ("worker-1", "worker-2"):
        write(team / "workers" / worker / "heartbeat.json", {"alive": False, "last_turn_at": "2026-11-25T21:30:00Z"})
    failed(base / LONG_NAMES[1])
    stale(base / "bravo-web")
    running(base / "delta")
    found, _ = expand_projects([f"{base}/*", "ssh://devbox/home/me/work/web"])
    fleet = FleetApp(found, live=False, clock=lambda: NOW)
    for project in found:
        row = fleet.rows[project.key]
        if project.remote:
            row.fail("unreachable: ssh: connect to host devbox port 22: Connection refused", NOW - 125)
            continue
        row.take(SnapshotFeed(Path(project.path), clock=lambda: NOW).document(), NOW)
    return fleet


def fitted(table: LineTable) -> dict[str, list[str]]:
    """Each row's drawn cells by the first two cells' text, after checking the columns fit the width."""
    assert table.max_scroll_x == 0, (table.labels, table.widths)
    rows = {}
    for key in table.keys:
        drawn = table.drawn(key)
        assert all(len(text) <= width for text, width in zip(drawn, table.widths, strict=False)) or \
            len(drawn) < len(table.labels)  # a reason that runs on over the empty columns after it
        rows[key] = drawn
    return rows


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_fleet_keeps_the_name_and_why_it_needs_you(tmp_path, size):
    fleet = long_fleet(tmp_path)
    async with fleet.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.pause()
        table = fleet.screen.query_one("#fleet-table", LineTable)
        rows = fitted(table)
        assert table.labels[:2] == ["STATE", "PROJECT"] and "NEEDS YOU" in table.labels
        by_name = {cells[1]: cells for cells in rows.values()}
        for name in LONG_NAMES:
            assert name in by_name, (name, list(by_name))  # whole, at every width
        why = table.labels.index("NEEDS YOU")
        charlie = by_name[LONG_NAMES[0]]
        assert charlie[0] == "◆ wait"
        assert by_name[LONG_NAMES[1]][why] == "1 failed"
        if size[0] >= 80:
            assert charlie[why] == REASONS
            assert by_name["web"][why].startswith(UNREACHABLE + ": ssh: connect")  # why it cannot be read
        else:  # the names stay whole; the reasons are cut, their start still shows
            assert charlie[why].startswith("1 waiting") and by_name["web"][why].startswith("unreachable")
        if size[0] >= 120:  # the counts behind the reasons too
            assert {"HEALTH", "WORKERS"} <= set(table.labels)
            assert charlie[table.labels.index("WORKERS")] == "2✖"


RUN_IDS = ("3f2b9c4e-8d1a-4c6b-9e7f-1a2b3c4d5e6f", "3f2b9c4e-1c07-4c6b-9e7f-aaaaaaaaaaaa",
           "b7e1d2c3-4a5b-4c6d-8e9f-0a1b2c3d4e5f")


def console_with_runs_and_long_actions(tmp_path: Path):
    """The console fixture with three rp1 runs of real-length (UUID) ids, two of which share their first
    ten characters, and a journal holding a clear of every session and its undo (long actions)."""
    from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
    from rcs_tui.state.ops import plan_clear
    from rcs_tui.state.redo import undo_operation

    root = build(tmp_path, rp1=False)
    create_db(tmp_path / "rp1.db")
    start = datetime.fromisoformat("2026-11-25T21:20:00+00:00")
    with Rp1Writer(tmp_path / "rp1.db", clock=FakeClock(start, timedelta(seconds=7))) as w:
        for run_id, (flow, name) in zip(RUN_IDS, [("deep-research", "auth options"), ("pr-review", "PR #42 review"),
                                                  ("build", "login flow")], strict=True):
            w.step(w.start_run(flow, project_path=root, run_id=run_id, name=name), "plan")
        w.wait_for_user(RUN_IDS[2], "plan", "Which database?")
    actor = "operator@console (console, pid 4242)"
    plan_clear(root, "ultrawork", all_sessions=True).run(root, actor=actor)
    undo_operation(root).run(root, actor=actor)
    journal = root / ".rcs/logs/rcs-tui-journal.jsonl"
    text = journal.read_text()
    for n, entry_id in enumerate(json.loads(line)["id"] for line in text.splitlines()):
        text = text.replace(entry_id, f"20261125T21440{n}-a1b2c{n}")
    journal.write_text(re.sub(r'"at": "[^"]+"', '"at": "2026-11-25T21:44:00.000Z"', text))
    return console_app(tmp_path)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_run_ids_show_whole_or_as_a_prefix_that_tells_them_apart(tmp_path, size):
    a = console_with_runs_and_long_actions(tmp_path)
    async with a.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        table = a.screen.query_one("#runs-table", LineTable)
        rows = fitted(table)
        assert table.labels[0] == "run" and {"status", "name"} <= set(table.labels)
        shown = {key: cells[0] for key, cells in rows.items()}
        assert set(shown) == set(RUN_IDS)
        if size[0] >= 120:
            assert all(shown[run_id] == run_id for run_id in RUN_IDS)
        else:  # shortened from the end, keeping a start that tells the listed runs apart
            prefixes = {run_id: text.removesuffix("…") for run_id, text in shown.items()}
            assert all(text.endswith("…") and run_id.startswith(prefixes[run_id]) for run_id, text in shown.items())
            assert len(set(prefixes.values())) == len(RUN_IDS)
            assert prefixes[RUN_IDS[0]] == "3f2b9c4e-8"
        table.select_key(RUN_IDS[1])
        await pilot.press("y")
        assert a.clipboard == RUN_IDS[1]  # the whole id, however it is shown
        await pilot.press("enter")
        await settle(pilot)
        assert f"run {RUN_IDS[1]}" in shown_text(a.screen.query_one("#run-text"))


UNDO = "undo state clear ultrawork --all-sessions"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_journal_actions_show_whole_and_enter_opens_the_whole_entry(tmp_path, size):
    from rcs_tui.ui.console.entry import EntryScreen

    a = console_with_runs_and_long_actions(tmp_path)
    async with a.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        table = a.screen.query_one("#journal-table", LineTable)
        rows = fitted(table)
        action = table.labels.index("action")
        actions = [cells[action] for cells in rows.values()]
        if size[0] >= 80:
            assert actions == [UNDO, "state clear ultrawork --all-sessions"]
        else:
            assert actions[0].endswith("…") and UNDO.startswith(actions[0][:-1])
        table.select_key("20261125T214400-a1b2c0")  # the clear, undone since
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(a.screen, EntryScreen)
        body = str(a.screen.query_one("#entry-text").render())
        assert "state clear ultrawork --all-sessions   undone" in body
        assert "20261125T214400-a1b2c0" in body and "2026-11-25T21:44:00.000Z" in body
        assert "undone by 20261125T214401-a1b2c1" in body
        assert ".rcs/state/" in body  # the files it touched
        await pilot.press("escape")
        await settle(pilot)
        assert a.screen.query_one("#journal-table", LineTable).selected == "20261125T214400-a1b2c0"


def _view(key: str):
    async def run(pilot) -> None:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
    return run


class TestSnapshots:
    @pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
    def test_fleet(self, tmp_path, snap_compare, size):
        assert snap_compare(long_fleet(tmp_path), terminal_size=size)

    @pytest.mark.parametrize("size", [(120, 36), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
    def test_runs(self, tmp_path, snap_compare, size):
        assert snap_compare(console_with_runs_and_long_actions(tmp_path), terminal_size=size, run_before=_view("4"))

    @pytest.mark.parametrize("size", [(120, 36), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
    def test_journal(self, tmp_path, snap_compare, size):
        assert snap_compare(console_with_runs_and_long_actions(tmp_path), terminal_size=size, run_before=_view("5"))
