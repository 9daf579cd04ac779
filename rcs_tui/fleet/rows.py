"""A fleet row: one project's latest snapshot document (or why there is none), reduced to what the table shows.

Rows sort by attention: someone waiting for the user, then failures, then trouble (dead workers, stale
members, root survivors), then running work, then idle; unreadable projects sort with trouble so they
are seen. Every string that came from a project is made inert here, before any view sees it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from rcs_tui.core import attention
from rcs_tui.core.attention import Verdict
from rcs_tui.core.health import WORKER_CONDITIONS
from rcs_tui.core.words import plural
from rcs_tui.fleet.projects import Project
from rcs_tui.state.metrics import parse_time
from rcs_tui.state.team import worker_condition
from rcs_tui.views.health import HEALTH_GLYPH, HEALTH_STYLE, WORKER_GLYPH
from rcs_tui.views.snapshot_doc import CONTRACT_MAJOR, CONTRACT_VERSION, contract_major, iso, summarise
from rcs_tui.views.text import ago, strip_controls

RANKS = attention.RANKS


def inert(value: Any, limit: int = 200) -> str:
    return strip_controls(value)[:limit]


def _table(value: object) -> dict[str, Any]:
    """A document's table, or an empty one when the project sent something else there."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    """A document's list, or an empty one when the project sent something else there."""
    return value if isinstance(value, list) else []


@dataclass
class Row:
    """What the fleet knows about one project right now."""

    project: Project
    doc: dict[str, Any] | None = None
    error: str | None = None
    error_since: float | None = None
    readonly_reason: str | None = None
    connected: bool = False
    updated_at: float | None = None
    attention: dict[str, list[str]] = field(default_factory=dict)
    looked: bool = False  # the fleet has had a first document (or a reason for none) for this row
    watch: str | None = None  # how the live fleet watches a local project: "inotify" or "poll" (None: not yet)
    watch_reason: str | None = None  # why it is polled
    verdicts: dict[tuple[str, str], Verdict] = field(default_factory=dict)  # (kind, item) -> why

    def verdict(self, kind: str, item: str) -> Verdict:
        """Why `item` is listed under `kind`: the project's own words, or, from a host whose snapshot
        contract predates them, a verdict saying it did not say (source `unknown`)."""
        return self.verdicts.get((kind, item)) or Verdict(
            kind, item, f"{item}: {attention.BY_KEY[kind].heading if kind in attention.BY_KEY else kind} "
                        "(the project did not say why)", UNKNOWN_SOURCE)

    # -- updates ----------------------------------------------------------------------------
    def take(self, doc: dict[str, Any], now: float | None = None) -> None:
        """A new document: checked against the contract and kept (with its attention digest)."""
        major = contract_major(doc.get("version"))
        if major != CONTRACT_MAJOR:
            theirs = inert(doc.get("version"), 20) or "none"
            self.readonly_reason = (f"host speaks snapshot contract {theirs}, this rcs-tui reads {CONTRACT_VERSION}: "
                                    + ("upgrade rcs-tui on the host" if major is None or major < CONTRACT_MAJOR
                                       else "upgrade this rcs-tui") + "; shown read-only")
            if major is None or major < CONTRACT_MAJOR:
                self.doc, self.attention = None, {}
                self.error = self.readonly_reason
                self.error_since = self.error_since or (now or time.time())
                return
        else:
            self.readonly_reason = None
        if doc.get("has_rcs") is False:
            self.fail(f"no .rcs/ in {self.project.path}", now)
            self.doc, self.attention = None, {}
            return
        if self.project.remote:
            doc.pop("partial", None)  # only this process makes partial documents; a host cannot claim one
        self.doc = summarise(doc) if self.project.remote else doc  # a local feed makes summaries itself
        raw = _table(doc.get("attention"))
        self.attention = {k: [inert(v, 120) for v in _list(raw.get(k)) if isinstance(v, str)][:200]
                          for k in attention.KEYS}  # a text where a list goes is no list of eight items
        self.verdicts = _verdicts(doc.get("needs_you"), self.attention)
        self.error, self.error_since, self.connected = None, None, True
        self.updated_at = now or time.time()

    def fail(self, reason: str, now: float | None = None) -> None:
        """The project cannot be read now; keep the first failure's time (the row says "since …")."""
        self.error = inert(reason, 300)
        self.connected = False
        if self.error_since is None:
            self.error_since = now or time.time()

    # -- derived ----------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        readable = self.doc is not None and not self.error
        return RANKS.index(attention.rank(self.attention if readable else None, self._rp1_count("running")))

    @property
    def needs_you_now(self) -> bool:
        """Waiting for the operator, failed, or in trouble: the ranks a "needs you" count and alert include."""
        return self.rank <= RANKS.index("trouble")

    @property
    def rank_name(self) -> str:
        return "error" if self.doc is None or self.error else RANKS[self.rank]

    def _rp1_count(self, status: str) -> int:
        rp1 = (self.doc or {}).get("rp1") or {}
        counts = _table(rp1.get("counts"))
        value = counts.get(status, 0)
        return value if isinstance(value, int) else 0

    def needs_you(self) -> list[str]:
        """Short reasons this project needs the operator (empty when it does not)."""
        if self.doc is None or self.error:
            return [self.error or "connecting"]
        return [attention.count_words(k, len(self.attention[k.key])) for k in attention.NEEDS_YOU
                if self.attention.get(k.key)]

    def cells(self, now: float) -> dict[str, str | Text]:
        """Inert text for every column: plain strings, and styled text where the console's colours apply."""
        p = self.project
        host = "polled" if self.watch == "poll" else inert(p.host_label, 40)  # local, but not watched: see why in `i`
        base: dict[str, str | Text] = {"project": inert(p.name, 60), "host": host}
        if self.doc is None or self.error:
            since = f" since {ago(now - self.error_since)}" if self.error_since else ""
            head, _, tail = (self.error or "connecting…").partition(": ")  # "unreachable since 2m: ssh: …"
            text = f"{head}{since}: {tail}" if tail else f"{head}{since}"
            return {**base, "state": "error" if self.error else "…", "active": text, "health": "",
                    "doctor": "", "workers": "", "tasks": "", "rp1": "", "activity": ""}
        d = self.doc
        partial = bool(d.get("partial"))  # a first look: the doctor has not run yet
        health = _table(d.get("health"))
        health_text = Text(" ").join(
            Text(f"{HEALTH_GLYPH[k]}{v}" if k in HEALTH_GLYPH else f"{inert(k, 16)}:{v}", style=HEALTH_STYLE.get(k, ""))
            for k, v in sorted(health.items()) if isinstance(v, int))
        doctor = (d.get("doctor") or {}).get("count")
        phases = _table(d.get("tasks_by_phase"))
        tasks = " ".join(f"{inert(k, 20)}:{v}" for k, v in sorted(phases.items()) if isinstance(v, int))
        rp1 = f"{self._rp1_count('waiting')}/{self._rp1_count('failed')}/{self._rp1_count('running')}"
        last = parse_time(d.get("last_activity"))
        active = _list(d.get("active_set"))
        return {**base, "state": self.rank_name,
                "active": " + ".join(inert(m, 30) for m in active) or "—",
                "health": health_text if health_text.plain else "—",
                "doctor": "…" if partial else "—" if doctor in (None, 0) else str(doctor),
                "workers": self.workers_cell(now), "tasks": tasks or "—", "rp1": rp1,
                "activity": "—" if last is None else ago(now - last)}

    def worker_conditions(self, now: float) -> Counter[str]:
        """Workers by condition at `now`, judged by the same rule the console uses."""
        out: Counter[str] = Counter()
        for team in ((self.doc or {}).get("team") or {}).values():
            for w in team.get("workers", []) if isinstance(team, dict) else []:
                if isinstance(w, dict):
                    raw = w.get("alive", True)  # a host on contract 1.0 does not send the flag
                    alive = raw if isinstance(raw, bool) else None
                    last = w.get("last_turn_at") if isinstance(w.get("last_turn_at"), str) else None
                    out[worker_condition(w.get("dead_reason") or None, alive, last, now)] += 1
        return out

    def workers_cell(self, now: float) -> Text | str:
        counts = self.worker_conditions(now)
        if not counts:
            return "—"
        return Text(" ").join(Text(f"{counts[c]}{WORKER_GLYPH[c][0]}", style=WORKER_GLYPH[c][1])
                              for c in WORKER_CONDITIONS if counts[c])

    def sort_key(self) -> tuple[int, str, str]:
        return (self.rank, self.project.name, self.project.key)


