"""Build task directories (`.rcs/tasks/<id>/`) for lifecycle tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Artifacts that satisfy the forward guard out of each phase.
FORWARD: dict[str, dict[str, Any]] = {
    "planning": {"planning/planning.ai.json": {"questions": []}, "plan.files.json": ["src/a.py"]},
    "plan_review": {"review/plan-review.json": {"ok": True, "blocked": False}},
    "codegen": {"code/diff.patch": "--- a\n+++ b\n", "code/files/src/a.py": "x = 1\n",
                "plan.files.json": ["src/a.py"]},
    "review": {"review/code-review.json": {"ok": True, "issues": []}},
    "test": {"test/results.json": {"passed": 12, "failed": 0}},
    "accept": {"accept/decision.json": {"decision": "accepted"}},
}


def make_task(root: Path, task_id: str = "t1", phase: Any = "planning", files: dict[str, Any] | None = None,
              state: dict[str, Any] | None = None) -> Path:
    """Write a task dir: state.json (phase, actors, an extra field) plus `files` (dict → JSON, str → text)."""
    tdir = root / ".rcs" / "tasks" / task_id
    tdir.mkdir(parents=True, exist_ok=True)
    data = state if state is not None else {
        "phase": phase, "actors": {"planning": {"round": 3, "status": "workshop"}}, "ticket": "RCS-42"}
    (tdir / "state.json").write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    for rel, content in (files or {}).items():
        path = tdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
    return tdir


def transcript(tdir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tdir / "transcript.jsonl").read_text().splitlines()]
