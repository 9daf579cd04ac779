"""A command never answers "nothing here" for a place it could not look: a root the user named (with `--root`
or `RCS_ROOT`) that is not a project is an error for every command, on the quick path as through click, and
a state directory or canonical set that cannot be read is an error for the answers built on them
(`state list-active`, `state get-status`, `overlay`), where an empty answer would read as "nothing active".

Mode 000 does not stop root, so the unreadable cases run the command without the capabilities that let root
read any file (`setpriv`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.conftest import RCS_TUI
from tests.statefix import canonical, mode

NO_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
               "--inh-caps=-dac_override,-dac_read_search"]
needs_setpriv = pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None,
                                   reason="needs setpriv to run without root's file-reading capabilities")


def _unprivileged(*argv: str) -> subprocess.CompletedProcess[str]:
    prefix = NO_OVERRIDE if os.geteuid() == 0 else []
    return subprocess.run([*prefix, RCS_TUI, *argv], capture_output=True, text=True, timeout=60, cwd="/")


@pytest.mark.parametrize("argv", [["rp1", "runs", "--json"], ["rp1", "machines", "--json"],
                                  ["state", "list-active"], ["hud", "--once", "--json"]])
def test_rcs_root_naming_no_project_is_an_error_not_the_cwds_project(tmp_path, run_cli, argv):
    here = tmp_path / "here"
    mode(here, "forge", current_phase="executing")
    res = run_cli(*argv, cwd=here, env={"RCS_ROOT": str(tmp_path / "nothing")})
    assert res.code == 1
    assert json.loads(res.stderr.splitlines()[-1]) == {
        "error": f"RCS_ROOT={tmp_path / 'nothing'}: not a directory", "kind": "no_project"}


@needs_setpriv
@pytest.mark.parametrize("argv", [["rp1", "runs"], ["hud", "--once"], ["doctor"]])
def test_an_unreadable_root_is_the_same_usage_error_on_every_path(tmp_path, argv):
    root = tmp_path / "locked"
    mode(root, "forge", current_phase="executing")
    root.chmod(0)
    try:
        res = _unprivileged(*argv, "--root", str(root))
    finally:
        root.chmod(0o755)
    assert res.returncode == 2
    assert json.loads(res.stderr.splitlines()[-1]) == {
        "error": f"Invalid value for '--root': Directory '{root}' is not readable.", "kind": "usage"}


@needs_setpriv
@pytest.mark.parametrize("argv", [["state", "list-active"], ["state", "get-status"], ["overlay"]])
@pytest.mark.parametrize("locked,why", [(".rcs/state", "cannot list directory: Permission denied"),
                                        (".rcs/state/skill-active-state.json", "unreadable: Permission denied")])
def test_state_that_cannot_be_read_is_an_error_not_an_empty_answer(tmp_path, argv, locked, why):
    mode(tmp_path, "forge", current_phase="executing")
    canonical(tmp_path, ["forge"])
    (tmp_path / locked).chmod(0)
    try:
        res = _unprivileged(*argv, "--root", str(tmp_path))
    finally:
        (tmp_path / locked).chmod(0o755 if locked == ".rcs/state" else 0o644)
    assert res.returncode == 1 and res.stdout == ""
    error = json.loads(res.stderr.splitlines()[-1])
    assert error["kind"] == "io_error"
    assert error["error"].startswith(f"cannot read the state this answer is built from: {locked}: {why}")


def test_a_damaged_canonical_set_is_still_answered_as_the_runtime_reads_it(tmp_path, run_cli):
    mode(tmp_path, "forge", current_phase="executing")
    (tmp_path / ".rcs/state/skill-active-state.json").write_text("{bad")
    res = run_cli("state", "list-active", "--root", str(tmp_path))
    assert res.code == 0 and json.loads(res.stdout) == {"active_modes": ["forge"]}

