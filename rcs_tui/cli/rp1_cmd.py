"""`rcs-tui rp1 …`: rp1 workflow runs, one run's timeline, machines and a live tail (read-only)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from rcs_tui.cli.common import CliError, dumps, emit, given_root, json_option, quick_options, root_option, rp1_paths
from rcs_tui.cli.rp1_report import DB_HELP, QUICK, clean, open_source, print_runs, project_root
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import OK, REJECTED
from rcs_tui.rp1.check import EMIT_STATUSES

db_option = click.option("--db", "db", type=click.Path(dir_okay=False), default=None, help=DB_HELP)


def _root(root: str | None) -> Path:
    """The project root: `--root` of the subcommand or of `rcs-tui` itself, else as `project_root` finds it."""
    return project_root(given_root(root))


def _source(root: str | None, db: str | None, all_projects: bool = False) -> Any:
    path, plugin_roots = rp1_paths(db)
    return open_source(given_root(root), path, all_projects, plugin_roots)


@click.group("rp1")
def rp1() -> None:
    """rp1 workflow runs recorded in rp1's SQLite database (never modified)."""


@rp1.command("runs")
@quick_options(QUICK)  # the options the quick path also takes without click
def runs_cmd(root: str | None, db: str | None, as_json: bool, all_projects: bool, status: str | None,
             workflow: str | None, limit: int) -> None:
    """Runs ordered by latest activity, status recomputed from events."""
    path, plugin_roots = rp1_paths(db)
    print_runs(given_root(root), path, as_json, all_projects, status, workflow, limit, plugin_roots)


@rp1.command("show")
@click.argument("run_id")
@root_option
@db_option
@json_option
def show_cmd(run_id: str, root: str | None, db: str | None, as_json: bool) -> None:
    """One run's timeline: its steps as bars over time, then steps, retries, units, sub-agents, artifacts,
    prompts, violations."""
    source = _source(root, db, all_projects=True)
    timeline = source.timeline(run_id)
    if timeline is None:
        raise CliError(source.state.message or f"rp1: no run {run_id!r} in {source.db.path}", kinds.NOT_FOUND)
    emit(timeline.to_json(), as_json, lambda t: _bars(timeline) + "\n" + _human_timeline(t))


def _bars(timeline: Any) -> str:
    """The run's steps as bars at the terminal's width (COLUMNS, else 100 when not a terminal), plain text:
    the glyphs tell the kinds apart without colour."""
    import shutil

    from rcs_tui.rp1.spans import run_chart
    from rcs_tui.views.timeline_bars import render

    width = shutil.get_terminal_size((100, 24)).columns
    return "\n".join(line.plain.rstrip() for line in render(run_chart(timeline), width, now=time.time())) + "\n"


def _human_timeline(t: dict[str, Any]) -> str:
    from rcs_tui.views.text import duration

    run = t["run"]
    lines = [f"{clean(run['workflow'])} {clean(run['id'])}  {t['status']}"
             + ("" if t["tracked"] else "  (untracked: no state machine)")]
    for s in t["steps"]:
        mark = " ↻" * (s["attempts"] - 1) if s["retried"] else ""
        dur = f" {duration(s['duration_s'])}" if s["duration_s"] is not None else ""
        lines.append(f"  {clean(s['name']):<16} {s['status']:<11}{dur}{mark}")
        for u in s["units"] + s["agents"]:
            lines.append(f"    {clean(u['key']):<20} {clean(u['state'])} ({u['status']})")
        for a in s["artifacts"]:
            lines.append(f"    artifact {clean(a['path'])}")
        for p in s["prompts"]:
            lines.append(f"    {'waiting: ' if p['pending'] else 'asked: '}{clean(p['message'])}")
    for v in t["violations"]:
        lines.append(f"  ! {clean(v['message'])}")
    return "\n".join(lines)


