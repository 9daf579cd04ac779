"""The rows a run's status depends on, picked by SQLite: Python sees a few rows per run and step, never
every event.

What `project` needs to derive a run's status exactly (its other fields are not asked for here):
- the newest run-level row, and back from it the newest one with a status (the run's own status; it
  clears every prompt before it);
- per workflow step, its newest step-level row, and back from it the newest one with a status (the
  step's status; it clears the step's prompts and the step-less ones before it);
- per step, its newest prompt: a prompt is answered by the same rows whatever its unit, so the newest
  one is pending exactly when any of that step's prompts is;
- when a step-less prompt or a run-level row was kept: the run's newest status row with a step (it
  answers a step-less prompt, and it is the step activity that `inactive` is compared with).
Unit and sub-agent rows decide a status only for a run with no workflow step row with a status: such a
run is returned as odd (its status comes from all its events).

How, chosen by the make-up of the table's newest rows: when rows of those kinds are a small share of the
table (busy runs: mostly unit, sub-agent, artifact and note rows), or when most steps' newest row is one
that leaves the step open (short runs whose steps end with unit rows), one scan groups every run's by run,
step, kind and unit-or-not, keeping the newest of each. Else one pass over the `(run_id, step)` index
gives each step's newest row (no table row read but that one); a step whose newest row settles it
(`stands_for_older`) needs nothing more; for the others (a unit, an artifact, a note or a prompt came
last) SQLite groups those steps' rows the same way, with one scan of the table (many such steps) or
through the index, step by step (a few). Rows SQLite and Python could read differently (a step, unit,
type or run id that is not text) send their run to the full path.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from sys import intern
from typing import Any

from rcs_tui.files.collector import paused
from rcs_tui.rp1.projection import StatusRow, payload_status, stands_for_older
from rcs_tui.rp1.schema import Schema

COLUMNS = ("id", "run_id", "type", "step", "unit", "data", "created_at")
# The rows a step's newest row leaves open that can still decide: its step-level status rows (unit empty;
# a unit that is not text is its own group, so it comes back and sends its run to the full path), the
# run-level rows (no step, whatever their unit) and the prompts. Grouped with `UNIT_KEY`, so the newest of
# each kind comes back.
# Written for the scan's sake (it is evaluated on every row of the table): no function call but the inlined
# `ifnull`, the common unit row rejected after three comparisons; a blob sorts after every text (`>= x''`).
DECIDING = ("(ifnull(unit, '') <= '' OR unit >= x'' OR ifnull(step, '') = '' OR type = 'waiting_for_user')"
            " AND type IN ('status_change', 'waiting_for_user')")
UNIT_KEY = "CASE WHEN unit IS NULL OR unit = '' THEN 0 WHEN typeof(unit) = 'text' THEN 1 ELSE 2 END"
SCAN_RATIO = 4  # a table scan costs about this many rows read by index per row of the table
SAMPLE = 4096  # newest rows looked at to tell the table's make-up
SCAN_ALL_SHARE = 0.25  # at most this share of deciding rows, one scan grouping all of them beats the index
# More than this share of open steps, times SCAN_RATIO: the index plan would scan the table for them anyway.
OPEN_SCAN_ALL = 1.0


def cell_text(value: Any) -> str | None:
    """Untrusted cell -> plain str (or None); never interpreted."""
    if value.__class__ is str or value is None:
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Kept:
    """The rows kept so far, per run, each read as the full path reads it; runs to derive from every event.

    While keeping, it notes what the later steps look for, so they never walk every kept row: the runs with
    a workflow step row with a status, the run-level and step-level status rows kept without a status,
    and the runs with a run-level row or a step-less prompt."""

    __slots__ = ("no_status", "odd", "out", "seen", "statuses", "stepless", "with_step_status")

    def __init__(self) -> None:
        self.out: dict[str, list[StatusRow]] = {}
        self.odd: set[str] = set()
        self.seen: dict[int, StatusRow] = {}
        self.statuses: dict[Any, str | None] = {}
        self.with_step_status: set[str] = set()
        self.no_status: list[StatusRow] = []
        self.stepless: set[str] = set()

    def keep(self, row: Sequence[Any]) -> StatusRow | None:
        """The row as the full path reads it, added to its run once (None when its run is odd)."""
        eid, run, type_, step, unit, data, created = row
        if (run.__class__ is not str or not (step is None or step.__class__ is str)
                or type_.__class__ is not str or not (unit is None or unit.__class__ is str)):
            self.odd.add(cell_text(run) or "")
            return None
        if eid in self.seen:
            return self.seen[eid]
        run = intern(run)  # one copy of each run id (and step name) for all of its rows
        step = intern(step) if step else step
        statuses = self.statuses
        status = statuses[data] if data in statuses else statuses.setdefault(data, payload_status(data))
        sr = StatusRow(eid, run, type_, step or None, unit or None, status,
                       created if created.__class__ is str else cell_text(created) or "")
        self.seen[eid] = sr
        rows = self.out.get(run)
        if rows is None:
            self.out[run] = [sr]
        else:
            rows.append(sr)
        if type_ == "status_change":
            if not step:
                self.stepless.add(run)
                if not status:
                    self.no_status.append(sr)
            elif not unit and ":" not in step:
                if status:
                    self.with_step_status.add(run)
                else:
                    self.no_status.append(sr)
        elif type_ == "waiting_for_user" and not step:
            self.stepless.add(run)
        return sr


def deciding_rows(conn: sqlite3.Connection, schema: Schema, in_scope: str, params: list[Any],
                  ) -> tuple[dict[str, list[StatusRow]], set[str]]:
    """Per run (of those `in_scope`, an `AND …` condition on `events` with `params`), the rows its status
    depends on, in id order; and the runs to derive from every event instead.

    The collector is paused meanwhile: the hundred thousand acyclic rows and tuples of a first read would
    otherwise set off several full collections, a third of the time."""
    with paused():
        return _deciding_rows(conn, schema, in_scope, params)


class _Sql:
    """The statements of one read, for this database's columns and indexes."""

    def __init__(self, schema: Schema) -> None:
        self.cols = schema.select_list("events", COLUMNS)
        step_index = schema.events_index("run_id", "step")
        self.by_step = f"INDEXED BY {_quote(step_index)}" if step_index is not None else ""
        run_index = next((name for name, keys in schema.event_indexes.items() if keys == ("run_id",)), None)
        self.by_run = f"INDEXED BY {_quote(run_index)}" if run_index is not None else ""
        # With one MAX() in a grouped SELECT, SQLite takes the other columns from the row holding the maximum.
        self.newest_of_group = f"MAX(id), {schema.select_list('events', COLUMNS[1:])}"


