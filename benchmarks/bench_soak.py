"""Soak: a careless runtime rewrites state at a steady rate while rcs-tui clears, undoes and repairs in a loop.

Prints how many of the runtime's writes were lost (per the runtime's own log) and how often rcs-tui refused.

    python benchmarks/bench_soak.py --seconds 600 --rate 150

The stand-in runtime (tests/reliability/runtime_writer.py) runs as a separate process, never takes rcs-tui's
lock, and logs every write it made (atomic renames, in-place truncating rewrites, deletes, renames onto
another tracked file) with CLOCK_MONOTONIC start/end times and the sha256 the path held afterwards.
rcs-tui's side records, for each compare-and-swap it made on a file, the instant window around it and the
digest of the bytes it swapped out (what the runtime had there). A runtime write is counted lost when the
next look at that path does not find it although nothing else wrote the path in between: either an
rcs-tui swap took out older bytes than the runtime's latest completed write, or the final file holds
neither the runtime's last write nor rcs-tui's later bytes. A write whose end overlaps a swap's window
could have landed on either side; it is counted lost only if neither order explains what was found.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rcs_tui.files import fsafe  # noqa: E402
from rcs_tui.project.doctor import diagnose, fix  # noqa: E402
from rcs_tui.state import ops  # noqa: E402
from rcs_tui.state.journal import undo  # noqa: E402
from rcs_tui.state.txn import ChangedUnderneath, TxnError  # noqa: E402
from tests.reliability.conftest import MODES, SESSION, build_busy_tree, start_writer  # noqa: E402


@dataclass
class Swap:
    """One applied compare-and-swap: path, its time window, the bytes it took out and put in."""

    path: str
    s0: int
    s1: int
    before: str | None
    after: str | None


SWAPS: list[Swap] = []


def naive_swap(dfd, name, tmp, expect, rel):
    """Check, pause 2 ms, rename: the gap the compare-and-swap closes; proves the loss count can see losses."""
    found = fsafe._digest_at(dfd, name, rel)
    if found != expect:
        fsafe._discard(dfd, tmp)
        return fsafe.SwapResult(False, found)
    time.sleep(0.002)
    fsafe.os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    return fsafe.SwapResult(True, found)


def instrument(naive: bool = False) -> None:
    """Record every applied swap (the runtime's bytes it replaced, and ours) with a tight time window."""
    real_swap, real_remove = (naive_swap if naive else fsafe.swap_in), fsafe.remove_if

    def swap_in(dfd, name, tmp, expect, rel):
        ours = fsafe.digest(fsafe.read_at(dfd, tmp, rel))
        s0 = time.monotonic_ns()
        result = real_swap(dfd, name, tmp, expect, rel)
        if result.applied:
            SWAPS.append(Swap(rel, s0, time.monotonic_ns(), result.found, ours))
        return result

    def remove_if(dfd, name, expect, rel):
        s0 = time.monotonic_ns()
        result = real_remove(dfd, name, expect, rel)
        if result.applied:
            SWAPS.append(Swap(rel, s0, time.monotonic_ns(), result.found, None))
        return result

    fsafe.swap_in, fsafe.remove_if = swap_in, remove_if


def operate(root: Path, until: float, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"clear": 0, "undo": 0, "doctor": 0, "refused": 0, "attempts": 0}
    no_db = str(root.parent / "no-rp1.db")
    while time.monotonic() < until:
        roll = rng.random()
        try:
            if roll < 0.7:
                op = ops.plan_clear(root, rng.choice(MODES), rng.choice([ops.ROOT_SCOPE, SESSION]))
                if not op.plan.changes:
                    continue
                counts["attempts"] += 1
                op.run(root, actor="soak")
                counts["clear"] += 1
            elif roll < 0.85:
                counts["attempts"] += 1
                undo(root, actor="soak")
                counts["undo"] += 1
            else:
                counts["attempts"] += 1
                result = fix(root, diagnose(root, SESSION, rp1_db=no_db), session_id=SESSION, rp1_db=no_db)
                counts["doctor"] += 1
                counts["refused"] += len(result["failed"])
                counts["doctor repair refused"] = counts.get("doctor repair refused", 0) + len(result["failed"])
        except ChangedUnderneath:
            counts["refused"] += 1
            counts["changed underneath"] = counts.get("changed underneath", 0) + 1
        except TxnError as exc:  # e.g. undo: a file changed since the entry; nothing to undo
            counts["refused"] += 1
            key = "undo refused" if "undo" in str(exc) else "other refusal"
            counts[key] = counts.get(key, 0) + 1
    return counts


def lost_writes(root: Path, log: list[dict], swaps: list[Swap]) -> list[dict]:
    """Runtime writes that the next look at their path did not find (see the module docstring)."""
    lost = []
    by_path: dict[str, list] = {}
    for rec in log:
        by_path.setdefault(rec["path"], []).append(("w", rec["t0"], rec["t1"], rec))
    for s in swaps:
        by_path.setdefault(s.path, []).append(("s", s.s0, s.s1, s))
    for path, events in by_path.items():
        events.sort(key=lambda e: e[2])
        writes = [e[3] for e in events if e[0] == "w"]
        for kind, _a, _b, obj in events:
            if kind != "s":
                continue
            # candidates: the runtime's latest write that completed before the swap began, every write that
            # overlaps the swap window, and rcs-tui's own latest swap on this path before it
            done = [w for w in writes if w["t1"] < obj.s0]
            overlapping = [w for w in writes if w["t1"] >= obj.s0 and w["t0"] <= obj.s1]
            prior = [s for s in swaps if s.path == path and s.s1 < obj.s0]
            latest_write = done[-1] if done else None
            latest_swap = prior[-1] if prior else None
            expected = []
            if latest_write and (not latest_swap or latest_write["t1"] > latest_swap.s1):
                expected.append(latest_write["sha"])
            elif latest_swap:
                expected.append(latest_swap.after)
                if latest_write and latest_write["t0"] <= latest_swap.s1:
                    expected.append(latest_write["sha"])
            expected += [w["sha"] for w in overlapping]
            if expected and obj.before not in expected and latest_write is not None:
                lost.append({"path": path, "write": latest_write, "found": obj.before})
        final = fsafe.Tree(root).read(path)
        final_sha = fsafe.digest(final) if final is not None else None
        last_w = writes[-1] if writes else None
        last_s = max((s for s in swaps if s.path == path), key=lambda s: s.s1, default=None)
        ok = {last_w["sha"]} if last_w else set()
        if last_s and (not last_w or last_s.s1 >= last_w["t0"]):
            ok.add(last_s.after)
        if last_w and ok and final_sha not in ok:
            lost.append({"path": path, "write": last_w, "found": final_sha, "final": True})
    return lost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0)
    ap.add_argument("--rate", type=float, default=150.0, help="runtime writes per second")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--naive", action="store_true",
                    help="replace files by check-then-rename with a 2 ms gap instead of compare-and-swap "
                         "(shows that the loss count does see losses)")
    args = ap.parse_args()
    instrument(args.naive)
    with TemporaryDirectory(prefix="rcs-tui-soak-") as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        build_busy_tree(root)
        writer = start_writer(root, args.seconds, args.rate, seed=args.seed)
        t0 = time.monotonic()
        counts = operate(root, t0 + args.seconds, args.seed)
        log = writer.wait(timeout=args.seconds + 60)
        elapsed = time.monotonic() - t0
        lost = lost_writes(root, log, SWAPS)
    total = len(log)
    per_100k = len(lost) / total * 100_000 if total else 0.0
    refused_rate = counts["refused"] / counts["attempts"] if counts["attempts"] else 0.0
    mode = "NAIVE check-then-rename; " if args.naive else ""
    print(f"{mode}soak {elapsed:.0f} s, runtime {total} writes ({total / elapsed:.0f}/s), "
          f"rcs-tui swaps {len(SWAPS)}")
    print(f"rcs-tui actions: {counts['clear']} clears, {counts['undo']} undos, {counts['doctor']} doctor --fix; "
          f"refused {counts['refused']} of {counts['attempts']} attempts ({refused_rate:.1%})")
    kinds = ", ".join(f"{k} {v}" for k, v in counts.items()
                      if k not in ("clear", "undo", "doctor", "refused", "attempts"))
    print(f"refusals by kind: {kinds}")
    print(f"lost runtime writes: {len(lost)} / {total} ({per_100k:.2f} per 100 000; target <= 1)")
    for item in lost[:10]:
        print(f"  lost: {item['path']} {item['write']['op']} seq {item['write']['seq']} (found {item['found']})")


if __name__ == "__main__":
    main()
