"""The flight recorder's entries in words: one line per entry, a timeline with quiet stretches folded into
one line, and the "while you were away" summary. Pure: entries in (as `project.recorder` reads them),
plain text out; every string from an entry goes through the one sanitiser before it is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rcs_tui.views.line_fit import ago
from rcs_tui.views.text import strip_controls

QUIET_S = 15 * 60  # a stretch this long without an entry is folded into one "… quiet …" line
WAITING_OUTCOMES = frozenset({"askuserQuestion", "userinterlude"})


def _s(value: Any) -> str:
    return strip_controls("?" if value is None else value)


def _state_words(state: Mapping[str, Any] | None) -> str:
    if not isinstance(state, Mapping):
        return ""
    parts = [_s(state.get("phase")) if state.get("phase") else "no phase"]
    if state.get("iteration") is not None:
        parts.append(f"iteration {_s(state.get('iteration'))}")
    parts.append(_s(state.get("health") or "live"))
    return ", ".join(parts)


def writer_words(writer: Any) -> str:
    """What a mode file says wrote it: `session S, pid P, source X`, or that it does not say."""
    if not isinstance(writer, Mapping) or not writer:
        return "the file does not say what wrote it"
    return "written by " + ", ".join(f"{k} {_s(writer[k])}" for k in ("session", "pid", "source") if k in writer)


def describe(e: Mapping[str, Any]) -> str:
    """One entry as a line of text (without its time)."""
    kind, who = _s(e.get("kind")), _s(e.get("subject"))
    frm, to = e.get("from"), e.get("to")
    if kind == "appeared":
        return f"{who} appeared ({_state_words(e.get('state'))})"
    if kind in ("phase", "iteration"):
        return f"{who} {kind} {_s(frm)} → {_s(to)}"
    if kind == "health":
        return f"{who} turned {_s(to)} (was {_s(frm)})"
    if kind == "outcome":
        if to in WAITING_OUTCOMES:
            return f"{who} is waiting for you ({_s(to)})"
        return f"{who} outcome {_s(frm)} → {_s(to)}"
    if kind == "cleared":
        if e.get("by") == "operator":
            return f"{who} cleared by the operator ({_s(e.get('actor'))}, journal {_s(e.get('journal_id'))})"
        return f"{who} cleared by the runtime"
    if kind == "ended":
        return f"{who} ended ({_s(e.get('phase'))}{', ' + _s(e.get('outcome')) if e.get('outcome') else ''})"
    if kind == "came_back":
        after = e.get("after_s")
        when = f"{ago(after)} after" if isinstance(after, (int, float)) else "after"
        by = "the operator's" if e.get("cleared_by") == "operator" else "the runtime's"
        return f"{who} CAME BACK {when} {by} clear; {writer_words(e.get('writer'))}"
    if kind == "restored":
        return f"{who} restored by an undo ({_s(e.get('actor'))}, journal {_s(e.get('journal_id'))})"
    if kind == "worker":
        return f"worker {who} died" if to == "dead" else (
            f"worker {who} is alive again" if frm == "dead" else f"worker {who} {_s(frm)} → {_s(to)}")
    if kind in ("task", "run"):
        noun = "task" if kind == "task" else "rp1 run"
        if e.get("removed"):
            return f"{noun} {who} is gone (was {_s(frm)})"
        if e.get("added"):
            return f"{noun} {who} appeared ({_s(to)})"
        return f"{noun} {who} {_s(frm)} → {_s(to)}"
    if kind == "ack":
        return f"{_s(e.get('item'))} acknowledged by {_s(e.get('actor'))}"
    if kind == "baseline":
        members = e.get("members")
        n = len(members) if isinstance(members, Mapping) else 0
        return (f"recording started: {n} member{'s' if n != 1 else ''}, {_s(e.get('tasks'))} tasks, "
                f"{_s(e.get('runs'))} rp1 runs, {_s(e.get('workers'))} workers")
    if kind == "recorder":
        return f"recorder {_s(e.get('event'))} (pid {_s(e.get('pid'))})"
    return f"{kind} {who}".strip()


def timeline(entries: Sequence[Mapping[str, Any]], quiet_s: float = QUIET_S) -> list[tuple[str, Any]]:
    """Rows, oldest first: `("entry", entry)`, and `("quiet", seconds)` where no entry came for `quiet_s` or
    longer."""
    rows: list[tuple[str, Any]] = []
    last: float | None = None
    for e in entries:
        ts = e.get("ts")
        if isinstance(ts, (int, float)):
            if last is not None and ts - last >= quiet_s:
                rows.append(("quiet", ts - last))
            last = ts
        rows.append(("entry", e))
    return rows


def quiet_words(seconds: float) -> str:
    return f"… {ago(seconds)} quiet …"


def matches(e: Mapping[str, Any], member: str | None) -> bool:
    """Whether an entry is about `member`: its whole key (`root/forge`, `rp1/RUN` style subjects), its mode or
    task/run/worker name, or its scope."""
    if not member:
        return True
    subject = e.get("subject") if e.get("kind") != "ack" else e.get("item")
    if not isinstance(subject, str):
        return False
    scope, _, name = subject.rpartition("/")
    return member in (subject, name, scope)


def waiting_since(entries: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Members and rp1 runs waiting for the operator at the end of `entries`, with since when (epoch s)."""
    out: dict[str, float] = {}
    for e in entries:
        ts, kind, key = e.get("ts"), e.get("kind"), e.get("subject")
        if not isinstance(ts, (int, float)):
            continue
        if kind == "baseline" and isinstance(e.get("members"), Mapping):
            for k, m in e["members"].items():
                if isinstance(m, Mapping) and m.get("outcome") in WAITING_OUTCOMES:
                    out.setdefault(k, ts)
            continue
        if not isinstance(key, str):
            continue
        if kind == "run":
            if e.get("to") == "waiting":
                out.setdefault(f"rp1/{key}", ts)
            else:
                out.pop(f"rp1/{key}", None)
        elif "state" in e:
            state = e.get("state")
            if isinstance(state, Mapping) and state.get("outcome") in WAITING_OUTCOMES:
                out.setdefault(key, ts)
            else:
                out.pop(key, None)
    return out


