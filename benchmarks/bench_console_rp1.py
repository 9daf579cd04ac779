"""The console's rp1 view under a busy database: a new event on screen while 100 events/s arrive.

Usage: .venv/bin/python benchmarks/bench_console_rp1.py [--samples N]

The console (headless, watcher on, the rp1 view shown) runs on the 1 000x tree (1 000 sessions) with
a copy of its 1 000 000-event database. A writer thread commits one status event every 10 ms to the
project's runs, as a busy rp1 does, which keeps reordering the feed. Each sample commits an event
entering a step named after the sample on one run, and is timed from its commit until a frame showing
that step in the run's row has been drawn (target: p95 <= 100 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale  # noqa: E402
from common import seen_after  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "console-rp1"
EVENTS_PER_S = 100


def database() -> tuple[Path, Path]:
    """The 1 000x tree and a fresh copy of its database (the samples append to it)."""
    root, db = bench_scale.workspace(1000)
    WORK.mkdir(parents=True, exist_ok=True)
    copy = WORK / "rp1.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db, copy)
    conn = sqlite3.connect(copy)
    conn.execute("PRAGMA journal_mode = WAL")  # as rp1 keeps it
    conn.close()
    return root, copy


def insert(conn: sqlite3.Connection, run: str, step: str, status: str) -> None:
    conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES (?, 'status_change', ?, ?,"
                 " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", (run, step, json.dumps({"status": status})))
    conn.commit()


async def latency(root: Path, db: Path, samples: int) -> list[float]:
    from rcs_tui.ui.console.app import ConsoleApp
    from rcs_tui.ui.linetable import LineTable

    conn = sqlite3.connect(db, check_same_thread=False)
    runs = [r[0] for r in conn.execute("SELECT id FROM runs WHERE project_path = ? ORDER BY id",
                                       (str(root.resolve()),))]
    marked, others = runs[0], runs[1:]
    painted: dict[str, float] = {}
    want: list[str] = []

    class Timed(ConsoleApp):
        def refresh_views(self) -> None:
            super().refresh_views()
            if not want or want[0] in painted:
                return
            step = want[0]
            try:
                row = self.screen.query_one("#runs-table", LineTable).row_text(marked)
            except Exception:  # noqa: BLE001 - not on screen yet
                return
            if step in row:
                self.call_after_refresh(lambda: painted.setdefault(step, time.perf_counter()))

    stop = threading.Event()
    lock = threading.Lock()

    def background() -> None:
        rng = random.Random(7)
        bg = sqlite3.connect(db, check_same_thread=False)
        nxt = time.perf_counter()
        while not stop.is_set():
            with lock:
                insert(bg, rng.choice(others), rng.choice(["plan", "build", "review"]), "running")
            nxt += 1 / EVENTS_PER_S
            time.sleep(max(0.0, nxt - time.perf_counter()))
        bg.close()

    app = Timed(root, session_id=bench_scale.CURRENT, rp1_db=db)
    out: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(1.0)
        await pilot.press("4")
        await pilot.pause(2.0)
        thread = threading.Thread(target=background, daemon=True)
        thread.start()
        try:
            await asyncio.sleep(1.0)
            for i in range(samples):
                step = f"m{i}"
                want[:] = [step]
                with lock:
                    t0 = time.perf_counter()
                    insert(conn, marked, step, "running")
                took = await seen_after(painted, step, t0)
                if took is not None:
                    out.append(took)
                await asyncio.sleep(0.1 + random.random() * 0.1)
        finally:
            stop.set()
            thread.join()
            conn.close()
    return out


def measure(samples: int) -> dict[str, object]:
    """Run in a fresh process: the latencies of `samples` samples, and how many were seen at all."""
    root, db = database()
    lat = asyncio.run(latency(root, db, samples))
    return {"lat": lat, "samples": samples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = ap.parse_args()
    data = measure(args.samples)
    lat = sorted(data["lat"])  # type: ignore[arg-type]
    if args.json:
        print(json.dumps(data))
        return
    if not lat:
        print("no sample reached the screen within 5 s")
        return
    p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
    print(f"new rp1 event on screen, {EVENTS_PER_S} events/s arriving: median {statistics.median(lat) * 1000:.0f} ms,"
          f" p95 {p95 * 1000:.0f} ms ({len(lat)}/{args.samples} samples; target p95 <= 100 ms)")


if __name__ == "__main__":
    main()
