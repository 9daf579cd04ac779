"""`rcs-tui hud` (live HUD or one line with `--once`) and `rcs-tui overlay` (the Active Modes block).

The `--once` path imports neither Textual nor Rich: `rcs_tui.cli.print_once` reads the world once and
prints ANSI composed from already-fitted plain spans, honouring `--width`, `COLUMNS` and `NO_COLOR`
(`rcs_tui.cli.main` calls it directly, without click, for a plain `hud --once` argv).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click

from rcs_tui.cli import HUD_ONCE, color_enabled, print_once
from rcs_tui.cli.common import (
    CliError,
    dumps,
    echo_text,
    given_root,
    json_option,
    quick_options,
    readable_snapshot,
    resolve_root,
    root_option,
    settings,
)
from rcs_tui.config.settings import rp1_paths
from rcs_tui.core import error_kinds as kinds
from rcs_tui.views.text import tmux_literal

__all__ = ["color_enabled", "hud", "overlay"]


def split_environment(db: str | None, plugin_roots: list[str] | None, project: Path) -> list[str]:
    """`VAR=value` for what the HUD here would read: the same configuration file, rp1 database and plugin
    roots. A tmux pane starts with the tmux server's environment, not this shell's, so without them the split
    would show another database (or none) than the command that opened it."""
    from rcs_tui.config.paths import config_file
    from rcs_tui.rp1.db import default_db_path
    from rcs_tui.rp1.machines import default_plugin_roots

    roots = plugin_roots if plugin_roots is not None else default_plugin_roots(project)
    return [f"RCS_TUI_CONFIG={os.path.abspath(config_file())}", f"RP1_DB={os.path.abspath(default_db_path(db))}",
            f"RP1_PLUGIN_ROOTS={os.pathsep.join(os.path.abspath(r) for r in roots)}"]


def _tmux_split(argv: list[str], environment: list[str]) -> None:
    if not os.environ.get("TMUX"):
        raise CliError("--tmux opens the HUD in a split of the current tmux window, but this shell is not "
                       "inside tmux (TMUX is not set); start tmux first or run `rcs-tui hud` in a pane")
    if shutil.which("tmux") is None:
        raise CliError("--tmux: the tmux command is not on PATH")
    exe = shutil.which("rcs-tui") or sys.argv[0]
    # the pane's shell runs this line: every word quoted for it (tmux expands no format in a pane's command)
    command = " ".join(shlex.quote(a) for a in ["env", *environment, exe, "hud", *argv])
    # tmux expands formats in the start directory (not in the command): a directory named `#(cmd)` must
    # stay a name
    proc = subprocess.run(["tmux", "split-window", "-h", "-d", "-l", "48", "-c", tmux_literal(os.getcwd()), command],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise CliError(f"tmux split-window failed: {proc.stderr.strip() or proc.returncode}")
    click.echo("HUD opened in a new tmux pane")


@click.command("hud")
@quick_options(HUD_ONCE)  # the options `hud --once` also takes without click
@click.option("--inline", is_flag=True, help="Render under the prompt instead of full screen.")
@click.option("--tmux", "tmux", is_flag=True, help="Open the HUD in a split of the current tmux window.")
@click.option("--poll", is_flag=True, help="Watch by polling instead of native file events.")
@click.option("--tmux-options", "tmux_options", is_flag=True,
              help="Keep tmux options @rcs_line, @rcs_attention, @rcs_waiting current (runs until tmux ends).")
@click.option("--tmux-socket", default=None, metavar="PATH", help="--tmux-options: the tmux server at this socket.")
@click.option("--title", is_flag=True, help="--tmux-options: keep the terminal title current too.")
def hud(root, session, once, as_json, width, lines, ascii_only, preset, inline, tmux, poll, tmux_options,
        tmux_socket, title) -> None:
    """Live HUD of the combined active set, tasks and rp1 runs; `--once` prints one line.

    With `--once` and no `--root`, an agent statusline's JSON on stdin (its `workspace.current_dir`
    or `cwd`) says which project to show.
    """
    if as_json and not once:
        raise CliError("--json goes with --once", kinds.BAD_INPUT)
    conf = settings(hud_preset=preset)
    preset = conf.hud_preset  # flag, else the config file, else hud-config.json
    db, plugin_roots = rp1_paths(conf)
    if once:
        from rcs_tui.cli.once import NEUTRAL_LINE, NoProjectForStatusline, once_root
        from rcs_tui.files.host import RootNotFound

        try:
            found = once_root(given_root(root))  # `rcs-tui --root X hud --once` too
        except NoProjectForStatusline as exc:
            if as_json:
                raise CliError(str(exc), kinds.NO_PROJECT) from exc
            echo_text(NEUTRAL_LINE)
            return
        except RootNotFound as exc:
            raise CliError(str(exc), kinds.NO_PROJECT) from exc
        print_once(found, session, as_json, width, ascii_only, preset, lines, db)
        return
    path = resolve_root(root)
    if tmux_options:
        _ambient(path, session, tmux_socket, width or 80, preset or "focused", ascii_only, title, poll, db)
        return
    if tmux:
        argv = ["--root", str(path)] + (["--session", session] if session else []) + \
               (["--ascii"] if ascii_only else []) + (["--preset", preset] if preset else []) + \
               (["--poll"] if poll else [])
        _tmux_split(argv, split_environment(db, plugin_roots, path))
        return
    from rcs_tui.ui.hud_app import HudApp

    HudApp(path, session_id=session, preset=preset, ascii_only=ascii_only, force_polling=poll,
           rp1_db=Path(db) if db else True, record=True).run(mouse=False, inline=inline)


def _ambient(path, session, socket, width, preset, ascii_only, title, poll, db) -> None:
    """`hud --tmux-options`: the ambient status loop, until tmux goes away (an error) or it is interrupted."""
    import asyncio

    from rcs_tui.fleet.ambient import run_ambient

    if socket is None and not os.environ.get("TMUX"):
        raise CliError("--tmux-options sets options on the tmux server this runs in, but TMUX is not set; run it "
                       "inside tmux (e.g. from .tmux.conf: run-shell -b) or name one with --tmux-socket")
    try:
        why = asyncio.run(run_ambient(path, session_id=session, socket=socket, width=width, preset=preset,
                                      ascii_only=ascii_only, title=title, poll=poll,
                                      rp1_db=Path(db) if db else None))
    except KeyboardInterrupt:
        return
    except OSError as exc:
        raise CliError(f"--tmux-options: {exc}") from exc
    raise CliError(f"--tmux-options: {why}")


@click.command("overlay")
@root_option
@click.option("--session-id", "--session", "session", default=None,
              help="Explicit session id (else env, session.json, root).")
@json_option
def overlay(root, session, as_json) -> None:
    """Print the AGENTS-overlay Active Modes section for the combined active set."""
    from rcs_tui.state.plans import plan_names
    from rcs_tui.views.overlay import build_overlay

    path = resolve_root(root)
    block = build_overlay(readable_snapshot(path, session), plan_names(path))
    if as_json:
        click.echo(dumps(block.as_json()))
    else:
        echo_text(block.text)
