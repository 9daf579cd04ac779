"""Never report success for something that did not happen, and never plan on a file that was not read.

A typo'd mode, a session that does not exist and a clear with nothing to remove each get an honest
answer (exact JSON, exit code), leave the tree byte-identical and write no journal entry. A mode file
the reader refused (a FIFO, a directory, a link out of the tree) is never planned: `state clear`
names the file and why, at once, instead of blocking under the store lock.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import statefix as sf
from tests.conftest import RCS_TUI

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"
KNOWN = "autopilot, autoresearch, blueprint, deep-interview, forge, team, ultraqa, ultrawork"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    sf.mode(root, "ultrawork", current_phase="executing")
    sf.canonical(root, ["ultrawork"])
    sf.mode(root, "forge", "s1", current_phase="executing")
    sf.canonical(root, ["forge"], "s1")
    return root


def journal_lines(root: Path) -> int:
    path = root / JOURNAL
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_typo_mode_is_an_error_naming_the_known_modes(project, run_cli, digest_tree):
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "ultrwork", "--root", str(project))
    assert res.code == 1 and res.stdout == ""
    assert res.error == ("unknown mode 'ultrwork': not a tracked mode and no ultrwork-state.json or canonical entry "
                         f"anywhere in .rcs/state; known modes: {KNOWN}; nothing was changed")
    res = run_cli("state", "clear", "--mode", "ultrwork", "--all-sessions", "--root", str(project))
    assert res.code == 1 and res.error.startswith("unknown mode 'ultrwork'")
    assert digest_tree(project) == before and journal_lines(project) == 0


def test_untracked_mode_present_on_disk_is_known(project, run_cli):
    """A mode the runtime wrote that rcs-tui does not track is not a typo: it is cleared like any other."""
    sf.mode(project, "custom-flow", "s1", current_phase="x")
    res = run_cli("state", "clear", "--mode", "custom-flow", "--session-id", "s1", "--json", "--root", str(project))
    assert res.code == 0 and res.json["cleared"] is True
    assert not (project / ".rcs/state/sessions/s1/custom-flow-state.json").exists()
    res = run_cli("state", "clear", "--mode", "custom-flow", "--session-id", "s1", "--root", str(project))
    assert res.code == 1 and "known modes: " in res.error  # now it is nowhere: a typo again


def test_missing_session_is_an_error_and_never_created(project, run_cli, digest_tree):
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "ultrawork", "--session-id", "rcs-nosuch-session",
                  "--root", str(project))
    assert res.code == 1 and res.stdout == ""
    assert res.error == ("no session 'rcs-nosuch-session': .rcs/state/sessions/rcs-nosuch-session/ does not exist "
                         "(known sessions: s1); nothing was changed")
    assert not (project / ".rcs/state/sessions/rcs-nosuch-session").exists()
    assert digest_tree(project) == before and journal_lines(project) == 0


def test_list_active_with_a_typo_session_is_an_error(project, run_cli):
    res = run_cli("state", "list-active", "--session-id", "s2", "--root", str(project))
    assert res.code == 1 and res.stdout == ""
    assert res.error == ("no session 's2': .rcs/state/sessions/s2/ does not exist (known sessions: s1); "
                         "nothing was changed")
    ok = run_cli("state", "list-active", "--session-id", "s1", "--root", str(project))
    assert ok.code == 0 and ok.json == {"active_modes": ["forge"]}


def test_clear_with_nothing_to_clear_says_so_and_journals_nothing(project, run_cli, digest_tree):
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "autopilot", "--root", str(project))
    assert res.code == 0
    assert res.json == {"cleared": False, "mode": "autopilot",
                        "path": str(project / ".rcs/state/autopilot-state.json"),
                        "message": "nothing to clear: autopilot has no mode file and no canonical entry in root"}
    every = run_cli("state", "clear", "--mode", "autopilot", "--all-sessions", "--root", str(project))
    assert every.code == 0
    assert every.json == {"cleared": False, "mode": "autopilot", "all_sessions": True, "removed": 0, "paths": [],
                          "message": "nothing to clear: autopilot has no mode file and no canonical entry in root "
                                     "or any session"}
    assert digest_tree(project) == before and journal_lines(project) == 0


def test_second_clear_is_a_no_op_not_a_second_entry(project, run_cli):
    first = run_cli("state", "clear", "--mode", "ultrawork", "--root", str(project))
    assert first.code == 0 and first.json["cleared"] is True and first.json["journal_id"]
    lines = journal_lines(project)
    again = run_cli("state", "clear", "--mode", "ultrawork", "--root", str(project))
    assert again.code == 0 and again.json["cleared"] is False and "journal_id" not in again.json
    assert journal_lines(project) == lines
    undo = run_cli("undo", "--root", str(project))
    assert undo.code == 0 and undo.json["undone"] == first.json["journal_id"]


def test_session_tombstone_already_in_place_is_nothing_to_clear(tmp_path, run_cli):
    root = tmp_path
    sf.mode(root, "team", current_phase="team-exec")
    sf.mode(root, "team", "s1", active=False, current_phase="cleared")
    sf.canonical(root, [], "s1")
    res = run_cli("state", "clear", "--mode", "team", "--session-id", "s1", "--root", str(root))
    assert res.code == 0
    assert (res.json["cleared"], res.json["message"]) == (False, "nothing to clear: team is already cleared "
                                                                 "(tombstoned) in s1")


def test_fifo_mode_file_clear_errors_at_once(project, digest_tree):
    """The reader flags the FIFO; the planner must not plan a delete that the re-check then blocks on."""
    path = project / ".rcs/state/forge-state.json"
    os.mkfifo(path)
    before = digest_tree(project)
    for args in (["state", "clear", "--mode", "forge"], ["state", "clear", "--mode", "forge", "--all-sessions"],
                 ["state", "clear", "--mode", "forge", "--dry-run"]):
        try:
            proc = subprocess.run([RCS_TUI, *args, "--root", str(project)], capture_output=True, text=True,
                                  timeout=30, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{' '.join(args)}` hung on a FIFO mode file")
        assert proc.returncode == 1, (args, proc.stdout)
        assert json.loads(proc.stderr)["error"] == (
            ".rcs/state/forge-state.json: not a regular file (a FIFO); not read; refusing to plan a change to a "
            "file that could not be read (nothing was changed)")
    assert digest_tree(project) == before and journal_lines(project) == 0


@pytest.mark.parametrize("kind", ["directory", "link-out", "link-in", "too-large"])
def test_refused_mode_file_is_never_planned(project, run_cli, digest_tree, kind, tmp_path):
    """Planning reads a file the way apply re-reads it: what apply would refuse is refused here, with its reason.

    A link that stays inside .rcs/ used to be planned on and then refused at apply time as a change underneath.
    """
    path = project / ".rcs/state/sessions/s1/forge-state.json"
    path.unlink()
    if kind == "directory":
        path.mkdir()
        why = "not a regular file (a directory); not read"
    elif kind in ("link-out", "link-in"):
        target = tmp_path / "elsewhere.json" if kind == "link-out" else project / ".rcs/state/forge-copy.json"
        target.write_text('{"active": true}')
        path.symlink_to(target)
        why = "is a symlink; not followed"
    else:
        path.write_bytes(b'{"active": true, "pad": "' + b"x" * (9 * 1024 * 1024) + b'"}')
        why = f"too large ({path.stat().st_size} bytes > {8 * 1024 * 1024})"
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "forge", "--session-id", "s1", "--root", str(project))
    assert res.code == 1
    assert res.error == (f".rcs/state/sessions/s1/forge-state.json: {why}; refusing to plan a change to a file "
                         "that could not be read (nothing was changed)")
    assert digest_tree(project) == before


def test_corrupt_but_readable_mode_file_can_still_be_cleared(project, run_cli):
    """Invalid JSON was read (its bytes are known and checked): clearing it is the operator's way out."""
    path = project / ".rcs/state/sessions/s1/forge-state.json"
    path.write_text('{"active": tru')
    res = run_cli("state", "clear", "--mode", "forge", "--session-id", "s1", "--root", str(project))
    assert res.code == 0 and res.json["cleared"] is True
    assert not path.exists()


def test_doctor_never_repairs_a_member_whose_file_it_could_not_read(project, run_cli, digest_tree):
    """A canonical entry whose mode file is a FIFO (or torn) is reported, never dropped as stale."""
    path = project / ".rcs/state/sessions/s1/forge-state.json"
    path.unlink()
    os.mkfifo(path)
    sf.mode(project, "ultrawork", current_phase="executing")
    (project / ".rcs/state/ultrawork-state.json").write_text('{"active": tr')
    before = digest_tree(project)
    res = run_cli("doctor", "--fix", "--json", "--session-id", "s1", "--root", str(project), timeout=30)
    assert res.code == 3, res.stderr  # the unreadable members remain: the doctor says so in its status
    kinds = {f["id"]: (f["kind"], f["repair"]) for f in res.json["findings"]}
    assert kinds["stale:s1:forge"] == ("unreadable-member", None)
    assert kinds["stale:root:ultrawork"] == ("unreadable-member", None)
    assert res.json["fix"] is None or res.json["fix"]["applied"] == []
    assert digest_tree(project) == before and journal_lines(project) == 0
