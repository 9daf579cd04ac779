"""The console's History view: the recorded story newest first with the quiet hours folded into one line,
under a "while you were away" line that counts the changes since this user last looked, says who waits
and since when, and keeps an unacknowledged comeback in sight."""

from __future__ import annotations

import json
import time

import pytest

from tests.console_fixtures import NOW, app, build, settle
from tests.historyfix import H, record_story


@pytest.fixture
def story(tmp_path, monkeypatch):
    """The console project with the recorded story, seen last 5 h before now (its state dir in tmp)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    state = tmp_path / "xdg-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    root = build(tmp_path)
    record_story(root, tmp_path / "rp1.db")
    (state / "rcs-tui").mkdir(parents=True, mode=0o700)
    (state / "rcs-tui" / "history-seen.json").write_text(json.dumps({str(root.resolve()): NOW - 5 * H}))
    (state / "rcs-tui" / "history-seen.json").chmod(0o600)
    yield tmp_path
    monkeypatch.delenv("TZ")
    time.tzset()


def _open_history(pilot):
    async def run(pilot) -> None:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
    return run(pilot)


def _cells(app_, table_id):
    table = app_.screen.query_one(f"#{table_id}")
    return ["  ".join(table.row_text(key)) for key in table.keys]


class TestHistoryView:
    async def test_the_story_reads_newest_first_with_the_quiet_hours_folded(self, story):
        console = app(story, away=True)
        async with console.run_test(size=(120, 36)) as pilot:
            await _open_history(pilot)
            rows = _cells(console, "history-table")
            assert "CAME BACK 3h38m after the runtime's clear; written by session rcs-intruder-77, pid 4242" in rows[0]
            assert "cleared by the runtime" in rows[2] and "… 3h38m quiet …" in rows[1]
            assert any("is waiting for you (askuserQuestion)" in r for r in rows)
            assert any("… 2h00m quiet …" in r for r in rows), rows
            assert "recording started: 5 members, 2 tasks, 3 rp1 runs, 2 workers" in rows[-1]
            away = str(console.screen.query_one("#history-away").render())
            assert away.startswith("While you were away (5h00m): 3 changes")
            assert "waiting for you: …6896953-k3j9x2/forge 3h59m" in away
            assert "came back after a clear: …7012400-p8d2qa/ultrawork (not acknowledged)" in away
            note = str(console.screen.query_one("#history-note").render())
            assert note.startswith("nobody records this project now")

    async def test_opening_the_console_tells_what_changed_and_remembers_the_look(self, story):
        console = app(story, away=True)
        async with console.run_test(size=(120, 36), notifications=True) as pilot:
            await settle(pilot)
            notes = [n.message for n in console._notifications]
            assert len(notes) == 1 and notes[0].startswith("While you were away (5h00m): 3 changes")
        seen = json.loads((story / "xdg-state" / "rcs-tui" / "history-seen.json").read_text())
        assert list(seen.values()) == [NOW]
        console = app(story, away=True)  # the next look: nothing new since
        async with console.run_test(size=(120, 36), notifications=True) as pilot:
            await settle(pilot)
            assert [n.message for n in console._notifications][0].startswith(
                "Nothing changed since you last looked (0s ago)")

    async def test_an_acknowledged_comeback_leaves_the_line(self, story):
        from rcs_tui.project.recorder import acknowledge

        acknowledge(story / "project", "h6", "operator@console", clock=lambda: NOW - 60)
        console = app(story, away=True)
        async with console.run_test(size=(120, 36)) as pilot:
            await _open_history(pilot)
            away = str(console.screen.query_one("#history-away").render())
            assert "came back" not in away
            assert "h6 acknowledged by operator@console" in _cells(console, "history-table")[0]

    async def test_a_project_never_recorded_says_how_to_get_a_history(self, tmp_path, monkeypatch):
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
        console = app(tmp_path, away=True)
        async with console.run_test(size=(80, 24), notifications=True) as pilot:
            await _open_history(pilot)
            assert _cells(console, "history-table") == []
            note = str(console.screen.query_one("#history-note").render())
            assert note.startswith("Nothing recorded yet")
            assert console._notifications == [] or not list(console._notifications)


class TestHistorySnapshots:
    def test_history_80x24(self, story, snap_compare):
        assert snap_compare(app(story, away=True), terminal_size=(80, 24), run_before=_open_history)

    def test_history_120x36(self, story, snap_compare):
        assert snap_compare(app(story, away=True), terminal_size=(120, 36), run_before=_open_history)

    def test_history_entry_80x24(self, story, snap_compare):
        """The comeback opened in full (enter): every field, nothing cut."""
        async def run(pilot) -> None:
            await _open_history(pilot)
            await pilot.press("enter")  # the newest entry: the comeback
            await settle(pilot)
        assert snap_compare(app(story, away=True), terminal_size=(80, 24), run_before=run)
