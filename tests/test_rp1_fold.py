"""A projection extended by a run's newer rows is the projection of all its rows.

The console and the status line keep each run's projection and, when the run moves on, read only the
rows written since and extend it. That is only sound if extending at any point gives exactly what a
derivation over every row gives: status, step states and their order, current step, pending prompts,
newest id and activity. Random runs check every split point; an independent reading of "a prompt is
pending until a later row answers it" checks the prompts themselves.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rcs_tui.rp1.projection import Event, extend, parse_data, project, status_of
from rcs_tui.rp1.status_store import projection_from_json, projection_json

STEPS = [None, "", "plan", "build", "task-builder:building", "feature-verifier:verifying"]
UNITS = [None, None, None, "", "T1"]
STATUSES = ["running", "waiting", "completed", "failed", "skipped", "cancelled", "abandoned", "inactive", ""]
TYPES = ["status_change"] * 6 + ["waiting_for_user", "waiting_for_user", "artifact_registered"]

row = st.tuples(st.sampled_from(TYPES), st.sampled_from(STEPS), st.sampled_from(UNITS),
                st.one_of(st.none(), st.sampled_from(STATUSES)), st.integers(0, 5))


def events(rows: list[tuple]) -> list[Event]:
    return [Event(i + 1, "r", type_, step, unit, {} if status is None else {"status": status},
                  f"2026-11-26T00:00:0{minute}.000Z") for i, (type_, step, unit, status, minute) in enumerate(rows)]


def answered(prompt: Event, later: list[Event]) -> bool:
    """A prompt is answered by a later run-level status row, by a later workflow row of its step, or, when it
    names no step, by any later status row."""
    for ev in later:
        if ev.type != "status_change":
            continue
        if not ev.step:
            return True
        if not prompt.step:
            return True
        if ev.step == prompt.step and not ev.unit and ":" not in ev.step:
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(row, max_size=30))
def test_extending_at_any_point_gives_the_whole_projection(rows):
    evs = events(rows)
    whole = project(evs)
    for k in range(len(evs) + 1):
        resumed = extend(project(evs[:k]), evs[k:])
        assert resumed == whole
        assert list(resumed.steps) == list(whole.steps)  # first-seen order, not only the same items
        assert resumed.fold == whole.fold
    assert status_of(evs) == whole.status  # the status alone, as a first feed asks it of every run


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(row, max_size=30))
def test_pending_prompts_are_those_no_later_row_answered(rows):
    evs = events(rows)
    expected = [e for i, e in enumerate(evs) if e.type == "waiting_for_user" and not answered(e, evs[i + 1:])]
    assert list(project(evs).pending_prompts) == expected


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(row, max_size=20), more=st.lists(row, max_size=10))
def test_a_kept_projection_read_back_extends_like_the_original(rows, more):
    """What the next process reads from its own cache resumes exactly where this one stopped."""
    evs = events(rows + more)
    kept = project(evs[:len(rows)])
    back = projection_from_json(json.loads(json.dumps(projection_json(kept))))
    assert back == kept and back.fold == kept.fold
    assert extend(back, evs[len(rows):]) == project(evs)


def test_a_row_older_than_the_projection_is_refused():
    evs = events([("status_change", "plan", None, "running", 0), ("status_change", "plan", None, "completed", 1)])
    with pytest.raises(ValueError, match="not newer"):
        extend(project(evs), evs[1:])


def test_extending_by_nothing_changes_nothing():
    evs = events([("status_change", "plan", None, "running", 0)])
    assert extend(project(evs), []) == project(evs)


def test_a_prompt_answered_by_the_new_rows_is_gone_and_its_step_runs_again():
    first = events([("status_change", "build", None, "running", 0), ("waiting_for_user", "build", None, None, 1)])
    kept = project(first)
    assert kept.status == "waiting" and [p.step for p in kept.pending_prompts] == ["build"]
    answer = Event(3, "r", "status_change", "build", None, parse_data('{"status": "running"}'), "2026-11-26T00:00:02Z")
    now = extend(kept, [answer])
    assert now.status == "running" and now.pending_prompts == () and now.current_step == "build"
    assert now.last_event_id == 3 and now.last_activity == "2026-11-26T00:00:02Z"
