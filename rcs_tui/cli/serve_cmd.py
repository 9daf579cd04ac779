"""`rcs-tui serve`: the fleet, console or HUD in a browser, for their owner only (`rcs_tui.serve`)."""

from __future__ import annotations

import asyncio
import logging
import sys

import click

from rcs_tui.cli.common import CliError, resolve_root, root_option, settings
from rcs_tui.core import error_kinds as kinds


@click.command("serve")
@click.option("--fleet", "app", flag_value="fleet", default=True, help="Serve the fleet view (the default).")
@click.option("--console", "app", flag_value="console", help="Serve the operator console of one project.")
@click.option("--hud", "app", flag_value="hud", help="Serve the HUD of one project.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; another than loopback needs [serve] token in the config file.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free one, printed).")
@click.option("--allow-actions", "allow_actions", is_flag=True,
              help="Offer the actions that write (clear, override, undo, repair); default: read-only.")
@click.option("--max-sessions", "max_sessions", type=click.IntRange(1, 64), default=3, show_default=True,
              help="Browser tabs served at once (each runs its own app process).")
@click.option("--project", "projects", multiple=True, metavar="PATH_OR_URL",
              help="--fleet: a project to add to the config's (repeatable).")
@click.option("--session-id", "session_id", default=None, help="--console/--hud: the session to show.")
@click.option("--db", "db", default=None, help="--console: rp1 database (else $RP1_DB, else ~/.rp1/rp1.db).")
@root_option
def serve(app, host, port, allow_actions, max_sessions, projects, session_id, db, root):
    """Serve the fleet (or --console, --hud) to a browser: token-locked, read-only unless --allow-actions."""
    from rcs_tui.serve.apps import app_argv, loopback, url_host
    from rcs_tui.serve.token import new_token, store_token

    conf = settings(rp1_db=db)
    configured = conf.values["serve.token"]
    if not loopback(host) and not configured:
        raise CliError(f"--host {host} is reachable from other machines: set a token first ([serve] token = "
                       f"\"…\", 32+ characters, in {conf.path}), and put TLS in front (see the README), or keep "
                       "the default 127.0.0.1 and use ssh -L", kinds.BAD_INPUT)
    readonly = not allow_actions
    if app == "fleet":
        _check_projects(list(conf.projects) + list(projects), conf.path)
        argv = app_argv("fleet", readonly=readonly, projects=tuple(projects))
    else:
        from rcs_tui.core.modes import check_name

        if session_id is not None:
            check_name(session_id, "session id")
        argv = app_argv(app, readonly=readonly, root=str(resolve_root(root)), session=session_id,
                        rp1_db=conf.rp1_db if db else None)
    token = configured or new_token()
    stored = None if configured else store_token(token)

    from rcs_tui.serve.server import OwnerServer

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="rcs-tui serve: %(message)s")
    server = OwnerServer(argv, token=token, host=host, port=port, title=f"rcs-tui {app}", max_sessions=max_sessions)

    def ready(bound: str, bound_port: int) -> None:
        mode = "read-only" if readonly else "ACTIONS ALLOWED"
        where = "the token is in the config file" if configured else (
            f"the token is also in {stored}" if stored else "the token could not be stored: keep this URL")
        click.echo(f"rcs-tui serve: {app}, {mode}, at most {max_sessions} sessions; Ctrl-C stops. Open:")
        click.echo(f"http://{url_host(bound)}:{bound_port}/?token={token}")
        click.echo(f"({where}; anyone with it can see this {app})")
        sys.stdout.flush()

    asyncio.run(server.run(ready))


def _check_projects(specs: list[str], config_path: object) -> None:
    """The fleet's own checks, at start: a browser tab should not be the first to learn the list is empty."""
    from rcs_tui.cli.fleet_cmd import fleet_projects

    fleet_projects(specs, config_path)
