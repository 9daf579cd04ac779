"""The rp1 database in trouble: held by a writer, mid-migration, corrupt, missing.

For each, one long-lived Rp1Source (as the HUD keeps it) reports a status instead of raising, recovers
on its next read once the problem is gone, and never modifies the files: sha256 of the db, -wal and
-shm is taken around every read the reader makes (the writer's own changes happen between reads).
"""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.source import Rp1Source


def digests(db: Path) -> dict[str, str | None]:
    out = {}
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{db}{suffix}")
        out[suffix or "db"] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
    return out


def read(src: Rp1Source, db: Path) -> str:
    """One feed read that must leave every file byte-identical; returns the status code."""
    before = digests(db)
    feed = src.feed()
    assert digests(db) == before, "the reader modified the database files"
    if feed.state.ok:
        assert feed.total == len(feed.runs) > 0
    else:
        assert feed.status and feed.status.startswith("rp1: ")
    return feed.state.code


def populate(db: Path, root: Path, runs: int = 3, prefix: str = "r") -> None:
    with Rp1Writer(db, clock=FakeClock()) as w:
        for i in range(runs):
            rid = w.start_run("build-fast", project_path=str(root.resolve()), run_id=f"{prefix}{i}")
            w.step(rid, "plan", "running")


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    return root


def source(db: Path, root: Path) -> Rp1Source:
    return Rp1Source(db, root=root, plugin_roots=[])


def test_missing_then_created(tmp_path, project):
    db = tmp_path / "rp1.db"
    src = source(db, project)
    assert read(src, db) == "missing"
    assert not db.exists(), "reading a missing database must not create it"
    create_db(db)
    populate(db, project)
    assert read(src, db) == "ok"
    db.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert read(src, db) == "missing"


@pytest.mark.parametrize("journal", ["WAL", "DELETE"])
def test_locked_by_a_writer_then_released(tmp_path, project, journal):
    """A separate process holds BEGIN EXCLUSIVE; WAL readers still read, rollback-journal readers say busy."""
    db = create_db(tmp_path / "rp1.db")
    populate(db, project)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.close()
    src = source(db, project)
    assert read(src, db) == "ok"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "c.execute(\"INSERT INTO runs (id, flow, feature_id, project_path, created_at, updated_at) "
        "VALUES ('held', 'build', 'f', '/x', '2026', '2026')\")\n"
        "print('held', flush=True)\n"
        "sys.stdin.readline()\n"
        "c.execute('COMMIT')\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t = time.monotonic()
        assert read(src, db) == "ok", "nothing was committed: the cached answer still stands"
        code = read(source(db, project), db)  # a fresh reader must actually open the file
        assert time.monotonic() - t < 2.0, "a held lock must not stall the reader"
        assert code == ("ok" if journal == "WAL" else "busy")
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=10)
    populate(db, project, runs=4, prefix="later")  # the writer carries on
    assert read(src, db) == "ok"
    assert src.feed().total == 7


def test_mid_migration_then_finished(tmp_path, project):
    """`runs` exists but `events` does not yet (a migration half done): a status, then recovery."""
    db = tmp_path / "rp1.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE runs (id TEXT PRIMARY KEY, flow TEXT, feature_id TEXT, project_path TEXT, "
                 "status TEXT, created_at TEXT, updated_at TEXT)")
    conn.commit()
    conn.close()
    src = source(db, project)
    assert read(src, db) == "no_schema"
    db.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    create_db(db)
    populate(db, project)
    assert read(src, db) == "ok"


@pytest.mark.parametrize("damage", ["garbage", "truncated-header", "zeroed-pages"])
def test_corrupt_then_replaced(tmp_path, project, damage):
    db = create_db(tmp_path / "rp1.db")
    populate(db, project)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    good = db.read_bytes()
    src = source(db, project)
    assert read(src, db) == "ok"
    if damage == "garbage":
        db.write_bytes(b"\x8f garbage, not sqlite \x00" * 4000)
    elif damage == "truncated-header":
        db.write_bytes(good[:50])
    else:
        db.write_bytes(good[:100] + b"\x00" * (len(good) - 100))
    assert read(src, db) in ("corrupt", "error", "no_schema")
    db.write_bytes(good)
    assert read(src, db) == "ok"
