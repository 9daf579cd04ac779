"""Kept answers (the status line's cache, the rp1 status store) follow what no file they read shows.

Each case is a change after which a warm cache used to keep showing the past while a fresh one did not: a
link retargeted (the session pointer's `cwd` reached through it, a session directory linked through a
directory outside `.rcs/`), an rp1 database reached through a link (its WAL lies beside the file, not the
link), a same-size commit to rp1's database whose modification time was put back, and an rp1 run moved to
another project. Every case compares the command with a warm cache against the same command with none.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from rcs_tui.rp1.fixtures import Rp1Writer, create_db
from tests.statefix import canonical, mode, pointer


def _old(root: Path) -> None:
    """Every state file a minute old: the cache stores builds whose inputs are past the racy window."""
    past = time.time() - 60
    for p in (root / ".rcs").rglob("*"):
        os.utime(p, (past, past), follow_symlinks=False)


def _warm_then_compare(run_cli, tmp_path: Path, argv: list[str], change, env: dict[str, str] | None = None,
                       cwd: Path | None = None) -> tuple[str, str]:
    """Run `argv` twice with one cache (the second from it), apply `change`, then once more with that cache
    and once with none; returns (warm, fresh) output."""
    env = dict(env or {})
    warm = {**env, "XDG_CACHE_HOME": str(tmp_path / "warm"), "NO_COLOR": "1"}
    for _ in range(2):
        assert run_cli(*argv, env=warm, cwd=cwd).code == 0
    change()
    got = run_cli(*argv, env=warm, cwd=cwd)
    fresh = run_cli(*argv, env={**env, "XDG_CACHE_HOME": str(tmp_path / "fresh"), "NO_COLOR": "1"}, cwd=cwd)
    return got.stdout, fresh.stdout


def test_a_session_pointer_whose_cwd_link_is_retargeted(tmp_path, run_cli):
    root = tmp_path / "proj"
    mode(root, "ultrawork", current_phase="executing")
    canonical(root, ["ultrawork"])
    mode(root, "forge", "S1", current_phase="executing", iteration=1)
    canonical(root, ["forge"], "S1")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "via").symlink_to(root)
    pointer(root, "S1", cwd=str(tmp_path / "via"))
    _old(root)

    def retarget() -> None:
        (tmp_path / "via").unlink()
        (tmp_path / "via").symlink_to(tmp_path / "elsewhere")  # the pointer's cwd is no longer this project

    warm, fresh = _warm_then_compare(run_cli, tmp_path, ["hud", "--once", "--root", str(root), "--width", "200"],
                                     retarget)
    assert "forge" not in fresh and warm == fresh


def test_a_session_linked_through_a_directory_outside_rcs_that_is_retargeted(tmp_path, run_cli):
    root = tmp_path / "proj"
    mode(root, "ultrawork", current_phase="executing")
    mode(root, "forge", "S1", current_phase="executing")
    outside = tmp_path / "outside" / "S1"
    outside.mkdir(parents=True)
    (tmp_path / "hop").symlink_to(tmp_path / "outside")
    (root / ".rcs/state/sessions/L").symlink_to(tmp_path / "hop" / "S1")  # leads outside .rcs: refused
    _old(root)

    def retarget() -> None:
        (tmp_path / "hop").unlink()
        (tmp_path / "hop").symlink_to(root / ".rcs/state/sessions")  # now L leads to S1, inside .rcs

    warm, fresh = _warm_then_compare(run_cli, tmp_path, ["hud", "--once", "--json", "--root", str(root),
                                                         "--session", "L"], retarget)
    (scope,) = [s for s in json.loads(fresh)["scopes"] if s["scope"] == "L"]
    assert scope["active_modes"] == ["forge"] and json.loads(warm) == json.loads(fresh)


def _project_with_run(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    mode(root, "ultrawork", current_phase="executing")
    _old(root)
    db = tmp_path / "real.db"
    create_db(db)
    with Rp1Writer(db) as w:
        w.start_run("build", project_path=root, run_id="run-old")
        w.step("run-old", "requirements", "completed")
        w.start_run("build-fast", project_path=root, run_id="run-new")
        w.step("run-new", "plan", "running")
    return root, db


def test_a_run_moved_to_another_project_leaves_the_kept_list(tmp_path, run_cli):
    root, db = _project_with_run(tmp_path)

    def move() -> None:
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE runs SET project_path = '/some/other/project', "
                         "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = 'run-new'")
        time.sleep(1.1)

    warm, fresh = _warm_then_compare(run_cli, tmp_path, ["rp1", "runs", "--json", "--db", str(db), "--root",
                                                         str(root)], move)
    assert [r["id"] for r in json.loads(fresh)["runs"]] == ["run-old"]
    assert json.loads(warm)["runs"] == json.loads(fresh)["runs"] and json.loads(warm)["total"] == 1


def test_a_database_reached_through_a_link_is_read_with_its_wal(tmp_path, run_cli):
    """rp1 keeps the database open, so its newest commits are in `real.db-wal`: read through a link they
    count as they do through the file's own path."""
    root, db = _project_with_run(tmp_path)
    link = tmp_path / "link.db"
    link.symlink_to(db)
    writer = Rp1Writer(db)  # held open: nothing is checkpointed into the file
    try:
        writer.step("run-new", "plan", "failed")
        assert Path(f"{db}-wal").exists()
        outputs = [run_cli("hud", "--once", "--root", str(root), "--width", "200",
                           env={"RP1_DB": str(path), "NO_COLOR": "1"}).stdout for path in (db, link)]
    finally:
        writer.close()
    assert "plan failed" in outputs[0] and outputs[1] == outputs[0]


def test_a_same_size_commit_whose_mtime_was_put_back_is_seen(tmp_path, run_cli):
    root, db = _project_with_run(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # commits go into the file itself
    st = db.stat()

    def commit() -> None:
        with Rp1Writer(db) as w:
            w.step("run-new", "plan", "failed")  # a new event in a page with room: the file keeps its size
        os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))  # a tool that keeps times (rsync -t, cp -p)
        assert db.stat().st_size == st.st_size

    warm, fresh = _warm_then_compare(run_cli, tmp_path, ["hud", "--once", "--root", str(root), "--width", "200"],
                                     commit, env={"RP1_DB": str(db)})
    assert "plan failed" in fresh and warm == fresh
