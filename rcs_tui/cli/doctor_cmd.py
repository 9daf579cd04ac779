"""`rcs-tui doctor` (find and repair stale state through the core) and `rcs-tui locate` (paths in use)."""

from __future__ import annotations

import sys
from typing import Any, cast

import click

from rcs_tui.cli.common import (
    CliError,
    Finite,
    echo_text,
    emit,
    json_option,
    resolve_root,
    root_option,
    rp1_paths,
    settings,
)
from rcs_tui.core import error_kinds as kinds
from rcs_tui.core.exit_codes import FINDINGS_REMAIN, OK
from rcs_tui.core.words import plural
from rcs_tui.views.text import sanitize


@click.command("doctor")
@click.option("--fix", "do_fix", is_flag=True, help="Apply every proposed repair without asking.")
@click.option("--only", "only", multiple=True, help="Repair only these finding ids (repeatable).")
@click.option("--expect-plan", "expect_plan", multiple=True, metavar="FINGERPRINT",
              help="With --fix: repair only if the repairs planned now have exactly these fingerprints (the "
                   "`plan_fingerprint` of each repair you confirmed; repeatable); otherwise write nothing, exit 1.")
@click.option("--dry-run", "dry_run", is_flag=True,
              help="With --fix: print each repair it would apply and the files it would change (with the "
                   "`plan_fingerprint` to confirm with --expect-plan); write nothing.")
@click.option("--session-id", "session_id", default=None)
@click.option("--db", "db", default=None, help="rp1 database (else $RP1_DB, else ~/.rp1/rp1.db).")
@click.option("--idle-minutes", type=Finite(0, min_open=True), default=60.0, show_default=True,
              help="Report rp1 runs idle for longer than this.")
@root_option
@json_option
def doctor(do_fix, only, expect_plan, dry_run, session_id, db, idle_minutes, root, as_json):
    """Find stale members, orphans, root survivors, dead pointers/owners/workers and idle rp1 runs.

    \b
    Exit status:
      0  no findings (or only informational ones) remain
      3  findings remain (after --fix: those it could not repair or that did not hold)
      1  error (e.g. no .rcs/ directory); 2  usage error
    """
    from rcs_tui.files.collector import one_shot
    from rcs_tui.project.doctor import diagnose, fix
    from rcs_tui.state.ops import PlanReads

    one_shot()
    root_path = resolve_root(root)
    db = rp1_paths(db)[0]
    if dry_run and not do_fix:
        raise click.UsageError("--dry-run goes with --fix (plain `doctor` already writes nothing)")
    if as_json and not (do_fix or only or expect_plan):
        # the report alone: made on two cores for thousands of sessions
        from rcs_tui.project.doctor_split import report as split_report

        listed = split_report(root_path, session_id, rp1_db=db, idle_seconds=idle_minutes * 60)
        emit({"findings": [s.item for s in listed], "fix": None}, True)
        return remaining_code(listed)
    reads = PlanReads()  # the plans shown are made from the diagnosis's read of the tree
    findings = diagnose(root_path, session_id, rp1_db=db, idle_seconds=idle_minutes * 60, reads=reads)
    if expect_plan and do_fix and not dry_run:
        _confirm_repairs(root_path, findings, only, expect_plan)
    unknown = sorted(set(only) - {f.id for f in findings})
    if unknown:
        raise CliError(f"--only: no current finding {', '.join(map(repr, unknown))}; nothing was changed "
                       f"(findings now: {', '.join(f.id for f in findings) or 'none'})", kinds.NOT_FOUND)
    report: dict[str, Any] = {"findings": [f.as_json(root_path, with_plan=True, reads=reads) for f in findings],
                              "fix": None}
    repairable = [f for f in findings if f.plan is not None and (not only or f.id in only)]
    if dry_run:
        report["dry_run"] = True
        report["would_repair"] = [f.id for f in repairable]
        emit(report, as_json, _human)
        return remaining_code(findings)
    apply = do_fix
    if not do_fix and repairable and not as_json and sys.stdin.isatty():
        shown = cast("dict[str, Any]", sanitize({"findings": report["findings"], "fix": None}))  # a dict stays one
        echo_text(_human(shown))
        apply = click.confirm(f"Apply {plural(len(repairable), 'repair')}?", default=False)
        if not apply:
            return remaining_code(findings)
    if apply and repairable:
        report["fix"] = fix(root_path, findings, list(only) or None, session_id=session_id, rp1_db=db,
                            expected=list(expect_plan) if expect_plan else None)
        findings = diagnose(root_path, session_id, rp1_db=db, idle_seconds=idle_minutes * 60)
        report["remaining"] = [f.id for f in findings]
    emit(report, as_json, _human)
    return remaining_code(findings)




