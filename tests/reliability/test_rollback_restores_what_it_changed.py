"""A change that fails part-way puts back every file it had already changed, tells the operator exactly what
happened, and leaves the journal saying so; and the fingerprint an operator confirms covers everything the
plan would do.

The failures are injected in-process at each step of one plan (three files and a transcript line), so the
rules of the rollback are pinned one by one: the order it undoes in, that it writes only over its own bytes,
what it says when the runtime got there first, and when it must leave the entry for `doctor`.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from rcs_tui.files import fsafe
from rcs_tui.files.fsafe import Refused
from rcs_tui.state import txn
from rcs_tui.state.txn import Append, FileChange, Plan, TxnError, digest

A = ".rcs/state/a-state.json"
B = ".rcs/state/b-state.json"
C = ".rcs/state/c-state.json"
LOG = ".rcs/tasks/t1/transcript.jsonl"


def setup(root: Path) -> dict[str, bytes | None]:
    (root / ".rcs/state").mkdir(parents=True)
    (root / ".rcs/tasks/t1").mkdir(parents=True)
    (root / A).write_bytes(b'{"active": true, "n": 1}\n')
    (root / C).write_bytes(b'{"active": true, "n": 3}\n')
    (root / LOG).write_bytes(b'{"line": 1}\n')
    return files(root)


def files(root: Path) -> dict[str, bytes | None]:
    return {rel: (root / rel).read_bytes() if (root / rel).exists() else None for rel in (A, B, C, LOG)}


def plan(root: Path) -> Plan:
    """Rewrite a, create b, delete c, append one transcript line."""
    a, c = (root / A).read_bytes(), (root / C).read_bytes()
    return Plan(action="test change",
                changes=(FileChange(root / A, "write", b'{"active": false}\n', expect=digest(a), why="clear a"),
                         FileChange(root / B, "write", b'{"active": true}\n', expect=None, why="create b"),
                         FileChange(root / C, "delete", expect=digest(c), why="delete c")),
                appends=(Append(root / LOG, '{"line": 2}', why="record"),),
                summary={"cleared": ["a"]})


def journal_states(root: Path) -> list[str]:
    path = root / txn.JOURNAL_REL
    return [json.loads(line)["state"] for line in path.read_text().splitlines()] if path.exists() else []


def test_the_plan_applies_every_file_and_marks_its_entry_done(tmp_path):
    setup(tmp_path)
    entry = txn.apply(tmp_path, plan(tmp_path), actor="op")
    assert files(tmp_path) == {A: b'{"active": false}\n', B: b'{"active": true}\n', C: None,
                               LOG: b'{"line": 1}\n{"line": 2}\n'}
    assert entry["state"] == "done" and journal_states(tmp_path) == ["done"]
    assert [(f["path"], f["after_sha"] is None) for f in entry["files"]] == [(A, False), (B, False), (C, True)]
    assert entry["appends"] == [{"path": LOG, "line": '{"line": 2}', "size_before": 12, "created": False}]


class Fail:
    """Make the n-th compare-and-swap of the apply (0-based, over swap_in and remove_if together) raise."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int, exc: BaseException | None = None,
                 before_failing=None) -> None:
        self.calls = 0
        self.at = at
        self.exc = exc or OSError(errno.ENOSPC, "No space left on device")
        self.before_failing = before_failing
        real_swap, real_remove = fsafe.swap_in, fsafe.remove_if

        def wrap(real):
            def call(*args, **kwargs):
                n, self.calls = self.calls, self.calls + 1
                if n == self.at:
                    if self.before_failing:
                        self.before_failing()
                    if real is real_swap:  # swap_in consumes its staged file either way
                        fsafe.discard_temp(args[0], args[2])
                    raise self.exc
                return real(*args, **kwargs)
            return call

        monkeypatch.setattr(fsafe, "swap_in", wrap(real_swap))
        monkeypatch.setattr(fsafe, "remove_if", wrap(real_remove))


@pytest.mark.parametrize("at, failing", [(0, A), (1, B), (2, C)])
def test_a_failure_at_any_file_restores_every_file_and_says_which_failed(tmp_path, monkeypatch, at, failing):
    before = setup(tmp_path)
    p = plan(tmp_path)
    Fail(monkeypatch, at)
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    assert str(info.value) == f"disk full (ENOSPC) on {failing}; every file was restored, nothing was changed"
    assert type(info.value) is TxnError
    assert files(tmp_path) == before
    assert journal_states(tmp_path) == ["aborted"]
    assert not [p.name for p in (tmp_path / ".rcs/state").iterdir() if p.name.endswith(".tmp") or ".rcs-" in p.name]


