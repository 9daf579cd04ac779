"""Alerts: tell the operator when a project *starts* needing them, once per transition.

`AlertTracker.observe(row)` compares a row's attention digest with the one it saw last: an entry that is
new in `waiting`, `failed`, `dead`, `stale`/`root_survivors` or `resurrected` is one alert. The first
document of a project is the baseline (what already needed you is on screen, not re-announced). Every
alert is listed; the command, bell and tmux message are sent at most once per project every
`min_interval` seconds (the ones held back say so in the list). An alert says how its delivery went: a
notifier that fails names its exit status, one that hangs is stopped after `NOTIFY_TIMEOUT` and says so;
neither is ever shown as sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from rcs_tui.core.attention import ALERT_KINDS, ALERT_NEWS, NEEDS_YOU
from rcs_tui.fleet.rows import Row
from rcs_tui.views.text import strip_controls, tmux_literal

MAX_LISTED = 500
NOTIFY_TIMEOUT = 10.0  # seconds a notifier may run before it is stopped (and its alert marked failed)


@dataclass(eq=False)
class Alert:
    at: float
    project: str
    host: str
    kind: str
    member: str
    sent: bool  # chosen to be sent (False: held back by the rate limit)
    delivery: str = "quiet (rate limit)"  # "sending", "sent", or "failed: <why>" once every channel answered
    pending: int = 0

    @property
    def message(self) -> str:
        return f"{self.project}: {self.member} {ALERT_NEWS.get(self.kind, self.kind)}"

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "project": self.project, "host": self.host, "kind": self.kind, "member": self.member,
                "sent": self.sent, "delivery": self.delivery, "message": self.message}

    def answered_by(self, channel: str, why: str | None) -> None:
        """`channel` finished: `why` it failed, or None when it delivered."""
        self.answered(None if why is None else f"{channel} {why}")

    def answered(self, failure: str | None) -> None:
        """One channel finished: a failure is kept (the first one names the alert's delivery)."""
        self.pending -= 1
        if failure is not None and not self.delivery.startswith("failed"):
            self.delivery = f"failed: {failure}"
        elif self.pending <= 0 and not self.delivery.startswith("failed"):
            self.delivery = "sent"


@dataclass
class AlertSettings:
    command: str | None = None
    bell: bool = True
    tmux: bool = False
    kinds: tuple[str, ...] = ALERT_KINDS
    min_interval: float = 30.0


class AlertTracker:
    """Turns attention changes into alerts and sends them."""

    def __init__(self, settings: AlertSettings, *, bell: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.bell = bell
        self.clock = clock
        self.seen: dict[str, dict[str, set[str]]] = {}
        self.last_sent: dict[str, float] = {}
        self.alerts: deque[Alert] = deque(maxlen=MAX_LISTED)
        self._tasks: set[asyncio.Task[None]] = set()

    def observe(self, row: Row) -> list[Alert]:
        """New alerts for this row's latest document (none for its first one)."""
        if row.doc is None or row.doc.get("partial"):  # the baseline is the first full document
            return []
        key = row.project.key
        now = {k.key: set(row.attention.get(k.key, [])) for k in NEEDS_YOU}
        before = self.seen.get(key)
        self.seen[key] = now
        if before is None:
            return []
        fresh = [(k.alert, m) for k in NEEDS_YOU for m in sorted(now[k.key] - before[k.key])
                 if k.alert in self.settings.kinds]
        if not fresh:
            return []
        at = self.clock()
        send = at - self.last_sent.get(key, float("-inf")) >= self.settings.min_interval
        if send:
            self.last_sent[key] = at
        out = [Alert(at, row.project.name, row.project.host_label, kind, member, send and i == 0)
               for i, (kind, member) in enumerate(fresh)]
        self.alerts.extendleft(out)
        if send:
            self._dispatch(out[0], len(out))
        return out

    def _dispatch(self, alert: Alert, count: int) -> None:
        text = alert.message + (f" (+{count - 1} more)" if count > 1 else "")
        if self.settings.bell and self.bell is not None:
            self.bell()
        runs: list[tuple[str, list[str], dict[str, str] | None]] = []
        if self.settings.tmux and os.environ.get("TMUX") and shutil.which("tmux"):
            runs.append(("tmux message", ["tmux", "display-message", "rcs-tui: " + tmux_literal(text)], None))
        if self.settings.command:
            env = {**os.environ, "RCS_ALERT_PROJECT": alert.project, "RCS_ALERT_HOST": alert.host,
                   "RCS_ALERT_KIND": alert.kind, "RCS_ALERT_MEMBER": alert.member, "RCS_ALERT_MESSAGE": text,
                   "RCS_ALERT_COUNT": str(count)}
            runs.append(("notify command", ["/bin/sh", "-c", self.settings.command],
                         {k: strip_controls(v) for k, v in env.items()}))
        alert.pending, alert.delivery = len(runs), "sending" if runs else "sent"
        for channel, argv, env_ in runs:
            self._spawn(argv, env_, partial(alert.answered_by, channel))

    async def drain(self, grace: float = 2.0) -> None:
        """Before the fleet closes: give running notifiers `grace` seconds, then end (and reap) the rest."""
        pending = list(self._tasks)
        if not pending:
            return
        _done, still = await asyncio.wait(pending, timeout=grace)
        for task in still:
            task.cancel()
        await asyncio.gather(*still, return_exceptions=True)

    def _spawn(self, argv: list[str], env: dict[str, str] | None,
               done: Callable[[str | None], None] = lambda why: None) -> None:
        """Run a notifier without waiting for it (stopped after `NOTIFY_TIMEOUT`); outside an event loop, run it
        to completion. `done` gets None when it exited 0, else why it failed."""
        async def run() -> None:
            try:
                proc = await asyncio.create_subprocess_exec(*argv, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                            stdout=asyncio.subprocess.DEVNULL,
                                                            stderr=asyncio.subprocess.DEVNULL)
            except OSError as exc:
                done(f"could not start ({exc.strerror or exc})")
                return
            why: str | None = "was stopped as the fleet closed"
            try:
                await asyncio.wait_for(proc.wait(), NOTIFY_TIMEOUT)
                why = None if proc.returncode == 0 else f"exit status {proc.returncode}"
            except TimeoutError:
                why = f"gave no answer in {NOTIFY_TIMEOUT:g}s and was stopped"
            finally:  # timed out, or the fleet is closing: never leave a notifier behind
                if proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    await proc.wait()
                done(why)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(run())
            return
        task = loop.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
