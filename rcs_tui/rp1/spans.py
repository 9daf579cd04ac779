"""A run's timeline as a time chart: each step's stretches of work, of waiting and of work done, with its
units and sub-agents under it, from the statuses rp1 recorded in order.

A step is running from a `running` row, waiting from a `waiting` row or a question asked in it, until
its next row: work that ended is done (failed when the step failed), a wait that ended stays a wait.
A run ended by hand ends every open stretch. What is still open at the end stays open, so the drawing
runs it up to now. Times are read in rp1's write order and never go back (`Clamp`).
"""

from __future__ import annotations

from rcs_tui.core.spans import DONE, FAILED, RUNNING, WAITING, Chart, Clamp, Lane, Span
from rcs_tui.rp1.timeline import Timeline

Key = tuple[str | None, str | None]


class _Track:
    """One lane's stretches while its rows are read."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.open: tuple[str, float] | None = None  # (RUNNING or WAITING, since)

    def close(self, t: float, failed: bool = False) -> None:
        if self.open is None:
            return
        kind, since = self.open
        self.spans.append(Span(since, t, (FAILED if failed else DONE) if kind == RUNNING else WAITING))
        self.open = None

    def feed(self, status: str, t: float) -> None:
        if status in ("running", "waiting", "prompt"):
            kind = RUNNING if status == "running" else WAITING
            if self.open is None or self.open[0] != kind:
                self.close(t)
                self.open = (kind, t)
        elif status in ("completed", "skipped", "ended"):
            was_open = self.open is not None
            self.close(t)
            if status == "completed" and not was_open:
                self.spans.append(Span(t, t, DONE))  # completed without a start: the moment it was done
        elif status == "failed":
            if self.open is not None and self.open[0] == RUNNING:
                self.close(t, failed=True)
            else:
                self.close(t)
                self.spans.append(Span(t, t, FAILED))

    def finish(self) -> tuple[Span, ...]:
        if self.open is not None:
            kind, since = self.open
            return (*self.spans, Span(since, None, kind))
        return tuple(self.spans)


def run_chart(t: Timeline, now: float | None = None) -> Chart:
    """The chart of `t`: its steps in machine order, each followed by its units then its sub-agents
    (indented), the unattached ones last; the current step marked."""
    tracks: dict[Key, _Track] = {}
    clamp = Clamp()
    for change in t.changes:
        at = clamp(change.at)
        if at is None:
            continue
        if change.status == "ended":
            for track in tracks.values():
                track.close(at)
            continue
        tracks.setdefault((change.step, change.sub), _Track()).feed(change.status, at)

    def spans(key: Key) -> tuple[Span, ...]:
        track = tracks.get(key)
        return track.finish() if track else ()

    lanes: list[Lane] = []
    for step in t.steps:
        lanes.append(Lane(step.name, spans((step.name, None)), 0, step.name == t.current_step, step.status))
        for kind, subs in (("u:", step.units), ("a:", step.agents)):
            lanes.extend(Lane(sub.key, spans((step.name, kind + sub.key)), 1, status=sub.status or "")
                         for sub in subs)
    for sub in t.unattached:
        kind = "a:" if sub.agent else "u:"
        lanes.append(Lane(sub.key, spans((None, kind + sub.key)), 1, status=sub.status or ""))
    return Chart(tuple(lanes), now)
