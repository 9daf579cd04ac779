"""`rcs-tui console` (also plain `rcs-tui`): the operator recovery console."""

from __future__ import annotations

from pathlib import Path

import click

from rcs_tui.cli.common import CliError, Finite, resolve_root, root_option, settings
from rcs_tui.core import error_kinds as kinds


@click.command("console")
@click.option("--session-id", "session_id", default=None, help="Act on this session (else the current one).")
@click.option("--readonly/--no-readonly", default=None,
              help="Hide every action that writes (clear, override, undo, repair); default from the config file.")
@click.option("--no-mouse", "no_mouse", is_flag=True, help="Do not capture the mouse.")
@click.option("--theme", default=None, help="A Textual theme name (e.g. textual-dark, nord, gruvbox).")
@click.option("--db", "db", default=None, help="rp1 database (else $RP1_DB, else ~/.rp1/rp1.db).")
@click.option("--watch-seconds", type=Finite(0, 3600), default=None,
              help="After a clear, how long to keep watching the member for a resurrection (default 10).")
@root_option
def console(session_id, readonly, no_mouse, theme, db, watch_seconds, root):
    """Browse scopes, members, team, tasks and rp1 runs; clear, override, undo and repair safely."""
    from rcs_tui.core.modes import check_name

    root_path = resolve_root(root)
    conf = settings(readonly=readonly, theme=theme, rp1_db=db, watch_seconds=watch_seconds)
    readonly, theme, db, watch_seconds = conf.readonly, conf.theme, conf.rp1_db, conf.watch_seconds
    if session_id is not None:
        check_name(session_id, "session id")
    from rcs_tui.ui.console.app import ConsoleApp

    app = ConsoleApp(root_path, session_id=session_id, readonly=readonly, rp1_db=Path(db) if db else None,
                     watch_seconds=watch_seconds, record=True)
    if theme:
        if theme not in app.available_themes:
            where = "--theme" if conf.sources["theme"] == "flag" else f"{conf.path}: theme"
            raise CliError(f"{where}: unknown theme {theme!r}; available: {', '.join(sorted(app.available_themes))}",
                           kinds.BAD_CONFIG)
        app.theme = theme
    from rcs_tui.fleet.focus import looking_at

    with looking_at(str(root_path)):  # the fleet holds its alerts about the project shown here
        app.run(mouse=not no_mouse)
