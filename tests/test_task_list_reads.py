"""`task list` answers from each task's state and artifacts: the same list a full read of every task gives,
without reading the transcripts it does not show."""

from __future__ import annotations

import os
import random
import shutil

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


def _hostile_tasks(root, rng):
    """Random tasks, each with one odd thing about it: links (inside and outside the tree) at the task, its
    state or an artifact's directory, FIFOs, torn or foreign JSON, wrong types, missing files."""
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "state.json").write_text('{"phase": "codegen"}')
    (outside / "code-review.json").write_text('{"ok": true, "issues": []}')
    for i in range(40):
        phase = rng.choice(["planning", "plan_review", "codegen", "review", "test", "accept", "done", "nowhere"])
        files = {k: v for p in FORWARD.values() for k, v in p.items() if rng.random() < 0.4}
        tdir = make_task(root, f"r{i:02d}", phase, files=files)
        odd = rng.randrange(12)
        if odd == 0:
            (tdir / "state.json").unlink()
            os.symlink(outside / "state.json", tdir / "state.json")
        elif odd == 1:
            (tdir / "state.json").unlink()
            os.mkfifo(tdir / "state.json")
        elif odd == 2:
            (tdir / "review").mkdir(exist_ok=True)
            (tdir / "review" / "code-review.json").unlink(missing_ok=True)
            os.symlink(outside / "code-review.json", tdir / "review" / "code-review.json")
        elif odd == 3:
            shutil.rmtree(tdir / "review", ignore_errors=True)
            os.symlink(outside, tdir / "review")
        elif odd == 4:
            (tdir / "test").mkdir(exist_ok=True)
            (tdir / "test" / "results.json").unlink(missing_ok=True)
            os.mkfifo(tdir / "test" / "results.json")
        elif odd == 5:
            (tdir / "state.json").write_text(rng.choice(['{"phase": "cod', "[1, 2]", "", '{"phase": 3}', "\x00"]))
        elif odd == 6:
            (tdir / "plan.files.json").unlink(missing_ok=True)
            os.symlink(tdir / "state.json", tdir / "plan.files.json")  # a link inside the task
        elif odd == 7:
            (tdir / "accept").mkdir(exist_ok=True)
            (tdir / "accept" / "decision.json").unlink(missing_ok=True)
            (tdir / "accept" / "decision.json").mkdir()
        elif odd == 8:
            os.symlink(tdir, root / ".rcs" / "tasks" / f"link-{i:02d}")
        elif odd == 9:
            (tdir / "planning").mkdir(exist_ok=True)
            (tdir / "planning" / "planning.ai.json").write_text('{"questions": [}')


@pytest.mark.parametrize("seed", range(6))
def test_task_list_matches_full_reads_over_hostile_trees(tmp_path, seed):
    root = tmp_path / "p"
    _hostile_tasks(root, random.Random(seed))
    assert list_tasks(root) == _listed_by_full_reads(root)


def test_task_list_through_a_linked_tasks_directory_reads_each_task_as_a_move_does(tmp_path):
    real = tmp_path / "real"
    _hostile_tasks(real, random.Random(7))
    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    os.symlink(real / ".rcs" / "tasks", root / ".rcs" / "tasks")
    listed = list_tasks(root)
    assert listed == _listed_by_full_reads(root)
    assert listed and all(t["error"] for t in listed)  # a move would refuse every one of them
