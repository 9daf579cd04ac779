"""One browser tab's app process, and the bound on how many run at once.

textual-serve's `AppService` runs the app with the web driver and relays its output; here it starts the
app from an argument list (no shell between us and the app, so a path with spaces or `$` stays a path)
and makes sure the process ends when its tab's socket closes: asked to quit first, then SIGTERM, then
SIGKILL, each after a grace period, and always waited for (no zombie). On Linux the app is also sent
SIGTERM by the kernel if the server dies without stopping it (killed with SIGKILL, say): an app of the web
driver does not notice that its pipes closed, and would otherwise run on with no one to see it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from asyncio.subprocess import Process

from textual_serve.app_service import AppService

QUIT_GRACE_S = 3.0  # how long an app may take to quit after it is asked to, before SIGTERM
TERM_GRACE_S = 2.0  # and after SIGTERM, before SIGKILL
PR_SET_PDEATHSIG = 1


def _end_with_parent() -> None:
    """In the forked child, before the app starts: SIGTERM when the server's thread that started it ends."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class AppSession(AppService):
    """The app process behind one WebSocket, started from `argv`."""

    def __init__(self, argv: list[str], **kwargs) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self._stopping = False
        self._spawn: asyncio.Future[Process] | None = None
        self._stop_task: asyncio.Task[None] | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        if self._stopping:
            raise ConnectionError("the server is stopping")
        environment = self._build_environment(width=width, height=height)
        # The spawn runs on even if this handler is cancelled, so that `stop` can always find the process
        # it started and end it: a process forked while the server stops must not outlive it.
        self._spawn = spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment,
            preexec_fn=_end_with_parent if sys.platform == "linux" else None))
        self._process = process = await asyncio.shield(spawn)
        assert process.stdin is not None
        self._stdin = process.stdin
        if self._stopping:  # stopped while it started: `stop` ends it
            raise ConnectionError("the server is stopping")
        return process

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def ended(self) -> bool:
        """Its app process has ended (and been waited for): its place is free, though its socket may still be
        closing."""
        return self._process is not None and self._process.returncode is not None

    async def stop(self) -> None:
        """Ask the app to quit, then make sure its process is gone; safe to call more than once and from
        several tasks at once (they share one stop, which a cancelled caller does not cut short)."""
        self._stopping = True
        if self._stop_task is None:
            self._stop_task = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stop_task)

    async def _stop(self) -> None:
        if self._process is None and self._spawn is not None:
            with contextlib.suppress(Exception):
                self._process = await self._spawn
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(Exception):
                await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
            with contextlib.suppress(Exception):
                await self.send_meta({"type": "quit"})
        await self._end_process()
        if task is not None:
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _end_process(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        for grace, sig in ((QUIT_GRACE_S, signal.SIGTERM), (TERM_GRACE_S, signal.SIGKILL)):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), grace)
                return
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, sig)
        await process.wait()


class Sessions:
    """The sessions running now, at most `limit` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running: set[AppSession] = set()
        self.closing = False

    @property
    def full(self) -> bool:
        """As many app processes run (or start) as allowed; a tab closed a moment ago counts no more once its
        process has ended, so a new tab is not refused while the old one's socket finishes closing."""
        return sum(1 for s in self.running if not s.ended) >= self.limit

    async def stop_all(self) -> None:
        """End every session's process; no session starts once this has begun."""
        self.closing = True
        await asyncio.gather(*(s.stop() for s in list(self.running)), return_exceptions=True)
        self.running.clear()