def test_a_failed_transcript_append_takes_back_the_files_and_the_line(tmp_path, monkeypatch):
    before = setup(tmp_path)
    p = plan(tmp_path)
    real = fsafe.Tree.append

    def append_then_fail_to_mark(self, rel, data):
        out = real(self, rel, data)
        if rel == LOG:
            monkeypatch.setattr(txn, "mark", fail_mark)
        return out

    def fail_mark(tree, start, state, line):
        if state == "done":
            raise OSError(errno.EIO, "Input/output error", "journal")
        return real_mark(tree, start, state, line)

    real_mark = txn.mark
    monkeypatch.setattr(fsafe.Tree, "append", append_then_fail_to_mark)
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    assert str(info.value) == "I/O error (EIO) on journal; every file was restored, nothing was changed"
    assert files(tmp_path) == before  # the line it appended is cut off again
    assert journal_states(tmp_path) == ["aborted"]


def test_a_line_appended_after_ours_is_never_cut(tmp_path, monkeypatch):
    setup(tmp_path)
    p = plan(tmp_path)
    real = fsafe.Tree.append

    def append_then_runtime_appends(self, rel, data):
        out = real(self, rel, data)
        if rel != LOG:  # the journal's own write-ahead line
            return out
        with open(tmp_path / LOG, "ab") as fh:
            fh.write(b'{"line": "runtime"}\n')
        monkeypatch.setattr(txn, "mark", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "x", "journal")))
        return out

    monkeypatch.setattr(fsafe.Tree, "append", append_then_runtime_appends)
    with pytest.raises(TxnError):
        txn.apply(tmp_path, p, actor="op")
    got = (tmp_path / LOG).read_bytes()
    assert got == b'{"line": 1}\n{"line": 2}\n{"line": "runtime"}\n', got
    assert (tmp_path / A).read_bytes() == b'{"active": true, "n": 1}\n'


def test_a_file_the_runtime_rewrote_meanwhile_keeps_the_runtimes_bytes_and_the_message_says_so(tmp_path, monkeypatch):
    before = setup(tmp_path)
    p = plan(tmp_path)
    Fail(monkeypatch, 2, before_failing=lambda: (tmp_path / A).write_bytes(b'{"runtime": true}\n'))
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    assert str(info.value) == (f"disk full (ENOSPC) on {C}; every file was restored, nothing was changed ({A} was "
                               "rewritten by the runtime meanwhile and keeps the runtime's bytes)")
    assert (tmp_path / A).read_bytes() == b'{"runtime": true}\n'
    assert files(tmp_path)[B] is None and files(tmp_path)[C] == before[C]


def test_a_file_changed_underneath_at_its_swap_restores_the_others(tmp_path, monkeypatch):
    before = setup(tmp_path)
    p = plan(tmp_path)
    Fail(monkeypatch, 2, exc=txn._changed(C, "sha256:x", "sha256:y"))
    with pytest.raises(txn.ChangedUnderneath) as info:
        txn.apply(tmp_path, p, actor="op")
    assert str(info.value) == (f"{C} changed underneath since it was read; re-read and try again (nothing was "
                               "changed); the files already changed were restored")
    assert files(tmp_path) == before


def test_a_rollback_that_fails_leaves_the_entry_for_doctor_and_says_how(tmp_path, monkeypatch):
    setup(tmp_path)
    p = plan(tmp_path)
    Fail(monkeypatch, 2)
    monkeypatch.setattr(txn, "_undo_step", lambda step: (_ for _ in ()).throw(OSError(errno.EROFS, "ro")))
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    entry_id = json.loads((tmp_path / txn.JOURNAL_REL).read_text().splitlines()[0])["id"]
    assert str(info.value) == (f"disk full (ENOSPC) on {C}; rolling back failed for {B}, {A}: journal entry "
                               f"{entry_id} is left interrupted. Run `rcs-tui doctor` (then `rcs-tui doctor --fix` "
                               "to roll it back)")
    assert journal_states(tmp_path) == ["pending"]


