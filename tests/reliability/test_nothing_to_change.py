"""A write or an undo that would change nothing writes nothing and says so: no file rewritten, no journal
entry, and an answer that says no file was written (a clear with nothing to remove: test_truthful_clear.py)."""

from __future__ import annotations

import json
from pathlib import Path

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def journal_lines(root: Path) -> list[str]:
    path = root / JOURNAL
    return path.read_text().splitlines() if path.exists() else []


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

