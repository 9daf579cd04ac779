"""Run every benchmark and print one table: `python benchmarks/run_all.py [--quick]`.

bench_omx and bench_scale report rows directly; bench_rp1, bench_rp1_shapes and bench_hud are run as scripts
and their own tables are printed as they come (each keeps its own targets).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_omx  # noqa: E402
import bench_scale  # noqa: E402
import bench_targets  # noqa: E402
from common import Row  # noqa: E402

SCRIPTS = ("bench_rp1.py", "bench_rp1_shapes.py", "bench_hud.py")
QUICK = {"bench_hud.py": ["--quick"], "bench_rp1_shapes.py": ["--repeat", "1", "--shapes", "abcd"]}


def table(rows: list[Row]) -> str:
    heads = ("bench", "measure", "result", "target", "notes")
    cells = [heads] + [(r.bench, r.measure, r.value, r.target, r.note) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = []
    for i, c in enumerate(cells):
        lines.append(" | ".join(c[k].ljust(widths[k]) for k in range(4)) + " | " + c[4])
        if i == 0:
            lines.append("-+-".join("-" * w for w in widths) + "-+-" + "-" * 5)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs, shorter windows (a few minutes in all)")
    args = ap.parse_args()
    for script in SCRIPTS:
        if not (HERE / script).exists():
            continue
        print(f"== {script}", flush=True)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, str(HERE / script), *(QUICK.get(script, []) if args.quick else [])])
        print(f"   ({time.perf_counter() - t:.0f} s, exit {proc.returncode})\n", flush=True)
    rows: list[Row] = []
    for name, mod in (("bench_omx", bench_omx), ("bench_scale", bench_scale), ("bench_targets", bench_targets)):
        print(f"== {name}.py", flush=True)
        try:
            rows += mod.run(args.quick)
        except Exception as exc:  # noqa: BLE001 - one failing benchmark must not hide the others
            rows.append(Row(name, "failed", type(exc).__name__, note=str(exc)[:200]))
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
