"""The versioned snapshot document: `rcs-tui snapshot --json`, each line of `--follow`, and what the fleet reads.

The document is the state snapshot (scopes, members, errors) plus the sections the TUI shows: team,
tasks, rp1 runs, doctor findings, and an `attention` digest (who waits for the user, what failed, which
workers died, stale members, root survivors). `version` is "MAJOR.MINOR": a reader accepts any minor of
its own major (new keys may appear) and treats another major as a contract it does not know.
Building and following documents is `rcs_tui.project.feed`; the attention rules are `rcs_tui.core.attention`.
"""

from __future__ import annotations

from typing import Any

from rcs_tui.core import times
from rcs_tui.views.world import World

CONTRACT_VERSION = "1.3"
CONTRACT_MAJOR = 1
RP1_STATUSES = ("waiting", "failed", "running")
SUMMARY_MODE_KEYS = ("active", "outcome", "phase", "iteration", "tombstone")


_SHARED_MODES: dict[tuple[Any, ...], dict[str, Any]] = {}
SHARED_MODES_MAX = 8192  # distinct mode summaries kept for sharing (past it, each is its own dict)
SHARED_PHASE_MAX = 64  # a phase longer than this is not shared


def _mode_summary(active: bool, outcome: str | None, phase: str | None, iteration: int | None,
                  tombstone: bool) -> dict[str, Any]:
    """One mode's summary; equal summaries are one dict, shared by every scope and project that has it (a
    live fleet keeps a summary per ended mode file of every project, and most are alike). A document is
    never changed after it is built, so nothing writes to a shared summary."""
    key = (active, outcome, phase, iteration, tombstone)
    shared = _SHARED_MODES.get(key)
    if shared is None:
        shared = {"active": active, "outcome": outcome, "phase": phase, "iteration": iteration,
                  "tombstone": tombstone}
        if len(_SHARED_MODES) < SHARED_MODES_MAX and (phase is None or len(phase) <= SHARED_PHASE_MAX):
            shared = _SHARED_MODES.setdefault(key, shared)
    return shared


def summary_scopes(snap: Any) -> list[dict[str, Any]]:
    """`scopes` cut to what a fleet row and its project view show: per scope, the modes that are active or
    ended with an outcome, each with `SUMMARY_MODE_KEYS` only (equal summaries shared, see `_mode_summary`)."""
    out = []
    for scope in (snap.root_scope, *(s for _, s in sorted(snap.sessions.items()))):
        modes = {}
        for m, f in sorted(scope.modes.items()):
            outcome = f.outcome.value
            if f.active or outcome:
                modes[m] = _mode_summary(f.active, outcome, f.phase, f.iteration, f.tombstone)
        if modes:
            out.append({"scope": scope.session_id or "root", "modes": modes})
    return out


def summarise(doc: dict[str, Any], keep: int = 200) -> dict[str, Any]:
    """A document read from a host cut to the same summary (`summary_scopes`; long lists to `keep`)."""
    out = dict(doc)
    scopes = []
    for scope in doc.get("scopes") or []:
        raw = scope.get("modes") if isinstance(scope, dict) else None
        modes = raw if isinstance(raw, dict) else {}
        kept = {m: {k: f.get(k) for k in SUMMARY_MODE_KEYS} for m, f in modes.items()
                if isinstance(f, dict) and (f.get("active") or f.get("outcome"))}
        if kept:
            scopes.append({"scope": scope.get("scope"), "modes": kept})
    out["scopes"] = scopes
    for key in ("tasks", "errors", "badges"):
        if isinstance(doc.get(key), list):
            out[key] = doc[key][:keep]
    doctor = doc.get("doctor")
    if isinstance(doctor, dict) and isinstance(doctor.get("findings"), list):
        out["doctor"] = {**doctor, "findings": doctor["findings"][:keep]}
    return out


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return times.iso(ts)


def contract_major(version: Any) -> int | None:
    """The major number of a "MAJOR.MINOR" version string (None when it is not one)."""
    if not isinstance(version, str):
        return None
    head, _, _ = version.partition(".")
    return int(head) if head.isdigit() else None


def team_json(world: World) -> dict[str, Any]:
    out = {}
    for name, team in sorted(world.teams.items()):
        out[name] = {"phase": team.phase, "task": team.task, "worker_count": team.worker_count,
                     "tasks": dict(team.counts),
                     "workers": [{"name": w.name, "state": w.state, "current_task_id": w.current_task_id,
                                  "last_turn_at": w.last_turn_at, "alive": w.alive, "dead_reason": w.dead_reason}
                                 for w in team.workers]}
    return out


def tasks_json(world: World) -> list[dict[str, Any]]:
    return [{"id": t.id, "phase": t.phase, "terminal": t.terminal, "error": t.error, "updated_at": iso(t.mtime)}
            for t in world.tasks]


def same_content(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two documents say the same thing (their sequence number and time aside)."""
    skip = ("seq", "taken_at")
    return {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
