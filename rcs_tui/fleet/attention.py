"""The kinds of attention a project can need, and every word the fleet uses for each: one table.

A snapshot document's `attention` digest has one list per kind. Each kind says how urgent it makes a
row (`rank`), which alert it raises (root survivors alert as `stale`; running work raises none), how a
count reads on a row and in the status line ("2 dead workers"), its heading in the project view, and
what an alert says about a member of it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    key: str  # the list in the document's `attention`
    rank: str  # the row rank it puts a project in (see rows.RANKS)
    alert: str | None  # the alert kind a new entry raises (None: no alert)
    noun: str  # a count of it: "1 dead worker"
    plural: str  # "2 dead workers"
    heading: str  # the project view's heading for its entries
    news: str  # what an alert says: "<member> worker died"


KINDS: tuple[Kind, ...] = (
    Kind("waiting", "waiting", "waiting", "waiting", "waiting", "waiting for you", "is waiting for you"),
    Kind("failed", "failed", "failed", "failed", "failed", "failed", "failed"),
    Kind("dead", "trouble", "dead", "dead worker", "dead workers", "dead workers", "worker died"),
    Kind("stale", "trouble", "stale", "stale", "stale", "stale", "turned stale"),
    Kind("root_survivors", "trouble", "stale", "root survivor", "root survivors", "root survivors", "turned stale"),
    Kind("resurrected", "trouble", "resurrected", "came back", "came back", "came back after a clear",
         "came back after a clear"),
    Kind("running", "running", None, "running", "running", "running", "is running"),
)
BY_KEY = {k.key: k for k in KINDS}
KEYS: tuple[str, ...] = tuple(k.key for k in KINDS)
NEEDS_YOU: tuple[Kind, ...] = tuple(k for k in KINDS if k.alert is not None)  # what a "needs you" reason names
ALERT_KINDS: tuple[str, ...] = tuple(dict.fromkeys(k.alert for k in NEEDS_YOU if k.alert))
ALERT_NEWS = {k.alert: k.news for k in NEEDS_YOU if k.alert and k.key == k.alert}


def count_words(kind: Kind, n: int) -> str:
    return f"{n} {kind.noun if n == 1 else kind.plural}"
