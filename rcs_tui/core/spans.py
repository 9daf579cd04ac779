"""What a time chart draws: rows (lanes) of spans, each span a stretch of one kind of activity.

The plain model between the readers that know a run or a task (rp1, task transcripts) and the drawing
that knows widths and glyphs. Times are seconds since the epoch, read from untrusted files: `moment`
turns a stored timestamp into one or refuses it, and `Clamp` keeps a sequence of them in order, so a
row written out of order, stamped in 1970 or in the far future, never makes a span run backwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

# Span kinds, in the words the legend uses.
RUNNING = "running"  # work still going on (an open span)
WAITING = "waiting"  # waiting for a person, or blocked
DONE = "done"  # work that ended
FAILED = "failed"  # work that ended in failure
KINDS = (DONE, RUNNING, WAITING, FAILED)

# Stamps outside these years are taken as broken clocks, not as moments.
FIRST_YEAR, LAST_YEAR = 2000, 2200


def moment(value: object) -> float | None:
    """An ISO-8601 timestamp as epoch seconds: `Z`, an offset, or none (taken as UTC, as rp1 writes);
    None when absent, unparsable or outside the years 2000–2200."""
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if not FIRST_YEAR <= dt.year <= LAST_YEAR:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


class Clamp:
    """Times of rows read in write order, made never to go back: a row stamped before the one written
    before it, or with no usable stamp, is taken to have happened at that earlier row's time."""

    def __init__(self) -> None:
        self.last: float | None = None

    def __call__(self, value: object) -> float | None:
        t = moment(value)
        if t is None or (self.last is not None and t < self.last):
            return self.last
        self.last = t
        return t


@dataclass(frozen=True)
class Span:
    """One stretch of a lane: from `start` to `end` (equal for an instant; None while still open,
    drawn up to the chart's `now`), of one of `KINDS`."""

    start: float
    end: float | None
    kind: str


@dataclass(frozen=True)
class Lane:
    """One row: a step (depth 0) or a unit / sub-agent under it (depth 1), its spans in time order,
    whether it is where the run or task is now, and its last status in words."""

    label: str
    spans: tuple[Span, ...] = ()
    depth: int = 0
    current: bool = False
    status: str = ""


@dataclass(frozen=True)
class Chart:
    """Lanes in display order; `now` is where open spans end (None: at the latest time in the chart)."""

    lanes: tuple[Lane, ...] = ()
    now: float | None = None
