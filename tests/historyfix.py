"""A recorded history built by the real recorder over a real tree, on a fixed clock: a baseline, a phase
change, two quiet hours, a member waiting for the operator, a runtime clear and a comeback 3 h later."""

from __future__ import annotations

from pathlib import Path

from tests.console_fixtures import NOW, OTHER, SESSION
from tests.statefix import canonical, mode

H = 3600.0


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def record_story(root: Path, rp1_db: Path | None = None, end: float = NOW) -> list[dict]:
    """Drive the recorder through the story, ending at `end`; returns every entry written."""
    from rcs_tui.project.feed import SnapshotFeed
    from rcs_tui.project.recorder import Recorder, observe_feed

    clock = Clock(end - 6 * H)
    feed = SnapshotFeed(root, rp1_db=rp1_db if rp1_db is not None else True, clock=clock, summary=True,
                        scopes=False)
    rec = Recorder(root, clock=clock)
    rec.start()
    out = observe_feed(rec, feed, feed.document())
    clock.t += 60
    mode(root, "forge", SESSION, mode="forge", current_phase="verifying", iteration=4, max_iterations=10,
         session_id=SESSION)
    out += observe_feed(rec, feed, feed.document())
    clock.t += 2 * H  # two quiet hours
    mode(root, "forge", SESSION, mode="forge", current_phase="verifying", iteration=4, max_iterations=10,
         session_id=SESSION, lifecycle_outcome="askuserQuestion")
    out += observe_feed(rec, feed, feed.document())
    clock.t += 30
    (root / ".rcs" / "state" / "sessions" / OTHER / "ultrawork-state.json").unlink()  # the runtime's clear
    canonical(root, ["team"], OTHER)
    out += observe_feed(rec, feed, feed.document())
    clock.t = end - 20 * 60  # three hours later it comes back, written by another session's process
    mode(root, "ultrawork", OTHER, owner_rcs_session_id="rcs-intruder-77", owner_pid=4242)
    canonical(root, ["team", "ultrawork"], OTHER)
    out += observe_feed(rec, feed, feed.document())
    return out
