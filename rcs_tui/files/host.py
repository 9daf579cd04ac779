"""What the host says, read with `os` alone: process liveness, session environment variables, the project root.

Kept free of the readers and of `pathlib` so the cached `hud --once` path can re-check a stored answer
(is that pid still the same process?) and find the project root at the cost of a few syscalls.
"""

from __future__ import annotations

import os

from rcs_tui.core import error_kinds as kinds

# Environment variables naming the current session, in the order they are tried.
ENV_VARS = ("RCS_SESSION_ID", "CODEX_SESSION_ID", "SESSION_ID")


# The largest pid a C int holds: a bigger number names no process (and os.kill would overflow on it).
MAX_PID = 2**31 - 1


def pid_alive(pid: int) -> bool:
    if pid <= 0 or pid > MAX_PID:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def pid_start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (process start time in clock ticks), or None off Linux."""
    if pid <= 0 or pid > MAX_PID:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    try:
        after = raw[raw.rindex(")") + 2:].split()
        return int(after[19])
    except (ValueError, IndexError):
        return None


class RootNotFound(Exception):
    """No project root could be determined. `named`: the user named one (`--root` or `RCS_ROOT`) and it is
    not a project, which no caller may pass over for a root of its own finding."""

    error_kind = kinds.NO_PROJECT

    def __init__(self, message: str, *, named: bool = False) -> None:
        super().__init__(message)
        self.named = named


DISCOVERY = ("a project root is a directory holding .rcs/; without --root or RCS_ROOT, the nearest ancestor of "
             "the current directory holding .rcs/ is used")


def _named_root(path: str, given: str) -> str:
    """A root the user named: it must be a directory holding `.rcs/`, or the answer would be a false all-clear."""
    if not os.path.isdir(path):
        raise RootNotFound(f"{given}: not a directory", named=True)
    if not os.path.isdir(os.path.join(path, ".rcs")):
        raise RootNotFound(f"{given}: no .rcs/ directory there ({DISCOVERY})", named=True)
    return os.path.realpath(path)


def find_root_dir(explicit: str | os.PathLike[str] | None = None, cwd: str | None = None) -> str:
    """`--root`, else `RCS_ROOT`, else the nearest ancestor of `cwd` (the process's own by default) holding `.rcs/`.

    A named root without `.rcs/` is refused, as discovery would refuse it: an empty answer there would read
    as "nothing to worry about". Returns the resolved path; raises `RootNotFound` with the reason.
    """
    if explicit:
        return _named_root(os.path.expanduser(os.fspath(explicit)), f"--root {os.fspath(explicit)}")
    env = os.environ.get("RCS_ROOT")
    if env:
        return _named_root(os.path.expanduser(env), f"RCS_ROOT={env}")
    start = os.path.realpath(cwd or os.getcwd())
    found = nearest_root(start)
    if found is None:
        raise RootNotFound(f"no .rcs/ directory in {start} or any parent; pass --root DIR or set RCS_ROOT")
    return found


def nearest_root(start: str) -> str | None:
    """The nearest directory at or above `start` (made absolute and resolved) holding `.rcs/`, else None."""
    here = os.path.realpath(start)
    while True:
        if os.path.isdir(os.path.join(here, ".rcs")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
