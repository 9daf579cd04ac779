"""Work handed to a forked copy of the process comes back as its answer, or as no answer at all (never a wrong
one, never a copy left running) when the copy fails, takes too long, answers too much or cannot be made."""

from __future__ import annotations

import os
import threading
import time

import pytest

from rcs_tui.project import forked
from rcs_tui.project.forked import Forked


@pytest.fixture(autouse=True)
def one_thread(request, monkeypatch):
    """The copies these tests make are made whatever threads earlier tests in this process left running;
    the rule itself is checked by the one test that starts a thread."""
    if "another_thread" not in request.node.name:
        monkeypatch.setattr(forked, "other_threads", lambda: False)


def gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_copys_answer_comes_back():
    seen_here = {"read": [1, 2, 3]}
    with Forked(lambda: {**seen_here, "pid": os.getpid()}) as copy:
        pid = copy.pid
        answer = copy.answer(30)
    assert answer == {"read": [1, 2, 3], "pid": pid}
    assert pid != os.getpid() and gone(pid)


def test_a_copy_that_fails_gives_no_answer():
    def fails():
        raise ValueError("unreadable")

    with Forked(fails) as copy:
        pid = copy.pid
        assert copy.answer(30) is None
    assert gone(pid)


def test_a_copy_too_slow_is_ended_and_gives_no_answer():
    with Forked(lambda: time.sleep(60)) as copy:
        pid = copy.pid
        started = time.monotonic()
        assert copy.answer(0.3) is None
    assert time.monotonic() - started < 10
    assert gone(pid)


def test_an_answer_past_the_cap_is_dropped(monkeypatch):
    monkeypatch.setattr(forked, "MAX_ANSWER", 1000)
    with Forked(lambda: "x" * 5000) as copy:
        assert copy.answer(30) is None
    with Forked(lambda: "x" * 500) as copy:
        assert copy.answer(30) == "x" * 500


def test_no_copy_while_another_thread_runs():
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with Forked(lambda: 1) as copy:
            assert copy.pid is None
            assert copy.answer(30) is None
    finally:
        stop.set()
        other.join()


def test_leaving_early_ends_the_copy():
    with Forked(lambda: time.sleep(60)) as copy:
        pid = copy.pid
    assert gone(pid)


@pytest.mark.parametrize("written", ["", "partial"])
def test_nothing_the_copy_had_buffered_is_printed_twice(tmp_path, written):
    import subprocess
    import sys

    code = ("import sys\nfrom rcs_tui.project.forked import Forked\n"
            f"sys.stdout.write({written!r} + 'before')\n"
            "with Forked(lambda: 7) as c:\n    a = c.answer(30)\nprint('', a)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout == f"{written}before 7\n"