def _confirm_repairs(root, findings: list, only: tuple[str, ...], expected: tuple[str, ...]) -> None:
    """Refuse unless the repairs chosen now are exactly the ones confirmed (by plan fingerprint)."""
    from rcs_tui.state.ops import PlanReads
    from rcs_tui.state.txn import PLAN_CHANGED

    fresh = []
    reads = PlanReads()  # every repair planned now from one read of the files it touches
    for f in findings:
        if f.plan is not None and (not only or f.id in only):
            try:
                fresh.append(f.plan(reads=reads).plan.fingerprint(root))
            except Exception:  # noqa: BLE001 - a repair that cannot be planned now is not the confirmed one
                fresh.append(f"unplannable:{f.id}")
    if sorted(fresh) != sorted(expected) or (only and set(only) - {f.id for f in findings}):
        raise CliError(PLAN_CHANGED, kinds.PLAN_CHANGED)


def _would(finding: dict[str, Any]) -> str:
    """What a dry run's repair would change, file by file, and the fingerprint to confirm it with."""
    plan = finding.get("plan")
    if not plan:
        return f"  would not be applied: {finding.get('plan_error') or 'no plan'}"
    changes = [f"    {c['path']}: {c['action']} ({c['why']})" for c in plan.get("changes", [])]
    return "\n".join([f"  would apply: {plan['action']}", *changes, f"    plan {plan['plan_fingerprint']}"])


def remaining_code(findings: list) -> int:
    """The exit status: FINDINGS_REMAIN while any finding that is more than informational remains, else OK."""
    return FINDINGS_REMAIN if any(f.severity != "info" for f in findings) else OK


def _human(report: dict[str, Any]) -> str:
    if not report["findings"]:
        return "doctor: no problems found"
    lines = []
    would = set(report.get("would_repair") or ())
    for f in report["findings"]:
        repair = f"  → {f['repair']}" if f["repair"] else \
            f"  (no automatic repair) {f['advice']}" if f.get("advice") else "  (no automatic repair)"
        lines.append(f"[{f['severity']}] {f['id']}\n  {f['message']}\n{repair}")
        if f["id"] in would:
            lines.append(_would(f))
    if report.get("dry_run"):
        lines.append(f"dry run: {plural(len(would), 'repair')} would be applied; nothing was written")
    fix = report.get("fix")
    if fix:
        for item in fix["applied"]:
            via = f" (journal {item['journal_id']})" if item.get("journal_id") else ""
            lines.append(f"repaired {item['id']}{via}: "
                         f"{'held' if item['held'] else 'DID NOT HOLD — something rewrote it'}")
        for item in fix["failed"]:
            lines.append(f"refused {item['id']}: {item['error']}")
    return "\n".join(lines)


@click.command("locate")
@click.option("--session-id", "session_id", default=None)
@click.option("--db", "db", default=None)
@root_option
@json_option
def locate(session_id, db, root, as_json):
    """Print the paths rcs-tui uses: root, state dir, session, rp1 db, journal, config."""
    from rcs_tui.config.paths import config_path
    from rcs_tui.config.settings import effective_rp1
    from rcs_tui.files.layout import Layout
    from rcs_tui.rp1.db import default_db_path
    from rcs_tui.state.session import resolve_session

    layout = Layout(resolve_root(root))
    db = rp1_paths(db)[0]
    roots = effective_rp1(settings(), layout.root)["rp1_plugin_roots"]
    res = resolve_session(layout, session_id)
    data = {
        "root": str(layout.root),
        "state_dir": str(layout.state),
        "session": {"id": res.session_id, "source": res.source,
                    "dir": str(layout.scope_dir(res.session_id)),
                    "stale_dead_pointer": res.pointer.stale_dead},
        "tasks_dir": str(layout.tasks),
        "team_dir": str(layout.team),
        "rp1_db": str(default_db_path(db)),
        "rp1_plugin_roots": [r["path"] for r in roots],
        "rp1_plugin_root_sources": [r["source"] for r in roots],  # as `config` says where each comes from
        "journal": str(layout.journal),
        "hud_config": str(layout.hud_config),
        "metrics": str(layout.metrics),
        "config": str(config_path()),
    }
    emit(data, as_json, _human_locate)


def _human_locate(data: dict) -> str:
    lines = []
    for key, value in data.items():
        if key == "rp1_plugin_root_sources":
            continue
        if key == "rp1_plugin_roots":
            value = [f"{p} [{s}]" for p, s in zip(value, data["rp1_plugin_root_sources"], strict=True)]
        if isinstance(value, dict):
            value = f"{value['id'] or 'root'} ({value['source']}) {value['dir']}"
        elif isinstance(value, list):
            value = ", ".join(value)
        lines.append(f"{key:17} {value}")
    return "\n".join(lines)
