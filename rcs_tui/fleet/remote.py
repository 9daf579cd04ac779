"""SshProject: a project on a host, read by running the host's `rcs-tui snapshot --json --follow` over ssh
and reading its lines; its actions run the host's rcs-tui the same way.

Whatever goes wrong (host unreachable, rcs-tui missing or too old there, garbage, an over-long line or
silence on the stream) ends the stream with `Unreadable` and one short reason. Every session runs in a
process group of its own and is ended with that whole group, however the read stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncGenerator
from typing import Any

from rcs_tui.files.io import loads_strict
from rcs_tui.fleet.projects import Project, ProjectSpecError
from rcs_tui.fleet.source import HEARTBEAT, CannotRun, Ran, Unreadable, run_command
from rcs_tui.fleet.transport import Ssh, failure_reason

MAX_LINE = 64 * 1024 * 1024
# What one host's document may cost to read: a line of `[],[],…` is short for the memory and time its values
# take once parsed, so the values are counted (one pass over the bytes) before anything is parsed.
MAX_VALUES = 1_000_000


def too_many_values(line: bytes) -> bool:
    """Whether a document line holds more JSON values than a snapshot of any real project does."""
    return line.count(b",") + line.count(b"[") + line.count(b"{") > MAX_VALUES


async def end_session(proc: asyncio.subprocess.Process) -> None:
    """End an ssh session: close its stdin (the remote follower exits on that), then, if it lingers, kill
    its whole process group (it was started in a session of its own), and reap it.

    The group, not only ssh: a child it started (a ProxyCommand, a wrapper's command) keeps the pipes
    open, so they never reach end-of-file and the session's file descriptors outlive it.
    Being cancelled in the grace time (the fleet quitting just then) ends the wait, not the ending: the
    group is killed and reaped all the same, else ssh would run on after the fleet, holding its pipes.
    """
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    try:
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(proc.wait()), 0.5)
    finally:
        if proc.returncode is None:  # still running: its group id is its pid, and still ours
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 5)


class SshProject:
    """A project on `project.host`, reached with the system ssh client as `ssh` describes.

    The follower is asked for a heartbeat every `heartbeat` seconds; once a document has arrived, three
    heartbeats' time without a line means the stream stalled.
    """

    def __init__(self, project: Project, ssh: Ssh, *, heartbeat: float = HEARTBEAT) -> None:
        self.project = project
        self.ssh = ssh
        self.heartbeat = heartbeat
        self.procs: set[asyncio.subprocess.Process] = set()  # sessions not yet ended

    def follow_argv(self) -> list[str]:
        args = ["snapshot", "--json", "--follow", "--heartbeat", f"{self.heartbeat:g}", "--root", self.project.path]
        return self.ssh.argv(self.project, args)

    async def documents(self) -> AsyncGenerator[dict[str, Any], None]:
        """One ssh session's documents; it always ends with `Unreadable` saying why the session ended."""
        try:
            argv = self.follow_argv()
        except ProjectSpecError as exc:
            raise Unreadable(str(exc)) from None
        spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, limit=MAX_LINE, start_new_session=True))
        try:
            proc = await asyncio.shield(spawning)
        except OSError as exc:
            raise Unreadable(f"cannot run ssh: {exc.strerror or exc}") from None
        except asyncio.CancelledError:  # stopped while ssh was starting: end it too, never leave it behind
            with contextlib.suppress(Exception):
                await end_session(await spawning)
            raise
        assert proc.stdout is not None and proc.stderr is not None
        self.procs.add(proc)
        stderr_task = asyncio.ensure_future(proc.stderr.read(65536))
        got = False
        reason: str | None = None
        try:
            while True:
                try:  # `asyncio.timeout`, not `wait_for`, which can drop a cancellation (see `FleetHub.stop`)
                    async with asyncio.timeout(self.heartbeat * 3 if got else None):
                        line = await proc.stdout.readline()
                except TimeoutError:
                    reason = f"stalled: no data from {self.project.host} for {self.heartbeat * 3:g}s"
                    break
                except (ValueError, asyncio.LimitOverrunError):
                    reason = "sent a line too long to be a snapshot"
                    break
                if not line:
                    break
                if too_many_values(line):
                    reason = f"sent a document of more than {MAX_VALUES:,} values; not read"
                    break
                try:
                    doc = loads_strict(line)  # bounded nesting: a hostile host costs its row only
                except (ValueError, UnicodeDecodeError):
                    reason = f"sent data that is not a snapshot ({line[:40]!r}…)"
                    break
                if not isinstance(doc, dict):
                    reason = "sent data that is not a snapshot (not a JSON object)"
                    break
                if doc.get("kind") == "heartbeat":
                    continue
                got = True
                yield doc
        finally:
            await end_session(proc)
            self.procs.discard(proc)  # only once ended: a session cut short here is ended by `close()`
            try:
                err = (await asyncio.wait_for(stderr_task, 1)).decode("utf-8", "replace")
            except Exception:  # noqa: BLE001 - no stderr to explain it: the exit status will do
                stderr_task.cancel()
                err = ""
        raise Unreadable(reason or failure_reason(proc.returncode, err, self.project))

    def run(self, args: list[str], timeout: float) -> Ran:
        try:
            argv = self.ssh.argv(self.project, args)
        except ProjectSpecError as exc:
            raise CannotRun(str(exc)) from None
        return run_command(argv, timeout, "ssh")

    async def close(self) -> None:
        """End the sessions whose own ending was cut short (the task reading them was cancelled then)."""
        for proc in list(self.procs):
            await end_session(proc)
            self.procs.discard(proc)
