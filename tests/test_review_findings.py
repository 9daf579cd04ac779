"""Defects found by reviewing the quick CLI path, the inotify batches, the rp1 status reads and the fleet
hub's session ending: each test is the user-visible behaviour that was wrong."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
from pathlib import Path

import pytest

from rcs_tui.cli import cli, main
from rcs_tui.cli.common import run
from rcs_tui.cli.quick import parse
from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project.loader import WorldLoader
from rcs_tui.project.watch import TreeWatch, inotify_batches, poll_batches, watch_targets
from rcs_tui.rp1.source import Rp1Source
from tests.test_cli_quick import _capture, workspace  # noqa: F401 - the fixture

# -- quick CLI path -----------------------------------------------------------------------------


def test_hud_once_applies_the_rp1_database_a_config_file_names(workspace, capsys, tmp_path, monkeypatch):  # noqa: F811
    """A config file naming the rp1 database: the line shows that database's runs, as the click path does."""
    config = tmp_path / "config.toml"
    config.write_text(f'rp1_db = "{workspace.rp1_db}"\n')
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    monkeypatch.delenv("RP1_DB")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.rp1/rp1.db to fall back on
    argv = ["hud", "--once", "--json", "--root", str(workspace.project)]
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow and slow[2] == 0
    assert json.loads(quick[0]) == json.loads(slow[0])


@pytest.mark.parametrize(("text", "flags", "words"), [
    ("= = =\n", ["--preset", "full"], "invalid TOML"),
    ("bogus_key = 1\n", [], "bogus_key"),
    ('theme = 5\n', ["--preset=minimal"], "theme"),
])
def test_hud_once_reports_a_bad_config_file_as_click_does(workspace, capsys, tmp_path, monkeypatch,  # noqa: F811
                                                          text, flags, words):
    """A bad config file is an error naming it, exit 1, whether or not `--preset` is given."""
    config = tmp_path / "config.toml"
    config.write_text(text)
    monkeypatch.setenv("RCS_TUI_CONFIG", str(config))
    argv = ["hud", "--once", "--root", str(workspace.project), *flags]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow
    out, err, rv = quick
    assert rv == 1 and out == "" and str(config) in json.loads(err)["error"] and words in err


@pytest.mark.parametrize("exc", [KeyboardInterrupt, lambda: BrokenPipeError(errno.EPIPE, "Broken pipe")])
@pytest.mark.parametrize("words", [["rp1", "runs"], ["hud", "--once"]])
def test_ctrl_c_and_a_closed_pipe_end_both_paths_alike(workspace, capsys, monkeypatch, exc, words):  # noqa: F811
    def interrupted(*_args: object, **_kw: object) -> None:
        raise exc()

    monkeypatch.setattr(Rp1Source, "feed", interrupted)
    monkeypatch.setattr("rcs_tui.project.answer.answer", interrupted)
    argv = [*words, "--root", str(workspace.project)]
    assert parse(argv) is not None
    quick = _capture(capsys, lambda: main(argv))
    slow = _capture(capsys, lambda: run(cli, argv))
    assert quick == slow


# -- inotify batches ------------------------------------------------------------------------------

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


async def _first_batch_with(batches, path: Path, timeout: float = 3.0) -> set[Path]:
    """Everything yielded until `path` shows up (or the timeout passes)."""
    seen: set[Path] = set()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while path not in seen and loop.time() < end:
        try:
            seen |= await asyncio.wait_for(anext(batches), end - loop.time())
        except TimeoutError:
            break
    return seen


@linux_only
async def test_writes_in_a_renamed_session_directory_are_seen_under_its_new_name(tmp_path):
    """`mv sessions/s1 sessions/s2`: later writes in s2 are reported as s2's files, not as the gone s1's
    (which would load a session that no longer exists and never show s2's change)."""
    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    atomic_write(sessions / "s1" / "ralph-state.json", dump_json({"active": True}))
    batches = inotify_batches(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)  # the watches are in place
    os.rename(sessions / "s1", sessions / "s2")
    assert sessions / "s2" / "ralph-state.json" in await asyncio.wait_for(first, 5)
    atomic_write(sessions / "s2" / "team-state.json", dump_json({"active": True}))
    seen = await _first_batch_with(batches, sessions / "s2" / "team-state.json")
    await batches.aclose()
    assert sessions / "s2" / "team-state.json" in seen
    assert not any(sessions / "s1" in p.parents for p in seen)


