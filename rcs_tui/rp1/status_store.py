"""What one process learned about an rp1 database, kept for the next: each run's newest event id, its
derived status and, for the runs last shown, where its derivation stood (so newer rows extend it).

rp1 only appends events, and a run's status is a function of its events, so a status derived when the
run's newest event id was N still holds while that id is N. The store describes the runs of one scope
(a project, or all) as they were when the database's newest event id was `as_of`: a new process reads
the events after `as_of` (a primary-key range scan) to learn which runs moved, and takes everything
else from here instead of asking the database for every run's newest event and re-deriving it.

It lives in rcs-tui's cache directory (never beside the database, never in it), one file per database
file (resolved path, device, inode), scope, user and version of the derivation code. A file that is
not ours, does not parse, names another database, scope or code version, or describes a database
newer than the one now on disk is ignored and rebuilt, never trusted.

Compact, so that it stays under the cache reader's cap (`files.cache.MAX_BYTES`) far past a hundred
thousand runs: the run columns are kept one list per column, a column with few distinct values (the
workflows, projects, statuses) as its values plus an index per run, and the document is compressed
(zlib). About 45 bytes a run: 100 000 runs take about 4.5 MB. A store that would still be over the cap
(several hundred thousand runs) is not written: every call then reads the runs from the database.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from itertools import repeat
from pathlib import Path
from typing import Any

from rcs_tui.files import cache as cache_files
from rcs_tui.files.cache import cache_dir, code_stamp, read_own, write_own
from rcs_tui.files.collector import paused
from rcs_tui.rp1.db import Marks, RunRow
from rcs_tui.rp1.projection import Event, Fold, Projection, finish

FORMAT = 4  # 4: compressed, columns with few distinct values as an index into them
RUN_CELLS = len(RunRow._fields) + 1  # a run row and its status
_TEXT_OR_NULL = {str, type(None)}
MAX_PROJECTIONS = 1000  # whole projections kept: the runs shown last (a page is at most a few hundred)
# A long-running viewer writes what it learned at most this often: a write of ten thousand runs takes a
# busy console's main thread 50-80 ms, and a next process that finds an older store only reads a little
# more (the events since, the runs that moved).
SAVE_INTERVAL = 60.0
MAX_TEXT = 8 * cache_files.MAX_BYTES  # the most a stored document may grow to when decompressed


def _compact(column: list[Any]) -> Any:
    """A column as kept: its distinct values and an index per run when they are few, else the list itself."""
    if len(column) < 8:
        return column
    try:
        at: dict[Any, Any] = dict.fromkeys(column)  # the distinct values, in order of first appearance
    except TypeError:  # a value that cannot be a key: kept as it is
        return column
    if len(at) * 2 > len(column):
        return column
    for number, value in enumerate(at):
        at[value] = number
    return {"values": list(at), "index": list(map(at.__getitem__, column))}


def _expand(column: Any) -> list[Any]:
    """The column `_compact` kept (TypeError/ValueError for anything else)."""
    if isinstance(column, list):
        return column
    values, index = column["values"], column["index"]
    if not (isinstance(values, list) and isinstance(index, list) and set(map(type, index)) <= {int}):
        raise TypeError("column")
    if index and (min(index) < 0 or max(index) >= len(values)):
        raise ValueError("column index")
    return list(map(values.__getitem__, index))


def encode_document(doc: dict[str, Any]) -> tuple[str, bytes]:
    """The store's text (to tell an unchanged one) and its bytes on disk: `doc` with its run columns
    compacted, compressed."""
    text = json.dumps({**doc, "runs": [_compact(c) for c in doc["runs"]]}, separators=(",", ":"))
    return text, zlib.compress(text.encode("utf-8", "surrogateescape"), 1)


def decode_document(raw: bytes) -> tuple[str, dict[str, Any]]:
    """What `encode_document` wrote: its text and the document with plain run columns (ValueError, TypeError,
    KeyError for anything else; never more than `MAX_TEXT` decompressed)."""
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(raw, MAX_TEXT)
    except zlib.error as exc:
        raise ValueError("not compressed") from exc
    if inflate.unconsumed_tail or not inflate.eof:
        raise ValueError("too large or truncated")
    text = data.decode("utf-8", "surrogateescape")
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise TypeError("document")
    doc["runs"] = [_expand(c) for c in doc["runs"]]
    return text, doc


def projection_json(p: Projection) -> dict[str, Any]:
    """Where the run's derivation stood (its fold), from which the projection is derived again on reading."""
    f = p.fold
    return {"steps": f.steps, "diagnostic": f.diagnostic, "last_entered": f.last_entered,
            "last_diagnostic": f.last_diagnostic, "run_status": f.run_status, "run_row_id": f.run_row_id,
            "last_step_activity": f.last_step_activity, "last_activity": f.last_activity,
            "prompts": [[e.id, e.run_id, e.type, e.step, e.unit, e.data, e.created_at, e.parent_step_id]
                        for e in f.prompts],
            "last_id": f.last_id}


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("not a string")


def _opt_int(value: Any) -> int | None:
    if value is None or type(value) is int:
        return value
    raise TypeError("not an integer")


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError("not a map of strings")
    return value


