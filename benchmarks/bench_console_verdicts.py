"""What judging who needs the operator costs the console per change, next to the reload it follows.

Usage: .venv/bin/python benchmarks/bench_console_verdicts.py [--quick]

Per size (1x, 10x, 100x, 1 000x sessions of 10 mode files each, built here with bench_scale's tree builder;
no rp1 database), in this process: per sample one session's forge file is rewritten with a new iteration and
timed twice, interleaved: the floor (the console's loader reading that change: `WorldLoader.load` of the
changed path, what the console's watcher pays for it) and the console's verdicts of the new World
(`project.verdicts.world_verdicts` with the doctor's per-scope cache kept between changes, as the console
keeps it; it runs off the UI thread). Prints medians and p95 and their ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import CURRENT, build_tree, dump  # noqa: E402
from common import median, pct  # noqa: E402


def measure(factor: int, samples: int) -> dict[str, float]:
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.project.verdicts import world_verdicts

    base = Path(tempfile.mkdtemp(prefix=f"rcs-verdicts-{factor}-"))
    root = base / "p"
    build_tree(root, sessions=max(1, factor), workers=max(1, factor // 50), tasks=max(1, factor // 2))
    os.environ["RP1_DB"] = str(base / "no-rp1.db")
    loader = WorldLoader(root, rp1_db=None)
    world = loader.load()
    cache: dict = {}
    t0 = time.perf_counter()
    world_verdicts(world, time.time(), cache=cache)
    first = (time.perf_counter() - t0) * 1000
    floor, extra = [], []
    target = root / ".rcs" / "state" / "sessions" / CURRENT / "forge-state.json"
    for i in range(samples):
        dump(target, {"active": True, "mode": "forge", "current_phase": "executing", "iteration": 100 + i,
                      "max_iterations": 1000, "session_id": CURRENT})
        a = time.perf_counter()
        world = loader.load([target])
        b = time.perf_counter()
        world_verdicts(world, time.time(), cache=cache)
        c = time.perf_counter()
        floor.append((b - a) * 1000)
        extra.append((c - b) * 1000)
    return {"sessions": factor, "first_ms": first, "floor_med": median(floor), "floor_p95": pct(floor, 95),
            "verdicts_med": median(extra), "verdicts_p95": pct(extra, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 samples per size instead of 30")
    args = parser.parse_args()
    samples = 10 if args.quick else 30
    print(f"load average {os.getloadavg()[0]:.1f}; {samples} changes per size")
    print(f"{'sessions':>8} {'first':>9} {'reload med':>11} {'verdicts med':>13} {'ratio':>6} "
          f"{'reload p95':>11} {'verdicts p95':>13}")
    for factor in (1, 10, 100, 1000):
        r = measure(factor, samples)
        print(f"{r['sessions']:>8} {r['first_ms']:>7.1f}ms {r['floor_med']:>9.1f}ms {r['verdicts_med']:>11.1f}ms "
              f"{r['verdicts_med'] / r['floor_med']:>5.2f}x {r['floor_p95']:>9.1f}ms {r['verdicts_p95']:>11.1f}ms")


if __name__ == "__main__":
    main()
