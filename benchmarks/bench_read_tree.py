"""Reading a whole tree of sessions: the state reader next to a bare Python floor, and the CLI reads built on it.

Usage: .venv/bin/python benchmarks/bench_read_tree.py [--sessions N] [--repeat R] [--baseline DIR]

Builds the tree itself (the `sessions` shape of bench_sweep.py: per session 4 mode files and a canonical
set; 10 000 sessions = 50 001 state files; kept under the temp dir between runs). Then, each in its own
process and interleaved run by run (`--repeat` rounds):
- `read_snapshot` of every session, in process (a full read: every file opened, read, parsed): the first
  read of a fresh process that has imported the CLI (what a command pays), then `--reads` more reads
  (median wall and CPU);
- two floors in the same rounds: a bare Python loop opening and reading every file once, and the same
  loop also `json.loads`-ing each file;
- `doctor --json` and `snapshot --json` end to end as subprocesses (wall, CPU, peak RSS).
`--baseline DIR` runs every subject with DIR first on PYTHONPATH as well (another checkout, e.g. a
`git worktree` of main) for before/after in the same rounds. Ratios are to the floors of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sweep import run_once, tree  # noqa: E402
from common import median  # noqa: E402

HERE = str(Path(__file__).resolve().parent.parent)

READER = """import gc, json, sys, time
from pathlib import Path
import rcs_tui.cli.state_cmd  # the heap a command has when it reads
from rcs_tui.state.reader import read_snapshot
root, reads = Path(sys.argv[1]), int(sys.argv[2])
if sys.argv[3] == "one-shot":  # the collector as `snapshot --json` and `doctor` now run it
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
w, c = time.perf_counter(), time.process_time()
snap = read_snapshot(root)  # the first read of a process, as a command makes it
first = (time.perf_counter() - w, time.process_time() - c)
n = len(snap.sessions)
del snap
out = []
for _ in range(reads):
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    snap = read_snapshot(root)
    out.append((time.perf_counter() - w, time.process_time() - c))
    del snap
print(json.dumps({"sessions": n, "runs": out, "first": first}))
"""

FLOOR = """import gc, json, os, sys, time
root, reads, parse = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
def walk(top, keep):
    for entry in os.scandir(top):
        if entry.is_dir(follow_symlinks=False):
            walk(entry.path, keep)
        elif entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as fh:
                raw = fh.read()
            keep.append(json.loads(raw) if parse else raw)
walk(root, [])
out = []
for _ in range(reads):
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    kept = []
    walk(root, kept)
    out.append((time.perf_counter() - w, time.process_time() - c))
    del kept
print(json.dumps({"runs": out}))
"""


def in_process(script: str, args: list[str], code: str | None, first: list[tuple[float, float]] | None = None,
               ) -> list[tuple[float, float]]:
    """(wall, CPU) of each timed read of one process running `script` (its first read appended to `first`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "CODEX_"))}
    if code is not None:
        env["PYTHONPATH"] = code
    # run from the temp dir: `python -c` puts the current directory first on sys.path, before PYTHONPATH
    proc = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          check=True, timeout=900, cwd=tempfile.gettempdir())
    doc = json.loads(proc.stdout)
    if first is not None:
        first.append(tuple(doc["first"]))
    return [tuple(r) for r in doc["runs"]]


def _fmt(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return median([r[0] for r in runs]), median([r[1] for r in runs])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds (each subject once per round; default 3)")
    ap.add_argument("--reads", type=int, default=3, help="timed full reads per in-process run (default 3)")
    ap.add_argument("--baseline", metavar="DIR", help="another checkout to run the same subjects with")
    ap.add_argument("--no-cli", action="store_true", help="skip `doctor --json` and `snapshot --json`")
    args = ap.parse_args()
    t0 = time.perf_counter()
    root = tree("sessions", args.sessions)
    files = sum(len(f) for _, _, f in os.walk(root / ".rcs"))
    load0 = os.getloadavg()[0]
    codes = [("this", HERE)] + ([("baseline", args.baseline)] if args.baseline else [])
    subjects = [(f"{name}, {gc_mode} collector", code, gc_mode) for name, code in codes
                for gc_mode in ("default", "one-shot")]
    reader: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in subjects}
    firsts: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in subjects}
    floors: dict[str, list[tuple[float, float]]] = {"read": [], "read + json.loads": []}
    cli: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    commands = [] if args.no_cli else [("doctor --json", ["doctor", "--json"]),
                                       ("snapshot --json", ["snapshot", "--json"])]
    state = str(root / ".rcs")
    for rnd in range(args.repeat):
        floors["read"] += in_process(FLOOR, [state, str(args.reads), "0"], None)
        floors["read + json.loads"] += in_process(FLOOR, [state, str(args.reads), "1"], None)
        for name, code, gc_mode in subjects:
            reader[name] += in_process(READER, [str(root), str(args.reads), gc_mode], code, firsts[name])
        for name, code in codes:
            for label, argv in commands:
                wall, mb, _, cpu = run_once(argv, root, code)
                cli.setdefault((label, name), []).append((wall, cpu, mb))
        print(f"# round {rnd + 1}/{args.repeat} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    floor_w, floor_c = _fmt(floors["read"])
    lines = [f"bench_read_tree: {args.sessions} sessions ({files} files under .rcs), {os.cpu_count()} cores, "
             f"load {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end; median of {args.repeat} rounds"
             f" x {args.reads} reads",
             "", "| subject | wall s | CPU s | x floor (wall / CPU) |", "|---|---|---|---|"]
    for name, runs in floors.items():
        w, c = _fmt(runs)
        lines.append(f"| floor: {name} every file | {w:.3f} | {c:.3f} | {w / floor_w:.2f} / {c / floor_c:.2f} |")
    for name, runs in reader.items():
        w, c = _fmt(runs)
        lines.append(f"| read_snapshot, every session ({name}) | {w:.3f} | {c:.3f} | "
                     f"{w / floor_w:.2f} / {c / floor_c:.2f} |")
    for name, runs in firsts.items():
        w, c = _fmt(runs)
        lines.append(f"| read_snapshot, first read of a process ({name}) | {w:.3f} | {c:.3f} | "
                     f"{w / floor_w:.2f} / {c / floor_c:.2f} |")
    if args.baseline:
        lines.append("")
        for label, table in (("later reads", reader), ("first read", firsts)):
            for gc_mode in ("default", "one-shot"):
                (bw, bc) = _fmt(table[f"baseline, {gc_mode} collector"])
                (tw, tc) = _fmt(table[f"this, {gc_mode} collector"])
                lines.append(f"reader speed-up, {label}, {gc_mode} collector (baseline / this): "
                             f"wall {bw / tw:.2f}x, CPU {bc / tc:.2f}x")
    if commands:
        lines += ["", "| command | code | wall s | CPU s | peak MB |", "|---|---|---|---|---|"]
        for (label, name), cells in cli.items():
            lines.append(f"| `{label}` | {name} | {median([r[0] for r in cells]):.2f} | "
                         f"{median([r[1] for r in cells]):.2f} | {max(r[2] for r in cells):.0f} |")
    lines.append(f"\n{time.perf_counter() - t0:.0f} s in all")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