def test_undo_of_a_step_writes_only_over_our_own_bytes(tmp_path):
    setup(tmp_path)
    p = plan(tmp_path)
    txn.apply(tmp_path, p, actor="op")
    tree = fsafe.Tree(tmp_path)
    with tree.parent(A) as (dfd, name):
        step = txn._Step(p.changes[0], A, b'{"active": true, "n": 1}\n', dfd, name)
        assert txn._undo_step(step) is True
        assert (tmp_path / A).read_bytes() == b'{"active": true, "n": 1}\n'
        assert txn._undo_step(step) is False  # no longer our bytes: left alone
        assert (tmp_path / A).read_bytes() == b'{"active": true, "n": 1}\n'
    with tree.parent(B) as (dfd, name):
        created = txn._Step(p.changes[1], B, None, dfd, name)
        assert txn._undo_step(created) is True and not (tmp_path / B).exists()
    with tree.parent(C) as (dfd, name):
        deleted = txn._Step(p.changes[2], C, None, dfd, name)
        assert txn._undo_step(deleted) is True  # it did not exist before and we wrote nothing there


# -- what the operator confirms --------------------------------------------------------------------------------


def test_the_fingerprint_is_stable_and_covers_every_part_of_the_plan(tmp_path):
    setup(tmp_path)
    base = plan(tmp_path)
    fp = base.fingerprint(tmp_path)
    assert fp.startswith("sha256:") and len(fp) == len("sha256:") + 32
    assert plan(tmp_path).fingerprint(tmp_path) == fp

    def with_change(i: int, **kw) -> Plan:
        changes = list(base.changes)
        c = changes[i]
        changes[i] = FileChange(kw.get("path", c.path), kw.get("action", c.action), kw.get("content", c.content),
                                kw.get("expect", c.expect), kw.get("why", c.why))
        return Plan(base.action, tuple(changes), base.appends, base.summary)

    variants = {
        "action": Plan("other", base.changes, base.appends, base.summary),
        "summary": Plan(base.action, base.changes, base.appends, {"cleared": ["b"]}),
        "path": with_change(0, path=tmp_path / ".rcs/state/z-state.json"),
        "file action": with_change(0, action="delete"),
        "expected bytes": with_change(0, expect="sha256:other"),
        "reason": with_change(1, why="other"),
        "append file": Plan(base.action, base.changes, (Append(tmp_path / "x.jsonl", '{"line": 2}', "record"),),
                            base.summary),
        "append reason": Plan(base.action, base.changes, (Append(tmp_path / LOG, '{"line": 2}', "other"),),
                              base.summary),
        "no append": Plan(base.action, base.changes, (), base.summary),
    }
    prints = {name: p.fingerprint(tmp_path) for name, p in variants.items()}
    assert fp not in prints.values(), prints
    assert len(set(prints.values())) == len(prints)
    # what it writes is not part of it: the after-images differ only by time and actor
    assert with_change(0, content=b"{}").fingerprint(tmp_path) == fp


def test_confirm_refuses_another_plan_and_accepts_its_own(tmp_path):
    setup(tmp_path)
    p = plan(tmp_path)
    p.confirm(tmp_path, None)
    p.confirm(tmp_path, p.fingerprint(tmp_path))
    with pytest.raises(txn.PlanChanged) as info:
        p.confirm(tmp_path, "sha256:" + "0" * 32)
    assert str(info.value) == txn.PLAN_CHANGED


def test_describe_is_what_dry_run_prints(tmp_path):
    setup(tmp_path)
    p = plan(tmp_path)
    assert p.describe(tmp_path) == {
        "action": "test change",
        "changes": [{"path": A, "action": "write", "why": "clear a"},
                    {"path": B, "action": "write", "why": "create b"},
                    {"path": C, "action": "delete", "why": "delete c"}],
        "appends": [{"path": LOG, "line": '{"line": 2}', "why": "record"}],
        "cleared": ["a"],
        "plan_fingerprint": p.fingerprint(tmp_path)}
    assert "appends" not in Plan("x").describe(tmp_path)


def test_os_errors_are_told_in_operator_words():
    assert txn.explain(OSError(errno.ENOSPC, "No space", "a.json")) == "disk full (ENOSPC) on a.json"
    assert txn.explain(OSError(errno.EDQUOT, "q")) == "disk quota exceeded (EDQUOT)"
    assert txn.explain(OSError(errno.ENOENT, "No such file", "x")) == "No such file (ENOENT) on x"
    assert txn.explain(OSError("bare")) == "bare (error)"
    refused = Refused("x", "x is a symlink")
    assert txn.explain(refused) == str(refused)
    for code in (errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO):
        assert txn.explain(OSError(code, "s")).endswith(f"({errno.errorcode[code]})")
        assert not txn.explain(OSError(code, "s")).startswith("s ")