UNKNOWN_SOURCE = "unknown"  # a host that predates reasons


def _verdicts(raw: object, lists: dict[str, list[str]]) -> dict[tuple[str, str], Verdict]:
    """A document's `needs_you`, made inert, for the entries its `attention` lists (nothing else is kept)."""
    listed = {(k, item) for k, items in lists.items() for item in items}
    out: dict[tuple[str, str], Verdict] = {}
    for v in _list(raw)[:2000]:
        if not isinstance(v, dict):
            continue
        key = (inert(v.get("kind"), 40), inert(v.get("item"), 120))
        if key not in listed:
            continue
        source = v.get("source") if v.get("source") in attention.SOURCES else UNKNOWN_SOURCE
        out[key] = Verdict(key[0], key[1], inert(v.get("reason"), 300), str(source),
                                     parse_time(v.get("since")))
    return out


def sorted_rows(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=Row.sort_key)


def once_json(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """`fleet --once --json`: one object per project, most urgent first. `watch` is how the live fleet
    watches a local project ("inotify", or "poll" with `watch_reason`); `--once` watches nothing, so there
    both are null."""
    out = []
    for row in sorted_rows(rows):
        p = row.project
        doc = row.doc or {}
        last = doc.get("last_activity")
        out.append({"project": p.key, "name": p.name, "host": p.host, "state": row.rank_name,
                    "needs_you": row.needs_you_now, "reasons": row.needs_you() if row.needs_you_now else [],
                    "error": row.error, "readonly_reason": row.readonly_reason,
                    "attention": row.attention,
                    "verdicts": [row.verdict(k.key, item).as_json(iso) for k in attention.NEEDS_YOU
                                 for item in row.attention.get(k.key, [])],
                    # a host's values pass on only in the contract's types: a list of names, a time or null
                    "active_set": [m for m in _list(doc.get("active_set")) if isinstance(m, str)],
                    "last_activity": last if isinstance(last, str) and parse_time(last) is not None else None,
                    "watch": row.watch, "watch_reason": row.watch_reason})
    return out


def once_line(rows: Iterable[Row]) -> str:
    """`fleet --once`: how many projects need you, and which (for a status line)."""
    items = sorted_rows(rows)
    need = [r for r in items if r.needs_you_now]
    if not need:
        return f"fleet: {plural(len(items), 'project')}, none needs you"
    shown = ", ".join(f"{inert(r.project.name, 30)} ({'; '.join(r.needs_you())})" for r in need[:5])
    more = f", +{len(need) - 5} more" if len(need) > 5 else ""
    return f"fleet: {len(need)} of {len(items)} need you: {shown}{more}"
