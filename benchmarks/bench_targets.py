"""The speed targets, row by row, each next to its peer measured in the same run.

Usage: .venv/bin/python benchmarks/bench_targets.py [--quick] [--skip-live] [--once | --rp1 | --big]

Rows (target in brackets):
- `hud --once` on the demo tree, next to `omx hud` (the runtime's own one-shot HUD) and to
  `python -c "import json,os"` (the interpreter's floor), all three interleaved run by run
  [<= 0.1x omx hud, <= 2.5x the floor]. Three rcs-tui figures: the tree unchanged since the last run
  (the status-line case), a file of the tree rewritten before each run (its cache is rebuilt), and a
  first-ever run (empty cache directory);
- the same at 1 000x (1 000 sessions x 10 mode files, 1 000 000 rp1 events, no run of the project
  active) [within 1.5x of the demo-tree figure];
- the rp1 run feed filtered by status over all projects at 1 000 000 events: the first-ever call (empty
  cache directory), a later new process, and an in-process refresh after one new event
  [<= 1 s, <= 200 ms, <= 20 ms];
- the live HUD at 1 000x while 50 writes/s land on other sessions: write-to-screen median / p95 and
  the HUD's CPU (the writer thread's own CPU excluded), % of one core [p95 <= 50 ms, <= 10 %];
- console first paint at 1 000x [<= 1.0 s], next to a bare Textual app's first frame on the same pty;
- console view switch at 1 000x, key to the view's column headers on screen [p95 <= 100 ms];
- the console's rp1 view at 1 000x while 100 rp1 events/s arrive: a new event's commit to the frame
  showing it, median / p95 (`bench_console_rp1.py`) [p95 <= 100 ms];
- at 10 000 sessions (x 10 mode files, 20 workers, 500 tasks, 100 000 rp1 events; `--big` alone):
  `hud --once` and `hud --once --json`, cache unchanged and first ever, with peak RSS, next to
  `python -c "import json,os"` [cached <= 200 ms, first ever <= 1 s, RSS <= 300 MB]; the live
  HUD's first frame, the console's first paint and the console fully listed, next to a bare Textual
  app's first frame [<= 1 s, <= 1 s, <= 2 s]; the console's and the live HUD's memory 25 s after their
  start, recording the project's history [<= 300 MB].

Every rcs-tui run gets its own `XDG_CACHE_HOME` under the temp dir, so nothing of the user's cache is
read or written. The machine may be shared: figures move with load; compare the ratios, whose two sides
ran interleaved in the same minute.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_omx  # noqa: E402
import bench_scale  # noqa: E402
from common import Row, median, pct  # noqa: E402

PY = sys.executable
RCS_TUI = str(Path(PY).parent / "rcs-tui")
WORK = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "targets"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "OMX_", "CODEX_", "TMUX"))}
    env.pop("SESSION_ID", None)
    env.update(TERM="xterm-256color", NO_COLOR="1", COLUMNS="120", **extra)
    return env


def timed_run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def fresh_cache(tag: str) -> str:
    path = WORK / "xdg" / tag
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return str(path)


def touch(path: Path) -> None:
    """Rewrite a file the HUD reads (same content, new inode): the cached answer no longer holds."""
    tmp = path.with_name(path.name + ".bench")
    tmp.write_bytes(path.read_bytes())
    os.replace(tmp, path)


def an_input(cache: str, root: Path) -> Path:
    """A file the cached answer was built from (so rewriting it makes the cache stale)."""
    for doc in Path(cache, "rcs-tui").glob("once-*.json"):
        record = json.loads(doc.read_text())["inputs"]  # the compact record: directories and the names in them
        for rel, index in record["dirs"]:
            for name in record["names"][index]:
                p = Path(record["base"], rel, name)
                if p.suffix == ".json" and p.is_file() and str(p).startswith(str(root)):
                    return p
    raise RuntimeError("no cached answer to find an input in")


def once_series(root: Path, db: Path, runs: int, tag: str, peers: bool) -> dict[str, list[float]]:
    """Interleaved runs: floor, omx hud (when `peers`), rcs-tui unchanged / rewritten / first-ever.

    "unchanged" and "rewritten" use two cache directories: before each "rewritten" run an input file
    is rewritten, and the "unchanged" cache is brought up to date (untimed) before its next run.
    """
    omx, _ = bench_omx.omx_bin() if peers else (None, "")
    omx_root = bench_omx.build(WORK / "omx", "omx") if omx else None
    warm_env = clean_env(RP1_DB=str(db), XDG_CACHE_HOME=fresh_cache(f"{tag}-warm"))
    changed_env = clean_env(RP1_DB=str(db), XDG_CACHE_HOME=fresh_cache(f"{tag}-changed"))
    argv = [RCS_TUI, "hud", "--once", "--root", str(root)]
    out: dict[str, list[float]] = {"floor": [], "omx": [], "unchanged": [], "rewritten": [], "first": []}
    time.sleep(0.3)
    timed_run(argv, root, warm_env)
    timed_run(argv, root, changed_env)
    touched = an_input(warm_env["XDG_CACHE_HOME"], root)
    for _ in range(runs):
        if peers:
            out["floor"].append(timed_run([PY, "-c", "import json,os"], root, clean_env()))
        if omx and omx_root:
            out["omx"].append(timed_run([omx, "hud"], omx_root, bench_omx.env_for()))
        out["unchanged"].append(timed_run(argv, root, warm_env))
        touch(touched)
        time.sleep(0.15)  # past the window in which a fresh answer is not stored
        out["rewritten"].append(timed_run(argv, root, changed_env))
        timed_run(argv, root, warm_env)  # untimed: the status line's next run, which stores the answer again
        first_env = clean_env(RP1_DB=str(db), XDG_CACHE_HOME=fresh_cache(f"{tag}-first"))
        out["first"].append(timed_run(argv, root, first_env))
    return out


def demo_tree() -> tuple[Path, Path]:
    base = WORK / "demo"
    if not (base / "ready").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        subprocess.run([RCS_TUI, "demo", "--dir", str(base / "d"), "--build-only"], check=True,
                       stdout=subprocess.DEVNULL, env=clean_env())
        (base / "ready").write_text("ok")
    return base / "d" / "project", base / "d" / "rp1" / "rp1.db"


def ms(v: float) -> str:
    return f"{v * 1000:.0f} ms"


def once_rows(runs: int) -> tuple[list[Row], float]:
    rows: list[Row] = []
    root, db = demo_tree()
    demo = once_series(root, db, runs, "demo", peers=True)
    floor, omx = median(demo["floor"]), median(demo["omx"]) if demo["omx"] else None
    warm = median(demo["unchanged"])
    vs = f"{warm / omx:.2f}x omx hud ({ms(omx)}), " if omx else "omx hud skipped, "
    rows.append(Row("targets", "hud --once, demo tree, unchanged", ms(warm), "<= 0.1x omx, <= 2.5x floor",
                    f"{vs}{warm / floor:.2f}x floor ({ms(floor)})"))
    for key, label in (("rewritten", "a file rewritten before each run"), ("first", "first ever (empty cache)")):
        v = median(demo[key])
        rows.append(Row("targets", f"hud --once, demo tree, {label}", ms(v), "",
                        (f"{v / omx:.2f}x omx, " if omx else "") + f"{v / floor:.2f}x floor"))
    big_root, big_db = bench_scale.workspace(1000)
    big = once_series(big_root, big_db, max(3, runs // 2), "big", peers=False)
    for key, label in (("unchanged", "unchanged"), ("rewritten", "a file rewritten before each run"),
                       ("first", "first ever (empty cache)")):
        v = median(big[key])
        note = f"{v / median(demo[key]):.2f}x the demo-tree figure" + (f", {v / omx:.2f}x omx" if omx else "")
        rows.append(Row("targets", f"hud --once, 1 000 sessions + 1M rp1 events, {label}", ms(v),
                        "<= 1.5x demo" if key == "unchanged" else "", note))
    return rows, floor


FEED = """
import json, sys, time
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.machines import MachineRegistry
t = time.perf_counter()
src = Rp1Source(sys.argv[1], all_projects=True, machines=MachineRegistry({}))
feed = src.feed(status="running")
first = time.perf_counter() - t
out = {"call": first, "total": feed.total}
if len(sys.argv) > 2:
    import sqlite3
    conn = sqlite3.connect(sys.argv[1])
    conn.execute("INSERT INTO events (run_id, type, step, data, created_at) VALUES "
                 "('run-00001', 'status_change', 'plan', '{\\"status\\": \\"running\\"}', '2026-02-01T00:00:00.000Z')")
    conn.commit()
    conn.close()
    t = time.perf_counter()
    again = src.feed(status="running")
    out["refresh"] = time.perf_counter() - t