def _table_rows(conn: sqlite3.Connection) -> int:
    """About how many rows `events` holds (apart, each bound is one seek of the primary key; together
    they would scan the table)."""
    top = conn.execute("SELECT MAX(id) FROM events").fetchone()[0] or 0
    bottom = conn.execute("SELECT MIN(id) FROM events").fetchone()[0] or 0
    return int(top) - int(bottom) + 1 if top else 0


def _deciding_share(conn: sqlite3.Connection) -> float:
    """The share of the newest rows that are of a kind that can decide (`DECIDING`): a sample of the table."""
    got = conn.execute(f"SELECT COUNT(*), TOTAL({DECIDING}) FROM (SELECT type, step, unit FROM events"
                       f" ORDER BY id DESC LIMIT {SAMPLE})").fetchone()
    return float(got[1]) / got[0] if got[0] else 0.0


def _open_share(conn: sqlite3.Connection) -> float:
    """The share of steps whose newest row leaves them open (`stands_for_older` does not hold), among the
    steps with a row in the newest rows (whose newest row is then among them): a sample of the table.
    A row with a cell that is not text counts as open."""
    rows = conn.execute(f"SELECT MAX(id), type, step, unit, data FROM (SELECT id, run_id, type, step, unit, data"
                        f" FROM events ORDER BY id DESC LIMIT {SAMPLE}) GROUP BY run_id, step").fetchall()
    statuses: dict[Any, str | None] = {}
    settled = 0
    for eid, type_, step, unit, data in rows:
        if type_ == "status_change" and (step is None or step.__class__ is str) and (
                unit is None or unit.__class__ is str):
            status = statuses[data] if data in statuses else statuses.setdefault(data, payload_status(data))
            settled += stands_for_older(StatusRow(eid, "", type_, step, unit, status, ""))
    return 1 - settled / len(rows) if rows else 0.0


