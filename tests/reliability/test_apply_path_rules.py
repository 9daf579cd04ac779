"""The transaction's apply path, in-process: what a plan leaves on disk and in the journal, and what a
refusal says and leaves unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from rcs_tui.files.io import digest
from rcs_tui.state.txn import FileChange, Plan, apply

JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def test_a_write_puts_the_bytes_in_place_and_journals_the_before_image(tmp_path: Path) -> None:
    path = tmp_path / ".rcs/state/forge-state.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"active": true}\n')
    entry = apply(tmp_path, Plan("test", (FileChange(path, "write", b'{"active": false}\n',
                                                     digest(b'{"active": true}\n'), "why"),)), actor="me")
    assert path.read_bytes() == b'{"active": false}\n'
    lines = [json.loads(x) for x in (tmp_path / JOURNAL).read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["id"] == entry["id"] and lines[0]["state"] == "done"
    assert lines[0]["actor"] == "me" and lines[0]["files"][0]["path"] == ".rcs/state/forge-state.json"
