"""The transition policy of seeds 000/001, written as data and evaluated in one place."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rcs_tui.core.modes import TRACKED_MODES, is_execution, is_planning

STANDALONE_ONLY: frozenset[str] = frozenset({"autopilot", "autoresearch"})

# Unordered pairs that may be active together.
OVERLAPS: frozenset[frozenset[str]] = frozenset(
    {frozenset({"team", "forge"})}
    | {frozenset({"ultrawork", m}) for m in TRACKED_MODES if m not in STANDALONE_ONLY and m != "ultrawork"}
)

_CLEAN_VERDICTS = {"clean", "approved", "approve", "pass", "passed", "ok", "lgtm"}


def autopilot_review_not_clean(data: Mapping[str, Any] | None) -> bool:
    """autopilot → blueprint is a loopback only while autopilot's code-review is not clean."""
    if not isinstance(data, Mapping) or data.get("current_phase") != "code-review":
        return False
    if data.get("review_clean") is True or data.get("code_review_clean") is True:
        return False
    for key in ("code_review_verdict", "review_verdict", "verdict"):
        value = data.get(key)
        if isinstance(value, str) and value.strip().lower() in _CLEAN_VERDICTS:
            return False
    review = data.get("code_review")
    if isinstance(review, Mapping):
        verdict = review.get("verdict")
        if review.get("clean") is True or (isinstance(verdict, str) and verdict.lower() in _CLEAN_VERDICTS):
            return False
    return True


# (source, destination) -> condition on the source's mode file (None = always).
HANDOFFS: dict[tuple[str, str], Callable[[Mapping[str, Any] | None], bool] | None] = {
    ("deep-interview", "blueprint"): None,
    ("blueprint", "team"): None,
    ("blueprint", "forge"): None,
    ("blueprint", "autopilot"): None,
    ("autopilot", "blueprint"): autopilot_review_not_clean,
}

Kind = Literal["noop", "start", "overlap", "auto-complete", "deny"]


def may_overlap(a: str, b: str) -> bool:
    return a == b or frozenset({a, b}) in OVERLAPS


def hands_off(source: str, dest: str, source_data: Mapping[str, Any] | None = None) -> bool:
    key = (source, dest)
    if key not in HANDOFFS:
        return False
    condition = HANDOFFS[key]
    return condition is None or condition(source_data)


def is_approved_set(modes: Sequence[str]) -> bool:
    """An allowed active set: one mode, or modes that may all overlap pairwise."""
    members = list(dict.fromkeys(modes))
    return all(may_overlap(a, b) for i, a in enumerate(members) for b in members[i + 1:])


@dataclass(frozen=True)
class Decision:
    """The policy's answer for one request against one active set."""

    kind: Kind
    request: str
    active_before: tuple[str, ...]
    active_after: tuple[str, ...]
    sources: tuple[str, ...] = ()
    message: str = ""
    rollback: bool = False
    clear_hint: str | None = None

    @property
    def allowed(self) -> bool:
        return self.kind != "deny"

    @property
    def operator_message(self) -> str:
        """The message for an rcs-tui operator: a denial names the rcs-tui command that clears the blocker
        (`message` keeps the runtime's own words)."""
        if self.kind != "deny" or self.clear_hint is None:
            return self.message
        return denial_message(self.request, self.active_before, self.clear_hint, self.rollback, operator=True)

    def as_json(self) -> dict[str, Any]:
        return {"decision": self.kind, "allowed": self.allowed, "request": self.request,
                "active_before": list(self.active_before), "active_after": list(self.active_after),
                "auto_completed": list(self.sources), "message": self.message, "rollback": self.rollback}


def transition_message(sources: Sequence[str], dest: str) -> str:
    return f"mode transiting: {' + '.join(sources)} -> {dest}"


def denial_message(request: str, active: Sequence[str], clear_mode: str, rollback: bool, *,
                   operator: bool = False) -> str:
    """The runtime's denial text, word for word (what an agent sees), or with `operator` the same denial
    telling an rcs-tui operator the rcs-tui command that clears the blocking mode."""
    listed = ", ".join(active)
    combo = " + ".join([*active, request])
    text = (f"Cannot activate {request}: {listed} already active. Unsupported workflow overlap: {combo}. "
            "Current state is unchanged. ")
    if rollback:
        text += ("Execution-to-planning rollback auto-complete is not allowed. "
                 "First clear current state first and retry if this action is intended. ")
    if operator:
        return text + (f"Clear it with `rcs-tui state clear --mode {clear_mode}` (`--dry-run` shows the plan first), "
                       "then retry.")
    text += (f"Clear incompatible workflow state via `rcs state clear --input '{{\"mode\":\"{clear_mode}\"}}' --json` "
             f"or the `rcs_state.*` MCP tools (`rcs_state.state_clear({{ mode: \"{clear_mode}\" }})`), then retry.")
    return text


