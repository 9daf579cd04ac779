"""`rcs-tui rp1 …` run as a real subprocess against fixture databases: exact JSON."""

from __future__ import annotations

import os

from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db


def make_db(tmp_path, root):
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        r = w.start_run("blueprint", project_path=str(root), run_id="run-bp", feature_id="login")
        w.step(r, "detect")
        w.step(r, "prd")
        w.wait_for_user(r, "prd", "Approve the PRD?")
        o = w.start_run("build-fast", project_path="/elsewhere", run_id="run-other")
        w.step(o, "plan")
    return db


def test_runs_json_scoped_to_project(tmp_path, run_cli):
    root = tmp_path / "proj"
    root.mkdir()
    db = make_db(tmp_path, root.resolve())
    res = run_cli("rp1", "runs", "--json", "--db", str(db), cwd=root)
    assert res.code == 0, res.stderr
    assert res.json == {
        "db": str(db), "status": None,
        "scope": {"project_path": str(root.resolve()), "project_id": None},
        "total": 1,
        "runs": [{
            "id": "run-bp", "workflow": "blueprint", "feature_id": "login", "name": None,
            "project_path": str(root.resolve()), "project_id": None, "harness": None,
            "cached_status": "running", "created_at": "2026-11-25T21:00:01.000Z",
            "updated_at": "2026-11-25T21:00:04.000Z",
            "status": "waiting", "current_step": "prd",
            "steps": {"detect": "completed", "charter": "skipped", "prd": "waiting"},
            "waiting": [{"step": "prd", "message": "Approve the PRD?", "created_at": "2026-11-25T21:00:04.000Z"}],
            "last_event_id": 5, "last_activity": "2026-11-25T21:00:04.000Z"}]}


def test_runs_all_projects_and_filters(tmp_path, run_cli):
    root = tmp_path / "proj"
    root.mkdir()
    db = make_db(tmp_path, root.resolve())
    env = {"RP1_DB": str(db)}
    res = run_cli("rp1", "runs", "--all-projects", "--json", cwd=root, env=env)
    assert [r["id"] for r in res.json["runs"]] == ["run-other", "run-bp"] and res.json["scope"] is None
    res = run_cli("rp1", "runs", "--all-projects", "--status", "running", "--json", cwd=root, env=env)
    assert [(r["id"], r["status"]) for r in res.json["runs"]] == [("run-other", "running")]
    res = run_cli("rp1", "runs", "--all-projects", "--workflow", "blueprint", "--json", cwd=root, env=env)
    assert [r["id"] for r in res.json["runs"]] == ["run-bp"]


def test_show_json(tmp_path, run_cli):
    db = make_db(tmp_path, tmp_path)
    res = run_cli("rp1", "show", "run-bp", "--json", "--db", str(db), cwd=tmp_path)
    assert res.code == 0, res.stderr
    t = res.json
    assert (t["workflow"], t["tracked"], t["status"], t["current_step"]) == ("blueprint", True, "waiting", "prd")
    assert [(s["name"], s["status"], s["attempts"], s["started_at"], s["ended_at"]) for s in t["steps"]] == [
        ("detect", "completed", 1, "2026-11-25T21:00:02.000Z", "2026-11-25T21:00:02.999Z"),
        ("charter", "skipped", 0, None, None),
        ("prd", "waiting", 1, "2026-11-25T21:00:03.000Z", None)]
    assert t["steps"][0]["duration_s"] == 0.999
    assert t["steps"][2]["prompts"] == [{"step": "prd", "message": "Approve the PRD?",
                                         "created_at": "2026-11-25T21:00:04.000Z", "pending": True}]
    assert t["violations"] == []


def test_show_unknown_run_is_an_error(tmp_path, run_cli):
    db = make_db(tmp_path, tmp_path)
    res = run_cli("rp1", "show", "nope", "--db", str(db), cwd=tmp_path)
    assert res.code == 1 and res.error == f"rp1: no run 'nope' in {db}"


