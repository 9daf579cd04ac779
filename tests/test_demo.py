"""`rcs-tui demo`'s workspace holds every state a viewer must show, and the simulator moves it atomically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rcs_tui.demo import OTHER_SESSION, Simulator, build_workspace
from rcs_tui.project.loader import WorldLoader
from rcs_tui.state.reader import read_snapshot


def test_workspace_has_every_health_state_and_scope(tmp_path):
    ws = build_workspace(tmp_path)
    snap = read_snapshot(ws.project)
    assert snap.resolution.source == "session.json" and snap.session_id == ws.session_id
    health = {m.mode: m.health for m in snap.members}
    assert health == {"forge": "live", "team": "live", "blueprint": "stale", "ultrawork": "root-survivor"}
    assert snap.sessions[OTHER_SESSION].active_modes() == ("team", "ultrawork")
    copy = read_snapshot(ws.copy)
    assert copy.resolution.pointer.stale_dead and copy.resolution.source == "root"


def test_workspace_team_tasks_and_rp1_runs(tmp_path):
    ws = build_workspace(tmp_path)
    world = WorldLoader(ws.project, rp1_db=ws.rp1_db).load()
    assert world.badges == ()
    team = world.teams["login-flow"]
    assert team.worker_count == 3 and team.total == 6 and team.counts["in_progress"] == 2
    assert {t.phase for t in world.tasks} >= {"planning", "plan_review", "codegen", "review", "test", "done"}
    assert world.run is not None and (world.run.flow, world.run.step, world.run.status) == ("build", "tasks",
                                                                                            "running")


def test_simulator_ticks_advance_forge_team_rp1_and_a_task(tmp_path):
    ws = build_workspace(tmp_path)
    loader = WorldLoader(ws.project, rp1_db=ws.rp1_db)
    sim = Simulator(ws)
    for _ in range(6):
        sim.step()
    world = loader.load()
    forge = next(m for m in world.snapshot.members if m.mode == "forge")
    assert forge.file.iteration == 9
    assert world.teams["login-flow"].done > 1
    assert world.run.step != "tasks"
    assert next(t for t in world.tasks if t.id == "login-api").phase == "test"
    assert world.badges == ()  # every write was whole
    leftovers = [p for p in tmp_path.rglob("*.tmp")]
    assert leftovers == []


def test_simulator_leaves_a_cleared_forge_cleared(tmp_path):
    # After the operator clears forge, the simulator must not recreate its file (that made the
    # demo's undo always refuse with "changed since").
    ws = build_workspace(tmp_path)
    sim = Simulator(ws)
    (sim.sess / "forge-state.json").unlink()
    for _ in range(3):
        sim.step()
    assert not (sim.sess / "forge-state.json").exists()


def test_simulator_thread_starts_and_stops(tmp_path):
    ws = build_workspace(tmp_path)
    with Simulator(ws, interval=0.05) as sim:
        deadline = time.monotonic() + 10
        while sim.ticks < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    ticks = sim.ticks
    assert ticks >= 3
    time.sleep(0.2)
    assert sim.ticks == ticks


def test_demo_build_only_cli(tmp_path):
    exe = str(Path(sys.executable).parent / "rcs-tui")
    proc = subprocess.run([exe, "demo", "--build-only", "--dir", str(tmp_path / "d")], capture_output=True,
                          text=True, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "d" / "project" / ".rcs" / "state" / "session.json").is_file()
    once = subprocess.run([exe, "hud", "--once", "--json", "--root", str(tmp_path / "d" / "project")],
                          capture_output=True, text=True, env={**os.environ, "RP1_DB": str(tmp_path / "d" / "rp1"
                                                                                               / "rp1.db")})
    data = json.loads(once.stdout)
    assert data["rp1_run"]["flow"] == "build"
    bad = subprocess.run([exe, "demo", "--build-only", "--dir", str(tmp_path / "d" / "project" / ".rcs")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "not empty" in json.loads(bad.stderr)["error"]


def test_demo_dir_rebuilds_an_earlier_demo_and_never_touches_other_files(tmp_path):
    exe = str(Path(sys.executable).parent / "rcs-tui")
    base = tmp_path / "d"
    first = subprocess.run([exe, "demo", "--build-only", "--dir", str(base)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    (base / "project" / ".rcs" / "state" / "left-over.json").write_text("{}")
    again = subprocess.run([exe, "demo", "--build-only", "--dir", str(base)], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr  # the earlier demo's database and files are replaced, not an error
    assert not (base / "project" / ".rcs" / "state" / "left-over.json").exists()
    assert (base / "rp1" / "rp1.db").is_file()
    # A directory that merely looks like a demo (a project/ inside) is not the demo's to delete.
    foreign = tmp_path / "mine"
    (foreign / "project").mkdir(parents=True)
    (foreign / "project" / "notes.txt").write_text("keep me")
    refused = subprocess.run([exe, "demo", "--build-only", "--dir", str(foreign)], capture_output=True, text=True)
    assert refused.returncode == 1
    assert json.loads(refused.stderr) == {"error": f"--dir {foreign}: not empty and not a demo workspace made by "
                                                   "rcs-tui; choose an empty directory", "kind": "refused"}
    assert (foreign / "project" / "notes.txt").read_text() == "keep me"


def test_the_simulated_task_moves_only_as_its_lifecycle_allows(tmp_path):
    """The simulator once moved a task done → codegen, which its own lifecycle forbids; every move it makes
    now comes from the transition core: an advance along an edge, or a redo that reopens a finished task."""
    import json

    from rcs_tui.core.machine import load_task_lifecycle
    from rcs_tui.demo import Simulator, build_workspace

    ws = build_workspace(tmp_path)
    sim = Simulator(ws)
    said = [sim._advance_task(f"2026-11-27T20:{i:02d}:00.000Z") for i in range(16)]
    assert not [s for s in said if "stays" in s], said
    lifecycle = load_task_lifecycle()
    transcript = ws.project / ".rcs" / "tasks" / "login-api" / "transcript.jsonl"
    moves = [json.loads(line) for line in transcript.read_text().splitlines()][1:]
    assert {m["kind"] for m in moves} == {"advance", "redo"}
    for m in moves:
        if m["kind"] == "advance":
            assert lifecycle.has_edge(m["from"], m["to"]), m
        else:
            assert (m["from"], m["to"]) == ("done", "planning"), m


def test_the_demo_team_is_healthy_but_for_one_dead_worker_and_stays_so(tmp_path):
    """Every live worker of the demo beats (alive, not silent), when built and after a while without beats
    once the simulator has run; the one dead worker is the team's only problem."""
    from rcs_tui.demo import HEARTBEAT_TICKS

    ws = build_workspace(tmp_path)
    healthy = {"login-flow/worker-1": "alive", "login-flow/worker-2": "alive", "login-flow/worker-3": "alive",
               "docs-sweep/worker-1": "alive", "docs-sweep/worker-2": "dead"}

    def conditions() -> dict[str, str]:
        world = WorldLoader(ws.project, rp1_db=ws.rp1_db).load()
        return {f"{name}/{w.name}": w.condition(time.time()) for name, t in world.teams.items() for w in t.workers}

    assert conditions() == healthy
    for beat in (ws.project / ".rcs/state/team").glob("*/workers/*/heartbeat.json"):  # five minutes pass
        doc = json.loads(beat.read_text())
        beat.write_text(json.dumps({**doc, "last_turn_at": "2020-01-01T00:00:00.000Z"}))
    assert set(conditions().values()) == {"silent", "dead"}
    sim = Simulator(ws)
    for _ in range(HEARTBEAT_TICKS):
        sim.step()
    assert conditions() == healthy
