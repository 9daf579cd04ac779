"""ProjectSource: what the fleet needs from one project, whatever kind it is.

A source streams the project's snapshot documents and runs the project's own `rcs-tui` for an action.
`LocalProject` (fleet/local.py) reads in-process; `SshProject` (fleet/remote.py) runs the host's rcs-tui
over ssh. `open_source` is the one place that picks between them; the hub and the actions only see this
protocol. (`Project` in fleet/projects.py is the configured entry a source is opened for.)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rcs_tui.fleet.projects import Project

if TYPE_CHECKING:
    from rcs_tui.fleet.transport import Ssh

HEARTBEAT = 10.0


class Unreadable(Exception):
    """The project cannot be read now; the message is the row's reason, in a few words."""


class CannotRun(Exception):
    """The project's rcs-tui could not be started at all; the message says why."""


@dataclass(frozen=True)
class Ran:
    """A finished rcs-tui command: its exit status and what it printed."""

    returncode: int | None
    stdout: bytes
    stderr: bytes


def run_command(argv: list[str], timeout: float, what: str) -> Ran:
    """Run `argv` to its end (no stdin), or raise TimeoutError / CannotRun naming `what` ran."""
    import subprocess

    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"{what} ran past {timeout:g}s") from None
    except OSError as exc:
        raise CannotRun(f"cannot run {what}: {exc}") from None
    return Ran(proc.returncode, proc.stdout, proc.stderr)


class ProjectSource(Protocol):
    """One project as the fleet reads and acts on it.

    `documents()` yields snapshot documents (a local first look may be marked `partial`; heartbeats are
    the source's own business and never yielded). When the project cannot be read it raises `Unreadable`
    with the row's reason; the hub then opens it again after a backoff. Closing the iterator early
    (`aclose`, or cancelling the task reading it) ends whatever it started.
    `run(args, timeout)` runs `rcs-tui ARGS` for that project and blocks until it ends: callers on an
    event loop run it in a thread. It raises `TimeoutError` past `timeout` (the command is killed) and
    `CannotRun` when it cannot start.
    `close()` ends anything a cancelled read left behind.
    """

    project: Project

    def documents(self) -> AsyncGenerator[dict[str, Any], None]: ...

    def run(self, args: list[str], timeout: float) -> Ran: ...

    async def close(self) -> None: ...


def open_source(project: Project, *, ssh: Ssh | None = None, heartbeat: float = HEARTBEAT, poll: bool = False,
                first_look: bool = True, gate: AbstractAsyncContextManager[Any] | None = None,
                watcher: Any = None, on_watch: Callable[[str, str | None], None] | None = None,
                record: bool = False) -> ProjectSource:
    """The source for `project`: over ssh when it names a host, else in-process.

    `heartbeat` is what a remote follower is asked for; `poll`, `first_look`, `gate` (bounding how many
    full local reads run at once), `watcher` (the inotify instance local projects share) and `on_watch`
    (told whether the project is watched or polled) and `record` (run its flight recorder too) apply to a
    local one.
    """
    if project.remote:
        from rcs_tui.fleet.remote import SshProject
        from rcs_tui.fleet.transport import Ssh

        return SshProject(project, ssh or Ssh(), heartbeat=heartbeat)
    from rcs_tui.fleet.local import LocalProject

    return LocalProject(project, poll=poll, first_look=first_look, gate=gate, watcher=watcher,
                        on_watch=on_watch, record=record)
