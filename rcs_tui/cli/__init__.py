"""The `rcs-tui` command. Subcommands load lazily so `hud --once` stays cheap.

`hud --once` is what a tmux or agent status line runs every few hundred milliseconds, so `main()` first
offers argv to the quick path (`rcs_tui.cli.quick`): when it is `hud --once` with options declared in
`HUD_ONCE` (or `rp1 runs` with its own), `print_once` answers without importing click; the click
command calls the same function. Anything else, including any option not declared, goes through click,
as does every usage error.
"""

from __future__ import annotations

import json
import os
import sys

from rcs_tui.cli.quick import JSON_HELP, ROOT_HELP, Option, Quick, run_quick
from rcs_tui.core.exit_codes import OK

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: a status line's `hud --once` does not import typing
if TYPE_CHECKING:
    import click

# name -> "module:attribute"; each module owns one subcommand (group).
SUBCOMMANDS: dict[str, str] = {
    "state": "rcs_tui.cli.state_cmd:state",
    "undo": "rcs_tui.cli.state_cmd:undo_cmd",
    "redo": "rcs_tui.cli.state_cmd:redo_cmd",
    "journal": "rcs_tui.cli.state_cmd:journal_cmd",
    "history": "rcs_tui.cli.history_cmd:history_cmd",
    "record": "rcs_tui.cli.history_cmd:record_cmd",
    "snapshot": "rcs_tui.cli.state_cmd:snapshot_cmd",
    "task": "rcs_tui.cli.task_cmd:task",
    "rp1": "rcs_tui.cli.rp1_cmd:rp1",
    "hud": "rcs_tui.cli.hud_cmd:hud",
    "overlay": "rcs_tui.cli.hud_cmd:overlay",
    "demo": "rcs_tui.cli.demo_cmd:demo",
    "console": "rcs_tui.cli.console_cmd:console",
    "doctor": "rcs_tui.cli.doctor_cmd:doctor",
    "locate": "rcs_tui.cli.doctor_cmd:locate",
    "config": "rcs_tui.cli.config_cmd:config_cmd",
    "fleet": "rcs_tui.cli.fleet_cmd:fleet",
    "serve": "rcs_tui.cli.serve_cmd:serve",
}

PRESETS = ("minimal", "focused", "full")


def _build_group() -> tuple[type[click.Group], click.Group]:
    """The click group (and its class), built on first use: importing click costs ~35 ms."""
    import importlib

    import click

    class LazyGroup(click.Group):
        """A group whose subcommands are imported only when invoked (or listed in --help)."""

        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(set(super().list_commands(ctx)) | set(SUBCOMMANDS))

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            if cmd_name in SUBCOMMANDS:
                module_name, attr = SUBCOMMANDS[cmd_name].split(":")
                try:
                    module = importlib.import_module(module_name)
                except ModuleNotFoundError as exc:
                    if exc.name == module_name:
                        return None
                    raise
                return getattr(module, attr)
            return super().get_command(ctx, cmd_name)

    @click.group(cls=LazyGroup, invoke_without_command=True,
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="rcs-tui")
    @click.option("--root", "root", type=click.Path(file_okay=False), default=None,
                  help="Project root for the subcommand (same as its own --root).")
    @click.pass_context
    def cli(ctx: click.Context, root: str | None) -> None:
        """Live HUD and operator recovery console for RCS workflow state."""
        if root is not None:
            ctx.meta["rcs_root"] = root
        if ctx.invoked_subcommand is None:
            console = cli.get_command(ctx, "console")
            if console is None:
                click.echo(ctx.get_help())
                return
            ctx.invoke(console)

    return LazyGroup, cli


def _cli_group() -> click.Group:
    """The click group, built now and kept as the module's `cli` (and its class as `LazyGroup`)."""
    group_cls, group = _build_group()
    globals().update(LazyGroup=group_cls, cli=group)
    return group


def __getattr__(name: str) -> object:
    if name in ("cli", "LazyGroup"):
        _cli_group()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- hud --once ---------------------------------------------------------------------------------
