"""The AGENTS-overlay "Active Modes" section, built from the combined set.

Lists every live member (no member is primary), sorted by mode name, capped at 600 characters with
whole lines kept and a `- … (N more)` line when some had to go; the Forge Blueprint-First Gate line
is always kept when forge is active. Unlike the runtime, stale canonical members are not listed;
`runtime_would_list` says which members the runtime's own overlay would list although they are stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcs_tui.core.plan_gate import gate_line, missing_plans
from rcs_tui.state.snapshot import Member, Snapshot
from rcs_tui.views.text import strip_controls

HEADING = "**Active Modes:**"
SECTION_CAP = 600


@dataclass(frozen=True)
class OverlayBlock:
    lines: tuple[str, ...]
    truncated: int  # member lines left out by the cap
    gate: str | None  # None when forge is not active
    missing_plans: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def as_json(self) -> dict[str, object]:
        return {"text": self.text, "lines": list(self.lines), "chars": len(self.text),
                "truncated": self.truncated, "gate": self.gate, "missing_plans": list(self.missing_plans)}


def _field(value: object, limit: int = 60) -> str:
    text = " ".join(strip_controls(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def member_line(m: Member) -> str:
    """`- <mode>: iteration <i>/<max or ?>, phase: <phase>`, or `- <mode>: active`.

    The phase is the mode file's `current_phase`, else the phase its canonical entry records.
    """
    f = m.file
    parts = []
    if f is not None and f.data is not None and "iteration" in f.data:
        i = f.iteration if f.iteration is not None else "?"
        parts.append(f"iteration {i}/{f.max_iterations if f.max_iterations is not None else '?'}")
    phase = (f.phase if f is not None else None) or (m.entry.phase if m.entry is not None else None)
    if phase:
        parts.append(f"phase: {_field(phase)}")
    return f"- {m.mode}: {', '.join(parts) if parts else 'active'}"


def listed_members(snap: Snapshot) -> list[Member]:
    """The members this overlay lists: live ones, sorted by mode name."""
    return sorted(snap.live_members(), key=lambda m: m.mode)


def runtime_would_list(m: Member) -> bool:
    """The runtime's overlay lists every canonical entry, so a stale canonical member shows up there."""
    return m.entry is not None and m.health == "stale"


def build_overlay(snap: Snapshot, plans: tuple[str, ...], cap: int = SECTION_CAP) -> OverlayBlock:
    """The section for `snap`; `plans`: the file names under `.rcs/plans/` (they decide the forge gate)."""
    members = listed_members(snap)
    lines = [member_line(m) for m in members] or ["- none"]
    gate = None
    missing: tuple[str, ...] = ()
    if any(m.mode == "forge" for m in members):
        missing = missing_plans(plans)
        gate = gate_line(missing)
    fixed = [HEADING] + ([gate] if gate else [])
    budget = cap - sum(len(x) + 1 for x in fixed)
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        rest = len(lines) - i - 1
        more = f"- … ({rest} more)" if rest else ""
        if used + len(line) + 1 + (len(more) + 1 if more else 0) <= budget:
            kept.append(line)
            used += len(line) + 1
            continue
        left = len(lines) - i
        kept.append(f"- … ({left} more)")
        break
    truncated = len(lines) - sum(1 for x in kept if not x.startswith("- … ("))
    out = [HEADING, *kept] + ([gate] if gate else [])
    return OverlayBlock(tuple(out), truncated if lines != ["- none"] else 0, gate, missing)
