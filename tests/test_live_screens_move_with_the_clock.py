"""What a live screen says changes with time alone, no file written: a team worker whose heartbeat goes
silent needs you, a mode's "came back after a clear" verdict ends with its window, an ended mode's
outcome leaves the HUD line. The console and the live HUD follow the clock as the followed documents do;
before, the console kept its first verdicts (and every age) under its live mark until some file changed.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.console_fixtures import settle, until
from tests.statefix import canonical, mode, write


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _aged(root: Path, seconds: float) -> None:
    then = time.time() - seconds
    for p in root.rglob("*"):
        os.utime(p, (then, then), follow_symlinks=False)


async def test_the_console_shows_a_worker_going_silent_with_no_file_written(tmp_path):
    from rcs_tui.ui.console.app import ConsoleApp

    root = tmp_path / "p"
    now = [time.time()]
    mode(root, "team", None, team_name="crew", current_phase="team-exec")
    canonical(root, ["team"])
    team = root / ".rcs/state/team/crew"
    write(team / "config.json", {"name": "crew", "worker_count": 1})
    write(team / "workers/w1/status.json", {"state": "working"})
    write(team / "workers/w1/heartbeat.json", {"alive": True, "pid": os.getpid(), "last_turn_at": _iso(now[0] - 100)})
    _aged(root, 300)
    app = ConsoleApp(root, rp1_db=tmp_path / "none.db", live=True, blink=False, actor="t@t", theme="textual-dark",
                     clock=lambda: now[0])
    app.rejudge_seconds = 0.2
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await pilot.press("2")  # the team view
        await settle(pilot)

        def silent() -> bool:
            return ("silent", "crew/w1") in [(v.kind, v.item) for v in app.needs.verdicts]

        def row() -> str:
            return " ".join(str(c) for c in app.screen.query_one("#team-workers").row_text("crew/w1"))

        assert not silent() and "alive" in row()
        now[0] += 60  # the heartbeat is 160 s old: past the 120 s after which a worker is silent
        assert await until(pilot, lambda: silent() and "silent" in row()), (app.needs.verdicts, row())


async def test_the_console_lets_a_comeback_verdict_end_with_its_window(tmp_path, run_cli):
    from rcs_tui.ui.console.app import ConsoleApp

    root = tmp_path / "p"
    mode(root, "forge", None, current_phase="executing")
    canonical(root, ["forge"])
    assert run_cli("state", "clear", "--mode", "forge", "--root", str(root)).code == 0
    time.sleep(0.05)
    mode(root, "forge", None, current_phase="executing")  # a hook writes it back
    now = [time.time() + 5]
    app = ConsoleApp(root, rp1_db=tmp_path / "none.db", live=True, blink=False, actor="t@t", theme="textual-dark",
                     clock=lambda: now[0])
    app.rejudge_seconds = 0.2
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)

        def kinds() -> list[str]:
            return [v.kind for v in app.needs.verdicts if v.item == "root/forge"]

        assert "resurrected" in kinds()
        now[0] += 16 * 60  # past the 15 minutes a comeback is news
        assert await until(pilot, lambda: "resurrected" not in kinds()), kinds()


async def test_the_live_hud_drops_an_ended_modes_outcome_when_its_time_is_up(tmp_path, monkeypatch):
    from rcs_tui.ui import widgets
    from rcs_tui.ui.hud_app import HudApp

    drawn: list[str] = []  # what the screen was last drawn with (a call of ours would draw it anew)
    render = widgets.HudView.render

    def recorded(self):
        text = render(self)
        drawn.append(text.plain)
        return text

    monkeypatch.setattr(widgets.HudView, "render", recorded)

    root = tmp_path / "p"
    ended = time.time() - 15 * 60 + 2  # an outcome is shown for 15 minutes: this one for 2 s more
    mode(root, "forge", None, iteration=2, max_iterations=5)
    mode(root, "blueprint", None, active=False, current_phase="completed", lifecycle_outcome="finished",
         completed_at=_iso(ended))
    canonical(root, ["forge"])
    _aged(root, 61)  # the age text then changes once a minute: no repaint for it until then
    app = HudApp(root, rp1_db=False, preset="full")
    async with app.run_test(size=(150, 1)) as pilot:
        def shown() -> str:
            return drawn[-1] if drawn else ""

        assert await until(pilot, lambda: "forge" in shown(), 5)
        assert "blueprint" in shown()
        assert await until(pilot, lambda: "blueprint" not in shown(), 8), shown()
        assert "forge" in shown()
