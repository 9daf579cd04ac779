"""SVG snapshots of the HUD at 1×80, 6×40 and 20×60, with and without colour, every health state,
and the overlay view. Fixed clock, fixed mtimes, fixed theme, no watcher: the pictures are stable."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rcs_tui.demo import build_workspace
from rcs_tui.ui.hud_app import HudApp

FIXED = datetime(2026, 11, 25, 21, 45, tzinfo=UTC)
EPOCH = FIXED.timestamp()
SID = "sess-1"


def freeze(base: Path) -> None:
    for p in base.rglob("*"):
        if p.is_file():
            os.utime(p, (EPOCH, EPOCH))


def demo_app(tmp_path: Path, monkeypatch, colour: bool) -> HudApp:
    if not colour:
        monkeypatch.setenv("NO_COLOR", "1")
    ws = build_workspace(tmp_path, now=FIXED)
    freeze(tmp_path)
    return HudApp(ws.project, rp1_db=ws.rp1_db, watch=False, clock=lambda: EPOCH + 3)


def health_app(tmp_path: Path, monkeypatch, colour: bool) -> HudApp:
    """One member in each health state: live, stale, orphan, root-survivor."""
    if not colour:
        monkeypatch.setenv("NO_COLOR", "1")
    state = tmp_path / ".rcs" / "state"
    sess = state / "sessions" / SID
    files = {
        sess / "forge-state.json": {"active": True, "current_phase": "fixing", "iteration": 9, "max_iterations": 10},
        sess / "blueprint-state.json": {"active": False, "current_phase": "completed"},
        sess / "team-state.json": {"active": True, "current_phase": "team-exec", "team_name": "login-flow"},
        sess / "skill-active-state.json": {"version": 1, "active": True, "active_skills": [
            {"skill": "forge", "active": True, "session_id": SID},
            {"skill": "blueprint", "active": True, "session_id": SID}]},
        state / "ultrawork-state.json": {"active": True},
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    freeze(tmp_path)
    return HudApp(tmp_path, session_id=SID, rp1_db=False, watch=False, clock=lambda: EPOCH + 3)


SIZES = [(80, 1), (40, 6), (60, 20)]


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "no-color"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[1]}x{s[0]}")
def test_demo_workspace_hud(snap_compare, tmp_path, monkeypatch, size, colour):
    assert snap_compare(demo_app(tmp_path, monkeypatch, colour), terminal_size=size)


@pytest.mark.parametrize("colour", [True, False], ids=["colour", "no-color"])
@pytest.mark.parametrize("size", [(80, 1), (60, 20)], ids=lambda s: f"{s[1]}x{s[0]}")
def test_each_health_state(snap_compare, tmp_path, monkeypatch, size, colour):
    assert snap_compare(health_app(tmp_path, monkeypatch, colour), terminal_size=size)


@pytest.mark.parametrize("size", [(100, 24), (60, 30)], ids=["wide", "narrow"])
def test_overlay_view(snap_compare, tmp_path, monkeypatch, size):
    assert snap_compare(demo_app(tmp_path, monkeypatch, True), press=["o"], terminal_size=size)
