"""Snapshot reader: scopes, session resolution, member health, hazards and bad files (never raises)."""

from __future__ import annotations

import os

import pytest

from rcs_tui.state.reader import read_snapshot
from tests.statefix import canonical, dead_pid, mode, pointer, state_dir, write


def health(snap):
    return {(m.mode, m.health) for m in snap.members}


def test_mode_comes_from_file_name_and_infra_files_are_never_modes(tmp_path):
    mode(tmp_path, "ultrawork", reinforcement_count=1)  # no `mode` field, no phase
    write(state_dir(tmp_path) / "run-state.json", {"active": True, "mode": "forge"})
    write(state_dir(tmp_path) / "hud-state.json", {"active": True})
    write(state_dir(tmp_path) / "notify-hook-state.json", {"active": True})
    snap = read_snapshot(tmp_path)
    assert snap.active_set() == ("ultrawork",)
    assert set(snap.root_scope.modes) == {"ultrawork"}


def test_session_scope_combined_set_is_live(tmp_path):
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", current_phase="executing", iteration=3, max_iterations=10)
    canonical(tmp_path, ["forge", "team"], "s1")
    snap = read_snapshot(tmp_path, "s1")
    assert health(snap) == {("forge", "live"), ("team", "live")}
    assert snap.resolution.source == "explicit"


def test_stale_member_orphan_and_root_survivor(tmp_path):
    canonical(tmp_path, ["team", "forge"], "s1")
    mode(tmp_path, "team", "s1", current_phase="team-exec")
    mode(tmp_path, "forge", "s1", active=False, current_phase="complete")  # stale canonical member
    mode(tmp_path, "ultrawork", "s1")  # orphan
    mode(tmp_path, "blueprint", current_phase="planning")  # root survivor while a session is current
    snap = read_snapshot(tmp_path, "s1")
    assert health(snap) == {("team", "live"), ("forge", "stale"), ("ultrawork", "orphan"),
                            ("blueprint", "root-survivor")}


def test_root_file_behind_session_tombstone_is_a_root_survivor_in_root_scope(tmp_path):
    mode(tmp_path, "team", current_phase="team-exec")
    canonical(tmp_path, ["team"])
    write(state_dir(tmp_path, "s1") / "team-state.json",
          {"mode": "team", "active": False, "current_phase": "cleared", "session_id": "s1"})
    for all_sessions in (True, False):
        snap = read_snapshot(tmp_path, all_sessions=all_sessions)
        assert health(snap) == {("team", "root-survivor")}


def test_empty_canonical_set_with_stale_top_level_skill_lists_nothing(tmp_path):
    write(state_dir(tmp_path) / "skill-active-state.json",
          {"active": False, "skill": "ultrawork", "phase": "executing", "active_skills": []})
    snap = read_snapshot(tmp_path)
    assert snap.members == () and snap.active_set() == ()


def test_legacy_single_skill_canonical_counts_one_member(tmp_path):
    write(state_dir(tmp_path) / "skill-active-state.json", {"active": True, "skill": "forge"})
    snap = read_snapshot(tmp_path)
    assert health(snap) == {("forge", "stale")}


def test_unknown_fields_are_preserved(tmp_path):
    mode(tmp_path, "forge", current_phase="executing", context_snapshot_path="x.md", nested={"a": [1]})
    f = read_snapshot(tmp_path).root_scope.modes["forge"]
    assert f.data["context_snapshot_path"] == "x.md" and f.data["nested"] == {"a": [1]}


