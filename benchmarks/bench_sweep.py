"""How each CLI read grows with the size of its input: sizes x commands, with the growth exponent.

Usage: .venv/bin/python benchmarks/bench_sweep.py [--quick] [--shape NAME ...] [--repeat N]

Builds every tree itself (under the temp dir, `rcs-tui-bench/sweep`, kept between runs), one shape at a
time over a range of at least 100x:
- sessions (10 -> 10 000): per session 4 mode files (2 active), a canonical set listing the 2 active modes
  and one ended mode (a stale member: one doctor finding per session), and the current-session pointer;
- team workers (10 -> 1 000): one team, each worker with a status file and two task files;
- tasks (100 -> 10 000): `.rcs/tasks/<id>/` with state.json, two artifacts and a 40-line transcript;
- journal entries (1 000 -> 200 000): an unrotated journal of done entries, each with a 1 KiB before-image;
  the oldest entry is undoable (its file still holds what it wrote);
- canonical-set entries (10 -> 2 000): the root canonical set lists that many modes, none with a mode file
  (every entry a stale member, each a doctor finding with a repair plan);
- rp1 runs (1 000 -> 100 000): an rp1 database of that many runs of 10 events (3 steps of 2 units), read
  with `--db` by `rp1 runs --all-projects` (every run's status derived: a first-ever read, as the cache
  directory is fresh each run).
Each command runs as a subprocess (its own fresh `XDG_CACHE_HOME`, so `hud --once` is a first-ever call);
wall time and peak RSS (`os.wait4`) are the median / maximum of `--repeat` runs, next to a floor from the
same run: a bare Python reading every file of the tree once. The table flags a growth exponent (slope of
log(time - start-up) over log size, last three sizes; judged on CPU time, wall shown too) above 1.2,
and a figure over 1 s or 300 MB.
`--baseline DIR` runs every command of another checkout too (interleaved, same trees) for before/after.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median  # noqa: E402

RCS_TUI = str(Path(sys.executable).parent / "rcs-tui")
CACHE = Path(tempfile.gettempdir()) / "rcs-tui-bench" / "sweep"
MODES = ("forge", "blueprint", "team", "ultrawork", "autopilot", "ultraqa", "deep-interview", "autoresearch",
         "hud", "run")
T0 = "2026-11-25T21:41:36.953Z"
CURRENT = "s-current"
SLOW_S, BIG_MB, STEEP = 1.0, 300.0, 1.2


def dump(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def _pointer(root: Path) -> None:
    dump(root / ".rcs" / "state" / "session.json", {"session_id": CURRENT, "started_at": T0, "cwd": str(root),
                                                    "pid": os.getpid(), "platform": "linux"})


def build_sessions(root: Path, n: int) -> None:
    sessions = root / ".rcs" / "state" / "sessions"
    for i in range(n):
        sid = CURRENT if i == 0 else f"s-{i:05d}"
        d = sessions / sid
        active = [MODES[i % 8], MODES[(i + 3) % 8]]
        for m in (*active, MODES[(i + 5) % 8], MODES[(i + 6) % 8]):
            doc = {"active": m in active, "mode": m, "current_phase": "executing" if m in active else "complete",
                   "iteration": 3, "max_iterations": 10, "started_at": T0, "updated_at": T0, "session_id": sid,
                   "task_description": f"task {i} {m}"}
            dump(d / f"{m}-state.json", doc)
        listed = [*active, MODES[(i + 5) % 8]]  # the third is ended: a stale member
        dump(d / "skill-active-state.json", {"version": 1, "active": True, "skill": listed[0], "session_id": sid,
                                             "active_skills": [{"skill": m, "active": True, "activated_at": T0,
                                                                "session_id": sid} for m in listed]})
    _pointer(root)


def build_team(root: Path, workers: int) -> None:
    build_sessions(root, 1)
    team = root / ".rcs" / "state" / "team" / "sweep-team"
    dump(team / "config.json", {"name": "sweep-team", "task": "sweep", "worker_count": workers,
                                "workers": [{"name": f"w{i}"} for i in range(workers)]})
    dump(team / "phase.json", {"current_phase": "team-exec", "transitions": []})
    for i in range(workers):
        dump(team / "workers" / f"w{i}" / "status.json", {"state": "working", "current_task_id": str(i),
                                                         "updated_at": T0})
    for i in range(2 * workers):
        dump(team / "tasks" / f"task-{i}.json", {"id": str(i), "subject": f"task {i}", "owner": f"w{i % workers}",
                                                 "status": ("pending", "in_progress", "completed")[i % 3],
                                                 "version": 1, "created_at": T0})
    events = team / "events" / "events.ndjson"
    events.parent.mkdir(parents=True, exist_ok=True)
    events.write_text("".join(json.dumps({"event_id": str(i), "team": "sweep-team", "type": "worker_state",
                                          "worker": f"w{i % workers}", "state": "working", "created_at": T0}) + "\n"
                              for i in range(min(2000, 4 * workers))))


def build_tasks(root: Path, n: int) -> None:
    build_sessions(root, 1)
    phases = ("planning", "codegen", "review", "done")
    for i in range(n):
        d = root / ".rcs" / "tasks" / f"t-{i:05d}"
        dump(d / "state.json", {"phase": phases[i % 4], "actors": {"planning": {"round": 1, "status": "done"}}})
        dump(d / "planning" / "planning.ai.json", {"status": "approved", "round": 1})
        dump(d / "plan.files.json", {"files": ["src/a.py", "src/b.py"]})
        (d / "transcript.jsonl").write_text("".join(
            json.dumps({"at": T0, "kind": "advance", "from": "planning", "to": "codegen", "actor": "sweep",
                        "note": "x" * 120, "n": k}) + "\n" for k in range(40)))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_journal(root: Path, n: int) -> None:
    """`n` done entries, oldest first; the oldest changed a file that still holds its after-image."""
    build_sessions(root, 1)
    logs = root / ".rcs" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    old = root / ".rcs" / "state" / "sessions" / CURRENT / "forge-state.json"
    after = old.read_bytes()
    before = json.dumps({"active": False, "mode": "forge", "pad": "b" * 700}).encode()
    image = base64.b64encode(b"x" * 1024).decode()
    with open(logs / "rcs-tui-journal.jsonl", "w", encoding="utf-8") as out:
        for k in range(n):
            oldest = k == 0
            rel = ".rcs/state/sessions/s-current/forge-state.json" if oldest else f".rcs/state/f{k % 100}.json"
            entry = {"state": "done", "actor": "sweep@host", "action": "state clear forge", "at": T0,
                     "id": f"20261125T{k // 3600 % 24:02d}{k // 60 % 60:02d}{k % 60:02d}-{k:012x}",
                     "summary": {"mode": "forge", "scope": "root"}, "appends": [],
                     "files": [{"path": rel, "why": "mode file deleted",
                                "before_b64": base64.b64encode(before).decode() if oldest else image,
                                "after_sha": _sha(after) if oldest else None}]}
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    (root / "oldest-id").write_text(f"20261125T000000-{0:012x}")


def build_canonical(root: Path, n: int) -> None:
    state = root / ".rcs" / "state"
    dump(state / "skill-active-state.json", {
        "version": 1, "active": True, "skill": "m-00000",
        "active_skills": [{"skill": f"m-{i:05d}", "active": True, "activated_at": T0} for i in range(n)]})
    dump(state / "forge-state.json", {"active": True, "mode": "forge", "current_phase": "executing"})
    _pointer(root)


def build_rp1(root: Path, n: int) -> None:
    """An rp1 database of `n` runs of 10 events each over 3 steps of 2 units (the rp1 shapes benchmark's
    shape e, scaled), beside a project with one session; the commands read it with `--db`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from rcs_tui.rp1.fixtures import SHAPES as RP1_SHAPES
    from rcs_tui.rp1.fixtures import build_shaped_db

    build_sessions(root, 1)
    build_shaped_db(root / "rp1.db", RP1_SHAPES["e"].scaled(n))


