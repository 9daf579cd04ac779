"""The transaction's apply path, in-process: what a plan leaves on disk and in the journal, and what a
refusal says and leaves unchanged."""

from __future__ import annotations

import base64
import errno
import json
import os
import re
from pathlib import Path

import pytest

from rcs_tui.core import error_kinds as kinds
from rcs_tui.files import fsafe
from rcs_tui.files.io import digest
from rcs_tui.state import txn
from rcs_tui.state.lock import store_lock
from rcs_tui.state.txn import Append, ChangedUnderneath, FileChange, Plan, TxnError, apply

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"
A = ".rcs/state/forge-state.json"
OLD = b'{"active": true}\n'
NEW = b'{"active": false}\n'


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".rcs/state").mkdir(parents=True)
    (tmp_path / A).write_bytes(OLD)
    return tmp_path


def _journal(root: Path) -> list[dict]:
    path = root / JOURNAL
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _refused(root: Path, plan: Plan, **kwargs: object) -> TxnError:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(TxnError) as caught:
        apply(root, plan, **kwargs)  # type: ignore[arg-type]
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "rcs-tui.lock"}
    assert after == {p: b for p, b in before.items() if p.name != "rcs-tui.lock"}
    return caught.value


def test_a_write_puts_the_bytes_in_place_and_journals_the_before_image(root: Path) -> None:
    path = root / A
    entry = apply(root, Plan("test", (FileChange(path, "write", NEW, digest(OLD), "why"),), summary={"k": 1}),
                  actor="me", extra={"undoes": "x"})
    assert path.read_bytes() == NEW
    [line] = _journal(root)
    assert line == {**entry, "state": "done"}
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{12}", entry["id"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["at"])
    assert (entry["actor"], entry["action"], entry["summary"], entry["undoes"]) == ("me", "test", {"k": 1}, "x")
    assert entry["files"] == [{"path": A, "why": "why", "before_b64": base64.b64encode(OLD).decode(),
                               "after_sha": digest(NEW)}]
    assert entry["appends"] == []
    assert sorted(os.listdir(root / ".rcs/state")) == ["forge-state.json"]


def test_a_created_file_and_a_deleted_one_are_journaled_as_such(root: Path) -> None:
    entry = apply(root, Plan("t", (FileChange(root / ".rcs/state/new/b.json", "write", b"{}", None, "create"),
                                   FileChange(root / A, "delete", None, digest(OLD), "delete"))))
    assert (root / ".rcs/state/new/b.json").read_bytes() == b"{}" and not (root / A).exists()
    assert entry["files"] == [
        {"path": ".rcs/state/new/b.json", "why": "create", "before_b64": None, "after_sha": digest(b"{}")},
        {"path": A, "why": "delete", "before_b64": base64.b64encode(OLD).decode(), "after_sha": None}]
    assert entry["actor"] == txn.default_actor()


def test_deleting_what_is_already_gone_is_a_no_op(root: Path) -> None:
    entry = apply(root, Plan("t", (FileChange(root / ".rcs/state/gone/x.json", "delete", None, None, "gone"),
                                   FileChange(root / ".rcs/state/y.json", "delete", None, None, "gone too"))))
    assert [f["path"] for f in entry["files"]] == [".rcs/state/y.json"]
    assert _journal(root)[0]["state"] == "done"


def test_a_delete_in_a_directory_that_is_gone_is_refused_as_removed(root: Path) -> None:
    exc = _refused(root, Plan("t", (FileChange(root / ".rcs/state/gone/x.json", "delete", None, digest(b"x")),)))
    assert isinstance(exc, ChangedUnderneath)
    assert str(exc) == (".rcs/state/gone/x.json was removed underneath since it was read; re-read and try again "
                        "(nothing was changed)")


@pytest.mark.parametrize(("expect", "on_disk", "word"), [
    (None, OLD, "appeared"), (digest(OLD), None, "was removed"), (digest(b"other"), OLD, "changed")])
def test_a_file_that_differs_from_the_plan_is_refused_saying_how(root: Path, expect: str | None,
                                                                  on_disk: bytes | None, word: str) -> None:
    if on_disk is None:
        (root / A).unlink()
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", NEW, expect),)))
    assert isinstance(exc, ChangedUnderneath) and exc.error_kind == kinds.REFUSED_CHANGED
    assert str(exc) == f"{A} {word} underneath since it was read; re-read and try again (nothing was changed)"
    assert _journal(root) == [] and sorted(os.listdir(root / ".rcs/state")) == (["forge-state.json"] if on_disk else [])


@pytest.mark.parametrize("rel", ["/etc/x.json", ".rcs/plans/p.md", ".rcs/state/../../x.json"])
def test_a_path_outside_the_owned_trees_is_refused_before_anything(root: Path, rel: str) -> None:
    path = Path(rel) if rel.startswith("/") else root / rel
    exc = _refused(root, Plan("t", (FileChange(path, "write", b"{}", None),)))
    assert str(exc).startswith(f"refused: {rel}: ") and str(exc).endswith("; nothing was changed")
    exc = _refused(root, Plan("t", appends=(Append(path, "x"),)))
    assert str(exc).startswith(f"refused: {rel}: ")
    assert _journal(root) == []


def test_bytes_the_runtime_could_not_parse_are_never_written(root: Path) -> None:
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", b'{"a": NaN}', digest(OLD)),)))
    assert str(exc) == (f"refusing to write {A}: not strict JSON (non-finite number NaN is not JSON); nothing was "
                        "changed")
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", None, digest(OLD)),)))
    assert str(exc).startswith(f"refusing to write {A}: not strict JSON (")
    apply(root, Plan("t", (FileChange(root / ".rcs/state/notes.txt", "write", b"NaN {", None),)))
    assert (root / ".rcs/state/notes.txt").read_bytes() == b"NaN {"


