"""The flight recorder's rule: which events lead from one picture of a project to the next, and replaying
them gives the second picture back (what the recorder relies on after a crash)."""

from __future__ import annotations

import random

from rcs_tui.core.changes import apply, diff, empty
from rcs_tui.state.metrics import parse_time

T0 = 1_800_000_000.0


def member(phase="executing", iteration=1, health="live", outcome=None, writer=None):
    return {"phase": phase, "iteration": iteration, "health": health, "outcome": outcome, "writer": writer}


def picture(at, members=None, **sections):
    return {**empty(), "at": at, "members": members or {}, **sections}


def clear_entry(eid, at, mode="forge", scope="root", **extra):
    return {"id": eid, "at": at, "action": f"state clear {mode}", "actor": "me@box (console, pid 7)",
            "complete": True, "summary": {"mode": mode, "scope": scope}, **extra}


def iso(ts):
    from rcs_tui.core.times import iso as fmt

    return fmt(ts, ms=True)


def kinds(events):
    return [(e["kind"], e["subject"]) for e in events]


def test_phase_and_iteration_changes_are_one_event_each_with_both_values():
    before = picture(T0, {"root/forge": member()})
    after = picture(T0 + 5, {"root/forge": member("verifying", 2)})
    events = diff(before, after)
    assert [(e["kind"], e["from"], e["to"]) for e in events] == [("phase", "executing", "verifying"),
                                                               ("iteration", 1, 2)]
    assert all(e["state"] == member("verifying", 2) for e in events)


def test_a_member_turning_stale_when_its_file_goes_says_so_once():
    before = picture(T0, {"s1/team": member("team-exec", None)})
    after = picture(T0 + 5, {"s1/team": member(None, None, "stale")})
    assert [(e["kind"], e["from"], e["to"]) for e in diff(before, after)] == [("health", "live", "stale")]


def test_a_member_leaving_after_an_operator_clear_names_the_journal_entry_and_actor():
    before = picture(T0, {"root/forge": member(), "s1/team": member("team-exec")})
    after = picture(T0 + 5, {"s1/team": member("team-exec")})
    journal = [clear_entry("J1", iso(T0 + 2))]
    [event] = diff(before, after, journal=journal, parse_time=parse_time)
    assert event["kind"] == "cleared" and event["subject"] == "root/forge"
    assert (event["by"], event["journal_id"], event["actor"]) == ("operator", "J1", "me@box (console, pid 7)")
    assert event["state"] is None and event["before"] == member()


def test_a_clear_of_another_scope_or_mode_or_one_undone_since_is_the_runtime():
    before = picture(T0, {"root/forge": member()})
    after = picture(T0 + 5)
    for journal in ([clear_entry("J1", iso(T0 + 2), scope="s1")],
                    [clear_entry("J1", iso(T0 + 2), mode="team")],
                    [clear_entry("J1", iso(T0 + 2)), {"id": "J2", "at": iso(T0 + 3), "action": "undo",
                                                      "undoes": "J1", "complete": True}],
                    [clear_entry("J1", iso(T0 - 60))]):  # long before the previous picture
        [event] = diff(before, after, journal=journal, parse_time=parse_time)
        assert (event["kind"], event["by"], event["journal_id"]) == ("cleared", "runtime", None), journal


def test_a_clear_in_all_sessions_and_a_pending_entry_count_as_the_operator():
    before = picture(T0, {"s9/forge": member()})
    after = picture(T0 + 5)
    journal = [clear_entry("J1", iso(T0 + 1), scope="all_sessions", complete=False)]
    [event] = diff(before, after, journal=journal, parse_time=parse_time)
    assert (event["by"], event["journal_id"]) == ("operator", "J1")


def test_a_file_left_inactive_ended_and_a_tombstone_was_cleared():
    before = picture(T0, {"root/forge": member(), "s1/forge": member()})
    after = picture(T0 + 5)
    gone = {"root/forge": {"phase": "complete", "outcome": "finished", "tombstone": False},
            "s1/forge": {"phase": "cleared", "outcome": None, "tombstone": True}}
    events = {e["subject"]: e for e in diff(before, after, gone=gone)}
    assert (events["root/forge"]["kind"], events["root/forge"]["phase"], events["root/forge"]["outcome"]) == (
        "ended", "complete", "finished")
    assert (events["s1/forge"]["kind"], events["s1/forge"]["by"]) == ("cleared", "runtime")


