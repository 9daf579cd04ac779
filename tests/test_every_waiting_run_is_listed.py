"""Every waiting or failed rp1 run of a project is someone the operator must answer: the snapshot (and so the
fleet) lists each one by name, not the first twenty of them, up to a bound (`LISTED`) past which `unlisted`
says how many more there are."""

from __future__ import annotations

import json
import sqlite3

from rcs_tui.project import verdicts
from rcs_tui.project.feed import SnapshotFeed
from rcs_tui.rp1.fixtures import create_db


def project_with_waiting_runs(tmp_path, n: int):
    root = tmp_path / "p"
    (root / ".rcs" / "state").mkdir(parents=True)
    db = create_db(tmp_path / "rp1.db", 17)
    conn = sqlite3.connect(db)
    for i in range(n):
        rid = f"run-{i:03d}"
        at = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z"
        conn.execute("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at)"
                     " VALUES (?, 'build', 'f', ?, ?, ?)", (rid, str(root), at, at))
        conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, 'status_change', 'plan',"
                     " ?, ?)", (rid, json.dumps({"status": "running"}), at))
        conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, 'waiting_for_user',"
                     " 'plan', ?, ?)", (rid, json.dumps({"message": f"question {i}?"}), at))
    conn.commit()
    conn.close()
    return root, db


def test_twenty_five_waiting_runs_are_all_listed_and_each_needs_you(tmp_path):
    root, db = project_with_waiting_runs(tmp_path, 25)
    doc = SnapshotFeed(root, rp1_db=db).document()
    rp1 = doc["rp1"]
    assert rp1["counts"]["waiting"] == 25 and len(rp1["waiting"]) == 25
    assert rp1["unlisted"] == {"waiting": 0, "failed": 0}
    assert sorted(doc["attention"]["waiting"]) == [f"rp1/run-{i:03d}" for i in range(25)]
    assert len([v for v in doc["needs_you"] if v["item"].startswith("rp1/")]) == 25


def test_past_the_bound_the_rest_are_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(verdicts, "LISTED", 10)
    root, db = project_with_waiting_runs(tmp_path, 25)
    rp1 = SnapshotFeed(root, rp1_db=db).document()["rp1"]
    assert len(rp1["waiting"]) == 10 and rp1["unlisted"] == {"waiting": 15, "failed": 0}