def test_a_busy_lock_is_refused_with_its_kind(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rcs_tui.state import lock

    monkeypatch.setattr(lock, "LOCK_TIMEOUT_S", 0.1)
    with store_lock(fsafe.Tree(root), "holder"):
        pid = os.fork()
        if pid == 0:  # another process: the lock is held by us
            try:
                apply(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
                os._exit(1)
            except TxnError as exc:
                os._exit(0 if exc.error_kind == kinds.LOCK_BUSY and "held by holder" in str(exc) else 2)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (root / A).read_bytes() == OLD


def test_a_linked_state_directory_at_apply_is_refused(root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (root / ".rcs/state").rename(elsewhere / "state")
    os.symlink(elsewhere / "state", root / ".rcs/state")
    with pytest.raises(TxnError) as caught:
        apply(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert str(caught.value) == (f"refused: {A}: .rcs/state is a symlink or not a directory; not followed; nothing "
                                 "was changed")
    assert (elsewhere / "state/forge-state.json").read_bytes() == OLD and _journal(root) == []


def test_a_staging_failure_names_the_file_and_leaves_no_temp(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsafe, "write_all", full)
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert str(exc) == (f"could not prepare the change: disk full (ENOSPC) on {A} (staging its new bytes); nothing "
                        "was changed")
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_a_refusal_after_staging_leaves_no_temp(root: Path) -> None:
    plan = Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),
                      FileChange(root / ".rcs/state/b.json", "write", b"{}", digest(b"x"))))
    _refused(root, plan)
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_appends_record_the_size_before_and_whether_they_created_the_file(root: Path) -> None:
    log = root / ".rcs/tasks/t1/transcript.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"one\n")
    entry = apply(root, Plan("t", appends=(Append(log, "two\n"), Append(root / ".rcs/tasks/t2/log", "first"))))
    assert entry["appends"] == [
        {"path": ".rcs/tasks/t1/transcript.jsonl", "line": "two\n", "size_before": 4, "created": False},
        {"path": ".rcs/tasks/t2/log", "line": "first", "size_before": 0, "created": True}]
    assert log.read_bytes() == b"one\ntwo\n" and (root / ".rcs/tasks/t2/log").read_bytes() == b"first\n"


def test_a_value_json_cannot_carry_is_refused_before_anything(root: Path) -> None:
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),), summary={"n": float("nan")}))
    assert re.fullmatch(r"the change holds a value JSON cannot carry \(Out of range float values are not JSON "
                        r"compliant(: nan)?\); nothing was changed", str(exc))
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_an_entry_the_reader_could_not_read_back_is_never_applied(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(txn, "line_problem", lambda line: "70 MiB, more than the 64 MiB one journal entry may hold")
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert str(exc) == ("this action cannot be recorded so that it can be undone: its journal entry would be 70 MiB, "
                        "more than the 64 MiB one journal entry may hold; nothing was changed (act on fewer files at "
                        "a time, e.g. one session or scope per command)")
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_a_journal_that_cannot_be_written_stops_the_change(root: Path) -> None:
    (root / ".rcs/logs").mkdir()
    os.mkfifo(root / JOURNAL)
    exc = _refused(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert str(exc) == (f"could not write the journal entry before changing anything: {JOURNAL}: is not a regular "
                        "file; not written; nothing was changed")
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_a_journal_entry_that_does_not_read_back_stops_the_change(root: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.pread
    monkeypatch.setattr(txn.os, "pread", lambda fd, n, off: b"x" + real(fd, n, off)[1:])
    (root / ".rcs/logs").mkdir()
    (root / JOURNAL).write_bytes(b"earlier\n")
    with pytest.raises(TxnError) as caught:
        apply(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    monkeypatch.undo()
    assert str(caught.value) == f"the journal entry did not read back as written ({JOURNAL}); nothing was changed"
    assert (root / JOURNAL).read_bytes() == b"earlier\n"  # no pending line left to read as an interrupted action
    assert (root / A).read_bytes() == OLD and os.listdir(root / ".rcs/state") == ["forge-state.json"]


def test_the_journal_rotates_before_a_new_entry(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(txn, "JOURNAL_ROTATE_BYTES", 10)
    (root / ".rcs/logs").mkdir()
    (root / JOURNAL).write_bytes(b"x" * 10 + b"\n")
    apply(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert (root / ".rcs/logs/rcs-tui-journal.1.jsonl").read_bytes() == b"x" * 10 + b"\n"
    assert [e["state"] for e in _journal(root)] == ["done"]


def test_write_ahead_returns_where_the_entry_starts(root: Path) -> None:
    (root / ".rcs/logs").mkdir()
    (root / JOURNAL).write_bytes(b"torn")
    tree = fsafe.Tree(root)
    line = txn._journal_line({"id": "e1"})
    assert txn.write_ahead(tree, line) == 5
    assert (root / JOURNAL).read_bytes() == b"torn\n" + line
    assert txn.write_ahead(tree, line) == 5 + len(line)


def test_a_failure_while_swapping_names_the_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(dfd: int, name: str, tmp: str, expect: object, rel: str) -> object:
        fsafe.discard_temp(dfd, tmp)  # consumed either way, as the real one does
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fsafe, "swap_in", broken)
    with pytest.raises(TxnError) as caught:
        apply(root, Plan("t", (FileChange(root / A, "write", NEW, digest(OLD)),)))
    assert str(caught.value) == f"I/O error (EIO) on {A}; every file was restored, nothing was changed"
    assert (root / A).read_bytes() == OLD and [e["state"] for e in _journal(root)] == ["aborted"]
    assert os.listdir(root / ".rcs/state") == ["forge-state.json"]
