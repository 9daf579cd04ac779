"""A read of the rp1 database keeps its locks while another read of the same file starts in this process.

Closing any descriptor of a file drops every lock the process holds on it, so a second read that looked
at the file's header with a descriptor of its own would let a writer commit under the first read (torn
rows, "database disk image is malformed"). Each case holds a read open in one thread, starts another
read of the same file in another, and then has another process try to commit.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import rcs_tui.rp1.db as rp1db
from rcs_tui.rp1.db import Rp1Db
from tests.rp1fix import EVENT, many_runs, other_process


def holding_a_read(path: Path, then) -> tuple[object, object]:
    """Run `then()` while another thread's `Rp1Db` read of `path` is inside its read transaction."""
    inside, leave = threading.Event(), threading.Event()
    out: list[object] = []

    def hold(conn, _schema):
        out.append(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        inside.set()
        leave.wait(30)
        return out[0]

    reader = threading.Thread(target=lambda: Rp1Db(path).read(hold, None))
    reader.start()
    try:
        assert inside.wait(30)
        result = then()
    finally:
        leave.set()
        reader.join(30)
    return out[0], result


def test_a_second_read_of_the_file_keeps_the_first_reads_lock(tmp_path):
    path = many_runs(tmp_path / "rp1.db", journal="delete")
    other = Rp1Db(path)

    def second_read_then_write() -> tuple[object, str]:
        count = other.read(lambda conn, _schema: conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0], None)
        return count, other_process(path, EVENT)

    first, (second, writer) = holding_a_read(path, second_read_then_write)
    assert first == second == 40 and other.state.ok
    assert writer == "database is locked"


def test_the_same_file_by_another_name_counts_too(tmp_path):
    """A link to the database is the same file: its locks are the same locks."""
    path = many_runs(tmp_path / "rp1.db", journal="delete")
    link = tmp_path / "link.db"
    os.link(path, link)
    _first, writer = holding_a_read(path, lambda: (Rp1Db(link).runs(None), other_process(path, EVENT))[1])
    assert writer == "database is locked"


def test_once_every_read_ended_the_header_is_read_again(tmp_path):
    """Nothing is kept once no read is open: a file that stopped being a database is reported as such."""
    path = many_runs(tmp_path / "rp1.db", journal="delete")
    db = Rp1Db(path)
    assert db.runs(None) and db.state.ok and not rp1db._OPEN_FILES
    path.write_bytes(b"not a database at all" * 10)
    assert db.runs(None) == [] and db.state.code == "corrupt"
    assert not rp1db._OPEN_FILES


def test_a_writer_that_closes_during_a_read_leaves_the_wal_in_place(tmp_path):
    """A WAL database read while another process commits and closes: this read is attached, so that
    writer is not the last connection and must not checkpoint and delete the WAL under it."""
    import subprocess
    import sys

    path = many_runs(tmp_path / "rp1.db")
    crashed = ("import sqlite3, os, sys\nc = sqlite3.connect(sys.argv[1])\n"
               "c.execute(\"UPDATE runs SET name = 'n' WHERE id = 'run-0'\"); c.commit(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", crashed, str(path)], check=True, timeout=30)
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0  # a writer that ended without closing left its WAL behind
    first, (writer, kept) = holding_a_read(path, lambda: (other_process(path, EVENT), wal.exists()))
    assert first == 40 and writer == "ok" and kept
