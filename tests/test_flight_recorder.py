"""The flight recorder on disk: `rcs-tui record` appends one strict JSON line per change, survives `kill -9`
without losing or repeating an entry, never records from two processes at once (another takes over when
the recorder dies), rotates its file, and `rcs-tui history --json` prints what it kept."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from tests.conftest import RCS_TUI
from tests.statefix import canonical, mode

HISTORY = ".rcs/logs/rcs-tui-history.jsonl"


def lines(root: Path) -> list[dict]:
    """Every line of the current history file, parsed strictly (a bad line fails the test)."""
    path = root / HISTORY
    if not path.exists():
        return []
    out = []
    for raw in path.read_text().splitlines():
        out.append(json.loads(raw, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}")))
    return out


def wait_for(predicate, timeout: float = 60.0, what: str = "", shown=None) -> None:  # a loaded 2-core CI box
    """Wait for `predicate`; on a timeout, say what `shown()` (what there is instead) returns."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}" + (f"; instead: {shown()}" if shown else ""))


def runtime_write(root: Path, **fields) -> None:
    """forge's state file as the runtime writes it: a temp file renamed over the old one. A recorder never
    reads it half-written (a torn file would rightly be recorded as unreadable for a moment)."""
    atomic_write(root / ".rcs" / "state" / "forge-state.json", dump_json({"active": True, **fields}))