@linux_only
async def test_a_session_created_while_the_kernel_queue_overflowed_is_watched_afterwards(tmp_path, monkeypatch):
    """An overflowed queue loses the new directory's own event: its files are rescanned, and its later
    writes must still reach the screen."""
    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    real = TreeWatch.paths_of

    def lost_in_overflow(self, event, targets):
        if int(event.mask) & 0x40000000 and int(event.mask) & 0x100:  # a new directory's event: dropped
            return set(), True
        return real(self, event, targets)

    monkeypatch.setattr(TreeWatch, "paths_of", lost_in_overflow)
    batches = inotify_batches(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)
    (sessions / "s2").mkdir()
    (sessions / "s2" / "ralph-state.json").write_text('{"active": true}')
    seen = await asyncio.wait_for(first, 5)
    if sessions / "s2" / "ralph-state.json" not in seen:
        seen |= await _first_batch_with(batches, sessions / "s2" / "ralph-state.json")
    assert sessions / "s2" / "ralph-state.json" in seen  # the rescan after the overflow
    await asyncio.sleep(0.1)
    atomic_write(sessions / "s2" / "team-state.json", dump_json({"active": True}))
    seen = await _first_batch_with(batches, sessions / "s2" / "team-state.json")
    await batches.aclose()
    assert sessions / "s2" / "team-state.json" in seen


def test_hud_once_takes_the_root_given_before_the_subcommand(workspace, capsys, tmp_path, monkeypatch):  # noqa: F811
    """`rcs-tui --root X hud --once` shows X, as `rcs-tui hud --once --root X` does (not "no .rcs/ here")."""
    monkeypatch.chdir(tmp_path)
    before = _capture(capsys, lambda: main(["--root", str(workspace.project), "hud", "--once", "--json"]))
    after = _capture(capsys, lambda: main(["hud", "--once", "--json", "--root", str(workspace.project)]))
    assert before == after and after[2] == 0


@linux_only
async def test_running_out_of_watches_for_a_new_session_is_not_silent(tmp_path, monkeypatch):
    """No inotify watch left for a new session's directory: its writes must still be seen (or the watcher
    must stop, so that it falls back to polling); never silently unwatched."""
    from asyncinotify import Inotify

    sessions = tmp_path / ".rcs" / "state" / "sessions"
    (sessions / "s1").mkdir(parents=True)
    batches = inotify_batches(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    first = asyncio.ensure_future(anext(batches))
    await asyncio.sleep(0.3)  # the initial watches are in place

    def exhausted(self, path, mask):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Inotify, "add_watch", exhausted)
    (sessions / "s2").mkdir()
    await asyncio.sleep(0.1)
    atomic_write(sessions / "s2" / "ralph-state.json", dump_json({"active": True}))
    seen: frozenset[Path] | OSError | None = None
    try:
        seen = await asyncio.wait_for(first, 2)
    except TimeoutError:  # nothing at all: the new session is silently unwatched (caught first: an OSError)
        pass
    except OSError as exc:  # the watcher stopped: start_watcher then falls back to polling
        seen = exc
    finally:
        await batches.aclose()
    assert isinstance(seen, OSError) or (seen is not None and sessions / "s2" / "ralph-state.json" in seen)


async def test_polling_after_native_watching_failed_first_delivers_every_file(tmp_path):
    """Changes native watching lost when it failed (an undelivered batch, a session it could not watch)
    are shown once polling takes over, not only the ones made after its first scan."""
    session = tmp_path / ".rcs" / "state" / "sessions" / "s2"
    session.mkdir(parents=True)
    atomic_write(session / "ralph-state.json", dump_json({"active": True}))  # written while unwatched
    batches = poll_batches(watch_targets(WorldLoader(tmp_path, rp1_db=False)), 0.05, resync=True)
    first = await asyncio.wait_for(anext(batches), 5)
    await batches.aclose()
    assert session / "ralph-state.json" in first