def projection_from_json(doc: Any) -> Projection:
    """The projection derived from the fold `projection_json` wrote; TypeError/ValueError for anything else."""
    if not isinstance(doc["prompts"], list):
        raise TypeError("prompts")
    prompts = []
    for eid, run_id, type_, step, unit, data, created, parent in doc["prompts"]:
        if type(eid) is not int or not isinstance(data, dict):
            raise TypeError("prompt")
        prompts.append(Event(eid, _opt_str(run_id) or "", _opt_str(type_) or "", _opt_str(step), _opt_str(unit),
                             data, _opt_str(created) or "", _opt_str(parent)))
    last = doc["last_id"]
    if type(last) is not int:
        raise TypeError("last_id")
    fold = Fold(_str_map(doc["steps"]), _str_map(doc["diagnostic"]), _opt_str(doc["last_entered"]),
                _opt_str(doc["last_diagnostic"]), _opt_str(doc["run_status"]), _opt_int(doc["run_row_id"]),
                _opt_int(doc["last_step_activity"]), _opt_str(doc["last_activity"]), tuple(prompts), last)
    return finish(fold)


class StatusStore:
    """The kept runs of one database and scope: read once, written back when something new was learned."""

    def __init__(self, db_path: Path, scope: tuple[str, str | None] | None = None) -> None:
        self.db_path = db_path
        self.scope = list(scope) if scope is not None else None
        self.path: str | None = None
        self.identity: dict[str, object] | None = None
        self.as_of: int | None = None  # the database's newest event id the entries describe
        self.marks: Marks | None = None  # where the database stood then (`Rp1Db.runs_marks`)
        self.rows: list[RunRow] | None = None  # the runs in scope then, in feed order
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
        return {"db": real, "dev": st.st_dev, "ino": st.st_ino, "rules": code_stamp(), "uid": os.geteuid(),
                "scope": self.scope}

    def load(self) -> StatusStore:
        """Read the kept runs for this database and scope as they are now (nothing when none can be trusted).

        The collector is paused meanwhile: parsing and building tens of thousands of acyclic rows would
        otherwise set off several full collections, a quarter of the load's time."""
        with paused():
            return self._load()

    def _load(self) -> StatusStore:
        self.identity = self._identify()
        self.entries, self.projections, self.as_of, self.rows, self.marks = {}, {}, None, None, None
        if self.identity is None:
            return self
        key = json.dumps([self.identity["db"], self.scope]).encode("utf-8", "surrogateescape")
        self.path = os.path.join(cache_dir(), f"rp1-status-{zlib.crc32(key):08x}.json.z")
        raw = read_own(self.path)
        if raw is None:
            return self
        try:
            text, doc = decode_document(raw)
            if doc.get("format") != FORMAT or doc.get("identity") != self.identity:
                return self
            marks = doc["marks"]
            if (not isinstance(marks, list) or len(marks) != len(Marks._fields)
                    or not all(type(m) is int for m in marks[:3]) or not isinstance(marks[3], str)
                    or not {type(m) for m in marks[4:]} <= _TEXT_OR_NULL):
                raise TypeError("marks")
            cols = doc["runs"]  # one list per column of RunRow, then the statuses, in feed order
            if (not isinstance(cols, list) or len(cols) != RUN_CELLS or not all(isinstance(c, list) for c in cols)
                    or len({len(c) for c in cols}) != 1):
                raise TypeError("runs")
            # Ids and flows are text, the other columns text or null, the newest event id an integer, the
            # status text or null (not derived at that event). Checked a column at a time: it is cheap.
            if not (all(set(map(type, c)) <= {str} for c in cols[:2])
                    and all(set(map(type, c)) <= _TEXT_OR_NULL for c in cols[2:10])
                    and set(map(type, cols[10])) <= {int} and set(map(type, cols[11])) <= _TEXT_OR_NULL):
                raise TypeError("runs")
            projections = {}
            for run_id, (last, proj) in doc["projections"].items():
                projection = projection_from_json(proj)
                if type(last) is not int or last != projection.last_event_id:
                    raise TypeError("last")  # a fold must be as of the event it is filed under
                projections[run_id] = (last, projection)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return self
        self.rows = list(map(tuple.__new__, repeat(RunRow), zip(*cols[:11], strict=True)))
        self.entries = dict(zip(cols[0], zip(cols[10], cols[11], strict=True), strict=True))
        self.projections, self.marks, self.as_of = projections, Marks(*marks), marks[0]
        self._written = text
        return self

    def due(self, min_interval: float = SAVE_INTERVAL) -> bool:
        """Whether a save now would write: a long-running viewer writes at most every `min_interval` s."""
        return self.saved_at is None or time.monotonic() - self.saved_at >= min_interval

    def save(self, marks: Marks, rows: list[RunRow], statuses: dict[str, str | None],
             projections: dict[str, tuple[int, Projection]], min_interval: float = SAVE_INTERVAL,
             force: bool = False) -> None:
        """Write the runs (in feed order) as they were at `marks` (the newest event id first), with each
        run's status where known, when the database is still the one they came from. A long-running
        viewer writes at most every `min_interval` seconds (a one-shot command writes once); nothing is
        written when nothing changed."""
        if self.path is None or self.identity is None:
            return
        now = time.monotonic()
        if not force and not self.due(min_interval):
            return
        if self._identify() != self.identity:
            return
        newest = sorted(projections.items(), key=lambda kv: kv[1][0], reverse=True)[:MAX_PROJECTIONS]
        columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in RunRow._fields]
        doc = {"format": FORMAT, "identity": self.identity, "marks": list(marks),
               "runs": [*columns, [statuses.get(r.id) for r in rows]],
               "projections": {k: [last, projection_json(p)] for k, (last, p) in newest}}
        text, data = encode_document(doc)
        if text == self._written:
            return
        self.saved_at = now
        if len(data) > cache_files.MAX_BYTES:  # larger than the reader takes: writing it would only cost time
            return
        if write_own(self.path, data):
            self._written = text