print(json.dumps(out))
"""


def feed_rows(runs: int) -> list[Row]:
    _, db = bench_scale.workspace(1000)
    copy = WORK / "feed" / "rp1.db"  # the in-process refresh appends an event: never to the shared tree
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db, copy)
    firsts, laters, refreshes, cli_firsts, cli_laters = [], [], [], [], []
    cli = [RCS_TUI, "rp1", "runs", "--all-projects", "--status", "running", "--json", "--db", str(db)]
    for i in range(runs):
        env = clean_env(XDG_CACHE_HOME=fresh_cache("feed"))
        first = subprocess.run([PY, "-c", FEED, str(db)], capture_output=True, text=True, env=env, check=True)
        firsts.append(json.loads(first.stdout)["call"])
        later = subprocess.run([PY, "-c", FEED, str(db)], capture_output=True, text=True, env=env, check=True)
        laters.append(json.loads(later.stdout)["call"])
        # The same as an operator types it: the command's whole wall time, interpreter start included.
        cli_env = clean_env(XDG_CACHE_HOME=fresh_cache("feed-cli"))
        cli_firsts.append(timed_run(cli, WORK, cli_env))
        cli_laters.append(timed_run(cli, WORK, cli_env))
        if i == 0:
            conn = sqlite3.connect(copy)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.close()
        refresh = subprocess.run([PY, "-c", FEED, str(copy), "refresh"], capture_output=True, text=True,
                                 env=clean_env(XDG_CACHE_HOME=fresh_cache("feed-refresh")), check=True)
        refreshes.append(json.loads(refresh.stdout)["refresh"])
    return [Row("targets", "rp1 feed by status, all projects, 1M events: first ever", ms(median(firsts)), "<= 1 s",
                "the call in a new process with an empty cache directory (imports not counted)"),
            Row("targets", "rp1 feed by status: every later new process", ms(median(laters)), "<= 200 ms",
                "the call (imports not counted)"),
            Row("targets", "`rcs-tui rp1 runs --all-projects --status running --json`: first ever / later",
                f"{ms(median(cli_firsts))} / {ms(median(cli_laters))}", "<= 1 s / <= 200 ms",
                "the whole command's wall time, interpreter start and imports included"),
            Row("targets", "rp1 feed by status: in-process refresh after a new event", ms(median(refreshes)),
                "<= 20 ms")]


LIVE = """
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
import bench_scale
root, db = bench_scale.workspace(1000)
cpu0, wall0 = time.process_time(), time.perf_counter()
window = {}
lat = asyncio.run(bench_scale.hud_latency(root, db, int(sys.argv[2]), window, quiet=5.0))
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
print(json.dumps({"lat": lat, "cpu": window["cpu"] / window["wall"], "all": (cpu - window["writer"]) / wall,
                  "quiet": window["quiet_cpu"] / window["quiet_wall"]}))