def start_record(root: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([RCS_TUI, "record", "--root", str(root)], stdout=log.open("a"),
                            stderr=subprocess.STDOUT, env=dict(os.environ))


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait(timeout=20)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "p"
    mode(root, "forge", current_phase="executing", iteration=1, max_iterations=99)
    canonical(root, ["forge"])
    (root / ".rcs" / "logs").mkdir(parents=True)
    return root


def recording(log: Path) -> bool:
    return log.exists() and "recording " in log.read_text()


class TestRecord:
    def test_each_change_is_one_strict_versioned_line_and_history_json_prints_them(self, project, tmp_path, run_cli):
        log = tmp_path / "rec.log"
        proc = start_record(project, log)

        def seen() -> tuple[list[dict], str]:
            return lines(project), log.read_text()

        try:
            wait_for(lambda: len(lines(project)) == 1, what="the baseline", shown=seen)
            runtime_write(project, current_phase="verifying", iteration=2, max_iterations=99)
            wait_for(lambda: len(lines(project)) == 3, what="phase and iteration", shown=seen)
            res = run_cli("state", "clear", "--mode", "forge", "--root", str(project))
            assert res.code == 0, res.stderr
            journal_id = json.loads(res.stdout)["journal_id"]
            wait_for(lambda: len(lines(project)) == 4, what="the clear", shown=seen)
            runtime_write(project, current_phase="executing", iteration=1, owner_rcs_session_id="rcs-other",
                 owner_pid=os.getpid())
            wait_for(lambda: len(lines(project)) == 5, what="the comeback", shown=seen)
        finally:
            stop(proc)
        got = lines(project)
        assert [e["v"] for e in got] == [1] * 5 and [e["seq"] for e in got] == [1, 2, 3, 4, 5]
        assert [(e["kind"], e.get("subject")) for e in got] == [
            ("baseline", None), ("phase", "root/forge"), ("iteration", "root/forge"), ("cleared", "root/forge"),
            ("came_back", "root/forge")]
        assert (got[1]["from"], got[1]["to"], got[2]["from"], got[2]["to"]) == ("executing", "verifying", 1, 2)
        assert (got[3]["by"], got[3]["journal_id"]) == ("operator", journal_id)
        back = got[4]
        assert (back["cleared_by"], back["journal_id"], back["clear_id"]) == ("operator", journal_id, "h4")
        assert back["writer"] == {"session": "rcs-other", "pid": os.getpid()}
        assert 0 <= back["after_s"] < 20

        res = run_cli("history", "--root", str(project), "--json")
        assert res.code == 0, res.stderr
        doc = res.json
        assert (doc["version"], doc["kind"], doc["root"]) == ("1.0", "history", str(project))
        assert doc["entries"] == got
        assert [e["id"] for e in doc["open_comebacks"]] == ["h5"]
        assert doc["recorder"] is None  # the recorder stopped
        only = run_cli("history", "--root", str(project), "--json", "--member", "forge", "--since", "1h").json
        assert [e["id"] for e in only["entries"]] == ["h2", "h3", "h4", "h5"]
        text = run_cli("history", "--root", str(project)).stdout
        assert "root/forge CAME BACK 0s after the operator's clear; written by session rcs-other" in text
        assert "not acknowledged: root/forge CAME BACK" in text

    def test_acknowledging_a_comeback_is_a_history_entry_and_closes_it(self, project, run_cli):
        from rcs_tui.project.recorder import Recorder, acknowledge, open_comebacks, read_history

        rec = Recorder(project)
        rec.start()
        rec.observe({"members": {"root/forge": {"phase": "x"}}, "workers": {}, "tasks": {}, "runs": {}}, {}, [],
                    lambda v: None)
        rec.observe({"members": {}, "workers": {}, "tasks": {}, "runs": {}}, {}, [], lambda v: None)
        [back] = rec.observe({"members": {"root/forge": {"phase": "x"}}, "workers": {}, "tasks": {}, "runs": {}},
                             {}, [], lambda v: None)
        assert back["kind"] == "came_back" and open_comebacks(read_history(project)) == [back]
        entry = acknowledge(project, back["id"], "me@box")
        assert lines(project)[-1] == entry
        assert (entry["kind"], entry["item"], entry["actor"], entry["v"]) == ("ack", back["id"], "me@box", 1)
        assert open_comebacks(read_history(project)) == []
        assert run_cli("history", "--root", str(project), "--json").json["open_comebacks"] == []

    def test_a_bad_since_is_a_usage_error_in_json(self, project, run_cli):
        res = run_cli("history", "--root", str(project), "--since", "yesterday-ish", "--json")
        assert res.code != 0 and json.loads(res.stderr.strip().splitlines()[-1])["kind"] == "usage"
        assert "--since 'yesterday-ish'" in res.error

    def test_no_project_is_an_error(self, tmp_path, run_cli):
        res = run_cli("history", "--root", str(tmp_path), "--json")
        assert res.code == 1 and json.loads(res.stderr)["kind"] == "no_project"


class TestCrashes:
    def test_kill_9_mid_run_then_restart_loses_and_repeats_nothing(self, project, tmp_path):
        """The runtime moves forge's iteration 1 → 60 while the recorder is killed with SIGKILL at random
        moments and restarted: the iteration events form one unbroken chain (a lost change would break it,
        a repeated one would repeat a step), ending at 60, with every sequence number once."""
        rng = random.Random(2026)
        log = tmp_path / "rec.log"
        proc = start_record(project, log)
        wait_for(lambda: lines(project), what="the baseline")
        kills = 0
        for i in range(2, 61):
            runtime_write(project, current_phase="executing", iteration=i, max_iterations=99)
            time.sleep(rng.choice([0.0, 0.01, 0.05]))
            if i % 7 == 0:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=20)
                kills += 1
                proc = start_record(project, log)
        try:
            wait_for(lambda: any(e.get("to") == 60 for e in lines(project) if e["kind"] == "iteration"),
                     what="the last iteration")
        finally:
            stop(proc)
        got = lines(project)
        seqs = [e["seq"] for e in got]
        assert seqs == list(range(1, len(seqs) + 1)), seqs
        steps = [(e["from"], e["to"]) for e in got if e["kind"] == "iteration"]
        assert steps[0][0] == 1 and steps[-1][1] == 60
        assert all(a[1] == b[0] for a, b in zip(steps, steps[1:], strict=False)), steps
        assert kills == 8

    def test_a_crash_between_appending_and_the_checkpoint_is_replayed_not_rewritten(self, project):
        from rcs_tui.project import recorder as rec_mod
        from rcs_tui.project.feed import SnapshotFeed

        feed = SnapshotFeed(project, summary=True, scopes=False)
        rec = rec_mod.Recorder(project, checkpoint_every=0)
        rec.start()
        rec_mod.observe_feed(rec, feed, feed.document())
        runtime_write(project, current_phase="verifying", iteration=2, max_iterations=99)

        def die() -> None:
            raise KeyboardInterrupt  # the process ends right after the lines were appended

        rec._checkpoint = die
        with pytest.raises(KeyboardInterrupt):
            rec_mod.observe_feed(rec, feed, feed.document())
        assert [e["kind"] for e in lines(project)] == ["baseline", "phase", "iteration"]
        again = rec_mod.Recorder(project)
        again.start()
        assert again.seq == 3
        assert rec_mod.observe_feed(again, SnapshotFeed(project, summary=True, scopes=False),
                                    feed.document()) == []
        runtime_write(project, current_phase="fixing", iteration=2, max_iterations=99)
        [e] = rec_mod.observe_feed(again, feed, feed.document())
        assert (e["seq"], e["kind"], e["from"], e["to"]) == (4, "phase", "verifying", "fixing")


