"""Packaging: every subpackage and data file reaches a normal (non-editable) install."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_python_package_is_listed_for_installation():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "rcs_tui").rglob("__init__.py")}
    data_only = {"rcs_tui.styles", "rcs_tui.rp1.machines"}  # directories of data files, no __init__.py needed
    assert found | data_only == listed


def test_stylesheets_and_machines_are_package_data():
    from importlib import resources

    styles = {p.name for p in resources.files("rcs_tui.styles").iterdir()}
    assert {"hud.tcss", "console.tcss"} <= styles
    assert resources.files("rcs_tui.core").joinpath("task_lifecycle.mmd").is_file()
    assert resources.files("rcs_tui.rp1").joinpath("machines/build.md").is_file()
