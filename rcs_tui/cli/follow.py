"""`rcs-tui snapshot --json --follow`: newline-delimited snapshot documents as the project changes.

The first line is the full document; after that one line per batch of changes the watcher sees (batches
close a few milliseconds after their first event, so a burst of writes is one document). With
`--heartbeat S`, a small `{"kind": "heartbeat"}` line goes out after S quiet seconds so a reader can tell a
silent project from a stalled stream. Ends when stdin reaches end-of-file (the reader went away), when stdout
is closed, or on ctrl+c (quietly, exit status 130). Started with stdin already at end-of-file or not a
terminal or pipe (cron, `nohup`, a service: `</dev/null`), stdin says nothing about a reader, so it follows
until stdout closes or it is stopped. Nothing here writes to the project.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import stat
import sys
from typing import Any

from rcs_tui.cli.common import dumps
from rcs_tui.project.feed import SnapshotFeed, follow_documents
from rcs_tui.views.snapshot_doc import CONTRACT_VERSION


class _CtrlC:
    """ctrl+c ends a follow at once with the shell's 130, between two lines, never in the middle of one.

    Left to `asyncio.run`, an interrupt first waits for every read still running in a thread (a full
    build, placing the watches), which on a busy machine took longer than a person waits. Nothing here
    writes to the project, so nothing needs finishing: the line being written is completed, flushed, and
    the process ends."""

    writing = False
    interrupted = False

    @classmethod
    def handler(cls, _signum: int, _frame: object) -> None:
        if cls.writing:
            cls.interrupted = True  # `_write` ends the process once its line is out
        else:
            cls.leave()

    @staticmethod
    def leave() -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(130)


def _write(doc: dict[str, Any]) -> None:
    _CtrlC.writing = True
    try:
        sys.stdout.write(dumps(doc, indent=None) + "\n")
        sys.stdout.flush()
    finally:
        _CtrlC.writing = False
    if _CtrlC.interrupted:
        _CtrlC.leave()


def _stdin_tells_a_reader() -> bool:
    """Whether stdin can say the reader went away: a terminal or a pipe not already at end-of-file.
    A regular file, /dev/null or a pipe closed before we started cannot: ending at once would print
    nothing at all."""
    try:
        fd = sys.stdin.fileno()
        st = os.fstat(fd)
    except (AttributeError, OSError, ValueError):
        return False
    if os.isatty(fd):
        return True
    if not stat.S_ISFIFO(st.st_mode) and not stat.S_ISSOCK(st.st_mode):
        return False
    ready, _, _ = select.select([fd], [], [], 0)
    if not ready:
        return True
    try:
        return os.read(fd, 4096) != b""  # data we never use; b"": its writer already closed it
    except OSError:
        return False


async def _stdin_closed() -> None:
    """Return once stdin is at end-of-file (a terminal never is, until ctrl+d); never when it cannot tell."""
    loop = asyncio.get_running_loop()
    if not _stdin_tells_a_reader():
        await loop.create_future()  # stopped by stdout closing or a signal instead
    fd = sys.stdin.fileno()
    done = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data and not done.done():
            done.set_result(None)

    try:
        loop.add_reader(fd, readable)
    except (PermissionError, ValueError, NotImplementedError):  # a regular file: read it to its end
        await asyncio.to_thread(sys.stdin.buffer.read)
        return
    try:
        await done
    finally:
        loop.remove_reader(fd)


async def _changes(feed: SnapshotFeed, heartbeat: float, poll: bool) -> None:
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def produce() -> None:
        async for doc in follow_documents(feed, poll=poll):
            queue.put_nowait(doc)

    producer = asyncio.ensure_future(produce())
    first = asyncio.ensure_future(queue.get())  # no heartbeat before the first document
    await asyncio.wait({first, producer}, return_when=asyncio.FIRST_COMPLETED)
    if not first.done():
        first.cancel()
        producer.result()
        return
    _write(first.result())
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, producer}, timeout=heartbeat or None,
                                         return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                _write(getter.result())
                continue
            getter.cancel()
            if producer in done:
                producer.result()
                return
            _write({"version": CONTRACT_VERSION, "kind": "heartbeat", "seq": feed.seq})
    finally:
        producer.cancel()


async def _follow(feed: SnapshotFeed, heartbeat: float, poll: bool) -> None:
    closed = asyncio.ensure_future(_stdin_closed())
    stream = asyncio.ensure_future(_changes(feed, heartbeat, poll))
    done, pending = await asyncio.wait({closed, stream}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    for task in done:
        if task is stream:
            task.result()


def follow(feed: SnapshotFeed, *, heartbeat: float = 0.0, poll: bool = False) -> None:
    """Stream documents until stdin closes; a closed stdout ends quietly."""
    import signal

    with contextlib.suppress(ValueError):  # only the main thread may set it (a test may call this from another)
        signal.signal(signal.SIGINT, _CtrlC.handler)
    try:
        asyncio.run(_follow(feed, heartbeat, poll))
    except KeyboardInterrupt:  # ctrl+c is how a person ends a follow: no error, the shell's 130
        raise SystemExit(130) from None
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's final flush
