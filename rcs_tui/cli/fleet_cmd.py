"""`rcs-tui fleet`: every project (local and over ssh) in one view, sorted by what needs the operator."""

from __future__ import annotations

import asyncio

import click

from rcs_tui.cli.common import CliError, emit, json_option, settings
from rcs_tui.core import error_kinds as kinds


@click.command("fleet")
@click.option("--project", "projects", multiple=True, metavar="PATH_OR_URL",
              help="A project root, a glob, or ssh://[USER@]HOST[:PORT]/PATH (repeatable; adds to the config's).")
@click.option("--once", is_flag=True, help="Print one line (or, with --json, the list) and exit.")
@click.option("--notify", "notify", default=None, metavar="CMD",
              help="Shell command run on each alert (RCS_ALERT_PROJECT/HOST/KIND/MEMBER/MESSAGE in its environment).")
@click.option("--ssh-config", "ssh_config", type=click.Path(dir_okay=False), default=None,
              help="ssh client config file (ssh -F); default: ssh's own (~/.ssh/config).")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=15.0, show_default=True,
              help="--once: how long each project's read may take, from when it starts; past it the row says so.")
@click.option("--deadline", type=click.FloatRange(1, 3600), default=60.0, show_default=True,
              help="--once: the whole run ends within this many seconds; a project not answered by then is a "
                   "row saying so.")
@click.option("--theme", default=None, help="A Textual theme name.")
@click.option("--readonly/--no-readonly", default=None, help="Offer no actions that write (default from config).")
@json_option
def fleet(projects, once, notify, ssh_config, timeout, deadline, theme, readonly, as_json):
    """One row per project: waiting for you, failed, trouble, running, idle — Enter opens its console."""
    from rcs_tui.fleet.alerts import AlertSettings
    from rcs_tui.fleet.projects import expand_projects
    from rcs_tui.fleet.transport import Ssh

    conf = settings(theme=theme, readonly=readonly)
    specs = list(conf.projects) + list(projects)
    if not specs:
        raise CliError(f"no projects: add projects = [...] to {conf.path} or pass --project PATH_OR_URL",
                       kinds.BAD_CONFIG)
    found, problems = expand_projects(specs)
    if problems:
        raise CliError("; ".join(problems), kinds.BAD_INPUT)
    if not found:
        raise CliError(f"no project matched {', '.join(map(repr, specs))} (a glob keeps only directories with .rcs/)",
                       kinds.NOT_FOUND)
    ssh = Ssh(config_file=ssh_config)
    if once:
        from rcs_tui.fleet.once import gather_once, tune_gc
        from rcs_tui.fleet.rows import once_json, once_line

        tune_gc()
        rows = asyncio.run(gather_once(found, ssh=ssh, timeout=timeout, deadline=deadline))
        emit(once_json(rows), as_json, lambda _: once_line(rows))
        return
    if as_json:
        raise CliError("--json goes with --once", kinds.BAD_INPUT)
    alerts = AlertSettings(command=notify or conf.values["alerts.command"], bell=conf.values["alerts.bell"],
                           tmux=conf.values["alerts.tmux"], kinds=tuple(conf.values["alerts.kinds"]),
                           min_interval=conf.values["alerts.min_interval"])
    from rcs_tui.ui.fleet.app import FleetApp

    app = FleetApp(found, ssh=ssh, alerts=alerts, readonly=conf.readonly, record=True)
    if conf.theme:
        if conf.theme not in app.available_themes:
            raise CliError(f"unknown theme {conf.theme!r}; available: {', '.join(sorted(app.available_themes))}",
                           kinds.BAD_CONFIG)
        app.theme = conf.theme
    app.run()