def test_missing_db_is_a_status_not_a_crash(tmp_path, run_cli):
    res = run_cli("rp1", "runs", "--json", cwd=tmp_path)
    assert res.code == 0
    assert res.json["status"] == f"rp1: no database at {os.environ['RP1_DB']}" and res.json["runs"] == []
    assert run_cli("rp1", "runs", cwd=tmp_path).stdout.strip() == f"rp1: no database at {os.environ['RP1_DB']}"


def test_machines_json(tmp_path, run_cli):
    (tmp_path / ".rcs").mkdir()
    res = run_cli("rp1", "machines", "--json", "--root", str(tmp_path), env={"HOME": str(tmp_path)})
    by_name = {m["name"]: m for m in res.json["machines"]}
    assert by_name["build"] == {
        "name": "build", "kind": "skill", "source": "builtin:build.md",
        "states": ["requirements", "design", "tasks", "build", "verify", "archive"],
        "initial": ["requirements"], "terminal": ["archive"],
        "edges": [["requirements", "design"], ["design", "tasks"], ["tasks", "build"], ["build", "verify"],
                  ["verify", "build"], ["verify", "archive"]],
        "error": None}
    assert by_name["task-builder"]["kind"] == "agent"


def test_tail_says_what_it_waits_for_then_prints_new_events(tmp_path):
    """Before any event arrives, one line on stderr says what the tail waits for (stdout stays JSON lines)."""
    import json
    import queue
    import subprocess
    import sys
    import threading
    from pathlib import Path

    db = make_db(tmp_path, tmp_path)
    exe = str(Path(sys.executable).parent / "rcs-tui")
    proc = subprocess.Popen([exe, "rp1", "tail", "--json", "--db", str(db)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        # printed once the tail has noted where the events end (a busy machine may take long to start it)
        said = proc.stderr.readline()
        assert said == f"rp1 tail: waiting for new events in {db} (after event 6); Ctrl-C stops\n"
        assert lines.empty()
        with Rp1Writer(db, clock=FakeClock("2026-11-26T00:00:00.000Z")) as w:
            w.step("run-other", "build")
        got = [json.loads(lines.get(timeout=30)) for _ in range(2)]
    finally:
        proc.terminate()
        proc.wait(5)
    assert [(e["step"], e["status"]) for e in got] == [("plan", "completed"), ("build", "running")]


def test_tail_in_text_says_what_it_replays(run_cli, tmp_path):
    """With --from-start and --run the waiting line names both; the events themselves go to stdout."""
    import subprocess
    import sys
    from pathlib import Path

    db = make_db(tmp_path, tmp_path)
    exe = str(Path(sys.executable).parent / "rcs-tui")
    proc = subprocess.Popen([exe, "rp1", "tail", "--from-start", "--run", "run-bp", "--db", str(db)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr.readline() == (f"rp1 tail: the stored events of run run-bp first, then waiting for new "
                                          f"ones in {db}; Ctrl-C stops\n")
        assert " run-bp " in proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(5)


def test_runs_human_output_matches_the_console(run_cli, tmp_path):
    from tests.console_fixtures import build_rp1

    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    build_rp1(tmp_path / "rp1.db", root)
    out = run_cli("rp1", "runs", "--db", str(tmp_path / "rp1.db"), "--root", str(root)).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "WORKFLOW", "STATUS", "STEP", "NAME", "AGE"]
    review = next(line for line in lines if line.startswith("run-0002"))
    import re

    assert "waiting (1?)" in review and "PR #42 review" in review
    assert re.search(r"  \d+(s|m|h\d\dm|d)$", review)  # an age, like the console's
    assert "2026-" not in out
    assert lines[-1].startswith("(N?) = N questions waiting for an answer")
    show = run_cli("rp1", "show", "run-0001-research", "--db", str(tmp_path / "rp1.db"), "--root", str(root)).stdout
    assert " 7.0s" in show
