"""The live HUD's first frame comes from root and the current session alone; the rest (team, tasks, rp1,
every other session) is read after it, and until then the line says it is still loading."""

from __future__ import annotations

import threading

from test_hud_incremental import CURRENT, tree

from rcs_tui.project.loader import WorldLoader
from rcs_tui.ui.hud_app import HudApp
from rcs_tui.ui.widgets import HudView


def shown(app: HudApp) -> str:
    view = app.query_one(HudView)
    return "\n".join("".join(chunk for chunk, _ in row) for row in view.rows(100, 12))


async def test_the_first_frame_shows_the_current_session_before_the_rest_loads(tmp_path):
    root = tree(tmp_path, 30)
    gate = threading.Event()
    loader = WorldLoader(root, session_id=CURRENT, rp1_db=False)
    real = loader.load_deferred

    def held() -> object:  # the deferred reads wait until the first frame has been looked at
        gate.wait(10)
        return real()

    loader.load_deferred = held  # type: ignore[method-assign]
    app = HudApp(root, session_id=CURRENT, rp1_db=False, loader=loader, force_polling=True)
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        first = shown(app)
        assert "forge:1/10" in first  # the current session, at once
        assert "loading team, tasks, rp1, sessions…" in first  # and it says the picture is not whole yet
        assert set(app.world.snapshot.sessions) <= {CURRENT}  # no other session read yet
        gate.set()
        for _ in range(200):
            await pilot.pause(0.02)
            if app.world is not None and not app.world.pending:
                break
        assert not app.world.pending
        assert len(app.world.snapshot.sessions) == 30  # every session, once loaded
        assert "loading" not in shown(app) and "forge:1/10" in shown(app)


async def test_without_the_watcher_everything_is_read_before_the_first_frame(tmp_path):
    root = tree(tmp_path, 5)
    app = HudApp(root, session_id=CURRENT, rp1_db=False, watch=False)
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        assert not app.world.pending and len(app.world.snapshot.sessions) == 5
        assert "loading" not in shown(app)
