"""A stand-in for the RCS runtime: rewrites state files as fast as asked and logs every write it made.

Run as a separate process: `python runtime_writer.py ROOT SECONDS RATE SEED LOG PATHS_JSON`.
Each log line is `{"seq", "t0", "t1", "path", "op", "sha"}`: `t0`/`t1` are CLOCK_MONOTONIC ns taken
just before the operation started and just after it finished (comparable with the test process),
`sha` is the sha256 of the bytes the path holds after the operation (null: the path is gone).
Operations: atomic write (temp + rename), non-atomic write (truncate in place, two chunks), delete,
and rename of one tracked file onto another (logged as two entries). It never takes rcs-tui's lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

MODES = ("forge", "ultrawork", "team", "autopilot")


def mode_doc(rng: random.Random, seq: int, mode: str) -> dict:
    active = rng.random() < 0.8
    return {"active": active, "mode": mode, "current_phase": rng.choice(["executing", "verifying", "complete"]),
            "iteration": rng.randint(0, 9), "max_iterations": 10, "updated_at": f"runtime-{seq}",
            "task_description": rng.choice(["login flow", "[bold red]x[/]", "\x1b[31mred\x1b[0m", "plain"])}


def canonical_doc(rng: random.Random, seq: int, path: Path) -> dict:
    sid = path.parent.name if path.parent.parent.name == "sessions" else None
    skills = rng.sample(MODES, rng.randint(0, 3))
    entries = [{"skill": s, "active": True, "activated_at": f"runtime-{seq}",
                **({"session_id": sid} if sid else {})} for s in skills]
    return {"version": 1, "active": bool(skills), "skill": skills[0] if skills else None,
            "updated_at": f"runtime-{seq}", "active_skills": entries}


def task_doc(rng: random.Random, seq: int) -> dict:
    return {"phase": rng.choice(["planning", "plan_review", "codegen", "review"]),
            "actors": {"planning": {"round": seq, "status": "workshop"}}, "ticket": f"runtime-{seq}"}


def content(rng: random.Random, seq: int, path: Path) -> bytes:
    if path.name == "skill-active-state.json":
        doc = canonical_doc(rng, seq, path)
    elif path.name == "state.json":
        doc = task_doc(rng, seq)
    else:
        doc = mode_doc(rng, seq, path.name.removesuffix("-state.json"))
    return (json.dumps(doc, indent=2) + "\n").encode()


def sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def main() -> None:
    root, seconds, rate, seed, log_path, paths_json = sys.argv[1:7]
    rng = random.Random(int(seed))
    paths = [Path(root) / p for p in json.loads(paths_json)]
    interval = 1.0 / float(rate)
    end = time.monotonic() + float(seconds)
    seq = 0
    with open(log_path, "w", buffering=1) as log:

        def record(path: Path, op: str, digest: str | None, t0: int) -> None:
            log.write(json.dumps({"seq": seq, "t0": t0, "t1": time.monotonic_ns(), "op": op,
                                  "path": str(path.relative_to(root)), "sha": digest}) + "\n")

        next_at = time.monotonic()
        while time.monotonic() < end:
            seq += 1
            path = rng.choice(paths)
            roll = rng.random()
            t0 = time.monotonic_ns()
            path.parent.mkdir(parents=True, exist_ok=True)
            if roll < 0.5:
                data = content(rng, seq, path)
                tmp = path.with_name(f".rt-{seq}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, path)
                record(path, "atomic", sha(data), t0)
            elif roll < 0.8:
                data = content(rng, seq, path)
                with open(path, "wb") as fh:
                    fh.write(data[: len(data) // 2])
                    fh.flush()
                    fh.write(data[len(data) // 2:])
                record(path, "in-place", sha(data), t0)
            elif roll < 0.9:
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                record(path, "delete", None, t0)
            else:
                siblings = [p for p in paths if p.parent == path.parent and p != path and p.name != "state.json"
                            and (p.name == "skill-active-state.json") == (path.name == "skill-active-state.json")]
                if not siblings or path.name == "state.json":
                    continue
                dst = rng.choice(siblings)
                try:
                    moved = path.read_bytes()
                    os.replace(path, dst)
                except FileNotFoundError:
                    continue
                record(path, "rename-away", None, t0)
                record(dst, "rename-onto", sha(moved), t0)
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)


if __name__ == "__main__":
    main()
