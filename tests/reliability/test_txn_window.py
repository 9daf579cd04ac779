"""A runtime write that lands while rcs-tui is flushing its own bytes must not be silently overwritten.

The runtime never takes rcs-tui's lock, so the only protection is the digest re-check. These tests put a
runtime write exactly inside the slow part of a transaction (the fsync of rcs-tui's new bytes) and
assert the action is refused and the runtime's bytes survive, and that the journal's before-image is
the very content the check accepted.
"""

from __future__ import annotations

import base64
import json
import os

import pytest

from rcs_tui.files.io import digest, dump_json
from rcs_tui.state import ops, txn
from rcs_tui.state.journal import read_journal
from tests import statefix as sf

RUNTIME = dump_json({"active": True, "current_phase": "verifying", "iteration": 9, "max_iterations": 10})


@pytest.fixture
def tree(tmp_path):
    sf.mode(tmp_path, "forge", current_phase="executing", iteration=3, max_iterations=10)
    sf.mode(tmp_path, "ultrawork")
    sf.canonical(tmp_path, ["forge", "ultrawork"])
    return tmp_path


def test_runtime_write_during_flush_is_refused_not_lost(tree, monkeypatch):
    """The runtime rewrites forge-state.json while rcs-tui fsyncs; the clear must refuse, forge keeps its bytes."""
    op = ops.plan_clear(tree, "ultrawork")
    target = tree / ".rcs/state/forge-state.json"
    op_paths = {c.path for c in op.plan.changes}
    # make forge part of the plan: drop it from the canonical set as well as ultrawork's file
    assert target not in op_paths
    plan = txn.Plan(op.plan.action, (*op.plan.changes,
                                     txn.FileChange(target, "write", dump_json({"active": False}),
                                                    digest(target.read_bytes()), "test")), summary={})
    real_fsync = os.fsync
    fired = []

    def fsync_and_runtime_write(fd):
        real_fsync(fd)
        if not fired:
            fired.append(True)
            tmp = target.with_name(".runtime.tmp")
            tmp.write_bytes(RUNTIME)
            os.replace(tmp, target)

    monkeypatch.setattr(os, "fsync", fsync_and_runtime_write)
    with pytest.raises(txn.ChangedUnderneath):
        txn.apply(tree, plan)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_bytes() == RUNTIME
    assert (tree / ".rcs/state/ultrawork-state.json").exists(), "a refused plan changed nothing"
    assert read_journal(tree) == []
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")], "no temp file left behind"


def test_journal_before_image_is_the_checked_content(tree):
    """Every journalled before-image is byte for byte the content whose digest the plan was checked against."""
    op = ops.plan_clear(tree, "ultrawork")
    expected = {str(c.path.relative_to(tree)): c.expect for c in op.plan.changes}
    assert None not in expected.values(), "both files exist, so both before-images must be journalled"
    op.run(tree)
    [entry] = read_journal(tree)
    journalled = {item["path"]: digest(base64.b64decode(item["before_b64"])) for item in entry["files"]
                  if item["before_b64"] is not None}
    assert journalled == expected


def test_runtime_write_after_the_check_is_not_journalled_or_overwritten(tree, monkeypatch):
    """The runtime rewrites the canonical file while rcs-tui syncs its journal entry (after the check).

    The change must be refused: neither the runtime's unchecked bytes nor a stale before-image may end up
    as an undoable entry, and the runtime's bytes stay on disk.
    """
    op = ops.plan_clear(tree, "ultrawork")
    canon = tree / ".rcs/state/skill-active-state.json"
    runtime = dump_json({**json.loads(canon.read_bytes()), "updated_at": "runtime-was-here"})
    real_fsync = os.fsync
    fired = []

    def fsync_then_runtime_write(fd):
        real_fsync(fd)
        if not fired and os.readlink(f"/proc/self/fd/{fd}").endswith(txn.JOURNAL_REL.name):
            fired.append(True)
            canon.write_bytes(runtime)

    monkeypatch.setattr(os, "fsync", fsync_then_runtime_write)
    with pytest.raises(txn.ChangedUnderneath):
        op.run(tree)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert fired, "the journal entry was never synced"
    assert canon.read_bytes() == runtime
    assert (tree / ".rcs/state/ultrawork-state.json").exists()
    assert read_journal(tree) == []
