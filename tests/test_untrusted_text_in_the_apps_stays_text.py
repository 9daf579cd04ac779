"""Untrusted text in the apps stays text. A notification built from a run id, a project name or a restored
path is never read as Textual markup: `[/x]` used to stop the app with a markup error, and
`[@click=app.quit]` became a clickable action. Escape sequences and bidi overrides never reach the terminal.
A run's step and sub-agent statuses on the console's run page go through the sanitiser too: before, an
rp1 status carrying OSC 52 wrote the terminal's clipboard."""

from __future__ import annotations

import pytest

from rcs_tui.rp1.db import RunRow
from rcs_tui.rp1.timeline import StepEntry, SubEntry, Timeline
from rcs_tui.ui.console.app import ConsoleApp
from rcs_tui.ui.console.run import header_text, timeline_text
from rcs_tui.ui.fleet.app import FleetApp
from rcs_tui.ui.hud_app import HudApp

HOSTILE = "run [/nope] [@click=app.quit]quit[/] [b]x\x1b]52;c;SGVsbG8=\x07\x1b[2J\u202eEVIL\u200b"
SHOWN = "run [/nope] [@click=app.quit]quit[/] [b]xEVIL"


def apps(tmp_path):
    (tmp_path / ".rcs" / "state").mkdir(parents=True)
    return {"hud": lambda: HudApp(tmp_path, rp1_db=False, watch=False),
            "console": lambda: ConsoleApp(tmp_path, live=False)}


@pytest.mark.parametrize("which", ["hud", "console"])
async def test_a_notification_of_untrusted_text_is_shown_as_plain_text(tmp_path, which):
    app = apps(tmp_path)[which]()
    async with app.run_test(size=(120, 30)) as pilot:
        app.notify(HOSTILE, title="History \x1b[31m(6)")
        await pilot.pause(0.3)  # drawn: a markup error would have stopped the app here
        assert app.is_running
        (shown,) = [n for n in app._notifications if n.message.startswith("run")]
        assert (shown.message, shown.title, shown.markup) == (SHOWN, "History (6)", False)


def test_every_app_notifies_through_the_plain_notices():
    from rcs_tui.ui.notices import PlainNotices

    for cls in (HudApp, ConsoleApp, FleetApp):
        assert issubclass(cls, PlainNotices) and cls.notify is PlainNotices.notify


def test_the_run_page_shows_hostile_statuses_as_text():
    bad = "completed\x1b]52;c;SGVsbG8=\x07\x1b[2J\u202eEVIL"
    run = RunRow("r1", "build", "f", "/p", None, "n", None, "running", "2026-01-01T00:00:00.000Z",
                 "2026-01-01T00:00:00.000Z", 5)
    step = StepEntry("plan", status=bad, units=[SubEntry("T1", None, bad)], agents=[SubEntry("agent", "x", bad)])
    t = Timeline(run, "build", True, bad, "plan", [step], [], [], [], [], 5, None)
    for rendered in (header_text(t).plain, timeline_text(t).plain):
        assert "\x1b" not in rendered and "\x07" not in rendered and "\u202e" not in rendered
        assert "completed]52;c;SGVsbG8=" not in rendered
        assert "completedEVIL" in rendered