Shape = tuple[Callable[[Path, int], None], list[int], list[int], list[tuple[str, list[str]]]]
SHAPES: dict[str, Shape] = {
    # name: builder, sizes, quick sizes, commands
    "sessions": (build_sessions, [10, 100, 1000, 3000, 10000], [10, 1000, 10000], [
        ("hud --once --json", ["hud", "--once", "--json"]),
        ("snapshot --json", ["snapshot", "--json"]),
        ("doctor --json", ["doctor", "--json"]),
        ("state list-active", ["state", "list-active", "--json"])]),
    "workers": (build_team, [10, 100, 300, 1000], [10, 100, 1000], [
        ("hud --once --json", ["hud", "--once", "--json"]),
        ("snapshot --json", ["snapshot", "--json"]),
        ("doctor --json", ["doctor", "--json"])]),
    "tasks": (build_tasks, [100, 1000, 3000, 10000], [100, 1000, 10000], [
        ("task list --json", ["task", "list", "--json"]),
        ("snapshot --json", ["snapshot", "--json"])]),
    "journal": (build_journal, [1000, 10000, 50000, 200000], [1000, 20000, 200000], [
        ("journal --json", ["journal", "--json"]),
        ("undo --dry-run (newest)", ["undo", "--dry-run"]),
        ("undo --dry-run (oldest)", ["undo", "@oldest", "--dry-run"]),
        ("doctor --json", ["doctor", "--json"])]),
    "rp1": (build_rp1, [1000, 10000, 30000, 100000], [1000, 10000, 100000], [
        ("rp1 runs --status waiting (first ever)", ["rp1", "runs", "--all-projects", "--status", "waiting",
                                                    "--json", "--db", "@db"]),
        ("rp1 runs (first ever)", ["rp1", "runs", "--all-projects", "--json", "--db", "@db"])]),
    "canonical": (build_canonical, [10, 100, 500, 2000], [10, 200, 2000], [
        ("hud --once --json", ["hud", "--once", "--json"]),
        ("snapshot --json", ["snapshot", "--json"]),
        ("doctor --json", ["doctor", "--json"])]),
}


