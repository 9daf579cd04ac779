"""The versioned snapshot document: `rcs-tui snapshot --json`, each line of `--follow`, and what the fleet reads.

The document is the state snapshot (scopes, members, errors) plus the sections the TUI shows: team,
tasks, rp1 runs, doctor findings, and an `attention` digest (who waits for the user, what failed, which
workers died, stale members, root survivors). `version` is "MAJOR.MINOR": a reader accepts any minor of
its own major (new keys may appear) and treats another major as a contract it does not know.
`SnapshotFeed` keeps one project's loaders open so a follower rebuilds only what changed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rcs_tui.views.snapshot_json import snapshot_json
from rcs_tui.views.world import World, WorldLoader

CONTRACT_VERSION = "1.1"
CONTRACT_MAJOR = 1
WAITING_OUTCOMES = frozenset({"askuserQuestion", "userinterlude"})
RP1_STATUSES = ("waiting", "failed", "running")
COMEBACK_WINDOW = 15 * 60  # a mode active again this soon after an operator cleared it "came back"
SUMMARY_MODE_KEYS = ("active", "outcome", "phase", "iteration", "tombstone")


def summary_scopes(snap: Any) -> list[dict[str, Any]]:
    """`scopes` cut to what a fleet row and its project view show: per scope, the modes that are active or
    ended with an outcome, each with `SUMMARY_MODE_KEYS` only."""
    out = []
    for scope in (snap.root_scope, *(s for _, s in sorted(snap.sessions.items()))):
        modes = {}
        for m, f in sorted(scope.modes.items()):
            outcome = f.outcome.value
            if f.active or outcome:
                modes[m] = {"active": f.active, "outcome": outcome, "phase": f.phase, "iteration": f.iteration,
                            "tombstone": f.tombstone}
        if modes:
            out.append({"scope": scope.session_id or "root", "modes": modes})
    return out


def summarise(doc: dict[str, Any], keep: int = 200) -> dict[str, Any]:
    """A document read from a host cut to the same summary (`summary_scopes`; long lists to `keep`)."""
    out = dict(doc)
    scopes = []
    for scope in doc.get("scopes") or []:
        modes = scope.get("modes") if isinstance(scope, dict) and isinstance(scope.get("modes"), dict) else {}
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
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def contract_major(version: Any) -> int | None:
    """The major number of a "MAJOR.MINOR" version string (None when it is not one)."""
    if not isinstance(version, str):
        return None
    head, _, _ = version.partition(".")
    return int(head) if head.isdigit() else None


def _team_json(world: World) -> dict[str, Any]:
    out = {}
    for name, team in sorted(world.teams.items()):
        out[name] = {"phase": team.phase, "task": team.task, "worker_count": team.worker_count,
                     "tasks": dict(team.counts),
                     "workers": [{"name": w.name, "state": w.state, "current_task_id": w.current_task_id,
                                  "last_turn_at": w.last_turn_at, "alive": w.alive, "dead_reason": w.dead_reason}
                                 for w in team.workers]}
    return out


def _tasks_json(world: World) -> list[dict[str, Any]]:
    return [{"id": t.id, "phase": t.phase, "terminal": t.terminal, "error": t.error, "updated_at": iso(t.mtime)}
            for t in world.tasks]


class SnapshotFeed:
    """One project's snapshot documents, rebuilt section by section as files change."""

    def __init__(self, root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                 clock: Callable[[], float] = time.time, with_doctor: bool = True, summary: bool = False) -> None:
        """`summary`: documents carry `summary_scopes` instead of every mode file of every scope (what the
        fleet keeps per project; no per-scope JSON is cached then)."""
        self.loader = WorldLoader(root, session_id=session_id, rp1_db=rp1_db if rp1_db is not None else True,
                                  clock=clock)
        self.clock = clock
        self.with_doctor = with_doctor
        self.summary = summary
        self._rp1_source: Any = None
        self._rp1: dict[str, Any] | None = None
        self._doctor: dict[str, Any] | None = None
        self._scopes: dict[int, Any] = {}
        self._findings: dict[Any, Any] = {}  # per-scope doctor findings, reused while a scope is unchanged
        self.seq = 0

    @property
    def root(self) -> Path:
        return self.loader.root

    def document(self, changed: Iterable[Path] | None = None) -> dict[str, Any]:
        """The next document in sequence (`seq` counts from 1)."""
        doc = self.build(changed)
        self.seq += 1
        doc["seq"] = self.seq
        return doc

    def first_look(self) -> dict[str, Any]:
        """A quick first document from the root and the current session only (the other sessions, and the
        doctor, come with the next `document()`), marked `"partial": true` and without a sequence number: what
        a fleet row shows while the full reads of many projects queue up. It never leaves this process."""
        world = self.loader.load(defer=("state",))
        self._rp1 = self._rp1_json()
        self._doctor = {"count": None, "findings": []}  # the doctor scans the whole tree: the full read runs it
        doc = self._build(world)
        self._doctor = None
        doc["partial"] = True
        return doc

    def build(self, changed: Iterable[Path] | None = None) -> dict[str, Any]:
        """A full document without a sequence number; `changed` (paths) limits the re-reading to their sections."""
        paths = None if changed is None else list(changed)
        sections = self.loader.sections_for(paths) if paths is not None else None
        if self.loader.deferred:  # after first_look(): the full read (it sees every change so far)
            world = self.loader.world
            while self.loader.deferred:
                world = self.loader.load_deferred() or world
            sections = None
        else:
            world = self.loader.load(paths)
        if sections is None or "rp1" in sections or self._rp1 is None:
            self._rp1 = self._rp1_json()
        if sections is None or sections & {"state", "team"} or self._doctor is None:
            self._doctor = self._doctor_json(world)
        return self._build(world)

    # -- sections ---------------------------------------------------------------------------
    def _rp1_json(self) -> dict[str, Any]:
        path = self.loader.rp1_path
        base: dict[str, Any] = {"db": None if path is None else str(path), "status": "missing", "message": None,
                                "counts": dict.fromkeys(RP1_STATUSES, 0), "waiting": [], "failed": [],
                                "current": None, "last_activity": None}
        if path is None or not path.exists():
            return base
        if self._rp1_source is None:
            from rcs_tui.rp1.machines import MachineRegistry
            from rcs_tui.rp1.source import Rp1Source

            self._rp1_source = Rp1Source(path, root=self.root, machines=MachineRegistry({}))
        source = self._rp1_source
        newest: float | None = None
        from rcs_tui.state.metrics import parse_time

        for status in RP1_STATUSES:
            feed = source.feed(status=status, limit=20)
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
                                                   if isinstance(prompt.data.get(k), str)), ""))[:200]})
        current = source.current()
        if current is not None:
            base["current"] = {"id": current.run.id, "flow": current.run.flow, "status": current.status,
                               "step": current.projection.current_step}
        base.update(status="ok", last_activity=iso(newest))
        return base

    def _doctor_json(self, world: World) -> dict[str, Any]:
        if not self.with_doctor:
            return {"count": None, "findings": []}
        from rcs_tui.state.doctor import snapshot_findings

        try:
            findings = [f.as_json() for f in snapshot_findings(world.snapshot, self._findings)]
        except Exception as exc:  # noqa: BLE001 - a damaged tree must not stop the stream
            return {"count": None, "findings": [], "error": f"{type(exc).__name__}: {exc}"}
        findings += _dead_worker_findings(world)
        return {"count": len(findings),
                "findings": [{k: f.get(k) for k in ("id", "kind", "severity", "scope", "subject", "message")}
                             for f in findings]}

    def _build(self, world: World) -> dict[str, Any]:
        snap = world.snapshot
        doc = {"version": CONTRACT_VERSION, "kind": "snapshot", "seq": 0, "taken_at": iso(self.clock()),
               "has_rcs": self.loader.layout.rcs.is_dir()}
        if self.summary:
            doc.update(snapshot_json(snap, with_scopes=False), scopes=summary_scopes(snap))
        else:
            doc.update(snapshot_json(snap, self._scopes))
        health = Counter(m.health for m in snap.members)
        tasks = _tasks_json(world)
        rp1 = self._rp1 or {}
        doc.update({
            "health": dict(sorted(health.items())),
            "team": _team_json(world),
            "tasks": tasks,
            "tasks_by_phase": dict(sorted(Counter(t["phase"] or "unreadable" for t in tasks).items())),
            "rp1": rp1,
            "doctor": self._doctor,
            "badges": [b.text(world.root) for b in world.badges],
        })
        doc["attention"] = attention(doc, snap)
        doc["attention"]["resurrected"] = resurrected(snap, self.clock())
        times = [world.newest_write, *(t.mtime for t in world.tasks)]
        from rcs_tui.state.metrics import parse_time

        times.append(parse_time(rp1.get("last_activity")))
        known = [t for t in times if t is not None]
        doc["last_activity"] = iso(max(known)) if known else None
        return doc


