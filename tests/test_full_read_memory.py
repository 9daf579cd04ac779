"""A full read keeps one copy of each field name and short value that many state files repeat, and the
data it gives is exactly what the files hold."""

from __future__ import annotations

import json

from rcs_tui.state.reader import read_snapshot
from tests.statefix import mode


def test_files_read_in_one_pass_share_their_field_names_and_short_values(tmp_path):
    long_text = "x" * 200
    for i in range(3):
        mode(tmp_path, "forge", session=f"s-{i}", current_phase="executing", task_description=long_text,
             iteration=i)
    snap = read_snapshot(tmp_path)
    docs = [snap.sessions[f"s-{i}"].modes["forge"].data for i in range(3)]
    for i, doc in enumerate(docs):
        path = tmp_path / ".rcs" / "state" / "sessions" / f"s-{i}" / "forge-state.json"
        assert doc == json.loads(path.read_text())
    keys = [next(k for k in d if k == "current_phase") for d in docs]
    assert keys[0] is keys[1] is keys[2]
    assert docs[0]["current_phase"] is docs[1]["current_phase"] is docs[2]["current_phase"]
