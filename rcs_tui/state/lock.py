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

from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.times import iso
from rcs_tui.files.fsafe import Refused, Tree, open_leaf, read_at, write_all

LOCK_REL = ".rcs/logs/rcs-tui.lock"
LOCK_TIMEOUT_S = 10.0
_POLL_S = 0.05
_gave_up: set[str] = set()


class LockBusy(Exception):
    """Another rcs-tui process held the store lock for the whole wait."""

    error_kind = kinds.LOCK_BUSY


def _holder(dfd: int, name: str) -> str:
    try:
        data = json.loads(read_at(dfd, name, LOCK_REL, 4096) or b"{}")
    except (OSError, ValueError, RecursionError):  # whatever is in the file, it only decorates a message
        return ""
    if not isinstance(data, dict):
        return ""
    who, since = data.get("holder"), data.get("since")
    return f" (held by {str(who)[:120]}" + (f" since {str(since)[:40]}" if since else "") + ")" if who else ""


@contextlib.contextmanager
def store_lock(tree: Tree, actor: str, timeout: float | None = None) -> Iterator[None]:
    """Hold the store lock for the duration; LockBusy (naming the holder when known) if it stays taken.

    A lock taken on a file that is no longer the one at the lock's path (removed or replaced by another
    process between our open and our flock) locks nothing anyone else will see: it is dropped and the
    file now at the path is locked instead, so two writers can never both believe they hold the lock.
    """
    key = str(tree.root)
    wait = 0.0 if key in _gave_up else (LOCK_TIMEOUT_S if timeout is None else timeout)
    deadline = time.monotonic() + wait
    with tree.parent(LOCK_REL, create=True) as (dfd, name):
        while True:
            fd = _locked(dfd, name, deadline, wait, key)
            if _still_at_path(dfd, name, fd):
                break
            os.close(fd)
        try:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                write_all(fd, json.dumps({"holder": actor, "pid": os.getpid(),
                                          "since": iso(time.time())}).encode())
            yield
        finally:
            os.close(fd)  # closing releases the flock


def _locked(dfd: int, name: str, deadline: float, wait: float, key: str) -> int:
    """A descriptor of the lock file with the flock held; LockBusy once `deadline` passes.

    The `.rcs/logs` directory itself is locked first (its descriptor stays open with the caller's
    `tree.parent`): a lock file removed or replaced while another writer holds it cannot let a second
    writer in, because the directory is the same one for both.
    """
    _flock(dfd, dfd, name, deadline, wait, key)
    fd = open_leaf(dfd, name, os.O_RDWR | os.O_CREAT, LOCK_REL)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(LOCK_REL, "is not a regular file")
        _flock(fd, dfd, name, deadline, wait, key)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _flock(fd: int, dfd: int, name: str, deadline: float, wait: float, key: str) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                _gave_up.add(key)
                raise LockBusy(f"another rcs-tui process holds {LOCK_REL}{_holder(dfd, name)}; gave up "
                               f"after {wait:.0f} s, nothing was changed; try again when it is done") from None
            time.sleep(_POLL_S)


def _still_at_path(dfd: int, name: str, fd: int) -> bool:
    """Is the locked file still the one the lock path names (not removed or replaced meanwhile)?"""
    try:
        here = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)