def _dead_worker_findings(world: World) -> list[dict[str, Any]]:
    out = []
    for name, team in sorted(world.teams.items()):
        for w in team.workers:
            if w.dead_reason:
                out.append({"id": f"dead-worker:{name}:{w.name}", "kind": "dead-worker", "severity": "warn",
                            "scope": f"team {name}", "subject": w.name,
                            "message": f"team {name} worker {w.name}: {w.dead_reason}"})
    return out


def attention(doc: dict[str, Any], snap: Any) -> dict[str, list[str]]:
    """Who needs the operator, by kind; each entry a stable member/run/worker key (alerts compare these)."""
    waiting: list[str] = []
    failed: list[str] = []
    for scope in (snap.root_scope, *(s for _, s in sorted(snap.sessions.items()))):
        where = scope.session_id or "root"
        for mode, f in sorted(scope.modes.items()):
            outcome = f.outcome.value
            if outcome in WAITING_OUTCOMES and not f.tombstone:
                waiting.append(f"{where}/{mode}")
            elif outcome == "failed" and not f.tombstone:
                failed.append(f"{where}/{mode}")
    rp1 = doc.get("rp1") or {}
    waiting += [f"rp1/{r['id']}" for r in rp1.get("waiting", [])]
    failed += [f"rp1/{r['id']}" for r in rp1.get("failed", [])]
    dead = [f"{team}/{w['name']}" for team, t in doc["team"].items() for w in t["workers"] if w["dead_reason"]]
    findings = (doc.get("doctor") or {}).get("findings") or []
    stale = sorted(f"{f['scope']}/{f['subject']}" for f in findings if f["kind"] in ("stale-member", "orphan"))
    survivors = sorted(f"root/{f['subject']}" for f in findings if f["kind"] == "root-survivor")
    running = [f"{m.scope or 'root'}/{m.mode}" for m in snap.members if m.health == "live"]
    return {"waiting": waiting, "failed": failed, "dead": dead, "stale": stale, "root_survivors": survivors,
            "running": running}


