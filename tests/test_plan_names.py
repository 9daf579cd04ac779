"""The names of a project's plan files (they decide the forge gate): regular files directly under
`.rcs/plans/`, sorted; none when the directory is missing."""

from __future__ import annotations

import os
from pathlib import Path

from rcs_tui.state.plans import plan_names


def test_plan_names_are_the_regular_files_sorted(tmp_path: Path) -> None:
    plans = tmp_path / ".rcs" / "plans"
    (plans / "sub").mkdir(parents=True)
    for name in ("b.md", "a.md"):
        (plans / name).write_text("x")
    os.mkfifo(plans / "pipe")
    assert plan_names(tmp_path) == ("a.md", "b.md")


def test_no_plans_directory_means_no_plan_names(tmp_path: Path) -> None:
    assert plan_names(tmp_path) == ()
