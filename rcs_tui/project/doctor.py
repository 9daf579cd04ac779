"""The doctor: find stale state that hurts users and propose repairs that go through the core.

Repairs are planned lazily (a factory per finding) so each one is planned against the files as they
are after the previous repair, applied through the same transaction path as every other write, and
then checked by re-diagnosing: a repair that did not hold is reported as such. The plans shown for one
diagnosis share their reads (`PlanReads`), so showing N repairs reads each file once, not N times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rcs_tui.core.attention import dead_worker_findings
from rcs_tui.core.lifecycle import handoff_softeners
from rcs_tui.core.words import plural
from rcs_tui.files.io import digest, rel_of
from rcs_tui.files.layout import Layout
from rcs_tui.state.metrics import parse_time
from rcs_tui.state.ops import ROOT_SCOPE, Operation, PlanReads, plan_clear, plan_delete_pointer, plan_drop_entry
from rcs_tui.state.reader import compute_members, read_snapshot
from rcs_tui.state.session import Resolution, process_matches
from rcs_tui.state.snapshot import FileError, Snapshot
from rcs_tui.state.txn import Plan

IDLE_RUN_SECONDS = 3600.0
SEVERITY_ORDER = {"error": 0, "warn": 1, "info": 2}  # findings are listed most severe first
OWNER_PID_KEYS = (("owner_pid", "owner_pid_start_ticks"), ("pid", "pid_start_ticks"))


@dataclass(frozen=True)
class Finding:
    """One problem, why it matters, and (if safe) how the core would repair it."""

    id: str
    kind: str
    severity: str
    scope: str
    subject: str
    message: str
    repair: str | None = None
    plan: Callable[..., Operation] | None = None  # plan(): against the files now; plan(reads=r): sharing r
    advice: str | None = None  # what the operator can do where no automatic repair exists

    def as_json(self, root: Path | None = None, with_plan: bool = False,
                reads: PlanReads | None = None) -> dict[str, Any]:
        """`reads`: one `PlanReads` shared by the plans of the findings shown together."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "severity": self.severity, "scope": self.scope,
                               "subject": self.subject, "message": self.message, "repair": self.repair,
                               "advice": self.advice}
        if with_plan and self.plan is not None and root is not None:
            try:
                out["plan"] = self.plan(reads=reads).plan.describe(root)
            except Exception as exc:  # noqa: BLE001 - a plan that cannot be built is itself a finding detail
                out["plan_error"] = str(exc)
        return out


def _scope_name(sid: str | None) -> str:
    return "root" if sid is None else sid


def _member_findings(snap: Snapshot, layout: Layout, sid: str | None,
                     tombstoned_elsewhere: Collection[str] = ()) -> list[Finding]:
    """Stale, orphaned and root-survivor members as seen from one scope (duplicates are dropped by the caller).
    `tombstoned_elsewhere`: see `compute_members` (a snapshot holding part of the sessions)."""
    root = snap.root
    res = snap.resolution if sid == snap.session_id else Resolution(sid, "explicit", snap.resolution.pointer)
    current = sid == snap.session_id
    out: list[Finding] = []
    for m in compute_members(layout, res, snap.root_scope, snap.sessions, tombstoned_elsewhere):
        where = _scope_name(m.scope)
        fid = f"{m.health}:{where}:{m.mode}"
        target = ROOT_SCOPE if m.scope is None else m.scope
        if m.health == "stale" and m.file is not None and m.file.error:
            # An unreadable file is no evidence (it may be mid-write, or replaced by a FIFO): report, never repair.
            out.append(Finding(fid, "unreadable-member", "warn", where, m.mode,
                               f"{m.mode} is in the canonical set of {where} but its mode file could not be "
                               f"read ({m.file.error}); not repaired: fix or clear the file by hand"))
        elif m.health == "stale":
            out.append(Finding(fid, "stale-member", "warn", where, m.mode,
                               f"{m.mode} is in the canonical set of {where} but {m.reason.split('but ')[-1]}",
                               "drop the stale canonical entry (the mode file is kept)",
                               partial(plan_drop_entry, root, m.mode, target)))
        elif m.health == "orphan":
            out.append(Finding(fid, "orphan", "warn", where, m.mode,
                               f"{m.mode} has an active mode file in {where} that no canonical entry lists",
                               "clear the orphaned mode file",
                               partial(plan_clear, root, m.mode, target)))
        elif m.health == "root-survivor" and (current or sid is None or _pointed(snap, sid)):
            out.append(Finding(fid, "root-survivor", "error", "root", m.mode,
                               f"root {m.mode}-state.json is still active ({m.reason}); it can resurrect "
                               f"{m.mode} after a clear", "clear the root copy",
                               partial(plan_clear, root, m.mode, ROOT_SCOPE)))
    return out


