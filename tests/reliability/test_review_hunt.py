"""Cases from a third review of the write path; each test names the input and the behaviour it pins.

Text no UTF-8 file can hold arriving as a JSON escape, an explicit session id that is not an id on the
read-only commands, a write that changes nothing, a lock file removed while it is held, a lock file
holding JSON nested too deeply, and a journal rotated by another process while an entry is open.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rcs_tui.files.fsafe import Tree
from rcs_tui.files.io import read_json
from rcs_tui.state import ops, txn
from rcs_tui.state.lock import LOCK_REL, LockBusy, store_lock
from tests import statefix as sf
from tests.conftest import tree_digest

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    sf.mode(root, "forge", current_phase="executing", iteration=1)
    sf.mode(root, "ultrawork")
    sf.canonical(root, ["forge", "ultrawork"])
    return root


def journal_lines(root: Path) -> list[str]:
    path = root / JOURNAL
    return path.read_text().splitlines() if path.exists() else []


def test_a_lone_surrogate_escape_in_a_state_file_is_refused_where_it_is_read(project, run_cli):
    """`"\\ud800"` is valid JSON syntax but no text a UTF-8 file can hold: it used to be planned on and then
    fail inside the JSON writer as `internal error: ValueError`."""
    path = project / ".rcs/state/forge-state.json"
    path.write_text('{"active": true, "current_phase": "\\ud800"}')
    before = tree_digest(project)
    why = "holds text that is not valid Unicode (a lone surrogate escape \\ud800); not usable as state"
    assert read_json(path).error == why
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"iteration": 2}', "--dry-run", "--json",
                  "--root", str(project))
    assert res.code == 1
    assert res.error == f".rcs/state/forge-state.json: {why}; fix or clear it first (nothing was changed)"
    snap = run_cli("snapshot", "--json", "--root", str(project)).json
    assert {"path": ".rcs/state/forge-state.json", "error": why} in snap["errors"]
    assert tree_digest(project) == before
    res = run_cli("state", "clear", "--mode", "forge", "--json", "--root", str(project))  # the way out still works
    assert res.code == 0 and res.json["cleared"] is True and not path.exists()


def test_a_proper_surrogate_pair_escape_is_ordinary_text(project):
    path = project / ".rcs/state/forge-state.json"
    path.write_text('{"active": true, "current_phase": "\\ud83d\\ude00"}')
    assert read_json(path).ok and read_json(path).data["current_phase"] == "\U0001f600"


@pytest.mark.parametrize("bad", ["a\nb", "\x1b[31mred", "../x", "x" * 65])
def test_an_invalid_session_id_on_read_only_commands_is_a_usage_error_not_an_internal_one(project, run_cli, bad):
    """snapshot/hud --once used to end in `internal error: AttributeError` on such an id."""
    for args in (["snapshot", "--session-id", bad, "--json"], ["hud", "--once", "--session", bad],
                 ["overlay", "--session", bad, "--json"]):
        res = run_cli(*args, "--root", str(project))
        assert res.code == 1, (args, res.stdout)
        assert res.error.startswith("invalid session id ") and res.error.endswith(
            "must match ^[A-Za-z0-9_-]{1,64}$"), (args, res.error)
        assert "\x1b" not in res.stderr and "\n" not in res.stderr.strip()


def test_a_write_that_changes_nothing_writes_nothing_and_says_so(project, run_cli):
    """It used to rewrite the runtime's file (reformatted) and journal an action that changed no value."""
    path = project / ".rcs/state/forge-state.json"
    path.write_text('{"active":true,"current_phase":"executing","iteration":1}')  # the runtime's own layout
    before = path.read_bytes()
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"iteration": 1, "mode": "forge"}', "--json",
                  "--root", str(project))
    assert res.code == 0
    assert res.json == {"success": True, "mode": "forge", "path": str(path), "changed": False,
                        "message": "nothing to write: .rcs/state/forge-state.json already holds every given field"}
    assert path.read_bytes() == before and journal_lines(project) == []
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"iteration": 2}', "--json", "--root", str(project))
    assert res.json["changed"] is True and res.json["journal_id"]
    assert json.loads(path.read_text())["iteration"] == 2 and len(journal_lines(project)) == 1


def test_a_lock_file_removed_while_held_does_not_let_a_second_writer_in(project):
    holder = Tree(project)
    with store_lock(holder, "first", timeout=0):
        (project / LOCK_REL).unlink()  # e.g. a cleanup script
        with pytest.raises(LockBusy, match=r"^another rcs-tui process holds \.rcs/logs/rcs-tui\.lock"):
            with store_lock(Tree(project), "second", timeout=0.2):
                pytest.fail("a second writer got the lock")
    with store_lock(Tree(project), "third", timeout=0):  # released: the next writer gets it
        pass


