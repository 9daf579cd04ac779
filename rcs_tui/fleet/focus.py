"""Which projects a console is showing right now, so the fleet does not alert about what is in front of you.

A console marks the project it shows with a small file of its own under rcs-tui's state directory
(`$XDG_STATE_HOME/rcs-tui/looking/<pid>.json`, holding the project's root) while it runs and removes it
when it ends; a marker whose process is gone (a killed console) counts for nothing. Markers are read only
when they are ours (`files.cache.read_own`) and bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator

from rcs_tui.files.cache import read_own, state_dir, write_own
from rcs_tui.files.host import pid_alive

MAX_MARKERS = 256




def _dir() -> str:
    return os.path.join(state_dir(), "looking")




@contextlib.contextmanager
def looking_at(root: str) -> Iterator[None]:
    """Mark `root` as shown by this process for as long as the block runs."""
    path = os.path.join(_dir(), f"{os.getpid()}.json")
    write_own(path, json.dumps({"root": os.path.realpath(root), "pid": os.getpid()}).encode())
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def looked_at() -> frozenset[str]:
    """The project roots (real paths) that a running console shows now."""
    try:
        names = sorted(os.listdir(_dir()))[:MAX_MARKERS]
    except OSError:
        return frozenset()
    out = set()
    for name in names:
        pid = name.removesuffix(".json")
        if not pid.isdigit():
            continue
        raw = read_own(os.path.join(_dir(), name), 64 * 1024)
        try:
            data = json.loads(raw or b"")
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("root"), str) and pid_alive(int(pid)):
            out.add(data["root"])
    return frozenset(out)
