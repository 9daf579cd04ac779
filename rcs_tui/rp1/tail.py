"""Live tail of rp1 events by the monotonic `events.id` cursor.

Commits are detected by `stat` of the database and its `-wal` file (a commit always grows or
rewrites the WAL); only then is `id > cursor` queried. A slow safety poll catches changes that
land within one mtime tick. Subscribers get each batch of new events in id order.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from rcs_tui.rp1.db import DbState, Rp1Db
from rcs_tui.rp1.projection import Event

Subscriber = Callable[[list[Event]], None]


class Tail:
    """Poll for new events; `start()` runs it on a daemon thread, `poll()` does one step inline."""

    def __init__(self, db_path: str | os.PathLike[str] | None = None, *, cursor: int | None = None,
                 interval: float = 0.02, safety_interval: float = 1.0, batch: int = 1000,
                 run_id: str | None = None) -> None:
        self.db = Rp1Db(db_path)
        self.interval = interval
        self.safety_interval = safety_interval
        self.batch = batch
        self.run_id = run_id
        self.cursor = self.db.max_event_id() if cursor is None else cursor
        self._subs: list[Subscriber] = []
        self._lock = threading.Lock()
        self._sig = self.db.signature()
        self._last_query = time.monotonic()
        self._recheck = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> DbState:
        return self.db.state

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Register `callback(events)`; returns a function that unsubscribes it."""
        with self._lock:
            self._subs.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subs:
                    self._subs.remove(callback)
        return unsubscribe

    def poll(self, force: bool = False) -> list[Event]:
        """Fetch and deliver events past the cursor if the files changed (or `force`)."""
        sig = self.db.signature()
        now = time.monotonic()
        if sig != self._sig:
            # the files change as frames are written, a moment before the commit is visible:
            # keep querying for a few ticks after any change so a commit is never left waiting
            self._recheck = 10
        elif self._recheck > 0:
            self._recheck -= 1
        elif not force and now - self._last_query < self.safety_interval:
            return []
        self._sig, self._last_query = sig, now
        delivered: list[Event] = []
        while True:
            events = self.db.events_since(self.cursor, self.batch)
            if not events:
                break
            self.cursor = events[-1].id
            full = len(events) == self.batch
            if self.run_id:
                events = [e for e in events if e.run_id == self.run_id]
            delivered.extend(events)
            if events:
                self._deliver(events)
            if not full:
                break
        return delivered

    def _deliver(self, events: list[Event]) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            try:
                sub(events)
            except Exception:  # noqa: BLE001 - one broken subscriber must not stop the tail
                pass

    def start(self) -> Tail:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="rp1-tail", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)
