"""rcs-tui side by side with the runtime's own HUD (`omx hud` from the oh-my-codex package).

Usage: .venv/bin/python benchmarks/bench_omx.py [--quick]

The same tree is built twice, as `.omx` (ralph, ralplan) for `omx hud` and as `.rcs` (forge, blueprint)
for rcs-tui. Measured, each as rcs-tui / runtime:
- one-shot wall time: `rcs-tui hud --once` vs `omx hud` (median of N runs);
- write-to-screen latency: the watcher runs on a pty (`rcs-tui hud` vs `omx hud --watch`, which polls
  every 1 s); each sample is an atomic rewrite of the forge/ralph file with a new iteration, timed
  until the new `forge:<i>/10` / `ralph:<i>/10` text reaches the pty;
- idle CPU: user+system CPU of the watcher's process tree over an idle window, % of one core.
The package is installed with npm into a cache dir on first use; without node/npm it is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CLK_TCK, PtyProc, Row, cpu_ticks, median, pct, tree_pids  # noqa: E402

PACKAGE = "oh-my-codex@0.21.6"
CACHE = Path(os.environ.get("RCS_TUI_BENCH_CACHE", Path.home() / ".cache" / "rcs-tui-bench")) / "omx"
RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")
T0 = "2026-11-25T21:41:36.953Z"
NAMES = {"rcs": {"dir": ".rcs", "forge": "forge", "blueprint": "blueprint"},
         "omx": {"dir": ".omx", "forge": "ralph", "blueprint": "ralplan"}}


def omx_bin() -> tuple[str | None, str]:
    """Path of the `omx` executable, installing the package into the cache dir if needed."""
    exe = CACHE / "node_modules" / ".bin" / "omx"
    if exe.exists():
        return str(exe), "cached"
    if not shutil.which("node") or not shutil.which("npm"):
        return None, "node/npm not found: runtime side skipped"
    CACHE.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", PACKAGE],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not exe.exists():
        return None, f"npm install {PACKAGE} failed: {proc.stderr.strip()[-200:]}"
    return str(exe), "installed"


def write_atomic(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.bench.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, path)


def forge_doc(kind: str, iteration: int) -> dict:
    return {"active": True, "mode": NAMES[kind]["forge"], "current_phase": "executing", "iteration": iteration,
            "max_iterations": 10, "started_at": T0, "updated_at": T0, "run_outcome": "continue"}


def build(base: Path, kind: str) -> Path:
    """A project root with forge/ralph (3/10), blueprint/ralplan auto-completed, ultrawork and a canonical set."""
    n = NAMES[kind]
    root = base / kind
    state = root / n["dir"] / "state"
    write_atomic(state / f"{n['forge']}-state.json", forge_doc(kind, 3))
    write_atomic(state / f"{n['blueprint']}-state.json",
                 {"active": False, "mode": n["blueprint"], "current_phase": "completed", "completed_at": T0,
                  "run_outcome": "finish", "lifecycle_outcome": "finished"})
    write_atomic(state / "ultrawork-state.json", {"active": True, "reinforcement_count": 1, "started_at": T0})
    write_atomic(state / "skill-active-state.json", {
        "version": 1, "active": True, "skill": n["forge"], "phase": "executing", "activated_at": T0,
        "updated_at": T0, "source": "keyword-detector",
        "active_skills": [{"skill": n["forge"], "phase": "executing", "active": True, "activated_at": T0},
                          {"skill": "ultrawork", "active": True, "activated_at": T0}]})
    write_atomic(root / n["dir"] / "metrics.json", {"session_turns": 14, "session_total_tokens": 853600,
                                                    "five_hour_limit_pct": 38, "weekly_limit_pct": 12,
                                                    "last_activity": T0})
    subprocess.run(["git", "init", "-q", str(root)], check=False)
    return root


def env_for() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "OMX_", "CODEX_", "TMUX"))}
    env.pop("SESSION_ID", None)
    env.update(TERM="xterm-256color", RP1_DB=str(Path(tempfile.gettempdir()) / "rcs-tui-bench-no-rp1.db"))
    return env


def one_shot(argv: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env_for(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        times.append(time.perf_counter() - t)
    return median(times)


def watch(argv: list[str], root: Path, kind: str, samples: int, idle_s: float) -> tuple[list[float], float]:
    """Write-to-screen latencies (s) and idle CPU (% of one core) of a watcher on a pty."""
    n = NAMES[kind]
    path = root / n["dir"] / "state" / f"{n['forge']}-state.json"
    p = PtyProc(argv, root, env_for())
    lat: list[float] = []
    try:
        if p.wait_for(f"{n['forge']}:3/10", 20) is None:
            raise RuntimeError(f"{argv[0]} never showed the tree:\n{p.text()[-500:]}")
        p.drain(1.5)
        pids = tree_pids(p.proc.pid)
        c0, t0 = cpu_ticks(pids), time.perf_counter()
        p.drain(idle_s)
        cpu = (cpu_ticks(tree_pids(p.proc.pid)) - c0) / CLK_TCK / (time.perf_counter() - t0) * 100
        for i in range(samples):
            value = 4 + i % 5
            start = len(p.raw)
            p.drain(0.05 + (i % 7) * 0.13)  # spread the writes across the poll phase
            start = len(p.raw)
            t = time.perf_counter()
            write_atomic(path, forge_doc(kind, value))
            got = p.wait_for(f"{n['forge']}:{value}/10", 5, start)
            if got is not None:
                lat.append(time.perf_counter() - t)
            write_atomic(path, forge_doc(kind, 3))
            p.wait_for(f"{n['forge']}:3/10", 5, start)
    finally:
        p.close()
    return lat, cpu


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    exe, how = omx_bin()
    runs, samples, idle_s = (5, 8, 5.0) if quick else (15, 25, 20.0)
    with tempfile.TemporaryDirectory(prefix="rcs-tui-bench-omx-") as tmp:
        rcs_root, omx_root = build(Path(tmp), "rcs"), build(Path(tmp), "omx")
        ours_once = one_shot([RCS_TUI, "hud", "--once", "--root", str(rcs_root)], rcs_root, runs)
        ours_lat, ours_cpu = watch([RCS_TUI, "hud", "--root", str(rcs_root)], rcs_root, "rcs", samples, idle_s)
        if exe is None:
            rows.append(Row("vs omx", "runtime side", "skipped", note=how))
            theirs_once, theirs_lat, theirs_cpu = None, [], None
        else:
            theirs_once = one_shot([exe, "hud"], omx_root, runs)
            theirs_lat, theirs_cpu = watch([exe, "hud", "--watch"], omx_root, "omx", samples, idle_s)

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}x" if a is not None and b else "n/a"

    rows.append(Row("vs omx", "one-shot wall (median)", f"{ours_once * 1000:.0f} ms",
                    note=f"omx hud {theirs_once * 1000:.0f} ms, ratio {ratio(ours_once, theirs_once)}"
                    if theirs_once else ""))
    if ours_lat:
        m_ours, p_ours = median(ours_lat), pct(ours_lat, 95)
        note = ""
        if theirs_lat:
            m_t, p_t = median(theirs_lat), pct(theirs_lat, 95)
            note = (f"omx --watch median {m_t * 1000:.0f} / p95 {p_t * 1000:.0f} ms; "
                    f"ratio {ratio(m_ours, m_t)} / {ratio(p_ours, p_t)}")
        rows.append(Row("vs omx", f"write-to-screen median / p95 ({len(ours_lat)}/{samples})",
                        f"{m_ours * 1000:.0f} / {p_ours * 1000:.0f} ms", "p95 <= 50 ms", note))
    rows.append(Row("vs omx", f"idle CPU over {idle_s:.0f} s", f"{ours_cpu:.2f} %",
                    note=f"omx --watch {theirs_cpu:.2f} %, ratio {ratio(ours_cpu, theirs_cpu)}"
                    if theirs_cpu is not None else ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs and samples, shorter idle window")
    args = ap.parse_args()
    for r in run(args.quick):
        print(f"{r.measure:<44} {r.value:>16}  {r.target:<14} {r.note}")


if __name__ == "__main__":
    main()
