"""Member health from plain file facts: live, stale, orphan and root survivor, in root and session scope."""

from __future__ import annotations

from rcs_tui.core.health import FileFacts, Verdict, classify

LIVE = FileFacts(exists=True, active=True, phase="executing")
DONE = FileFacts(exists=True, active=False, phase="completed")
TOMB = FileFacts(exists=True, active=False, phase="cleared", tombstone=True)


def rows(verdicts: list[Verdict]) -> list[tuple[str, str, bool, str]]:
    return [(v.mode, v.health, v.in_root, v.reason) for v in verdicts]


def test_canonical_members_each_get_a_reason():
    files = {"team": LIVE, "forge": FileFacts(True, False, None), "ultraqa": FileFacts(True, True, error="bad JSON"),
             "autopilot": DONE, "ultrawork": FileFacts(False, False)}
    out = classify("s1", ["team", "forge", "ultraqa", "autopilot", "ultrawork", "blueprint", "team"], files, {})
    assert rows(out) == [
        ("team", "live", False, "canonical entry and active mode file"),
        ("forge", "stale", False, "canonical entry but mode file is inactive (active:false)"),
        ("ultraqa", "stale", False, "canonical entry but mode file unreadable: bad JSON"),
        ("autopilot", "stale", False, "canonical entry but mode file is inactive (phase completed)"),
        ("ultrawork", "stale", False, "canonical entry but no mode file"),
        ("blueprint", "stale", False, "canonical entry but no mode file"),
    ]


def test_active_files_the_canonical_set_does_not_list_are_orphans_in_name_order():
    files = {"ultrawork": LIVE, "team": LIVE, "forge": DONE, "autopilot": LIVE}
    assert rows(classify("s1", ["team"], files, {})) == [
        ("team", "live", False, "canonical entry and active mode file"),
        ("autopilot", "orphan", False, "active mode file that no canonical entry lists"),
        ("ultrawork", "orphan", False, "active mode file that no canonical entry lists"),
    ]


def test_without_a_canonical_file_active_mode_files_decide():
    out = classify(None, None, {"team": LIVE, "forge": DONE}, {})
    assert rows(out) == [("team", "live", False, "active mode file (no canonical set in this scope)")]
    assert rows(classify("s1", [], {"team": LIVE}, {})) == [
        ("team", "orphan", False, "active mode file that no canonical entry lists")]


def test_session_scope_lists_every_active_root_file_as_a_survivor():
    out = classify("s1", ["team"], {"team": LIVE, "forge": TOMB},
                   {"team": LIVE, "forge": LIVE, "ultrawork": LIVE}, tombstoned_in_sessions={"team"})
    assert rows(out) == [
        ("team", "live", False, "canonical entry and active mode file"),
        ("forge", "root-survivor", True, "root file still active behind the session's tombstone"),
        ("team", "root-survivor", True, "root file still active while a session is current"),
        ("ultrawork", "root-survivor", True, "root file still active while a session is current"),
    ]


def test_a_finished_root_file_is_never_a_root_survivor():
    assert classify("s1", ["team"], {"team": LIVE}, {"forge": DONE, "team": FileFacts(True, False)}) == [
        Verdict("team", "live", False, "canonical entry and active mode file")]
    assert classify(None, ["team"], {"team": LIVE, "forge": DONE}, {}, tombstoned_in_sessions={"forge"}) == [
        Verdict("team", "live", False, "canonical entry and active mode file")]


def test_root_scope_file_hidden_by_a_session_tombstone_is_a_survivor():
    why = "root file active behind a session tombstone; it would resurrect the mode"
    out = classify(None, ["team"], {"team": LIVE, "forge": LIVE, "ultrawork": LIVE}, {"forge": LIVE},
                   tombstoned_in_sessions={"team", "forge"})
    assert rows(out) == [("team", "root-survivor", True, why), ("forge", "root-survivor", True, why),
                         ("ultrawork", "orphan", False, "active mode file that no canonical entry lists")]
    assert rows(classify(None, None, {"team": LIVE}, {}, tombstoned_in_sessions={"team"})) == [
        ("team", "root-survivor", True, why)]


def test_session_tombstones_only_matter_in_root_scope():
    out = classify("s1", ["team"], {"team": LIVE, "forge": LIVE}, {}, tombstoned_in_sessions={"team", "forge"})
    assert rows(out) == [("team", "live", False, "canonical entry and active mode file"),
                         ("forge", "orphan", False, "active mode file that no canonical entry lists")]


def test_a_finished_root_file_does_not_hide_the_active_ones_after_it():
    out = classify("s1", [], {}, {"autopilot": DONE, "blueprint": FileFacts(True, False), "team": LIVE})
    assert rows(out) == [("team", "root-survivor", True, "root file still active while a session is current")]


def test_worker_condition_rule():
    from rcs_tui.core.health import HEARTBEAT_STALE_SECONDS, worker_condition

    assert worker_condition("pid gone", True, 1.0) == "dead"  # dead wins over a fresh beat
    assert worker_condition(None, True, HEARTBEAT_STALE_SECONDS + 1) == "silent"  # whatever the alive flag says
    assert worker_condition(None, True, HEARTBEAT_STALE_SECONDS) == "alive"  # exactly at the limit: still beating
    assert worker_condition(None, None, 5.0) == "not reporting"
    assert worker_condition(None, False, None) == "alive"  # a flag but no readable time: not judged silent
