"""Derived run statuses kept between processes, so a new process does not re-derive a million events.

A run's status is a function of its events, and rp1 only appends events, so a status derived when the
run's newest event id was N still holds while that id is N. The store keeps `run -> (newest event id,
status)` in rcs-tui's cache directory (never beside the database, never in it), for one database file
(its resolved path, device and inode) and one version of the derivation code. An entry is used only
when the run's newest event id, read from the database in the same process, equals the stored one;
everything else is derived again by `project` (the one rule) and stored. A foreign, unreadable or
mismatched file is ignored.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

from rcs_tui.cache_files import cache_dir, read_own, write_own

FORMAT = 1
# The code that derives a status: an edited install must not serve statuses derived by older rules.
RULE_FILES = ("projection.py", "db.py", "source.py")


def _rule_stamp() -> list[object]:
    here = Path(__file__).resolve().parent
    out: list[object] = []
    for name in RULE_FILES:
        try:
            st = (here / name).stat()
            out.append([st.st_size, st.st_mtime_ns])
        except OSError:
            out.append(None)
    return out


class StatusStore:
    """Statuses derived for one rp1 database, read once and written back when something new was derived."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.path: str | None = None
        self.identity: dict[str, object] | None = None
        self.entries: dict[str, tuple[int, str]] = {}
        self.dirty = False
        self.saved_at: float | None = None

    def _identify(self) -> dict[str, object] | None:
        try:
            real = os.path.realpath(self.db_path)
            st = os.stat(real)
        except OSError:
            return None
        return {"db": real, "dev": st.st_dev, "ino": st.st_ino, "rules": _rule_stamp(), "uid": os.geteuid()}

    def load(self) -> dict[str, tuple[int, str]]:
        """The stored statuses for this database as it is now (empty when none can be trusted)."""
        self.identity = self._identify()
        self.entries, self.dirty = {}, False
        if self.identity is None:
            return self.entries
        name = f"rp1-status-{zlib.crc32(str(self.identity['db']).encode('utf-8', 'surrogateescape')):08x}.json"
        self.path = os.path.join(cache_dir(), name)
        raw = read_own(self.path)
        if raw is None:
            return self.entries
        try:
            doc = json.loads(raw)
            if doc.get("format") != FORMAT or doc.get("identity") != self.identity:
                return self.entries
            for run_id, (last, status) in doc["runs"].items():
                if isinstance(run_id, str) and type(last) is int and isinstance(status, str):
                    self.entries[run_id] = (last, status)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            self.entries = {}
        return self.entries

    def put(self, run_id: str, last_event_id: int, status: str) -> None:
        if self.entries.get(run_id) != (last_event_id, status):
            self.entries[run_id] = (last_event_id, status)
            self.dirty = True

    def save(self, min_interval: float = 5.0) -> None:
        """Write the statuses back when something changed and the database is still the one they came from.

        A long-running viewer writes at most every `min_interval` seconds (a one-shot command writes once).
        """
        if not self.dirty or self.path is None:
            return
        now = time.monotonic()
        if self.saved_at is not None and now - self.saved_at < min_interval:
            return
        if self._identify() != self.identity:
            return
        self.saved_at = now
        doc = {"format": FORMAT, "identity": self.identity, "runs": {k: list(v) for k, v in self.entries.items()}}
        if write_own(self.path, json.dumps(doc, separators=(",", ":")).encode("utf-8", "surrogateescape")):
            self.dirty = False
