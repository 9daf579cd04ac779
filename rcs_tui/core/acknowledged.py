"""Which "needs you" verdicts the operator has acknowledged: an acknowledgement holds until the entry's
state changes (a new question, a new clear, a new last heartbeat), then the entry needs the operator again.

`Acknowledged` knows two kinds of acknowledgement: one made here (the verdict's `state` as it was then), and
one read from the project's history (an `ack` entry names a member or run and has a time; it covers a verdict
whose state began at or before that time, so an acknowledgement made in another rcs-tui, or before a restart,
still holds while nothing changed). Pure: the caller reads the history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rcs_tui.core.attention import Verdict


@dataclass
class Acknowledged:
    here: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, item) -> its state when acknowledged
    # `kind:item` (or a bare item, from a history that did not say which kind) -> the newest `ack` (epoch s)
    recorded: dict[str, float] = field(default_factory=dict)

    def add(self, verdict: Verdict) -> None:
        """The operator acknowledged `verdict` as it is now."""
        self.here[(verdict.kind, verdict.item)] = verdict.state

    def covers(self, verdict: Verdict) -> bool:
        """Whether `verdict` is acknowledged in its present state."""
        if self.here.get((verdict.kind, verdict.item)) == verdict.state:
            return True
        at = max(self.recorded.get(f"{verdict.kind}:{verdict.item}", float("-inf")),
                 self.recorded.get(verdict.item, float("-inf")))  # a bare item: any kind, as it was recorded
        return verdict.since is not None and verdict.since <= at

    def forget_changed(self, verdicts: Iterable[Verdict]) -> None:
        """Drop the acknowledgements made here whose entry changed state or needs the operator no more."""
        now = {(v.kind, v.item): v.state for v in verdicts}
        self.here = {k: s for k, s in self.here.items() if now.get(k) == s}


def recorded_acks(entries: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The `ack` entries of a project's history: when each was last acknowledged (epoch seconds), keyed
    `kind:item` when the entry says which kind it acknowledged (`of`), else by the item alone."""
    recorded: dict[str, float] = {}
    for e in entries:
        item, ts, of = e.get("item"), e.get("ts"), e.get("of")
        if e.get("kind") == "ack" and isinstance(item, str) and isinstance(ts, (int, float)):
            key = f"{of}:{item}" if isinstance(of, str) and of else item
            recorded[key] = max(float(ts), recorded.get(key, float("-inf")))
    return recorded
