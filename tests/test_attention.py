"""Who needs the operator, and why: the attention rules, the urgency of a project, a member that came back
after a clear, dead workers, the forge gate, undone actions and the timestamp form, as pure functions."""

from __future__ import annotations

import os
from types import SimpleNamespace

from statefix import canonical, mode

from rcs_tui.core import attention as att
from rcs_tui.core.history import undone_ids
from rcs_tui.core.plan_gate import gate_line, missing_plans
from rcs_tui.core.times import iso
from rcs_tui.state.metrics import parse_time
from rcs_tui.state.reader import read_snapshot

NOW = 1_900_000_000.0


def doc(**parts):
    base = {"team": {}, "rp1": {}, "doctor": {"findings": []}}
    base.update(parts)
    return base


def snap_of(root):
    return read_snapshot(root, None, environ={})


def test_waiting_and_failed_members_and_runs_are_listed_by_scope(tmp_path):
    mode(tmp_path, "deep-interview", "s-1", active=True, lifecycle_outcome="askuserQuestion")
    mode(tmp_path, "forge", "s-1", active=False, lifecycle_outcome="failed")
    mode(tmp_path, "ralph", None, active=False, current_phase="cleared", lifecycle_outcome="failed")  # tombstone
    canonical(tmp_path, ["deep-interview"], "s-1")
    d = doc(rp1={"waiting": [{"id": "r1"}], "failed": [{"id": "r2"}]},
            team={"crew": {"workers": [{"name": "w1", "dead_reason": "pid gone"},
                                       {"name": "w2", "dead_reason": None}]}},
            doctor={"findings": [{"kind": "stale-member", "scope": "s-1", "subject": "team"},
                                 {"kind": "orphan", "scope": "root", "subject": "ultraqa"},
                                 {"kind": "root-survivor", "scope": "root", "subject": "forge"},
                                 {"kind": "file-error", "scope": "-", "subject": "x.json"}]})
    got = att.attention(d, snap_of(tmp_path))
    assert got["waiting"] == ["s-1/deep-interview", "rp1/r1"]
    assert got["failed"] == ["s-1/forge", "rp1/r2"]
    assert got["dead"] == ["crew/w1"]
    assert got["stale"] == ["root/ultraqa", "s-1/team"]
    assert got["root_survivors"] == ["root/forge"]


def test_userinterlude_waits_too_and_a_tombstone_never_does(tmp_path):
    mode(tmp_path, "team", None, active=True, lifecycle_outcome="userinterlude")
    mode(tmp_path, "forge", None, active=False, current_phase="cleared", lifecycle_outcome="askuserQuestion")
    assert att.attention(doc(), snap_of(tmp_path))["waiting"] == ["root/team"]


def test_rank_is_the_most_urgent_kind_present():
    assert att.rank({"waiting": ["a"], "dead": ["b"]}, 0) == "waiting"
    assert att.rank({"failed": ["a"], "running": ["b"]}, 0) == "failed"
    assert att.rank({"dead": ["b"]}, 0) == "trouble"
    assert att.rank({"stale": ["b"]}, 3) == "trouble"
    assert att.rank({"root_survivors": ["b"]}, 0) == "trouble"
    assert att.rank({"resurrected": ["b"]}, 0) == "trouble"
    assert att.rank({"running": ["x"]}, 0) == "running"
    assert att.rank({}, 2) == "running"
    assert att.rank({"waiting": []}, 0) == "idle"
    assert att.rank(None, 0) == "trouble"  # unreadable: seen with the trouble


def test_every_kind_has_its_words():
    assert att.count_words(att.BY_KEY["dead"], 1) == "1 dead worker"
    assert att.count_words(att.BY_KEY["dead"], 2) == "2 dead workers"
    assert att.ALERT_KINDS == ("waiting", "failed", "dead", "silent", "stale", "resurrected", "stale_pointer")
    assert [k.key for k in att.NEEDS_YOU] == ["waiting", "failed", "dead", "silent", "stale", "root_survivors",
                                              "resurrected", "stale_pointer"]
    assert att.ALERT_NEWS["dead"] == "worker died" and "root_survivors" not in att.ALERT_NEWS


def clear_entry(eid, at, scope="root", action="state clear forge", complete=True, **extra):
    return {"id": eid, "at": iso(at, ms=True), "action": action, "complete": complete,
            "summary": {"mode": "forge", "scope": scope}, **extra}


