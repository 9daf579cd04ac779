"""What changed between two pictures of a project: the flight recorder's events, pure.

A *summary* is the part of a project the recorder keeps (plain JSON, so it can be checkpointed):
`members` (every member of every scope's active set, keyed `scope/mode`: phase, iteration, health,
outcome and what the file says wrote it), `workers` (`team/worker`: alive or dead), `tasks` (id: phase),
`runs` (rp1 run id: status), `cleared` (members that left the set by a clear, with when and by whom, so
a comeback is recognised at any later time) and `at` (when it was taken, epoch seconds).

`diff(before, after, ...)` lists the events that lead from one to the other, one per change, in a fixed
order; `apply(summary, events)` replays them, so that `apply(before, diff(before, after))` agrees with
`after` on everything the events track (a finished rp1 run that only left the window of runs followed
is no event: `apply` drops it when told which runs the new picture holds). The recorder relies on that
to recover after a crash between appending events and saving its checkpoint: the events already written
are replayed, never written again.

Who ended a member: a (not undone) `state clear` of its mode in its scope (or in all sessions)
written to the journal since the previous picture makes it `cleared` by the operator (with the journal
entry's id and actor); a file deleted or left as a clear tombstone without such an entry was cleared by the
runtime; a file still there but no longer active `ended`. A cleared member that is active again `came_back`
(whenever that is), unless the operator's own undo of that clear brought it back (`restored`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rcs_tui.core.history import undone_ids

CLEAR_SLACK_S = 10.0
VERSION = 1  # the `v` of every history line; a reader skips lines of another version
TERMINAL_RUNS = frozenset({"completed", "failed", "cancelled", "abandoned"})
MEMBER_FIELDS = ("phase", "iteration", "health", "outcome")  # a change of any of these is an event
MEMBER_KINDS = frozenset({"appeared", "phase", "iteration", "health", "outcome", "cleared", "ended",
                          "came_back", "restored"})
WAITING_OUTCOMES = frozenset({"askuserQuestion", "userinterlude"})  # the outcomes that ask the operator

Summary = dict[str, Any]
Event = dict[str, Any]


def empty() -> Summary:
    """The picture of a project before anything was recorded."""
    return {"at": None, "members": {}, "workers": {}, "tasks": {}, "runs": {}, "cleared": {}}


MAX_TS = 253402300799.0  # the last second of year 9999: any later time cannot be shown as a date
TEXT_KEYS = ("subject", "id", "item", "by", "actor", "journal_id", "cleared_by")


def _plain(value: Any) -> bool:
    """A value a summary or an entry keeps as it is: text, a whole or finite number, true/false or null."""
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return value is None or isinstance(value, (str, int, bool))


def _plain_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v) for k, v in value.items())


def _member_map(value: Any) -> bool:
    """A member's picture: plain values, or maps of them (who wrote it: `{"session": …, "pid": …}`)."""
    return isinstance(value, dict) and all(isinstance(k, str) and (_plain(v) or _plain_map(v))
                                           for k, v in value.items())


