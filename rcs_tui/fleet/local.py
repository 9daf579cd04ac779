"""LocalProject: a project on this machine, read in-process the way `rcs-tui snapshot --json --follow` reads
it (a `SnapshotFeed` rebuilt section by section on the watcher's batches); its actions run this
interpreter's rcs-tui."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from rcs_tui.fleet.projects import Project
from rcs_tui.fleet.source import Ran, Unreadable, run_command


def local_problem(root: Path) -> str | None:
    """Why a local project cannot be read (None when it can)."""
    try:
        if not root.is_dir():
            return f"no such directory: {root}"
        if not (root / ".rcs").is_dir():
            return f"no .rcs/ in {root}"
        os.listdir(root / ".rcs")
    except PermissionError:
        return f"permission denied: {root}"
    except OSError as exc:
        return f"cannot read {root}: {exc.strerror or exc}"
    return None


def _record(tap: Any, feed: Any, doc: dict[str, Any]) -> None:
    """Record a document's changes; a recorder that fails costs the history an entry, never the row."""
    try:
        tap.observe(feed, doc)
    except Exception:  # noqa: BLE001 - the history is a by-product of showing the row
        tap.close()


# How often a row asks whether a process it shows (a session's owner, a worker) started or stopped without
# writing anything: less often than a single view does, for two hundred projects on one event loop.
PROCESS_CHECK_S = 10.0

class LocalProject:
    """A local root: documents from an in-process feed, actions through `python -m rcs_tui`.

    With `first_look`, a quick partial document comes first; full reads wait at `gate` (when given), so
    many local projects do not all build at once. `watcher` (a `SharedWatcher`) watches the project on the
    fleet's one inotify instance; `on_watch(how, reason)` hears whether it is watched or polled, and why.
    """

    def __init__(self, project: Project, *, poll: bool = False, first_look: bool = True,
                 gate: AbstractAsyncContextManager[Any] | None = None, watcher: Any = None,
                 on_watch: Callable[[str, str | None], None] | None = None, record: bool = False) -> None:
        self.project = project
        self.record = record  # also run the project's flight recorder on these documents (when none runs)
        self.root = Path(project.path)
        self.poll = poll
        self.first_look = first_look
        self.gate = gate
        self.watcher = watcher
        self.on_watch = on_watch

    async def documents(self) -> AsyncGenerator[dict[str, Any], None]:
        from rcs_tui.project.feed import SnapshotFeed, follow_documents

        problem = await asyncio.to_thread(local_problem, self.root)
        if problem:
            raise Unreadable(problem)
        tap = None
        if self.record:
            from rcs_tui.project.recorder import RecorderTap

            tap = RecorderTap(self.root, actor=f"fleet, pid {os.getpid()}")
        try:
            feed = SnapshotFeed(self.root, summary=True)
            async for doc in follow_documents(feed, poll=self.poll, gate=self.gate, first_look=self.first_look,
                                              watcher=self.watcher, on_watch=self.on_watch,
                                              process_check_s=PROCESS_CHECK_S):
                if tap is not None:
                    await asyncio.to_thread(_record, tap, feed, doc)
                yield doc
        except Exception as exc:  # noqa: BLE001 - one project's failure stays in its row
            raise Unreadable(f"read error: {type(exc).__name__}: {exc}") from exc
        finally:
            if tap is not None:
                tap.close()

    def argv(self, args: list[str]) -> list[str]:
        return [sys.executable, "-m", "rcs_tui", *args]

    def run(self, args: list[str], timeout: float) -> Ran:
        return run_command(self.argv(args), timeout, "rcs-tui")

    async def close(self) -> None:
        """Nothing outlives a local read: its watcher ends with the iterator."""
