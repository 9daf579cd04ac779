"""`rcs-tui rp1 runs` without click: the run feed as JSON or a table, plus the helpers every rp1
subcommand shares (which project, which database, one sanitised line per database string).

Kept free of click so the quick path (`rcs_tui.cli.quick`) can answer `rp1 runs` for scripts and status
lines without paying for click; the click command calls the same `print_runs`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rcs_tui.cli.errors import CliError
from rcs_tui.cli.jsonout import emit
from rcs_tui.cli.quick import JSON_HELP, ROOT_HELP, Option, Quick
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import OK
from rcs_tui.views.text import strip_controls

DB_HELP = "rp1 database (else RP1_DB, else ~/.rp1/rp1.db)."
RUN_STATUSES = ("running", "waiting", "failed", "completed", "cancelled", "abandoned", "inactive", "not_started")


def project_root(root: str | None) -> Path:
    """The project root; without a .rcs/ tree the cwd scopes the runs (not an error for rp1, unless a
    root was named and is not one)."""
    from rcs_tui.files.layout import RootNotFound, find_root

    try:
        return find_root(root)
    except RootNotFound as exc:
        if exc.named:  # `--root` or RCS_ROOT named something that is not a project: never another one
            raise CliError(str(exc), kinds.NO_PROJECT) from exc
        return Path.cwd().resolve()


def open_source(root: str | None, db: str | None, all_projects: bool = False,
                plugin_roots: list[Path] | None = None) -> Any:
    """The rp1 source for `db` (None: RP1_DB, else ~/.rp1/rp1.db) reading machines under `plugin_roots`
    (None: RP1_PLUGIN_ROOTS, else the project's and ~/.rp1)."""
    from rcs_tui.rp1.source import Rp1Source

    return Rp1Source(db, root=project_root(root), all_projects=all_projects, plugin_roots=plugin_roots)


def clean(text: Any) -> str:
    """Database strings are data: one line through the one sanitiser before they reach a terminal."""
    return strip_controls("" if text is None else text)


def print_runs(root: str | None, db: str | None, as_json: bool, all_projects: bool, status: str | None,
               workflow: str | None, limit: int, plugin_roots: list[Path] | None = None) -> None:
    """Runs ordered by latest activity, status recomputed from events, filtered and cut to `limit`."""
    source = open_source(root, db, all_projects, plugin_roots)
    feed = source.feed(status=status, workflow=workflow, limit=limit)
    data = {"db": str(source.db.path), "status": feed.status,
            "scope": None if source.scope is None else {"project_path": source.scope.project_path,
                                                         "project_id": source.scope.project_id},
            "total": feed.total, "runs": [r.to_json() for r in feed.runs]}
    emit(data, as_json, _human_runs)


def _human_runs(d: dict[str, Any]) -> str:
    if d["status"]:
        return d["status"]
    if not d["runs"]:
        return "rp1: no runs"
    from rcs_tui.state.metrics import parse_time
    from rcs_tui.views.text import ago

    now = time.time()
    lines = [f"{'RUN':<9} {'WORKFLOW':<14} {'STATUS':<13} {'STEP':<14} {'NAME':<20} AGE"]
    for r in d["runs"]:
        last = parse_time(r["last_activity"])
        status = r["status"] + (f" ({len(r['waiting'])}?)" if r["waiting"] else "")
        lines.append(f"{clean(r['id'])[:8]:<9} {clean(r['workflow'])[:14]:<14} {status:<13} "
                     f"{clean(r['current_step'] or '-')[:14]:<14} "
                     f"{clean(r['name'] or r['feature_id'] or '-')[:20]:<20} "
                     f"{ago(now - last) if last is not None else '-'}")
    if any(r["waiting"] for r in d["runs"]):
        lines.append("(N?) = N questions waiting for an answer; `rcs-tui rp1 show RUN` shows them")
    return "\n".join(lines)


def _quick_runs(**opts: Any) -> int | None:
    """`rp1 runs` without click, under the same rule as `hud --once`'s (`quick_settings`): a bad configuration
    file, or one not yet checked in full that sets more than the HUD preset, is handed to the full path."""
    from rcs_tui.config.paths import file_rp1_paths, quick_settings

    try:
        from_file = quick_settings()
    except ValueError:
        return None
    db, roots = file_rp1_paths(from_file)
    print_runs(**{**opts, "db": opts["db"] or db}, plugin_roots=None if roots is None else [Path(p) for p in roots])
    return OK


# `rp1 runs`'s options; the click command is built from the same declaration.
QUICK = Quick((
    Option(("--root",), "root", "dir", help=ROOT_HELP),
    Option(("--db",), "db", "file", help=DB_HELP),
    Option(("--json",), "as_json", "flag", help=JSON_HELP),
    Option(("--all-projects",), "all_projects", "flag", help="Runs of every project, not only this one."),
    Option(("--status",), "status", "choice", choices=RUN_STATUSES),
    Option(("--workflow",), "workflow", help="Only runs of this workflow."),
    Option(("--limit",), "limit", "int", low=1, high=10000, default=50, show_default=True),
), run=_quick_runs)
