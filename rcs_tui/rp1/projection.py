"""Recompute a run's status and step states from its events.

`runs.status` is a cache rp1 does not always refresh, so nothing here reads it. Pure functions
over `Event` values; callers sort nothing. Rows are read in `events.id` order, the order rp1 wrote
them: its synthetic rows (a predecessor's `completed`, stamped 1 ms before the event that caused
them) can tie with or cross an earlier row's timestamp, so `created_at` only ever serves display.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any, NamedTuple, Protocol

from rcs_tui.core.frozen import Frozen, set_field
from rcs_tui.files.io import loads_strict

STEP_STATUSES = ("not_started", "running", "waiting", "completed", "failed", "skipped")
RUN_STATUSES = STEP_STATUSES + ("inactive", "cancelled", "abandoned")
MANUAL_END = frozenset({"cancelled", "abandoned"})
# The only event types the projection reads; every other row leaves a run's status unchanged.
STATUS_EVENT_TYPES = ("status_change", "waiting_for_user")


class _RowRules:
    """How the projection classifies a row; shared by `Event` and the light `StatusRow`."""

    __slots__ = ()
    id: int
    type: str
    step: str | None
    unit: str | None
    created_at: str

    @property
    def namespaced(self) -> bool:
        return bool(self.step) and ":" in (self.step or "")

    @property
    def sort_key(self) -> int:
        """Derivation order: the row id (rp1's write order), never the timestamp."""
        return self.id

    @property
    def logical_step(self) -> str:
        """The key of rp1's diagnostic projection: `agent` for `agent:state`, plus `::unit` for a unit."""
        base = (self.step or "").partition(":")[0] if self.namespaced else (self.step or "")
        return f"{base}::{self.unit}" if self.unit else base

    @property
    def is_workflow_row(self) -> bool:
        """A step-level status row of the workflow itself (not a unit, not a sub-agent)."""
        return self.type == "status_change" and bool(self.step) and not self.unit and not self.namespaced

    @property
    def is_run_row(self) -> bool:
        return self.type == "status_change" and not self.step


class Row(Protocol):
    """What `project` reads from a row: an `Event`, or a `StatusRow` when only the status is wanted."""

    id: int
    type: str
    step: str | None
    unit: str | None
    created_at: str

    @property
    def status(self) -> str | None: ...
    @property
    def namespaced(self) -> bool: ...
    @property
    def sort_key(self) -> int: ...
    @property
    def logical_step(self) -> str: ...
    @property
    def is_workflow_row(self) -> bool: ...
    @property
    def is_run_row(self) -> bool: ...


class StatusRow(_RowRules):
    """The narrow shape of an events row the status needs (no payload besides its status)."""

    __slots__ = ("id", "run_id", "type", "step", "unit", "status", "created_at")

    def __init__(self, id: int, run_id: str, type: str, step: str | None, unit: str | None,  # noqa: A002
                 status: str | None, created_at: str) -> None:
        self.id, self.run_id, self.type, self.step = id, run_id, type, step
        self.unit, self.status, self.created_at = unit, status, created_at

    def __repr__(self) -> str:
        return (f"StatusRow({self.id}, {self.run_id!r}, {self.type!r}, {self.step!r}, {self.unit!r},"
                f" {self.status!r}, {self.created_at!r})")


class Event(_RowRules, Frozen):
    """One `events` row. `data` is parsed JSON (a dict, possibly empty); strings stay untrusted data.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("id", "run_id", "type", "step", "unit", "data", "created_at", "parent_step_id")
    id: int
    run_id: str
    type: str
    step: str | None
    unit: str | None
    data: dict[str, Any]
    created_at: str
    parent_step_id: str | None

    def __init__(self, id: int, run_id: str, type: str, step: str | None, unit: str | None,  # noqa: A002
                 data: dict[str, Any], created_at: str, parent_step_id: str | None = None) -> None:
        set_field(self, "id", id)
        set_field(self, "run_id", run_id)
        set_field(self, "type", type)
        set_field(self, "step", step)
        set_field(self, "unit", unit)
        set_field(self, "data", data)
        set_field(self, "created_at", created_at)
        set_field(self, "parent_step_id", parent_step_id)

    @property
    def status(self) -> str | None:
        value = self.data.get("status")
        return value if isinstance(value, str) else None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "run_id": self.run_id, "type": self.type, "step": self.step, "unit": self.unit,
                "status": self.status, "data": self.data, "parent_step_id": self.parent_step_id,
                "created_at": self.created_at}


def payload_status(raw: Any) -> str | None:
    """The status an `Event` built from this `data` cell reports (`Event.status` without the Event)."""
    value = parse_data(raw).get("status")
    return value if isinstance(value, str) else None


def stands_for_older(row: Row) -> bool:
    """Whether `row` makes every older row with the same run and step irrelevant to the run's status.

    True for a run-level row with a status (the latest such row is the run row, it clears every
    older prompt, and a step-less row is never step activity), a workflow row with a status (the
    step's last status, clearing its older prompts and outdating its older activity), and any status
    row of a sub-agent step (outdating that step's activity; its older prompts are cleared only by
    run-level rows, so they must be read apart). Lets a reader keep, per run and step, only the rows
    from the newest back to the first that stands for the older ones, plus sub-agent prompts, and get
    from `project` the status it gets from every row. Unit rows and prompts stand for nothing.
    """
    if row.type != "status_change":
        return False
    if not row.step:
        return bool(row.status)
    return row.namespaced or (not row.unit and bool(row.status))


# Small flat payloads parsed before, by their text: rp1 writes the same few (`{"status": "running"}`) on
# most rows, and parsing them again was a third of the cost of reading a run's events.
_PARSED: dict[str, dict[str, Any]] = {}
_PARSED_MAX = 4096
_PARSED_LEN = 128
_SCALARS = (str, int, float, bool, type(None))


def parse_data(raw: Any) -> dict[str, Any]:
    """The JSON payload as a dict; anything unparsable becomes `{"_raw": text}` instead of an error.

    A short payload that parsed to a dict of plain values is remembered by its text; each caller still
    gets a dict of its own."""
    if raw is None:
        return {}
    if raw.__class__ is str and len(raw) <= _PARSED_LEN:
        known = _PARSED.get(raw)
        if known is not None:
            return dict(known)
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        value = loads_strict(raw)
    except (TypeError, ValueError, RecursionError):  # incl. NaN/Infinity, which no JSON output may carry
        return {"_raw": str(raw)[:2000]}
    if not isinstance(value, dict):
        return {"_value": value}
    if (raw.__class__ is str and len(raw) <= _PARSED_LEN
            and all(v.__class__ in _SCALARS for v in value.values())):
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[raw] = dict(value)
    return value


class Fold(NamedTuple):
    """Where the derivation stands after a run's rows up to `last_id` (read in id order).

    Everything `finish` needs, and nothing it does not: rows newer than `last_id` extend it (`advance`)
    without the older rows being read again, and the result is the one a derivation over all the rows
    gives. rp1 only appends rows, so a run that moved on costs its new rows, not its history. A named
    tuple: a first feed folds every run of the database once. Never mutated; `advance` copies.
    """

    steps: dict[str, str]  # workflow step -> last status, first seen first
    diagnostic: dict[str, str]  # sub-agent / unit logical step -> last status
    last_entered: str | None  # the workflow step most recently set running or waiting
    last_diagnostic: str | None  # the same among the logical steps
    run_status: str | None  # the newest run-level row with a status: its status and id
    run_row_id: int | None
    last_step_activity: int | None  # id of the newest step row or prompt
    last_activity: str | None  # the latest timestamp seen (display only)
    prompts: tuple[Any, ...]  # prompts no later row has answered, oldest first
    last_id: int


EMPTY = Fold({}, {}, None, None, None, None, None, None, (), 0)


class Projection(Frozen):
    """Derived state of one run; `fold` is what newer rows extend (`extend`).

    Equal projections have equal fields but `fold` (how they were reached is not part of the value), which
    repr leaves out too; the hash leaves out `steps` as well, a dict.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = ("status", "steps", "current_step", "pending_prompts", "last_event_id", "last_activity", "fold")
    _compared = ("status", "steps", "current_step", "pending_prompts", "last_event_id", "last_activity")
    _hashed = ("status", "current_step", "pending_prompts", "last_event_id", "last_activity")
    status: str
    steps: dict[str, str]  # step -> status, in first-seen order
    current_step: str | None
    pending_prompts: tuple[Any, ...]  # the pending `waiting_for_user` rows (`Event`s from full rows)
    last_event_id: int
    last_activity: str | None
    fold: Fold

    def __init__(self, status: str, steps: dict[str, str], current_step: str | None,
                 pending_prompts: tuple[Any, ...] = (), last_event_id: int = 0, last_activity: str | None = None,
                 fold: Fold = EMPTY) -> None:
        set_field(self, "status", status)
        set_field(self, "steps", steps)
        set_field(self, "current_step", current_step)
        set_field(self, "pending_prompts", pending_prompts)
        set_field(self, "last_event_id", last_event_id)
        set_field(self, "last_activity", last_activity)
        set_field(self, "fold", fold)


def advance(fold: Fold, rows: Iterable[Row]) -> Fold:
    """`fold` extended by `rows`, all newer than `fold.last_id` (ValueError otherwise: the older state
    cannot take a row that should have come before it). From `EMPTY` any ids go, zero and negative ones too
    (SQLite takes them in an id column; rp1 never writes them, but a database edited by hand may hold them).

    A prompt stays pending until a later row answers it: a run-level status row answers every prompt,
    a workflow row for the prompt's step answers that step's prompts, and any status row answers a
    prompt that names no step.
    """
    ordered = sorted(rows, key=_order)
    if not ordered:
        return fold
    if ordered[0].id <= fold.last_id and fold != EMPTY:  # from nothing, any id goes: 0 and below are valid too
        raise ValueError(f"row {ordered[0].id} is not newer than {fold.last_id}")
    steps, diagnostic = dict(fold.steps), dict(fold.diagnostic)
    last_entered, last_diagnostic = fold.last_entered, fold.last_diagnostic
    run_status, run_row_id = fold.run_status, fold.run_row_id
    last_step_activity, last_activity = fold.last_step_activity, fold.last_activity
    prompts = list(fold.prompts)
    for ev in ordered:
        created = ev.created_at
        if created and (last_activity is None or created > last_activity):
            last_activity = created
        type_ = ev.type
        if type_ == "status_change":
            step, status = ev.step, ev.status
            if not step:  # a run-level row
                prompts.clear()
                if status:
                    run_status, run_row_id = status, ev.id
                continue
            last_step_activity = ev.id
            if not ev.unit and ":" not in step:  # a workflow row
                if prompts:
                    prompts = [p for p in prompts if p.step and p.step != step]
                if status:
                    steps[step] = status
                    if status in ("running", "waiting"):
                        last_entered = step
            else:
                if prompts:
                    prompts = [p for p in prompts if p.step]
                if status:
                    logical = ev.logical_step
                    diagnostic[logical] = status
                    if status in ("running", "waiting"):
                        last_diagnostic = logical
        elif type_ == "waiting_for_user":
            last_step_activity = ev.id
            prompts.append(ev)
    return Fold(steps, diagnostic, last_entered, last_diagnostic, run_status, run_row_id, last_step_activity,
                last_activity, tuple(prompts), ordered[-1].id)


def _steps(fold: Fold) -> dict[str, str]:
    """The workflow steps as shown: a pending prompt sets its step waiting, and a run ended by hand
    (`cancelled`/`abandoned`) shows its steps still running or waiting as completed."""
    steps = dict(fold.steps)
    for prompt in fold.prompts:
        if prompt.step and not prompt.namespaced and not prompt.unit:
            steps[prompt.step] = "waiting"
    if fold.run_status in MANUAL_END:
        return {s: ("completed" if v in ("running", "waiting") else v) for s, v in steps.items()}
    return steps


def _status(fold: Fold, steps: dict[str, str]) -> str:
    """The run's status: as ended by hand; else waiting on a prompt; else from its steps (failed over
    running over waiting; completed when every one completed or was skipped), where a run with no plain
    step row at all takes them from its sub-agent and unit steps; `inactive` when a run-level row marked
    it so after its last step activity and it had not ended."""
    if fold.run_status in MANUAL_END:
        return fold.run_status
    values = list((steps or fold.diagnostic).values())
    if fold.prompts:
        status = "waiting"
    elif "failed" in values:
        status = "failed"
    elif "running" in values:
        status = "running"
    elif "waiting" in values:
        status = "waiting"
    elif values and all(v in ("completed", "skipped") for v in values):
        status = "completed"
    else:
        status = "not_started"
    if (status in ("running", "waiting", "not_started") and fold.run_status == "inactive"
            and (fold.last_step_activity is None or fold.last_step_activity < (fold.run_row_id or 0))):
        status = "inactive"
    return status


def finish(fold: Fold) -> Projection:
    """The run's status, last status per workflow step and current step, from where the fold stands."""
    steps = _steps(fold)
    prompts = list(fold.prompts)
    if steps or fold.run_status in MANUAL_END:
        current = _current_step(steps, fold.last_entered, prompts)
    else:
        current = _current_step(dict(fold.diagnostic), fold.last_diagnostic, prompts)
    return Projection(_status(fold, steps), steps, current, fold.prompts, fold.last_id, fold.last_activity, fold)


def status_of(rows: Iterable[Row]) -> str:
    """`project(rows).status`, without building the rest of the projection (a first feed asks it of every
    run in the database)."""
    fold = advance(EMPTY, rows)
    return _status(fold, _steps(fold))


def project(events: Iterable[Row]) -> Projection:
    """A run's projection from all its rows, read in id order (reads only the fields of `Row`, so it runs
    the same over `Event`s and the narrow `StatusRow`s)."""
    return finish(advance(EMPTY, events))


def extend(projection: Projection, rows: Iterable[Row]) -> Projection:
    """The projection `project` gives over the rows behind `projection` plus `rows`, all newer ones."""
    return finish(advance(projection.fold, rows))


_order = attrgetter("id")  # `sort_key`, read without its property: a first read sorts every run's rows


def _current_step(steps: dict[str, str], last_entered: str | None, prompts: list[Row]) -> str | None:
    """The step a person would call "where the run is": a waiting prompt's step, else the step
    most recently entered if still active, else the latest active one, else the last one seen."""
    for prompt in reversed(prompts):
        if prompt.step and prompt.step in steps:
            return prompt.step
    if last_entered and steps.get(last_entered) in ("running", "waiting"):
        return last_entered
    active = [s for s, v in steps.items() if v in ("running", "waiting", "failed")]
    if active:
        return active[-1]
    return next(reversed(steps), None) if steps else None
