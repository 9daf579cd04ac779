"""Who needs the operator in one project, and why: the one place a snapshot document, the fleet and the
console get their verdicts from.

`judge` turns the parts of a snapshot document that attention reads (`team`, `rp1`, `doctor`) into the
attention lists and a `Verdict` for each entry (the core's `attention`, `comebacks` and `explain`, with the
operator journal read for the clears a member came back after). `rp1_part` and `doctor_part` build those
parts; `world_verdicts` builds them from a loaded World for a viewer that has no snapshot document (the
console). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rcs_tui.core.attention import Verdict, attention, comebacks, dead_worker_findings, explain
from rcs_tui.state.journal import read_journal
from rcs_tui.state.metrics import parse_time
from rcs_tui.views.snapshot_doc import RP1_STATUSES, iso, team_json
from rcs_tui.views.world import World

Lists = dict[str, list[str]]
LISTED = 500  # waiting or failed rp1 runs listed by name at most (past it, `unlisted` counts the rest)


def judge(doc: dict[str, Any], snap: Any, now: float) -> tuple[Lists, list[Verdict]]:
    """The attention lists of a project (its `team`, `rp1` and `doctor` parts read from `doc`) and why each
    entry needs the operator; a member written active after an operator's clear counts as came back."""
    lists = attention(doc, snap, now, parse_time)
    came_back = comebacks(snap, read_journal(snap.root), now, parse_time)
    lists["resurrected"] = sorted(came_back)
    return lists, explain(lists, doc, snap, now, parse_time, came_back)


def rp1_part(source: Any, path: Path | None) -> dict[str, Any]:
    """A project's rp1 runs as the snapshot document carries them: counts by status, the waiting and failed
    runs (the first pending question of each, and since when), the current run and the newest activity."""
    base: dict[str, Any] = {"db": None if path is None else str(path), "status": "missing", "message": None,
                            "counts": dict.fromkeys(RP1_STATUSES, 0), "waiting": [], "failed": [],
                            "unlisted": {"waiting": 0, "failed": 0},
                            "current": None, "last_activity": None}
    if source is None or path is None or not path.exists():
        return base
    newest: float | None = None
    for status in RP1_STATUSES:
        # every waiting and failed run is someone the operator must answer: listed up to a bound that keeps a
        # database of thousands of them readable, and `unlisted` says how many more there are
        feed = source.feed(status=status, limit=LISTED if status in ("waiting", "failed") else 20)
        if not source.state.ok:
            base.update(status=source.state.code, message=source.state.message)
            return base
        base["counts"][status] = feed.total
        for s in feed.runs:
            t = parse_time(s.projection.last_activity)
            newest = t if newest is None or (t is not None and t > newest) else newest
            if status in ("waiting", "failed"):
                prompt = s.projection.pending_prompts[0] if s.projection.pending_prompts else None
                base[status].append({"id": s.run.id, "flow": s.run.flow, "step": s.projection.current_step,
                                     "question": None if prompt is None else str(
                                         next((prompt.data[k] for k in ("message", "question", "prompt", "text")
                                               if isinstance(prompt.data.get(k), str)), ""))[:200],
                                     "since": _since(prompt, s.projection.last_activity)})
    base["unlisted"] = {st: base["counts"][st] - len(base[st]) for st in ("waiting", "failed")}
    current = source.current()
    if current is not None:
        base["current"] = {"id": current.run.id, "flow": current.run.flow, "status": current.status,
                           "step": current.projection.current_step}
    base.update(status="ok", last_activity=iso(newest))
    return base


def _since(prompt: Any, last_activity: str | None) -> str | None:
    """Since when a waiting or failed run needs the operator, as rp1 recorded it: the pending question's time
    (a new question is a new state, to alert about and acknowledge anew), else the run's last activity."""
    at = getattr(prompt, "created_at", None)
    return at if isinstance(at, str) and at else last_activity


def doctor_part(world: World, cache: dict[Any, Any] | None = None, *, journal: bool = True) -> dict[str, Any]:
    """The doctor's findings a snapshot already shows (stale, orphan and root-survivor members, dead
    workers, …), as the snapshot document carries them; `cache` keeps unchanged scopes' findings.
    `journal=False`: without the journal's findings (interrupted actions, leftover temporary files), which
    no verdict reads."""
    from rcs_tui.project.doctor import snapshot_findings

    try:
        findings = [f.as_json() for f in snapshot_findings(world.snapshot, cache, journal=journal)]
    except Exception as exc:  # noqa: BLE001 - a damaged tree must not stop the stream
        return {"count": None, "findings": [], "error": f"{type(exc).__name__}: {exc}"}
    findings += dead_worker_findings(world.teams)
    return {"count": len(findings),
            "findings": [{k: f.get(k) for k in ("id", "kind", "severity", "scope", "subject", "message")}
                         for f in findings]}


def world_verdicts(world: World, now: float, rp1: Callable[[], Any] | None = None, rp1_path: Path | None = None,
                   cache: dict[Any, Any] | None = None) -> tuple[Lists, list[Verdict]]:
    """`judge` for a loaded World: the team, rp1 (`rp1()` opens the source) and doctor parts built here (the
    doctor's member findings only: the journal's feed no verdict)."""
    source = rp1() if rp1 is not None and rp1_path is not None else None
    doc = {"team": team_json(world), "rp1": rp1_part(source, rp1_path),
           "doctor": doctor_part(world, cache, journal=False)}
    return judge(doc, world.snapshot, now)