def resurrected(snap: Any, now: float) -> list[str]:
    """Members active again after an operator cleared them (in the last `COMEBACK_WINDOW` seconds, not undone)."""
    from rcs_tui.state.journal import read_journal, undone_ids
    from rcs_tui.state.metrics import parse_time

    entries = read_journal(snap.root)
    undone = undone_ids(entries)
    out: set[str] = set()
    for entry in entries:
        summary = entry.get("summary") if isinstance(entry.get("summary"), dict) else {}
        at = parse_time(entry.get("at"))
        if (not str(entry.get("action", "")).startswith("state clear ") or not entry.get("complete")
                or entry["id"] in undone or at is None or now - at > COMEBACK_WINDOW):
            continue
        mode, where = summary.get("mode"), summary.get("scope")
        scopes = [snap.root_scope, *snap.sessions.values()] if where == "all_sessions" else [
            snap.root_scope if where == "root" else snap.sessions.get(where)]
        for scope in scopes:
            f = scope.modes.get(mode) if scope is not None else None
            if f is not None and f.active and f.mtime is not None and f.mtime > at:
                out.add(f"{scope.session_id or 'root'}/{mode}")
    return sorted(out)


def same_content(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two documents say the same thing (their sequence number and time aside)."""
    skip = ("seq", "taken_at")
    return {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}


async def follow_documents(feed: SnapshotFeed, *, poll: bool = False, resync_after: float = 0.5,
                           gate: Any = None, first_look: bool = False):
    """The first document, then one per batch of changes the watcher sees (what arrives meanwhile is merged).

    The watcher needs a moment to start; `resync_after` seconds in, the files written since just before the
    first read are re-read (a cheap stat scan finds them), catching a change made in that gap; the document
    is sent only when it differs. A watcher that cannot start natively falls back to polling.
    `gate` (an asyncio semaphore) bounds how many followers build a document at once. `first_look` yields a
    partial document (root and current session, see `SnapshotFeed.first_look`) before waiting at the gate.
    """
    import asyncio
    import contextlib

    def gated():
        return gate if gate is not None else contextlib.nullcontext()

    from rcs_tui.ui.watcher import native_batches, poll_batches, scan, watch_targets

    started = time.time_ns() - 2_000_000_000  # file times are coarse: look a little earlier
    if first_look:
        yield await asyncio.to_thread(feed.first_look)
    async with gated():
        last = await asyncio.to_thread(feed.document)
    yield last

    def written_since_start() -> frozenset[Path]:
        """Files written since just before the first read: what the watcher may have missed while starting."""
        return frozenset(p for p, sig in scan(watch_targets(feed.loader)).items() if sig[2] >= started)

    queue: asyncio.Queue[frozenset[Path] | None] = asyncio.Queue()

    async def pump() -> None:
        targets = watch_targets(feed.loader)
        try:
            async for paths in (poll_batches(targets) if poll else native_batches(targets)):
                queue.put_nowait(paths)
        except OSError:
            if poll:
                raise
            async for paths in poll_batches(targets):
                queue.put_nowait(paths)

    task = asyncio.ensure_future(pump())
    timer = asyncio.get_running_loop().call_later(resync_after, queue.put_nowait, None)
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                task.result()  # the watcher failed: raise its error
                return
            items = [getter.result()]
            while not queue.empty():
                items.append(queue.get_nowait())
            resync = any(item is None for item in items)
            paths = frozenset().union(*(i for i in items if i is not None))
            if resync:
                paths |= await asyncio.to_thread(written_since_start)
                if not paths:
                    continue
            async with gated():
                doc = await asyncio.to_thread(feed.build, paths)
            if resync and same_content(doc, last):
                continue
            feed.seq += 1
            doc["seq"] = feed.seq
            last = doc
            yield doc
    finally:
        timer.cancel()
        task.cancel()
