"""`task list` answers from each task's state and artifacts: the same list a full read of every task gives,
without reading the transcripts it does not show."""

from __future__ import annotations

import os

import pytest

from rcs_tui.core.task_lifecycle import evaluate
from rcs_tui.state import tasks as tasks_mod
from rcs_tui.state.tasks import list_tasks, load_task
from rcs_tui.state.txn import TxnError
from tests.fixtures_tasks import FORWARD, make_task


def _every_kind_of_task(root):
    for i, phase in enumerate(["planning", "plan_review", "codegen", "review", "test", "accept", "done"]):
        tdir = make_task(root, f"t{i}", phase, files=FORWARD.get(phase, {}) if i % 2 == 0 else {})
        (tdir / "transcript.jsonl").write_text('{"to": "x"}\nnot json\n' * 50)
    make_task(root, "bad-phase", "nowhere")
    make_task(root, "no-phase", state={"actors": {}})
    make_task(root, "bad-actors", state={"phase": "codegen", "actors": []})
    (root / ".rcs" / "tasks" / "no-state").mkdir()
    (root / ".rcs" / "tasks" / "torn").mkdir()
    (root / ".rcs" / "tasks" / "torn" / "state.json").write_text('{"phase": "cod')
    fifo_task = make_task(root, "fifo-transcript", "review", files=FORWARD["review"])
    os.mkfifo(fifo_task / "transcript.jsonl")
    odd = make_task(root, "odd-artifacts", "codegen", files={"planning": "a file where a directory goes",
                                                             "review/code-review.json": "{torn"})
    os.symlink(root / "elsewhere", odd / "code")
    make_task(root, "plan-ok", "planning", files={**FORWARD["planning"], "code/files/x.py": "1\n"})
    (root / ".rcs" / "tasks" / ".hidden").mkdir()
    (root / ".rcs" / "tasks" / "a-file").write_text("x")


def _listed_by_full_reads(root):
    """What `task list` printed when every task was read whole (state, artifacts and transcript)."""
    out = []
    for child in sorted((root / ".rcs" / "tasks").iterdir(), key=lambda p: p.name):
        if not child.is_dir() or child.name.startswith("."):
            continue
        try:
            task = load_task(root, child.name)
        except (TxnError, ValueError) as exc:
            out.append({"id": child.name, "phase": None, "justified": [], "error": str(exc)})
            continue
        out.append({"id": task.id, "phase": task.phase,
                    "justified": [v.to for v in evaluate(task.phase, task.artifacts) if v.ok], "error": None})
    return out


def test_task_list_json_is_the_list_full_reads_give(run_cli, tmp_path):
    _every_kind_of_task(tmp_path)
    want = _listed_by_full_reads(tmp_path)
    assert len(want) == 15 and sum(t["error"] is not None for t in want) == 5
    assert {t["id"]: t["justified"] for t in want}["plan-ok"] == ["plan_review"]
    assert run_cli("task", "list", "--json", "--root", str(tmp_path)).json == {"tasks": want}


def test_task_list_never_reads_a_transcript(tmp_path, monkeypatch):
    _every_kind_of_task(tmp_path)
    want = _listed_by_full_reads(tmp_path)

    def refuse(path):
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(tasks_mod, "read_transcript", refuse)
    assert list_tasks(tmp_path) == want
    with pytest.raises(AssertionError, match="transcript.jsonl"):  # `task show` still reads it
        load_task(tmp_path, "t0")