def test_a_file_changed_underneath_is_named_with_what_happened_to_it():
    assert str(txn._changed("f", None, "sha256:x")) == ("f appeared underneath since it was read; re-read and try "
                                                        "again (nothing was changed)")
    assert str(txn._changed("f", "sha256:x", None)).startswith("f was removed underneath")
    assert str(txn._changed("f", "sha256:x", "sha256:y")).startswith("f changed underneath")
    assert txn.TxnError("m").error_kind == "refused"
    assert txn.TxnError("m", kind="lock_busy").error_kind == "lock_busy"


def golden_plan(root: Path, summary: dict) -> Plan:
    odd = root / ".rcs/state" / "caf\udce9-state.json"  # a name that is not UTF-8 on disk
    return Plan(action="state clear café",
                changes=(FileChange(root / A, "write", b"{}", expect="sha256:" + "a" * 64, why="clear ü"),
                         FileChange(odd, "delete", expect="sha256:" + "b" * 64, why="gone")),
                appends=(Append(root / LOG, "x", why="record"),), summary=summary)


def test_the_fingerprint_is_the_same_on_every_host_and_version(tmp_path):
    """The fingerprint a dry run printed is confirmed later, possibly by another rcs-tui on another host
    (the fleet): for the same plan it is the same value, whatever the order its summary was built in,
    with non-ASCII text, names that are not UTF-8 and values JSON has no type for."""
    summary = {"cleared": ["café"], "scope": Path("/x"), "after": []}
    fp = golden_plan(tmp_path, summary).fingerprint(tmp_path)
    assert fp == "sha256:75a32c818393078e111f36c91e2eda7a"
    reordered = dict(reversed(list(summary.items())))
    assert golden_plan(tmp_path, reordered).fingerprint(tmp_path) == fp


def test_a_rolled_back_file_keeps_its_permissions_and_an_emptied_file_comes_back(tmp_path, monkeypatch):
    before = setup(tmp_path)
    os.chmod(tmp_path / A, 0o600)
    notes = tmp_path / ".rcs/tasks/t1/notes.md"  # not JSON: emptying it is a change like any other
    notes.write_bytes(b"# notes\n")
    p = plan(tmp_path)
    emptied = Plan(p.action, (FileChange(notes, "write", b"", expect=digest(b"# notes\n"), why="empty"),
                              *p.changes), p.appends, p.summary)
    Fail(monkeypatch, 3)  # at c, after notes, a and b were swapped in
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, emptied, actor="op")
    assert str(info.value) == f"disk full (ENOSPC) on {C}; every file was restored, nothing was changed"
    assert files(tmp_path) == before and notes.read_bytes() == b"# notes\n"
    assert stat.S_IMODE(os.stat(tmp_path / A).st_mode) == 0o600


def test_every_file_the_runtime_rewrote_meanwhile_is_named(tmp_path, monkeypatch):
    setup(tmp_path)
    p = plan(tmp_path)

    def runtime_writes() -> None:
        (tmp_path / A).write_bytes(b'{"runtime": "a"}\n')
        (tmp_path / B).write_bytes(b'{"runtime": "b"}\n')

    Fail(monkeypatch, 2, before_failing=runtime_writes)
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    assert str(info.value).endswith(f"nothing was changed ({B}, {A} were rewritten by the runtime meanwhile and "
                                    "keep the runtime's bytes)")
    assert (tmp_path / B).read_bytes() == b'{"runtime": "b"}\n'


def test_a_transcript_line_that_cannot_be_taken_back_names_the_transcript(tmp_path, monkeypatch):
    setup(tmp_path)
    p = plan(tmp_path)
    real = fsafe.Tree.append

    def append_then_fail_to_mark(self, rel, data):
        out = real(self, rel, data)
        if rel == LOG:
            monkeypatch.setattr(txn, "mark", lambda *a: (_ for _ in ()).throw(OSError(errno.EIO, "x", "journal")))
            monkeypatch.setattr(txn, "_undo_append", lambda *a: (_ for _ in ()).throw(OSError(errno.EROFS, "ro")))
        return out

    monkeypatch.setattr(fsafe.Tree, "append", append_then_fail_to_mark)
    with pytest.raises(TxnError) as info:
        txn.apply(tmp_path, p, actor="op")
    assert f"rolling back failed for {LOG}: journal entry " in str(info.value)
    assert (tmp_path / A).read_bytes() == b'{"active": true, "n": 1}\n'  # the files were still restored


