"""Terminal lifecycle outcomes: one labelling function and the handoff softener check."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rcs_tui.core.modes import INACTIVE_PHASES

CANONICAL_OUTCOMES: tuple[str, ...] = ("finished", "blocked", "failed", "userinterlude", "askuserQuestion")
INTERNAL_CANCELLED = "cancelled"

_FINISHED = {"finish", "finished", "complete", "completed", "done"}
_CANCELLED = {"cancelled", "canceled", "cancel", "abort", "aborted", "cleared"}
_FAILED = {"failed", "fail", "error", "errored"}
_NON_TERMINAL = {"progress", "continue", "running", "in_progress", "active"}
_QUESTION_KEYS = ("question", "questions", "pending_question", "question_id", "blocking_question",
                  "ask_user_question", "question_metadata", "user_question")


@dataclass(frozen=True, slots=True)
class Outcome:
    """A mode file's lifecycle label and where it came from.

    `value` is a canonical outcome, the internal `cancelled`, or None while the workflow runs.
    `source` is `lifecycle_outcome`, `run_outcome`, `inferred` or None.
    """

    value: str | None
    source: str | None
    raw: str | None = None

    @property
    def terminal(self) -> bool:
        return self.value is not None

    @property
    def internal(self) -> bool:
        """True for `cancelled`: valid on disk, never shown as a canonical outcome."""
        return self.value == INTERNAL_CANCELLED

    @property
    def display(self) -> str | None:
        """What a user-facing surface may show: canonical outcomes only (`cancelled` reads as admin stop)."""
        if self.value is None:
            return None
        return "stopped (admin)" if self.internal else self.value


def has_question(data: Mapping[str, Any]) -> bool:
    """True when question metadata proves a blocking question was asked."""
    state = data.get("state")
    for source in (data, state if isinstance(state, Mapping) else {}):
        for key in _QUESTION_KEYS:
            if source.get(key):
                return True
    return False


def _map_legacy(value: str, data: Mapping[str, Any]) -> str | None | bool:
    """Map one recorded value to an outcome; False means 'not recognised'."""
    v = value.strip()
    if v in CANONICAL_OUTCOMES:
        return v
    low = v.lower()
    if low == "askuserquestion":
        return "askuserQuestion"
    if low in _FINISHED:
        return "finished"
    if low in _FAILED:
        return "failed"
    if low in _CANCELLED:
        return INTERNAL_CANCELLED
    if low in {"blocked_on_user", "blocked-on-user", "waiting_on_user"}:
        return "askuserQuestion" if has_question(data) else "userinterlude"
    if low == "blocked":
        return "blocked"
    if low in {"userinterlude", "user_interlude", "interrupted", "paused"}:
        return "userinterlude"
    if low in _NON_TERMINAL:
        return None
    return False


_SHARED: dict[tuple[str | None, str | None, str | None], Outcome] = {}
SHARED_MAX = 4096  # distinct outcomes kept for sharing (a few dozen in practice; past it, new objects)
SHARED_RAW_MAX = 64  # a recorded value longer than this is not shared


def _outcome(value: str | None, source: str | None, raw: str | None = None) -> Outcome:
    """The one `Outcome` for these values: a fleet keeps an outcome per mode file of every project, and
    nearly all of them are one of a few labels, so equal outcomes are one object (they are immutable)."""
    key = (value, source, raw)
    shared = _SHARED.get(key)
    if shared is None:
        shared = Outcome(value, source, raw)
        if len(_SHARED) < SHARED_MAX and (raw is None or len(raw) <= SHARED_RAW_MAX):
            shared = _SHARED.setdefault(key, shared)
    return shared


def lifecycle_outcome(data: Mapping[str, Any] | None) -> Outcome:
    """Label a mode file: `lifecycle_outcome` > `run_outcome` > inference from phase/question/error fields."""
    if not isinstance(data, Mapping):
        return _outcome(None, None)
    for field in ("lifecycle_outcome", "run_outcome"):
        raw = data.get(field)
        if isinstance(raw, str) and raw.strip():
            mapped = _map_legacy(raw, data)
            if mapped is not False:
                return _outcome(mapped, field, raw)  # type: ignore[arg-type]
    phase = data.get("current_phase")
    if isinstance(phase, str) and phase.strip():
        mapped = _map_legacy(phase, data)
        if mapped not in (False, None):
            return _outcome(mapped, "inferred", phase)  # type: ignore[arg-type]
    if data.get("active") is False:
        if data.get("error"):
            return _outcome("failed", "inferred", "error")
        if data.get("completed_at"):
            return _outcome("finished", "inferred", "completed_at")
    return _outcome(None, None)


def is_terminal_phase(phase: object) -> bool:
    return isinstance(phase, str) and phase.strip().lower() in INACTIVE_PHASES


def is_active_doc(data: Mapping[str, Any] | None) -> bool:
    """A mode file counts as active when it says `active: true` and its phase is not terminal."""
    return isinstance(data, Mapping) and data.get("active") is True \
        and not is_terminal_phase(data.get("current_phase"))


_SOFTENERS = (
    re.compile(r"\bif you want,? I can\b", re.IGNORECASE),
    re.compile(r"\bif you(?:'|’)?d like,? I can\b", re.IGNORECASE),
    re.compile(r"\bwould you like me to continue\??", re.IGNORECASE),
)
HANDOFF_FIELDS = ("completion_note", "last_output", "last_agent_output", "handoff", "handoff_summary",
                  "terminal_message", "summary")


def softeners_in(text: str) -> list[str]:
    """The forbidden optional follow-up phrases found in a terminal handoff text."""
    found = []
    for pattern in _SOFTENERS:
        match = pattern.search(text)
        if match:
            found.append(match.group(0))
    return found


def handoff_softeners(data: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Per field, the softeners found in a mode's completion note / last output."""
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, list[str]] = {}
    for field in HANDOFF_FIELDS:
        value = data.get(field)
        if isinstance(value, str):
            hits = softeners_in(value)
            if hits:
                out[field] = hits
    return out
