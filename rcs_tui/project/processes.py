"""The processes a live picture of a project took as alive or gone (and the links it followed), and whether
any of them changed since.

A process dies without writing anything (a session's owner killed, a team worker crashed), so no file
event says so: a view that re-reads only what changed would keep showing it alive, under a live marker.
Each part of a picture (a loader's section, the doctor's findings) notes the processes its reads asked
about, with which process each was (`inputs.process_print`: alive or not, and its start time); a live
view asks `moved()` every few seconds and re-reads the parts whose processes started, stopped or were
replaced. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rcs_tui.files.inputs import noting_processes, now_of

INTERVAL_S = 2.0  # how often a live view asks whether a process it shows started or stopped


class Processes:
    """Per part of a picture, the processes its latest read asked about, as they were then."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[int | str, object]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def noting(self, part: str) -> Iterator[None]:
        """Read `part` in the block: the processes it asks about replace those its previous read asked about."""
        with noting_processes() as seen:
            try:
                yield
            finally:
                with self._lock:
                    self._seen[part] = seen

    def moved(self) -> set[str]:
        """The parts one of whose processes is not what it was when they were read."""
        with self._lock:
            seen = list(self._seen.items())
        return {part for part, keys in seen if any(now_of(key) != then for key, then in keys.items())}


async def moved_batches(moved: Callable[[], frozenset[Path]], every: float | None = None,
                        ) -> AsyncIterator[frozenset[Path]]:
    """Every `every` seconds (`INTERVAL_S` when None), what `moved()` (a loader's `processes_moved`) names,
    when it names anything: the one timer of each live view. Asked on the event loop, with no thread hop:
    a signal and a `/proc` read per process shown."""
    while True:
        await asyncio.sleep(INTERVAL_S if every is None else every)
        paths = moved()
        if paths:
            yield paths
