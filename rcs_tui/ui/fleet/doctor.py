"""The fleet's doctor: the shared doctor dialog over a fleet project's own `rcs-tui doctor --json` (over
ssh for a remote one). Each repair's plan comes from that report, is confirmed as shown, and is applied
with its fingerprint (`--expect-plan`), so the project writes nothing when its files changed in between."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding

from rcs_tui.fleet.actions import ActionError, CliActions
from rcs_tui.fleet.rows import inert
from rcs_tui.ui.doctor_dialog import DoctorDialog, Shown


def shown(f: dict[str, Any]) -> Shown:
    """A finding of the report, made inert (it comes from the project's files)."""
    return Shown(inert(f.get("id"), 200), inert(f.get("kind"), 40), inert(f.get("severity"), 10),
                 inert(f.get("scope"), 80), inert(f.get("subject"), 120), inert(f.get("message"), 400),
                 inert(f.get("repair"), 200) if f.get("repair") else None,
                 inert(f.get("advice"), 400) if f.get("advice") else None,
                 isinstance(f.get("plan"), dict))


class CliDoctor:
    """Findings and repairs of a fleet project, through its rcs-tui."""

    def __init__(self, actions: CliActions) -> None:
        self.actions = actions
        self.plans: dict[str, dict[str, Any]] = {}  # finding id -> its repair's plan, from the latest report
        self.last: list[Shown] = []

    def diagnose(self) -> list[Shown]:
        report = self.actions.doctor()
        findings = [f for f in report.get("findings") or [] if isinstance(f, dict)]
        self.plans = {str(f.get("id")): f["plan"] for f in findings if isinstance(f.get("plan"), dict)}
        self.last = [shown(f) for f in findings]
        return self.last

    def preview(self, ids: list[str]) -> tuple[dict[str, Any], list[str]]:
        plans = [self.plans[i] for i in ids if i in self.plans]
        fingerprints = [str(p.get("plan_fingerprint")) for p in plans]
        if len(plans) == 1:
            return plans[0], fingerprints
        return {"changes": [c for p in plans for c in p.get("changes") or []]}, fingerprints

    def fix(self, ids: list[str], expected: list[str] | None) -> tuple[dict[str, Any], list[Shown]]:
        try:
            report = self.actions.doctor(fix=True, only=tuple(ids), expect=tuple(expected or ()))
            result = report.get("fix") or {"applied": [], "failed": []}
        except ActionError as exc:  # refused before anything was written (the plans changed, host gone…)
            result = {"applied": [], "failed": [{"id": ", ".join(ids), "error": str(exc)}]}
        try:
            return result, self.diagnose()
        except ActionError:  # the findings stay as they were; `r` asks again
            return result, self.last


class FleetDoctor(DoctorDialog):
    """The doctor of one fleet project: `a`/enter repairs the selected finding, `A` or `D` all of them."""

    ALL_KEYS = ("A", "D")
    BINDINGS = [Binding("D", "repair_all", "Repair all", show=False)]

    def __init__(self, actions: CliActions, readonly: bool, title: str) -> None:
        super().__init__(CliDoctor(actions), readonly, title)
