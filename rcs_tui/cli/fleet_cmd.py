"""`rcs-tui fleet`: every project (local and over ssh) in one view, sorted by what needs the operator."""

from __future__ import annotations

import asyncio

import click

from rcs_tui.cli.common import CliError, Finite, emit, json_option, settings
from rcs_tui.core import error_kinds as kinds

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rcs_tui.fleet.projects import Project


@click.command("fleet")
@click.option("--project", "projects", multiple=True, metavar="PATH_OR_URL",
              help="A project root, a glob, or ssh://[USER@]HOST[:PORT]/PATH (repeatable; adds to the config's).")
@click.option("--once", is_flag=True, help="Print one line (or, with --json, the list) and exit.")
@click.option("--notify", "notify", default=None, metavar="CMD",
              help="Shell command run on each alert (RCS_ALERT_PROJECT/HOST/KIND/MEMBER/MESSAGE/REASON/SOURCE "
                   "in its environment, and RCS_ALERT_ROOT: the project's root on its host, RCS_ALERT_URL: its "
                   "ssh:// address when remote).")
@click.option("--alert-url", "alert_urls", multiple=True, metavar="URL",
              help="Also alert through this apprise service URL (ntfy://…, json://…; repeatable; adds to "
                   "the config's).")
@click.option("--alert-desktop", is_flag=True, default=None, help="Also alert with desktop notifications.")
@click.option("--alert-tmux", is_flag=True, default=None, help="Also alert with a tmux message (inside tmux).")
@click.option("--quiet-hours", default=None, metavar="HH:MM-HH:MM",
              help="Local hours in which alerts are listed but not sent (overrides the config's).")
@click.option("--ssh-config", "ssh_config", type=click.Path(dir_okay=False), default=None,
              help="ssh client config file (ssh -F); default: ssh's own (~/.ssh/config).")
@click.option("--timeout", type=Finite(0.1, 600), default=15.0, show_default=True,
              help="--once: how long each project's read may take, from when it starts; past it the row says so.")
@click.option("--deadline", type=Finite(1, 3600), default=60.0, show_default=True,
              help="--once: the whole run ends within this many seconds; a project not answered by then is a "
                   "row saying so.")
@click.option("--theme", default=None, help="A Textual theme name.")
@click.option("--readonly/--no-readonly", default=None, help="Offer no actions that write (default from config).")
@json_option
def fleet(projects, once, notify, alert_urls, alert_desktop, alert_tmux, quiet_hours, ssh_config, timeout, deadline,
          theme, readonly, as_json):
    """One row per project: waiting for you, failed, trouble, running, idle — Enter opens its console."""
    from rcs_tui.fleet.transport import Ssh

    conf = settings(theme=theme, readonly=readonly)
    specs = list(conf.projects) + list(projects)
    found = fleet_projects(specs, conf.path)
    ssh = Ssh(config_file=ssh_config)
    if once:
        from rcs_tui.files.collector import one_shot
        from rcs_tui.fleet.once import gather_once
        from rcs_tui.fleet.rows import once_json, once_line

        one_shot()
        rows = asyncio.run(gather_once(found, ssh=ssh, timeout=timeout, deadline=deadline))
        emit(once_json(rows), as_json, lambda _: once_line(rows))
        return
    if as_json:
        raise CliError("--json goes with --once", kinds.BAD_INPUT)
    alerts = alert_settings(conf.values, notify=notify, urls=alert_urls, desktop=alert_desktop, tmux=alert_tmux,
                            quiet_hours=quiet_hours)
    from rcs_tui.ui.fleet.app import FleetApp

    app = FleetApp(found, ssh=ssh, alerts=alerts, readonly=conf.readonly, record=True)
    if conf.theme:
        if conf.theme not in app.available_themes:
            raise CliError(f"unknown theme {conf.theme!r}; available: {', '.join(sorted(app.available_themes))}",
                           kinds.BAD_CONFIG)
        app.theme = conf.theme
    app.run()


def alert_settings(values, *, notify=None, urls=(), desktop=None, tmux=None, quiet_hours=None):
    """The alert router's settings: `[alerts]` from the configuration, with the command-line flags on top."""
    from rcs_tui.core.alert_rules import parse_quiet_hours
    from rcs_tui.fleet.alerts import AlertSettings

    quiet = quiet_hours if quiet_hours is not None else values["alerts.quiet_hours"]
    try:
        parse_quiet_hours(quiet)
    except ValueError as exc:
        raise CliError(f"--quiet-hours: {exc}", kinds.USAGE) from None
    if any("://" not in u for u in urls):
        raise CliError("--alert-url: each must be a service URL (scheme://…)", kinds.USAGE)
    return AlertSettings(command=notify or values["alerts.command"], bell=values["alerts.bell"],
                         tmux=bool(tmux) or values["alerts.tmux"], desktop=bool(desktop) or values["alerts.desktop"],
                         apprise=tuple(values["alerts.apprise"]) + tuple(urls), kinds=tuple(values["alerts.kinds"]),
                         min_interval=values["alerts.min_interval"], hold=dict(values["alerts.hold"]),
                         cooldown=values["alerts.cooldown"], dedupe=values["alerts.dedupe"], quiet_hours=quiet,
                         grace=values["alerts.grace"], retries=values["alerts.retries"],
                         channel=dict(values["alerts.channel"]))


def fleet_projects(specs: list[str], config_path: object) -> list[Project]:
    """The projects `specs` name, or a clear error: none given, a spec that cannot be used, or a glob that
    matched nothing (the fleet and `serve --fleet` check the list alike, before anything starts)."""
    from rcs_tui.fleet.projects import expand_projects

    if not specs:
        raise CliError(f"no projects: add projects = [...] to {config_path} or pass --project PATH_OR_URL",
                       kinds.BAD_CONFIG)
    found, problems = expand_projects(specs)
    if problems:
        raise CliError("; ".join(problems), kinds.BAD_INPUT)
    if not found:
        raise CliError(f"no project matched {', '.join(map(repr, specs))} (a glob keeps only directories with .rcs/)",
                       kinds.NOT_FOUND)
    return found
