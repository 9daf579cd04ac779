"""The findings a live view keeps between changes (each scope's, while what they were judged from is unchanged)
are the findings judged afresh, after every one of many random runtime-like changes."""

from __future__ import annotations

import random

import pytest
from hostile_trees import doctor_shapes
from statefix import canonical, dead_pid, mode, pointer, state_dir, write

from rcs_tui.project.doctor import FindingCache, snapshot_findings
from rcs_tui.state.reader import read_snapshot

MODES = ("forge", "team", "blueprint", "ultrawork", "autopilot", "ultraqa")


def change(root, rng: random.Random, sessions: list[str]) -> None:
    """One change a runtime, a crash or an operator makes, anywhere in the tree."""
    sid = rng.choice([None, *sessions])
    name = rng.choice(MODES)
    kind = rng.choice(["flip", "phase", "remove", "tombstone", "torn", "canonical", "owner", "new-session",
                       "drop-session", "pointer", "handoff"])
    path = state_dir(root, sid) / f"{name}-state.json"
    if kind == "flip":
        mode(root, name, sid, current_phase="executing", active=rng.random() < 0.5)
    elif kind == "phase":
        mode(root, name, sid, current_phase=rng.choice(["complete", "executing", "failed", "cleared"]))
    elif kind == "remove" and path.is_file():
        path.unlink()
    elif kind == "tombstone":
        mode(root, name, sid, active=False, current_phase="cleared")
    elif kind == "torn":
        write(path, '{"active": true, "current_phase": "exec')
    elif kind == "canonical":
        canonical(root, rng.sample(MODES, rng.randint(0, 3)), sid)
    elif kind == "owner":
        mode(root, name, sid, current_phase="executing", owner_pid=dead_pid())
    elif kind == "handoff":
        mode(root, name, sid, active=False, current_phase="complete", handoff="Done; if you want I can look again.")
    elif kind == "new-session":
        new = f"s-{rng.randint(100, 999)}"
        sessions.append(new)
        mode(root, name, new, current_phase="executing")
    elif kind == "drop-session" and sid is not None and len(sessions) > 3:
        for f in state_dir(root, sid).iterdir():
            f.unlink()
        state_dir(root, sid).rmdir()
        sessions.remove(sid)
    elif kind == "pointer" and sessions:
        pointer(root, rng.choice(sessions), pid=rng.choice([dead_pid(), None]))


def shown(root, findings) -> list[dict]:
    """Each finding as the console shows it, with the repair it would offer."""
    return [f.as_json(root, with_plan=True) for f in findings]


@pytest.mark.parametrize("seed", range(6))
def test_kept_findings_match_findings_judged_afresh_after_random_changes(tmp_path, seed):
    rng = random.Random(seed)
    doctor_shapes(tmp_path, rng, 12)
    sessions = [f"s-{i:03d}" for i in range(12) if state_dir(tmp_path, f"s-{i:03d}").is_dir()]
    cache: FindingCache = {}
    kinds: set[str] = set()
    for step in range(40):
        current = rng.choice([None, *sessions[:3]])
        snap = read_snapshot(tmp_path, current, environ={})
        kept = snapshot_findings(snap, cache, journal=False)
        fresh = snapshot_findings(snap, journal=False)
        assert shown(tmp_path, kept) == shown(tmp_path, fresh), f"step {step}"
        change(tmp_path, rng, sessions)
        kinds.update(f.kind for f in fresh)
    assert {"stale-member", "orphan", "root-survivor", "dead-owner", "softener"} <= kinds
