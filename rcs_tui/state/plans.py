"""The plan files of a project (`.rcs/plans/`): their names, which decide the forge gate."""

from __future__ import annotations

from pathlib import Path

from rcs_tui.files import inputs
from rcs_tui.files.layout import Layout


def plan_names(root: Path) -> tuple[str, ...]:
    """The names of the regular files directly under `.rcs/plans/`, sorted (none when it is missing)."""
    plans = Layout(root).plans
    try:
        names = inputs.listdir(plans)
    except OSError:
        return ()
    return tuple(sorted(n for n in names if inputs.is_file(plans / n)))
