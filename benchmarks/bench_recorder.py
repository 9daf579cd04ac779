"""What the flight recorder costs per change, next to the snapshot document every follower builds anyway.

Usage: .venv/bin/python benchmarks/bench_recorder.py [--quick]

Per size (1x, 10x, 100x, 1 000x sessions of 10 mode files each, built here with bench_scale's tree builder;
no rp1 database), in this process: the recorder's start (first document, summary, baseline entry,
checkpoint); then, per sample, one session's forge file is rewritten with a new iteration and timed twice,
interleaved: the floor (`SnapshotFeed.build` of the changed path: what the recorder's feed, `snapshot
--follow` and a fleet row pay for that change) and the recorder's own work on that document (summary,
journal read when members come or go, diff, append, the checkpoint at most every 5 s). Prints medians
and p95, their ratio, the checkpoint's size and the bytes a history entry takes.
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
    from rcs_tui.project.feed import SnapshotFeed
    from rcs_tui.project.recorder import CHECKPOINT_REL, HISTORY_REL, Recorder, observe_feed

    base = Path(tempfile.mkdtemp(prefix=f"rcs-rec-{factor}-"))
    root = base / "p"
    build_tree(root, sessions=max(1, factor), workers=max(1, factor // 50), tasks=max(1, factor // 2))
    os.environ["RP1_DB"] = str(base / "no-rp1.db")
    t0 = time.perf_counter()
    feed = SnapshotFeed(root, summary=True, scopes=False)
    doc = feed.document()
    t1 = time.perf_counter()
    rec = Recorder(root)
    rec.start()
    observe_feed(rec, feed, doc)
    t2 = time.perf_counter()
    floor, extra = [], []
    target = root / ".rcs" / "state" / "sessions" / CURRENT / "forge-state.json"
    for i in range(samples):
        dump(target, {"active": True, "mode": "forge", "current_phase": "executing", "iteration": 100 + i,
                      "max_iterations": 1000, "session_id": CURRENT})
        a = time.perf_counter()
        doc = feed.build([target])
        b = time.perf_counter()
        written = observe_feed(rec, feed, doc)
        c = time.perf_counter()
        assert len(written) == 1, written
        floor.append((b - a) * 1000)
        extra.append((c - b) * 1000)
    history = (root / HISTORY_REL).read_bytes().splitlines()[1:]  # the changes, not the baseline
    return {"sessions": factor, "first_doc_ms": (t1 - t0) * 1000, "start_ms": (t2 - t1) * 1000,
            "floor_med": median(floor), "floor_p95": pct(floor, 95), "rec_med": median(extra),
            "rec_p95": pct(extra, 95), "checkpoint_kb": (root / CHECKPOINT_REL).stat().st_size / 1024,
            "entry_bytes": sum(len(line) + 1 for line in history) / len(history)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = 10 if args.quick else 30
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| sessions | first document | recorder start | document per change (floor) med / p95 | recorder "
          "per change med / p95 | ratio (medians) | checkpoint | bytes per entry |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for factor in (1, 10, 100, 1000):
        r = measure(factor, samples)
        print(f"| {factor} | {r['first_doc_ms']:.0f} ms | {r['start_ms']:.0f} ms | {r['floor_med']:.1f} / "
              f"{r['floor_p95']:.1f} ms | {r['rec_med']:.1f} / {r['rec_p95']:.1f} ms | "
              f"{r['rec_med'] / r['floor_med']:.2f}x | {r['checkpoint_kb']:.0f} KB | {r['entry_bytes']:.0f} |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
