"""`rcs-tui rp1 …`: rp1 workflow runs, one run's timeline, machines and a live tail (read-only)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from rcs_tui.cli.common import CliError, dumps, emit, json_option, root_option
from rcs_tui.views.text import strip_controls

db_option = click.option("--db", "db", type=click.Path(dir_okay=False), default=None,
                         help="rp1 database (else RP1_DB, else ~/.rp1/rp1.db).")


def _root(root: str | None) -> Path:
    """The project root; without a .rcs/ tree the cwd scopes the runs (not an error for rp1)."""
    from rcs_tui.cli.common import given_root
    from rcs_tui.state.layout import RootNotFound, find_root

    root = given_root(root)
    try:
        return find_root(root)
    except RootNotFound as exc:
        if root:
            raise CliError(str(exc)) from exc
        return Path.cwd().resolve()


def _source(root: str | None, db: str | None, all_projects: bool = False) -> Any:
    from rcs_tui.rp1.source import Rp1Source

    return Rp1Source(db, root=_root(root), all_projects=all_projects)


def _clean(text: Any) -> str:
    """Database strings are data: one line through the one sanitiser before they reach a terminal."""
    return strip_controls("" if text is None else text)


@click.group("rp1")
def rp1() -> None:
    """rp1 workflow runs recorded in rp1's SQLite database (never modified)."""


@rp1.command("runs")
@root_option
@db_option
@json_option
@click.option("--all-projects", is_flag=True, help="Runs of every project, not only this one.")
@click.option("--status", "status", type=click.Choice(
    ["running", "waiting", "failed", "completed", "cancelled", "abandoned", "inactive", "not_started"]))
@click.option("--workflow", "workflow", default=None, help="Only runs of this workflow.")
@click.option("--limit", type=click.IntRange(1, 10000), default=50, show_default=True)
def runs_cmd(root: str | None, db: str | None, as_json: bool, all_projects: bool, status: str | None,
             workflow: str | None, limit: int) -> None:
    """Runs ordered by latest activity, status recomputed from events."""
    source = _source(root, db, all_projects)
    feed = source.feed(status=status, workflow=workflow, limit=limit)
    data = {"db": str(source.db.path), "status": feed.status,
            "scope": None if source.scope is None else {"project_path": source.scope.project_path,
                                                         "project_id": source.scope.project_id},
            "total": feed.total, "runs": [r.to_json() for r in feed.runs]}

    def human(d: dict[str, Any]) -> str:
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
            lines.append(f"{_clean(r['id'])[:8]:<9} {_clean(r['workflow'])[:14]:<14} {status:<13} "
                         f"{_clean(r['current_step'] or '-')[:14]:<14} "
                         f"{_clean(r['name'] or r['feature_id'] or '-')[:20]:<20} "
                         f"{ago(now - last) if last is not None else '-'}")
        if any(r["waiting"] for r in d["runs"]):
            lines.append("(N?) = N questions waiting for an answer; `rcs-tui rp1 show RUN` shows them")
        return "\n".join(lines)

    emit(data, as_json, human)


@rp1.command("show")
@click.argument("run_id")
@root_option
@db_option
@json_option
def show_cmd(run_id: str, root: str | None, db: str | None, as_json: bool) -> None:
    """One run's timeline: steps, retries, units, sub-agents, artifacts, prompts, violations."""
    source = _source(root, db, all_projects=True)
    timeline = source.timeline(run_id)
    if timeline is None:
        raise CliError(source.state.message or f"rp1: no run {run_id!r} in {source.db.path}")
    emit(timeline.to_json(), as_json, _human_timeline)


def _human_timeline(t: dict[str, Any]) -> str:
    from rcs_tui.views.text import duration

    run = t["run"]
    lines = [f"{_clean(run['workflow'])} {_clean(run['id'])}  {t['status']}"
             + ("" if t["tracked"] else "  (untracked: no state machine)")]
    for s in t["steps"]:
        mark = " ↻" * (s["attempts"] - 1) if s["retried"] else ""
        dur = f" {duration(s['duration_s'])}" if s["duration_s"] is not None else ""
        lines.append(f"  {_clean(s['name']):<16} {s['status']:<11}{dur}{mark}")
        for u in s["units"] + s["agents"]:
            lines.append(f"    {_clean(u['key']):<20} {_clean(u['state'])} ({u['status']})")
        for a in s["artifacts"]:
            lines.append(f"    artifact {_clean(a['path'])}")
        for p in s["prompts"]:
            lines.append(f"    {'waiting: ' if p['pending'] else 'asked: '}{_clean(p['message'])}")
    for v in t["violations"]:
        lines.append(f"  ! {_clean(v['message'])}")
    return "\n".join(lines)


@rp1.command("machines")
@root_option
@json_option
def machines_cmd(root: str | None, as_json: bool) -> None:
    """State machines found under plugin roots, plus the built-in fallbacks."""
    from rcs_tui.rp1.machines import default_plugin_roots, discover_machines

    infos = discover_machines(default_plugin_roots(_root(root)))
    data = {"machines": [i.to_json() for i in sorted(infos.values(), key=lambda i: (i.kind, i.name))]}

    def human(d: dict[str, Any]) -> str:
        return "\n".join(f"{m['kind']:<6} {_clean(m['name']):<18} {' → '.join(m['states']) or _clean(m['error'])}"
                         f"  [{_clean(m['source'])}]" for m in d["machines"])

    emit(data, as_json, human)


@rp1.command("check")
@click.argument("workflow")
@click.argument("step")
@click.option("--run", "run_id", default=None, help="The run the emit goes to (else a new run).")
@click.option("--unit", "unit", default=None, help="The emit's --unit.")
@click.option("--status", "status", type=click.Choice(["running", "waiting", "completed", "failed", "skipped"]),
              default="running", show_default=True, help="The emit's data.status.")
@root_option
@db_option
@json_option
def check_cmd(workflow: str, step: str, run_id: str | None, unit: str | None, status: str, root: str | None,
              db: str | None, as_json: bool) -> None:
    """What rp1 would answer to `emit --workflow WORKFLOW --step STEP` (reads the run; writes nothing)."""
    from rcs_tui.rp1.check import CheckError, check_in_source, check_lines

    source = _source(root, db, all_projects=True)
    try:
        result = check_in_source(source, workflow, step, run_id, status=status, unit=unit)
    except CheckError as exc:
        raise CliError(str(exc)) from exc
    emit(result.to_json(), as_json, lambda d: "\n".join(_clean(line) for line in check_lines(d)))


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
    tail = Tail(db, cursor=0 if from_start else None, run_id=run_id)

    def show(events: list[Any]) -> None:
        for ev in events:
            if as_json:
                click.echo(dumps(ev.to_json(), indent=None))
            else:
                where = _clean(ev.step or "-") + (f"[{_clean(ev.unit)}]" if ev.unit else "")
                click.echo(f"{ev.id:>8} {_clean(ev.created_at)} {_clean(ev.run_id)[:8]} {ev.type:<20} "
                           f"{where} {_clean(ev.status or '')}")

    tail.subscribe(show)
    last_status: str | None = None
    try:
        while True:
            tail.poll()
            if tail.state.message != last_status:
                last_status = tail.state.message
                if last_status:
                    click.echo(_clean(last_status), err=True)
            time.sleep(tail.interval)
    except KeyboardInterrupt:
        return
