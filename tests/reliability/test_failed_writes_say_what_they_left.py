"""When a write fails at an awkward moment, the files, the journal and the message agree on what happened.

Each case here was a way a write could leave the project in one state while saying another: a clean-up that
failed after the change took effect (the message said every file was restored; the file held the new bytes),
a sync that failed after the entry was marked done (the journal kept "done" for a change rolled back), an
error after the change was made that did not say so, a change that could not be undone, a refused write that
brought back a directory the runtime had removed, two undos of one action both recorded, and files that
changed owner when rcs-tui ran as root.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from rcs_tui.files import fsafe
from rcs_tui.state import journal, tasks, txn
from rcs_tui.state.txn import Append, FileChange, Plan, TxnError, digest
from tests.conftest import RCS_TUI
from tests.fixtures_tasks import make_task

A = ".rcs/state/a-state.json"
C = ".rcs/state/c-state.json"
LOG = ".rcs/tasks/t1/transcript.jsonl"


def _tree(root: Path) -> None:
    (root / ".rcs/state").mkdir(parents=True)
    (root / ".rcs/tasks/t1").mkdir(parents=True)
    (root / A).write_bytes(b'{"active": true, "n": 1}\n')
    (root / C).write_bytes(b'{"active": true, "n": 3}\n')
    (root / LOG).write_bytes(b'{"line": 1}\n')


def _plan(root: Path) -> Plan:
    a, c = (root / A).read_bytes(), (root / C).read_bytes()
    return Plan(action="test change",
                changes=(FileChange(root / A, "write", b'{"active": false}\n', expect=digest(a), why="clear a"),
                         FileChange(root / C, "delete", expect=digest(c), why="delete c")),
                appends=(Append(root / LOG, '{"line": 2}', why="record"),))


def _states(root: Path) -> list[str]:
    return [json.loads(line)["state"] for line in (root / txn.JOURNAL_REL).read_text().splitlines()]


def _temps(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".rcs").rglob("*") if p.name.endswith(fsafe.TEMP_SUFFIX))


def test_a_temp_that_cannot_be_removed_after_the_swap_does_not_undo_the_answer(tmp_path, monkeypatch):
    """The swap took effect: the action is done (journaled so), the old bytes stay in a temp the doctor
    lists, and undo brings every file back from the journal."""
    _tree(tmp_path)
    before = {rel: (tmp_path / rel).read_bytes() for rel in (A, C, LOG)}
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if str(path).endswith(fsafe.TEMP_SUFFIX):
            raise OSError(errno.EIO, "Input/output error")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    entry = txn.apply(tmp_path, _plan(tmp_path), actor="op")
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert entry["state"] == "done" and _states(tmp_path) == ["done"]
    assert (tmp_path / A).read_bytes() == b'{"active": false}\n' and not (tmp_path / C).exists()
    assert len(_temps(tmp_path)) == 2  # the old a (swapped out) and c (set aside): left for the doctor
    journal.undo(tmp_path, entry["id"], actor="op")
    assert {rel: (tmp_path / rel).read_bytes() for rel in (A, C, LOG)} == before


def test_a_done_mark_whose_sync_fails_is_rolled_back_and_marked_aborted(tmp_path, monkeypatch):
    _tree(tmp_path)
    before = {rel: (tmp_path / rel).read_bytes() for rel in (A, C, LOG)}
    real_mark = txn.mark

    def mark(tree, start, state, line):
        real_mark(tree, start, state, line)
        if state == "done":  # written, then its sync fails
            raise OSError(errno.EIO, "Input/output error", str(txn.JOURNAL_REL))

    monkeypatch.setattr(txn, "mark", mark)
    with pytest.raises(TxnError, match=r"every file was restored, nothing was changed$"):
        txn.apply(tmp_path, _plan(tmp_path), actor="op")
    assert {rel: (tmp_path / rel).read_bytes() for rel in (A, C, LOG)} == before
    assert _states(tmp_path) == ["aborted"]


def test_an_entry_that_cannot_be_marked_aborted_is_named(tmp_path, monkeypatch):
    _tree(tmp_path)
    real_mark = txn.mark

    def mark(tree, start, state, line):
        if state == "done":
            raise OSError(errno.EIO, "Input/output error", str(txn.JOURNAL_REL))
        if state == "aborted":
            raise OSError(errno.EROFS, "Read-only file system", str(txn.JOURNAL_REL))
        real_mark(tree, start, state, line)

    monkeypatch.setattr(txn, "mark", mark)
    with pytest.raises(TxnError) as err:
        txn.apply(tmp_path, _plan(tmp_path), actor="op")
    entry_id = json.loads((tmp_path / txn.JOURNAL_REL).read_text())["id"]
    assert str(err.value).endswith(
        f"every file was restored, nothing was changed; journal entry {entry_id} could not be marked aborted "
        "(read-only file system (EROFS) on .rcs/logs/rcs-tui-journal.jsonl), so it may still read as applied: "
        "no file of it holds its change")


def test_an_error_after_the_change_was_made_says_so_with_its_journal_entry(tmp_path):
    """The clear is done, then printing its result fails (stdout on a full disk): the error says the change
    stands and how to revert it, so no caller takes it for a refusal."""
    _tree(tmp_path)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([RCS_TUI, "state", "clear", "--mode", "c", "--root", str(tmp_path), "--json"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    entry = json.loads((tmp_path / txn.JOURNAL_REL).read_text())
    assert entry["state"] == "done" and not (tmp_path / C).exists()
    assert proc.returncode == 1
    assert json.loads(proc.stderr) == {
        "error": f"disk full (ENOSPC); the change was made before this failed (journal entry {entry['id']}: "
                 f"`rcs-tui journal` lists it, `rcs-tui undo {entry['id']}` reverts it)",
        "kind": "io_error"}


def test_an_override_on_a_transcript_larger_than_a_state_file_can_be_undone(tmp_path):
    tdir = make_task(tmp_path, phase="codegen")
    line = json.dumps({"at": "2026-11-28T12:00:00.000Z", "kind": "note", "text": "x" * 1000}) + "\n"
    (tdir / "transcript.jsonl").write_text(line * 9000)  # 9 MB: past the 8 MiB of a state file
    before = {p.name: p.read_bytes() for p in tdir.iterdir()}
    plan = tasks.plan_override(tmp_path, "t1", "review", "stuck", actor="op")
    entry = txn.apply(tmp_path, plan, actor="op")
    assert json.loads((tdir / "state.json").read_text())["phase"] == "review"
    journal.undo(tmp_path, entry["id"], actor="op")
    assert {p.name: p.read_bytes() for p in tdir.iterdir()} == before


def test_an_append_its_undo_could_not_restore_is_refused_before_anything_changes(tmp_path, monkeypatch):
    tdir = make_task(tmp_path, phase="codegen")
    (tdir / "transcript.jsonl").write_text("{}\n" * 400)
    monkeypatch.setattr(fsafe, "MAX_APPENDED_BYTES", 1000)
    before = {p.name: p.read_bytes() for p in tdir.iterdir()}
    plan = tasks.plan_override(tmp_path, "t1", "review", "stuck", actor="op")
    with pytest.raises(TxnError, match=r"^this action cannot be recorded so that it can be undone: "
                                       r"\.rcs/tasks/t1/transcript\.jsonl would be 1,\d{3} bytes, more than the "
                                       r"1,000 an undo can restore; nothing was changed"):
        txn.apply(tmp_path, plan, actor="op")
    assert {p.name: p.read_bytes() for p in tdir.iterdir()} == before
    assert not (tmp_path / txn.JOURNAL_REL).exists()


@pytest.mark.parametrize("what", ["session", "task"])
def test_a_write_refused_because_its_directory_went_does_not_bring_the_directory_back(tmp_path, what):
    if what == "session":
        d = tmp_path / ".rcs/state/sessions/s1"
        d.mkdir(parents=True)
        (d / "forge-state.json").write_bytes(b'{"active": true}\n')
        target = d / "forge-state.json"
    else:
        d = make_task(tmp_path, phase="codegen")
        target = d / "state.json"
    plan = Plan(action="test", changes=(FileChange(target, "write", b'{"active": false}\n',
                                                   expect=digest(target.read_bytes())),))
    for p in d.iterdir():
        p.unlink()
    d.rmdir()  # the runtime removed it after the plan was made
    with pytest.raises(TxnError, match=r"was removed underneath since it was read"):
        txn.apply(tmp_path, plan, actor="op")
    assert not d.exists()


def test_a_second_undo_of_one_action_is_refused_under_the_lock(tmp_path):
    """Two undos planned before either ran (two operators, one action whose files were already reverted
    outside rcs-tui, so no file's digest tells them apart): the second is refused, not recorded."""
    _tree(tmp_path)
    entry = txn.apply(tmp_path, Plan(action="test", changes=(FileChange(
        tmp_path / A, "write", b'{"active": false}\n', expect=digest((tmp_path / A).read_bytes())),)), actor="op")
    (tmp_path / A).write_bytes(b'{"active": true, "n": 1}\n')  # reverted by hand
    first = journal.plan_undo(tmp_path, entry)
    second = journal.plan_undo(tmp_path, entry)
    txn.apply(tmp_path, first, actor="op", extra={"undoes": entry["id"]})  # as `undo` records it
    with pytest.raises(TxnError, match=rf"^journal entry {entry['id']} was already undone \(by another undo "
                                       r"meanwhile\); nothing was changed$"):
        txn.apply(tmp_path, second, actor="op", extra={"undoes": entry["id"]})
    assert [e.get("undoes") for e in journal.read_journal(tmp_path)].count(entry["id"]) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_files_keep_their_owner_when_rcs_tui_runs_as_root(tmp_path):
    """A clear and its undo, run by root in a user's project: every file rewritten or made, and the journal's
    directory, belong to the project's user afterwards, so the runtime can still rewrite them."""
    _tree(tmp_path)
    for p in [tmp_path, *tmp_path.rglob("*")]:
        os.chown(p, 1000, 1000)
    entry = txn.apply(tmp_path, _plan(tmp_path), actor="op")
    made = tmp_path / ".rcs/state/made-state.json"
    txn.apply(tmp_path, Plan(action="new", changes=(FileChange(made, "write", b"{}\n"),)), actor="op")
    journal.undo(tmp_path, entry["id"], actor="op")
    owners = {str(p.relative_to(tmp_path)): (p.stat().st_uid, p.stat().st_gid) for p in tmp_path.rglob("*")
              if not p.name.endswith(fsafe.TEMP_SUFFIX)}
    assert {".rcs/logs", A, C, LOG, ".rcs/state/made-state.json", str(txn.JOURNAL_REL)} <= set(owners)
    assert set(owners.values()) == {(1000, 1000)}
