"""A workspace whose run and task have something to draw as bars: work, a question answered after three
quiet hours, units (one failing, then retried) and a phase history across a night."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from tests.console_fixtures import build
from tests.fixtures_tasks import FORWARD, make_task

RUN = "run-0004-night"
TASK = "night-task"
DAY = "2026-11-25T"


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text + "+00:00")


def add_night_run(db: Path, root: Path) -> None:
    """A build run: requirements, design (a question at 18:10 answered at 21:12), tasks with units T1
    (done) and T2 (failed, retried, done), build still running at the console's clock (21:45)."""
    from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer

    clock = FakeClock(_at(DAY + "17:50:00"), timedelta(0))
    with Rp1Writer(db, clock=clock) as w:
        def at(hhmm: str) -> None:
            clock.now = _at(DAY + hhmm + ":00")

        run = w.start_run("build", project_path=root, run_id=RUN, name="night build")
        w.step(run, "requirements")
        at("18:02")
        w.step(run, "design")
        at("18:10")
        w.wait_for_user(run, "design", "Use OAuth or passwords?")
        at("21:12")
        w.step(run, "design")
        at("21:15")
        w.step(run, "tasks")
        at("21:16")
        w.step(run, "tasks", unit="T1")
        at("21:17")
        w.step(run, "tasks", unit="T2")
        at("21:25")
        w.step(run, "tasks", "completed", unit="T1")
        at("21:27")
        w.step(run, "tasks", "failed", unit="T2")
        at("21:28")
        w.step(run, "tasks", unit="T2")
        at("21:36")
        w.step(run, "tasks", "completed", unit="T2")
        at("21:38")
        w.step(run, "build")


MOVES = [("2026-11-24T22:10:00Z", None, "planning", "advance"),
         ("2026-11-24T22:40:00Z", "planning", "plan_review", "advance"),
         ("2026-11-24T22:55:00Z", "plan_review", "codegen", "advance"),
         ("2026-11-25T07:30:00Z", "codegen", "review", "advance"),
         ("2026-11-25T07:50:00Z", "review", "codegen", "advance"),
         ("2026-11-25T08:30:00Z", "codegen", "review", "advance"),
         ("2026-11-25T08:45:00Z", "review", "test", "advance")]


def add_night_task(root: Path) -> Path:
    """A task in `test` whose transcript crosses a night (and has sat idle since 08:45)."""
    files = {**FORWARD["planning"], **FORWARD["plan_review"], **FORWARD["codegen"], **FORWARD["review"]}
    tdir = make_task(root, TASK, "test", files)
    lines = [json.dumps({"at": at, "actor": "orchestrator", "from": frm, "to": to, "reason": "ok", "kind": kind})
             for at, frm, to, kind in MOVES]
    (tdir / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    return tdir


def build_night(base: Path) -> Path:
    """`console_fixtures.build(base)` plus the night run and task."""
    root = build(base)
    add_night_run(base / "rp1.db", root)
    add_night_task(root)
    return root
