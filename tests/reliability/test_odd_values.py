"""Whatever numbers or text the files and the operator hold, every command ends with a clear answer and
writes strict JSON.

Pids that do not fit a C int (which made `os.kill` raise OverflowError), NaN/Infinity in operator
input (which must never reach a runtime file), numbers past a float's range, operator input that is not
valid Unicode, and a forged journal path no file name can have (a lone surrogate).
"""

from __future__ import annotations

import json

import pytest

from tests import statefix as sf
from tests.conftest import tree_digest
from tests.statefix import append_journal, no_internal_error
from tests.statefix import cli_project as project

HUGE = 2**70


def test_pids_that_do_not_fit_a_c_int(tmp_path, run_cli):
    root = tmp_path
    sf.mode(root, "forge", current_phase="executing", owner_pid=-HUGE)
    sf.canonical(root, ["forge"])
    sf.mode(root, "team", "s1", current_phase="team-exec")
    sf.pointer(root, "s1", pid=HUGE, pid_start_ticks=HUGE)
    team = root / ".rcs/state/team/alpha"
    sf.write(team / "config.json", {"worker_count": 1})
    sf.write(team / "workers/w1/heartbeat.json", {"alive": True, "pid": HUGE, "turn_count": HUGE})
    sf.write(team / "workers/w1/status.json", {"state": "working", "current_task_id": "1"})
    for args in (["doctor"], ["hud", "--once"], ["hud", "--once", "--json"], ["snapshot", "--json"], ["locate"],
                 ["state", "list-active", "--json"]):
        res = run_cli(*args, "--root", str(root), timeout=30)
        assert res.code == (3 if args[0] == "doctor" else 0), (args, res.stderr)  # doctor: 3 = findings remain
    doctor = run_cli("doctor", "--json", "--root", str(root)).json
    messages = {f["id"]: f["message"] for f in doctor["findings"]}
    assert messages["dead-worker:alpha:w1"] == (f"team alpha worker w1 has a dead heartbeat (pid {HUGE} is not "
                                                "running) while holding task 1")
    assert messages["dead-owner:root:forge"].endswith(f"(pid {-HUGE} is not running)")
    assert messages["stale-dead-pointer"] == f"session.json points at s1, but pid {HUGE} is not running"


def test_non_finite_input_is_refused_and_nothing_is_written(tmp_path, run_cli, digest_tree):
    sf.mode(tmp_path, "forge", current_phase="executing")
    before = digest_tree(tmp_path)
    for raw, why in (('{"iteration": NaN}', "non-finite number NaN is not JSON"),
                     ('{"iteration": -Infinity}', "non-finite number -Infinity is not JSON"),
                     ('{"iteration": 1e999}', "number 1e999 is too large for a float")):
        res = run_cli("state", "write", "--mode", "forge", "--input", raw, "--root", str(tmp_path))
        assert (res.code, res.error) == (1, f"--input: invalid JSON: {why}")
    assert digest_tree(tmp_path) == before


def test_files_written_for_the_runtime_are_strict_json(tmp_path, run_cli):
    sf.mode(tmp_path, "forge", current_phase="executing", big=10**300, small=1e-300, keep={"a": [1.5, None]})
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"iteration": 2, "ratio": 1.7976931348623157e308}',
                  "--root", str(tmp_path))
    assert res.code == 0, res.stderr
    doc = json.loads((tmp_path / ".rcs/state/forge-state.json").read_text(),
                     parse_constant=lambda name: {"not strict JSON": name})
    assert doc["big"] == 10**300 and doc["keep"] == {"a": [1.5, None]} and doc["iteration"] == 2
    json.loads(json.dumps(doc, allow_nan=False))


def test_counts_past_any_range_are_unknown_values_not_crashes(tmp_path, run_cli):
    """`iteration: 10**320` is valid JSON but no count (it cannot even become a float): it once ended
    `hud --once` in "internal error: OverflowError". Such counts and measures show as unknown everywhere."""
    huge = 10**320
    sf.mode(tmp_path, "forge", current_phase="executing", iteration=huge, max_iterations=10)
    sf.canonical(tmp_path, ["forge"])
    sf.write(tmp_path / ".rcs/metrics.json", {"session_turns": huge, "five_hour_limit_pct": huge,
                                              "session_total_tokens": -huge})
    sf.write(tmp_path / ".rcs/state/team/alpha/config.json", {"worker_count": huge})
    once = run_cli("hud", "--once", "--root", str(tmp_path), env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert once.code == 0 and "forge" in once.stdout and "1000000" not in once.stdout
    as_json = run_cli("hud", "--once", "--json", "--root", str(tmp_path))
    assert as_json.code == 0 and as_json.json["metrics"]["session_turns"] is None
    overlay = run_cli("overlay", "--root", str(tmp_path))
    assert overlay.code == 0 and "- forge: iteration ?/10" in overlay.stdout
    for args in (["snapshot", "--json"], ["doctor", "--json"], ["state", "list-active"]):
        res = run_cli(*args, "--root", str(tmp_path))
        assert res.code in (0, 3), (args, res.stderr)


@pytest.mark.parametrize("text", ['{"a": "\\ud800"}', '{"a": "\udcff"}'])
def test_state_write_refuses_text_that_is_not_valid_unicode(tmp_path, run_cli, text):
    root = project(tmp_path, run_cli)
    before = (root / ".rcs/state/forge-state.json").read_bytes()
    for extra in ([], ["--dry-run"]):
        res = run_cli("state", "write", "--mode", "forge", "--input", text, "--root", str(root), *extra)
        no_internal_error(res)
        assert res.code == 1
        assert "not valid Unicode" in res.error
    assert (root / ".rcs/state/forge-state.json").read_bytes() == before


@pytest.mark.parametrize("state", ["done", "pending"])
def test_a_journal_path_no_file_name_can_have_is_refused(tmp_path, run_cli, state):
    root = project(tmp_path, run_cli)
    before = tree_digest(root / ".rcs/state")
    forged = '{"state":"STATE","id":"S1","action":"a","files":[{"path":".rcs/state/\\ud800.json",' \
             '"before_b64":null,"after_sha":"00"}]}'
    append_journal(root, forged.replace("STATE", state))
    for args in (["undo", "S1"], ["doctor"], ["doctor", "--fix"]):
        res = run_cli(*args, "--root", str(root))
        no_internal_error(res)
        assert res.code in ((1,) if args[0] == "undo" else (0, 3)), (args, res.code, res.stderr)
    res = run_cli("undo", "S1", "--root", str(root))
    assert "journal entry S1 names an unsafe path" in res.error and "nothing was changed" in res.error
    assert tree_digest(root / ".rcs/state") == before

