"""rcs-tui never writes, deletes or follows a link outside `.rcs/state`, `.rcs/tasks`, `.rcs/logs`, nor
writes through a hard link to a file outside them (the lock file, a task's transcript).

Journal entries are untrusted: a line naming a file outside those trees (or reaching one through a
symlink) is refused with the entry and path named, and nothing is written. Links swapped in between a
plan and its write are caught at the moment of the write, because every path is walked through
directory descriptors without following links.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from rcs_tui.state import tasks, txn
from rcs_tui.state.journal import read_journal
from tests import statefix as sf
from tests.fixtures_tasks import make_task

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def forged_entry(path: str, before: bytes | None, after: bytes | None, state: str = "done",
                 entry_id: str = "20260101T000000-evil01") -> str:
    return json.dumps({"state": state, "id": entry_id, "at": "2026-01-01T00:00:00.000Z", "actor": "x",
                       "action": "state clear forge", "summary": {}, "appends": [],
                       "files": [{"path": path, "why": "x",
                                  "before_b64": base64.b64encode(before).decode() if before is not None else None,
                                  "after_sha": hashlib.sha256(after).hexdigest() if after is not None else None}]})


def journal_with(root: Path, *lines: str) -> None:
    (root / ".rcs/logs").mkdir(parents=True, exist_ok=True)
    (root / JOURNAL).write_text("".join(line + "\n" for line in lines))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    sf.mode(root, "forge", current_phase="executing")
    sf.canonical(root, ["forge"])
    return root


@pytest.mark.parametrize("victim", ["victim.txt", ".git/hooks/pre-commit", "../outside.txt", "/tmp/abs-victim"])
def test_undo_of_a_forged_entry_never_writes_outside(project, run_cli, victim):
    target = Path(victim) if victim.startswith("/") else project / victim
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"current")
    journal_with(project, forged_entry(victim, b"#!/bin/sh\nevil\n", b"current"))
    r = run_cli("undo", "--root", str(project), "--json")
    assert r.code == 1
    assert "20260101T000000-evil01" in r.error and victim in r.error and "refused" in r.error, r.error
    assert target.read_bytes() == b"current"
    r = run_cli("doctor", "--fix", "--root", str(project), "--json")
    assert target.read_bytes() == b"current"
    if victim.startswith("/"):
        target.unlink()


def test_pending_entry_under_a_symlinked_session_dir_is_not_rolled_back(project, tmp_path, run_cli):
    """`doctor --fix` must not delete a file outside the project through a symlinked session directory."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    precious = outside / "forge-state.json"
    precious.write_bytes(b'{"precious": true}\n')
    sessions = project / ".rcs/state/sessions"
    sessions.mkdir(parents=True)
    (sessions / "s9").symlink_to(outside)
    rel = ".rcs/state/sessions/s9/forge-state.json"
    journal_with(project, forged_entry(rel, None, precious.read_bytes(), state="pending"))
    r = run_cli("doctor", "--fix", "--root", str(project), "--json")
    assert precious.read_bytes() == b'{"precious": true}\n'
    failed = r.json["fix"]["failed"]
    assert failed and "symlink" in failed[0]["error"] and rel in failed[0]["error"], r.stdout
    r = run_cli("undo", "--root", str(project), "--json")
    assert r.code == 1 and "symlink" in r.error
    assert precious.exists()


def test_symlinked_logs_dir_is_refused_and_nothing_is_sent_there(project, tmp_path, run_cli):
    elsewhere = tmp_path / "logs-target"
    elsewhere.mkdir()
    (project / ".rcs/logs").symlink_to(elsewhere)
    before = sf.read(project / ".rcs/state/forge-state.json")
    r = run_cli("state", "clear", "--mode", "forge", "--root", str(project), "--json")
    assert r.code == 1 and ".rcs/logs" in r.error and "symlink" in r.error, r.stderr
    assert list(elsewhere.iterdir()) == [], "nothing may be written through the link"
    assert sf.read(project / ".rcs/state/forge-state.json") == before