async def test_a_change_native_watching_lost_when_it_failed_reaches_the_hud(tmp_path, monkeypatch):
    """Native watching fails holding a change it never delivered: the polling that takes over shows it."""
    from rcs_tui.ui import watcher
    from tests.test_watcher import app_for, forge_file, project, wait_for

    root = project(tmp_path)

    async def failing(targets, **_kw):
        atomic_write(forge_file(root), dump_json({"active": True, "iteration": 9, "max_iterations": 10}))
        raise OSError("the inotify descriptor failed")  # with that change read but not yet delivered
        yield frozenset()  # pragma: no cover - an async generator

    monkeypatch.setattr(watcher, "native_batches", failing)
    app = app_for(root)
    async with app.run_test(size=(100, 1)) as pilot:
        await wait_for(pilot, app, "forge:9/10")


@pytest.mark.parametrize("argv", [["rp1", "runs", "--json", "--root", "{P}"], ["--root", "{P}", "rp1", "runs"],
                                  ["hud", "--once", "--root", "{P}"], ["--root", "{P}", "hud", "--once", "--json"]])
def test_a_closed_stdout_is_not_an_internal_error(workspace, argv):  # noqa: F811
    """`rcs-tui … >&-` (a cron line, a daemon): nothing to print to, so nothing printed and exit 0, as
    click's own echo does, never `internal error: AttributeError`."""
    import subprocess

    argv = [a.replace("{P}", str(workspace.project)) for a in argv]
    code = "import sys\nfrom rcs_tui.cli import main\nmain(sys.argv[1:])"
    closed = 'exe=$0 code=$1; shift; "$exe" -c "$code" "$@" >&-'
    proc = subprocess.run(["sh", "-c", closed, sys.executable, code, *argv], capture_output=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, b"")


@linux_only
async def test_a_session_directory_moved_out_of_the_tree_is_no_longer_watched(tmp_path):
    """`mv sessions/s1 /elsewhere`: its later writes are not reported under the path it left (each would
    load a session that is gone), and its watches are given back to the kernel."""
    from rcs_tui.project import watch as watcher

    sessions = tmp_path / "p" / ".rcs" / "state" / "sessions"
    (sessions / "s1" / "deep").mkdir(parents=True)
    (sessions / "s0").mkdir()
    atomic_write(sessions / "s1" / "ralph-state.json", dump_json({"active": True}))
    made: list[watcher.TreeWatch] = []
    real = watcher.TreeWatch.__init__

    def spy(self) -> None:
        real(self)
        made.append(self)

    watcher.TreeWatch.__init__ = spy  # type: ignore[method-assign]
    try:
        batches = inotify_batches(watch_targets(WorldLoader(tmp_path / "p", rp1_db=False)))
        first = asyncio.ensure_future(anext(batches))
        await asyncio.sleep(0.3)  # the watches are in place
    finally:
        watcher.TreeWatch.__init__ = real  # type: ignore[method-assign]
    watched = {w.path for w in made[0].inotify.watches}
    assert {sessions / "s1", sessions / "s1" / "deep"} <= watched
    away = tmp_path / "away"
    os.rename(sessions / "s1", away)
    atomic_write(sessions / "s0" / "team-state.json", dump_json({"active": True}))
    seen = set(await asyncio.wait_for(first, 5))
    if sessions / "s0" / "team-state.json" not in seen:
        seen |= await _first_batch_with(batches, sessions / "s0" / "team-state.json")
    atomic_write(away / "team-state.json", dump_json({"active": True}))
    atomic_write(away / "deep" / "x-state.json", dump_json({"active": True}))
    atomic_write(sessions / "s0" / "ralph-state.json", dump_json({"active": True}))
    seen |= await _first_batch_with(batches, sessions / "s0" / "ralph-state.json")
    left = {w.path for w in made[0].inotify.watches}
    await batches.aclose()
    assert not any(sessions / "s1" in p.parents for p in seen)
    assert sessions / "s1" not in left and sessions / "s1" / "deep" not in left
