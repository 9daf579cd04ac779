"""The run timeline's `c`: what rp1 would answer to an emit into the open run, written nowhere."""

from __future__ import annotations

import hashlib

from rcs_tui.ui.console.emitcheck import EmitCheckModal, parse_request
from tests.console_fixtures import app, select_row, settle

SIZE = (110, 34)


def text_of(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


def test_parse_request():
    assert parse_request("build") == ("build", "running", None)
    assert parse_request("  build completed unit=T1 ") == ("build", "completed", "T1")
    assert parse_request("") == ("", "running", None)


def test_a_word_that_is_no_status_is_refused_as_the_command_line_refuses_it():
    """`verify flarp` once ran as `verify running`; the CLI rejects it, and so does the console now."""
    import pytest

    with pytest.raises(ValueError, match="an unknown status 'flarp'; an emit's status is one of: running, waiting"):
        parse_request("verify flarp")
    with pytest.raises(ValueError, match="a second status 'failed'"):
        parse_request("verify completed failed")


async def test_check_key_on_the_run_timeline(tmp_path):
    a = app(tmp_path)
    db = tmp_path / "rp1.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    async with a.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        select_row(a, "runs-table", "run-0003-build")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(a.screen, EmitCheckModal)
        field = a.screen.query_one("#emitcheck-input")
        assert field.value == "build"  # prefilled with the step after the current one
        body = text_of(a.screen)
        assert "emit build build (running) into run run-0003-build: ACCEPTED" in body
        assert "would auto-complete: tasks" in body and "esc close" in body
        field.value = "verify"
        await settle(pilot)
        body = text_of(a.screen)
        assert "REJECTED" in body
        assert "Error: Invalid transition from 'tasks' to 'verify'. Valid next states: build" in body
        field.value = "biulding"
        await settle(pilot)
        assert ('Current state: "tasks". Valid transitions from "tasks": [build].' in text_of(a.screen))
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(a.screen, EmitCheckModal)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
