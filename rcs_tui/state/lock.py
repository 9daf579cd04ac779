"""The store lock (`.rcs/logs/rcs-tui.lock`): one rcs-tui writer at a time, holder named when busy.

Opened through the confined tree (a symlinked lock file or logs directory is refused, never followed),
held with flock(2), and stamped with the holder's actor and time so a waiting command can say who holds
it. A command waits for it once: after one timeout, later attempts in the same process give up at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator

from rcs_tui.state.fsafe import Refused, Tree, open_leaf, read_at, write_all

LOCK_REL = ".rcs/logs/rcs-tui.lock"
LOCK_TIMEOUT_S = 10.0
_POLL_S = 0.05
_gave_up: set[str] = set()


class LockBusy(Exception):
    """Another rcs-tui process held the store lock for the whole wait."""


def _holder(dfd: int, name: str) -> str:
    try:
        data = json.loads(read_at(dfd, name, LOCK_REL, 4096) or b"{}")
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict):
        return ""
    who, since = data.get("holder"), data.get("since")
    return f" (held by {str(who)[:120]}" + (f" since {str(since)[:40]}" if since else "") + ")" if who else ""


@contextlib.contextmanager
def store_lock(tree: Tree, actor: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the store lock for the duration; LockBusy (naming the holder when known) if it stays taken."""
    key = str(tree.root)
    wait = 0.0 if key in _gave_up else (LOCK_TIMEOUT_S if timeout is None else timeout)
    with tree.parent(LOCK_REL, create=True) as (dfd, name):
        fd = open_leaf(dfd, name, os.O_RDWR | os.O_CREAT, LOCK_REL)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(LOCK_REL, "is not a regular file")
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        _gave_up.add(key)
                        raise LockBusy(f"another rcs-tui process holds {LOCK_REL}{_holder(dfd, name)}; gave up "
                                       f"after {wait:.0f} s, nothing was changed; try again when it is done") from None
                    time.sleep(_POLL_S)
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                write_all(fd, json.dumps({"holder": actor, "pid": os.getpid(),
                                          "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode())
            yield
        finally:
            os.close(fd)  # closing releases the flock
