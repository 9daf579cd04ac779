"""How rcs-tui's costs grow with the size of the tree (1x, 10x, 100x, 1 000x).

Usage: .venv/bin/python benchmarks/bench_scale.py [--quick]

Size 1 000x is the issue's scale: 1 000 sessions x 10 mode files, a team with 20 workers and 500 tasks,
an rp1 database with 1 000 000 events (smaller sizes divide each count by 10, 100, 1 000).
Per size, each in a fresh process:
- console first paint: `rcs-tui console` on a pty, spawn to the first frame showing the current session
  (target <= 1.5 s; that frame lists root and the current session), then until every session is
  listed, and that process's CPU and RSS then (target <= 150 MB);
- HUD update latency: the live HUD (headless, watcher on) while a steady 50 writes/s land on other
  sessions' files; each sample rewrites the current session's forge file and is timed until the HUD has
  repainted with it (p95 target <= 50 ms); and that process's peak RSS;
- snapshot load: one WorldLoader.load() of the whole tree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CLK_TCK, PtyProc, Row, cpu_ticks, median, pct, rss_kb  # noqa: E402

RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")
CACHE = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "scale"
MODES = ("forge", "blueprint", "team", "ultrawork", "autopilot", "ultraqa", "deep-interview", "autoresearch",
         "hud", "run")
T0 = "2026-11-25T21:41:36.953Z"
CURRENT = "s-current"


def dump(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def build_tree(root: Path, sessions: int, workers: int, tasks: int) -> None:
    state = root / ".rcs" / "state"
    rng = random.Random(sessions)
    for i in range(sessions):
        sid = CURRENT if i == 0 else f"s-{i:05d}"
        d = state / "sessions" / sid
        active = rng.sample(MODES[:8], 2) if i else ["forge", "team"]
        for m in MODES:
            doc = {"active": m in active, "mode": m, "current_phase": "executing" if m in active else "complete",
                   "iteration": 3, "max_iterations": 10, "started_at": T0, "updated_at": T0, "session_id": sid,
                   "task_description": f"task {i} {m}", "team_name": "scale-team"}
            dump(d / f"{m}-state.json", doc)
        dump(d / "skill-active-state.json", {"version": 1, "active": True, "skill": active[0], "session_id": sid,
                                             "active_skills": [{"skill": m, "active": True, "activated_at": T0,
                                                                "session_id": sid} for m in active]})
    dump(state / "session.json", {"session_id": CURRENT, "started_at": T0, "cwd": str(root), "pid": os.getpid(),
                                  "platform": "linux"})
    team = state / "team" / "scale-team"
    dump(team / "config.json", {"name": "scale-team", "task": "scale", "worker_count": workers,
                                "workers": [{"name": f"w{i}"} for i in range(workers)]})
    dump(team / "phase.json", {"current_phase": "team-exec", "transitions": []})
    for i in range(workers):
        dump(team / "workers" / f"w{i}" / "status.json", {"state": "working", "current_task_id": str(i),
                                                         "updated_at": T0})
    for i in range(tasks):
        dump(team / "tasks" / f"task-{i}.json", {"id": str(i), "subject": f"task {i}", "status":
                                                 rng.choice(["pending", "in_progress", "completed"]),
                                                 "owner": f"w{i % max(workers, 1)}", "version": 1,
                                                 "created_at": T0})


def build_rp1(path: Path, root: Path, events: int) -> None:
    from rcs_tui.rp1.fixtures import create_db, iso_ms

    create_db(path)
    runs = max(1, events // 100)
    conn = sqlite3.connect(path)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    steps = ["plan", "build", "review"]
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at) "
                     "VALUES (?, 'build-fast', 'f', ?, ?, ?)",
                     [(f"run-{i:05d}", str(root.resolve()) if i % 10 == 0 else f"/other/{i % 7}",
                       iso_ms(t0), iso_ms(t0)) for i in range(runs)])

    def rows():
        for k in range(events):
            t = t0 + timedelta(milliseconds=k)
            yield (f"run-{k % runs:05d}", "status_change", steps[(k // runs) % 3],
                   json.dumps({"status": "running" if k % 2 else "completed"}), iso_ms(t))

    conn.executemany("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, ?, ?, ?, ?)", rows())
    conn.commit()
    conn.close()


def workspace(factor: int) -> tuple[Path, Path]:
    """A cached tree and rp1 database at `factor` / 1 000 of the full scale."""
    base = CACHE / f"x{factor}"
    root, db = base / "proj", base / "rp1.db"
    if not (base / "ready").exists():
        import shutil

        shutil.rmtree(base, ignore_errors=True)
        root.mkdir(parents=True)
        build_tree(root, sessions=factor, workers=min(20, max(1, factor // 50)), tasks=max(1, factor // 2))
        build_rp1(db, root, events=1000 * factor)
        (base / "ready").write_text("ok")
    return root, db


def env_for(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "CODEX_"))}
    env.pop("SESSION_ID", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
    env.update(TERM="xterm-256color", RP1_DB=str(db))
    return env


def console_first_paint(root: Path, db: Path, sessions: int) -> tuple[float | None, float | None, float, float]:
    """Seconds to the first frame showing the current session, seconds until every session is listed
    (the first other session's row is on screen, with the active set it shows), and the process's peak
    RSS and CPU seconds then. The current session is named (`--session-id`): the tree's `session.json`
    names a process long gone."""
    p = PtyProc([RCS_TUI, "console", "--root", str(root), "--session-id", CURRENT], root, env_for(db),
                cols=120, rows=40)
    full = None
    try:
        t = p.wait_for(CURRENT, 30)
        if t is not None:
            more = p.wait_for("s-00001", 30) if sessions > 1 else 0.0
            full = None if more is None else t + more
        alive = p.proc.poll() is None
        rss = rss_kb(p.proc.pid) / 1024 if alive else 0.0
        cpu = cpu_ticks([p.proc.pid]) / CLK_TCK if alive else 0.0
    finally:
        p.close()
    return t, full, rss, cpu


SWITCH = (("2", "heartbeat"), ("3", "guards hold"), ("1", "scope / mode"))  # key, text only that view shows


def console_switch(root: Path, db: Path, rounds: int) -> list[float]:
    """Seconds from a view key (2 team, 3 tasks, 1 scopes) to that view's column headers on screen, in
    `rcs-tui console` on a pty, once every session is listed; `rounds` times round the three views."""
    p = PtyProc([RCS_TUI, "console", "--root", str(root), "--session-id", CURRENT], root, env_for(db),
                cols=120, rows=40)
    out: list[float] = []
    try:
        if p.wait_for(CURRENT, 30) is None or p.wait_for("s-00001", 30) is None:
            return out
        p.drain(1.0)  # let the deferred loads settle
        for _ in range(rounds):
            for key, needle in SWITCH:
                start = len(p.raw)
                t = time.perf_counter()
                os.write(p.master, key.encode())
                seen = p.wait_for(needle, 5, start=start)
                if seen is not None:
                    out.append(time.perf_counter() - t)
                p.drain(0.1)
    finally:
        p.close()
    return out


async def hud_latency(root: Path, db: Path, samples: int, cpu: dict[str, float] | None = None,
                      quiet: float = 0.0) -> list[float]:
    """Write-to-screen seconds per sample. `cpu`, when given, gets the HUD's CPU seconds and the wall
    seconds of the sampling window (after start-up; the background writer's own CPU excluded), and the
    same over a further window of `quiet` seconds with the background writes alone (no samples)."""
    from rcs_tui.files.io import atomic_write, dump_json
    from rcs_tui.ui.hud_app import HudApp

    forge = root / ".rcs/state/sessions" / CURRENT / "forge-state.json"
    others = sorted((root / ".rcs/state/sessions").iterdir())[1:] or [root / ".rcs/state/sessions" / CURRENT]
    painted: dict[int, float] = {}

    class Timed(HudApp):
        def _apply(self, world) -> None:
            super()._apply(world)
            it = next((m.file.iteration for m in world.snapshot.members if m.mode == "forge" and m.file
                       and m.file.session_id == CURRENT), None)
            if it is not None and it not in painted:
                self.call_after_refresh(lambda: painted.setdefault(it, time.perf_counter()))

    stop = threading.Event()
    writer_cpu: list[float] = []

    def background() -> None:  # the steady stream of runtime writes elsewhere in the tree
        rng, n = random.Random(5), 0
        while not stop.is_set():
            d = rng.choice(others)
            atomic_write(d / "ultrawork-state.json", dump_json({"active": True, "updated_at": f"bg-{n}"}))
            n += 1
            writer_cpu[:] = [time.thread_time()]
            time.sleep(0.02)
        writer_cpu[:] = [time.thread_time()]

    app = Timed(root, session_id=CURRENT, rp1_db=db)
    out: list[float] = []
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause(1.0)
        thread = threading.Thread(target=background, daemon=True)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        thread.start()
        try:
            for i in range(100, 100 + samples):
                t0 = time.perf_counter()
                atomic_write(forge, dump_json({"active": True, "current_phase": "executing", "iteration": i,
                                               "max_iterations": 1000}))
                deadline = t0 + 5.0
                while i not in painted and time.perf_counter() < deadline:
                    await asyncio.sleep(0.001)
                if i in painted:
                    out.append(painted[i] - t0)
                await asyncio.sleep(0.05 + random.random() * 0.1)
            if cpu is not None:
                cpu["writer"] = sum(writer_cpu)
                cpu["cpu"] = time.process_time() - cpu0 - cpu["writer"]
                cpu["wall"] = time.perf_counter() - wall0
            if quiet and cpu is not None:  # the background writes alone
                cpu1, wall1, writer1 = time.process_time(), time.perf_counter(), sum(writer_cpu)
                await asyncio.sleep(quiet)
                writer = sum(writer_cpu) - writer1
                cpu["quiet_cpu"] = time.process_time() - cpu1 - writer
                cpu["quiet_wall"] = time.perf_counter() - wall1
        finally:
            stop.set()
            thread.join()
    return out


def child(factor: int, samples: int) -> None:
    """Run in a fresh process: load time and HUD latency; prints JSON with the peak RSS."""
    from rcs_tui.project.loader import WorldLoader

    root, db = workspace(factor)
    t = time.perf_counter()
    WorldLoader(root, session_id=CURRENT, rp1_db=db).load()
    load = time.perf_counter() - t
    lat = asyncio.run(hud_latency(root, db, samples))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"load": load, "lat": lat, "rss": rss}))


def run(quick: bool = False) -> list[Row]:
    factors = (1, 10, 100, 1000)
    samples = 15 if quick else 40
    rows: list[Row] = []
    for f in factors:
        root, db = workspace(f)
        paint, full, paint_rss, cpu = console_first_paint(root, db, f)
        proc = subprocess.run([sys.executable, __file__, "--child", str(f), "--samples", str(samples)],
                              capture_output=True, text=True, env=env_for(db), timeout=900)
        if proc.returncode != 0:
            rows.append(Row(f"scale {f}x", "HUD child failed", "error", note=proc.stderr.strip()[-300:]))
            continue
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        lat = data["lat"]
        size = f"{f} sess, {max(1, f // 2)} tasks, {1000 * f:,} ev"
        rows.append(Row(f"scale {f}x", f"console first paint ({size})",
                        f"{paint * 1000:.0f} ms" if paint is not None else "no paint", "<= 1500 ms",
                        f"all {f} sessions listed at {full * 1000:.0f} ms ({cpu:.2f} s CPU)" if full is not None
                        else "sessions not listed"))
        rows.append(Row(f"scale {f}x", "console process RSS (all sessions listed)", f"{paint_rss:.0f} MB",
                        "<= 150 MB"))
        rows.append(Row(f"scale {f}x", "snapshot load (WorldLoader.load)", f"{data['load'] * 1000:.0f} ms"))
        if lat:
            rows.append(Row(f"scale {f}x", f"HUD update median / p95 ({len(lat)}/{samples})",
                            f"{median(lat) * 1000:.0f} / {pct(lat, 95) * 1000:.0f} ms", "p95 <= 50 ms"))
        else:
            rows.append(Row(f"scale {f}x", "HUD update", "no repaint within 5 s", "p95 <= 50 ms"))
        rows.append(Row(f"scale {f}x", "HUD process peak RSS", f"{data['rss']:.0f} MB", "<= 150 MB"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer latency samples")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--samples", type=int, default=40, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.samples)
        return
    for r in run(args.quick):
        print(f"{r.bench:<11} {r.measure:<52} {r.value:>16}  {r.target:<14} {r.note}")


if __name__ == "__main__":
    main()
