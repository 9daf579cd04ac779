"""The rp1 run rules, each stated on its own over a whole run, against the derivation.

The derivation folds a run's rows one at a time; here each rule is read off the whole list of rows
instead (the last row of a kind, whether a later row exists), as a person would check a run by hand.
Random runs must give the same status, step states and their order, current step, pending prompts,
newest id and latest activity. Also: a reader that keeps only the rows `stands_for_older` lets it keep
gets the same status, and payloads that are not JSON objects are data, never errors.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rcs_tui.rp1.projection import MANUAL_END, Event, parse_data, project, stands_for_older, status_of

STEPS = [None, "", "plan", "build", "review", "task-builder:building", "task-builder:done", "verifier:checking"]
UNITS = [None, None, None, "", "T1", "T2"]
STATUSES = ["running", "waiting", "completed", "failed", "skipped", "cancelled", "abandoned", "inactive", "", None]
TYPES = ["status_change"] * 6 + ["waiting_for_user"] * 2 + ["artifact_registered"]
ACTIVE = ("running", "waiting")

row = st.tuples(st.sampled_from(TYPES), st.sampled_from(STEPS), st.sampled_from(UNITS), st.sampled_from(STATUSES),
                st.sampled_from(["", "2026-11-26T00:00:01Z", "2026-11-26T00:00:03Z", "2026-11-26T00:00:02Z"]))
runs = st.lists(row, max_size=25)


def events(rows: list[tuple]) -> list[Event]:
    return [Event(i + 1, "r", type_, step, unit, {} if status is None else {"status": status}, created)
            for i, (type_, step, unit, status, created) in enumerate(rows)]


def plain_step(e: Event) -> bool:
    """A step of the workflow itself: a step name without an agent prefix, on no unit."""
    return bool(e.step) and ":" not in e.step and not e.unit


def workflow_row(e: Event) -> bool:
    return e.type == "status_change" and plain_step(e)


def logical(e: Event) -> str:
    """Sub-agent `agent:state` counts as `agent`; a unit row as `<step>::<unit>`."""
    base = e.step.split(":")[0] if e.step and ":" in e.step else (e.step or "")
    return f"{base}::{e.unit}" if e.unit else base


def answered(prompt: Event, later: list[Event]) -> bool:
    """A run-level status row answers every prompt; a workflow row answers its step's prompts; any status
    row answers a prompt that names no step."""
    return any(e.type == "status_change" and (not e.step or not prompt.step
                                              or (e.step == prompt.step and workflow_row(e))) for e in later)


def expected(evs: list[Event]) -> dict:
    pending = [e for i, e in enumerate(evs) if e.type == "waiting_for_user" and not answered(e, evs[i + 1:])]
    steps: dict[str, str] = {}
    for e in evs:
        if workflow_row(e) and e.status:
            steps[e.step] = e.status
    for p in pending:
        if plain_step(p):
            steps[p.step] = "waiting"
    diagnostic: dict[str, str] = {}
    for e in evs:
        if e.type == "status_change" and e.step and not workflow_row(e) and e.status:
            diagnostic[logical(e)] = e.status
    run_rows = [e for e in evs if e.type == "status_change" and not e.step and e.status]
    run_row = run_rows[-1] if run_rows else None
    ended = run_row is not None and run_row.status in MANUAL_END
    if ended:
        steps = {s: "completed" if v in ACTIVE else v for s, v in steps.items()}
    values = list((steps or diagnostic).values())
    if ended:
        status = run_row.status
    elif pending:
        status = "waiting"
    else:
        status = next((s for s in ("failed", "running", "waiting") if s in values), None) or (
            "completed" if values and set(values) <= {"completed", "skipped"} else "not_started")
    activity = [e.id for e in evs if (e.type == "status_change" and e.step) or e.type == "waiting_for_user"]
    if (status in ("running", "waiting", "not_started") and run_row is not None and run_row.status == "inactive"
            and (not activity or max(activity) < run_row.id)):
        status = "inactive"
    # Where the run is: a pending prompt's step, else the step most recently entered if still active, else
    # the latest active (or failed) one, else the last one seen.
    shown, entering = (steps, [e for e in evs if workflow_row(e) and e.status in ACTIVE]) if steps or ended else (
        diagnostic, [e for e in evs if e.type == "status_change" and e.step and not workflow_row(e)
                     and e.status in ACTIVE])
    entered = (entering[-1].step if shown is steps else logical(entering[-1])) if entering else None
    current = next((p.step for p in reversed(pending) if p.step and p.step in shown), None)
    if current is None and entered and shown.get(entered) in ACTIVE:
        current = entered
    if current is None:
        active = [s for s, v in shown.items() if v in ("running", "waiting", "failed")]
        current = active[-1] if active else (list(shown)[-1] if shown else None)
    created = [e.created_at for e in evs if e.created_at]
    return {"status": status, "steps": list(steps.items()), "current": current, "pending": pending,
            "last": evs[-1].id if evs else 0, "activity": max(created) if created else None}


@settings(max_examples=400, deadline=None)
@given(rows=runs)
def test_the_derivation_follows_every_rule(rows):
    evs = events(rows)
    got = project(evs)
    assert {"status": got.status, "steps": list(got.steps.items()), "current": got.current_step,
            "pending": list(got.pending_prompts), "last": got.last_event_id,
            "activity": got.last_activity} == expected(evs)
    assert status_of(evs) == got.status


def kept_by_the_narrow_reader(evs: list[Event]) -> list[Event]:
    """Per step, the rows from the newest back to the first that stands for the older ones (inclusive),
    plus every sub-agent prompt: what the status reader keeps instead of every row."""
    kept: dict[int, Event] = {}
    for step in {e.step or None for e in evs}:
        for e in reversed([e for e in evs if (e.step or None) == step]):
            kept[e.id] = e
            if stands_for_older(e):
                break
    for e in evs:
        if e.type == "waiting_for_user" and e.step and ":" in e.step:
            kept[e.id] = e
    return [kept[i] for i in sorted(kept)]


@settings(max_examples=400, deadline=None)
@given(rows=runs)
def test_the_rows_that_stand_for_older_ones_give_the_same_status(rows):
    evs = events(rows)
    if not any(workflow_row(e) and e.status for e in evs):
        return  # the reader derives such runs from every row
    assert status_of(kept_by_the_narrow_reader(evs)) == project(evs).status


def test_which_rows_stand_for_older_ones():
    def one(type_, step, unit=None, status="running"):
        return stands_for_older(Event(1, "r", type_, step, unit, {} if status is None else {"status": status}, ""))

    assert one("status_change", None) and not one("status_change", None, status=None)  # run row with a status
    assert one("status_change", "plan") and not one("status_change", "plan", status=None)
    assert one("status_change", "agent:state") and one("status_change", "agent:state", status=None)
    assert not one("status_change", "plan", unit="T1") and not one("waiting_for_user", "plan")
    assert not one("artifact_registered", "plan")


def test_payloads_that_are_not_objects_are_data():
    assert parse_data(None) == {}
    assert parse_data('{"status": "running"}') == {"status": "running"}
    assert parse_data(b'{"status": "caf\xc3\xa9"}') == {"status": "café"}
    assert parse_data(b'{"status": "\xff"}') == {"status": "\ufffd"}  # bad UTF-8 replaced, never an error
    assert parse_data("[1, 2]") == {"_value": [1, 2]}
    assert parse_data("not json") == {"_raw": "not json"}
    assert parse_data('{"n": NaN}') == {"_raw": '{"n": NaN}'}
    assert parse_data("x" * 3000) == {"_raw": "x" * 2000}
    assert parse_data(b"\xff\xfe") == {"_raw": "\ufffd\ufffd"}


def status_rows(*rows: tuple) -> list[Event]:
    """(type, step, status[, unit]) rows in id order."""
    return events([(r[0], r[1], r[3] if len(r) > 3 else None, r[2], "") for r in rows])


SC, ASK = "status_change", "waiting_for_user"


def test_where_the_run_is():
    """A pending prompt's step; else the step most recently entered while still active; else the latest
    active or failed one; else the last one seen. Sub-agent steps count only when no plain step exists."""
    cases = [
        ([(SC, "plan", "running"), (SC, "build", "running"), (SC, "plan", "running")], "plan"),  # re-entered
        ([(SC, "build", "running"), (SC, "plan", "running"), (SC, "build", "waiting")], "build"),  # waiting counts
        ([(SC, "plan", "running"), (SC, "build", "running"), (SC, "build", "completed")], "plan"),
        ([(SC, "plan", "waiting"), (SC, "build", "running"), (SC, "build", "completed")], "plan"),
        ([(SC, "plan", "failed"), (SC, "build", "completed")], "plan"),
        ([(SC, "plan", "completed"), (SC, "build", "skipped")], "build"),
        ([(SC, "plan", "running"), (SC, "build", "running"), (ASK, "plan", None)], "plan"),  # the prompt's step
        ([(SC, "a:x", "running"), (SC, "b:y", "running"), (SC, "a:z", "waiting")], "a"),  # sub-agents only
        ([(SC, "a:x", "running"), (SC, "b:y", "running"), (SC, "a:z", "running")], "a"),
        ([(SC, "b:y", "running"), (SC, "a:x", "running"), (SC, "a:x", "completed")], "b"),
        ([(SC, "build", "running", "T1"), (SC, "build", "running", "T2"), (SC, "build", "waiting", "T1")],
         "build::T1"),
        ([(ASK, None, None)], None),
    ]
    for rows, current in cases:
        evs = status_rows(*rows)
        assert project(evs).current_step == current, rows
        assert expected(evs)["current"] == current, rows


def test_when_a_run_reads_inactive():
    """A run-level `inactive` row after the last step activity makes a running, waiting or not started run
    inactive; a later step row or prompt is activity that wakes it; an ended run stays ended."""
    cases = [
        ([(SC, "plan", "running"), (SC, None, "inactive")], "inactive"),
        ([(SC, "plan", "waiting"), (SC, None, "inactive")], "inactive"),
        ([(SC, None, "inactive")], "inactive"),
        ([(SC, "plan", "running"), (SC, None, "inactive"), (SC, "plan", "running")], "running"),
        ([(SC, "plan", "running"), (SC, None, "inactive"), (ASK, "plan", None)], "waiting"),  # a prompt wakes it
        ([(SC, "plan", "running"), (SC, None, "inactive"), (SC, "agent:x", None)], "running"),  # any step row
        ([(SC, "plan", "completed"), (SC, None, "inactive")], "completed"),
        ([(SC, "plan", "failed"), (SC, None, "inactive")], "failed"),
        ([(SC, "plan", "running"), (SC, None, "cancelled")], "cancelled"),
    ]
    for rows, status in cases:
        evs = status_rows(*rows)
        assert project(evs).status == status, rows
        assert expected(evs)["status"] == status, rows


def test_an_event_as_json():
    """What `rcs-tui rp1 run --json` prints for each event: its fields, the status read from its payload."""
    ev = Event(7, "run-1", "status_change", "build", "T1", {"status": "running", "note": "x"},
               "2026-11-26T00:00:01Z", "parent-3")
    assert ev.to_json() == {"id": 7, "run_id": "run-1", "type": "status_change", "step": "build", "unit": "T1",
                            "status": "running", "data": {"status": "running", "note": "x"},
                            "parent_step_id": "parent-3", "created_at": "2026-11-26T00:00:01Z"}
    assert Event(8, "r", "artifact_registered", None, None, {"status": 3}, "").to_json()["status"] is None
