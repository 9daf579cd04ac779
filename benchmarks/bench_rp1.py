"""Benchmark the rp1 reader on 1 000 000 events across 10 000 runs (not a test; prints a table).

The database is generated once (one transaction, executemany) with rp1's own v17 schema and
indexes, and cached under the temp dir. Targets: feed ≤ 1 s, timeline ≤ 200 ms, new event ≤ 100 ms,
peak RSS ≤ 150 MB. Run: .venv/bin/python benchmarks/bench_rp1.py
"""

from __future__ import annotations

import json
import multiprocessing
import random
import resource
import sqlite3
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rcs_tui.rp1.fixtures import Rp1Writer, create_db, iso_ms
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.tail import Tail

RUNS, EVENTS = 10_000, 1_000_000
FLOWS = {"build": ["requirements", "design", "tasks", "build", "verify", "archive"],
         "build-fast": ["plan", "build", "review"], "pr-review": ["split", "review", "synthesize", "post"],
         "deep-research": ["clarify", "plan", "explore", "synthesize", "report"]}


def generate(path: Path) -> None:
    create_db(path)
    rng = random.Random(4)
    conn = sqlite3.connect(path)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    runs, events = [], []
    per_run = EVENTS // RUNS
    for i in range(RUNS):
        flow = rng.choice(list(FLOWS))
        steps = FLOWS[flow]
        rid = f"run-{i:05d}"
        project = f"/projects/p{i % 20}"
        start = t0 + timedelta(minutes=i)
        runs.append((rid, flow, "feat", project, iso_ms(start), iso_ms(start)))
        for k in range(per_run):
            step = steps[min(k * len(steps) // per_run, len(steps) - 1)]
            unit = f"T{k % 7}" if k % 3 == 0 else None
            name = "task-builder:building" if unit else step
            status = "running" if k % 2 == 0 else "completed"
            events.append((rid, "status_change", name, unit, json.dumps({"status": status}),
                           iso_ms(start + timedelta(seconds=k))))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at)"
                     " VALUES (?, ?, ?, ?, ?, ?)", runs)
    events.sort(key=lambda e: e[5])  # insertion order follows time, as a real writer's would
    conn.executemany("INSERT INTO events (run_id, type, step, unit, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                     events)
    conn.commit()
    conn.close()


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def latency(path: Path, samples: int = 20) -> list[float]:
    """Commit -> subscriber: timed from the writer's return (its commit is the last thing it does) to the
    delivery; the fixture writer's own reads before the insert (hundreds of ms on this database) are
    not the reader's latency."""
    tail = Tail(path, interval=0.01)
    arrived = threading.Event()
    at: list[float] = []
    tail.subscribe(lambda evs: (at.append(time.perf_counter()), arrived.set()))
    tail.start()
    got: list[float] = []
    with Rp1Writer(path) as w:
        run = w.start_run("build-fast", project_path="/projects/bench")
        for _ in range(samples):
            arrived.clear()
            w.step(run, "plan", unit="T1")
            t = time.perf_counter()
            if arrived.wait(2):
                got.append(max(0.0, at[-1] - t))
            time.sleep(0.02)
    tail.stop()
    return sorted(got)


def main() -> None:
    path = Path(tempfile.gettempdir()) / "rcs-tui-bench" / f"rp1-{RUNS}-{EVENTS}.db"
    if not path.exists():
        t = time.perf_counter()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        # generate in a child process so its memory does not count in the reader's peak RSS
        child = multiprocessing.get_context("spawn").Process(target=generate, args=(tmp,))
        child.start()
        child.join()
        tmp.rename(path)
        print(f"generated {path} in {time.perf_counter() - t:.1f}s")
    rows = []
    cold = Rp1Source(path, all_projects=True, plugin_roots=[])
    t, feed = timed(lambda: Rp1Source(path, all_projects=True, plugin_roots=[]).feed(limit=50), repeat=1)
    rows.append(("run feed first page (cold, all projects, 50 runs)", t, 1.0))
    t, _ = timed(lambda: cold.feed(limit=50))
    rows.append(("run feed first page (warm source)", t, 1.0))
    t, _ = timed(lambda: Rp1Source(path, root="/projects/p3", plugin_roots=[]).feed(limit=50), repeat=1)
    rows.append(("run feed first page (cold, one project)", t, 1.0))
    t, filtered = timed(lambda: Rp1Source(path, all_projects=True, plugin_roots=[]).feed(status="running"),
                        repeat=1)
    rows.append((f"feed filtered by status, first page (cold, all, {filtered.total} match)", t, 1.0))
    t, _ = timed(lambda: cold.feed(status="running"))
    rows.append(("feed filtered by status, first page (warm source)", t, 1.0))
    t, _ = timed(lambda: Rp1Source(path, root="/projects/p3", plugin_roots=[]).feed(status="running"), repeat=1)
    rows.append(("feed filtered by status, first page (cold, one project)", t, 1.0))
    hud = Rp1Source(path, root="/projects/p3", plugin_roots=[])
    hud.current()
    t, _ = timed(hud.current, repeat=5)
    rows.append(("HUD current run, nothing changed", t, None))
    t, tl = timed(lambda: cold.timeline("run-05000"))
    rows.append(("one run's timeline (100 events)", t, 0.2))
    lat = latency(path)
    rows.append(("new event -> subscriber (median of 20)", lat[len(lat) // 2], 0.1))
    rows.append(("new event -> subscriber (worst of 20)", lat[-1], 0.1))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"database: {path.stat().st_size / 1e6:.0f} MB, {RUNS} runs, {EVENTS} events; feed status {feed.status}")
    print(f"{'measure':<56} {'result':>10} {'target':>8}")
    for name, secs, target in rows:
        tgt = f"{target * 1000:.0f} ms" if target else "-"
        ok = "" if target is None else ("  ok" if secs <= target else "  OVER")
        print(f"{name:<56} {secs * 1000:>7.1f} ms {tgt:>8}{ok}")
    print(f"{'peak RSS':<56} {rss_mb:>7.1f} MB {'150 MB':>8}{'  ok' if rss_mb <= 150 else '  OVER'}")


if __name__ == "__main__":
    main()