def test_a_cleared_member_that_comes_back_hours_later_is_flagged_with_the_delay_and_its_writer():
    start = picture(T0, {"root/forge": member()})
    journal = [clear_entry("J1", iso(T0 + 2))]
    gone_pic = picture(T0 + 5)
    cleared = diff(start, gone_pic, journal=journal, parse_time=parse_time)
    stamped = [{**e, "id": "h7", "ts": T0 + 5} for e in cleared]
    state = apply(start, stamped, at=T0 + 5)
    writer = {"session": "rcs-123", "pid": 4242}
    back = picture(T0 + 5 + 3 * 3600, {"root/forge": member(writer=writer)})
    [event] = diff(state, back, journal=journal, parse_time=parse_time)
    assert event["kind"] == "came_back"
    assert event["after_s"] == 3 * 3600
    assert (event["cleared_by"], event["journal_id"], event["clear_id"]) == ("operator", "J1", "h7")
    assert event["writer"] == writer
    # once back, the same journal entry never explains a later disappearance
    state = apply(state, [{**event, "ts": back["at"]}])
    [again] = diff(state, picture(back["at"] + 1), journal=journal, parse_time=parse_time)
    assert (again["kind"], again["by"]) == ("cleared", "runtime")
    # and a member that was never cleared simply appears
    [fresh] = diff(picture(T0), picture(T0 + 1, {"s2/team": member()}))
    assert fresh["kind"] == "appeared"


def test_a_member_brought_back_by_an_undo_of_its_clear_is_restored_not_came_back():
    journal = [clear_entry("J1", iso(T0 + 2))]
    state = apply(picture(T0, {"root/forge": member()}),
                  [{**e, "id": "h2", "ts": T0 + 5} for e in diff(picture(T0, {"root/forge": member()}),
                                                                 picture(T0 + 5), journal=journal,
                                                                 parse_time=parse_time)])
    journal.append({"id": "J2", "at": iso(T0 + 9), "action": "undo state clear forge", "undoes": "J1",
                    "actor": "me", "complete": True})
    [event] = diff(state, picture(T0 + 10, {"root/forge": member()}), journal=journal, parse_time=parse_time)
    assert (event["kind"], event["journal_id"], event["undoes"]) == ("restored", "J2", "J1")


def test_tasks_runs_and_workers_appear_change_and_go():
    before = picture(T0, tasks={"t1": "planning", "t2": "codegen"}, runs={"r1": "running"},
                     workers={"crew/w1": "alive"})
    after = picture(T0 + 1, tasks={"t1": "codegen", "t3": None}, runs={"r1": "waiting", "r2": "running"},
                    workers={"crew/w1": "dead"})
    events = diff(before, after)
    assert [(e["kind"], e["subject"], e["from"], e["to"], bool(e.get("added")), bool(e.get("removed")))
            for e in events] == [
        ("worker", "crew/w1", "alive", "dead", False, False),
        ("task", "t1", "planning", "codegen", False, False),
        ("task", "t2", "codegen", None, False, True),
        ("task", "t3", None, None, True, False),
        ("run", "r1", "running", "waiting", False, False),
        ("run", "r2", None, "running", True, False),
    ]


def test_a_finished_run_leaving_the_followed_runs_is_no_event_but_a_running_one_is():
    before = picture(T0, runs={"old": "completed", "lost": "running"})
    after = picture(T0 + 1, runs={})
    events = diff(before, after)
    assert [(e["subject"], e["from"], e.get("removed")) for e in events] == [("lost", "running", True)]
    assert apply(before, events, runs_now=after["runs"])["runs"] == {}


def test_nothing_changed_is_no_event():
    pic = picture(T0, {"root/forge": member()}, tasks={"t": "x"}, runs={"r": "running"}, workers={"a/b": "alive"})
    assert diff(pic, {**pic, "at": T0 + 60}) == []


def _random_picture(rng, at):
    members = {f"{s}/{m}": member(rng.choice(["executing", "verifying", None]), rng.choice([1, 2, None]),
                                  rng.choice(["live", "stale", "orphan"]), rng.choice([None, "askuserQuestion"]))
               for s in ("root", "s1") for m in ("forge", "team", "ultrawork") if rng.random() < 0.5}
    return picture(at, members, tasks={f"t{i}": rng.choice(["planning", "codegen", None])
                                       for i in range(4) if rng.random() < 0.6},
                   runs={f"r{i}": rng.choice(["running", "waiting", "failed"]) for i in range(3) if rng.random() < 0.6},
                   workers={f"crew/w{i}": rng.choice(["alive", "dead"]) for i in range(3) if rng.random() < 0.6})


def test_replaying_the_events_gives_the_second_picture_back():
    rng = random.Random(26)
    state = picture(T0)
    for step in range(300):
        after = _random_picture(rng, T0 + step)
        events = [{**e, "id": f"h{step}", "ts": T0 + step} for e in diff(state, after)]
        state = apply(state, events, at=after["at"], runs_now=after["runs"])
        for section in ("members", "tasks", "runs", "workers"):
            assert state[section] == after[section], (step, section)
