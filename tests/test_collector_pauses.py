"""Bulk reads run with the cyclic collector paused and leave it as they found it, in every thread."""

from __future__ import annotations

import gc
import threading

import pytest

from rcs_tui.files.collector import paused
from rcs_tui.state.reader import read_snapshot
from tests.statefix import canonical, mode


@pytest.fixture(autouse=True)
def _collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_a_full_read_collects_nothing_meanwhile_and_restores_the_collector(tmp_path):
    for i in range(30):
        mode(tmp_path, "forge", phase="execute", session=f"s-{i:03d}")
    canonical(tmp_path, ["forge"])
    seen: list[str] = []

    def collected(phase: str, info: dict) -> None:
        seen.append(phase)

    gc.callbacks.append(collected)
    try:
        gc.enable()
        snap = read_snapshot(tmp_path)
    finally:
        gc.callbacks.remove(collected)
    assert len(snap.sessions) == 30
    assert seen == []
    assert gc.isenabled()


def test_a_read_leaves_a_disabled_collector_disabled(tmp_path):
    mode(tmp_path, "forge", phase="execute")
    gc.disable()
    read_snapshot(tmp_path)
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_when_the_last_one_does():
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=other)
    with paused():
        t.start()
        inside.wait(5)
    assert not gc.isenabled()  # the other thread's pause is still open
    release.set()
    t.join(5)
    assert gc.isenabled()


def test_a_pause_ended_by_an_error_still_restores_the_collector():
    gc.enable()
    with pytest.raises(RuntimeError), paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
