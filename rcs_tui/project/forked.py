"""Part of a command's work done by a forked copy of the process, its answer read back over a pipe.

A command that reads and judges thousands of independent session directories can hand some of them to
a second core: the copy starts with everything this process has imported and read, does its part, and
sends back its answer, pickled. Whatever goes wrong on the way (no fork here, threads already running,
the copy failing, too slow or answering too much) gives None, and the caller does that part itself:
splitting the work changes how soon the answer comes, never what it says.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

MAX_ANSWER = 512 * 1024 * 1024  # bytes read back at most; a larger answer is dropped and the part redone here
READ_SIZE = 1 << 20


def cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def other_threads() -> bool:
    """Does another thread run in this process? A fork copies only the calling thread: a lock another thread
    holds would stay held forever in the copy, so no copy is made then (the commands that split their work
    run one thread)."""
    return threading.active_count() > 1


class Forked:
    """`work()` run in a forked copy of this process, started at once. `answer()` waits for its result;
    leaving the `with` block ends a copy still running (an interrupted command leaves nothing behind)."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.pid: int | None = None
        self.fd: int | None = None
        if not hasattr(os, "fork") or other_threads():
            return
        read_end, write_end = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:  # the copy: never returns, never flushes the parent's buffered output
            code = 1
            try:
                os.close(read_end)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                data = memoryview(pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL))
                while data:
                    data = data[os.write(write_end, data):]
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self.pid, self.fd = pid, read_end

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        self._end()

    def answer(self, timeout: float) -> Any | None:
        """The copy's result, or None when there is none to trust (see the module's docstring)."""
        if self.pid is None or self.fd is None:
            return None
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    return None
                chunk = os.read(self.fd, READ_SIZE)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_ANSWER:
                    return None
                chunks.append(chunk)
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                return None
            try:
                return pickle.loads(b"".join(chunks))
            except Exception:  # noqa: BLE001 - a broken answer is no answer: the caller redoes the part
                return None
        finally:
            self._end()

    def _end(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.pid = None
