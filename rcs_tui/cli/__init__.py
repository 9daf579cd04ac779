"""The `rcs-tui` command. Subcommands load lazily so `hud --once` stays cheap."""

from __future__ import annotations

import importlib
import json
import sys

import click

# name -> "module:attribute"; each module owns one subcommand (group).
SUBCOMMANDS: dict[str, str] = {
    "state": "rcs_tui.cli.state_cmd:state",
    "undo": "rcs_tui.cli.state_cmd:undo_cmd",
    "journal": "rcs_tui.cli.state_cmd:journal_cmd",
    "snapshot": "rcs_tui.cli.state_cmd:snapshot_cmd",
    "task": "rcs_tui.cli.task_cmd:task",
    "rp1": "rcs_tui.cli.rp1_cmd:rp1",
    "hud": "rcs_tui.cli.hud_cmd:hud",
    "overlay": "rcs_tui.cli.hud_cmd:overlay",
    "demo": "rcs_tui.cli.demo_cmd:demo",
    "console": "rcs_tui.cli.console_cmd:console",
    "doctor": "rcs_tui.cli.doctor_cmd:doctor",
    "locate": "rcs_tui.cli.doctor_cmd:locate",
}


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
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Live HUD and operator recovery console for RCS workflow state."""
    if ctx.invoked_subcommand is None:
        console = cli.get_command(ctx, "console")
        if console is None:
            click.echo(ctx.get_help())
            return
        ctx.invoke(console)


def main(argv: list[str] | None = None) -> None:
    """Entry point: click in non-standalone mode so every error is `{"error": ...}` on stderr."""
    from rcs_tui.cli.common import run

    sys.exit(run(cli, argv))


__all__ = ["cli", "main", "json"]
