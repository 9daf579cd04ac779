"""How rcs-tui runs Python's cyclic garbage collector while it builds large pictures of the tree.

A full read builds hundreds of thousands of acyclic objects (parsed documents, paths, records, rows).
With the default thresholds each batch of them sets off another full collection, which walks every
object alive, so a read of 10 000 sessions spent a third of its time collecting and found nothing.
Two policies, one place:

- `paused()`: around one bulk build (a full read, a first rp1 read, the rows of a long table). The
  collector is off until the outermost pause in any thread ends; objects are still freed the moment they
  are dropped, and cycles made meanwhile are collected after it.
- `one_shot()`: for a command that reads once, answers and exits (`snapshot --json`, `doctor`,
  `fleet --once`): what is loaded before it starts is moved out of the collector's reach and collections
  are spaced wider for the rest of the process.
"""

from __future__ import annotations

import gc
from _thread import allocate_lock

ONE_SHOT_THRESHOLDS = (50_000, 20, 20)


class _Paused:
    """The collector off while any pause is open, in any thread; the last to end restores what was there
    before the first. Plain `_thread` and no `contextlib`: the status line's quick path imports this."""

    def __init__(self) -> None:
        self._lock = allocate_lock()
        self._depth = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._was_enabled:
                gc.enable()


_PAUSE = _Paused()


def paused() -> _Paused:
    """`with paused():` runs a bulk build with the collector off (see the module's note)."""
    return _PAUSE


def one_shot() -> None:
    """Collections for a process that reads the tree once and exits (see the module's note)."""
    gc.freeze()
    gc.set_threshold(*ONE_SHOT_THRESHOLDS)