def _pointed(snap: Snapshot, sid: str | None) -> bool:
    """A stale-dead session.json still names the session the operator was in: its root survivors resurrect
    modes there as soon as the session is current again, so they are findings there too."""
    pointer = snap.resolution.pointer
    return bool(pointer.stale_dead) and sid is not None and sid == pointer.session_id


def _softener_findings(scope: Any, sid: str | None) -> list[Finding]:
    """Ended modes whose handoff carries an optional follow-up softener (a pure function of the files)."""
    out: list[Finding] = []
    for mode, f in sorted((scope.modes if scope else {}).items()):
        if not f.active and f.outcome.terminal:
            hits = handoff_softeners(f.data)
            if hits:
                phrases = "; ".join(f"{k}: {', '.join(v)}" for k, v in hits.items())
                out.append(Finding(f"softener:{_scope_name(sid)}:{mode}", "softener", "info", _scope_name(sid), mode,
                                   f"{mode} ended ({f.outcome.display}) with an optional follow-up softener "
                                   f"({phrases}); the terminal handoff should state the outcome and next owner"))
    return out


def _dead_owner_findings(root: Path, scope: Any, sid: str | None) -> list[Finding]:
    """Active modes whose recorded owner process is gone (checked every time: a process dies without a write)."""
    out: list[Finding] = []
    for mode, f in sorted((scope.modes if scope else {}).items()):
        if not f.active:
            continue
        for pid_key, ticks_key in OWNER_PID_KEYS:
            if pid_key in (f.data or {}):
                alive, why = process_matches(f.data.get(pid_key), f.data.get(ticks_key))
                if not alive:
                    out.append(Finding(f"dead-owner:{_scope_name(sid)}:{mode}", "dead-owner", "error",
                                       _scope_name(sid), mode,
                                       f"{mode} is marked active but its owner process is gone ({why})",
                                       "clear the mode",
                                       partial(plan_clear, root, mode, ROOT_SCOPE if sid is None else sid)))
                break
    return out


FindingCache = dict[tuple[str, str | None], tuple[tuple[Any, ...], list[Finding]]]


