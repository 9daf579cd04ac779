"""Mode vocabulary: tracked modes, their kinds, terminal phases and name validation."""

from __future__ import annotations

import re

from rcs_tui.core import error_kinds as kinds

PLANNING_LIKE: tuple[str, ...] = ("deep-interview", "blueprint", "autoresearch")
EXECUTION_LIKE: tuple[str, ...] = ("team", "forge", "autopilot", "ultrawork", "ultraqa")
TRACKED_MODES: tuple[str, ...] = PLANNING_LIKE + EXECUTION_LIKE

# Phases after which a mode file no longer counts as active.
INACTIVE_PHASES: frozenset[str] = frozenset(
    {"complete", "completed", "cancelled", "canceled", "failed", "inactive", "cleared"}
)

# `*-state.json` files that live beside mode files but are infrastructure, never workflows.
INFRA_STATE_NAMES: frozenset[str] = frozenset(
    {"hud", "run", "skill-active", "native-stop", "notify-hook", "tmux-hook", "session"}
)

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TEAM_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,29}$")
STATE_SUFFIX = "-state.json"
CANONICAL_FILE = "skill-active-state.json"


class BadName(ValueError):
    """A session id, mode name, team name or task id that could escape its directory."""

    error_kind = kinds.BAD_INPUT


def check_name(value: object, what: str) -> str:
    """Return `value` if it is a safe id (`^[A-Za-z0-9_-]{1,64}$`), else raise BadName naming `what`."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        shown = repr(value) if not isinstance(value, str) else repr(value[:80])
        raise BadName(f"invalid {what} {shown}: must match ^[A-Za-z0-9_-]{{1,64}}$")
    return value


def check_team_name(value: object) -> str:
    """Return a valid team name or raise BadName."""
    if not isinstance(value, str) or not TEAM_RE.fullmatch(value):
        raise BadName(f"invalid team name {value!r}: must match ^[a-z0-9][a-z0-9-]{{0,29}}$")
    return value


def is_tracked(mode: str) -> bool:
    return mode in TRACKED_MODES


def is_planning(mode: str) -> bool:
    return mode in PLANNING_LIKE


def is_execution(mode: str) -> bool:
    return mode in EXECUTION_LIKE


_TRACKED_BY_NAME = {m: m for m in TRACKED_MODES}


def mode_from_filename(name: str) -> str | None:
    """The tracked mode a `<mode>-state.json` file name stands for, else None.

    Only tracked workflow modes count: `hud-`, `run-`, `skill-active-` and every other
    `*-state.json` beside them is infrastructure and must never appear as an active mode.
    The name returned is this module's own string (one object per mode, not one per file read: a live
    fleet keeps a mode file of every session of every project).
    """
    if not name.endswith(STATE_SUFFIX):
        return None
    return _TRACKED_BY_NAME.get(name[: -len(STATE_SUFFIX)])
