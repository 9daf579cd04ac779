"""Records anyone may have edited (the journal, the flight recorder's history and checkpoint, the rp1
database) and odd command-line values get a clear answer, never an internal error: a clear's journal entry
whose summary names its mode or scope with a list, rp1 events with ids of 0 and below, a history line with a
time past year 9999 or a list where an outcome goes, a damaged recorder checkpoint, `--since` reaching
before 1970, a write whose merged result no reader would take back, and a FIFO no one writes to."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from tests.statefix import canonical, mode

JOURNAL = Path(".rcs/logs/rcs-tui-journal.jsonl")
HISTORY = Path(".rcs/logs/rcs-tui-history.jsonl")
CHECKPOINT = Path(".rcs/logs/rcs-tui-history.checkpoint.json")


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


@pytest.mark.parametrize("summary", [{"mode": "forge", "scope": ["x"]}, {"mode": "forge", "scope": {}},
                                     {"mode": ["forge"], "scope": "root"}, ["not", "an", "object"]])
def test_a_clear_entry_with_a_damaged_summary_is_reported_not_fatal(tmp_path, run_cli, summary):
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    entry = {"id": "E1", "action": "state clear forge", "at": now_iso(), "files": [], "state": "done",
             "complete": True, "summary": summary}
    (tmp_path / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / JOURNAL).write_text(json.dumps(entry) + "\n")
    res = run_cli("snapshot", "--json", "--root", str(tmp_path))
    assert res.code == 0 and json.loads(res.stdout)["active_set"] == ["forge"]
    res = run_cli("doctor", "--json", "--root", str(tmp_path))
    found = json.loads(res.stdout)["findings"]
    assert any("summary" in f["message"] for f in found), found  # the line is named as unusable, and why


def test_rp1_events_with_ids_of_zero_and_below_are_derived_like_any_other(tmp_path, run_cli):
    from rcs_tui.rp1.fixtures import create_db

    db = create_db(tmp_path / "rp1.db", 17)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at)"
                 " VALUES ('run-a', 'build', 'f', ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
                 (str(tmp_path),))
    for eid, step, status in ((-7, "plan", "completed"), (0, "build", "failed")):
        conn.execute("INSERT INTO events (id, run_id, type, step, data, created_at) VALUES (?, 'run-a',"
                     " 'status_change', ?, ?, '2026-01-01T00:00:00.000Z')", (eid, step, json.dumps({"status": status})))
    conn.commit()
    conn.close()
    (tmp_path / ".rcs").mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    for _ in range(2):  # first ever, then from what the first kept
        res = run_cli("rp1", "runs", "--all-projects", "--json", "--db", str(db), "--root", str(tmp_path), env=env)
        assert res.code == 0
        (run,) = json.loads(res.stdout)["runs"]
        assert (run["id"], run["status"]) == ("run-a", "failed")


@pytest.mark.parametrize("since", ["740000d", "9999999999999999999999s", "0001-01-01T00:00:00Z"])
def test_since_before_1970_is_a_usage_error(tmp_path, run_cli, since):
    (tmp_path / ".rcs").mkdir()
    res = run_cli("history", "--since", since, "--root", str(tmp_path))
    assert res.code == 2
    assert json.loads(res.stderr.strip().splitlines()[-1]) == {
        "error": f"--since {since!r}: that is before 1970; the history holds nothing from then", "kind": "usage"}


@pytest.mark.parametrize(("line", "why"), [
    ({"v": 1, "seq": 1, "ts": 1e300, "kind": "cleared", "subject": "root/forge", "state": None},
     '"ts" is not a time'),
    ({"v": 1, "seq": 1, "ts": 1.0, "kind": "came_back", "subject": "root/forge", "state": {"outcome": []}},
     '"state" is not an object of plain values'),
    ({"v": 1, "seq": 1, "ts": 1.0, "kind": "outcome", "subject": "root/forge", "to": ["x"]},
     '"to" is not a plain value'),
])
def test_a_history_line_no_reader_can_use_is_skipped_with_a_warning(tmp_path, run_cli, line, why):
    good = {"v": 1, "seq": 2, "ts": 2.0, "kind": "appeared", "subject": "root/team", "state": {"phase": "exec"}}
    (tmp_path / HISTORY).parent.mkdir(parents=True)
    (tmp_path / HISTORY).write_text(json.dumps(line) + "\n" + json.dumps(good) + "\n")
    res = run_cli("history", "--root", str(tmp_path))
    assert res.code == 0 and why in res.stdout + res.stderr
    doc = json.loads(run_cli("history", "--json", "--root", str(tmp_path)).stdout)
    assert [e["subject"] for e in doc["entries"]] == ["root/team"]
    assert any(why in w for w in doc["warnings"]), doc["warnings"]


@pytest.mark.parametrize("checkpoint", [{"v": 1, "seq": 1, "summary": []},
                                        {"v": 1, "seq": 1, "summary": {"members": []}},
                                        {"v": 1, "seq": 1, "summary": {"runs": {"r": ["x"]}}},
                                        {"v": 1, "seq": "1", "summary": {}}])
def test_the_recorder_starts_afresh_from_a_damaged_checkpoint(tmp_path, checkpoint):
    from rcs_tui.project.recorder import Recorder

    (tmp_path / CHECKPOINT).parent.mkdir(parents=True)
    (tmp_path / CHECKPOINT).write_text(json.dumps(checkpoint))
    rec = Recorder(tmp_path)
    rec.start()
    assert rec.summary is None and rec.seq == 0  # its next picture is recorded as a new baseline


def test_a_write_whose_merged_file_no_reader_would_take_is_refused_and_nothing_changes(tmp_path, run_cli):
    from rcs_tui.files.io import MAX_STATE_BYTES

    half = MAX_STATE_BYTES // 2 + 1000
    (tmp_path / ".rcs" / "state").mkdir(parents=True)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"mode": "forge", "a": "x" * half}))
    second.write_text(json.dumps({"mode": "forge", "b": "y" * half}))
    assert run_cli("state", "write", "--input-file", str(first), "--json", "--root", str(tmp_path)).code == 0
    target = tmp_path / ".rcs" / "state" / "forge-state.json"
    before = target.read_bytes()
    res = run_cli("state", "write", "--input-file", str(second), "--json", "--root", str(tmp_path))
    assert res.code == 1
    err = json.loads(res.stderr.strip().splitlines()[-1])
    assert err["error"].startswith("refusing to write .rcs/state/forge-state.json: ")
    assert f"more than the {MAX_STATE_BYTES:,} a state file may hold" in err["error"]
    assert target.read_bytes() == before
    assert run_cli("state", "clear", "--mode", "forge", "--json", "--root", str(tmp_path)).code == 0


def test_an_input_fifo_no_one_writes_to_is_an_error_not_a_hang(tmp_path, monkeypatch):
    from rcs_tui.cli import state_cmd
    from rcs_tui.cli.errors import CliError

    monkeypatch.setattr(state_cmd, "INPUT_WAIT_S", 0.5)
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(CliError, match="nothing was written to it within 0 s"):
        state_cmd._read_input_file(str(fifo))
    assert time.monotonic() - started < 10


def test_an_input_fifo_read_once_its_writer_comes(tmp_path, run_cli):
    import subprocess

    (tmp_path / ".rcs" / "state").mkdir(parents=True)
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"sleep 1; echo '{{\"mode\": \"forge\"}}' > {fifo}"])
    try:
        res = run_cli("state", "read", "--input-file", str(fifo), "--json", "--root", str(tmp_path))
        assert res.code == 0 and json.loads(res.stdout)["mode"] == "forge"
    finally:
        writer.wait(30)


@pytest.mark.parametrize("argv,option,why", [
    (["fleet", "--once", "--deadline", "nan"], "--deadline", "'nan' is not a finite number."),
    (["fleet", "--once", "--timeout", "nan"], "--timeout", "'nan' is not a finite number."),
    (["doctor", "--idle-minutes", "nan"], "--idle-minutes", "'nan' is not a finite number."),
    (["doctor", "--idle-minutes", "-5"], "--idle-minutes", "-5.0 is not in the range x>0."),
    (["console", "--watch-seconds", "nan"], "--watch-seconds", "'nan' is not a finite number."),
    (["snapshot", "--follow", "--heartbeat", "nan"], "--heartbeat", "'nan' is not a finite number."),
])
def test_a_number_that_is_not_one_is_a_usage_error(tmp_path, run_cli, argv, option, why):
    """NaN passes every range check by comparison: a fleet that waited "nan s", every run idle."""
    mode(tmp_path, "forge", current_phase="executing")
    where = ["--project", str(tmp_path)] if argv[0] == "fleet" else ["--root", str(tmp_path)]
    res = run_cli(*argv, *where)
    assert res.code == 2
    assert json.loads(res.stderr.splitlines()[-1]) == {"error": f"Invalid value for '{option}': {why}",
                                                       "kind": "usage"}
