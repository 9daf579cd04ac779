"""Who needs the operator, and why: the kinds of attention, their words, and the rules that sort a
project's members, runs and workers into them, pure.

Each kind says how urgent it makes a project (`rank`), which alert it raises (root survivors alert as
`stale`; running work raises none), how a count reads ("2 dead workers"), its heading, and what an
alert says about a member of it. `attention` sorts members, rp1 runs and workers into the kinds;
`rank` turns that into a project's urgency; `resurrected` finds members that came back after an
operator cleared them; `dead_worker_findings` turns dead team workers into doctor findings. `explain`
says, for every entry, why it needs you in words and how sure that is: `reported` when the runtime or
rp1 said so itself (a lifecycle outcome, a pending rp1 prompt, a worker's own heartbeat), `inferred`
when rcs-tui concluded it from what it saw (a pid that no longer runs, a heartbeat older than the
threshold, a file written after a clear, a canonical entry with no active file behind it). Inputs are
the snapshot (duck-typed: scopes, modes, members), the parts of the snapshot document already built,
journal entries and the time; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rcs_tui.core.health import HEARTBEAT_STALE_SECONDS, beat_is_stale
from rcs_tui.core.history import undone_ids
from rcs_tui.core.times import iso

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
    Kind("silent", "trouble", "silent", "silent worker", "silent workers", "silent workers", "worker went silent"),
    Kind("stale", "trouble", "stale", "stale", "stale", "stale", "turned stale"),
    Kind("root_survivors", "trouble", "stale", "root survivor", "root survivors", "root survivors", "turned stale"),
    Kind("resurrected", "trouble", "resurrected", "came back", "came back", "came back after a clear",
         "came back after a clear"),
    Kind("stale_pointer", "trouble", "stale_pointer", "stale-dead pointer", "stale-dead pointers",
         "stale-dead session pointer", "session.json points at a dead session"),
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


def attention(doc: dict[str, Any], snap: Any, now: float | None = None,
              parse_time: Callable[[Any], float | None] | None = None) -> dict[str, list[str]]:
    """Who needs the operator, by kind; each entry a stable member/run/worker key (alerts compare these).

    Silent workers (alive by their own word, but no heartbeat for `HEARTBEAT_STALE_SECONDS`) are judged at
    `now`, with `parse_time` reading their last turn; without them none is listed."""
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
    silent = [] if now is None or parse_time is None else [
        f"{team}/{w['name']}" for team, t in doc["team"].items() for w in t["workers"]
        if not w["dead_reason"] and beat_is_stale(_age(now, parse_time(w.get("last_turn_at"))))]
    pointer = getattr(getattr(snap, "resolution", None), "pointer", None)
    stale_pointer = ["root/session.json"] if pointer is not None and pointer.stale_dead else []
    running = [f"{m.scope or 'root'}/{m.mode}" for m in snap.members if m.health == "live"]
    return {"waiting": waiting, "failed": failed, "dead": dead, "silent": silent, "stale": stale,
            "root_survivors": survivors, "resurrected": [], "stale_pointer": stale_pointer, "running": running}


def _age(now: float, at: float | None) -> float | None:
    return None if at is None else now - at


def resurrected(snap: Any, entries: list[dict[str, Any]], now: float,
                parse_time: Callable[[Any], float | None]) -> list[str]:
    """Members active again after an operator cleared them (in the last `COMEBACK_WINDOW` seconds, not undone).

    `entries`: the journal, oldest first; `parse_time`: how the journal's timestamps are read."""
    return sorted(comebacks(snap, entries, now, parse_time))


@dataclass(frozen=True)
class Comeback:
    """A member written active again after a clear: the journal entry of the clear, when it ran, and when
    the member's file was written since."""

    entry: str
    cleared_at: float
    written_at: float


def comebacks(snap: Any, entries: list[dict[str, Any]], now: float,
              parse_time: Callable[[Any], float | None]) -> dict[str, Comeback]:
    """`resurrected`'s members, each with the clear it came back after (the latest one, when several)."""
    undone = undone_ids(entries)
    out: dict[str, Comeback] = {}
    for entry in entries:
        raw = entry.get("summary")
        summary: dict[str, Any] = raw if isinstance(raw, dict) else {}
        at = parse_time(entry.get("at"))
        if (not str(entry.get("action", "")).startswith("state clear ") or not entry.get("complete")
                or entry["id"] in undone or at is None or now - at > COMEBACK_WINDOW):
            continue
        mode, where = summary.get("mode"), summary.get("scope")
        if not isinstance(mode, str) or not isinstance(where, str):
            continue  # not a clear this could have undone (the journal reader refuses such entries anyway)
        scopes = [snap.root_scope, *snap.sessions.values()] if where == "all_sessions" else [
            snap.root_scope if where == "root" else snap.sessions.get(where)]
        for scope in scopes:
            f = scope.modes.get(mode) if scope is not None else None
            if f is not None and f.active and f.mtime is not None and f.mtime > at:
                out[f"{scope.session_id or 'root'}/{mode}"] = Comeback(str(entry["id"]), at, f.mtime)
    return out


REPORTED = "reported"  # the runtime or rp1 said so itself
INFERRED = "inferred"  # rcs-tui concluded it from what it saw
SOURCES = (REPORTED, INFERRED)


