"""Run the project's flight recorder beside a live face (console, HUD): one Textual worker that waits for
the recorder lock and, once it holds it, records every change (`project.recorder.run_recorder`).

It starts `RECORD_DELAY_S` after the face, so the first frame and the face's own first loads never wait
for it, and it ends with the app (the kernel drops the lock with the process, however it ends).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.dom import DOMNode
from textual.worker import Worker

from rcs_tui.views.world import World

RECORD_DELAY_S = 3.0


def start_recording(node: DOMNode, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                    actor: str = "", delay: float = RECORD_DELAY_S) -> Worker[None]:
    """Record `root` from this app for as long as it runs (standing by while another rcs-tui records)."""
    from rcs_tui.project.recorder import run_recorder

    async def run() -> None:
        await asyncio.sleep(delay)
        try:
            await run_recorder(root, session_id=session_id, rp1_db=rp1_db, actor=actor)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the history is a by-product: it never takes the face down
            return

    return node.run_worker(run(), name="rcs-recorder", group="rcs-recorder", exclusive=True, exit_on_error=False)


class WorldRecorder:
    """The project's flight recorder riding on the Worlds a face loads anyway (the console reads every
    session): each complete World is turned into the recorder's document off the UI thread, the newest
    only when several came while one was recorded, so the recorder holds no second picture of the
    project and no watcher of its own. It records while it holds the recorder lock (taken when free,
    tried again as Worlds come) and gives it back at `close()`."""

    def __init__(self, node: DOMNode, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                 actor: str = "") -> None:
        from rcs_tui.project.feed import SnapshotFeed
        from rcs_tui.project.recorder import RecorderTap

        self.node = node
        self.tap = RecorderTap(root, actor=actor)
        self.feed = SnapshotFeed(root, session_id=session_id, rp1_db=rp1_db, summary=True, scopes=False)
        self._pending: World | None = None
        self._busy = False

    def offer(self, world: World | None) -> None:
        """Record what `world` shows, if it is complete (a first frame's partial World is not the project)."""
        if world is None or world.pending:
            return
        self._pending = world
        if not self._busy:
            self._next()

    def _next(self) -> None:
        from rcs_tui.ui.console.background import off_thread

        world, self._pending = self._pending, None
        self._busy = world is not None
        if world is not None:
            off_thread(self.node, lambda: self._observe(world), lambda _value, _error: self._next(),
                       group="rcs-recorder", exclusive=False)

    def _observe(self, world: World) -> None:
        try:
            self.tap.observe(self.feed, self.feed.adopt(world))
        except Exception:  # noqa: BLE001 - the history is a by-product: it never takes the face down
            self.tap.close()

    def close(self) -> None:
        self.tap.close()


def while_away(app: DOMNode, root: Path, now: float, *, timeout: float = 15.0) -> None:
    """Tell the operator, in one notification, what changed since they last looked at `root`'s history and
    who waits for them; then remember this look (`project.seen`). Read in a thread; nothing is shown when
    nothing was ever recorded. The app's `seen_before` gets the previous look (the History view uses it)."""
    from rcs_tui.project.recorder import open_comebacks, read_history
    from rcs_tui.project.seen import last_seen, mark_seen
    from rcs_tui.ui.console.background import off_thread
    from rcs_tui.views.history_text import away_line

    def read() -> tuple[float | None, str | None]:
        seen = last_seen(root)
        entries = read_history(root)
        mark_seen(root, now)
        if not entries:
            return seen, None
        return seen, away_line(entries, seen, now, open_comebacks(entries))

    def show(answer: tuple[float | None, str | None] | None, _error: BaseException | None) -> None:
        if answer is None:
            return
        seen, line = answer
        app.seen_before = seen  # type: ignore[attr-defined]
        if line:
            app.app.notify(line, title="History (6)", timeout=timeout)

    off_thread(app, read, show, group="while-away")