def once_width(flag: int | None) -> int:
    """`--width`, else `COLUMNS`, else the terminal's width (80 when there is none)."""
    if flag:
        return max(1, flag)
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        stdout = sys.__stdout__  # None when Python started without a standard output
        if stdout is None:
            return 80
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def color_enabled() -> bool:
    """Colour unless NO_COLOR is set (any non-empty value) or the terminal is dumb."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def print_once(root: str | os.PathLike[str], session: str | None, as_json: bool, width: int | None,
               ascii_only: bool, preset: str | None, lines: int = 1, rp1_db: str | None = None) -> None:
    """Print what `rcs-tui hud --once` prints: the fitted line(s) (ANSI unless NO_COLOR) or the JSON snapshot.
    `rp1_db`: the rp1 database the configuration names (None: RP1_DB, else ~/.rp1/rp1.db)."""
    import time

    from rcs_tui.cli.jsonout import write_bytes, write_line
    from rcs_tui.cli.once import render
    from rcs_tui.project.answer import answer

    result = answer(os.fspath(root), session, as_json, ascii_only, preset, rp1_db)
    text = render(result, time.time(), once_width(width), max(1, lines), ascii_only, as_json, color_enabled())
    if isinstance(text, bytes):
        write_bytes(text)
    else:
        write_line(text)


def _hud_once_fast(root: str | None, session: str | None, as_json: bool, width: int | None, ascii_only: bool,
                   preset: str | None, lines: int) -> int | None:
    """`hud --once` without click. None when the configuration file is bad, or sets more than the preset and
    was not yet checked in full (`quick_settings`): the full path reports the one and applies the other."""
    from rcs_tui.cli.once import NEUTRAL_LINE, NoProjectForStatusline, once_root
    from rcs_tui.config.paths import file_rp1_paths, quick_settings

    try:
        from_file = quick_settings()
    except ValueError:
        return None
    preset = preset or from_file.get("hud_preset")
    try:
        found = once_root(root)
    except NoProjectForStatusline:
        if as_json:
            raise
        from rcs_tui.cli.jsonout import write_line

        write_line(NEUTRAL_LINE)
        return OK
    print_once(found, session, as_json, width, ascii_only, preset, lines, file_rp1_paths(from_file)[0])
    return OK


# `hud`'s options that `hud --once` takes; the click command is built from the same declaration.
HUD_ONCE = Quick((
    Option(("--root",), "root", "dir", help=ROOT_HELP),
    Option(("--session-id", "--session"), "session", help="Explicit session id (else env, session.json, root)."),
    Option(("--once",), "once", "flag", help="Print one status line and exit (no Textual)."),
    Option(("--json",), "as_json", "flag", help=JSON_HELP),
    Option(("--width",), "width", "int", bounded=False,
           help="Line width for --once (else COLUMNS, else the terminal)."),
    Option(("--lines",), "lines", "int", default=1, show_default=True,
           help="Rows for --once (a status line that shows several lines)."),
    Option(("--ascii",), "ascii_only", "flag", help="ASCII glyphs only."),
    Option(("--preset",), "preset", "choice", choices=PRESETS, help="Override .rcs/hud-config.json's preset."),
), run=_hud_once_fast, required="once")


def _leave_now(code: int) -> None:
    """End the process at once after a quick command run as `rcs-tui` itself.

    Its output is written and its files are complete (every write is synchronous), so the interpreter's
    teardown, which frees every object one by one, only costs time: about a tenth of `hud --once`, and
    tens of milliseconds after a first `rp1 runs` over a large database. Returns instead (the usual
    exit then applies) when the output cannot be flushed, such as a closed pipe, or when coverage is
    recording, which writes its data at exit. A stream closed before the command started
    (`rcs-tui hud --once >&-`) is None in Python: there is nothing to flush there.
    """
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    if "coverage" not in sys.modules:
        os._exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: click in non-standalone mode so every error is `{"error": ...}` on stderr."""
    code = run_quick(sys.argv[1:] if argv is None else list(argv))
    if code is not None:
        if argv is None:  # the command itself, not a caller in this process (tests call main(argv))
            _leave_now(code)
        sys.exit(code)
    from rcs_tui.cli.common import run

    sys.exit(run(globals().get("cli") or _cli_group(), argv))


__all__ = ["HUD_ONCE", "cli", "main", "json", "print_once"]
