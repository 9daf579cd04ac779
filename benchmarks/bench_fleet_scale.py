"""The fleet at 200 local projects x 100 sessions: `fleet --once --json` and the live fleet.

Usage: .venv/bin/python benchmarks/bench_fleet_scale.py [--quick] [--projects N] [--sessions N] [--runs N]
       [--no-once] [--no-live] [--trace-memory] [--cold]

Builds the projects itself (bench_fleet's tree: 100 sessions of 10 mode files, a 2-worker team, 10 tasks,
copied N times; cached under the temp dir). Measured, each next to a floor from the same run:
- `fleet --once --json` as a command: wall time, peak RSS of its process tree (sampled from /proc every
  20 ms; the fleet process's own peak from wait4), rows answered (target: <= 10 s, <= 300 MB, every row);
  floors: one project's `snapshot --json` as a command, and one project's document built in-process
  times the number of projects (what reading them one after another costs);
- the live fleet (headless, in this process): inotify instances it holds (this process's descriptors,
  minus those held before it started; target: within the per-user limit, shown next to it), rows
  polled and why, first frame, every row's first look on screen, every row read in full, a change's
  latency on a few rows, RSS after loading and per project; with `--trace-memory`, where the live fleet's
  memory goes (tracemalloc, by source file; tracing slows the run and adds its own memory to the RSS);
- with `--cold` (needs root: it drops the kernel's page cache before each run), `fleet --once --json` with
  every project's files out of the page cache, run by run against the floor of a bare Python reading every
  file of the fleet once, also from a dropped cache: what reading from the disk costs whatever reads it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from bench_fleet import CACHE, iteration_of, projects_dir, rss_mb, set_iteration  # noqa: E402
from bench_sweep import READ_ALL  # noqa: E402
from common import Row, pct, tree_pids  # noqa: E402


def inotify_instances() -> int:
    """inotify instances this process holds (its descriptors on anon_inode:inotify)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            continue
    return count


def instance_limit() -> str:
    try:
        return Path("/proc/sys/fs/inotify/max_user_instances").read_text().strip()
    except OSError:
        return "?"


