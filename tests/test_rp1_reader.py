"""The reader never writes, never raises, reads old and new schemas, scopes by project, tails live."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import FakeClock, Rp1Writer, create_db
from rcs_tui.rp1.machines import discover_machines
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.tail import Tail


def hashes(db: Path) -> dict[str, str | None]:
    out = {}
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{db}{suffix}")
        out[suffix or "db"] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
    return out


def populate(db: Path, project: str = "/p") -> None:
    with Rp1Writer(db, clock=FakeClock()) as w:
        r = w.start_run("build", project_path=project, run_id="r1")
        for s in ["requirements", "design", "tasks", "build"]:
            w.step(r, s)
        w.step(r, "task-builder:building", unit="T1")
        w.artifact(r, "design", "d.md")
        w.wait_for_user(r, "build", "ok?")
        o = w.start_run("blueprint", project_path="/other", run_id="o1")
        w.step(o, "detect")


def every_read_path(db: Path, root: str = "/p") -> None:
    src = Rp1Source(db, root=root, plugin_roots=[])
    src.feed()
    src.feed(status="waiting")
    src.current()
    src.timeline("r1")
    Rp1Source(db, all_projects=True, plugin_roots=[]).feed(workflow="blueprint")
    tail = Tail(db, cursor=0)
    tail.poll(force=True)
    Rp1Db(db).max_event_id()


@pytest.mark.parametrize("version", [6, 17])
def test_both_schema_versions_read_the_same(tmp_path, version):
    db = create_db(tmp_path / "rp1.db", schema_version=version)
    populate(db)
    src = Rp1Source(db, root="/p", plugin_roots=[])
    feed = src.feed()
    assert src.state.ok and feed.status is None
    assert [(r.run.id, r.status, r.projection.current_step) for r in feed.runs] == [("r1", "waiting", "build")]
    t = src.timeline("r1")
    assert [a.key for a in t.step("build").agents] == ["task-builder::T1"]
    assert [a["path"] for a in t.step("design").artifacts] == ["d.md"]


def test_checkpointed_database_is_untouched_and_nothing_created(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    before = hashes(db)
    assert before["-wal"] is None and before["-shm"] is None
    every_read_path(db)
    assert hashes(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rp1.db"]


def test_open_writer_database_and_wal_unchanged_by_reads(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    w = Rp1Writer(db, clock=FakeClock("2026-11-26T00:00:00.000Z"))
    w.step("r1", "verify")  # leaves a live -wal/-shm held by the writer
    before = hashes(db)
    assert before["-wal"] is not None
    every_read_path(db)
    after = hashes(db)
    assert (after["db"], after["-wal"]) == (before["db"], before["-wal"])
    w.close()


def _replay(db: Path, stop: threading.Event | None = None) -> None:
    """Deterministic writer: the same inserts give the same bytes unless someone else writes."""
    with Rp1Writer(db, clock=FakeClock("2026-11-27T00:00:00.000Z")) as w:
        for i in range(60):
            run = w.start_run("build-fast", project_path="/p", run_id=f"c{i}")
            w.step(run, "plan")
            w.step(run, "build")
            time.sleep(0.002)


def test_reads_under_a_concurrent_writer_leave_identical_bytes(tmp_path):
    ref = create_db(tmp_path / "ref" / "rp1.db")
    populate(ref)
    live = create_db(tmp_path / "live" / "rp1.db")
    populate(live)
    _replay(ref)
    done = threading.Event()
    writer = threading.Thread(target=lambda: (_replay(live), done.set()))
    writer.start()
    reads = 0
    while not done.is_set():
        every_read_path(live)
        reads += 1
    writer.join()
    assert reads > 0
    # A reader open at the writer's close defers SQLite's final checkpoint (true of any reader);
    # let a last connection checkpoint both worlds the same way, then compare every byte.
    for db in (ref, live):
        conn = sqlite3.connect(db)
        conn.execute("SELECT COUNT(*) FROM events").fetchone()
        conn.close()
    assert hashes(live) == hashes(ref)
    assert hashes(live)["-wal"] is None


def test_missing_database_is_a_status(tmp_path):
    src = Rp1Source(tmp_path / "nope.db", root=tmp_path, plugin_roots=[])
    feed = src.feed()
    assert feed.runs == () and feed.status == f"rp1: no database at {tmp_path / 'nope.db'}"
    assert not (tmp_path / "nope.db").exists()


def test_corrupt_database_is_a_status(tmp_path):
    db = tmp_path / "rp1.db"
    db.write_bytes(b"this is not sqlite" * 20)
    feed = Rp1Source(db, root=tmp_path, plugin_roots=[]).feed()
    assert feed.state.code == "corrupt" and feed.status.startswith("rp1: ")


def test_truncated_database_is_a_status(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    data = db.read_bytes()
    db.write_bytes(data[:100] + b"\x00" * 50 + data[150:4096 + 500])
    src = Rp1Source(db, root="/p", plugin_roots=[])
    assert src.feed().state.code in ("corrupt", "error")
    assert src.timeline("r1") is None


def test_database_without_rp1_tables_is_a_status(tmp_path):
    db = tmp_path / "rp1.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    feed = Rp1Source(db, root=tmp_path, plugin_roots=[]).feed()
    assert feed.state.code == "no_schema"
    assert feed.status == f"rp1: no rp1 tables (runs, events) in {db}"


def test_empty_file_is_a_status(tmp_path):
    db = tmp_path / "rp1.db"
    db.write_bytes(b"")
    assert Rp1Source(db, root=tmp_path, plugin_roots=[]).feed().state.code == "no_schema"


def test_locked_database_reports_busy(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("BEGIN EXCLUSIVE")
    try:
        feed = Rp1Source(db, root="/p", plugin_roots=[]).feed()
        assert feed.state.code == "busy" and feed.status == "rp1: database busy, retrying"
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_scope_by_project_id_file(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    root = tmp_path / "proj"
    (root / ".rp1").mkdir(parents=True)
    (root / ".rp1" / "project_id").write_text("pid-42\n")
    with Rp1Writer(db, clock=FakeClock()) as w:
        w.start_run("build", project_path="/moved/elsewhere", project_id="pid-42", run_id="byid")
        w.start_run("build", project_path=str(root.resolve()), run_id="bypath")
        w.start_run("build", project_path="/x", project_id="pid-7", run_id="foreign")
    ids = {r.run.id for r in Rp1Source(db, root=root, plugin_roots=[]).feed().runs}
    assert ids == {"byid", "bypath"}
    assert len(Rp1Source(db, root=root, all_projects=True, plugin_roots=[]).feed().runs) == 3


def test_feed_orders_by_latest_activity_and_filters(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db, clock=FakeClock()) as w:
        a = w.start_run("build-fast", project_path="/p", run_id="a")
        b = w.start_run("pr-review", project_path="/p", run_id="b")
        w.step(a, "plan")
        w.step(b, "split")
        w.step(a, "build")
        w.step(b, "review")
        w.step(b, "review", "failed")
    src = Rp1Source(db, root="/p", plugin_roots=[])
    assert [r.run.id for r in src.feed().runs] == ["b", "a"]
    assert [r.run.id for r in src.feed(status="running").runs] == ["a"]
    assert [r.run.id for r in src.feed(workflow="pr-review").runs] == ["b"]
    assert src.current().run.id == "a"


def test_tail_delivers_new_events_quickly(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    tail = Tail(db, interval=0.01)
    got: list[tuple[float, list[int]]] = []
    arrived = threading.Event()
    tail.subscribe(lambda evs: (got.append((time.monotonic(), [e.id for e in evs])), arrived.set()))
    tail.start()
    try:
        with Rp1Writer(db) as w:
            t0 = time.monotonic()
            eid = w.step("r1", "verify")
            assert arrived.wait(2)
    finally:
        tail.stop()
    assert eid in got[0][1]
    assert got[0][0] - t0 < 0.1


def test_tail_unsubscribe_and_cursor(tmp_path):
    db = create_db(tmp_path / "rp1.db")
    populate(db)
    tail = Tail(db, cursor=0)
    seen: list[int] = []
    off = tail.subscribe(lambda evs: seen.extend(e.id for e in evs))
    tail.poll(force=True)
    assert seen == list(range(1, tail.cursor + 1))
    off()
    before = list(seen)
    with Rp1Writer(db) as w:
        eid = w.step("r1", "verify")  # plus rp1's synthetic "build completed" row
    assert [e.id for e in tail.poll(force=True)] == [eid - 1, eid]
    assert seen == before and tail.cursor == eid


def test_machine_discovery_prefers_plugin_files(tmp_path):
    skill = tmp_path / "plugins" / "dev" / "skills" / "build"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("# build\n\n## STATE-MACHINE\n\n```mermaid\nstateDiagram-v2\n"
                                    "    [*] --> a\n    a --> b\n    b --> [*]\n```\n")
    agents = tmp_path / "plugins" / "base" / "agents"
    agents.mkdir(parents=True)
    (agents / "plain.md").write_text("# no machine here\n")
    found = discover_machines([tmp_path])
    assert found["build"].machine.bfs_order() == ("a", "b")
    assert found["build"].source == str(skill / "SKILL.md")
    assert "plain" not in found
    assert found["task-builder"].source == "builtin:task-builder.md"
    assert set(discover_machines([])) == {"build", "build-fast", "pr-review", "deep-research", "blueprint",
                                          "task-builder", "task-reviewer", "feature-verifier",
                                          "hypothesis-tester"}


def test_rp1_package_imports_no_ui_libraries():
    import subprocess
    import sys

    code = ("import sys, rcs_tui.rp1, rcs_tui.rp1.fixtures, rcs_tui.cli.rp1_cmd; "
            "print([m for m in ('textual', 'rich') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_feed_loads_only_what_it_uses(tmp_path):
    """`rp1 runs` is typed often and read by the fleet: a feed reads no workflow definitions and loads
    none of the modules only timelines and writes need (each costs the command start-up time)."""
    import subprocess
    import sys

    db = create_db(tmp_path / "rp1.db")
    with Rp1Writer(db) as w:
        w.step(w.start_run("build", project_path=tmp_path), "plan", "running")
    code = ("import sys; from rcs_tui.rp1.source import Rp1Source; "
            f"s = Rp1Source({str(db)!r}, all_projects=True); "
            "print(len(s.feed(status='running').runs), len(s.feed().runs), s.current().status); "
            "print(sorted(m for m in ('rcs_tui.rp1.machines', 'rcs_tui.rp1.timeline', 'rcs_tui.core.machine',"
            " 'hashlib', 'tempfile', 'click', 'rich', 'textual', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}).stdout.splitlines()
    assert out == ["1 1 running", "[]"]


@pytest.mark.parametrize("odd", [None, (0, 7), (0, None), (1, ""), (1, None), (1, b"x"), (3, 4.5), (5, b"\xff"),
                                 (10, None), (10, True), (10, "12")])
def test_run_rows_read_in_bulk_are_exactly_the_rows_read_one_by_one(odd):
    """The whole-list read takes usual rows as they come; any odd cell (a non-text id, an empty or
    missing workflow, a number or bytes where text belongs, a newest event id that is not an integer)
    makes every row go through the one-row reader, so both always give the same rows."""
    from rcs_tui.rp1.db import Rp1Db, RunRow

    usual = [(f"run-{i}", "build", "f", "/p", None, "n", "h", "running", "2026-01-01", "2026-01-02", 100 - i)
             for i in range(5)]
    raw = list(usual)
    if odd is not None:
        column, value = odd
        raw[2] = (*raw[2][:column], value, *raw[2][column + 1:])
    got = Rp1Db._run_rows(raw)
    assert got == [Rp1Db._run_row(r) for r in raw]
    assert all(type(r) is RunRow for r in got)