def _state_findings(snap: Snapshot, cache: FindingCache | None = None) -> list[Finding]:
    """State findings over every scope. `cache` (kept by a caller that diagnoses the same project again and
    again) reuses a scope's findings while the scopes they were computed from are unchanged (the same objects,
    or equal ones: the root is re-read every time), so a one-file change re-diagnoses one session, not all."""
    layout = Layout(snap.root)
    scopes: list[str | None] = [None, *sorted(snap.sessions)]
    if cache is None:
        members, others = _scope_findings(snap, layout, scopes, set())
        return members + others + _pointer_findings(snap) + _error_findings(snap.root, snap.errors)

    def cached(kind: str, sid: str | None, inputs: tuple[Any, ...],
               compute: Callable[[], list[Finding]]) -> list[Finding]:
        if cache is None:
            return compute()
        hit = cache.get((kind, sid))
        if hit is not None and len(hit[0]) == len(inputs) and all(
                a is b or a == b for a, b in zip(hit[0], inputs, strict=True)):
            return hit[1]
        value = compute()
        cache[(kind, sid)] = (inputs, value)
        return value

    out: list[Finding] = []
    seen: set[str] = set()
    for sid in scopes:
        scope = snap.scope(sid)
        # the root's view depends on every session (tombstones); a session's on itself and the root
        inputs: tuple[Any, ...] = ((snap.root_scope, *snap.sessions.values()) if sid is None
                                   else (snap.root_scope, scope))
        inputs += (sid == snap.session_id, _pointed(snap, sid))
        for f in cached("members", sid, inputs, partial(_member_findings, snap, layout, sid)):
            if f.id not in seen:
                seen.add(f.id)
                out.append(f)
    for sid in scopes:
        scope = snap.scope(sid)
        out += _dead_owner_findings(snap.root, scope, sid)
        out += cached("softeners", sid, (scope,), partial(_softener_findings, scope, sid))
    if cache is not None:
        live = set(scopes)
        for key in [k for k in cache if k[1] not in live]:
            del cache[key]
    return out + _pointer_findings(snap) + _error_findings(snap.root, snap.errors)


def _scope_findings(snap: Snapshot, layout: Layout, sids: list[str | None], seen: set[str],
                    tombstoned_elsewhere: Collection[str] = ()) -> tuple[list[Finding], list[Finding]]:
    """The member findings (each id once: `seen` holds those listed before) and the owner and softener
    findings of these scopes, in the order `_state_findings` lists them."""
    members: list[Finding] = []
    for sid in sids:
        for f in _member_findings(snap, layout, sid, tombstoned_elsewhere):
            if f.id not in seen:
                seen.add(f.id)
                members.append(f)
    others: list[Finding] = []
    for sid in sids:
        scope = snap.scope(sid)
        others += _dead_owner_findings(snap.root, scope, sid)
        others += _softener_findings(scope, sid)
    return members, others


def _pointer_findings(snap: Snapshot) -> list[Finding]:
    if not snap.resolution.pointer.stale_dead:
        return []
    p = snap.resolution.pointer
    return [Finding("stale-dead-pointer", "stale-dead-pointer", "warn", "root", "session.json",
                    f"session.json points at {p.session_id}, but {p.reason.removeprefix('stale-dead: ')}",
                    "remove the stale-dead session.json", partial(plan_delete_pointer, snap.root))]


def _error_findings(root: Path, errors: Iterable[FileError]) -> list[Finding]:
    out = []
    for err in errors:
        rel = rel_of(root, err.path)
        out.append(Finding(f"file-error:{rel}", "file-error", "warn", "-", rel, f"{rel}: {err.reason}"))
    return out


def _journal_findings(root: Path) -> list[Finding]:
    """Operator actions whose process died mid-way, journal lines that were skipped, leftover temp files."""
    from rcs_tui.files.fsafe import Refused, Tree, leftover_temps
    from rcs_tui.files.io import digest
    from rcs_tui.state.journal import find_interrupted

    out = []
    pending, warnings = find_interrupted(root)
    tree = Tree(root)
    for entry in pending:
        applied = 0
        for f in entry["files"]:
            try:
                data = tree.read(f["path"])
            except (Refused, OSError):
                continue
            applied += (digest(data) if data is not None else None) == f.get("after_sha")

        def rollback(e: dict[str, Any] = entry, reads: PlanReads | None = None) -> Operation:
            from rcs_tui.state.redo import undo_entry_operation  # here: redo imports the operations module

            return undo_entry_operation(root, e)

        out.append(Finding(f"interrupted:{entry['id']}", "interrupted-action", "error", "journal",
                           str(entry.get("action")),
                           f"operator action '{entry.get('action')}' (journal {entry['id']}) was interrupted: "
                           f"{applied} of {plural(len(entry['files']), 'file')} changed",
                           "roll back to the before-images",
                           rollback))
    for i, warning in enumerate(warnings):
        out.append(Finding(f"journal-line:{i}", "journal-line", "warn", "journal", "journal", warning))
    temps = leftover_temps(root)
    if temps:
        out.append(Finding("leftover-temps", "leftover-temp", "warn", "-", plural(len(temps), "file"),
                           f"temp files left by an interrupted rcs-tui write: {', '.join(temps[:5])}"
                           + (" …" if len(temps) > 5 else ""), "remove them",
                           partial(_temp_cleanup, temps)))
    return out


