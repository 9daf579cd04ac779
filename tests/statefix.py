"""Builders for real `.rcs` trees in the shapes of formats.md (including its hazards)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

T0 = "2026-11-25T21:41:36.953Z"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def state_dir(root: Path, session: str | None = None) -> Path:
    base = root / ".rcs" / "state"
    return base if session is None else base / "sessions" / session


def mode(root: Path, name: str, session: str | None = None, **fields: Any) -> Path:
    doc = {"active": True, **fields}
    return write(state_dir(root, session) / f"{name}-state.json", doc)


def canonical(root: Path, skills: list[str], session: str | None = None, **extra: Any) -> Path:
    entries = [{"skill": s, "active": True, "activated_at": T0, **({"session_id": session} if session else {})}
               for s in skills]
    doc = {"version": 1, "active": bool(skills), "skill": skills[0] if skills else extra.pop("skill", None),
           "active_skills": entries, **extra}
    if session:
        doc["session_id"] = session
    return write(state_dir(root, session) / "skill-active-state.json", doc)


def pointer(root: Path, session: str, pid: int | None = None, **extra: Any) -> Path:
    doc = {"session_id": session, "started_at": T0, "cwd": str(root), "pid": pid if pid is not None else os.getpid(),
           "platform": "linux", **extra}
    return write(root / ".rcs" / "state" / "session.json", doc)


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def dead_pid() -> int:
    """A pid that is certainly not running."""
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


JOURNAL = ".rcs/logs/rcs-tui-journal.jsonl"


def cli_project(tmp_path: Path, run_cli) -> Path:
    """A project whose forge state was written by `rcs-tui state write` (so the journal holds that action)."""
    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    res = run_cli("state", "write", "--mode", "forge", "--input", '{"active": true}', "--root", str(root))
    assert res.code == 0, res.stderr
    return root


def append_journal(root: Path, line: str) -> None:
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def no_internal_error(res) -> None:
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr
