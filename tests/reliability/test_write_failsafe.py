"""A failure never leaves a half-done change, a lost before-image or an `internal error`.

Real failures, not mocks, where the OS can produce them: a file-size limit (`ulimit -f`, RLIMIT_FSIZE)
makes writes fail with EFBIG, `chattr +i` makes a file or directory refuse changes even for root.
Where a failure cannot be produced on demand (a rollback that itself fails), the OS call is patched.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcs_tui.files import fsafe
from rcs_tui.state import ops, txn
from rcs_tui.state.journal import find_interrupted, read_journal
from tests import statefix as sf
from tests.conftest import RCS_TUI, tree_digest
from tests.fixtures_tasks import make_task

BIG = 300 * 1024


def limited(limit: int):
    def apply_limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply_limit


def cli(root: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([RCS_TUI, *args, "--root", str(root)], capture_output=True, text=True, timeout=60,
                          preexec_fn=limited(limit) if limit else None)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def error(proc: subprocess.CompletedProcess) -> str:
    return json.loads(proc.stderr.strip().splitlines()[-1])["error"]


@pytest.fixture
def big_tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    sf.mode(root, "forge", current_phase="executing", notes="x" * BIG)
    sf.mode(root, "ultrawork")
    sf.canonical(root, ["forge", "ultrawork"])
    return root


def test_file_size_limit_on_the_journal_changes_nothing(big_tree):
    """The write-ahead entry (with a 300 KB before-image) cannot be written: nothing may change."""
    forge = big_tree / ".rcs/state/forge-state.json"
    before = tree_digest(big_tree / ".rcs/state")
    proc = cli(big_tree, "state", "clear", "--mode", "forge", "--json", limit=200_000)
    assert proc.returncode == 1
    msg = error(proc)
    assert "file size limit" in msg and "EFBIG" in msg and "nothing was changed" in msg, msg
    assert tree_digest(big_tree / ".rcs/state") == before
    journal = big_tree / txn.JOURNAL_REL
    assert not journal.exists() or journal.read_bytes() == b"", "no torn journal entry may remain"
    big = forge.read_bytes()
    proc = cli(big_tree, "state", "clear", "--mode", "forge", "--json")
    assert proc.returncode == 0, proc.stderr
    assert not forge.exists()
    proc = cli(big_tree, "undo", "--json")
    assert proc.returncode == 0, proc.stderr
    assert forge.read_bytes() == big


def test_file_size_limit_mid_apply_rolls_back(tmp_path):
    """The transcript append hits EFBIG after state.json was replaced: state.json goes back, clear error."""
    root = tmp_path / "proj"
    root.mkdir()
    tdir = make_task(root, "t1", "codegen")
    transcript = tdir / "transcript.jsonl"
    transcript.write_bytes(b'{"pad": "' + b"y" * BIG + b'"}\n')
    before = tree_digest(root / ".rcs/tasks")
    proc = cli(root, "task", "override", "t1", "--to", "review", "--reason", "r", "--json",
               limit=transcript.stat().st_size + 20)
    assert proc.returncode == 1
    msg = error(proc)
    assert "EFBIG" in msg and "restored" in msg, msg
    assert tree_digest(root / ".rcs/tasks") == before
    assert find_interrupted(root)[0] == [] and read_journal(root) == []


def chattr(path: Path, flag: str) -> bool:
    if not shutil.which("chattr"):
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


@pytest.fixture
def all_sessions_tree(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    for sid in (None, "s1", "s2"):
        sf.mode(root, "forge", sid, current_phase="executing")
        sf.mode(root, "team", sid)
        sf.canonical(root, ["forge", "team"], sid)
    return root


@pytest.mark.parametrize("what", ["file", "dir"])
def test_immutable_file_or_dir_in_clear_all_sessions_rolls_back(all_sessions_tree, what):
    root = all_sessions_tree
    target = root / ".rcs/state/sessions/s2" / ("forge-state.json" if what == "file" else "")
    if not chattr(target, "+i"):
        pytest.skip("chattr +i is not supported here (needs root and an ext4/xfs-like file system)")
    try:
        before = tree_digest(root / ".rcs/state")
        proc = cli(root, "state", "clear", "--mode", "forge", "--all-sessions", "--json")
        msg = error(proc)
        assert proc.returncode == 1
        assert "EPERM" in msg and "nothing was changed" in msg and "sessions/s2" in msg, msg
        assert what == "dir" or "restored" in msg, msg
        assert tree_digest(root / ".rcs/state") == before, "root cleared but the session not: a half-done change"
        assert find_interrupted(root)[0] == []
    finally:
        chattr(target, "-i")
    proc = cli(root, "state", "clear", "--mode", "forge", "--all-sessions", "--json")
    assert proc.returncode == 0, proc.stderr


def test_failed_rollback_leaves_an_interrupted_entry_naming_files(all_sessions_tree, monkeypatch):
    root = all_sessions_tree
    before = tree_digest(root / ".rcs/state")
    real_remove = fsafe.remove_if
    calls = []

    def failing_remove(dfd, name, expect, rel):
        calls.append(rel)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", rel)
        return real_remove(dfd, name, expect, rel)

    def failing_undo(step):
        raise OSError(errno.EROFS, "Read-only file system", step.rel)

    monkeypatch.setattr(fsafe, "remove_if", failing_remove)
    monkeypatch.setattr(txn, "_undo_step", failing_undo)
    with pytest.raises(txn.TxnError) as err:
        ops.plan_clear(root, "forge", all_sessions=True).run(root)
    msg = str(err.value)
    assert "I/O error (EIO)" in msg and calls[0] in msg and "interrupted" in msg and "rcs-tui doctor" in msg, msg
    monkeypatch.undo()
    [entry], _ = find_interrupted(root)
    proc = cli(root, "doctor", "--fix", "--json")
    assert proc.returncode in (0, 1, 3), proc.stderr  # doctor: 3 while findings remain
    assert tree_digest(root / ".rcs/state") == before, proc.stdout
    assert find_interrupted(root)[0] == []


def test_disk_full_on_the_journal_says_so(all_sessions_tree, monkeypatch):
    root = all_sessions_tree
    before = tree_digest(root / ".rcs/state")
    real = fsafe.write_all

    def full(fd, data):
        if bytes(data[:12]).lstrip(b"\n").startswith(b'{"state"'):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(fsafe, "write_all", full)
    with pytest.raises(txn.TxnError) as err:
        ops.plan_clear(root, "forge", ops.ROOT_SCOPE).run(root)
    assert "disk full (ENOSPC)" in str(err.value) and "nothing was changed" in str(err.value)
    assert tree_digest(root / ".rcs/state") == before


def test_non_finite_numbers_are_never_written(all_sessions_tree):
    root = all_sessions_tree
    path = root / ".rcs/state/forge-state.json"
    plan = txn.Plan("test", (txn.FileChange(path, "write", b'{"iteration": NaN}\n', fsafe.digest(path.read_bytes())),))
    with pytest.raises(txn.TxnError) as err:
        txn.apply(root, plan)
    assert "not strict JSON" in str(err.value) and "forge-state.json" in str(err.value)
    assert b"NaN" not in path.read_bytes()


def test_lock_wait_gives_up_once_and_names_the_holder(all_sessions_tree, monkeypatch):
    root = all_sessions_tree
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from rcs_tui.files.fsafe import Tree;"
        "from rcs_tui.state.lock import store_lock\n"
        "with store_lock(Tree(Path(sys.argv[1])), 'alice@box (console, pid 42)'):\n"
        "    print('held', flush=True); time.sleep(30)"), str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        from rcs_tui.state import lock

        monkeypatch.setattr(lock, "LOCK_TIMEOUT_S", 1.0)
        monkeypatch.setattr(lock, "_gave_up", set())
        t0 = time.monotonic()
        errors = []
        for mode in ("forge", "team"):
            with pytest.raises(txn.TxnError) as err:
                ops.plan_clear(root, mode, ops.ROOT_SCOPE).run(root)
            errors.append(str(err.value))
        assert time.monotonic() - t0 < 1.8, "the second attempt waited again"
        assert all("alice@box (console, pid 42)" in e and "nothing was changed" in e for e in errors), errors
    finally:
        holder.kill()
        holder.wait()
    assert os.path.exists(root / ".rcs/state/forge-state.json")
