"""How the journal is read back: which entries count, which lines are skipped and with what warning, which
entry `undo` takes, and what undo restores or refuses (in-process, so mutation testing sees these rules)."""

from __future__ import annotations

import json
from pathlib import Path

from rcs_tui.state.journal import load

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def _write(root: Path, lines: list[str | dict], name: str = JOURNAL) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    return path


def _entry(eid: str, **extra: object) -> dict:
    return {"id": eid, "action": "state clear forge", "files": [], "state": "done", **extra}


def test_entries_come_back_oldest_first_with_undone_marked(tmp_path: Path) -> None:
    _write(tmp_path, [_entry("a"), _entry("b"), _entry("c", undoes="a")])
    entries, warnings = load(tmp_path)
    assert [e["id"] for e in entries] == ["a", "b", "c"]
    assert [e["undone"] for e in entries] == [True, False, False]
    assert warnings == []
