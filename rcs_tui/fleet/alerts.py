"""Alerts: tell the operator when something starts needing them, on the channels they chose, by the rules
they set, without crying wolf.

`AlertTracker.observe(row)` hands a row's attention (each entry with its reason and source) to the rules
(`core/alert_rules.py`), and `tick()` lets entries whose hold time has passed fire later; the fleet calls
both. Each occurrence of an entry is one listed alert; on each channel it is either sent or held back,
and the alert says which and why. The entries of one project sent together on a channel are one message
("… (+2 more)"). A delivery that fails is shown as failed and tried again `retries` times with a
doubling delay; it is never shown as sent. Channels are in `alert_channels.py`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from rcs_tui.core.alert_rules import AlertRules, ChannelRules, Decision, parse_quiet_hours
from rcs_tui.core.attention import ALERT_KINDS, ALERT_NEWS, BY_KEY, NEEDS_YOU
from rcs_tui.fleet import alert_channels
from rcs_tui.fleet.alert_channels import (
    AppriseChannel,
    BellChannel,
    Channel,
    CommandChannel,
    DesktopChannel,
    Message,
    TmuxChannel,
    run_process,
)
from rcs_tui.fleet.rows import Row

MAX_LISTED = 500
NOTIFY_TIMEOUT = alert_channels.NOTIFY_TIMEOUT  # kept here too: tests and callers set it on this module
LISTED = "listed"  # the rules' pseudo-channel that lists an alert (after the hold) whatever the channels do
RULE_KEYS = ("kinds", "hold", "cooldown", "dedupe", "quiet_hours", "min_interval")  # what a channel may override


@dataclass(eq=False)
class Alert:
    """One occurrence of an entry that needs the operator, and what each channel did with it."""

    at: float
    project: str
    host: str
    kind: str
    member: str
    reason: str = ""
    source: str = ""
    root: str = ""  # the project's root on its host (a notify script can act on it)
    url: str = ""  # for a project over ssh: its ssh:// address; empty for a local one
    channels: dict[str, str] = field(default_factory=dict)  # channel label -> "sending", "sent", "held: …", …
    listed_held: str | None = None  # with no channel on: the rule that would have held it back

    @property
    def message(self) -> str:
        return f"{self.project}: {self.member} {ALERT_NEWS.get(self.kind, self.kind)}"

    @property
    def sent(self) -> bool:
        """Chosen to be sent on at least one channel (False: every channel held it back)."""
        return any(not s.startswith("held") for s in self.channels.values())

    @property
    def delivery(self) -> str:
        """How its delivery went, in one phrase: a failure first (with the channel), then sending, then
        sent; held back everywhere reads `quiet (<why>)`."""
        states = self.channels
        for label, s in states.items():
            if s.startswith("failed"):
                return f"failed: {label} {s.removeprefix('failed: ')}"
        if any(s == "sending" for s in states.values()):
            return "sending"
        if any(s == "sent" for s in states.values()):
            return "sent"
        held = [s.removeprefix("held: ") for s in states.values()]
        if held:
            return f"quiet ({held[0]})"
        return f"quiet ({self.listed_held})" if self.listed_held else "listed only (no channel)"

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "project": self.project, "host": self.host, "kind": self.kind, "member": self.member,
                "reason": self.reason, "source": self.source, "sent": self.sent, "delivery": self.delivery,
                "channels": dict(self.channels), "message": self.message}


@dataclass
class AlertSettings:
    """Which channels are on and the rules for all of them; `channel` overrides `RULE_KEYS` per channel
    (`{"apprise": {"kinds": ["waiting"], "quiet_hours": "22:00-07:00"}}`)."""

    command: str | None = None
    bell: bool = True
    tmux: bool = False
    desktop: bool = False
    apprise: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ALERT_KINDS
    min_interval: float = 30.0
    hold: Mapping[str, float] = field(default_factory=dict)
    cooldown: float = 0.0
    dedupe: float = 0.0
    quiet_hours: str | None = None
    grace: float = 0.0
    retries: int = 3
    backoff: float = 2.0  # seconds before the first retry; each next one waits twice as long
    channel: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    tmux_socket: str | None = None  # a tmux server to message other than the one we run in

    def rules_for(self, name: str) -> ChannelRules:
        own = dict(self.channel.get(name) or {})
        hold = {**self.hold, **(own.get("hold") or {})}
        return ChannelRules(kinds=frozenset(own.get("kinds") or self.kinds), hold=hold,
                            cooldown=float(own.get("cooldown", self.cooldown)),
                            dedupe=float(own.get("dedupe", self.dedupe)),
                            quiet_hours=parse_quiet_hours(own.get("quiet_hours", self.quiet_hours)),
                            min_interval=float(own.get("min_interval", self.min_interval)))

    def channels(self, bell: Callable[[], None] | None) -> list[Channel]:
        out: list[Channel] = []
        if self.bell and bell is not None:
            out.append(BellChannel(bell))
        if self.tmux:
            out.append(TmuxChannel(self.tmux_socket))
        if self.command:
            out.append(CommandChannel(self.command))
        if self.desktop:
            out.append(DesktopChannel())
        if self.apprise:
            out.append(AppriseChannel(list(self.apprise)))
        return out


def _first_look_covers(kind: str, item: str, scopes: set[str | None]) -> bool:
    """Would a project's quick first look (root and the current session's members, every team, rp1) show
    this entry? A waiting or failed member of another session, and what the doctor judges, it would not."""
    if kind in ("dead", "silent"):
        return True
    if kind in ("waiting", "failed"):
        head = item.partition("/")[0]
        return head == "rp1" or head in scopes
    return False


class AlertTracker:
    """Turns attention changes into alerts, by the rules, and delivers them."""

    def __init__(self, settings: AlertSettings, *, bell: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time, focused: Callable[[], Collection[str]] = frozenset,
                 channels: list[Channel] | None = None, minute_of: Callable[[float], int] | None = None) -> None:
        self.settings = settings
        self.bell = bell
        self.clock = clock
        self.focused = focused  # project keys a console is showing now: no alert for those
        self.channel_list = settings.channels(bell) if channels is None else channels
        kw: dict[str, Any] = {} if minute_of is None else {"minute_of": minute_of}
        listed = ChannelRules(kinds=frozenset(settings.kinds), hold=dict(settings.hold))  # the Alerts view's own
        self.rules = AlertRules({LISTED: listed, **{c.name: settings.rules_for(c.name) for c in self.channel_list}},
                                grace=settings.grace, clock=clock, **kw)
        self.alerts: deque[Alert] = deque(maxlen=MAX_LISTED)
        self._open: dict[tuple[str, str, str, str], Alert] = {}  # (project, kind, item, state) -> its alert
        self._rows: dict[str, Row] = {}
        # project -> (entries, scopes) of its quick first look, until its first full document
        self._first_looks: dict[str, tuple[dict[tuple[str, str], str], set[str | None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- what projects show ---------------------------------------------------------------------
    def observe(self, row: Row) -> list[Alert]:
        """New alerts for this row's latest document (none for its first one).

        The baseline is what the project showed when the fleet first looked: a quick first look (root, the
        current session, teams and rp1, marked partial) for what it covers, the first full read for the
        rest. So a member that starts waiting between the two (a full read can queue behind a hundred
        others) is announced, and one that was already waiting in another session is not."""
        if row.doc is None:
            return []
        key = row.project.key
        session = row.doc.get("session")
        scopes = {"root", session.get("session_id") if isinstance(session, dict) else None}
        found = [(kind.key, (kind.alert or kind.key, item), row.verdict(kind.key, item).state)
                 for kind in NEEDS_YOU for item in row.attention.get(kind.key, [])]
        entries = {entry: state for _, entry, state in found}
        if row.doc.get("partial"):
            if key not in self.rules.seen:
                self._first_looks[key] = (entries, scopes)
            return []
        self._rows[key] = row
        first_look = self._first_looks.pop(key, None)
        if first_look is not None and key not in self.rules.seen:
            looked, covered = first_look
            # the baseline: the first look where it looked, the full read elsewhere
            self.rules.observe(key, {**{entry: state for kind, entry, state in found
                                        if not _first_look_covers(kind, entry[1], covered)}, **looked})
        self.rules.observe(key, entries)
        return self.tick()

    def tick(self) -> list[Alert]:
        """Decide what is due now (entries past their hold), deliver it, and return the alerts it listed."""
        decisions = self.rules.due(frozenset(self.focused()))
        fresh: list[Alert] = []
        sends: dict[tuple[str, str], list[Alert]] = {}
        for d in decisions:
            alert = self._alert_for(d, fresh)
            if d.channel == LISTED:
                alert.listed_held = d.held
                continue
            label = self._channel(d.channel).label
            if d.held is None:
                alert.channels[label] = "sending"
                sends.setdefault((d.channel, d.project), []).append(alert)
            else:
                alert.channels[label] = f"held: {d.held}"
        for (name, _project), batch in sends.items():
            self._deliver(self._channel(name), batch)
        return fresh

    def acknowledge(self, project: str, kind: str, item: str) -> bool:
        """The operator has seen this entry: no alert about it until its state changes."""
        alert_kind = (BY_KEY[kind].alert if kind in BY_KEY else None) or kind
        return self.rules.acknowledge(project, (alert_kind, item))

    # -- delivery ---------------------------------------------------------------------------------
    def _channel(self, name: str) -> Channel:
        return next(c for c in self.channel_list if c.name == name)

    def _alert_for(self, d: Decision, fresh: list[Alert]) -> Alert:
        k = (d.project, d.kind, d.item, d.state)
        alert = self._open.get(k)
        if alert is None:
            row = self._rows.get(d.project)
            name, host = (row.project.name, row.project.host_label) if row else (d.project, "local")
            verdict = row.verdict(_list_kind(row, d.kind, d.item), d.item) if row else None
            root = row.project.path if row else d.project
            url = row.project.key if row and row.project.remote else ""
            alert = Alert(self.clock(), name, host, d.kind, d.item, verdict.reason if verdict else "",
                          verdict.source if verdict else "", root, url)
            self._open[k] = alert
            if len(self._open) > MAX_LISTED * 4:
                self._open.pop(next(iter(self._open)))
            self.alerts.appendleft(alert)
            fresh.append(alert)
        return alert

    def _deliver(self, channel: Channel, batch: list[Alert]) -> None:
        first = batch[0]
        text = first.message + (f" (+{len(batch) - 1} more)" if len(batch) > 1 else "")
        msg = Message(first.project, first.host, first.kind, first.member, first.reason, first.source, text,
                      len(batch), first.root, first.url)
        retries, backoff = self.settings.retries, self.settings.backoff

        async def attempts() -> None:
            why: str | None = "was stopped as the fleet closed"
            try:
                for n in range(retries + 1):
                    why = await channel.send(msg)
                    if why is None:
                        break
                    if n < retries:
                        delay = backoff * 2 ** n
                        state = f"failed: {why}; retry {n + 1} of {retries} in {delay:g}s"
                        for a in batch:
                            a.channels[channel.label] = state
                        await asyncio.sleep(delay)
                    elif retries:
                        why = f"{why} (after {retries + 1} attempts)"
            finally:
                for a in batch:
                    a.channels[channel.label] = "sent" if why is None else f"failed: {why}"

        self._run(attempts())

    def _run(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run a delivery without waiting for it; outside an event loop, run it to completion."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(coro)
            return
        task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _spawn(self, argv: list[str], env: dict[str, str] | None,
               done: Callable[[str | None], None] = lambda why: None) -> None:
        """Run a notifier process without waiting for it (stopped after `NOTIFY_TIMEOUT`); `done` gets None
        when it exited 0, else why it failed."""
        async def run() -> None:
            why: str | None = "was stopped as the fleet closed"
            try:
                why = await run_process(argv, env, NOTIFY_TIMEOUT)
            finally:
                done(why)

        self._run(run())

    async def drain(self, grace: float = 2.0) -> None:
        """Before the fleet closes: give running deliveries `grace` seconds, then end (and reap) the rest."""
        pending = list(self._tasks)
        if not pending:
            return
        _done, still = await asyncio.wait(pending, timeout=grace)
        for task in still:
            task.cancel()
        await asyncio.gather(*still, return_exceptions=True)


def _list_kind(row: Row, alert_kind: str, item: str) -> str:
    """The attention list an alert kind's entry came from (root survivors alert as `stale`)."""
    for kind in NEEDS_YOU:
        if kind.alert == alert_kind and item in row.attention.get(kind.key, []):
            return kind.key
    return alert_kind