class TestSessionResolution:
    def test_env_var_used_only_if_session_dir_exists(self, tmp_path):
        state_dir(tmp_path, "s2").mkdir(parents=True)
        snap = read_snapshot(tmp_path, environ={"RCS_SESSION_ID": "s2"})
        assert (snap.session_id, snap.resolution.source) == ("s2", "env")
        snap = read_snapshot(tmp_path, environ={"RCS_SESSION_ID": "nope"})
        assert (snap.session_id, snap.resolution.source) == (None, "root")

    def test_live_session_pointer_wins_over_root(self, tmp_path):
        state_dir(tmp_path, "s3").mkdir(parents=True)
        pointer(tmp_path, "s3")
        snap = read_snapshot(tmp_path, environ={})
        assert (snap.session_id, snap.resolution.source) == ("s3", "session.json")

    def test_dead_pointer_is_flagged_stale_dead_and_not_trusted(self, tmp_path):
        pointer(tmp_path, "s4", pid=dead_pid())
        snap = read_snapshot(tmp_path, environ={})
        assert snap.resolution.source == "root" and snap.resolution.pointer.stale_dead
        assert any("s4" in n for n in snap.resolution.notes)

    def test_reused_pid_is_stale_dead(self, tmp_path):
        pointer(tmp_path, "s5", pid_start_ticks=1)
        snap = read_snapshot(tmp_path, environ={})
        assert snap.resolution.pointer.stale_dead and "reused" in snap.resolution.pointer.reason


BAD_FILES = {
    "invalid JSON": (b"{not json", "invalid JSON"),
    "truncated mid-write": (b'{"active": true, "current_pha', "truncated"),
    "wrong type": (b"[1, 2, 3]", "expected a JSON object"),
    "binary": (b"\x00\x01\x02garbage", "binary"),
    "not utf-8": (b'{"a": "\xff\xfe"}', "not UTF-8"),
    "empty": (b"", "empty file"),
    "deeply nested": (b"[" * 100000 + b"]" * 100000, "JSON nested deeper than 100 levels"),
    "nested just under the parser limit": (b'{"a": ' + b"[" * 900 + b"]" * 900 + b"}",
                                           "JSON nested deeper than 100 levels"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_becomes_an_error_entry_and_the_rest_still_reads(tmp_path, case):
    content, expected = BAD_FILES[case]
    (state_dir(tmp_path)).mkdir(parents=True)
    (state_dir(tmp_path) / "forge-state.json").write_bytes(content)
    mode(tmp_path, "team", current_phase="team-exec")
    snap = read_snapshot(tmp_path)
    [err] = snap.errors
    assert err.path.name == "forge-state.json" and expected in err.reason
    assert "\n" not in err.reason
    assert snap.active_set() == ("team",)


def test_huge_file_is_refused_without_reading_it(tmp_path):
    state_dir(tmp_path).mkdir(parents=True)
    with open(state_dir(tmp_path) / "forge-state.json", "wb") as fh:
        fh.truncate(9 * 1024 * 1024)
    [err] = read_snapshot(tmp_path).errors
    assert "too large" in err.reason


def test_symlink_outside_rcs_is_not_followed(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"active": true}')
    state_dir(tmp_path).mkdir(parents=True)
    os.symlink(secret, state_dir(tmp_path) / "forge-state.json")
    snap = read_snapshot(tmp_path)
    assert snap.active_set() == ()
    assert "outside .rcs" in snap.errors[0].reason


def test_symlink_loop_and_fifo_and_directory_do_not_hang_or_raise(tmp_path):
    d = state_dir(tmp_path)
    d.mkdir(parents=True)
    os.symlink(d / "team-state.json", d / "team-state.json.loop")
    os.symlink(d / "team-state.json.loop", d / "team-state.json")
    os.mkfifo(d / "forge-state.json")
    (d / "ultrawork-state.json").mkdir()
    snap = read_snapshot(tmp_path)
    assert {e.path.name for e in snap.errors} == {"team-state.json", "forge-state.json", "ultrawork-state.json"}


def test_invalid_session_directory_names_are_reported_not_read(tmp_path):
    (state_dir(tmp_path) / "sessions" / "bad name!").mkdir(parents=True)
    snap = read_snapshot(tmp_path)
    assert snap.sessions == {} and "invalid session directory name" in snap.errors[0].reason


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_unreadable_file(tmp_path):
    path = mode(tmp_path, "forge")
    path.chmod(0)
    assert "unreadable" in read_snapshot(tmp_path).errors[0].reason
