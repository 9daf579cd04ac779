"""The console's journal view counts every file an action touched: the files it rewrote and the files it
appended a line to (a task override writes `state.json` and appends to `transcript.jsonl`: 2, as its undo
says), each once."""

from __future__ import annotations

import json

from rcs_tui.ui.console.journal import journal_rows


def test_files_rewritten_and_appended_to_are_each_counted_once(tmp_path):
    log = tmp_path / ".rcs" / "logs" / "rcs-tui-journal.jsonl"
    log.parent.mkdir(parents=True)
    at = "2026-11-28T10:00:00.000Z"
    entries = [
        {"id": "E1", "action": "task override", "at": at, "state": "done", "complete": True,
         "files": [{"path": ".rcs/tasks/t1/state.json"}],
         "appends": [{"path": ".rcs/tasks/t1/transcript.jsonl", "line": "{}\n", "size_before": 0}]},
        {"id": "E2", "action": "state clear forge", "at": at, "state": "done", "complete": True,
         "files": [{"path": ".rcs/state/forge-state.json"}, {"path": ".rcs/state/skill-active-state.json"}],
         "appends": [{"path": ".rcs/state/forge-state.json", "line": "x\n", "size_before": 0}]},
        {"id": "E3", "action": "state clear team", "at": at, "state": "done", "complete": True, "files": []},
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    counts = {key: cells[2].plain for key, cells in journal_rows(tmp_path)}
    assert counts == {"E1": "2", "E2": "2", "E3": "0"}