def _time(value: Any) -> bool:
    """Seconds since 1970 up to year 9999 (NaN and the infinities fail the bounds)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_TS


def entry_problem(entry: Mapping[str, Any]) -> str | None:
    """Why a parsed history line is not an entry the history can replay and show (None: it is). The line is
    read back from a file anyone may have edited: each field is checked for what its readers do with it."""
    if entry.get("v") != VERSION or not isinstance(entry.get("kind"), str):
        return "not a history entry of this version"
    if "ts" in entry and not _time(entry["ts"]):
        return '"ts" is not a time (seconds since 1970, at most year 9999)'
    if "seq" in entry and (not isinstance(entry["seq"], int) or isinstance(entry["seq"], bool)):
        return '"seq" is not a whole number'
    for key in TEXT_KEYS:
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f'"{key}" is not text'
    for key in ("from", "to", "after_s", "at", "cleared_at", "removed", "added"):
        if not _plain(entry.get(key)):
            return f'"{key}" is not a plain value'
    if entry.get("writer") is not None and not _plain_map(entry["writer"]):
        return '"writer" is not an object of plain values'
    for key in ("state", "before"):
        if entry.get(key) is not None and not _member_map(entry[key]):
            return f'"{key}" is not an object of plain values'
    members = entry.get("members")
    if members is not None and not (isinstance(members, dict) and all(_member_map(m) for m in members.values())):
        return '"members" is not a map of objects of plain values'
    return None


def summary_problem(summary: Any) -> str | None:
    """Why a kept summary (the recorder's checkpoint) cannot be replayed onto (None: it can)."""
    if not isinstance(summary, dict):
        return "the summary is not an object"
    if summary.get("at") is not None and not _time(summary["at"]):
        return 'the summary\'s "at" is not a time'
    for section in ("members", "cleared"):
        value = summary.get(section, {})
        if not (isinstance(value, dict) and all(_member_map(m) for m in value.values())):
            return f"the summary's {section} is not a map of objects of plain values"
    for section in ("workers", "tasks", "runs"):
        if not _plain_map(summary.get(section, {})):
            return f"the summary's {section} is not a map of plain values"
    return None


def _scope_mode(key: str) -> tuple[str, str]:
    scope, _, mode = key.rpartition("/")
    return scope, mode


def _clear_entry(key: str, since: float | None, journal: Sequence[Mapping[str, Any]],
                 parse_time: Callable[[Any], float | None], used: object = None) -> Mapping[str, Any] | None:
    """The newest operator clear of this member written since the previous picture that still holds, if any.

    The journal entry is written ahead of the files it changes (and marked done after), so an entry still
    pending counts, and one written up to `CLEAR_SLACK_S` before the previous picture too (that picture may
    have been taken between the entry and the change); `used`, the journal id a clear was already
    attributed to, never counts twice."""
    scope, mode = _scope_mode(key)
    undone = undone_ids([dict(e) for e in journal if isinstance(e.get("id"), str)])
    found: Mapping[str, Any] | None = None
    for entry in journal:
        raw = entry.get("summary")
        summary: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        at = parse_time(entry.get("at"))
        if (not str(entry.get("action", "")).startswith("state clear ") or entry.get("id") == used
                or entry.get("id") in undone or at is None or (since is not None and at < since - CLEAR_SLACK_S)
                or summary.get("mode") != mode or summary.get("scope") not in (scope, "all_sessions")):
            continue
        found = entry
    return found


def _undo_of(journal_id: str | None, journal: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The journal entry that undid `journal_id` and still holds, if any."""
    if not journal_id:
        return None
    undone = undone_ids([dict(e) for e in journal if isinstance(e.get("id"), str)])
    if journal_id not in undone:
        return None
    return next((e for e in reversed(journal) if e.get("undoes") == journal_id), None)


def diff(before: Summary, after: Summary, *, journal: Sequence[Mapping[str, Any]] = (),
         gone: Mapping[str, Mapping[str, Any]] | None = None,
         parse_time: Callable[[Any], float | None] = lambda _v: None) -> list[Event]:
    """The events from `before` to `after`, members first (by key), then workers, tasks and runs.

    `journal`: the operator journal, oldest first, as `state.journal` reads it; `gone`: for a member key
    whose mode file still exists but is no longer in the set, that file's `phase`, `outcome` and whether it
    is a clear `tombstone` (a key absent from it: the file was deleted); `parse_time`: how the journal's
    timestamps read as epoch seconds. Member events carry the member's `state` after the event (None once it
    left the set); `cleared` and `came_back` say by whom and, for a comeback, how long after the clear."""
    gone = gone or {}
    now = after.get("at")
    since = before.get("at")
    out: list[Event] = []
    b_members: Mapping[str, Any] = before.get("members") or {}
    a_members: Mapping[str, Any] = after.get("members") or {}
    cleared: Mapping[str, Any] = before.get("cleared") or {}
    for key in sorted(set(b_members) | set(a_members)):
        old, new = b_members.get(key), a_members.get(key)
        if old is None and new is not None:
            clear = cleared.get(key)
            out.append(_arrival(key, new, None if clear is None or clear.get("returned") else clear, now, journal))
        elif old is not None and new is None:
            used = (cleared.get(key) or {}).get("journal_id")
            out.append(_departure(key, old, gone.get(key), since, journal, parse_time, used))
        elif old is not None and new is not None:
            fields: tuple[str, ...] = MEMBER_FIELDS
            if old.get("health") != new.get("health") and new.get("phase") is None and new.get("iteration") is None:
                fields = ("health", "outcome")  # its file is gone: the turn to stale says it, not "phase → ?"
            out += [{"kind": f, "subject": key, "from": old.get(f), "to": new.get(f), "state": dict(new)}
                    for f in fields if old.get(f) != new.get(f)]
    for section, kind in (("workers", "worker"), ("tasks", "task"), ("runs", "run")):
        b: Mapping[str, Any] = before.get(section) or {}
        a: Mapping[str, Any] = after.get(section) or {}
        for key in sorted(set(b) | set(a)):
            if key not in a:
                if kind == "run" and b[key] in TERMINAL_RUNS:
                    continue  # a finished run only left the window of runs followed: not a change
                out.append({"kind": kind, "subject": key, "from": b[key], "to": None, "removed": True})
            elif key not in b or a[key] != b[key]:
                out.append({"kind": kind, "subject": key, "from": b.get(key), "to": a[key],
                            **({"added": True} if key not in b else {})})
    return out


def _arrival(key: str, new: Mapping[str, Any], clear: Mapping[str, Any] | None, now: float | None,
             journal: Sequence[Mapping[str, Any]]) -> Event:
    if clear is None:
        return {"kind": "appeared", "subject": key, "state": dict(new)}
    undo = _undo_of(clear.get("journal_id"), journal)
    if undo is not None:
        return {"kind": "restored", "subject": key, "state": dict(new), "journal_id": undo.get("id"),
                "actor": undo.get("actor"), "undoes": clear.get("journal_id")}
    cleared_at = clear.get("at")
    after_s = None if now is None or not isinstance(cleared_at, (int, float)) else round(now - cleared_at, 3)
    return {"kind": "came_back", "subject": key, "state": dict(new), "after_s": after_s,
            "cleared_at": cleared_at, "cleared_by": clear.get("by"), "clear_id": clear.get("id"),
            "journal_id": clear.get("journal_id"), "writer": new.get("writer")}


def _departure(key: str, old: Mapping[str, Any], fate: Mapping[str, Any] | None, since: float | None,
               journal: Sequence[Mapping[str, Any]], parse_time: Callable[[Any], float | None],
               used: object = None) -> Event:
    entry = _clear_entry(key, since, journal, parse_time, used)
    if entry is not None:
        return {"kind": "cleared", "subject": key, "by": "operator", "journal_id": entry.get("id"),
                "actor": entry.get("actor"), "before": dict(old), "state": None}
    if fate is None or fate.get("tombstone"):
        return {"kind": "cleared", "subject": key, "by": "runtime", "journal_id": None, "actor": None,
                "before": dict(old), "state": None}
    return {"kind": "ended", "subject": key, "phase": fate.get("phase"), "outcome": fate.get("outcome"),
            "before": dict(old), "state": None}


def apply(summary: Summary, events: Sequence[Mapping[str, Any]], *, at: float | None = None,
          runs_now: Mapping[str, Any] | None = None) -> Summary:
    """`summary` with `events` replayed (each event's `ts`, when present, dates a clear); a new summary.

    `runs_now`: the runs of the picture the events lead to; a finished run no longer among them is dropped
    (`diff` names no event for it)."""
    out: Summary = {**empty(), **summary}
    for section in ("members", "workers", "tasks", "runs", "cleared"):
        out[section] = dict(out.get(section) or {})
    for e in events:
        kind, key = e.get("kind"), e.get("subject")
        if not isinstance(key, str):
            continue
        if kind in MEMBER_KINDS:
            state = e.get("state")
            if isinstance(state, Mapping):
                out["members"][key] = dict(state)
            else:
                out["members"].pop(key, None)
            if kind == "cleared":
                out["cleared"][key] = {"at": e.get("ts"), "by": e.get("by"), "journal_id": e.get("journal_id"),
                                       "id": e.get("id")}
            elif kind in ("came_back", "restored"):  # kept: its journal entry is never attributed again
                was = out["cleared"].get(key) or {}
                out["cleared"][key] = {"journal_id": was.get("journal_id"), "returned": True}
        elif kind in ("worker", "task", "run"):
            section = {"worker": "workers", "task": "tasks", "run": "runs"}[kind]
            if e.get("removed"):
                out[section].pop(key, None)
            else:
                out[section][key] = e.get("to")
        if isinstance(e.get("ts"), (int, float)):
            out["at"] = e["ts"]
    if at is not None:
        out["at"] = at
    if runs_now is not None:
        out["runs"] = {k: v for k, v in out["runs"].items() if k in runs_now}
    return out


def waiting(member: Mapping[str, Any]) -> bool:
    """Whether a member's outcome asks the operator for something."""
    return member.get("outcome") in WAITING_OUTCOMES
