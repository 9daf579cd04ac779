"""A run's and a task's history as stretches over time: what each step, unit and phase was doing when,
as the bars show it, and `rcs-tui rp1 show` printing the bars (its JSON unchanged)."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from rcs_tui.core.machine import load_task_lifecycle
from rcs_tui.core.spans import Chart, Span, moment
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.spans import run_chart
from rcs_tui.state.task_spans import task_chart
from rcs_tui.state.tasks import load_task
from tests.barsfix import RUN, TASK, add_night_run, add_night_task
from tests.fixtures_tasks import make_task

DAY = "2026-11-25T"


def at(hhmm: str, day: str = DAY) -> float:
    t = moment(f"{day}{hhmm}:00Z")
    assert t is not None
    return t


def spans(chart: Chart, label: str) -> list[tuple[str, str | None, str]]:
    """A lane's spans as (start HH:MM, end HH:MM or None while open, kind)."""
    lane = next(lane for lane in chart.lanes if lane.label == label)

    def hhmm(t: float | None) -> str | None:
        return None if t is None else time.strftime("%H:%M", time.gmtime(t))

    return [(hhmm(s.start) or "", hhmm(s.end), s.kind) for s in lane.spans]


@pytest.fixture
def night_db(tmp_path):
    root = tmp_path / "p"
    (root / ".rcs").mkdir(parents=True)
    create_db(tmp_path / "rp1.db")
    add_night_run(tmp_path / "rp1.db", root)
    return tmp_path / "rp1.db", root


def timeline(db, root, run_id=RUN):
    t = Rp1Source(db, root=root, all_projects=True).timeline(run_id)
    assert t is not None
    return t


class TestRunChart:
    def test_each_step_shows_its_work_its_wait_and_what_it_is_doing_now(self, night_db):
        chart = run_chart(timeline(*night_db))
        assert [(lane.label, lane.depth, lane.current) for lane in chart.lanes] == [
            ("requirements", 0, False), ("design", 0, False), ("tasks", 0, False), ("T1", 1, False),
            ("T2", 1, False), ("build", 0, True), ("verify", 0, False), ("archive", 0, False)]
        assert spans(chart, "requirements") == [("17:50", "18:01", "done")]  # rp1 closes it 1 ms early
        assert spans(chart, "design") == [("18:02", "18:10", "done"), ("18:10", "21:12", "waiting"),
                                          ("21:12", "21:14", "done")]
        assert spans(chart, "T2") == [("21:17", "21:27", "failed"), ("21:28", "21:36", "done")]
        assert spans(chart, "build") == [("21:38", None, "running")]
        assert spans(chart, "verify") == []

    def test_a_run_ended_by_hand_ends_its_open_stretches(self, night_db):
        db, root = night_db
        clock = FakeClock(DAY + "21:50:00.000Z", timedelta(0))
        with Rp1Writer(db, clock=clock) as w:
            w.end_run(RUN, "cancelled")
        chart = run_chart(timeline(db, root))
        assert spans(chart, "build") == [("21:38", "21:50", "done")]
        assert all(s.end is not None for lane in chart.lanes for s in lane.spans)

    def test_rows_stamped_out_of_order_or_unreadably_never_run_backwards(self, tmp_path):
        import sqlite3

        root = tmp_path / "p"
        (root / ".rcs").mkdir(parents=True)
        db = create_db(tmp_path / "rp1.db")
        with Rp1Writer(db, clock=FakeClock(DAY + "10:00:00.000Z", timedelta(minutes=5))) as w:
            run = w.start_run("build", project_path=root, run_id="r")
            w.step(run, "requirements")
            w.step(run, "design")
            w.step(run, "tasks")
        conn = sqlite3.connect(db)
        conn.execute("UPDATE events SET created_at = '1999-01-01T00:00:00Z' WHERE step = 'design'"
                     " AND json_extract(data, '$.status') = 'running'")
        conn.execute("UPDATE events SET created_at = 'soon' WHERE step = 'tasks'"
                     " AND json_extract(data, '$.status') = 'running'")
        conn.commit()
        conn.close()
        chart = run_chart(timeline(db, root, "r"))
        for lane in chart.lanes:
            for s in lane.spans:
                assert s.end is None or s.end >= s.start
        # Each takes the last good time before it: the synthetic completions rp1 stamps 1 ms early.
        assert spans(chart, "design") == [("10:14", "10:19", "done")]
        assert spans(chart, "tasks") == [("10:19", None, "running")]

    def test_the_json_answer_is_unchanged(self, night_db):
        out = timeline(*night_db).to_json()
        assert "changes" not in out
        assert sorted(out) == ["current_step", "last_activity", "last_event_id", "prompts", "run", "run_artifacts",
                               "status", "steps", "tracked", "unattached", "violations", "workflow"]


class TestTaskChart:
    def test_each_phase_shows_the_stretches_the_task_spent_in_it(self, tmp_path):
        root = tmp_path
        add_night_task(root)
        machine = load_task_lifecycle()
        chart = task_chart(load_task(root, TASK, machine), machine)
        assert [(lane.label, lane.current) for lane in chart.lanes] == [
            ("planning", False), ("plan_review", False), ("codegen", False), ("review", False), ("test", True)]
        assert spans(chart, "codegen") == [("22:55", "07:30", "done"), ("07:50", "08:30", "done")]
        assert spans(chart, "test") == [("08:45", None, "running")]

    def test_a_done_task_ends_on_an_instant_and_bad_lines_are_skipped(self, tmp_path):
        tdir = make_task(tmp_path, "t", "done")
        lines = [{"at": "2026-11-25T10:00:00Z", "from": None, "to": "accept"},
                 {"at": "2026-11-25T09:00:00Z", "from": "accept", "to": "done"},  # stamped before the last
                 {"at": "2026-11-25T11:00:00Z", "to": ["not", "a", "phase"]},
                 {"at": "never", "from": "done", "to": "done"}]
        (tdir / "transcript.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
        machine = load_task_lifecycle()
        chart = task_chart(load_task(tmp_path, "t", machine), machine)
        assert spans(chart, "accept") == [("10:00", "10:00", "done")]
        assert chart.lanes[-1].label == "done" and chart.lanes[-1].current
        assert set(chart.lanes[-1].spans) == {Span(at("10:00"), at("10:00"), "done")}


class TestCli:
    def test_rp1_show_prints_the_bars_at_the_terminal_width_then_the_steps(self, night_db, run_cli):
        db, root = night_db
        res = run_cli("rp1", "show", RUN, "--db", str(db), "--root", str(root), env={"COLUMNS": "72", "TZ": "UTC"})
        assert res.code == 0, res.stderr
        lines = res.stdout.splitlines()
        assert max(len(line) for line in lines[:11]) <= 72
        assert lines[0].split()[0] == "17:50" and "≈3h02m┊21:1" in lines[0]
        assert any(line.startswith("▶ build") and line.rstrip().endswith("▓") for line in lines)
        assert any(line.startswith("█ done  ▓ running  ░ waiting  × failed") for line in lines)
        assert any(line.startswith("build run-0004-night  running") for line in lines)  # the rows follow

    def test_rp1_show_json_has_no_drawing(self, night_db, run_cli):
        db, root = night_db
        res = run_cli("rp1", "show", RUN, "--db", str(db), "--root", str(root), "--json")
        assert res.code == 0 and res.json["run"]["id"] == RUN and "changes" not in res.json