def test_an_action_names_who_did_it(monkeypatch):
    """The journal's actor when none is given: user, host, which face and its pid (a container without a
    passwd entry gives the uid instead of failing)."""
    import getpass
    import socket

    expected_host = socket.gethostname()
    assert txn.default_actor("console") == f"{getpass.getuser()}@{expected_host} (console, pid {os.getpid()})"
    assert txn.default_actor() == f"{getpass.getuser()}@{expected_host} (cli, pid {os.getpid()})"

    def no_user() -> str:
        raise KeyError("getpwuid(): uid not found")

    monkeypatch.setattr(getpass, "getuser", no_user)
    assert txn.default_actor("fleet") == f"{os.getuid()}@{expected_host} (fleet, pid {os.getpid()})"


# -- the journal entry's own lines -------------------------------------------------------------------------------


def test_an_entry_is_written_pending_with_sorted_keys_and_marked_in_place(tmp_path):
    setup(tmp_path)
    line = txn._journal_line({"state": "done", "id": "e1", "action": "café", "files": []})
    assert line == '{"state": "pending", "action": "café", "files": [], "id": "e1"}\n'.encode()
    with pytest.raises(ValueError):
        txn._journal_line({"id": "e1", "n": float("nan")})
    tree = fsafe.Tree(tmp_path)
    for state in ("done", "aborted"):
        start = txn.write_ahead(tree, line)
        txn.mark(tree, start, state, line)
        written = (tmp_path / txn.JOURNAL_REL).read_bytes()[start:]
        assert len(written) == len(line) and json.loads(written)["state"] == state
    # an entry marked done whose sync failed is rolled back and marked again: it is still ours
    txn.mark(tree, start, "done", line)
    assert json.loads((tmp_path / txn.JOURNAL_REL).read_bytes()[start:])["state"] == "done"
    other = line.replace(b'"e1"', b'"e2"')
    with pytest.raises(OSError):  # another entry at that offset is not ours to mark
        txn.mark(tree, start, "aborted", other)


def test_marking_an_entry_the_journal_no_longer_holds_is_refused(tmp_path, monkeypatch):
    setup(tmp_path)
    tree = fsafe.Tree(tmp_path)
    line = txn._journal_line({"id": "e1", "action": "x"})
    start = txn.write_ahead(tree, line)
    journal = tmp_path / txn.JOURNAL_REL
    journal.write_bytes(b"x" * len(journal.read_bytes()))  # rotated or replaced by another process
    with pytest.raises(OSError) as info:
        txn.mark(tree, start, "done", line)
    assert (info.value.errno, info.value.filename) == (errno.ESTALE, str(txn.JOURNAL_REL))
    assert info.value.strerror == ("the journal was rotated, truncated or replaced by another process while "
                                   "the entry was open")
    assert journal.read_bytes() == b"x" * len(journal.read_bytes())
    journal.write_bytes(line)
    monkeypatch.setattr(os, "pwrite", lambda fd, data, offset: 0)
    with pytest.raises(OSError) as short:
        txn.mark(tree, 0, "done", line)
    assert (short.value.errno, short.value.strerror, short.value.filename) == (
        errno.EIO, "short write of the journal state", str(txn.JOURNAL_REL))


def test_the_journal_rotates_at_its_limit_and_keeps_its_generations_in_order(tmp_path, monkeypatch):
    setup(tmp_path)
    tree = fsafe.Tree(tmp_path)
    logs = tmp_path / txn.JOURNAL_REL.parent
    logs.mkdir(parents=True, exist_ok=True)
    journal = tmp_path / txn.JOURNAL_REL
    journal.write_bytes(b"a" * 9)
    txn.rotate(tree, limit=10)  # under the limit: stays
    assert journal.read_bytes() == b"a" * 9
    journal.write_bytes(b"a" * 10)
    txn.rotate(tree, limit=10)  # at the limit: rotated
    assert not journal.exists() and (logs / txn.rotated_name(1)).read_bytes() == b"a" * 10
    monkeypatch.setattr(txn, "JOURNAL_ROTATE_BYTES", 10)
    for body in (b"b" * 10, b"c" * 10, b"d" * 10):
        journal.write_bytes(body)
        txn.rotate(tree)  # the default limit
    names = [txn.rotated_name(g) for g in range(1, txn.JOURNAL_KEEP + 1)]
    kept = [(logs / n).read_bytes()[:1] for n in names if (logs / n).exists()]
    assert kept == [b"d", b"c", b"b", b"a"][:txn.JOURNAL_KEEP]  # newest first, the oldest dropped
