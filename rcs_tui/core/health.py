"""Member health: live / stale / orphan / root-survivor, decided from plain facts about files."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Health = Literal["live", "stale", "orphan", "root-survivor"]

HEARTBEAT_STALE_SECONDS = 120.0
"""A worker whose last turn is older than this has stopped beating, whatever its `alive` flag says
(the team runtime beats on every turn and treats a silent worker as stuck after about two minutes)."""

WORKER_CONDITIONS: tuple[str, ...] = ("alive", "silent", "not reporting", "dead")


def needs_operator(health: str) -> bool:
    """A member whose health is anything but live (stale, orphan, root survivor, dead owner, unreadable)
    is one the operator should look at: the console's n / N walk exactly these."""
    return health != "live"


def beat_is_stale(heartbeat_age: float | None) -> bool:
    """Whether a heartbeat this many seconds old means the worker stopped beating (no readable time: no)."""
    return heartbeat_age is not None and heartbeat_age > HEARTBEAT_STALE_SECONDS


def worker_condition(dead_reason: str | None, alive: bool | None, heartbeat_age: float | None) -> str:
    """The one rule every view uses for a worker: dead when its pid is gone or its heartbeat says so;
    else silent when its last turn is older than `HEARTBEAT_STALE_SECONDS`; else not reporting when it
    carries no alive flag; only then alive."""
    if dead_reason:
        return "dead"
    if beat_is_stale(heartbeat_age):
        return "silent"
    if alive is None:
        return "not reporting"
    return "alive"


@dataclass(frozen=True)
class FileFacts:
    """What health needs to know about one mode file."""

    exists: bool
    active: bool
    phase: str | None = None
    tombstone: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    mode: str
    health: Health
    in_root: bool
    reason: str


def classify(session_id: str | None, canonical: Sequence[str] | None,
             scope_files: Mapping[str, FileFacts], root_files: Mapping[str, FileFacts],
             tombstoned_in_sessions: Collection[str] = ()) -> list[Verdict]:
    """Health of every mode the authoritative scope knows about.

    `canonical` is None when the scope has no usable canonical file (mode files alone decide).
    `root_files` matter only when a session is current; `tombstoned_in_sessions` only for root scope.
    """
    out: list[Verdict] = []
    members = list(dict.fromkeys(canonical or ()))
    for mode in members:
        facts = scope_files.get(mode)
        if facts is None or not facts.exists:
            out.append(Verdict(mode, "stale", False, "canonical entry but no mode file"))
        elif facts.error:
            out.append(Verdict(mode, "stale", False, f"canonical entry but mode file unreadable: {facts.error}"))
        elif not facts.active:
            what = f"phase {facts.phase}" if facts.phase else "active:false"
            out.append(Verdict(mode, "stale", False, f"canonical entry but mode file is inactive ({what})"))
        else:
            out.append(Verdict(mode, "live", False, "canonical entry and active mode file"))
    for mode, facts in sorted(scope_files.items()):
        if mode in members or not facts.active:
            continue
        if canonical is None:
            out.append(Verdict(mode, "live", False, "active mode file (no canonical set in this scope)"))
        elif session_id is None and mode in tombstoned_in_sessions:
            out.append(Verdict(mode, "root-survivor", True,
                               "root file active behind a session tombstone; it would resurrect the mode"))
        else:
            out.append(Verdict(mode, "orphan", False, "active mode file that no canonical entry lists"))
    if session_id is None:
        return [v if not (v.health == "live" and v.mode in tombstoned_in_sessions) else
                Verdict(v.mode, "root-survivor", True,
                        "root file active behind a session tombstone; it would resurrect the mode")
                for v in out]
    for mode, facts in sorted(root_files.items()):
        if not facts.active:
            continue
        local = scope_files.get(mode)
        behind = "behind the session's tombstone" if local and local.tombstone else "while a session is current"
        out.append(Verdict(mode, "root-survivor", True, f"root file still active {behind}"))
    return out
