"""`doctor --json` over many sessions is made on two cores: the report must read byte for byte as one process
makes it, on random trees holding every kind of finding in both parts, and when the second process gives no
answer."""

from __future__ import annotations

import io
import json
import random

import pytest
from hostile_trees import doctor_shapes, hostile_tree
from statefix import dead_pid, pointer

from rcs_tui.project import doctor_split, forked
from rcs_tui.project.doctor_split import report
from rcs_tui.views.json_stream import write as write_json
from rcs_tui.views.json_text import escape_controls


def text(shown) -> str:
    out = io.StringIO()
    write_json({"findings": [s.item for s in shown], "fix": None}, out, escape_controls)
    return out.getvalue()


@pytest.fixture
def two_cores(monkeypatch):
    """Two cores, whatever the machine has (and whatever threads earlier tests in this process left running),
    and the copies started (their pids)."""
    monkeypatch.setattr(doctor_split, "cores", lambda: 2)
    monkeypatch.setattr(forked, "other_threads", lambda: False)
    started: list[int | None] = []
    real = doctor_split.Forked

    def counted(work):
        copy = real(work)
        started.append(copy.pid)
        return copy

    monkeypatch.setattr(doctor_split, "Forked", counted)
    return started


@pytest.mark.parametrize("seed", range(8))
def test_a_report_made_on_two_cores_reads_as_one_process_makes_it(tmp_path, seed, two_cores):
    rng = random.Random(seed)
    root = tmp_path / "proj"
    hostile_tree(root, rng, 30)
    doctor_shapes(root, rng, 30)
    current = rng.choice(["s-002", "s-027", None])
    if rng.random() < 0.5:
        pointer(root, current or "s-010", pid=dead_pid())
    alone = text(report(root, current, split_from=10**9))
    assert not two_cores
    split = text(report(root, current, split_from=2))
    assert two_cores and two_cores[0] is not None  # a second process did its part
    assert split == alone
    kinds = {f["kind"] for f in json.loads(alone)["findings"]}
    assert {"stale-member", "orphan", "root-survivor", "dead-owner", "file-error", "softener"} <= kinds


@pytest.mark.parametrize("said", [None, "garbage", (1, 2, 3, 4), ([("id", (1, "k"), "warn", "text")], [], [], [])])
def test_without_an_answer_from_the_second_process_its_part_is_done_here(tmp_path, monkeypatch, said):
    rng = random.Random(3)
    root = tmp_path / "proj"
    doctor_shapes(root, rng, 40)
    alone = text(report(root, split_from=10**9))

    class Silent:
        """A second process that gives no answer (gone or too slow) or one that is not a part."""

        def __init__(self, work):
            self.pid = None

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def answer(self, timeout):
            return said

    monkeypatch.setattr(doctor_split, "cores", lambda: 2)
    monkeypatch.setattr(doctor_split, "Forked", Silent)
    assert text(report(root, split_from=2)) == alone


def test_the_command_prints_the_report_and_its_exit_status(tmp_path, monkeypatch, capsys, two_cores):
    from rcs_tui.cli import main

    doctor_shapes(tmp_path, random.Random(5), 12)
    printed = []
    for split_from in (4, 10**9):
        monkeypatch.setattr(doctor_split, "SPLIT_FROM", split_from)
        with pytest.raises(SystemExit) as ended:
            main(["doctor", "--json", "--root", str(tmp_path)])
        assert ended.value.code == 3  # findings remain
        printed.append(capsys.readouterr().out)
    assert len(two_cores) == 1 and two_cores[0] is not None
    assert printed[0] == printed[1]
    assert json.loads(printed[0])["fix"] is None


def test_a_second_process_that_hangs_is_ended_and_its_part_done_here(tmp_path, monkeypatch, two_cores):
    import os
    import time

    doctor_shapes(tmp_path, random.Random(9), 20)
    alone = text(report(tmp_path, split_from=10**9))
    monkeypatch.setattr(doctor_split, "ANSWER_FLOOR", 0.5)
    monkeypatch.setattr(doctor_split, "ANSWER_SLOWER", 1.0)
    monkeypatch.setattr(doctor_split, "_sent", lambda *args: time.sleep(120))
    started = time.monotonic()
    assert text(report(tmp_path, split_from=2)) == alone
    assert time.monotonic() - started < 60
    [pid] = two_cores
    with pytest.raises(ChildProcessError):  # ended and reaped: nothing left running
        os.waitpid(pid, os.WNOHANG)