def tree_rss_mb(pid: int) -> float:
    total = 0
    for p in tree_pids(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def run_command(argv: list[str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, peak RSS of the process tree (sampled), the process's own peak RSS (MB), stdout."""
    out_path = CACHE / "once-out.json"
    with out_path.open("wb") as out:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        peak = 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, tree_rss_mb(proc.pid))
            time.sleep(0.02)
        wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[3:5]} exited {proc.returncode}")
    own = usage.ru_maxrss / 1024
    return wall, max(peak, own), own, out_path.read_bytes()


def measure_once(base: Path, count: int, runs: int) -> list[Row]:
    from rcs_tui.fleet.once import read_local

    cli = [sys.executable, "-m", "rcs_tui"]
    roots = [base / f"proj-{i:02d}" for i in range(count)]
    walls, peaks, owns, floors_cli = [], [], [], []
    answered = errors = 0
    for _ in range(runs):  # interleaved: a floor, then the fleet, run by run
        floors_cli.append(run_command([*cli, "snapshot", "--json", "--root", str(roots[0])])[0])
        wall, peak, own, out = run_command([*cli, "fleet", "--once", "--json", "--project", f"{base}/proj-*"])
        rows = json.loads(out)
        answered = sum(1 for r in rows if r["error"] is None)
        errors = len(rows) - answered
        walls.append(wall)
        peaks.append(peak)
        owns.append(own)
    sample = roots[: min(10, count)]
    read_local(sample[0])  # imports
    t = time.perf_counter()
    for root in sample:
        read_local(root)
    per_doc = (time.perf_counter() - t) / len(sample)
    serial = per_doc * count
    best = min(walls)
    return [
        Row("fleet-scale", "fleet --once --json: wall", " / ".join(f"{w:.1f}" for w in walls) + " s", "<= 10 s",
            f"{count} local projects; {answered} rows answered, {errors} errors; "
            f"best {best / serial:.2f}x the serial floor"),
        Row("fleet-scale", "fleet --once --json: peak RSS", " / ".join(f"{p:.0f}" for p in peaks) + " MB", "<= 300 MB",
            "fleet process and its helper (sampled); the fleet process alone "
            + " / ".join(f"{o:.0f}" for o in owns) + " MB"),
        Row("fleet-scale", "floor: one project's snapshot --json", " / ".join(f"{f:.2f}" for f in floors_cli) + " s",
            "", "a whole command, interpreter start included"),
        Row("fleet-scale", "floor: one document in-process x projects", f"{serial:.1f} s",
            "", f"{per_doc * 1000:.0f} ms per project (mean of {len(sample)}), read one after another"),
    ]


def drop_page_cache() -> bool:
    """Write back and drop the kernel's page cache (root only); False when this process may not."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def measure_cold(base: Path, runs: int) -> list[Row]:
    """`fleet --once --json` and the floor, each right after the page cache was dropped, run by run."""
    cli = [sys.executable, "-m", "rcs_tui"]
    fleet, floor, warm = [], [], []
    for _ in range(runs):
        if not drop_page_cache():
            return [Row("fleet-scale", "cold: not measured", "-", "", "dropping the page cache needs root")]
        fleet.append(run_command([*cli, "fleet", "--once", "--json", "--project", f"{base}/proj-*"])[0])
        warm.append(run_command([*cli, "fleet", "--once", "--json", "--project", f"{base}/proj-*"])[0])
        drop_page_cache()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", READ_ALL, str(base)], check=True)
        floor.append(time.perf_counter() - t)
    return [
        Row("fleet-scale", "cold: fleet --once --json, wall", " / ".join(f"{w:.1f}" for w in fleet) + " s", "",
            "every project's files out of the page cache; " + " / ".join(f"{w / f:.2f}x" for w, f in zip(
                fleet, floor, strict=True)) + " the floor; warm right after: " + " / ".join(f"{w:.1f}" for w in warm)
            + " s"),
        Row("fleet-scale", "cold floor: read every file once", " / ".join(f"{f:.1f}" for f in floor) + " s", "",
            "a bare Python, one reader, from a dropped page cache"),
    ]


def memory_by_file(before: tracemalloc.Snapshot, top: int = 15) -> list[Row]:
    """What was allocated since `before` and is still held, by source file (the largest `top`)."""
    stats = tracemalloc.take_snapshot().compare_to(before, "filename")
    return [Row("fleet-scale", "live: held, allocated in " + "/".join(Path(s.traceback[0].filename).parts[-2:]),
                f"{s.size_diff / 1e6:.1f} MB", "", f"{s.count_diff} blocks")
            for s in stats[:top]]


async def measure_live(base: Path, count: int, samples: int, trace: bool = False) -> list[Row]:
    from rcs_tui.fleet.alerts import AlertSettings
    from rcs_tui.fleet.projects import expand_projects
    from rcs_tui.ui.fleet.app import FleetApp

    found, _ = expand_projects([f"{base}/proj-*"])
    before = inotify_instances()
    gc.collect()
    rss0 = rss_mb()
    traced = None
    if trace:
        tracemalloc.start()
        traced = tracemalloc.take_snapshot()
    app = FleetApp(found, alerts=AlertSettings(bell=False))
    held = 0
    start = time.perf_counter()
    async with app.run_test(size=(160, 60)) as pilot:
        first_frame = time.perf_counter() - start
        while not all(r.doc is not None for r in app.rows.values()) or len(app.painted) < len(app.rows):
            held = max(held, inotify_instances() - before)
            if time.perf_counter() - start > 300:
                raise SystemExit("the fleet did not show every project within 300 s")
            await asyncio.sleep(0.02)
        looked = time.perf_counter() - start
        while not all(r.doc is not None and not r.doc.get("partial") and r.watch for r in app.rows.values()):
            held = max(held, inotify_instances() - before)
            if time.perf_counter() - start > 600:
                raise SystemExit("the fleet did not read every project in full within 600 s")
            await asyncio.sleep(0.05)
        await pilot.pause()
        full = time.perf_counter() - start
        held = max(held, inotify_instances() - before)
        await pilot.pause(1.0)  # past the start-up re-reads
        t = time.perf_counter()
        gc.collect()  # what the event loop stalls for whenever Python runs a full collection
        collect_s = time.perf_counter() - t
        polled = [r for r in app.rows.values() if r.watch == "poll"]
        watches = app.hub.watcher.watches if app.hub.watcher is not None else 0
        rss = rss_mb()
        by_file = memory_by_file(traced) if traced is not None else []
        tracemalloc.stop()
        ms = []
        for i in range(samples):
            root = base / f"proj-{(i * 37) % count:02d}"
            row = app.rows[str(root)]
            t = time.perf_counter()
            set_iteration(root, 1000 + i)
            stamp = time.time()
            while not (iteration_of(row) == 1000 + i and app.painted.get(str(root), 0) >= stamp):
                if time.perf_counter() - t > 10:
                    break
                await asyncio.sleep(0.002)
            ms.append(1000 * (time.perf_counter() - t))
            await asyncio.sleep(0.05)
        held = max(held, inotify_instances() - before)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        threads = threading.active_count()
    reasons = sorted({r.watch_reason or "" for r in polled})
    return [
        Row("fleet-scale", "live: inotify instances held", f"{held}", f"<= {instance_limit()} (the user's limit)",
            f"{count} local projects, {watches} directories watched on them"),
        Row("fleet-scale", "live: projects polled", f"{len(polled)}", "0 or said why", "; ".join(reasons)),
        Row("fleet-scale", "live: first frame", f"{first_frame:.2f} s", "<= 2 s", "every row listed, 'connecting'"),
        Row("fleet-scale", "live: every row's first look drawn", f"{looked:.2f} s", "",
            "root + current session per project"),
        Row("fleet-scale", "live: every project read in full and watched", f"{full:.1f} s", "",
            "full reads two at a time after the first looks"),
        Row("fleet-scale", "live: change on screen p50/p95", f"{pct(ms, 50):.0f} / {pct(ms, 95):.0f} ms",
            "p95 <= 200 ms", f"{len(ms)} samples on rows spread over the fleet"),
        Row("fleet-scale", "live: a full garbage collection", f"{collect_s * 1000:.0f} ms", "",
            "the event loop stalls this long whenever Python runs one"),
        Row("fleet-scale", "live: RSS after loading (peak)", f"{rss:.0f} MB ({peak:.0f} MB)", "",
            f"{threads} threads; a row keeps its project's loaders for incremental reads"),
        Row("fleet-scale", "live: RSS per project", f"{(rss - rss0) / count:.2f} MB", "",
            f"(RSS after loading - {rss0:.0f} MB before the fleet started) / {count} projects"
            + ("; with tracemalloc's own memory" if trace else "")),
        *by_file,
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1 run of --once, 5 change samples")
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--no-live", action="store_true")
    parser.add_argument("--no-once", action="store_true")
    parser.add_argument("--cold", action="store_true", help="also fleet --once from a dropped page cache (root)")
    parser.add_argument("--trace-memory", action="store_true",
                        help="live: where the memory goes, by source file (slower; RSS includes the tracing)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.samples = 1, 5
    for var in ("RCS_ROOT", "RCS_SESSION_ID", "SESSION_ID"):
        os.environ.pop(var, None)
    CACHE.mkdir(parents=True, exist_ok=True)
    os.environ["RP1_DB"] = str(CACHE / "no-rp1.db")
    os.environ["RCS_TUI_CONFIG"] = str(CACHE / "no-config.toml")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    base = projects_dir(args.projects, args.sessions)
    load0 = os.getloadavg()
    rows = [] if args.no_once else measure_once(base, args.projects, args.runs)
    if args.cold:
        rows += measure_cold(base, args.runs)
    if not args.no_live:
        rows += asyncio.run(measure_live(base, args.projects, args.samples, args.trace_memory))
    load1 = os.getloadavg()
    print(f"{'measure':46} {'result':24} {'target':26} notes")
    for r in rows:
        print(f"{r.measure:46} {r.value:24} {r.target:26} {r.note}")
    print(f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