def _scan_all_first(conn: sqlite3.Connection) -> bool:
    """Whether every run's deciding rows are best read by one scan grouping them all, not through the index.

    Yes when they are a small share of the table (the scan sorts only those), or when so many steps' newest
    row leaves the step open that the index plan would end in the same scan, after a pass over every step's
    newest row first (busy runs whose steps end with unit rows: a third of the time at 100 000 runs)."""
    return _deciding_share(conn) <= SCAN_ALL_SHARE or _open_share(conn) * SCAN_RATIO > OPEN_SCAN_ALL


def _deciding_rows(conn: sqlite3.Connection, schema: Schema, in_scope: str, params: list[Any],
                   ) -> tuple[dict[str, list[StatusRow]], set[str]]:
    sql = _Sql(schema)
    kept = _Kept()
    if not in_scope and _scan_all_first(conn):
        # Every run, and few rows of the kinds that decide (units, sub-agents, notes are most of the table) or
        # most steps left open by their newest row: one scan groups them all, newest first per run, step, kind.
        for row in conn.execute(f"SELECT {sql.newest_of_group} FROM events NOT INDEXED WHERE {DECIDING}"
                                f" GROUP BY run_id, step, type, {UNIT_KEY}"):
            kept.keep(row)
        with_events = {cell_text(r[0]) or "" for r in conn.execute(
            "SELECT id FROM runs r WHERE EXISTS (SELECT 1 FROM events e WHERE e.run_id = r.id)")}
    else:
        with_events = _by_index(conn, sql, kept, in_scope, params)
    _back_to_a_status(conn, sql, kept)
    _step_activity(conn, sql, kept)
    # A run with rows but none of a deciding kind (only units, sub-agents, notes) or no workflow step row with
    # a status takes its status from its unit and sub-agent rows: from every event.
    kept.odd.update(kept.out.keys() - kept.with_step_status)
    kept.odd.update(with_events - kept.out.keys())
    return {run: rows for run, rows in kept.out.items() if run not in kept.odd}, kept.odd