@rp1.command("machines")
@root_option
@json_option
def machines_cmd(root: str | None, as_json: bool) -> None:
    """State machines found under plugin roots, plus the built-in fallbacks."""
    from rcs_tui.rp1.machines import default_plugin_roots, discover_machines

    _, plugin_roots = rp1_paths()
    infos = discover_machines(plugin_roots if plugin_roots is not None else default_plugin_roots(_root(root)))
    data = {"machines": [i.to_json() for i in sorted(infos.values(), key=lambda i: (i.kind, i.name))]}

    def human(d: dict[str, Any]) -> str:
        return "\n".join(f"{m['kind']:<6} {clean(m['name']):<18} {' → '.join(m['states']) or clean(m['error'])}"
                         f"  [{clean(m['source'])}]" for m in d["machines"])

    emit(data, as_json, human)


@rp1.command("check")
@click.argument("workflow")
@click.argument("step")
@click.option("--run", "run_id", default=None, help="The run the emit goes to (else a new run).")
@click.option("--unit", "unit", default=None, help="The emit's --unit.")
@click.option("--status", "status", type=click.Choice(list(EMIT_STATUSES)),
              default="running", show_default=True, help="The emit's data.status.")
@root_option
@db_option
@json_option
def check_cmd(workflow: str, step: str, run_id: str | None, unit: str | None, status: str, root: str | None,
              db: str | None, as_json: bool) -> int:
    """What rp1 would answer to `emit --workflow WORKFLOW --step STEP` (reads the run; writes nothing).

    Exit status 0 when rp1 would accept the emit, 1 when it would reject it (the answer is printed either way).
    """
    from rcs_tui.rp1.check import CheckError, check_in_source, check_lines

    source = _source(root, db, all_projects=True)
    try:
        result = check_in_source(source, workflow, step, run_id, status=status, unit=unit)
    except CheckError as exc:
        raise CliError(str(exc), kinds.BAD_INPUT) from exc
    emit(result.to_json(), as_json, lambda d: "\n".join(clean(line) for line in check_lines(d)))
    return OK if result.accepted else REJECTED  # a script can gate on it; the answer is printed either way


def _tail_waiting(tail: Any, from_start: bool, run_id: str | None) -> str:
    """The line that says what `rp1 tail` waits for, so a quiet terminal is not taken for a hung one."""
    which = f"events of run {clean(run_id)}" if run_id else "events"
    where = clean(str(tail.db.path))
    if from_start:
        return f"rp1 tail: the stored {which} first, then waiting for new ones in {where}; Ctrl-C stops"
    return f"rp1 tail: waiting for new {which} in {where} (after event {tail.cursor}); Ctrl-C stops"


@rp1.command("tail")
@root_option
@db_option
@json_option
@click.option("--from-start", is_flag=True, help="Replay every stored event first.")
@click.option("--run", "run_id", default=None, help="Only events of this run.")
def tail_cmd(root: str | None, db: str | None, as_json: bool, from_start: bool, run_id: str | None) -> None:
    """Print events as they arrive until Ctrl-C (one JSON object a line with --json)."""

    from rcs_tui.rp1.tail import Tail

    _root(root)
    tail = Tail(rp1_paths(db)[0], cursor=0 if from_start else None, run_id=run_id)

    def show(events: list[Any]) -> None:
        for ev in events:
            if as_json:
                click.echo(dumps(ev.to_json(), indent=None))
            else:
                where = clean(ev.step or "-") + (f"[{clean(ev.unit)}]" if ev.unit else "")
                click.echo(f"{ev.id:>8} {clean(ev.created_at)} {clean(ev.run_id)[:8]} {ev.type:<20} "
                           f"{where} {clean(ev.status or '')}")

    tail.subscribe(show)
    click.echo(_tail_waiting(tail, from_start, run_id), err=True)  # stderr: --json's stdout stays JSON lines
    last_status: str | None = None
    try:
        while True:
            tail.poll()
            if tail.state.message != last_status:
                last_status = tail.state.message
                if last_status:
                    click.echo(clean(last_status), err=True)
            time.sleep(tail.interval)
    except KeyboardInterrupt:
        return