def decide(request: str, active: Sequence[str],
           mode_data: Mapping[str, Mapping[str, Any] | None] | None = None) -> Decision:
    """Evaluate request R against the authoritative active set A (rule written out in issue 2)."""
    data = mode_data or {}
    before = tuple(dict.fromkeys(active))
    if request in before:
        return Decision("noop", request, before, before, message=f"{request} already active; no change")
    if not before:
        return Decision("start", request, before, (request,), message=f"{request} started")
    sources = tuple(m for m in before if hands_off(m, request, data.get(m)))
    others = tuple(m for m in before if m not in sources)
    if sources and all(may_overlap(o, request) for o in others):
        return Decision("auto-complete", request, before, (*others, request), sources=sources,
                        message=transition_message(sources, request))
    if all(may_overlap(m, request) for m in before):
        return Decision("overlap", request, before, (*before, request),
                        message=f"{request} overlaps {' + '.join(before)}")
    blockers = [m for m in before if not may_overlap(m, request)]
    rollback = is_planning(request) and any(is_execution(m) for m in before)
    return Decision("deny", request, before, before, message=denial_message(request, before, blockers[0], rollback),
                    rollback=rollback, clear_hint=blockers[0])


# Creator-facing aliases for the runtime identifiers.
SKILL_ALIASES: dict[str, str] = {"brief": "deep-interview", "crew": "team", "autoforge": "autopilot"}
_TOKEN = re.compile(r"\$([A-Za-z][A-Za-z0-9_-]*)")


def parse_prompt_skills(prompt: str) -> list[str]:
    """The contiguous leading `$skill` tokens of a prompt (or a bare mode name), as runtime identifiers."""
    skills: list[str] = []
    words = prompt.strip().split()
    if len(words) == 1 and not words[0].startswith("$"):
        words = ["$" + words[0]]
    for word in words:
        match = _TOKEN.fullmatch(word)
        if not match:
            break
        name = SKILL_ALIASES.get(match.group(1).lower(), match.group(1).lower())
        if name in TRACKED_MODES and name not in skills:
            skills.append(name)
    return skills


@dataclass(frozen=True)
class PromptDecision:
    """Outcome of a multi-skill prompt: the decisions applied in order and the deferred skills."""

    requested: tuple[str, ...]
    decisions: tuple[Decision, ...]
    deferred: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def final(self) -> tuple[str, ...]:
        return self.decisions[-1].active_after if self.decisions else ()

    def as_json(self) -> dict[str, Any]:
        return {"requested": list(self.requested), "deferred": list(self.deferred),
                "decisions": [d.as_json() for d in self.decisions], "final_active": list(self.final),
                "notes": list(self.notes)}


def decide_prompt(prompt: str, active: Sequence[str],
                  mode_data: Mapping[str, Mapping[str, Any] | None] | None = None) -> PromptDecision:
    """The multi-skill rule: a planning skill is kept and simultaneous execution skills deferred."""
    requested = parse_prompt_skills(prompt)
    if not requested:
        return PromptDecision((), (), notes=("no tracked $skill found in the request",))
    planning = [s for s in requested if is_planning(s)]
    deferred: tuple[str, ...] = ()
    notes: list[str] = []
    order = requested
    if planning and len(requested) > 1:
        deferred = tuple(s for s in requested if is_execution(s))
        order = [s for s in requested if not is_execution(s)]
        if deferred:
            notes.append("planning preserved over simultaneous execution follow-up; "
                         f"deferred skills: {', '.join(deferred)}")
    decisions = []
    current = tuple(active)
    for skill in order:
        decision = decide(skill, current, mode_data)
        decisions.append(decision)
        if not decision.allowed:
            break
        current = decision.active_after
    return PromptDecision(tuple(requested), tuple(decisions), deferred, tuple(notes))
