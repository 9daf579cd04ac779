"""Incremental refresh: `refresh_snapshot(previous, changed)` must equal a full `read_snapshot` whenever
`changed` names every path that changed, for any mix of writes, deletes, renames and session dirs."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from statefix import canonical, dead_pid, mode, pointer, state_dir

from rcs_tui.state.reader import changed_sessions, read_snapshot, refresh_snapshot
from rcs_tui.state.snapshot import Snapshot

SESSIONS = ("s-a", "s-b", "s-c")
SCOPES = (None, *SESSIONS)
MODES = ("forge", "team", "blueprint", "ultrawork")
NAMES = (*(f"{m}-state.json" for m in MODES), "skill-active-state.json", "hud-state.json", "notes.json")

content = st.one_of(
    st.fixed_dictionaries({"active": st.booleans(),
                           "current_phase": st.sampled_from(["executing", "complete", "cleared", "team-exec"]),
                           "iteration": st.integers(0, 9)}),
    st.sampled_from([b"{not json", b"", b"[1, 2]", b'{"active": tr']),
)
op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(SCOPES), st.sampled_from(NAMES), content),
    st.tuples(st.just("canonical"), st.sampled_from(SCOPES), st.lists(st.sampled_from(MODES), max_size=3)),
    st.tuples(st.just("delete"), st.sampled_from(SCOPES), st.sampled_from(NAMES)),
    st.tuples(st.just("rename"), st.sampled_from(SCOPES), st.sampled_from(NAMES), st.sampled_from(SCOPES),
              st.sampled_from(NAMES)),
    st.tuples(st.just("rmsession"), st.sampled_from(SESSIONS)),
    st.tuples(st.just("mksession"), st.sampled_from(SESSIONS)),
    st.tuples(st.just("pointer"), st.sampled_from(SESSIONS), st.booleans()),
    st.tuples(st.just("badname"), st.just("bad name!")),
)


def apply(root: Path, action: tuple[Any, ...]) -> set[Path]:
    """Do one change; return the paths a watcher would report for it."""
    kind = action[0]
    if kind == "write":
        _, scope, name, doc = action
        path = state_dir(root, scope) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            return set()
        path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
        return {path}
    if kind == "canonical":
        return {canonical(root, action[2], action[1])}
    if kind == "delete":
        path = state_dir(root, action[1]) / action[2]
        if path.is_file():
            path.unlink()
        return {path}
    if kind == "rename":
        _, scope, name, to_scope, to_name = action
        src, dst = state_dir(root, scope) / name, state_dir(root, to_scope) / to_name
        if not src.is_file() or not dst.parent.is_dir():
            return set()
        os.replace(src, dst)
        return {src, dst}
    if kind == "rmsession":
        d = state_dir(root, action[1])
        files = set(d.iterdir()) if d.is_dir() else set()
        shutil.rmtree(d, ignore_errors=True)
        return files | {d}
    if kind == "mksession":
        state_dir(root, action[1]).mkdir(parents=True, exist_ok=True)
        return {state_dir(root, action[1])}
    if kind == "pointer":
        return {pointer(root, action[1], pid=None if action[2] else dead_pid())}
    (state_dir(root) / "sessions" / action[1]).mkdir(parents=True, exist_ok=True)
    return {state_dir(root) / "sessions" / action[1]}


def seed(root: Path) -> None:
    mode(root, "forge", current_phase="executing")
    for i, sid in enumerate(SESSIONS):
        mode(root, MODES[i], sid, current_phase="executing")
        mode(root, "forge", sid, active=False, current_phase="cleared")
        canonical(root, [MODES[i], "team"], sid)
    pointer(root, "s-a")


def picture(snap: Snapshot) -> dict[str, Any]:
    """What a viewer sees: every scope's modes (data, error, sha, mtime), canonical members and error,
    the members with their health, the errors, the resolution."""
    def scope(s):
        canon = s.canonical
        return {"modes": {m: (f.data, f.error, f.sha, f.mtime) for m, f in s.modes.items()},
                "canonical": (canon.members, canon.error, canon.usable) if canon else None,
                "hud": s.hud_state, "errors": s.errors}

    return {"resolution": (snap.resolution.session_id, snap.resolution.source, snap.resolution.pointer.reason),
            "root": scope(snap.root_scope), "sessions": {n: scope(s) for n, s in snap.sessions.items()},
            "members": [(m.mode, m.health, m.scope, m.reason, m.file.path if m.file else None) for m in snap.members],
            "errors": [(e.path, e.reason) for e in snap.errors]}


@settings(max_examples=80, deadline=None)
@given(rounds=st.lists(st.lists(op, min_size=1, max_size=6), min_size=1, max_size=4),
       explicit=st.sampled_from([None, "s-b"]))
def test_refresh_equals_full_read_for_random_changes(rounds, explicit):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        seed(root)
        snap = read_snapshot(root, explicit, environ={})
        for batch in rounds:
            changed: set[Path] = set()
            for action in batch:
                changed |= apply(root, action)
            snap = refresh_snapshot(snap, changed, explicit, environ={})  # each round builds on the last
            full = read_snapshot(root, explicit, environ={})
            assert picture(snap) == picture(full)
            assert snap.root_scope == full.root_scope and snap.sessions == full.sessions
            assert snap.members == full.members and snap.errors == full.errors
            # What a refresh carries over instead of visiting every scope: the newest write, who errs
            assert (snap.mode_newest, snap.erring, snap.linked) == (full.mode_newest, full.erring, full.linked)


def test_refresh_rereads_only_changed_scopes(tmp_path):
    seed(tmp_path)
    before = read_snapshot(tmp_path, environ={})
    path = mode(tmp_path, "ultrawork", "s-b", current_phase="executing")
    after = refresh_snapshot(before, {path}, environ={})
    assert after.sessions["s-a"] is before.sessions["s-a"] and after.sessions["s-c"] is before.sessions["s-c"]
    assert after.sessions["s-b"] is not before.sessions["s-b"]
    assert "ultrawork" in after.sessions["s-b"].active_modes()


def test_refresh_rereads_root_only_for_a_change_outside_the_sessions(tmp_path):
    seed(tmp_path)
    before = read_snapshot(tmp_path, environ={})
    root_file = mode(tmp_path, "team")
    mode(tmp_path, "forge", "s-new")  # a new session: read even without an event for it
    quiet = refresh_snapshot(before, {state_dir(tmp_path, "s-a") / "forge-state.json"}, environ={})
    assert quiet.root_scope is before.root_scope and "s-new" in quiet.sessions
    after = refresh_snapshot(quiet, {root_file}, environ={})
    assert "team" in after.root_scope.active_modes()
    assert after.root_scope == read_snapshot(tmp_path, environ={}).root_scope


def test_scope_reached_through_a_symlink_is_always_reread(tmp_path):
    seed(tmp_path)
    elsewhere = tmp_path / ".rcs" / "elsewhere"
    mode(tmp_path, "forge", "s-a")
    os.symlink(tmp_path / ".rcs" / "state" / "sessions" / "s-a", elsewhere)
    os.symlink(elsewhere, state_dir(tmp_path, "s-link"))
    before = read_snapshot(tmp_path, environ={})
    assert before.sessions["s-link"].linked
    mode(tmp_path, "team", "s-a")  # the event names s-a only, yet s-link shows the same directory
    after = refresh_snapshot(before, {state_dir(tmp_path, "s-a") / "team-state.json"}, environ={})
    assert after.sessions["s-link"] == read_snapshot(tmp_path, environ={}).sessions["s-link"]


def test_changed_sessions_maps_paths_to_session_names(tmp_path):
    from rcs_tui.files.layout import Layout

    layout = Layout(tmp_path)
    paths = [layout.sessions / "s-a" / "forge-state.json", layout.sessions / "s-b", layout.sessions,
             layout.state / "forge-state.json", layout.team / "t" / "config.json", tmp_path / "elsewhere"]
    assert changed_sessions(layout, paths) == {"s-a", "s-b"}
