"""The replace is a compare-and-swap: a runtime write landing after every check but just before the
exchange is swapped back, never lost (the gap the issue measured: 13 of 22 500 runtime writes)."""

from __future__ import annotations

import pytest

from rcs_tui.files import fsafe
from rcs_tui.state import ops, txn
from rcs_tui.state.journal import read_journal
from tests import statefix as sf

RUNTIME = b'{"active": true, "mode": "forge", "current_phase": "verifying", "iteration": 9}\n'

pytestmark = pytest.mark.skipif(fsafe._renameat2 is None, reason="renameat2 is Linux-only")


@pytest.fixture
def tree(tmp_path):
    sf.mode(tmp_path, "forge", current_phase="executing")
    sf.mode(tmp_path, "team")
    sf.canonical(tmp_path, ["forge", "team"])
    return tmp_path


def runtime_writes_just_before(monkeypatch, target, flag, side: str = "dst"):
    """Make the runtime rewrite `target` atomically right before rcs-tui's renameat2 with `flag`
    whose `side` ("src" or "dst") names it."""
    real = fsafe.renameat2
    fired: list[bool] = []

    def racing(dfd, src, dst, flags):
        if flags == flag and (src if side == "src" else dst) == target.name and not fired:
            fired.append(True)
            tmp = target.with_name(".rt.tmp")
            tmp.write_bytes(RUNTIME)
            tmp.replace(target)
        return real(dfd, src, dst, flags)

    monkeypatch.setattr(fsafe, "renameat2", racing)
    return fired


def test_exchange_puts_the_runtime_bytes_back(tree, monkeypatch):
    canon = tree / ".rcs/state/skill-active-state.json"
    op = ops.plan_clear(tree, "team", ops.ROOT_SCOPE)
    assert canon in {c.path for c in op.plan.changes}
    fired = runtime_writes_just_before(monkeypatch, canon, 2)  # RENAME_EXCHANGE
    with pytest.raises(txn.ChangedUnderneath):
        op.run(tree)
    assert fired
    assert canon.read_bytes() == RUNTIME, "the runtime's write was lost"
    assert (tree / ".rcs/state/team-state.json").exists(), "the mode file delete was rolled back"
    assert read_journal(tree) == []
    assert fsafe.leftover_temps(tree) == []


def test_delete_renames_aside_and_puts_a_changed_file_back(tree, monkeypatch):
    team = tree / ".rcs/state/team-state.json"
    op = ops.plan_clear(tree, "team", ops.ROOT_SCOPE)
    fired = runtime_writes_just_before(monkeypatch, team, 1, side="src")  # RENAME_NOREPLACE: rename aside
    with pytest.raises(txn.ChangedUnderneath):
        op.run(tree)
    assert fired
    assert team.read_bytes() == RUNTIME
    assert fsafe.leftover_temps(tree) == []


def test_symlinked_lock_file_is_refused(tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("lock-target") / "lock"
    outside.write_bytes(b"")
    (tree / ".rcs/logs").mkdir()
    (tree / ".rcs/logs/rcs-tui.lock").symlink_to(outside)
    with pytest.raises(txn.TxnError) as err:
        ops.plan_clear(tree, "team", ops.ROOT_SCOPE).run(tree)
    assert "rcs-tui.lock" in str(err.value) and "symlink" in str(err.value)
    assert outside.read_bytes() == b""
