"""`rcs-tui task …`: read task directories and move a task through the task lifecycle."""

from __future__ import annotations

from typing import Any

import click

from rcs_tui.cli.common import emit, expect_plan_option, json_option, resolve_root, root_option
from rcs_tui.core.words import plural

TRANSCRIPT_TAIL = 20


def _dry_run(func):
    """--dry-run, and --expect-plan for applying exactly the plan a dry run showed."""
    return click.option("--dry-run", is_flag=True, help="Print the exact plan and change nothing.")(
        expect_plan_option(func))


def _actor(func):
    return click.option("--actor", default=None, help="Who is acting (default: user@host).")(func)


def _human_list(data: dict[str, Any]) -> str:
    if not data["tasks"]:
        return "no tasks"
    rows = []
    for t in data["tasks"]:
        if t["error"]:
            rows.append(f"{t['id']}  ERROR  {t['error']}")
        else:
            rows.append(f"{t['id']}  {t['phase']}  next: {', '.join(t['justified']) or '-'}")
    return "\n".join(rows)


def _human_next(data: dict[str, Any]) -> str:
    lines = [f"{data['id']}: {data['phase']}" + ("  (terminal)" if data["terminal"] else "")]
    lines += [f"  ok  → {v['to']}: {v['why']}" for v in data["justified"]]
    lines += [f"  no  → {v['to']}: {v['why']}" for v in data["not_justified"]]
    lines.append(f"  {data['redo']}")
    return "\n".join(lines)


def _human_result(data: dict[str, Any]) -> str:
    if data.get("dry_run"):
        if not data.get("changed", True):
            return f"dry run: {data['task']}: unchanged ({data.get('why', '')}); nothing to write"
        files = ", ".join([f"{c['action']} {c['path']}" for c in data["changes"]]
                          + [f"append to {a['path']}" for a in data.get("appends", [])])
        return (f"dry run: {data['task']}: {data['from']} → {data['to']} ({data['kind']})\n"
                f"  would {files}\n  nothing changed")
    if not data.get("changed"):
        return f"{data['task']}: unchanged ({data.get('why', '')})"
    return f"{data['task']}: {data['from']} → {data['to']} ({data['kind']}, journal {data['journal_id']})"


@click.group()
def task() -> None:
    """Task lifecycle: list, show, next, advance, override, redo."""


@task.command("list")
@root_option
@json_option
def list_cmd(root, as_json):
    """Every task under .rcs/tasks/ with its phase and the moves its artifacts justify."""
    from rcs_tui.state.tasks import list_tasks

    emit({"tasks": list_tasks(resolve_root(root))}, as_json, _human_list)


@task.command("show")
@click.argument("task_id")
@root_option
@json_option
def show_cmd(task_id, root, as_json):
    """One task: state.json, artifacts, the last transcript lines and the next moves."""
    from rcs_tui.state.tasks import load_task, next_report

    path = resolve_root(root)
    t = load_task(path, task_id)
    extra = {k: v for k, v in t.data.items() if k not in ("phase", "actors")}
    docs = {rel: ("missing" if not d.exists else (f"error: {d.error}" if d.error else "ok"))
            for rel, d in t.artifacts.docs.items()}
    data = {
        "id": t.id,
        "dir": str(t.dir.relative_to(path)),
        "phase": t.phase,
        "actors": t.actors,
        "extra": extra,
        "artifacts": {"json": docs, "diff_patch": t.artifacts.diff_patch,
                      "code_files": len(t.artifacts.code_files)},
        "transcript": {"entries": len(t.transcript.entries),
                       "tail": list(t.transcript.entries[-TRANSCRIPT_TAIL:]),
                       "bad_lines": list(t.transcript.bad_lines),
                       "error": t.transcript.error},
        "next": next_report(t),
    }
    emit(data, as_json, lambda d: _human_next(d["next"]) + (
        f"\n  transcript: {plural(d['transcript']['entries'], 'entry')}"
        + (f", lines not JSON: {d['transcript']['bad_lines']}" if d["transcript"]["bad_lines"] else "")))


@task.command("next")
@click.argument("task_id")
@root_option
@json_option
def next_cmd(task_id, root, as_json):
    """Which transitions the artifacts justify now, and why each other one is not."""
    from rcs_tui.state.tasks import load_task, next_report

    emit(next_report(load_task(resolve_root(root), task_id)), as_json, _human_next)


def _run(root: str | None, as_json: bool, dry_run: bool, actor: str | None, build,
         expect_plan: str | None = None) -> None:
    from rcs_tui.state.tasks import apply_plan
    from rcs_tui.state.txn import default_actor

    path = resolve_root(root)
    who = actor or default_actor("cli")
    plan = build(path, who)
    if dry_run:
        emit({"dry_run": True, **plan.describe(path)}, as_json, _human_result)
        return
    emit(apply_plan(path, plan, actor=who, expect_plan=expect_plan), as_json, _human_result)


@task.command("advance")
@click.argument("task_id")
@click.option("--to", "to", required=True, help="Target phase (must be a guarded edge from the current one).")
@_actor
@_dry_run
@root_option
@json_option
def advance_cmd(task_id, to, actor, dry_run, expect_plan, root, as_json):
    """Move along one edge whose guard holds; never skips a phase."""
    from rcs_tui.state.tasks import plan_advance

    _run(root, as_json, dry_run, actor, lambda p, who: plan_advance(p, task_id, to, actor=who),
         expect_plan)


@task.command("override")
@click.argument("task_id")
@click.option("--to", "to", required=True, help="Target phase (must be reachable from the current one).")
@click.option("--reason", default=None, help="Why (required, recorded in transcript.jsonl).")
@_actor
@_dry_run
@root_option
@json_option
def override_cmd(task_id, to, reason, actor, dry_run, expect_plan, root, as_json):
    """Move a task to a phase its guards do not (yet) allow; the reason is required and recorded."""
    from rcs_tui.state.tasks import plan_override

    _run(root, as_json, dry_run, actor, lambda p, who: plan_override(p, task_id, to, reason, actor=who),
         expect_plan)


@task.command("redo")
@click.argument("task_id")
@click.option("--reason", default=None, help="Why (required, recorded in transcript.jsonl).")
@_actor
@_dry_run
@root_option
@json_option
def redo_cmd(task_id, reason, actor, dry_run, expect_plan, root, as_json):
    """Re-run the current phase; a done task reopens at planning."""
    from rcs_tui.state.tasks import plan_redo

    _run(root, as_json, dry_run, actor, lambda p, who: plan_redo(p, task_id, reason, actor=who),
         expect_plan)