def tree(shape: str, size: int) -> Path:
    """The project root of one shape at one size, built on first use."""
    base = CACHE / shape / str(size)
    root = base / "proj"
    if not (base / "ready").exists():
        shutil.rmtree(base, ignore_errors=True)
        root.mkdir(parents=True)
        SHAPES[shape][0](root, size)
        (base / "ready").write_text("ok")
    return root


# rp1's floor: the grouping any status read needs from SQLite (each run's and step's newest row), nothing more
GROUP_ALL = """import sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
n = sum(1 for _ in conn.execute("SELECT run_id, step, MAX(id) FROM events GROUP BY run_id, step"))
"""

READ_ALL = """import os, sys
n = 0
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        with open(os.path.join(d, f), "rb") as fh:
            n += len(fh.read())
"""


def run_once(argv: list[str], root: Path, code: str | None = None, timeout: float = 600.0
             ) -> tuple[float, float, int | None, float]:
    """Wall seconds, peak RSS in MB, exit status (None: killed after `timeout`) and CPU seconds (user +
    system) of one CLI run, output discarded; `code`: a directory put first on PYTHONPATH (another version
    of rcs_tui)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCS_", "CODEX_"))}
    env.pop("SESSION_ID", None)
    if code is not None:
        env["PYTHONPATH"] = code
    cache = tempfile.mkdtemp(prefix="sweep-cache-")
    env.update(XDG_CACHE_HOME=cache, RP1_DB=str(root / "no-rp1.db"), NO_COLOR="1")
    argv = [(root / "oldest-id").read_text() if a == "@oldest" else str(root / "rp1.db") if a == "@db" else a
            for a in argv]
    if argv == ["@read-all"]:
        cmd = [sys.executable, "-c", READ_ALL, str(root / ".rcs")]
    elif argv == ["@group-all"]:
        cmd = [sys.executable, "-c", GROUP_ALL, str(root / "rp1.db")]
    else:
        cmd = [RCS_TUI, "--root", str(root), *argv]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    code_out: int | None = None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            code_out = os.waitstatus_to_exitcode(status)
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    proc.returncode = code_out if code_out is not None else -9
    shutil.rmtree(cache, ignore_errors=True)
    return wall, usage.ru_maxrss / 1024, code_out, usage.ru_utime + usage.ru_stime


def exponent(points: list[tuple[int, float]], floor: float) -> float | None:
    """Least-squares slope of log(time - floor) over log(size), over the last three sizes whose time is
    at least 50 ms above `floor` (the start-up every command pays): the growth of the work itself. None
    when fewer than two sizes are that far above it (too little work to tell)."""
    pts = [(math.log(s), math.log(t - floor)) for s, t in points if t - floor >= 0.05][-3:]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def start_up(repeat: int) -> tuple[float, float]:
    """Median wall and CPU time of `state list-active --json` on a project whose `.rcs/` is empty: what
    every command pays before it reads anything."""
    root = CACHE / "empty"
    (root / ".rcs").mkdir(parents=True, exist_ok=True)
    runs = [run_once(["state", "list-active", "--json"], root) for _ in range(max(3, repeat))]
    return median([r[0] for r in runs]), median([r[3] for r in runs])


Cell = tuple[float, float, int | None, float]


def _cell(runs: list[Cell]) -> Cell:
    return median([r[0] for r in runs]), max(r[1] for r in runs), runs[-1][2], median([r[3] for r in runs])


def _text(cell: Cell | None, timeout: float) -> str:
    if cell is None:
        return "-"
    t, mb, code, cpu = cell
    if code is None:
        return f"> {timeout:.0f} s"
    return f"{t:.2f} / {cpu:.2f} / {mb:.0f}" + ("" if code in (0, 3) else f" (exit {code})")


def sweep(shape: str, quick: bool, repeat: int, floor: tuple[float, float], baseline: str | None,
          timeout: float) -> list[str]:
    """One shape over its sizes: each command `repeat` times (and the baseline's, interleaved run by run)."""
    _, sizes, quick_sizes, commands = SHAPES[shape]
    sizes = quick_sizes if quick else sizes
    commands = [*commands, ("floor: group every run's steps in SQLite", ["@group-all"]) if shape == "rp1"
                else ("floor: read every file", ["@read-all"])]
    results: dict[str, list[tuple[int, Cell]]] = {name: [] for name, _ in commands}
    before: dict[str, list[Cell | None]] = {name: [] for name, _ in commands}
    given_up: set[str] = set()
    for size in sizes:
        t0 = time.perf_counter()
        root = tree(shape, size)
        print(f"# {shape} {size}: tree ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        for name, argv in commands:
            runs: list[Cell] = []
            old: list[Cell] = []
            for _ in range(repeat):
                if baseline and not argv[0].startswith("@") and name not in given_up:
                    old.append(run_once(argv, root, baseline, timeout))
                    if old[-1][2] is None:
                        given_up.add(name)  # a larger size would only take longer
                runs.append(run_once(argv, root))
            results[name].append((size, _cell(runs)))
            before[name].append(_cell(old) if old else None)
            print(f"#   {name}: {_text(results[name][-1][1], timeout)}"
                  + (f" (baseline {_text(before[name][-1], timeout)})" if old else ""), file=sys.stderr, flush=True)
    head = ("| command | " + " | ".join(f"{s:,}".replace(",", " ") for s in sizes)
            + " | exponent wall / CPU | flags |")
    what = f"wall s / CPU s / peak MB, median of {repeat}" + ("; baseline in brackets" if baseline else "")
    lines = [f"\n{shape} ({what})", "", head, "|---" * (len(sizes) + 3) + "|"]
    for name, _ in commands:
        pts = results[name]
        start = (0.0, 0.0) if name.startswith("floor") else floor  # the floor is a bare interpreter
        slope = exponent([(s, c[0]) for s, c in pts], start[0])
        cpu_slope = exponent([(s, c[3]) for s, c in pts], start[1])
        flags = []
        # judged on CPU time: wall time also grows with the page and dentry caches' misses and the machine's
        # load (the floor's own wall exponent shows how much)
        if cpu_slope is not None and cpu_slope > STEEP:
            flags.append("worse than linear")
        if name.startswith("floor"):
            pass
        elif any(c[0] > SLOW_S for _, c in pts):
            flags.append("> 1 s")
        if any(c[1] > BIG_MB for _, c in pts):
            flags.append("> 300 MB")
        cells = " | ".join(_text(c, timeout) + (f" ({_text(b, timeout)})" if b is not None else "")
                           for (_, c), b in zip(pts, before[name], strict=True))
        slopes = " / ".join("-" if x is None else f"{x:.2f}" for x in (slope, cpu_slope))
        lines.append(f"| `{name}` | {cells} | {slopes} | {', '.join(flags)} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="two or three sizes per shape, one run each")
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only these shapes (repeatable)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per cell (default 3, --quick 1)")
    ap.add_argument("--baseline", metavar="DIR", help="also run each command with DIR first on PYTHONPATH (an "
                    "older checkout), interleaved run by run; shown in brackets")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is stopped (default 120)")
    args = ap.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    start = time.perf_counter()
    load = os.getloadavg()[0]
    floor = start_up(repeat)
    out = [f"bench_sweep: {os.cpu_count()} cores, load {load:.1f} at start; start-up {floor[0]:.3f} s wall, "
           f"{floor[1]:.3f} s CPU (`state list-active` on an empty project), taken off before each exponent"]
    for shape in args.shape or list(SHAPES):
        out += sweep(shape, args.quick, repeat, floor, args.baseline, args.timeout)
    out.append(f"\nload {os.getloadavg()[0]:.1f} at end; {time.perf_counter() - start:.0f} s in all")
    print("\n".join(out))


if __name__ == "__main__":
    main()