def test_a_member_written_active_after_its_clear_came_back(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    os.utime(path, (NOW - 10, NOW - 10))
    snap = snap_of(tmp_path)
    assert att.resurrected(snap, [clear_entry("e1", NOW - 60)], NOW, parse_time) == ["root/forge"]
    # written before the clear: not a comeback; an undone clear, an unfinished one, another action: none
    assert att.resurrected(snap, [clear_entry("e1", NOW - 5)], NOW, parse_time) == []
    undone = [clear_entry("e1", NOW - 60), {"id": "e2", "at": iso(NOW - 30, ms=True), "undoes": "e1"}]
    assert att.resurrected(snap, undone, NOW, parse_time) == []
    assert att.resurrected(snap, [clear_entry("e1", NOW - 60, complete=False)], NOW, parse_time) == []
    assert att.resurrected(snap, [clear_entry("e1", NOW - 60, action="task override")], NOW, parse_time) == []
    old = NOW - att.COMEBACK_WINDOW - 1
    os.utime(path, (old + 0.5, old + 0.5))
    assert att.resurrected(snap_of(tmp_path), [clear_entry("e1", old)], NOW, parse_time) == []


def test_a_clear_everywhere_watches_every_scope(tmp_path):
    for sid in ("s-1", "s-2"):
        p = mode(tmp_path, "forge", sid, active=True, current_phase="executing")
        os.utime(p, (NOW - 10, NOW - 10))
    snap = snap_of(tmp_path)
    entry = clear_entry("e1", NOW - 60, scope="all_sessions")
    assert att.resurrected(snap, [entry], NOW, parse_time) == ["s-1/forge", "s-2/forge"]
    assert att.resurrected(snap, [clear_entry("e1", NOW - 60, scope="s-2")], NOW, parse_time) == ["s-2/forge"]
    assert att.resurrected(snap, [clear_entry("e1", NOW - 60, scope="s-9")], NOW, parse_time) == []


def test_a_dead_worker_is_one_finding_naming_its_task():
    worker = SimpleNamespace(name="w1", dead_reason="pid 4242 gone", current_task_id="7")
    alive = SimpleNamespace(name="w2", dead_reason=None, current_task_id=None)
    idle = SimpleNamespace(name="w3", dead_reason="no heartbeat", current_task_id=None)
    teams = {"crew": SimpleNamespace(workers=[worker, alive, idle])}
    assert att.dead_worker_findings(teams) == [
        {"id": "dead-worker:crew:w1", "kind": "dead-worker", "severity": "warn", "scope": "team crew",
         "subject": "w1", "message": "team crew worker w1 has a dead heartbeat (pid 4242 gone) while holding task 7",
         "advice": "restart w1 from the team's runtime (its tmux session is `tmux_session` in "
                   ".rcs/state/team/crew/config.json) or stop the team; task 7 stays in progress until a worker "
                   "takes it again; rcs-tui does not start or stop workers"},
        {"id": "dead-worker:crew:w3", "kind": "dead-worker", "severity": "warn", "scope": "team crew",
         "subject": "w3", "message": "team crew worker w3 has a dead heartbeat (no heartbeat)",
         "advice": "restart w3 from the team's runtime (its tmux session is `tmux_session` in "
                   ".rcs/state/team/crew/config.json) or stop the team; rcs-tui does not start or stop workers"}]


def test_the_forge_gate_needs_a_prd_and_a_test_spec():
    assert missing_plans(()) == ("prd-*.md", "test-spec-*.md")
    assert missing_plans(("prd-login.md", "notes.md")) == ("test-spec-*.md",)
    assert missing_plans(("prd-a.md", "test-spec-a.md")) == ()
    assert missing_plans(("PRD-a.md", "test-spec-a.txt")) == ("prd-*.md", "test-spec-*.md")
    assert gate_line(()) == "**Forge Blueprint-First Gate:** UNLOCKED"
    assert gate_line(("test-spec-*.md",)) == ("**Forge Blueprint-First Gate:** BLOCKED (missing test-spec-*.md "
                                             "in .rcs/plans/)")


def test_undo_and_redo_decide_what_is_undone():
    a, b = {"id": "a"}, {"id": "b"}
    assert undone_ids([a, b]) == set()
    assert undone_ids([a, {"id": "u1", "undoes": "a"}]) == {"a"}
    assert undone_ids([a, {"id": "u1", "undoes": "a"}, {"id": "r1", "redoes": "a"}]) == {"u1"}
    # clear, undo, redo, undo, redo: the clear holds; only the two undos are undone, nothing is left to redo
    chain = [a, {"id": "u1", "undoes": "a"}, {"id": "r1", "redoes": "a"}, {"id": "u2", "undoes": "r1"},
             {"id": "r2", "redoes": "r1"}]
    assert undone_ids(chain) == {"u1", "u2"}
    assert undone_ids([*chain, {"id": "u3", "undoes": "r2"}]) == {"a", "r1", "r2"}
    assert undone_ids([{"id": "u9", "undoes": "gone"}]) == {"gone"}  # its original rotated away
    assert undone_ids([a, {"id": "u1", "undoes": "a"}, {"id": "r1", "redoes": "a"}, {"id": "u2", "undoes": "r1"}]) \
        == {"a", "r1"}
    assert undone_ids([a, {"id": "u1", "undoes": "a"}, {"id": "u2", "undoes": "u1"}]) == {"u1"}


def test_one_timestamp_form():
    assert iso(0) == "1970-01-01T00:00:00Z"
    assert iso(1.2345, ms=True) == "1970-01-01T00:00:01.234Z"
    assert iso(1_764_106_896.953, ms=True) == "2025-11-25T21:41:36.953Z"


def test_running_members_and_a_finished_mode_is_neither_waiting_nor_failed(tmp_path):
    mode(tmp_path, "forge", None, active=True, current_phase="executing")
    mode(tmp_path, "team", None, active=False, lifecycle_outcome="finished")
    canonical(tmp_path, ["forge"], None)
    got = att.attention(doc(), snap_of(tmp_path))
    assert got["running"] == ["root/forge"]
    assert got["failed"] == [] and got["waiting"] == []


def test_the_comeback_window_and_the_write_time_are_exact_bounds(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    cleared_at = NOW - att.COMEBACK_WINDOW
    os.utime(path, (cleared_at + 1, cleared_at + 1))
    assert att.resurrected(snap_of(tmp_path), [clear_entry("e1", cleared_at)], NOW, parse_time) == ["root/forge"]
    at = NOW - 60
    os.utime(path, (at, at))  # written in the very instant of the clear: not after it
    assert att.resurrected(snap_of(tmp_path), [clear_entry("e1", at)], NOW, parse_time) == []


def test_other_journal_entries_never_hide_a_comeback(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    os.utime(path, (NOW - 10, NOW - 10))
    entries = [{"id": "t1", "at": iso(NOW - 90, ms=True), "action": "task override", "complete": True,
                "summary": "not a mapping"}, clear_entry("e1", NOW - 60)]
    assert att.resurrected(snap_of(tmp_path), entries, NOW, parse_time) == ["root/forge"]


def test_an_action_rotated_out_of_the_journal_still_has_a_history():
    # a redo of an action no longer read, then its undo: the action and the redo are undone
    assert undone_ids([{"id": "r9", "redoes": "gone"}, {"id": "u9", "undoes": "r9"}]) == {"r9", "gone"}
    assert undone_ids([{"id": "r9", "redoes": "gone"}]) == set()
    # redoing an undo removes the effect again
    a = {"id": "a"}
    chain = [a, {"id": "u1", "undoes": "a"}, {"id": "u2", "undoes": "u1"}, {"id": "r1", "redoes": "u1"}]
    assert undone_ids(chain) == {"a", "u2"}


def test_timestamps_are_utc_whatever_the_local_zone(monkeypatch):
    import time
    from datetime import datetime, timedelta, timezone

    from rcs_tui.core.times import iso_of

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    try:
        assert iso(0) == "1970-01-01T00:00:00Z"
        assert iso(1.5, ms=True) == "1970-01-01T00:00:01.500Z"
        plus_one = timezone(timedelta(hours=1))
        assert iso_of(datetime(2026, 11, 27, 21, 0, 0, 250000, tzinfo=plus_one)) == "2026-11-27T20:00:00.250Z"
        assert iso_of(datetime(2026, 11, 27, 21, 0, 0, 250000, tzinfo=plus_one), ms=False) == "2026-11-27T20:00:00Z"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_clear_entry_without_a_usable_summary_is_skipped(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    os.utime(path, (NOW - 10, NOW - 10))
    broken = {**clear_entry("e1", NOW - 60), "summary": "not a mapping"}
    assert att.resurrected(snap_of(tmp_path), [broken], NOW, parse_time) == []


def test_a_comeback_names_its_clear_when_it_ran_and_when_the_member_was_written_again(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    os.utime(path, (NOW - 10, NOW - 10))
    snap = snap_of(tmp_path)
    got = att.comebacks(snap, [clear_entry(7, NOW - 60)], NOW, parse_time)
    assert got == {"root/forge": att.Comeback("7", NOW - 60, NOW - 10)}
    assert type(got["root/forge"].entry) is str
    # an entry naming no action is no clear, however the rest reads
    no_action = {k: v for k, v in clear_entry("e0", NOW - 60).items() if k != "action"}
    assert att.comebacks(snap, [no_action], NOW, parse_time) == {}


def test_a_clear_naming_its_mode_or_scope_with_anything_but_text_is_passed_over_not_fatal(tmp_path):
    path = mode(tmp_path, "forge", None, active=True, current_phase="executing")
    os.utime(path, (NOW - 10, NOW - 10))
    snap = snap_of(tmp_path)
    for summary in ({"mode": "forge", "scope": ["root"]}, {"mode": ["forge"], "scope": "root"},
                    {"mode": "forge"}, {"scope": "root"}):
        bad = {**clear_entry("bad", NOW - 90), "summary": summary}
        got = att.comebacks(snap, [bad, clear_entry("good", NOW - 60)], NOW, parse_time)
        assert got == {"root/forge": att.Comeback("good", NOW - 60, NOW - 10)}, summary
