"""Write-path cases from a second review: each names the defect it pins.

Forged journal lines with undecodable paths, a redo whose entry is gone, input text that is not valid
Unicode, endless input files and config files, hard links out of the tree, and undo of an undo.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import tree_digest

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def project(tmp_path: Path, run_cli) -> Path:
    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"active": true}', "--root", str(root))
    assert res.code == 0, res.stderr
    return root


def append_journal(root: Path, line: str) -> None:
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def no_internal_error(res) -> None:
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_redo_of_an_entry_no_longer_in_the_journal_is_a_clear_refusal(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    append_journal(root, json.dumps({"state": "done", "id": "U9", "undoes": "ghost", "action": "undo x",
                                     "files": [], "appends": []}))
    res = run_cli("redo", "--root", str(root))
    no_internal_error(res)
    assert res.code == 1
    assert "cannot redo ghost: that entry is no longer in the journal" in res.error


@pytest.mark.parametrize("state", ["done", "pending"])
def test_a_journal_path_no_file_name_can_have_is_refused(tmp_path, run_cli, state):
    root = project(tmp_path, run_cli)
    before = tree_digest(root / ".rcs/state")
    forged = '{"state":"STATE","id":"S1","action":"a","files":[{"path":".rcs/state/\\ud800.json",' \
             '"before_b64":null,"after_sha":"00"}]}'
    append_journal(root, forged.replace("STATE", state))
    for args in (["undo", "S1"], ["doctor"], ["doctor", "--fix"]):
        res = run_cli(*args, "--root", str(root))
        no_internal_error(res)
        assert res.code in ((1,) if args[0] == "undo" else (0, 3)), (args, res.code, res.stderr)
    res = run_cli("undo", "S1", "--root", str(root))
    assert "journal entry S1 names an unsafe path" in res.error and "nothing was changed" in res.error
    assert tree_digest(root / ".rcs/state") == before


@pytest.mark.parametrize("text", ['{"a": "\\ud800"}', '{"a": "\udcff"}'])
def test_state_write_refuses_text_that_is_not_valid_unicode(tmp_path, run_cli, text):
    root = project(tmp_path, run_cli)
    before = (root / ".rcs/state/forge-state.json").read_bytes()
    for extra in ([], ["--dry-run"]):
        res = run_cli("state", "write", "--mode", "forge", "--input", text, "--root", str(root), *extra)
        no_internal_error(res)
        assert res.code == 1
        assert "not valid Unicode" in res.error
    assert (root / ".rcs/state/forge-state.json").read_bytes() == before


def test_input_file_is_bounded(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    res = run_cli("state", "write", "--mode", "forge", "--input-file", "/dev/zero", "--root", str(root), timeout=30)
    assert res.code == 1 and "larger than" in res.error


def test_config_file_that_is_a_fifo_or_device_never_hangs(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    res = run_cli("locate", "--root", str(root), env={"RCS_TUI_CONFIG": str(fifo)}, timeout=20)
    assert res.code == 1 and "not a regular file (a FIFO)" in res.error
    link = tmp_path / "zero.toml"
    link.symlink_to("/dev/zero")
    for args in (["config"], ["hud", "--once"]):
        res = run_cli(*args, "--root", str(root), env={"RCS_TUI_CONFIG": str(link)}, timeout=20)
        assert res.code == 1 and "not a regular file (a device)" in res.error, (args, res.stderr)


def test_hard_links_out_of_the_tree_are_never_written_through(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
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


def test_undoing_an_undo_puts_the_original_back_in_effect(tmp_path, run_cli):
    root = project(tmp_path, run_cli)
    state = root / ".rcs/state/forge-state.json"
    written = state.read_bytes()
    first = run_cli("undo", "--json", "--root", str(root)).json
    assert not state.exists()
    run_cli("undo", first["journal_id"], "--root", str(root))
    assert state.read_bytes() == written
    entries = run_cli("journal", "--json", "--root", str(root)).json
    rows = entries["entries"] if isinstance(entries, dict) else entries
    original = next(e for e in rows if e["id"] == first["undone"])
    assert not original.get("undone"), original
