"""The fleet at the issue's scale: 50 local projects x 100 sessions, plus 3 remote hosts over real ssh.

Usage: .venv/bin/python benchmarks/bench_fleet.py [--quick] [--projects N] [--samples N]

The remote hosts are three aliases of one OpenSSH server on 127.0.0.1 (throwaway keys, as in the tests),
each serving one more 100-session project through its own `rcs-tui snapshot --json --follow`. The fleet
runs headless in this process. Measured:
- first paint: start to the first frame (rows "connecting"), to every local row holding its first
  document and drawn, to every row (remote ones too) holding one (target <= 2 s; a local row's first
  document is its root and current session), and to every project read in full;
- change latency: a write to a project's current-session mode file until its row is redrawn with the new
  value; p50/p95 for local projects (target p95 <= 200 ms) and remote ones (target p95 <= 500 ms);
- idle CPU of this process and its ssh clients over 20 s with nothing changing, so the window holds one
  refresh of the relative ages (target <= 1 % of a core);
- RSS of this process after the run (target <= 200 MB);
- floors measured in the same run: one full snapshot document of one project (what every row costs once),
  and one incremental document after a one-file change (what every update costs), to read the figures against.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from bench_scale import CURRENT, build_tree  # noqa: E402
from common import Row, cpu_ticks, pct, tree_pids  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "fleet"
CLK = os.sysconf("SC_CLK_TCK")


def projects_dir(count: int, sessions: int) -> Path:
    """`count` projects of `sessions` sessions each (built once, then copied; cached between runs)."""
    base = CACHE / f"p{count}x{sessions}"
    if not (base / "ready").exists():
        shutil.rmtree(base, ignore_errors=True)
        template = base / "template"
        build_tree(template, sessions=sessions, workers=2, tasks=10)
        for i in range(count):
            shutil.copytree(template, base / f"proj-{i:02d}", symlinks=True)
        shutil.rmtree(template)
        (base / "ready").write_text("ok")
    return base


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def forge_file(root: Path) -> Path:
    return root / ".rcs" / "state" / "sessions" / CURRENT / "forge-state.json"


def set_iteration(root: Path, value: int) -> None:
    path = forge_file(root)
    doc = json.loads(path.read_text())
    doc["iteration"] = value
    tmp = path.with_name(".forge.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, path)


def iteration_of(row) -> int | None:
    for scope in (row.doc or {}).get("scopes", []):
        if scope.get("scope") == CURRENT:
            return (scope["modes"].get("forge") or {}).get("iteration")
    return None


def ssh_round_trip(config: Path) -> float:
    """One `ssh HOST true` on the loopback server: what connecting alone costs a remote row."""
    t = time.perf_counter()
    subprocess.run(["ssh", "-F", str(config), "-T", "-o", "BatchMode=yes", "bench-host-0", "true"],
                   stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=60)
    return time.perf_counter() - t


def floors(root: Path) -> tuple[float, float]:
    from rcs_tui.project.feed import SnapshotFeed

    feed = SnapshotFeed(root)
    t = time.perf_counter()
    feed.document()
    full = time.perf_counter() - t
    set_iteration(root, 1)
    t = time.perf_counter()
    feed.document([forge_file(root)])
    return full, time.perf_counter() - t


async def measure(args) -> list[Row]:
    from rcs_tui.fleet.alerts import AlertSettings
    from rcs_tui.fleet.projects import expand_projects, parse_project
    from rcs_tui.fleet.transport import Ssh
    from rcs_tui.ui.fleet.app import TICK_S, FleetApp
    from tests.sshfix import SshServer

    base = projects_dir(args.projects + args.remotes, args.sessions)
    local_roots = [base / f"proj-{i:02d}" for i in range(args.projects)]
    remote_roots = [base / f"proj-{i:02d}" for i in range(args.projects, args.projects + args.remotes)]
    full_floor, incr_floor = floors(local_roots[0])

    server = SshServer(Path(tempfile.mkdtemp(prefix="rcs-bench-sshd-")))
    config = server.ssh_config.read_text()
    for i in range(args.remotes):  # three host aliases of the one loopback server
        server.ssh_config.write_text(config + config.replace("Host rcs-test-host", f"Host bench-host-{i}"))
        config = server.ssh_config.read_text()
    server.start()
    ssh_floor = ssh_round_trip(server.ssh_config)
    specs = [str(r) for r in local_roots] + [f"ssh://bench-host-{i}{r}" for i, r in enumerate(remote_roots)]
    found, _ = expand_projects(specs)
    rows: list[Row] = []
    app = FleetApp(found, ssh=Ssh(config_file=str(server.ssh_config)), alerts=AlertSettings(bell=False))
    start = time.perf_counter()
    try:
        async with app.run_test(size=(160, 60)) as pilot:
            first_frame = time.perf_counter() - start
            local_loaded = None
            while not all(r.doc is not None for r in app.rows.values()) or len(app.painted) < len(app.rows):
                if time.perf_counter() - start > 120:
                    raise SystemExit("fleet did not load every project within 120 s")
                if local_loaded is None and all(r.doc is not None and k in app.painted
                                                for k, r in app.rows.items() if not r.project.remote):
                    local_loaded = time.perf_counter() - start
                await asyncio.sleep(0.01)
            loaded = time.perf_counter() - start
            local_loaded = local_loaded or loaded
            while not all(r.doc is not None and not r.doc.get("partial") for r in app.rows.values()):
                if time.perf_counter() - start > 180:
                    raise SystemExit("fleet did not read every project in full within 180 s")
                await asyncio.sleep(0.01)
            await pilot.pause()
            full = time.perf_counter() - start
            await pilot.pause(1.5)  # past every project's start-up re-read

            async def latency(root: Path, key: str, value: int) -> float:
                row = app.rows[key]
                t = time.perf_counter()
                set_iteration(root, value)
                stamp = time.time()
                while not (iteration_of(row) == value and app.painted.get(key, 0) >= stamp):
                    if time.perf_counter() - t > 10:
                        return 10.0
                    await asyncio.sleep(0.002)
                return time.perf_counter() - t

            local_ms = []
            for i in range(args.samples):
                root = local_roots[i % len(local_roots)]
                local_ms.append(1000 * await latency(root, str(root), 100 + i))
                await asyncio.sleep(0.05)
            remote_ms = []
            for i in range(args.samples):
                j = i % len(remote_roots)
                key = parse_project(f"ssh://bench-host-{j}{remote_roots[j]}").key
                remote_ms.append(1000 * await latency(remote_roots[j], key, 500 + i))
                await asyncio.sleep(0.05)

            await pilot.pause(1.0)
            pids = tree_pids(os.getpid())
            ticks0, t0 = cpu_ticks(pids), time.perf_counter()
            await asyncio.sleep(args.idle)
            idle_pct = 100 * (cpu_ticks(pids) - ticks0) / CLK / (time.perf_counter() - t0)
            rss = rss_mb()
            threads = threading.active_count()
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finally:
        server.stop()
    n, r = len(local_roots), len(remote_roots)
    scale = f"{n} local x {args.sessions} sessions + {r} remote"
    rows += [
        Row("fleet", "first frame", f"{first_frame:.2f} s", "", scale),
        Row("fleet", "every local row filled and drawn", f"{local_loaded:.2f} s", "<= 2 s",
            "a local row: root + current session first"),
        Row("fleet", "every row filled and drawn (+ remote)", f"{loaded:.2f} s", "<= 2 s",
            f"a remote row: ssh + the host's rcs-tui + its full document; ssh alone {ssh_floor:.2f} s"),
        Row("fleet", "every project read in full", f"{full:.2f} s", "",
            f"floor: one project's full document {full_floor * 1000:.0f} ms x {n + r} = "
            f"{full_floor * (n + r):.2f} s serial ({full / (full_floor * (n + r)):.2f}x)"),
        Row("fleet", "local change on screen p50/p95", f"{pct(local_ms, 50):.0f} / {pct(local_ms, 95):.0f} ms",
            "p95 <= 200 ms", f"{len(local_ms)} samples; floor: incremental document {incr_floor * 1000:.0f} ms"),
        Row("fleet", "remote change on screen p50/p95", f"{pct(remote_ms, 50):.0f} / {pct(remote_ms, 95):.0f} ms",
            "p95 <= 500 ms", f"{len(remote_ms)} samples over ssh on loopback"),
        Row("fleet", "idle CPU (this process + ssh clients)", f"{idle_pct:.2f} %", "<= 1 %",
            f"{args.idle:.0f} s, nothing changing (includes the {TICK_S:g} s age refresh)"),
        Row("fleet", "RSS after run (peak)", f"{rss:.0f} MB ({peak:.0f} MB)", "<= 200 MB", f"{threads} threads"),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10 projects, 8 samples, 5 s idle")
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--remotes", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--idle", type=float, default=20.0)
    args = parser.parse_args()
    if args.quick:
        args.projects, args.samples, args.idle = 10, 8, 16.0
    for var in ("RCS_ROOT", "RCS_SESSION_ID", "SESSION_ID"):
        os.environ.pop(var, None)
    os.environ["RP1_DB"] = str(CACHE / "no-rp1.db")
    os.environ["RCS_TUI_CONFIG"] = str(CACHE / "no-config.toml")
    rows = asyncio.run(measure(args))
    print(f"{'measure':40} {'result':22} {'target':14} notes")
    for r in rows:
        print(f"{r.measure:40} {r.value:22} {r.target:14} {r.note}")


if __name__ == "__main__":
    main()
