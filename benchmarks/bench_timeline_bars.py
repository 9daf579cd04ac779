"""What drawing a run or a task as time bars costs, next to reading what is drawn.

Usage: .venv/bin/python benchmarks/bench_timeline_bars.py [--rounds N]

Builds (here, under the temp dir) an rp1 database holding one `build` run per size: 100, 1 000 and
10 000 events (the steps entered in order, then unit rows, one unit per 10 events, each running then
completed or failed, with a quiet night in the middle), and a task whose transcript has as many moves.
For each size, interleaved round by round: the run's timeline read from the database (the floor: the run
detail reads it anyway) and the drawing (`run_chart` + `render` at 200 columns); the task read
(`load_task`) and its drawing (`task_chart` + `render`). Reports medians and the ratio drawing / read.
Target: the drawing costs no more than the read it draws (ratio <= 1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rcs_tui.core.machine import load_task_lifecycle  # noqa: E402
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db  # noqa: E402
from rcs_tui.rp1.source import Rp1Source  # noqa: E402
from rcs_tui.rp1.spans import run_chart  # noqa: E402
from rcs_tui.state.task_spans import task_chart  # noqa: E402
from rcs_tui.state.tasks import load_task  # noqa: E402
from rcs_tui.views.timeline_bars import render  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "timeline-bars"
SIZES = (100, 1_000, 10_000)
STEPS = ("requirements", "design", "tasks", "build", "verify")
PHASES = ("planning", "plan_review", "codegen", "review", "codegen", "review", "test")
WIDTH = 200


def build(root: Path, db: Path) -> None:
    create_db(db)
    for size in SIZES:
        clock = FakeClock(datetime(2026, 11, 25, 8, 0, tzinfo=datetime.now().astimezone().tzinfo),
                          timedelta(seconds=20))
        with Rp1Writer(db, clock=clock) as w:
            run = w.start_run("build", project_path=root, run_id=f"run-{size}")
            written = 0
            for step in STEPS[:3]:
                w.step(run, step)
                written += 1
            unit = 0
            while written < size:
                if written == size // 2:
                    clock.now += timedelta(hours=9)  # the night
                w.step(run, "tasks", unit=f"T{unit}")
                w.step(run, "tasks", "failed" if unit % 7 == 0 else "completed", unit=f"T{unit}")
                written += 2
                unit = written // 10
        tdir = root / ".rcs" / "tasks" / f"task-{size}"
        tdir.mkdir(parents=True)
        (tdir / "state.json").write_text(json.dumps({"phase": "test"}))
        start = datetime(2026, 11, 25, 8, 0).timestamp()
        lines = []
        for i in range(size):
            frm, to = (PHASES[(i - 1) % len(PHASES)] if i else None), PHASES[i % len(PHASES)]
            at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + i * 300 + (9 * 3600 if i > size // 2 else 0)))
            lines.append(json.dumps({"at": at, "actor": "bench", "from": frm, "to": to, "reason": "r",
                                     "kind": "advance"}))
        lines.append(json.dumps({"at": at, "actor": "bench", "from": to, "to": "test", "reason": "r",
                                 "kind": "advance"}))
        (tdir / "transcript.jsonl").write_text("\n".join(lines) + "\n")


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    root, db = WORK / "project", WORK / "rp1.db"
    (root / ".rcs").mkdir(parents=True)
    t0 = time.perf_counter()
    build(root, db)
    print(f"built in {time.perf_counter() - t0:.1f} s; load average {os.getloadavg()[0]:.1f}")
    source = Rp1Source(db, root=root, all_projects=True)
    machine = load_task_lifecycle()
    print(f"{'events / moves':>14} {'read run':>10} {'draw run':>10} {'ratio':>6} {'read task':>10} "
          f"{'draw task':>10} {'ratio':>6}")
    for size in SIZES:
        samples: dict[str, list[float]] = {"read": [], "draw": [], "task": [], "tdraw": []}
        t = source.timeline(f"run-{size}")
        task = load_task(root, f"task-{size}", machine)
        assert t is not None
        for _ in range(args.rounds):
            samples["read"].append(timed(lambda n=size: source.timeline(f"run-{n}")))
            samples["draw"].append(timed(lambda t=t: render(run_chart(t), WIDTH)))
            samples["task"].append(timed(lambda n=size: load_task(root, f"task-{n}", machine)))
            samples["tdraw"].append(timed(lambda task=task: render(task_chart(task, machine), WIDTH)))
        m = {k: statistics.median(v) * 1000 for k, v in samples.items()}
        print(f"{size:>14,} {m['read']:>8.1f}ms {m['draw']:>8.1f}ms {m['draw'] / m['read']:>6.2f} "
              f"{m['task']:>8.1f}ms {m['tdraw']:>8.1f}ms {m['tdraw'] / m['task']:>6.2f}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}; target: each ratio <= 1")


if __name__ == "__main__":
    main()