def _temp_cleanup(temps: list[str], reads: PlanReads | None = None) -> Operation:
    return TempCleanup(Plan("remove leftover temp files", summary={"remove": temps}))


class TempCleanup(Operation):
    """Removes rcs-tui's own leftover temp files under the store lock (not journaled: they hold no state)."""

    def run(self, root: Path, actor: str | None = None, expect_plan: str | None = None) -> dict[str, Any]:
        from rcs_tui.files.fsafe import Tree, remove_temp
        from rcs_tui.state.lock import LockBusy, store_lock
        from rcs_tui.state.txn import TxnError, default_actor

        self.plan.confirm(root, expect_plan)
        try:
            with store_lock(Tree(root), actor or default_actor()):
                for rel in self.plan.summary["remove"]:
                    remove_temp(root, rel)
        except LockBusy as exc:
            raise TxnError(str(exc), kind=LockBusy.error_kind) from None
        return {"removed": self.plan.summary["remove"], "journal_id": None}


def _team_findings(root: Path) -> list[Finding]:
    from rcs_tui.state.team import read_teams

    out = []
    layout = Layout(root)
    for name, team in sorted(read_teams(layout.team, within=layout.rcs).items()):
        for path, reason in team.errors:
            rel = rel_of(root, path)
            out.append(Finding(f"file-error:{rel}", "file-error", "warn", f"team {name}", rel, f"{rel}: {reason}"))
        out += [Finding(**f) for f in dead_worker_findings({name: team})]
    return out