"""


def live_rows(samples: int) -> list[Row]:
    _, db = bench_scale.workspace(1000)
    proc = subprocess.run([PY, "-c", LIVE, str(Path(__file__).resolve().parent), str(samples)], capture_output=True,
                          text=True, env=clean_env(RP1_DB=str(db), XDG_CACHE_HOME=fresh_cache("live")), timeout=900)
    if proc.returncode != 0:
        return [Row("targets", "live HUD at 1 000x", "failed", note=proc.stderr.strip()[-200:])]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    lat = data["lat"]
    return [Row("targets", "live HUD 1 000x, 50 writes/s elsewhere: write->screen median / p95",
                f"{ms(median(lat))} / {ms(pct(lat, 95))}" if lat else "no repaint", "p95 <= 50 ms",
                f"{len(lat)}/{samples} samples"),
            Row("targets", "live HUD 1 000x: HUD CPU with 50 writes/s elsewhere, % of a core",
                f"{data['quiet'] * 100:.0f} %", "<= 10 %", "5 s of the background writes alone, writer excluded"),
            Row("targets", "live HUD 1 000x: HUD CPU while sampling too, % of a core", f"{data['cpu'] * 100:.0f} %",
                "", f"~7 repaints/s of the current session on top; {data['all'] * 100:.0f} % with start-up")]


TEXTUAL_FLOOR = """
from textual.app import App
from textual.widgets import DataTable, Footer
class Floor(App):
    def compose(self):
        yield DataTable()
        yield Footer()
    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_column("scope / mode")
        table.add_row("textual-floor-ready")
