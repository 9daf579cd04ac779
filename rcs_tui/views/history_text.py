"""The flight recorder's entries in words: one line per entry, a timeline with quiet stretches folded into
one line, and the "while you were away" summary. Pure: entries in (as `project.recorder` reads them),
plain text out; every string from an entry goes through the one sanitiser before it is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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


KIND_WORDS = {"appeared": "member appeared", "phase": "phase changed", "iteration": "iteration changed",
              "health": "health changed", "outcome": "outcome changed", "cleared": "member cleared",
              "ended": "member ended", "came_back": "came back after a clear", "restored": "restored by an undo",
              "worker": "worker changed", "task": "task changed", "run": "rp1 run changed",
              "ack": "acknowledged", "baseline": "recording started", "recorder": "recorder event"}


def _who(e: Mapping[str, Any]) -> str | None:
    """Who or what made the change, when the entry says: the operator (with the journal entry), the runtime,
    an undo, the operator acknowledging."""
    kind = e.get("kind")
    if kind == "cleared":
        if e.get("by") == "operator":
            return f"the operator {_s(e.get('actor'))}, journal entry {_s(e.get('journal_id'))}"
        return "the runtime (no operator clear in the journal)"
    if kind == "came_back":
        by = e.get("cleared_by")
        clear = (f"the operator cleared it (journal entry {_s(e.get('journal_id'))})" if by == "operator"
                 else "the runtime cleared it")
        return f"{writer_words(e.get('writer'))}; {clear}"
    if kind == "restored":
        return (f"an undo by {_s(e.get('actor'))}, journal entry {_s(e.get('journal_id'))} "
                f"(undoes {_s(e.get('undoes'))})")
    if kind == "ack":
        return f"the operator {_s(e.get('actor'))}"
    if kind == "recorder":
        return f"rcs-tui, pid {_s(e.get('pid'))}"
    state = e.get("state")
    if isinstance(state, Mapping) and state.get("writer"):
        return writer_words(state.get("writer"))
    return None


def _change(e: Mapping[str, Any]) -> str | None:
    """What changed, from → to, in words."""
    kind = e.get("kind")
    if kind in ("phase", "iteration", "health", "outcome", "worker", "task", "run"):
        return f"{_s(e.get('from'))} → {_s(e.get('to'))}" + (" (added)" if e.get("added") else "") + (
            " (removed)" if e.get("removed") else "")
    if kind in ("cleared", "ended"):
        return f"{_state_words(e.get('before')) or '?'} → gone from the active set"
    if kind in ("appeared", "came_back", "restored"):
        return f"not in the active set → {_state_words(e.get('state')) or '?'}"
    return None


def detail_fields(e: Mapping[str, Any], now: float, local_time: Callable[[float], str],
                  acknowledged: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """Every field of one entry as (label, words), for its detail page: when, what, the member, what changed
    from → to, who or what did it, the writer's session and pid, the came-back delay, the acknowledgement
    (`acknowledged`: the later `ack` entry naming it, if any). Nothing is cut."""
    out: list[tuple[str, str]] = []
    ts = e.get("ts")
    if isinstance(ts, (int, float)):
        out.append(("time", f"{local_time(ts)} ({_s(e.get('at'))}, {ago(now - ts)} ago)"))
    else:
        out.append(("time", _s(e.get("at"))))
    kind = _s(e.get("kind"))
    out.append(("kind", f"{KIND_WORDS.get(kind, kind)} ({kind})"))
    subject = e.get("item") if e.get("kind") == "ack" else e.get("subject")
    if subject is not None:
        out.append(("member" if "/" in str(subject) else "subject", _s(subject)))
    out.append(("what", describe(e)))
    change = _change(e)
    if change:
        out.append(("change", change))
    who = _who(e)
    if who:
        out.append(("by", who))
    if e.get("kind") == "came_back":
        after, cleared = e.get("after_s"), e.get("cleared_at")
        when = f"{ago(after)} after the clear" if isinstance(after, (int, float)) else "after the clear"
        if isinstance(cleared, (int, float)):
            when += f" (cleared {local_time(cleared)})"
        out.append(("came back", when))
        if acknowledged is not None:
            out.append(("acknowledged", f"by {_s(acknowledged.get('actor'))} at {_s(acknowledged.get('at'))}"))
        else:
            out.append(("acknowledged", "not yet: it stays in attention until acknowledged"))
    ident = f"{_s(e.get('id'))}" + (f", sequence {_s(e.get('seq'))}" if e.get("seq") is not None else "")
    out.append(("entry", f"{ident}, format version {_s(e.get('v'))}"))
    return out


def ack_of(entries: Sequence[Mapping[str, Any]], e: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first `ack` after entry `e` that names it (its id, or its member), if any."""
    seen = False
    for x in entries:
        if x is e:
            seen = True
        elif seen and x.get("kind") == "ack" and x.get("item") in (e.get("id"), e.get("subject")):
            return x
    return None
