"""The project's flight recorder beside a live face (console, HUD), riding on the Worlds the face loads
(`WorldRecorder`), and what the face tells the operator of the history on opening (`while_away`).
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual.dom import DOMNode

from rcs_tui.views.world import World


class WorldRecorder:
    """The project's flight recorder riding on the Worlds a face loads anyway (the console and the HUD read
    every session): each complete World is turned into the recorder's document by one worker thread of the
    face, the newest only when several came while one was recorded, so the recorder holds no second
    picture of the project and no watcher of its own. It records while it holds the recorder lock (taken
    when free, tried again as Worlds come) and gives it back at `close()`."""

    def __init__(self, node: DOMNode, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                 actor: str = "") -> None:
        from rcs_tui.project.feed import SnapshotFeed
        from rcs_tui.project.recorder import RecorderTap

        self.tap = RecorderTap(root, actor=actor)
        self.feed = SnapshotFeed(root, session_id=session_id, rp1_db=rp1_db, summary=True, scopes=False)
        self._pending: World | None = None
        self._closed = False
        self._wake = threading.Condition()
        self._done = threading.Event()
        self._tap_lock = threading.Lock()
        node.run_worker(self._loop, name="rcs-recorder", group="rcs-recorder", thread=True, exit_on_error=False)

    def offer(self, world: World | None) -> None:
        """Record what `world` shows, if it is complete (a first frame's partial World is not the project)."""
        if world is None or world.pending:
            return
        with self._wake:
            self._pending = world
            self._wake.notify()

    def _loop(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        while True:
            with self._wake:
                while self._pending is None and not self._closed and not worker.is_cancelled:
                    self._wake.wait(0.5)
                if self._closed or worker.is_cancelled:
                    break
                world, self._pending = self._pending, None
            if world is None:
                continue
            try:
                with self._tap_lock:
                    if not self._closed:
                        self.tap.observe(self.feed, self.feed.adopt(world))
            except Exception:  # noqa: BLE001 - the history is a by-product: it never takes the face down
                self._close_tap()
        self._close_tap()
        self._done.set()

    def _close_tap(self) -> None:
        with self._tap_lock:
            self.tap.close()

    def close(self, wait: float = 5.0) -> None:
        """Stop recording and give the lock back (after the document being recorded, at most `wait` s)."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        if not self._done.wait(wait):
            self._close_tap()


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
