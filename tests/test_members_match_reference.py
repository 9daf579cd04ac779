"""The health of every member, as the doctor and the console see it from root and from each session, is the
same as the plain derivation gives (each file's facts taken one by one from its properties): over random
trees of live, stale, orphaned, tombstoned and unreadable mode files, odd phases and root survivors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rcs_tui.core.health import FileFacts, classify
from rcs_tui.files.layout import Layout
from rcs_tui.state.reader import compute_members, read_snapshot
from rcs_tui.state.session import Resolution
from rcs_tui.state.snapshot import Member, Scope, Snapshot
from tests.statefix import canonical, state_dir, write

MODES = ("forge", "team", "ultrawork", "autopilot", "blueprint")
PHASES = ("executing", "complete", "cleared", "cancelled", "team-exec", "", None, 3, ["cleared"], "x" * 60)


def reference_members(layout: Layout, sid: str | None, snap: Snapshot) -> tuple[Member, ...]:
    """The members derived as they were before any sharing: one FileFacts per file, from its properties."""
    root, sessions = snap.root_scope, snap.sessions
    scope = root if sid is None else sessions.get(sid) or Scope(sid, layout.scope_dir(sid))

    def facts(sc: Scope) -> dict[str, FileFacts]:
        return {m: FileFacts(True, f.active, f.phase, f.tombstone, f.error) for m, f in sc.modes.items()}

    canon = scope.canonical
    members = canon.members if canon is not None and canon.usable else None
    tombstoned = {m for m, f in root.modes.items() if sid is None and f.active
                  and any(s.modes.get(m) and s.modes[m].tombstone for s in sessions.values())}
    verdicts = classify(sid, members, facts(scope), facts(root) if sid is not None else {}, tombstoned)
    entries = {e.skill: e for e in canon.entries} if canon is not None else {}
    return tuple(Member(v.mode, v.health, (root if v.in_root else scope).session_id,
                        (root if v.in_root else scope).modes.get(v.mode),
                        entries.get(v.mode) if not v.in_root else None, v.reason) for v in verdicts)


def _tree(root: Path, rng: random.Random) -> list[str]:
    sids = [f"s-{i}" for i in range(rng.randint(1, 6))]
    for sid in [None, *sids]:
        for mode in rng.sample(MODES, rng.randint(0, 4)):
            path = state_dir(root, sid) / f"{mode}-state.json"
            kind = rng.random()
            if kind < 0.1:
                write(path, '{"active": true, "current_phase": "exec')  # torn
            elif kind < 0.15:
                write(path, "[]")
            else:
                doc: dict[str, object] = {"active": rng.choice([True, False, None, 1])}
                phase = rng.choice(PHASES)
                if phase is not None:
                    doc["current_phase"] = phase
                write(path, json.dumps(doc))
        if rng.random() < 0.8:
            canonical(root, rng.sample(MODES, rng.randint(0, 3)), sid)
    return sids


@pytest.mark.parametrize("seed", range(30))
def test_members_from_every_scope_match_the_plain_derivation(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    sids = _tree(tmp_path, rng)
    layout = Layout(tmp_path)
    snap = read_snapshot(tmp_path)
    healths = set()
    for sid in [None, *sids, "s-missing"]:
        res = Resolution(sid, "explicit", snap.resolution.pointer)
        got = compute_members(layout, res, snap.root_scope, snap.sessions)
        want = reference_members(layout, sid, snap)
        assert got == want, sid
        assert [repr(m) for m in got] == [repr(m) for m in want]
        healths |= {m.health for m in got}
    assert healths, "every tree has members somewhere"


def test_the_random_trees_reach_every_health(tmp_path: Path) -> None:
    """Across the seeds above, every health a member can have shows up."""
    seen: set[str] = set()
    for seed in range(30):
        rng = random.Random(seed)
        root = tmp_path / str(seed)
        sids = _tree(root, rng)
        snap = read_snapshot(root)
        for sid in [None, *sids]:
            res = Resolution(sid, "explicit", snap.resolution.pointer)
            seen |= {m.health for m in compute_members(Layout(root), res, snap.root_scope, snap.sessions)}
    assert {"live", "stale", "orphan", "root-survivor"} <= seen, seen
