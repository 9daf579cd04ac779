"""Hold a watcher's start: its file watches wait until the test has written its change."""

from __future__ import annotations

import threading


def hold_watches(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """(placing, release): `placing` is set once a watcher starts placing its watches, which then wait for
    `release` (at most a minute)."""
    from rcs_tui.project.watch import TreeWatch

    placing, release = threading.Event(), threading.Event()
    real = TreeWatch.add_tree

    def slow(self, *args, **kwargs):
        placing.set()
        release.wait(60)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TreeWatch, "add_tree", slow)
    return placing, release
