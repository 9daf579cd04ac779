"""`doctor --json` over many sessions: the report made on two cores against the same report made by one process.

Usage: .venv/bin/python benchmarks/bench_doctor_split.py [--sizes 1000,3000,10000] [--repeat 5]

On the sweep's sessions trees (`bench_sweep.py`: 4 mode files and a canonical set holding one stale member per
session, so one finding with its repair plan each; built under the temp dir if missing), each size runs, interleaved
run by run: `rcs-tui doctor --json` as shipped (split between two processes from 2 000 sessions when a second core is
free), the same command with the split turned off (one process), and the floor, a bare Python reading every file of
the tree once. Wall seconds (median, min-max), CPU seconds of both processes (user + system) and the parent's peak
RSS; both outputs are compared byte for byte.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sweep import RCS_TUI, READ_ALL, tree  # noqa: E402
from common import median  # noqa: E402

ONE_PROCESS = ("import sys\nimport rcs_tui.project.doctor_split as split\nsplit.SPLIT_FROM = 10**9\n"
               "from rcs_tui.cli import main\nmain(sys.argv[1:])\n")


def run(cmd: list[str], root: Path) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds (the process and the children it waited for), peak RSS (MB), stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "CODEX_"))}
    env.pop("SESSION_ID", None)
    env.update(XDG_CACHE_HOME=tempfile.mkdtemp(prefix="doctor-split-"), RP1_DB=str(root / "no-rp1.db"))
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 3):
            raise SystemExit(f"{cmd[:3]} exited {os.waitstatus_to_exitcode(status)}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def cell(runs: list[tuple[float, float, float, bytes]]) -> str:
    walls = [r[0] for r in runs]
    return (f"{median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) / {median([r[1] for r in runs]):.2f} / "
            f"{max(r[2] for r in runs):.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; cores: {len(os.sched_getaffinity(0))}")
    print("| sessions | two processes: wall s (min-max) / CPU s / MB | one process | floor: read every file once "
          "| two / one | two / floor |")
    print("|---|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        root = tree("sessions", size)
        argv = ["doctor", "--json", "--root", str(root)]
        commands = {"two": [RCS_TUI, *argv], "one": [sys.executable, "-c", ONE_PROCESS, *argv],
                    "floor": [sys.executable, "-c", READ_ALL, str(root / ".rcs")]}
        got: dict[str, list[tuple[float, float, float, bytes]]] = {k: [] for k in commands}
        for _ in range(args.repeat):
            for name, cmd in commands.items():
                got[name].append(run(cmd, root))
        if got["two"][0][3] != got["one"][0][3]:
            raise SystemExit(f"{size} sessions: the two reports differ")

        two, one, floor = (median([r[0] for r in got[k]]) for k in ("two", "one", "floor"))
        print(f"| {size} | {cell(got['two'])} | {cell(got['one'])} | {cell(got['floor'])} | {two / one:.2f}x "
              f"| {two / floor:.2f}x |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