@dataclass(frozen=True)
class Verdict:
    """One entry that needs the operator: its kind and key, why in words, how sure (`source`) and since
    when (seconds since the epoch, None when nothing says)."""

    kind: str
    item: str
    reason: str
    source: str
    since: float | None = None

    @property
    def state(self) -> str:
        """What tells this occurrence from a later one of the same entry: since when (a new question, a new
        clear, a new last heartbeat), else, when nothing says since when, the reason itself."""
        return self.reason if self.since is None else repr(self.since)

    def as_json(self, iso: Callable[[float], str | None]) -> dict[str, Any]:
        return {"kind": self.kind, "item": self.item, "reason": self.reason, "source": self.source,
                "since": None if self.since is None else iso(self.since)}


def span(seconds: float) -> str:
    """A duration in words for a reason: `45s`, `12m`, `3h`, `2d`."""
    s = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def dead_source(dead_reason: str) -> str:
    """A worker is dead by its own heartbeat's word (`alive: false`: reported) or because its pid no longer
    runs (inferred)."""
    return REPORTED if dead_reason.startswith("heartbeat says") else INFERRED


def explain(lists: Mapping[str, Sequence[str]], doc: dict[str, Any], snap: Any, now: float,
            parse_time: Callable[[Any], float | None],
            came_back: Mapping[str, Comeback] | None = None) -> list[Verdict]:
    """Why each entry of `lists` (what `attention` returned) needs the operator, kind by kind in `KINDS`
    order; running work is not a "needs you" and gets no verdict."""
    files = {f"{scope.session_id or 'root'}/{mode}": f
             for scope in (snap.root_scope, *snap.sessions.values()) for mode, f in scope.modes.items()}
    runs = {f"rp1/{r.get('id')}": r for st in ("waiting", "failed") for r in (doc.get("rp1") or {}).get(st) or []}
    workers = {f"{team}/{w['name']}": w for team, t in doc["team"].items() for w in t["workers"]}
    findings = {f"{f['scope']}/{f['subject']}": f for f in (doc.get("doctor") or {}).get("findings") or []}
    out: list[Verdict] = []
    for kind in NEEDS_YOU:
        for item in lists.get(kind.key) or ():
            out.append(_verdict(kind.key, item, files, runs, workers, findings, came_back or {}, snap, now,
                                parse_time))
    return out


def _verdict(kind: str, item: str, files: Mapping[str, Any], runs: Mapping[str, Any], workers: Mapping[str, Any],
             findings: Mapping[str, Any], came_back: Mapping[str, Comeback], snap: Any, now: float,
             parse_time: Callable[[Any], float | None]) -> Verdict:
    f = files.get(item)
    mtime = getattr(f, "mtime", None)
    if kind in ("waiting", "failed") and item.startswith("rp1/"):
        run = runs.get(item) or {}
        where = f"rp1 run {run.get('id', item[4:])}" + (f" ({run['flow']})" if run.get("flow") else "")
        step = f" at step {run['step']}" if run.get("step") else ""
        since = parse_time(run.get("since"))  # rp1's own time for the question (or the failure)
        if kind == "waiting":
            question = f": {run['question']}" if run.get("question") else ""
            return Verdict(kind, item, f"{where} waits for your answer{step}{question}", REPORTED, since)
        return Verdict(kind, item, f"{where} failed{step}", REPORTED, since)
    if kind in ("waiting", "failed"):
        outcome = getattr(getattr(f, "outcome", None), "value", kind)
        said = "waits for your answer" if kind == "waiting" else "failed"
        return Verdict(kind, item, f"{item} {said} (lifecycle outcome {outcome})", REPORTED, mtime)
    if kind in ("dead", "silent"):
        w = workers.get(item) or {}
        team, _, name = item.partition("/")
        last = parse_time(w.get("last_turn_at"))
        if kind == "dead":
            why = str(w.get("dead_reason") or "dead")
            holding = f" while holding task {w['current_task_id']}" if w.get("current_task_id") else ""
            return Verdict(kind, item, f"worker {name} of team {team}: {why}{holding}", dead_source(why), last)
        beat = f"no heartbeat since {iso(last)}" if last is not None else "no heartbeat"
        return Verdict(kind, item, f"worker {name} of team {team}: {beat}; a live worker beats at least every "
                                   f"{span(HEARTBEAT_STALE_SECONDS)}", INFERRED, last)
    if kind in ("stale", "root_survivors"):
        finding = findings.get(item) or {}
        return Verdict(kind, item, str(finding.get("message") or f"{item} is {kind.replace('_', ' ')}"), INFERRED,
                       mtime)
    if kind == "resurrected":
        back = came_back.get(item)
        if back is None:
            return Verdict(kind, item, f"{item} is active again after a clear", INFERRED, mtime)
        return Verdict(kind, item, f"{item} was written active {span(back.written_at - back.cleared_at)} after you "
                                   f"cleared it (journal entry {back.entry})", INFERRED, back.cleared_at)
    pointer = getattr(getattr(snap, "resolution", None), "pointer", None)
    why = str(getattr(pointer, "reason", "") or "").removeprefix("stale-dead: ")
    return Verdict(kind, item, f"session.json names session {getattr(pointer, 'session_id', None)}, but {why}",
                   INFERRED)