def test_a_lock_file_replaced_while_held_does_not_let_a_second_writer_in(project, tmp_path):
    with store_lock(Tree(project), "first", timeout=0):
        other = project / ".rcs/logs/other"
        other.write_text("{}")
        os.replace(other, project / LOCK_REL)
        with pytest.raises(LockBusy):
            with store_lock(Tree(project), "second", timeout=0.2):
                pytest.fail("a second writer got the lock")


def test_a_lock_file_nested_too_deeply_only_loses_the_holder_name(project):
    with store_lock(Tree(project), "first", timeout=0):
        (project / LOCK_REL).write_text("[" * 2000 + "]" * 2000)  # under the 4 KiB read, deeper than the parser goes
        with pytest.raises(LockBusy) as err:
            with store_lock(Tree(project), "second", timeout=0.1):
                pass
    assert str(err.value).startswith("another rcs-tui process holds .rcs/logs/rcs-tui.lock; gave up after 0 s")


def test_a_journal_rotated_by_another_process_mid_entry_is_never_written_into(project, monkeypatch):
    """The entry's state is marked in place at its offset. If another process rotates the journal and starts a
    new one meanwhile, that offset belongs to someone else's file: writing "done" there used to punch NUL
    bytes and a stray word into the new journal. Now the mark refuses, the change is rolled back, and both
    journal files keep their bytes."""
    op = ops.plan_clear(project, "ultrawork")
    journal = project / JOURNAL
    rotated = project / ".rcs/logs/rcs-tui-journal.1.jsonl"
    theirs = b'{"state": "done", "id": "OTHER", "files": []}\n'
    real_swap = txn._swap

    def rotate_then_swap(step):
        if not rotated.exists():
            os.replace(journal, rotated)
            journal.write_bytes(theirs)
        real_swap(step)

    monkeypatch.setattr(txn, "_swap", rotate_then_swap)
    before = tree_digest(project / ".rcs/state")
    with pytest.raises(txn.TxnError, match="rotated, truncated or replaced by another process"):
        op.run(project)
    assert tree_digest(project / ".rcs/state") == before  # every file restored
    assert journal.read_bytes() == theirs
    [line] = rotated.read_text().splitlines()
    assert json.loads(line)["state"] == "pending"  # left for the doctor, which shows it as interrupted


@pytest.mark.parametrize("depth", [101, 900])
def test_json_nested_deeper_than_the_cap_is_refused_where_it_is_read(project, run_cli, depth):
    """A document that parses just under the interpreter's recursion limit (depth 900) used to end in
    `internal error: RecursionError` in the sanitiser of `state read`, `state get-status` and `task show`."""
    from tests.fixtures_tasks import make_task

    nested = "[" * depth + "]" * depth
    (project / ".rcs/state/forge-state.json").write_text('{"active": true, "x": ' + nested + "}")
    make_task(project, "t1", "codegen", state={"phase": "codegen", "x": json.loads("[" * 50 + "]" * 50)})
    (project / ".rcs/tasks/t1/state.json").write_text('{"phase": "codegen", "x": ' + nested + "}")
    why = "JSON nested deeper than 100 levels"
    res = run_cli("state", "read", "--mode", "forge", "--json", "--root", str(project))
    assert res.code == 1 and res.error == f".rcs/state/forge-state.json: {why}"
    status = run_cli("state", "get-status", "--json", "--root", str(project))
    assert status.code == 0 and status.json["statuses"]["forge"]["error"] == why
    res = run_cli("task", "show", "t1", "--json", "--root", str(project))
    assert res.code == 1 and res.error == f".rcs/tasks/t1/state.json: {why}"
    res = run_cli("state", "write", "--mode", "ultrawork", "--input", '{"x": ' + nested + "}", "--json",
                  "--root", str(project))
    assert res.code == 1 and res.error == "--input: invalid JSON: nested deeper than 100 levels"


def test_undo_of_a_change_already_reverted_outside_says_it_wrote_nothing(project, run_cli):
    """It used to answer `{"undone": …, "restored": []}` like any undo; now it says no file was written."""
    state = project / ".rcs/state"
    saved = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
    assert run_cli("state", "clear", "--mode", "forge", "--root", str(project)).code == 0
    for name, data in saved.items():  # the runtime puts every file back as it was
        (state / name).write_bytes(data)
    res = run_cli("undo", "--json", "--root", str(project))
    assert res.code == 0 and res.json["restored"] == []
    assert res.json["message"].startswith("nothing to restore: every file of ")
    assert res.json["message"].endswith("it is recorded as undone, no file was written")
    assert {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()} == saved
