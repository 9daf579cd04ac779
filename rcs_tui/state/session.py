"""Which session is current: explicit → env → usable session.json → root."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from rcs_tui.core.modes import NAME_RE, check_name
from rcs_tui.files import inputs
from rcs_tui.files.host import ENV_VARS, pid_alive, pid_start_ticks
from rcs_tui.files.io import read_json
from rcs_tui.files.layout import Layout

__all__ = ["ENV_VARS", "pid_alive", "pid_start_ticks", "process_matches", "read_pointer", "resolve_session"]

Source = Literal["explicit", "env", "session.json", "root"]


@dataclass(frozen=True)
class SessionPointer:
    """`.rcs/state/session.json` and whether it can be trusted."""

    exists: bool
    session_id: str | None = None
    pid: int | None = None
    usable: bool = False
    stale_dead: bool = False
    reason: str = ""
    error: str | None = None
    data: dict[str, Any] | None = None


@dataclass(frozen=True)
class Resolution:
    """The current session and which rule chose it."""

    session_id: str | None
    source: Source
    pointer: SessionPointer
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "source": self.source,
                "pointer": {"exists": self.pointer.exists, "session_id": self.pointer.session_id,
                            "pid": self.pointer.pid, "usable": self.pointer.usable,
                            "stale_dead": self.pointer.stale_dead, "reason": self.pointer.reason,
                            "error": self.pointer.error},
                "notes": list(self.notes)}


def process_matches(pid: object, start_ticks: object = None) -> tuple[bool, str]:
    """Is the owner process alive (and the same process, when start ticks were recorded)?"""
    if not isinstance(pid, int) or isinstance(pid, bool):
        return False, "no valid pid"
    if not inputs.alive(pid):
        return False, f"pid {pid} is not running"
    if isinstance(start_ticks, int) and not isinstance(start_ticks, bool):
        actual = pid_start_ticks(pid)
        if actual is not None and actual != start_ticks:
            return False, f"pid {pid} was reused by another process (start ticks {actual} != {start_ticks})"
    return True, f"pid {pid} alive"


def read_pointer(layout: Layout) -> SessionPointer:
    read = read_json(layout.session_pointer, within=layout.rcs)
    if not read.exists:
        return SessionPointer(False, reason="no session.json")
    if read.error:
        return SessionPointer(True, error=read.error, reason=f"session.json unusable: {read.error}")
    data = read.data
    sid = data.get("session_id")
    pid = data.get("pid") if isinstance(data.get("pid"), int) else None
    if not isinstance(sid, str) or not NAME_RE.fullmatch(sid):
        return SessionPointer(True, None, pid, reason=f"session.json: invalid session_id {sid!r}", data=data)
    cwd = data.get("cwd")
    if isinstance(cwd, str) and cwd and inputs.realpath(cwd) != inputs.realpath(layout.root):
        return SessionPointer(True, sid, pid, reason=f"session.json: cwd {cwd} is not this project", data=data)
    alive, why = process_matches(data.get("pid"), data.get("pid_start_ticks"))
    if not alive:
        return SessionPointer(True, sid, pid, stale_dead=True, reason=f"stale-dead: {why}", data=data)
    return SessionPointer(True, sid, pid, usable=True, reason=why, data=data)


def resolve_session(layout: Layout, explicit: str | None = None,
                    environ: dict[str, str] | None = None) -> Resolution:
    """Pick the current session, reporting which source won and flagging a stale-dead pointer."""
    env = os.environ if environ is None else environ
    pointer = read_pointer(layout)
    notes: list[str] = []
    if explicit is not None:
        return Resolution(check_name(explicit, "session id"), "explicit", pointer)
    for var in ENV_VARS:
        value = env.get(var, "").strip()
        if not value:
            continue
        if not NAME_RE.fullmatch(value):
            notes.append(f"{var}={value[:70]!r} is not a valid session id; ignored")
        elif inputs.is_dir(layout.sessions / value):
            return Resolution(value, "env", pointer, tuple(notes))
        else:
            notes.append(f"{var}={value} has no sessions/{value}/ directory; ignored")
        break
    if pointer.usable:
        return Resolution(pointer.session_id, "session.json", pointer, tuple(notes))
    if pointer.stale_dead:
        notes.append(f"session.json points at {pointer.session_id}, but {pointer.reason}")
    return Resolution(None, "root", pointer, tuple(notes))


def compatibility_scopes(layout: Layout, resolution: Resolution) -> tuple[str | None, ...]:
    """Where a compatibility read (`read`, `get-status`, the overlay's details) looks, in order.

    Read precedence: the explicit session, else the current one, then root. As in the runtime, an
    explicit session whose directory exists is read alone (it owns its state); an explicit session
    without a directory, or a current session found through the environment or `session.json`,
    falls back to root for every mode it lacks. Authoritative decisions never use this: they stay
    on the resolved scope only.
    """
    sid = resolution.session_id
    if sid is None:
        return (None,)
    if resolution.source == "explicit" and inputs.is_dir(layout.scope_dir(sid)):
        return (sid,)
    return (sid, None)
