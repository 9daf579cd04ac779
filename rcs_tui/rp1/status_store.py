"""What one process learned about an rp1 database, kept for the next: each run's newest event id, its
derived status and, for the runs last shown, its whole projection.

rp1 only appends events, and a run's status is a function of its events, so a status derived when the
run's newest event id was N still holds while that id is N. The store describes the runs of one scope
(a project, or all) as they were when the database's newest event id was `as_of`: a new process reads
the events after `as_of` (a primary-key range scan) to learn which runs moved, and takes everything
else from here instead of asking the database for every run's newest event and re-deriving it.

It lives in rcs-tui's cache directory (never beside the database, never in it), one file per database
file (resolved path, device, inode), scope, user and version of the derivation code. A file that is
not ours, does not parse, names another database, scope or code version, or describes a database
newer than the one now on disk is ignored and rebuilt, never trusted.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from rcs_tui.cache_files import cache_dir, read_own, write_own
from rcs_tui.rp1.projection import Event, Projection

FORMAT = 2
# The code that derives a status: an edited install must not serve statuses derived by older rules.
RULE_FILES = ("projection.py", "db.py", "source.py", "status_store.py")
MAX_PROJECTIONS = 1000  # whole projections kept: the runs shown last (a page is at most a few hundred)


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


def projection_json(p: Projection) -> dict[str, Any]:
    return {"status": p.status, "steps": p.steps, "current_step": p.current_step,
            "prompts": [[e.id, e.run_id, e.type, e.step, e.unit, e.data, e.created_at, e.parent_step_id]
                        for e in p.pending_prompts],
            "last_event_id": p.last_event_id, "last_activity": p.last_activity}


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("not a string")


def projection_from_json(doc: Any) -> Projection:
    """The projection written by `projection_json`; TypeError/ValueError for anything else."""
    steps = doc["steps"]
    if not isinstance(steps, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in steps.items()):
        raise TypeError("steps")
    prompts = []
    for eid, run_id, type_, step, unit, data, created, parent in doc["prompts"]:
        if type(eid) is not int or not isinstance(data, dict):
            raise TypeError("prompt")
        prompts.append(Event(eid, _opt_str(run_id) or "", _opt_str(type_) or "", _opt_str(step), _opt_str(unit),
                             data, _opt_str(created) or "", _opt_str(parent)))
    status, last = doc["status"], doc["last_event_id"]
    if not isinstance(status, str) or type(last) is not int:
        raise TypeError("status")
    return Projection(status, steps, _opt_str(doc["current_step"]), tuple(prompts), last,
                      _opt_str(doc["last_activity"]))


class StatusStore:
    """The kept runs of one database and scope: read once, written back when something new was learned."""

    def __init__(self, db_path: Path, scope: tuple[str, str | None] | None = None) -> None:
        self.db_path = db_path
        self.scope = list(scope) if scope is not None else None
        self.path: str | None = None
        self.identity: dict[str, object] | None = None
        self.as_of: int | None = None  # the database's newest event id the entries describe
        self.entries: dict[str, tuple[int, str | None]] = {}  # run -> (newest event id, status or None)
        self.projections: dict[str, tuple[int, Projection]] = {}
        self.saved_at: float | None = None
        self._written: str | None = None  # the last document written or read, to skip identical writes

    def _identify(self) -> dict[str, object] | None:
        try:
            real = os.path.realpath(self.db_path)
            st = os.stat(real)
        except OSError:
            return None
        return {"db": real, "dev": st.st_dev, "ino": st.st_ino, "rules": _rule_stamp(), "uid": os.geteuid(),
                "scope": self.scope}

    def load(self) -> StatusStore:
        """Read the kept runs for this database and scope as they are now (nothing when none can be trusted)."""
        self.identity = self._identify()
        self.entries, self.projections, self.as_of = {}, {}, None
        if self.identity is None:
            return self
        key = json.dumps([self.identity["db"], self.scope]).encode("utf-8", "surrogateescape")
        self.path = os.path.join(cache_dir(), f"rp1-status-{zlib.crc32(key):08x}.json")
        raw = read_own(self.path)
        if raw is None:
            return self
        try:
            doc = json.loads(raw)
            if doc.get("format") != FORMAT or doc.get("identity") != self.identity or type(doc["as_of"]) is not int:
                return self
            entries: dict[str, tuple[int, str | None]] = {}
            for run_id, (last, status) in doc["runs"].items():
                if type(last) is not int:
                    raise TypeError("last")
                entries[run_id] = (last, _opt_str(status))
            projections = {}
            for run_id, (last, proj) in doc["projections"].items():
                if type(last) is not int:
                    raise TypeError("last")
                projections[run_id] = (last, projection_from_json(proj))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return self
        self.entries, self.projections, self.as_of = entries, projections, doc["as_of"]
        self._written = raw.decode("utf-8", "surrogateescape")
        return self

    def due(self, min_interval: float = 5.0) -> bool:
        """Whether a save now would write: a long-running viewer writes at most every `min_interval` s."""
        return self.saved_at is None or time.monotonic() - self.saved_at >= min_interval

    def save(self, as_of: int, entries: dict[str, tuple[int, str | None]],
             projections: dict[str, tuple[int, Projection]], min_interval: float = 5.0, force: bool = False) -> None:
        """Write the runs as they were at newest event id `as_of`, when the database is still the one they
        came from. A long-running viewer writes at most every `min_interval` seconds (a one-shot command
        writes once); nothing is written when nothing changed."""
        if self.path is None or self.identity is None:
            return
        now = time.monotonic()
        if not force and not self.due(min_interval):
            return
        if self._identify() != self.identity:
            return
        newest = sorted(projections.items(), key=lambda kv: kv[1][0], reverse=True)[:MAX_PROJECTIONS]
        doc = {"format": FORMAT, "identity": self.identity, "as_of": as_of,
               "runs": {k: list(v) for k, v in entries.items()},
               "projections": {k: [last, projection_json(p)] for k, (last, p) in newest}}
        text = json.dumps(doc, separators=(",", ":"))
        if text == self._written:
            return
        self.saved_at = now
        if write_own(self.path, text.encode("utf-8", "surrogateescape")):
            self._written = text
