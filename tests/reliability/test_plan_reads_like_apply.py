"""Planning reads a file exactly as the apply step will read it again: one reader, one cap, one link rule.

A plan used to be built on `read_bounded` (which follows a link that stays inside `.rcs/`) while apply
re-reads through the confined tree (which follows no link at all), so a linked state file was planned on,
shown as a fine `--dry-run`, and only refused when applied. Now both go through `Tree.read_file`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rcs_tui.files.fsafe import Refused, Tree
from rcs_tui.files.io import MAX_STATE_BYTES, read_bounded
from tests import statefix as sf
from tests.fixtures_tasks import make_task

REFUSED = "refusing to plan a change to a file that could not be read (nothing was changed)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    sf.mode(root, "forge", current_phase="executing")
    sf.canonical(root, ["forge"])
    return root


def link_state_file(root: Path) -> Path:
    """forge-state.json becomes a link to a file beside it (inside .rcs/state)."""
    path = root / ".rcs/state/forge-state.json"
    os.rename(path, root / ".rcs/state/forge-real.json")
    path.symlink_to("forge-real.json")
    return path


@pytest.mark.parametrize("extra", [[], ["--dry-run"]])
def test_a_linked_mode_file_is_refused_while_planning_with_its_reason(project, run_cli, digest_tree, extra):
    link_state_file(project)
    before = digest_tree(project)
    for args in (["state", "clear", "--mode", "forge"], ["state", "write", "--mode", "forge", "--input", '{"x": 1}']):
        res = run_cli(*args, *extra, "--json", "--root", str(project))
        assert res.code == 1, (args, res.stdout)
        assert res.error == f".rcs/state/forge-state.json: is a symlink; not followed; {REFUSED}"
    assert digest_tree(project) == before


def test_a_linked_canonical_file_is_refused_while_planning(project, run_cli, digest_tree):
    canon = project / ".rcs/state/skill-active-state.json"
    os.rename(canon, project / ".rcs/state/canon-real.json")
    canon.symlink_to("canon-real.json")
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "forge", "--dry-run", "--json", "--root", str(project))
    assert res.code == 1
    assert res.error == f".rcs/state/skill-active-state.json: is a symlink; not followed; {REFUSED}"
    assert digest_tree(project) == before


def test_a_session_reached_through_a_linked_directory_is_refused_naming_the_link(project, run_cli, digest_tree):
    sf.mode(project, "forge", "s-real", current_phase="executing")
    os.symlink("s-real", project / ".rcs/state/sessions/s-link")
    before = digest_tree(project)
    res = run_cli("state", "clear", "--mode", "forge", "--session-id", "s-link", "--dry-run", "--json",
                  "--root", str(project))
    assert res.code == 1
    assert res.error == (".rcs/state/sessions/s-link/forge-state.json: .rcs/state/sessions/s-link is a symlink or "
                         f"not a directory; not followed; {REFUSED}")
    assert digest_tree(project) == before


def test_a_linked_task_state_is_refused_before_any_plan(tmp_path, run_cli, digest_tree):
    root = tmp_path / "p"
    tdir = make_task(root, "t1", "planning")
    os.rename(tdir / "state.json", tdir / "real.json")
    (tdir / "state.json").symlink_to("real.json")
    before = digest_tree(root)
    for args in (["task", "override", "t1", "--to", "done", "--reason", "r", "--dry-run"], ["task", "show", "t1"]):
        res = run_cli(*args, "--json", "--root", str(root))
        assert res.code == 1, (args, res.stdout)
        assert res.error == ".rcs/tasks/t1/state.json: is a symlink; not followed"
    assert digest_tree(root) == before


def test_the_confined_reader_and_read_bounded_share_the_cap_and_the_words(project):
    """Same file, same refusal text, whichever reader reached it; the confined one raises it as `Refused`."""
    rel = ".rcs/state/forge-state.json"
    path = project / rel
    path.write_bytes(b" " * (MAX_STATE_BYTES + 1))
    tree = Tree(project)
    why = f"too large ({MAX_STATE_BYTES + 1} bytes > {MAX_STATE_BYTES})"
    assert tree.read_file(rel).error == read_bounded(path).error == why
    with pytest.raises(Refused, match=r"^\.rcs/state/forge-state\.json: too large"):
        tree.read(rel)
    path.unlink()
    os.mkfifo(path)
    assert tree.read_file(rel).error == read_bounded(path).error == "not a regular file (a FIFO); not read"
    path.unlink()
    path.write_text(json.dumps({"active": True}))
    got = tree.read_json(path)
    assert got.ok and got.data == {"active": True} and got.raw == path.read_bytes()


def test_a_mode_file_replaced_by_a_link_after_planning_is_still_refused_at_apply(project):
    """The apply step keeps its own check: a link swapped in between plan and apply changes nothing."""
    from rcs_tui.state.ops import plan_clear
    from rcs_tui.state.txn import TxnError

    op = plan_clear(project, "forge")
    link_state_file(project)
    with pytest.raises(TxnError, match=r"^\.rcs/state/forge-state\.json: is a symlink; not followed; nothing"):
        op.run(project)
    assert json.loads((project / ".rcs/state/forge-real.json").read_text())["active"] is True
