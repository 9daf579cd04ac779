"""What a face says is what is on disk now: a bad file never freezes the rest of the picture, its problem is
never hidden by a lesser message, and a root that is not a project is an error, never an empty all-clear."""

from __future__ import annotations

import json
import time

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from tests.console_fixtures import OTHER, SESSION, app, build
from tests.statefix import state_dir

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def _until(pilot, check, what: str, timeout: float = 10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        await pilot.pause(0.05)
        got = check()
        if got:
            return got
    raise AssertionError(f"never happened: {what}")


def _cells(console, key: str) -> list[str]:
    table = console.screen.query_one("#scopes-table")
    return table.row_text(key)


async def test_a_torn_mode_file_leaves_every_other_file_live_in_the_console(tmp_path):
    """One member's file is torn (a non-atomic write, or an edit that left a bad line); a moment later
    another session's member is set inactive. The running console shows both: the torn member as
    unreadable (not its older bytes) and the other change, as a fresh console does."""
    build(tmp_path)
    root = tmp_path / "project"
    console = app(tmp_path, live=True, clock=time.time)
    async with console.run_test(size=(160, 40)) as pilot:
        await pilot.pause(0.5)
        forge = state_dir(root, SESSION) / "forge-state.json"
        forge.write_text('{"active": true, "iteration": ')
        await _until(pilot, lambda: console.world.badges, "the torn file is reported")
        ultrawork = state_dir(root, OTHER) / "ultrawork-state.json"
        atomic_write(ultrawork, dump_json({"active": False, "current_phase": "cleared"}))

        def other_changed():
            f = console.world.snapshot.sessions[OTHER].modes.get("ultrawork")
            return f is not None and not f.active

        await _until(pilot, other_changed, "the other session's change reaches the console")
        f = console.world.snapshot.sessions[SESSION].modes["forge"]
        assert f.error is not None and f.data is None  # the torn file, not the bytes it had before
        from rcs_tui.project.loader import WorldLoader

        fresh = WorldLoader(root, rp1_db=False).load()
        assert console.world.snapshot.sessions == fresh.snapshot.sessions
        assert console.world.snapshot.members == fresh.snapshot.members
        row = next(k for k in console.screen.query_one("#scopes-table").keys if k.endswith(":forge"))
        await _until(pilot, lambda: "unreadable" in _cells(console, row), "the torn member is drawn unreadable")


def test_an_unreadable_file_outranks_a_refusal_in_the_status_line():
    """The bar keeps "⚠ 1 unreadable" whatever message came after it, at every width it fits in."""
    from pathlib import Path

    from rcs_tui.state.reader import read_snapshot
    from rcs_tui.ui.console.statusbar import status_text
    from rcs_tui.views.world import Badge, World

    root = Path("/nonexistent-project")
    world = World(root, read_snapshot(root, None, environ={}),
                  badges=(Badge("state", root / ".rcs/state/forge-state.json", "invalid JSON"),))
    refusal = "Clear forge refused: .rcs/state/sessions/abc/forge-state.json changed underneath; nothing was changed"
    for width in (200, 120, 80, 60, 40):
        text = status_text(world, 0.0, paused=False, readonly=False, last_error=refusal, width=width).plain
        assert "⚠ 1" in text, (width, text)
    wide = status_text(world, 0.0, paused=False, readonly=False, last_error=refusal, width=200).plain
    assert "unreadable" in wide and "refused" in wide


async def test_a_refusal_message_clears_at_the_next_key(tmp_path, monkeypatch):
    """...not at a key pressed within KEEP_MESSAGE_SECONDS of it (the one that closed its dialog): on the
    console's moment clock, driven here, so the bound holds exactly whatever the machine's load."""
    import rcs_tui.ui.console.app as app_mod

    monkeypatch.setattr(app_mod, "MESSAGE_SECONDS", 600.0)  # only a key clears it in this test
    now = [100.0]
    console = app(tmp_path, monotonic=lambda: now[0])
    async with console.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        console._say_passing("Clear forge refused: changed underneath")
        console.refresh_views()
        now[0] += app_mod.KEEP_MESSAGE_SECONDS  # at the bound: still the key that closed the dialog
        await pilot.press("j")
        await pilot.pause()
        assert console.last_error == "Clear forge refused: changed underneath"
        now[0] += 0.01
        await pilot.press("j")
        await pilot.pause()
        assert console.last_error is None


async def test_a_refusal_message_clears_by_itself(tmp_path, monkeypatch):
    import rcs_tui.ui.console.app as app_mod

    monkeypatch.setattr(app_mod, "MESSAGE_SECONDS", 0.2)
    console = app(tmp_path)
    async with console.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        console._say_passing("Undo refused: changed underneath")
        await _until(pilot, lambda: console.last_error is None, "the message expires")


COMMANDS = [["doctor"], ["doctor", "--json"], ["hud", "--once"], ["hud", "--once", "--json"],
            ["state", "list-active"], ["snapshot", "--json"], ["overlay"], ["task", "list"], ["journal"],
            ["rp1", "runs"], ["locate"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_root_without_rcs_is_an_error_not_an_all_clear(run_cli, tmp_path, argv):
    """`--root` naming a directory that holds no .rcs/ would answer "no problems", "no active modes", `[]`:
    a false all-clear. Every command refuses it, naming the directory and how discovery works."""
    empty = tmp_path / "not-a-project"
    empty.mkdir()
    res = run_cli(*argv, "--root", str(empty))
    assert res.code == 1, (res.stdout, res.stderr)
    assert res.stdout == ""
    error = json.loads(res.stderr.strip().splitlines()[-1])["error"]
    assert str(empty) in error and "no .rcs/ directory" in error and "nearest ancestor" in error


def test_rcs_root_without_rcs_is_an_error_too(run_cli, tmp_path):
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    res = run_cli("state", "list-active", env={"RCS_ROOT": str(empty)})
    assert res.code == 1 and f"RCS_ROOT={empty}: no .rcs/ directory" in res.error


def test_an_empty_but_real_project_is_still_a_project(run_cli, tmp_path):
    (tmp_path / "p" / ".rcs").mkdir(parents=True)
    res = run_cli("doctor", "--json", "--root", str(tmp_path / "p"))
    assert res.code == 0, res.stderr
    res = run_cli("state", "list-active", "--root", str(tmp_path / "p"))
    assert (res.code, json.loads(res.stdout)) == (0, {"active_modes": []})


def test_the_console_refuses_a_root_without_rcs(run_cli, tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    res = run_cli("console", "--root", str(empty))
    assert res.code == 1 and "no .rcs/ directory" in res.error