Floor().run()
"""


def textual_floor() -> float | None:
    """Seconds from spawn to the first frame of a bare Textual app (a table and a footer) on a pty."""
    p = bench_scale.PtyProc([PY, "-c", TEXTUAL_FLOOR], WORK, bench_scale.env_for(WORK / "none.db"), cols=120,
                            rows=40)
    try:
        return p.wait_for("textual-floor-ready", 30)
    finally:
        p.close()


def paint_rows(runs: int) -> list[Row]:
    root, db = bench_scale.workspace(1000)
    paints, floors = [], []
    WORK.mkdir(parents=True, exist_ok=True)
    for _ in range(runs):  # interleaved: the floor and rcs-tui in the same minute
        floor = textual_floor()
        if floor is not None:
            floors.append(floor)
        t, _full, _rss, _cpu = bench_scale.console_first_paint(root, db, 1000)
        if t is not None:
            paints.append(t)
    note = f"median of {len(paints)}"
    if paints and floors:
        note += f"; {median(paints) / median(floors):.2f}x a bare Textual app's first frame ({ms(median(floors))})"
    return [Row("targets", "console first paint at 1 000x", ms(median(paints)) if paints else "no paint", "<= 1.0 s",
                note)]


def switch_rows(rounds: int) -> list[Row]:
    root, db = bench_scale.workspace(1000)
    times = bench_scale.console_switch(root, db, rounds)
    if not times:
        return [Row("targets", "console view switch at 1 000x", "no switch seen", "p95 <= 100 ms")]
    return [Row("targets", "console view switch at 1 000x, key -> view shown: median / p95",
                f"{ms(median(times))} / {ms(pct(times, 95))}", "p95 <= 100 ms",
                f"{len(times)} switches among scopes, team (500 tasks) and tasks, on a pty")]


def console_rp1_rows(samples: int) -> list[Row]:
    script = str(Path(__file__).resolve().parent / "bench_console_rp1.py")
    proc = subprocess.run([PY, script, "--json", "--samples", str(samples)], capture_output=True, text=True,
                          env=clean_env(XDG_CACHE_HOME=fresh_cache("console-rp1")), timeout=900)
    if proc.returncode != 0:
        return [Row("targets", "console rp1 view, 100 events/s", "failed", note=proc.stderr.strip()[-200:])]
    lat = json.loads(proc.stdout.strip().splitlines()[-1])["lat"]
    return [Row("targets", "console rp1 view 1 000x, 100 events/s: new event->screen median / p95",
                f"{ms(median(lat))} / {ms(pct(lat, 95))}" if lat else "not shown within 5 s", "p95 <= 100 ms",
                f"{len(lat)}/{samples} samples")]


BIG = 10_000


def timed_rss(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one run, output discarded."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def big_workspace() -> tuple[Path, Path]:
    """10 000 sessions x 10 mode files (+ a canonical set each), a 20-worker team with 500 tasks, and an rp1
    database of 100 000 events, built here once and kept under the temp dir."""
    base = WORK / f"big-{BIG}"
    root, db = base / "proj", base / "rp1.db"
    if not (base / "ready").exists():
        shutil.rmtree(base, ignore_errors=True)
        root.mkdir(parents=True)
        bench_scale.build_tree(root, sessions=BIG, workers=20, tasks=500)
        bench_scale.build_rp1(db, root, events=100_000)
        (base / "ready").write_text("ok")
    return root, db


def hud_first_frame(root: Path, db: Path) -> float | None:
    """Seconds from spawn to the live HUD's first frame showing the current session's forge, on a pty."""
    p = bench_scale.PtyProc([RCS_TUI, "hud", "--root", str(root), "--session-id", bench_scale.CURRENT], root,
                            bench_scale.env_for(db), cols=120, rows=20)
    try:
        return p.wait_for("forge:3/10", 30)
    finally:
        p.close()


HISTORY_FILES = ("rcs-tui-history.jsonl", "rcs-tui-history.checkpoint.json")


def settled_memory(root: Path, db: Path, face: str, seconds: float = 25.0) -> tuple[float, float, bool]:
    """A live face (`console` or `hud`) left running `seconds` after its first frame, its history recorder
    included (the project's history removed first, so it records the whole project once): its peak RSS
    (MB), its RSS at the end (MB), and whether the recorder wrote its first record."""
    logs = root / ".rcs" / "logs"
    for name in HISTORY_FILES:
        (logs / name).unlink(missing_ok=True)
    argv = [RCS_TUI, face, "--root", str(root), "--session-id", bench_scale.CURRENT]
    p = bench_scale.PtyProc(argv, root, bench_scale.env_for(db), cols=120, rows=40)
    try:
        p.wait_for(bench_scale.CURRENT if face == "console" else "forge:3/10", 30)
        p.drain(seconds)
        status = Path(f"/proc/{p.proc.pid}/status").read_text() if p.proc.poll() is None else ""
        now = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        peak = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    finally:
        p.close()
    return peak / 1024, now / 1024, (logs / HISTORY_FILES[0]).exists()


def big_rows(runs: int) -> list[Row]:
    """The rows at 10 000 sessions, each next to its floor measured in the same run, interleaved."""
    root, db = big_workspace()
    WORK.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for as_json in (False, True):
        argv = [RCS_TUI, "hud", "--once", "--root", str(root), "--session-id", bench_scale.CURRENT,
                *(["--json"] if as_json else [])]
        warm = clean_env(RP1_DB=str(db), XDG_CACHE_HOME=fresh_cache(f"big-{as_json}-warm"))
        timed_rss(argv, root, warm)
        time.sleep(0.2)
        timed_rss(argv, root, warm)  # stored by now (unless the first run was too close to a write)
        cached, first, floor = [], [], []
        for _ in range(runs):
            floor.append(timed_rss([PY, "-c", "import json,os"], root, clean_env())[0])
            cached.append(timed_rss(argv, root, warm))
            first.append(timed_rss(argv, root, clean_env(RP1_DB=str(db),
                                                         XDG_CACHE_HOME=fresh_cache(f"big-{as_json}-first"))))
        name = "hud --once --json" if as_json else "hud --once"
        peer = '`python -c "import json,os"`'
        c, f, fl = median([x[0] for x in cached]), median([x[0] for x in first]), median(floor)
        rows.append(Row("targets", f"{name} at 10 000 sessions, cache unchanged", ms(c), "<= 200 ms",
                        f"{c / fl:.2f}x {peer} ({ms(fl)}); peak RSS {max(x[1] for x in cached):.0f} MB"))
        rows.append(Row("targets", f"{name} at 10 000 sessions, first ever (empty cache)", ms(f), "<= 1 s",
                        f"{f / fl:.2f}x the same floor; peak RSS {max(x[1] for x in first):.0f} MB"))
    hud, floors = [], []
    console, listed, rss, cpu = [], [], [], []
    for _ in range(max(1, runs // 2)):
        t = textual_floor()
        if t is not None:
            floors.append(t)
        h = hud_first_frame(root, db)
        if h is not None:
            hud.append(h)
        paint, full, mem, used = bench_scale.console_first_paint(root, db, BIG)
        if paint is not None:
            console.append(paint)
        if full is not None:
            listed.append(full)
            cpu.append(used)
        rss.append(mem)
    fl = median(floors) if floors else float("nan")
    rows.append(Row("targets", "live HUD first frame at 10 000 sessions", ms(median(hud)) if hud else "no frame",
                    "<= 1 s", f"{median(hud) / fl:.2f}x a bare Textual app's first frame ({ms(fl)})" if hud else ""))
    rows.append(Row("targets", "console first paint at 10 000 sessions", ms(median(console)) if console else "none",
                    "<= 1 s", f"{median(console) / fl:.2f}x the same floor" if console else ""))
    rows.append(Row("targets", "console fully listed at 10 000 sessions", ms(median(listed)) if listed else "none",
                    "<= 2 s", f"{median(listed) / fl:.2f}x the same floor; CPU then {median(cpu):.2f} s, RSS "
                    f"{max(rss):.0f} MB" if listed else ""))
    for face, label in (("console", "console"), ("hud", "live HUD")):
        peak, now, recorded = settled_memory(root, db, face)
        rows.append(Row("targets", f"{label} 25 s after start at 10 000 sessions, recording the history",
                        f"{peak:.0f} MB peak", "<= 300 MB", f"RSS then {now:.0f} MB; "
                        + ("the recorder wrote its first record" if recorded else "NO history written")))
    return rows


def table(rows: list[Row]) -> str:
    cells = [("measure", "result", "target", "notes")] + [(r.measure, r.value, r.target, r.note) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    return "\n".join(" | ".join(c[k].ljust(widths[k]) for k in range(3)) + " | " + c[3] for c in cells)


def run(quick: bool = False, skip_live: bool = False) -> list[Row]:
    runs = 7 if quick else 21
    rows, _ = once_rows(runs)
    rows += feed_rows(2 if quick else 3)
    if not skip_live:
        rows += live_rows(15 if quick else 40)
        rows += paint_rows(2 if quick else 5)
        rows += switch_rows(4 if quick else 10)
        rows += console_rp1_rows(15 if quick else 40)
        rows += big_rows(3 if quick else 5)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    ap.add_argument("--skip-live", action="store_true", help="only the one-shot and feed rows")
    ap.add_argument("--rp1", action="store_true", help="only the rp1 rows (feed by status, console rp1 view)")
    ap.add_argument("--once", action="store_true", help="only the `hud --once` rows")
    ap.add_argument("--big", action="store_true", help="only the rows at 10 000 sessions")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at start",
          flush=True)
    if args.once:
        rows = once_rows(7 if args.quick else 21)[0]
    elif args.big:
        rows = big_rows(3 if args.quick else 5)
    elif args.rp1:
        rows = feed_rows(2 if args.quick else 3) + console_rp1_rows(15 if args.quick else 40)
    else:
        rows = run(args.quick, args.skip_live)
    load = os.getloadavg()
    print(table(rows))
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at end")


if __name__ == "__main__":
    main()