def _rp1_findings(root: Path, db: str | None, now: float, idle_s: float) -> list[Finding]:
    from rcs_tui.rp1.source import Rp1Source

    source = Rp1Source(db, root=root)
    out = []
    for status in ("running", "waiting"):
        feed = source.feed(status=status, limit=200)
        for summary in feed.runs:
            last = parse_time(summary.projection.last_activity)
            if last is not None and now - last > idle_s:
                mins = int((now - last) // 60)
                run = summary.run
                out.append(Finding(f"idle-run:{run.id}", "idle-run", "info", "rp1", f"{run.flow} {run.id[:8]}",
                                   f"rp1 run {run.id} ({run.flow}) is {status} but idle for {mins} min; "
                                   "rp1 marks it inactive after 24 h", None))
    return out


def diagnose(root: Path, session_id: str | None = None, *, rp1_db: str | None = None,
             now: float | None = None, idle_seconds: float = IDLE_RUN_SECONDS,
             reads: PlanReads | None = None) -> list[Finding]:
    """Every finding for this project, most severe first. `reads`: given, it takes this diagnosis's read of
    the tree, so the plans shown with these findings are made from the same read."""
    snap = read_snapshot(root, session_id)
    if reads is not None:
        reads.use(snap)
    findings = _state_findings(snap) + _journal_findings(root) + _team_findings(root)
    findings += _rp1_findings(root, rp1_db, now or time.time(), idle_seconds)
    return sorted(findings, key=listed_order)


def listed_order(f: Finding) -> tuple[int, str, str]:
    """Where a finding is listed: by severity (most severe first), then kind, then id."""
    return SEVERITY_ORDER.get(f.severity, 3), f.kind, f.id


def fix(root: Path, findings: list[Finding], ids: list[str] | None = None, *, session_id: str | None = None,
        actor: str | None = None, rp1_db: str | None = None, expected: list[str] | None = None) -> dict[str, Any]:
    """Apply the repairs of the chosen findings (all repairable ones by default), then prove they held.

    `expected`: the plan fingerprints the operator confirmed. Each repair is planned again right before it
    is applied and must be one of them (its files are then checked again under the store lock, so what
    is written is what was confirmed); the first that is not stops it and every later repair.
    """
    chosen = [f for f in findings if f.plan is not None and (ids is None or f.id in ids)]
    applied: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    confirmed = None if expected is None else list(expected)
    rollbacks = [f for f in chosen if f.kind == "interrupted-action"]
    if rollbacks:
        # An interrupted action leaves a half-changed tree whose other findings are artefacts of it:
        # roll those back first, then diagnose again and repair only what is still wrong.
        if not _run_repairs(root, rollbacks, actor, applied, failed, confirmed):
            return _outcome(root, session_id, rp1_db, applied, failed)
        fresh = diagnose(root, session_id, rp1_db=rp1_db)
        chosen = [f for f in fresh if f.plan is not None and f.kind != "interrupted-action"
                  and (ids is None or f.id in ids)]
    _run_repairs(root, chosen, actor, applied, failed, confirmed)
    return _outcome(root, session_id, rp1_db, applied, failed)


def _outcome(root: Path, session_id: str | None, rp1_db: str | None, applied: list[dict[str, Any]],
             failed: list[dict[str, Any]]) -> dict[str, Any]:
    after = {f.id for f in diagnose(root, session_id, rp1_db=rp1_db)}
    for item in applied:
        item["held"] = item["id"] not in after
    return {"applied": applied, "failed": failed, "remaining": sorted(after)}


def _run_repairs(root: Path, chosen: list[Finding], actor: str | None, applied: list[dict[str, Any]],
                 failed: list[dict[str, Any]], confirmed: list[str] | None) -> bool:
    """Plan and apply each repair in turn; False when one was not a confirmed plan (it and the rest are
    not applied, each saying why)."""
    from rcs_tui.state.txn import PLAN_CHANGED

    rewound: dict[Path, tuple[str | None, str | None]] = {}  # files this run wrote: (what it wrote, before it)
    for n, finding in enumerate(chosen):
        try:
            op = finding.plan()  # type: ignore[misc]
            fingerprint = op.plan.fingerprint(root) if confirmed is not None else None
            # planned on what the earlier repairs of this run wrote: checked as planned on what was confirmed
            as_confirmed = op.plan.fingerprint(root, rewound) if confirmed is not None else None
            if confirmed is not None and as_confirmed not in confirmed:
                failed.append({"id": finding.id, "kind": "plan_changed",
                               "error": f"{PLAN_CHANGED} (the repair planned now is not one you confirmed)"})
                failed += [{"id": f.id, "kind": "not_run", "error": f"not run: the repair of {finding.id} "
                            "was no longer the plan you confirmed"} for f in chosen[n + 1:]]
                return False
            if confirmed is not None and as_confirmed is not None:
                confirmed.remove(as_confirmed)
            result = op.run(root, actor=actor, expect_plan=fingerprint)
            for change in op.plan.changes:
                data = change.data() if change.action == "write" else None
                rewound[change.path] = (None if data is None else digest(data),
                                        rewound.get(change.path, (None, change.expect))[1])
            applied.append({"id": finding.id, "journal_id": result.get("journal_id")})  # None: nothing to change
        except Exception as exc:  # noqa: BLE001 - report each refusal, continue with the rest
            failed.append({"id": finding.id, "error": str(exc)})
    return True


def snapshot_findings(snap: Snapshot, cache: FindingCache | None = None, *, journal: bool = True) -> list[Finding]:
    """The findings a snapshot already read (and the journal) show: what a live view recomputes on a change.
    `cache`: see `_state_findings`; `journal=False` leaves out the journal's and the leftover temporary
    files' findings (no verdict of who needs the operator reads them)."""
    return _state_findings(snap, cache) + (_journal_findings(snap.root) if journal else [])
