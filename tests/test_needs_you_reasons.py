"""Every "needs you" says why and how sure: `snapshot --json` lists each entry of `attention` in `needs_you`
with its reason in words and its source (`reported`: the runtime said so; `inferred`: rcs-tui concluded it),
the fleet keeps them per row, and a host that predates them is shown as not saying."""

from __future__ import annotations

import json
import os
import time

from statefix import canonical, dead_pid, mode, pointer, state_dir, write

from rcs_tui.core import attention as att
from rcs_tui.core.times import iso
from rcs_tui.fleet.projects import parse_project
from rcs_tui.fleet.rows import Row, once_json


def project_needing_you(root):
    """A project with one entry of every kind a local tree can show."""
    (root / ".rcs").mkdir(parents=True)
    mode(root, "deep-interview", "s1", active=True, lifecycle_outcome="askuserQuestion")
    mode(root, "forge", "s1", active=False, lifecycle_outcome="failed")
    canonical(root, ["deep-interview", "team"], "s1")  # team: a canonical entry with no mode file (stale)
    team = state_dir(root) / "team" / "crew"
    write(team / "config.json", {"name": "crew", "worker_count": 3})
    write(team / "workers" / "gone" / "heartbeat.json", {"pid": dead_pid(), "alive": True})
    write(team / "workers" / "said-so" / "heartbeat.json", {"alive": False})
    quiet_since = time.time() - 600
    write(team / "workers" / "quiet" / "heartbeat.json", {"alive": True, "last_turn_at": iso(quiet_since, ms=True)})
    pointer(root, "s9", pid=dead_pid())
    return quiet_since


def test_snapshot_json_says_why_each_entry_needs_you_and_how_sure(run_cli, tmp_path):
    root = tmp_path / "p"
    quiet_since = project_needing_you(root)
    res = run_cli("snapshot", "--json", "--root", str(root))
    assert res.code == 0, res.stderr
    doc = res.json
    assert doc["version"] == "1.3"
    got = {(v["kind"], v["item"]): v for v in doc["needs_you"]}
    listed = {(k, item) for k in att.KEYS if k != "running" for item in doc["attention"][k]}
    assert set(got) == listed  # one verdict per listed entry, no more

    waiting = got[("waiting", "s1/deep-interview")]
    assert waiting["source"] == "reported"
    assert waiting["reason"] == "s1/deep-interview waits for your answer (lifecycle outcome askuserQuestion)"
    assert waiting["since"] is not None
    assert got[("failed", "s1/forge")]["source"] == "reported"

    gone = got[("dead", "crew/gone")]
    assert gone["source"] == "inferred" and "is not running" in gone["reason"]
    said = got[("dead", "crew/said-so")]
    assert said["source"] == "reported" and said["reason"] == "worker said-so of team crew: heartbeat says alive: false"

    quiet = got[("silent", "crew/quiet")]
    assert quiet["source"] == "inferred"
    assert quiet["reason"] == (f"worker quiet of team crew: no heartbeat since {iso(quiet_since)}; "
                               "a live worker beats at least every 2m")
    assert quiet["since"] == iso(quiet_since)

    stale = got[("stale", "s1/team")]
    assert stale["source"] == "inferred" and "canonical" in stale["reason"]

    ptr = got[("stale_pointer", "root/session.json")]
    assert ptr["source"] == "inferred"
    assert ptr["reason"].startswith("session.json names session s9, but pid ")


def test_a_member_back_after_a_clear_names_the_clear(run_cli, tmp_path):
    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    mode(root, "forge", None, active=True, current_phase="executing")
    res = run_cli("state", "clear", "--mode", "forge", "--root", str(root), "--json")
    assert res.code == 0, res.stderr
    entry = json.loads((root / ".rcs" / "logs" / "rcs-tui-journal.jsonl").read_text().splitlines()[-1])["id"]
    time.sleep(0.05)
    path = mode(root, "forge", None, active=True, current_phase="executing")  # the runtime writes it again
    later = time.time() + 90
    os.utime(path, (later, later))
    doc = run_cli("snapshot", "--json", "--root", str(root)).json
    [back] = [v for v in doc["needs_you"] if v["kind"] == "resurrected"]
    assert back["item"] == "root/forge" and back["source"] == "inferred"
    assert back["reason"].startswith("root/forge was written active 1m after you cleared it (journal entry ")
    assert back["reason"].endswith(f"{entry})")
    cleared = json.loads((root / ".rcs" / "logs" / "rcs-tui-journal.jsonl").read_text().splitlines()[-1])["at"]
    assert back["since"] == cleared[:19] + "Z"  # since the clear it came back after: every later write is the same


def test_the_fleet_keeps_the_reasons_and_a_host_that_predates_them_says_it_did_not_say():
    row = Row(parse_project("/srv/api"))
    row.take({"version": "1.2", "kind": "snapshot", "attention": {"waiting": ["s1/forge", "rp1/r7"]},
              "needs_you": [{"kind": "waiting", "item": "s1/forge", "reason": "s1/forge \x1b[31mwaits",
                             "source": "reported", "since": "2026-11-25T21:41:36Z"},
                            {"kind": "waiting", "item": "not/listed", "reason": "x", "source": "reported"},
                            {"kind": "waiting", "item": "rp1/r7", "reason": "r7 waits", "source": "made-up"}]})
    assert row.verdict("waiting", "s1/forge").reason == "s1/forge waits"  # made inert
    assert row.verdict("waiting", "rp1/r7").source == "unknown"  # not a source the contract knows
    assert ("waiting", "not/listed") not in row.verdicts
    old = Row(parse_project("ssh://devbox/srv/api"))
    old.take({"version": "1.1", "kind": "snapshot", "attention": {"dead": ["crew/w1"]}})
    assert old.verdict("dead", "crew/w1").source == "unknown"
    assert old.verdict("dead", "crew/w1").reason == "crew/w1: dead workers (the project did not say why)"
    [line] = once_json([row])
    assert [(v["item"], v["source"]) for v in line["verdicts"]] == [("s1/forge", "reported"), ("rp1/r7", "unknown")]


def test_rp1_runs_waiting_or_failed_are_reported_by_rp1(tmp_path):
    from rcs_tui.state.reader import read_snapshot

    (tmp_path / ".rcs").mkdir()
    snap = read_snapshot(tmp_path, None, environ={})
    doc = {"team": {}, "doctor": {"findings": []},
           "rp1": {"waiting": [{"id": "r1", "flow": "build", "step": "review", "question": "ship it?"}],
                   "failed": [{"id": "r2", "flow": "build", "step": "test", "question": None}]}}
    lists = att.attention(doc, snap)
    verdicts = att.explain(lists, doc, snap, 0.0, lambda _: None)
    assert [(v.item, v.reason, v.source) for v in verdicts] == [
        ("rp1/r1", "rp1 run r1 (build) waits for your answer at step review: ship it?", "reported"),
        ("rp1/r2", "rp1 run r2 (build) failed at step test", "reported")]