def test_symlinked_journal_file_is_refused(project, tmp_path, run_cli):
    target = tmp_path / "journal-target"
    target.write_bytes(b"")
    (project / ".rcs/logs").mkdir()
    (project / JOURNAL).symlink_to(target)
    r = run_cli("state", "clear", "--mode", "forge", "--root", str(project), "--json")
    assert r.code == 1 and "symlink" in r.error and "nothing was changed" in r.error, r.stderr
    assert target.read_bytes() == b""
    assert (project / ".rcs/state/forge-state.json").exists()
    r = run_cli("journal", "--root", str(project), "--json")
    assert r.code == 0 and r.json["entries"] == [] and "symlink" in r.json["warnings"][0]


def test_transcript_swapped_for_a_symlink_between_plan_and_append(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    tdir = make_task(root, "t1", "codegen")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"")
    state_before = (tdir / "state.json").read_bytes()
    plan = tasks.plan_override(root, "t1", "review", "testing", actor="tester")
    (tdir / "transcript.jsonl").unlink(missing_ok=True)
    (tdir / "transcript.jsonl").symlink_to(outside)
    with pytest.raises(txn.TxnError) as err:
        tasks.apply_plan(root, plan, actor="tester")
    assert "transcript.jsonl" in str(err.value) and "symlink" in str(err.value)
    assert outside.read_bytes() == b"", "the operator's line went outside the tree"
    assert (tdir / "state.json").read_bytes() == state_before, "state.json must be rolled back"
    assert [e for e in read_journal(root)] == []


def test_state_dir_swapped_for_a_symlink_at_write_time(project, tmp_path):
    """A directory on the way replaced by a link after planning: the write is refused, the link target untouched."""
    from rcs_tui.state import ops

    op = ops.plan_clear(project, "forge", ops.ROOT_SCOPE)
    state = project / ".rcs/state"
    moved = tmp_path / "moved-state"
    state.rename(moved)
    state.symlink_to(moved)
    snapshot = {p.name: p.read_bytes() for p in moved.iterdir() if p.is_file()}
    with pytest.raises(txn.TxnError) as err:
        op.run(project)
    assert "symlink" in str(err.value)
    assert {p.name: p.read_bytes() for p in moved.iterdir() if p.is_file()} == snapshot


def test_fifo_journal_never_hangs(project, run_cli):
    (project / ".rcs/logs").mkdir()
    os.mkfifo(project / JOURNAL)
    for args in (["journal", "--json"], ["undo", "--json"], ["doctor", "--json"],
                 ["state", "clear", "--mode", "forge", "--json"]):
        r = run_cli(*args, "--root", str(project), timeout=20)
        assert "Traceback" not in r.stderr
        if args[0] == "state":
            assert r.code == 1 and "not a regular file" in r.error
    assert (project / ".rcs/state/forge-state.json").exists()


def test_hard_links_out_of_the_tree_are_never_written_through(tmp_path, run_cli):
    root = sf.cli_project(tmp_path, run_cli)
    outside = tmp_path / "outside"
    outside.mkdir()
    task = root / ".rcs/tasks/T1"
    task.mkdir(parents=True)
    (task / "state.json").write_text('{"phase": "planning"}')
    victim = outside / "victim"
    victim.write_text("precious\n")
    lock = root / ".rcs/logs/rcs-tui.lock"
    lock.unlink(missing_ok=True)
    os.link(victim, lock)
    res = run_cli("task", "override", "T1", "--to", "done", "--reason", "r", "--root", str(root))
    assert res.code == 1 and "other hard link" in res.error
    assert victim.read_text() == "precious\n"
    lock.unlink()
    victim2 = outside / "victim2"
    victim2.write_text("important\n")
    os.link(victim2, task / "transcript.jsonl")
    res = run_cli("task", "override", "T1", "--to", "done", "--reason", "r", "--root", str(root))
    assert res.code == 1 and "other hard link" in res.error
    assert victim2.read_text() == "important\n"
    assert json.loads((task / "state.json").read_text()) == {"phase": "planning"}