def short_key(key: str, keep: int = 14) -> str:
    """A member key with a long session id cut to its tail (`…896953-k3j9x2/forge`), as the console's
    scope column shows it, so the one-line summary fits a narrow pane."""
    scope, sep, name = key.rpartition("/")
    if sep and len(scope) > keep + 1:
        scope = "…" + scope[-keep:]
    return f"{scope}{sep}{name}"


def away_line(entries: Sequence[Mapping[str, Any]], seen: float | None, now: float,
              open_comebacks: Sequence[Mapping[str, Any]] = ()) -> str:
    """The one line the console shows on opening: what changed since `seen` (the user's last look), each
    member waiting for the operator and for how long, and every comeback not acknowledged."""
    news = [e for e in entries if isinstance(e.get("ts"), (int, float)) and (seen is None or e["ts"] > seen)
            and e.get("kind") not in ("ack", "recorder")]
    if seen is None:
        head = f"History: {len(news)} change{'s' if len(news) != 1 else ''} recorded"
    elif news:
        head = f"While you were away ({ago(now - seen)}): {len(news)} change{'s' if len(news) != 1 else ''}"
    else:
        head = f"Nothing changed since you last looked ({ago(now - seen)} ago)"
    parts = [head]
    waits = waiting_since(entries)
    if waits:
        parts.append("waiting for you: " + ", ".join(
            f"{short_key(_s(k))} {ago(now - t)}" for k, t in sorted(waits.items(), key=lambda kv: kv[1])))
    if open_comebacks:
        parts.append("came back after a clear: " + ", ".join(short_key(_s(e.get("subject"))) for e in open_comebacks)
                     + " (not acknowledged)")
    return " · ".join(parts)
