"""The doctor's findings and repair plans, in-process: what each finding says, which repair it proposes,
and what `fix` reports and leaves on disk."""

from __future__ import annotations

from pathlib import Path

from rcs_tui.project.doctor import diagnose
from tests import statefix as sf


def test_an_orphaned_active_mode_file_is_found_with_its_repair(tmp_path: Path) -> None:
    sf.mode(tmp_path, "forge", current_phase="executing")
    sf.canonical(tmp_path, [])
    found = [f for f in diagnose(tmp_path) if f.kind == "orphan"]
    assert [(f.id, f.severity, f.scope, f.subject, f.repair) for f in found] == [
        ("orphan:root:forge", "warn", "root", "forge", "clear the orphaned mode file")]
    assert found[0].message == "forge has an active mode file in root that no canonical entry lists"
