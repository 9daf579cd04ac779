"""The console's rp1 view follows the database live: a new event shows in its run's row, runs that
moved come to the top, and many events in a burst end on the latest state."""

from __future__ import annotations

from rcs_tui.rp1.fixtures import Rp1Writer
from tests.console_fixtures import app, until


def shown(pilot) -> list[tuple[str, str]]:
    """(run key, text of the row) in screen order."""
    table = pilot.app.screen.query_one("#runs-table")
    out = []
    for key in table.keys:
        out.append((key, " ".join(table.row_text(key))))
    return out


async def test_a_new_rp1_event_shows_in_the_live_console(tmp_path):
    console = app(tmp_path, live=True)
    async with console.run_test(size=(120, 30)) as pilot:
        await pilot.press("4")
        assert await until(pilot, lambda: [k for k, _ in shown(pilot)][:1] == ["run-0003-build"])
        with Rp1Writer(tmp_path / "rp1.db") as w:
            w.step("run-0001-research", "report", "failed")  # the finished run fails after all
        assert await until(pilot, lambda: shown(pilot)[0][0] == "run-0001-research"
                           and "failed" in shown(pilot)[0][1])
        with Rp1Writer(tmp_path / "rp1.db") as w:  # a burst: the view ends on the last state
            for i in range(30):
                w.step("run-0002-review", "review" if i % 2 else "synthesize")
            w.step("run-0002-review", "post")
        assert await until(pilot, lambda: shown(pilot)[0][0] == "run-0002-review"
                           and " post " in f" {shown(pilot)[0][1]} ")
        assert [k for k, _ in shown(pilot)] == ["run-0002-review", "run-0001-research", "run-0003-build"]


async def test_a_busy_database_does_not_relayout_the_screen_while_the_note_stays_the_same(tmp_path):
    """The note under the runs ("3 of 3 runs") is handed over only when it changes: each update of a
    text widget asks for a layout pass, which repaints every widget on the screen, so a busy database
    would redraw the whole console on every event."""
    console = app(tmp_path, live=True)
    async with console.run_test(size=(120, 30)) as pilot:
        await pilot.press("4")
        assert await until(pilot, lambda: [k for k, _ in shown(pilot)][:1] == ["run-0003-build"])
        note = pilot.app.screen.query_one("#runs-note")
        assert "3 of 3 runs" in str(note.render())
        layouts: list[int] = []
        real = note.refresh

        def refresh(*regions, layout: bool = False, **kwargs):
            layouts.append(layout)
            return real(*regions, layout=layout, **kwargs)

        note.refresh = refresh
        with Rp1Writer(tmp_path / "rp1.db") as w:
            w.step("run-0002-review", "post")
        assert await until(pilot, lambda: shown(pilot)[0][0] == "run-0002-review")
        assert True not in layouts
        with Rp1Writer(tmp_path / "rp1.db") as w:
            w.start_run("build", project_path=tmp_path / "project", run_id="run-0004-new")
        assert await until(pilot, lambda: "4 of 4 runs" in str(note.render()))
        assert True in layouts
