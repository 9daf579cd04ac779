"""How rcs-tui writes a moment: one formatter for every timestamp it writes or prints as data.

`iso(ts, ms=True)` is the runtime's own form (UTC, milliseconds, `Z`), used for what rcs-tui writes into
state files and its journal; `iso(ts)` is the whole-second form of the snapshot document.
"""

from __future__ import annotations

from datetime import UTC, datetime


def iso(ts: float, *, ms: bool = False) -> str:
    """`ts` (seconds since the epoch) as ISO-8601 UTC with `Z`; with `ms`, to the millisecond."""
    dt = datetime.fromtimestamp(ts, UTC)
    if not ms:
        return dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def iso_of(dt: datetime, *, ms: bool = True) -> str:
    """A datetime in the same form (an aware one is converted to UTC; a naive one is taken as local)."""
    return iso(dt.timestamp(), ms=ms)
