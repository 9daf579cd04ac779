"""Where an alert goes: a shell command, the terminal bell, a tmux message, a desktop notification, and
push or webhook services through apprise.

Every channel's `send(message)` answers None when it delivered and, when it did not, why in words; none
raises and none is ever reported as delivered when it was not. A process-based channel is stopped after
`NOTIFY_TIMEOUT` seconds. Untrusted text reaches a shell command only through its environment (controls
stripped), tmux only format-escaped (`tmux_literal`), other programs only as one argument.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from rcs_tui.views.text import strip_controls, tmux_argument

NOTIFY_TIMEOUT = 10.0  # seconds a notifier may run before it is stopped (and its delivery marked failed)


@dataclass(frozen=True)
class Message:
    """One alert message: the first alert's fields and how many others it stands for."""

    project: str
    host: str
    kind: str
    member: str
    reason: str
    source: str
    text: str  # "<project>: <member> <news> (+N more)"
    count: int
    root: str = ""  # the project's root path on its host
    url: str = ""  # its ssh:// address when it is read over ssh

    @property
    def body(self) -> str:
        """The text with why and how sure, for channels that show more than a line."""
        return f"{self.text}\n{self.reason} [{self.source}]" if self.reason else self.text

    def environ(self) -> dict[str, str]:
        return {"RCS_ALERT_PROJECT": self.project, "RCS_ALERT_HOST": self.host, "RCS_ALERT_KIND": self.kind,
                "RCS_ALERT_MEMBER": self.member, "RCS_ALERT_MESSAGE": self.text, "RCS_ALERT_COUNT": str(self.count),
                "RCS_ALERT_REASON": self.reason, "RCS_ALERT_SOURCE": self.source, "RCS_ALERT_ROOT": self.root,
                "RCS_ALERT_URL": self.url}


class Channel(Protocol):
    name: str  # configuration name
    label: str  # how a delivery names it: "notify command"

    async def send(self, message: Message) -> str | None: ...


async def run_process(argv: list[str], env: dict[str, str] | None, timeout: float | None = None) -> str | None:
    """Run `argv` to its end (stopped after `timeout`, default `NOTIFY_TIMEOUT`); None when it exited 0, else
    why not. A cancelled run (the fleet closing) kills and reaps the process before it ends."""
    try:
        proc = await asyncio.create_subprocess_exec(*argv, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
    except OSError as exc:
        return f"could not start ({exc.strerror or exc})"
    limit = NOTIFY_TIMEOUT if timeout is None else timeout
    try:
        await asyncio.wait_for(proc.wait(), limit)
        return None if proc.returncode == 0 else f"exit status {proc.returncode}"
    except TimeoutError:
        return f"gave no answer in {limit:g}s and was stopped"
    finally:  # timed out, or cancelled as the fleet closes: never leave a notifier behind
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


class CommandChannel:
    """`--notify CMD` / `alerts.command`: a shell command with the alert in `RCS_ALERT_*` variables."""

    name, label = "command", "notify command"

    def __init__(self, command: str) -> None:
        self.command = command

    async def send(self, message: Message) -> str | None:
        env = {**os.environ, **{k: strip_controls(v) for k, v in message.environ().items()}}
        return await run_process(["/bin/sh", "-c", self.command], env)


class BellChannel:
    """The terminal bell of the fleet's own terminal (inside tmux, tmux's bell: its `monitor-bell` and
    `bell-action` apply)."""

    name, label = "bell", "bell"

    def __init__(self, ring: Callable[[], None]) -> None:
        self.ring = ring

    async def send(self, message: Message) -> str | None:
        try:
            self.ring()
        except Exception as exc:  # noqa: BLE001 - a closed terminal: say so, never raise into the router
            return f"could not ring ({exc})"
        return None


class TmuxChannel:
    """`tmux display-message` on the current client (inside tmux) or, with `socket`, the server there; the
    text is format-escaped so nothing in it is run or expanded."""

    name, label = "tmux", "tmux message"

    def __init__(self, socket: str | None = None, tmux: str = "tmux") -> None:
        self.socket = socket
        self.tmux = tmux

    def argv(self, message: Message) -> list[str] | None:
        if self.socket is None and not os.environ.get("TMUX"):
            return None
        exe = shutil.which(self.tmux)
        if exe is None:
            return None
        where = ["-S", self.socket] if self.socket else []
        return [exe, *where, "display-message", tmux_argument("rcs-tui: " + message.text)]

    async def send(self, message: Message) -> str | None:
        argv = self.argv(message)
        if argv is None:
            return "not inside tmux" if shutil.which(self.tmux) else "tmux is not installed"
        return await run_process(argv, None)


class DesktopChannel:
    """A desktop notification: `notify-send` (freedesktop) or, on macOS, `osascript`."""

    name, label = "desktop", "desktop notification"

    def __init__(self, program: str | None = None) -> None:
        self.program = program

    async def send(self, message: Message) -> str | None:
        title, body = "rcs-tui: " + strip_controls(message.project), strip_controls(message.body, keep_newlines=True)
        if sys.platform == "darwin" and self.program is None:
            script = f"display notification {_applescript(body)} with title {_applescript(title)}"
            return await run_process(["osascript", "-e", script], None)
        exe = shutil.which(self.program or "notify-send")
        if exe is None:
            return f"{self.program or 'notify-send'} is not installed"
        return await run_process([exe, "--app-name=rcs-tui", "--", title, body], None)


def _applescript(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def url_label(url: str) -> str:
    """A service URL without what may be secret in it (tokens, passwords, paths): scheme and host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "an unreadable URL"
    return f"{parts.scheme}://{parts.hostname or ''}"


class AppriseChannel:
    """Push and webhook services (ntfy, Slack, e-mail, plain JSON webhooks, …) through apprise, one service
    per URL, so a failure names the service (scheme and host only) that did not take it."""

    name, label = "apprise", "apprise"

    def __init__(self, urls: list[str]) -> None:
        self.urls = list(urls)
        self._services: list[tuple[str, Any]] | None = None

    def services(self) -> list[tuple[str, Any]]:
        """One apprise object per URL (apprise is imported only when this channel is used)."""
        if self._services is None:
            import apprise

            out = []
            for url in self.urls:
                service = apprise.Apprise()
                out.append((url_label(url), service if service.add(url) else None))
            self._services = out
        return self._services

    def _notify(self, title: str, body: str) -> str | None:
        failed = []
        for label, service in self.services():
            if service is None:
                failed.append(f"{label} (not a URL apprise knows)")
            elif not service.notify(body=body, title=title):
                failed.append(label)
        return None if not failed else "could not deliver to " + ", ".join(failed)

    async def send(self, message: Message) -> str | None:
        title = "rcs-tui: " + strip_controls(message.project)
        body = strip_controls(message.body, keep_newlines=True)
        try:
            return await asyncio.wait_for(asyncio.to_thread(self._notify, title, body), NOTIFY_TIMEOUT * 3)
        except TimeoutError:
            return f"gave no answer in {NOTIFY_TIMEOUT * 3:g}s"
        except Exception as exc:  # noqa: BLE001 - a library error is a failed delivery, never a crash
            return f"failed ({type(exc).__name__}: {exc})"
