"""Who needs the operator, and why: the kinds of attention, their words, and the rules that sort a
project's members, runs and workers into them, pure.

Each kind says how urgent it makes a project (`rank`), which alert it raises (root survivors alert as
`stale`; running work raises none), how a count reads ("2 dead workers"), its heading, and what an
alert says about a member of it. `attention` sorts members, rp1 runs and workers into the kinds;
`rank` turns that into a project's urgency; `resurrected` finds members that came back after an
operator cleared them; `dead_worker_findings` turns dead team workers into doctor findings. Inputs are
the snapshot (duck-typed: scopes, modes, members), the parts of the snapshot document already built,
journal entries and the time; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rcs_tui.core.history import undone_ids

WAITING_OUTCOMES = frozenset({"askuserQuestion", "userinterlude"})
COMEBACK_WINDOW = 15 * 60  # a mode active again this soon after an operator cleared it "came back"
RANKS = ("waiting", "failed", "trouble", "running", "idle")  # a project's urgency, most urgent first


@dataclass(frozen=True)
class Kind:
    key: str  # the list in the document's `attention`
    rank: str  # the row rank it puts a project in (see rows.RANKS)
    alert: str | None  # the alert kind a new entry raises (None: no alert)
    noun: str  # a count of it: "1 dead worker"
    plural: str  # "2 dead workers"
    heading: str  # the project view's heading for its entries
    news: str  # what an alert says: "<member> worker died"


KINDS: tuple[Kind, ...] = (
    Kind("waiting", "waiting", "waiting", "waiting", "waiting", "waiting for you", "is waiting for you"),
    Kind("failed", "failed", "failed", "failed", "failed", "failed", "failed"),
    Kind("dead", "trouble", "dead", "dead worker", "dead workers", "dead workers", "worker died"),
    Kind("stale", "trouble", "stale", "stale", "stale", "stale", "turned stale"),
    Kind("root_survivors", "trouble", "stale", "root survivor", "root survivors", "root survivors", "turned stale"),
    Kind("resurrected", "trouble", "resurrected", "came back", "came back", "came back after a clear",
         "came back after a clear"),
    Kind("running", "running", None, "running", "running", "running", "is running"),
)
BY_KEY = {k.key: k for k in KINDS}
KEYS: tuple[str, ...] = tuple(k.key for k in KINDS)
NEEDS_YOU: tuple[Kind, ...] = tuple(k for k in KINDS if k.alert is not None)  # what a "needs you" reason names
ALERT_KINDS: tuple[str, ...] = tuple(dict.fromkeys(k.alert for k in NEEDS_YOU if k.alert))
ALERT_NEWS = {k.alert: k.news for k in NEEDS_YOU if k.alert and k.key == k.alert}


def count_words(kind: Kind, n: int) -> str:
    return f"{n} {kind.noun if n == 1 else kind.plural}"


def rank(attention_lists: Mapping[str, Sequence[str]] | None, rp1_running: int) -> str:
    """How urgent a project is: the most urgent kind it has entries of (running rp1 runs count as running
    work); a project that cannot be read (`attention_lists` None) is trouble, so it is seen."""
    if attention_lists is None:
        return "trouble"
    ranks = [RANKS.index(k.rank) for k in KINDS if attention_lists.get(k.key)]
    if rp1_running:
        ranks.append(RANKS.index("running"))
    return RANKS[min(ranks, default=RANKS.index("idle"))]


def dead_worker_findings(teams: dict[str, Any]) -> list[dict[str, Any]]:
    """One finding per team worker whose heartbeat is dead (the reason the team reader gave), naming the task
    it holds: the doctor and the snapshot document both take them from here, so both say the same."""
    out = []
    for name, team in sorted(teams.items()):
        for w in team.workers:
            if w.dead_reason:
                holding = f" while holding task {w.current_task_id}" if w.current_task_id else ""
                waits = f"; task {w.current_task_id} stays in progress until a worker takes it again" \
                    if w.current_task_id else ""
                out.append({"id": f"dead-worker:{name}:{w.name}", "kind": "dead-worker", "severity": "warn",
                            "scope": f"team {name}", "subject": w.name,
                            "message": f"team {name} worker {w.name} has a dead heartbeat ({w.dead_reason}){holding}",
                            "advice": f"restart {w.name} from the team's runtime (its tmux session is `tmux_session` "
                                      f"in .rcs/state/team/{name}/config.json) or stop the team{waits}; rcs-tui "
                                      "does not start or stop workers"})
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


def resurrected(snap: Any, entries: list[dict[str, Any]], now: float,
                parse_time: Callable[[Any], float | None]) -> list[str]:
    """Members active again after an operator cleared them (in the last `COMEBACK_WINDOW` seconds, not undone).

    `entries`: the journal, oldest first; `parse_time`: how the journal's timestamps are read."""
    undone = undone_ids(entries)
    out: set[str] = set()
    for entry in entries:
        raw = entry.get("summary")
        summary: dict[str, Any] = raw if isinstance(raw, dict) else {}
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