class TestOneRecorder:
    def test_two_watchers_never_both_record_and_the_other_takes_over_a_dead_one(self, project, tmp_path):
        from rcs_tui.project.recorder import recorder_holder

        logs = [tmp_path / "a.log", tmp_path / "b.log"]
        procs = [start_record(project, logs[0]), start_record(project, logs[1])]
        try:
            wait_for(lambda: recorder_holder(project) is not None and lines(project), what="a recorder")
            holder = recorder_holder(project)["pid"]
            assert holder in (procs[0].pid, procs[1].pid)
            first = 0 if holder == procs[0].pid else 1
            # the other one starts (seconds on a loaded machine), finds the lock taken and stands by
            other = logs[1 - first]
            wait_for(lambda: "standby: another rcs-tui records" in other.read_text(), what="the standby",
                     shown=lambda: [log.read_text() for log in logs])
            assert recording(logs[first]) and not recording(logs[1 - first])
            for i in range(2, 12):
                runtime_write(project, current_phase="executing", iteration=i, max_iterations=99)
                time.sleep(0.05)
            wait_for(lambda: any(e.get("to") == 11 for e in lines(project)), what="iteration 11")
            procs[first].send_signal(signal.SIGKILL)
            procs[first].wait(timeout=20)
            wait_for(lambda: recording(logs[1 - first]), what="the takeover")
            assert recorder_holder(project)["pid"] == procs[1 - first].pid
            runtime_write(project, current_phase="executing", iteration=12, max_iterations=99)
            wait_for(lambda: any(e.get("to") == 12 for e in lines(project)), what="iteration 12")
        finally:
            for p in procs:
                stop(p, signal.SIGKILL)
        got = lines(project)
        assert [e["seq"] for e in got] == list(range(1, len(got) + 1))
        steps = [(e["from"], e["to"]) for e in got if e["kind"] == "iteration"]
        assert steps[-1][1] == 12 and all(a[1] == b[0] for a, b in zip(steps, steps[1:], strict=False))
        assert [e["kind"] for e in got].count("recorder") == 1  # the one takeover, said once


class TestRotation:
    def test_the_history_rotates_by_size_keeping_three_older_files_and_reads_across_them(self, project):
        from rcs_tui.project.recorder import KEEP, Recorder, read_history

        rec = Recorder(project, rotate_bytes=2000)
        rec.start()
        for i in range(200):
            rec.observe({"members": {"root/forge": {"phase": "p", "iteration": i}}, "workers": {}, "tasks": {},
                         "runs": {}}, {}, [], lambda v: None)
        logs = project / ".rcs" / "logs"
        names = sorted(p.name for p in logs.iterdir() if p.name.startswith("rcs-tui-history") and "jsonl" in p.name)
        assert names == ["rcs-tui-history.1.jsonl", "rcs-tui-history.2.jsonl", "rcs-tui-history.3.jsonl",
                         "rcs-tui-history.jsonl"]
        assert all((logs / n).stat().st_size < 2000 + 400 for n in names)
        kept = read_history(project)
        seqs = [e["seq"] for e in kept]
        assert seqs == list(range(seqs[0], 201)) and seqs[0] > 1  # the oldest were dropped, in order
        assert KEEP == 3
