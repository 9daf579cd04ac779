"""The console's doctor: the shared doctor dialog over this project's own tree (diagnosed, planned and
repaired here, through the core)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rcs_tui.project.doctor import Finding, diagnose, fix
from rcs_tui.ui.doctor_dialog import DoctorDialog, Shown


def shown(f: Finding) -> Shown:
    return Shown(f.id, f.kind, f.severity, f.scope, f.subject, f.message, f.repair, f.advice, f.plan is not None)


class LocalDoctor:
    """Findings of the tree at `root`; repairs applied here, each only as the plan confirmed."""

    def __init__(self, root: Path, session_id: str | None, rp1_db: str | None, actor: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.session_id = session_id
        self.rp1_db = rp1_db
        self.actor = actor
        self.clock = clock
        self.findings: list[Finding] = []  # the latest diagnosis, whose plans the previews and repairs use

    def diagnose(self) -> list[Shown]:
        self.findings = diagnose(self.root, self.session_id, rp1_db=self.rp1_db, now=self.clock())
        return [shown(f) for f in self.findings]

    def preview(self, ids: list[str]) -> tuple[dict[str, Any], list[str]]:
        chosen = [f for f in self.findings if f.id in ids and f.plan is not None]
        if len(chosen) == 1:
            one = chosen[0].plan().preview(self.root)  # type: ignore[misc]
            return one, [one["plan_fingerprint"]]
        changes: list[dict[str, Any]] = []
        fingerprints = []
        for f in chosen:
            try:
                plan = f.plan().preview(self.root)  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - shown in the list of changes; that repair will not run
                changes.append({"path": f.id, "action": "write", "why": f"cannot plan: {exc}"})
                fingerprints.append(f"unplannable:{f.id}")
                continue
            changes += plan["changes"]
            fingerprints.append(plan["plan_fingerprint"])
        return {"changes": changes}, fingerprints

    def fix(self, ids: list[str], expected: list[str] | None) -> tuple[dict[str, Any], list[Shown]]:
        result = fix(self.root, list(self.findings), ids, session_id=self.session_id, actor=self.actor,
                     rp1_db=self.rp1_db, expected=expected)
        return result, self.diagnose()


class DoctorScreen(DoctorDialog):
    """The console's doctor dialog (`a`/enter repair the selected finding, `A` all)."""

    def __init__(self, root: Path, session_id: str | None, rp1_db: str | None, readonly: bool, actor: str,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(LocalDoctor(root, session_id, rp1_db, actor, clock), readonly)
