"""HUD benchmark: write-to-repaint latency, idle CPU, and `hud --once` wall time.

Usage: .venv/bin/python benchmarks/bench_hud.py [--quick] [--writes N] [--idle SECONDS]

- latency: the live HUD (watcher on, headless) over a demo workspace; each write is an atomic
  rename of the forge mode file, timed until the HUD has repainted with the new iteration
  (median, p95; target p95 <= 50 ms).
- idle CPU: `rcs-tui hud` in a real terminal (a detached tmux session; headless if tmux is absent),
  user+system CPU over the window divided by its length (target <= 0.5 % of one core).
- once: `rcs-tui hud --once` wall time (median of 15) against `python -c pass` (target ~120 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rcs_tui.demo import build_workspace
from rcs_tui.files.io import atomic_write, dump_json

BIN = Path(sys.executable).parent
CLK_TCK = os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def latency(ws, writes: int) -> list[float]:
    from rcs_tui.ui.hud_app import HudApp
    from rcs_tui.ui.widgets import HudView

    forge = ws.project / ".rcs" / "state" / "sessions" / ws.session_id / "forge-state.json"
    painted: dict[int, float] = {}

    class Timed(HudApp):
        def _apply(self, world) -> None:
            super()._apply(world)
            it = next((m.file.iteration for m in world.snapshot.members if m.mode == "forge" and m.file), None)
            if it is not None and it not in painted:
                self.call_after_refresh(lambda: painted.setdefault(it, time.perf_counter()))

    app = Timed(ws.project, rp1_db=ws.rp1_db)
    out: list[float] = []
    async with app.run_test(size=(80, 1)) as pilot:
        await pilot.pause(0.5)
        for i in range(100, 100 + writes):
            t0 = time.perf_counter()
            atomic_write(forge, dump_json({"active": True, "current_phase": "executing", "iteration": i,
                                           "max_iterations": 1000}))
            deadline = t0 + 2.0
            while i not in painted and time.perf_counter() < deadline:
                await asyncio.sleep(0.001)
            if i in painted:
                out.append((painted[i] - t0) * 1000)
                assert f"forge:{i}/1000" in app.query_one(HudView).render().plain
            await asyncio.sleep(0.01)
    return out


def cpu_ticks(pid: int) -> int:
    total = 0
    for p in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total


def children(pid: int) -> list[int]:
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    out = [int(k) for k in kids]
    for k in list(out):
        out += children(k)
    return out


def idle_cpu(ws, seconds: float) -> tuple[float, str]:
    env = {**os.environ, "RP1_DB": str(ws.rp1_db)}
    cmd = f"{BIN / 'rcs-tui'} hud --root {ws.project}"
    if shutil.which("tmux"):
        name = f"rcs-bench-{os.getpid()}"
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", cmd], check=True, env=env)
        try:
            pid = int(subprocess.run(["tmux", "list-panes", "-t", name, "-F", "#{pane_pid}"], capture_output=True,
                                     text=True, check=True).stdout.split()[0])
            time.sleep(3)  # start-up is not idle
            a, t0 = cpu_ticks(pid), time.monotonic()
            time.sleep(seconds)
            b, t1 = cpu_ticks(pid), time.monotonic()
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        return 100 * (b - a) / CLK_TCK / (t1 - t0), "tmux"
    code = ("import sys; from pathlib import Path; from rcs_tui.ui.hud_app import HudApp; "
            "HudApp(Path(sys.argv[1])).run(headless=True)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(ws.project)], env=env)
    try:
        time.sleep(3)
        a, t0 = cpu_ticks(proc.pid), time.monotonic()
        time.sleep(seconds)
        b, t1 = cpu_ticks(proc.pid), time.monotonic()
    finally:
        proc.terminate()
        proc.wait()
    return 100 * (b - a) / CLK_TCK / (t1 - t0), "headless"


def wall(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="idle window of 10 s instead of 60 s")
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--idle", type=float, default=None)
    args = ap.parse_args()
    idle_s = args.idle if args.idle is not None else (10.0 if args.quick else 60.0)
    with tempfile.TemporaryDirectory(prefix="rcs-bench-") as tmp:
        ws = build_workspace(tmp)
        env = {**os.environ, "RP1_DB": str(ws.rp1_db)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
        once = [str(BIN / "rcs-tui"), "hud", "--once", "--root", str(ws.project)]
        subprocess.run(once, capture_output=True, env=env)  # warm the bytecode cache
        base = wall([sys.executable, "-c", "pass"], 15, env)
        one = wall(once, 15, env)
        print(f"hud --once wall: median {one:.0f} ms (python -c pass: {base:.0f} ms; target ~120 ms)")

        lat = asyncio.run(latency(ws, args.writes))
        print(f"write-to-repaint over {len(lat)}/{args.writes} writes: median {statistics.median(lat):.1f} ms, "
              f"p95 {pct(lat, 95):.1f} ms, max {max(lat):.1f} ms (target p95 <= 50 ms)")

        cpu, how = idle_cpu(ws, idle_s)
        print(f"idle CPU over {idle_s:.0f} s ({how}): {cpu:.2f} % of one core (target <= 0.5 %)")


if __name__ == "__main__":
    main()