def _by_index(conn: sqlite3.Connection, sql: _Sql, kept: _Kept, in_scope: str, params: list[Any]) -> set[str]:
    """Each step's newest row from the `(run_id, step)` index; for the steps it leaves open, the newest row
    of each deciding kind, by one scan of the table (many such steps) or step by step (a few). Returns the
    runs that have events."""
    # The index lists the newest rows by run, and rp1's run ids are random: read in that order, every row
    # would land on another page; as an `IN` list they are read in id order.
    newest = (f"SELECT {sql.cols} FROM events WHERE id IN"
              f" (SELECT MAX(id) FROM events {sql.by_step} WHERE 1{in_scope} GROUP BY run_id, step)")
    groups = 0
    open_steps: list[tuple[str, str | None]] = []
    with_events: set[str] = set()
    for row in conn.execute(newest, params):
        groups += 1
        run, type_, step, unit = row[1:5]
        with_events.add(cell_text(run) or "")
        if run.__class__ is not str:
            kept.odd.add(cell_text(run) or "")
        elif type_ == "status_change" and (not step or not unit or (step.__class__ is str and ":" in step)):
            # a run-level, step-level or sub-agent status row: settles its step when it has a status
            sr = kept.keep(row)
            if sr is not None and not stands_for_older(sr):
                open_steps.append((sr.run_id, sr.step if step else step))
        else:  # a unit row, a prompt, an artifact or a note: what decides is older
            open_steps.append((intern(run), intern(step) if step.__class__ is str else step))
    if open_steps:
        # rows in the open steps, about: their share of the steps, of the rows in scope
        in_rows = _table_rows(conn) if not in_scope else conn.execute(
            f"SELECT COUNT(*) FROM events {sql.by_step} WHERE 1{in_scope}", params).fetchone()[0]
        if len(open_steps) * in_rows * SCAN_RATIO > groups * _table_rows(conn):
            wanted = set(open_steps)
            runs = {run for run, _ in wanted}
            scan = f"SELECT {sql.newest_of_group} FROM events NOT INDEXED WHERE ({DECIDING}){in_scope}"
            args = list(params)
            if len(runs) * 2 < len(with_events):  # a few runs of many: only theirs (else the test costs more)
                scan += " AND run_id IN (SELECT value FROM json_each(?))"
                args.append(json.dumps(sorted(runs)))
            for row in conn.execute(f"{scan} GROUP BY run_id, step, type, {UNIT_KEY}", args):
                if (row[1], row[3]) in wanted:
                    kept.keep(row)
        else:
            seek = (f"SELECT {sql.newest_of_group} FROM events {sql.by_step} WHERE run_id = ? AND step IS ?"
                    f" AND ({DECIDING}) GROUP BY type, {UNIT_KEY}")
            for run, step in open_steps:
                for row in conn.execute(seek, (run, step)):
                    kept.keep(row)
    # Sub-agent prompts, which only a run-level row answers: the newest per step (a sub-agent step whose newest
    # row is a status row was settled above without looking at its prompts).
    prompts = (f"SELECT {sql.newest_of_group} FROM events WHERE type = 'waiting_for_user'"
               f" AND instr(step, ':') > 0{in_scope} GROUP BY run_id, step")
    for row in conn.execute(prompts, params):
        kept.keep(row)
    return with_events


def _back_to_a_status(conn: sqlite3.Connection, sql: _Sql, kept: _Kept) -> None:
    """Where the newest run-level or step-level status row kept has no status: its older rows, newest first,
    up to one with a status (rare: rp1 writes a status on every such row)."""
    back_step = (f"SELECT {sql.cols} FROM events {sql.by_step} WHERE run_id = ? AND step IS ?"
                 f" AND type = 'status_change' AND (unit IS NULL OR unit = '') AND id < ? ORDER BY id DESC")
    back_run = (f"SELECT {sql.cols} FROM events {sql.by_step} WHERE run_id = ? AND step IS ?"
                f" AND type = 'status_change' AND id < ? ORDER BY id DESC")
    pending, kept.no_status = kept.no_status, []
    for r in pending:
        run, step = r.run_id, r.step
        if run in kept.odd or any(o.id > r.id and o.step == step and o.type == "status_change"
                                  and (not step or not o.unit) for o in kept.out[run]):
            continue  # a newer row of the same kind was kept: it is the one that counts
        # no step is NULL or '' as stored: each is read back to its newest row with a status
        for raw in ((None, "") if step is None else (step,)):
            for row in conn.execute(back_run if step is None else back_step, (run, raw, r.id)):
                sr = kept.keep(row)
                if sr is None or stands_for_older(sr):
                    break


def _step_activity(conn: sqlite3.Connection, sql: _Sql, kept: _Kept) -> None:
    """For runs with a step-less prompt or a run-level row kept: their newest status row with a step."""
    activity = (f"SELECT {sql.cols} FROM events {sql.by_run} WHERE run_id = ? AND type = 'status_change'"
                f" AND step IS NOT NULL AND step <> '' ORDER BY id DESC LIMIT 1")
    for run in sorted(kept.stepless - kept.odd):
        for row in conn.execute(activity, (run,)):
            kept.keep(row)
