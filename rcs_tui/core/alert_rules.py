"""When an entry that needs the operator becomes an alert on a channel, and when it is held back: pure, on an
injected clock.

An entry is a project's (kind, item) with a `state` (what it says about itself: its reason and since when);
the same entry with another state is a new occurrence. For every channel, an occurrence is decided once:

- it is never decided while it is younger than the channel's *hold* for its kind (a "waiting" that ends
  within its hold never alerts);
- what a project showed in its first document, or what appeared during the *start-up grace*, is the
  baseline: already on screen, never announced;
- once decided it is either sent or held back, and the first rule that holds it names why, in this
  order: `acknowledged` (the operator acknowledged this very state), `looking at it` (a console shows the
  project), `quiet hours`, `duplicate` (this entry in this state was sent on this channel within
  `dedupe` seconds, even if it left and came back meanwhile), `cooldown` (this member was sent on this
  channel within `cooldown` seconds, whatever its kind), `rate limit` (this project was sent on this
  channel within `min_interval` seconds; the entries decided together are one message).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

Entry = tuple[str, str]  # (kind, item)
CHANNELS = ("command", "bell", "tmux", "desktop", "apprise")  # the channels' names in the configuration

HELD_REASONS = ("acknowledged", "looking at it", "quiet hours", "duplicate", "cooldown", "rate limit")


def parse_quiet_hours(spec: str | None) -> tuple[int, int] | None:
    """"22:00-07:00" as minutes of the day (start, end); an end before the start runs past midnight. None for
    no quiet hours; ValueError for anything else."""
    if spec is None or not spec.strip():
        return None
    try:
        start, end = (p.strip() for p in spec.split("-"))
        out = []
        for part in (start, end):
            hh, mm = part.split(":")
            h, m = int(hh), int(mm)
            if not (0 <= h <= 23 and 0 <= m <= 59 and len(mm) == 2):
                raise ValueError
            out.append(h * 60 + m)
    except ValueError:
        raise ValueError(f"quiet hours {spec!r} are not HH:MM-HH:MM") from None
    return out[0], out[1]


def in_quiet_hours(window: tuple[int, int] | None, minute: int) -> bool:
    """Whether minute-of-day `minute` falls in `window` (start included, end not)."""
    if window is None:
        return False
    start, end = window
    if start == end:
        return False
    return start <= minute < end if start < end else minute >= start or minute < end


def local_minute(ts: float) -> int:
    """The minute of the local day at `ts`."""
    t = time.localtime(ts)
    return t.tm_hour * 60 + t.tm_min


@dataclass(frozen=True)
class ChannelRules:
    """One channel's rules: which kinds it carries, how long each must last first, and what holds it back."""

    kinds: frozenset[str]
    hold: Mapping[str, float] = field(default_factory=dict)  # kind -> seconds it must last before alerting
    cooldown: float = 0.0  # seconds between two alerts about one member
    dedupe: float = 0.0  # seconds during which the same entry in the same state is not sent again
    quiet_hours: tuple[int, int] | None = None
    min_interval: float = 0.0  # seconds between two messages about one project


@dataclass(frozen=True)
class Decision:
    """An occurrence decided on a channel: sent (`held` None) or held back, and why."""

    channel: str
    project: str
    kind: str
    item: str
    state: str
    held: str | None


@dataclass
class _Seen:
    since: float
    state: str
    baseline: bool


class AlertRules:
    """Tracks what every project shows and decides, channel by channel, what to send."""

    def __init__(self, channels: Mapping[str, ChannelRules], *, grace: float = 0.0,
                 clock: Callable[[], float] = time.time, minute_of: Callable[[float], int] = local_minute) -> None:
        self.channels = dict(channels)
        self.grace = grace
        self.clock = clock
        self.minute_of = minute_of
        self.started = clock()
        self.seen: dict[str, dict[Entry, _Seen]] = {}
        self.acked: dict[tuple[str, Entry], str] = {}
        self._decided: set[tuple[str, str, Entry, float, str]] = set()
        self._sent_entry: dict[tuple[str, str, Entry, str], float] = {}
        self._sent_member: dict[tuple[str, str, str], float] = {}
        self._sent_project: dict[tuple[str, str], float] = {}

    def observe(self, project: str, entries: Mapping[Entry, str]) -> None:
        """What `project` shows now: each entry with its state. A project's first look, and anything seen
        during the start-up grace, is the baseline."""
        now = self.clock()
        first = project not in self.seen
        grace = now - self.started < self.grace
        before = self.seen.get(project, {})
        after: dict[Entry, _Seen] = {}
        for entry, state in entries.items():
            old = before.get(entry)
            after[entry] = old if old is not None and old.state == state else _Seen(now, state, first or grace)
        self.seen[project] = after
        for key in [k for k in self.acked if k[0] == project and (k[1] not in after
                                                                   or after[k[1]].state != self.acked[k])]:
            del self.acked[key]  # acknowledged until its state changes: a new state alerts again
        gone = {m for m in self._decided if m[1] == project and (
            m[2] not in after or (after[m[2]].since, after[m[2]].state) != m[3:])}
        self._decided -= gone

    def acknowledge(self, project: str, entry: Entry) -> bool:
        """The operator has seen `entry` in its present state: nothing alerts about it until that changes."""
        seen = self.seen.get(project, {}).get(entry)
        if seen is None:
            return False
        self.acked[(project, entry)] = seen.state
        return True

    def due(self, focused: Collection[str] = ()) -> list[Decision]:
        """Every occurrence that is now past its hold on some channel and not decided there yet, decided."""
        now = self.clock()
        minute = self.minute_of(now)
        out: list[Decision] = []
        for project, entries in self.seen.items():
            for channel, rules in self.channels.items():
                batch_sent = False
                for entry, seen in sorted(entries.items(), key=lambda kv: (kv[1].since, kv[0])):
                    kind, item = entry
                    mark = (channel, project, entry, seen.since, seen.state)
                    if (seen.baseline or kind not in rules.kinds or mark in self._decided
                            or now - seen.since < rules.hold.get(kind, 0.0)):
                        continue
                    self._decided.add(mark)
                    held = self._held(channel, rules, project, entry, seen.state, now, minute, focused, batch_sent)
                    if held is None:
                        batch_sent = True
                        self._sent_entry[(channel, project, entry, seen.state)] = now
                        self._sent_member[(channel, project, item)] = now
                        self._sent_project[(channel, project)] = now
                    out.append(Decision(channel, project, kind, item, seen.state, held))
        return out

    def _held(self, channel: str, rules: ChannelRules, project: str, entry: Entry, state: str, now: float,
              minute: int, focused: Collection[str], batch_sent: bool) -> str | None:
        if self.acked.get((project, entry)) == state:
            return "acknowledged"
        if project in focused:
            return "looking at it"
        if in_quiet_hours(rules.quiet_hours, minute):
            return "quiet hours"
        if now - self._sent_entry.get((channel, project, entry, state), float("-inf")) < rules.dedupe:
            return "duplicate"
        if now - self._sent_member.get((channel, project, entry[1]), float("-inf")) < rules.cooldown:
            return "cooldown"
        if not batch_sent and now - self._sent_project.get((channel, project), float("-inf")) < rules.min_interval:
            return "rate limit"
        return None

    def forget(self, projects: Iterable[str]) -> None:
        """Projects no longer shown: their next look is a baseline again."""
        for p in projects:
            self.seen.pop(p, None)
