"""`rcs-tui demo`: build a realistic workspace, keep it moving, and open a viewer on it.

The viewer is chosen from `VIEWERS` (`DEFAULT_VIEWER` when no flag says otherwise), so switching the
default viewer is one line (`DEFAULT_VIEWER`); the console is the default, `--hud` opens the HUD.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import click

from rcs_tui.cli.common import CliError, Finite
from rcs_tui.core import error_kinds as kinds


def run_hud(ws) -> None:
    from rcs_tui.ui.hud_app import HudApp

    HudApp(ws.project, rp1_db=ws.rp1_db, record=True).run(mouse=False)


def run_console(ws) -> None:
    from rcs_tui.ui.console.app import ConsoleApp

    ConsoleApp(ws.project, rp1_db=ws.rp1_db, banner=DEMO_BANNER, record=True).run()


def prepare_dir(base: Path) -> None:
    """Make `--dir` ready for a fresh workspace: an empty or missing directory is used as it is, one holding
    an earlier demo (it carries the demo's marker file) has that demo removed, anything else is refused, so
    the demo never deletes or mixes with files it did not make."""
    from rcs_tui.demo import MARKER

    try:
        entries = list(base.iterdir()) if base.exists() else []
    except OSError as exc:
        raise CliError(f"--dir {base}: cannot list it: {exc.strerror or exc}", kinds.IO_ERROR) from None
    if not entries:
        return
    if not (base / MARKER).is_file() or (base / MARKER).is_symlink():
        raise CliError(f"--dir {base}: not empty and not a demo workspace made by rcs-tui; choose an empty directory",
                       kinds.REFUSED)
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


DEMO_BANNER = "DEMO: a simulator changes this workspace every few seconds, as a live runtime would"


VIEWERS: dict[str, Callable[..., None]] = {"hud": run_hud, "console": run_console}
DEFAULT_VIEWER = "console"


@click.command("demo")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Build the workspace here (kept afterwards) instead of a temporary directory.")
@click.option("--hud", "use_hud", is_flag=True, help="Open the HUD (instead of the default viewer).")
@click.option("--interval", type=Finite(0.05, 3600), default=2.0, show_default=True,
              help="Seconds between simulator ticks.")
@click.option("--no-sim", is_flag=True, help="Build the workspace but do not simulate activity.")
@click.option("--build-only", is_flag=True, help="Build the workspace, print where it is, and exit.")
def demo(directory, use_hud, interval, no_sim, build_only) -> None:
    """A live demo workspace: sessions, team, tasks and rp1 runs advancing every ~2 s."""
    from rcs_tui.demo import Simulator, build_workspace

    if interval <= 0:
        raise CliError("--interval must be positive", kinds.BAD_INPUT)
    temp = directory is None
    base = Path(tempfile.mkdtemp(prefix="rcs-demo-")) if temp else Path(directory)
    if not temp:
        prepare_dir(base)
    try:
        # Built to outlive this command, the live session belongs to the shell that ran it: a pointer to
        # our own pid would be stale-dead the moment we exit.
        try:
            ws = build_workspace(base, pid=os.getppid() if build_only else None)
        except (OSError, sqlite3.Error) as exc:
            raise CliError(f"--dir {base}: cannot build the demo workspace there: {exc}", kinds.IO_ERROR) from None
        if build_only:
            click.echo(f"project: {ws.project}\ncopy: {ws.copy}\nrp1 db: {ws.rp1_db}")
            click.echo("try (the demo's view, without its simulator):")
            for command in ("console", "hud", "rp1 runs"):
                click.echo(f"  RP1_DB={shlex.quote(str(ws.rp1_db))} rcs-tui {command} --root "
                           f"{shlex.quote(str(ws.project))}")
            return
        viewer = VIEWERS["hud" if use_hud else DEFAULT_VIEWER]
        sim = Simulator(ws, interval=interval)
        if not no_sim:
            sim.start()
        try:
            viewer(ws)
        finally:
            sim.stop()
    finally:
        if temp and not build_only:
            shutil.rmtree(base, ignore_errors=True)
