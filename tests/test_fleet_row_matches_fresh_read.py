"""A live fleet row is kept small (mode files with shared names and directories, outcomes and mode summaries
shared between files and projects); after any mix of changes, what it shows must equal a fresh read of the
project, and a document already shown must not change when later reads share its parts."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from statefix import canonical, mode, pointer, state_dir, write

from rcs_tui.core.lifecycle import is_active_doc, lifecycle_outcome
from rcs_tui.project.feed import SnapshotFeed

SESSIONS = ("s-a", "s-b", "s-c")
SCOPES = (None, *SESSIONS)
MODES = ("forge", "team", "blueprint", "ultrawork")
LONG_PHASE = "phase-" + "x" * 80  # longer than any summary that is shared
PHASES = ("executing", "complete", "cleared", "team-exec", "failed", "blocked_on_user", LONG_PHASE)

fields = st.fixed_dictionaries(
    {"active": st.booleans(), "current_phase": st.sampled_from(PHASES), "iteration": st.integers(0, 4)},
    optional={"lifecycle_outcome": st.sampled_from(["finished", "blocked", "paused", "Complete", "x" * 70]),
              "run_outcome": st.sampled_from(["failed", "done", "progress"]),
              "error": st.sampled_from(["boom", ""]), "completed_at": st.just("2026-11-25T21:41:36.953Z")})
change = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(SCOPES), st.sampled_from(MODES), fields),
    st.tuples(st.just("garbage"), st.sampled_from(SCOPES), st.sampled_from(MODES)),
    st.tuples(st.just("delete"), st.sampled_from(SCOPES), st.sampled_from(MODES)),
    st.tuples(st.just("canonical"), st.sampled_from(SCOPES), st.lists(st.sampled_from(MODES), max_size=2)),
)


def apply(root: Path, action: tuple[Any, ...]) -> set[Path]:
    """Make one change; return the paths a watcher would report for it."""
    kind, scope = action[0], action[1]
    if kind == "write":
        return {write(state_dir(root, scope) / f"{action[2]}-state.json", action[3])}
    if kind == "garbage":
        return {write(state_dir(root, scope) / f"{action[2]}-state.json", '{"active": tr')}
    if kind == "delete":
        path = state_dir(root, scope) / f"{action[2]}-state.json"
        path.unlink(missing_ok=True)
        return {path}
    return {canonical(root, action[2], scope)}


def seed(root: Path) -> None:
    mode(root, "forge", current_phase="executing")
    for i, sid in enumerate(SESSIONS):
        mode(root, MODES[i], sid, current_phase="executing", iteration=1)
        mode(root, "team", sid, active=False, current_phase="complete", iteration=3)
        canonical(root, [MODES[i]], sid)
    pointer(root, "s-a")


def comparable(doc: dict[str, Any]) -> str:
    """The document as printed, without the parts that differ between any two reads (time, sequence)."""
    return json.dumps({k: v for k, v in doc.items() if k not in ("taken_at", "seq")}, sort_keys=True)


def expected_scopes(root: Path) -> list[dict[str, Any]]:
    """The summary worked out from the files on disk, without the reader: every mode file that is active or
    has an outcome, with its fields as the file says them."""
    out = []
    for scope in SCOPES:
        modes = {}
        for m in sorted(MODES):
            path = state_dir(root, scope) / f"{m}-state.json"
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            active, outcome = is_active_doc(data), lifecycle_outcome(data).value
            if active or outcome:
                phase = data.get("current_phase")
                modes[m] = {"active": active, "outcome": outcome, "phase": phase, "iteration": data.get("iteration"),
                            "tombstone": data.get("active") is False and phase == "cleared"}
        if modes:
            out.append({"scope": scope or "root", "modes": modes})
    return out


@settings(max_examples=60, deadline=None)
@given(rounds=st.lists(st.lists(change, min_size=1, max_size=5), min_size=1, max_size=4))
def test_followed_row_equals_a_fresh_read_after_random_changes(rounds):
    with tempfile.TemporaryDirectory() as tmp:
        roots = [Path(tmp) / "one", Path(tmp) / "two"]
        for root in roots:
            seed(root)
        feeds = [SnapshotFeed(root, summary=True, rp1_db=Path(tmp) / "no-rp1.db", clock=lambda: 1.8e9)
                 for root in roots]
        shown: list[tuple[dict[str, Any], str]] = []
        for feed in feeds:
            feed.first_look()
            doc = feed.document()
            shown.append((doc, comparable(doc)))
        for batch in rounds:
            for root, feed in zip(roots, feeds, strict=True):  # the same changes in both: most parts shared
                changed: set[Path] = set()
                for action in batch:
                    changed |= apply(root, action)
                doc = feed.document(changed)
                fresh = SnapshotFeed(root, summary=True, rp1_db=Path(tmp) / "no-rp1.db", clock=lambda: 1.8e9)
                assert comparable(doc) == comparable(fresh.document())
                assert doc["scopes"] == expected_scopes(root)
                shown.append((doc, comparable(doc)))
                snap = feed.loader.world.snapshot
                for scope in (snap.root_scope, *snap.sessions.values()):
                    for f in scope.modes.values():
                        raw = f.path.read_bytes()
                        assert f.path == scope.dir / f"{f.mode}-state.json"
                        assert f.sha == hashlib.sha256(raw).hexdigest()
        for doc, printed in shown:  # nothing shown earlier changed under a later read
            assert comparable(doc) == printed
