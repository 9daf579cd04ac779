"""Derived rp1 statuses kept between processes: used only for the same database and the same newest event."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from rcs_tui.files.cache import cache_dir
from rcs_tui.rp1.db import Rp1Db
from rcs_tui.rp1.fixtures import Rp1Writer, create_db
from rcs_tui.rp1.machines import MachineRegistry
from rcs_tui.rp1.projection import project
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.rp1.status_store import decode_document, encode_document


def checkpoint(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def make_db(path: Path, root: Path, finished: int, *, open_run: str | None = "running") -> tuple[Path, list[str]]:
    """`finished` completed runs, then (optionally) one run left in `open_run`, all in project `root`."""
    create_db(path)
    ids = []
    with Rp1Writer(path) as w:
        for i in range(finished):
            run = w.start_run("build", project_path=root, run_id=f"run-{i:03d}")
            w.step(run, "plan", "running")
            w.step(run, "plan", "completed")
            ids.append(run)
        if open_run:
            run = w.start_run("build", project_path=root, run_id="run-open")
            w.step(run, "plan", open_run)
            ids.append(run)
    checkpoint(path)
    return path, ids


class Spy:
    """Counts the runs whose full events a source reads, the runs it reads only the newer events of, the
    runs whose narrow status rows it reads one by one, its aggregate status queries (every run in scope),
    and its reads of every run's newest event."""

    def __init__(self, source: Rp1Source) -> None:
        self.runs: list[str] = []
        self.extended: list[str] = []
        self.narrow: list[str] = []
        self.aggregates = 0
        self.all_runs = 0
        events, status_rows, all_runs = source.db.events, source.db.status_rows, source.db.runs
        events_after = source.db.events_after

        def spy_after(after):
            self.extended += list(after)
            return events_after(after)

        def spy_all_runs(scope=None):
            self.all_runs += 1
            return all_runs(scope)

        def spy_events(run_ids):
            self.runs += list(run_ids)
            return events(run_ids)

        def spy_rows(scope=None, run_ids=None):
            if run_ids is None:
                self.aggregates += 1
            else:
                self.narrow += list(run_ids)
            return status_rows(scope, run_ids)

        source.db.events = spy_events
        source.db.events_after = spy_after
        source.db.status_rows = spy_rows
        source.db.runs = spy_all_runs


def source(db: Path, root: Path, **kw) -> tuple[Rp1Source, Spy]:
    src = Rp1Source(db, root=root, machines=MachineRegistry({}), **kw)
    return src, Spy(src)


def test_a_new_process_does_not_rederive_an_idle_project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 60, open_run=None)
    first, spy1 = source(db, root)
    assert first.current().run.id == ids[-1]
    assert set(spy1.runs) | set(spy1.narrow) == set(ids)  # nothing active: every run had to be derived once,
    assert spy1.runs == [ids[-1]]  # from its few status rows; only the run shown is read whole
    again, spy2 = source(db, root)  # a new process
    summary = again.current()
    assert summary.run.id == ids[-1] and summary.status == "completed"
    assert spy2.runs == [] and spy2.all_runs == 0  # the run list and the projection shown were kept


@pytest.mark.parametrize("kept", [True, False], ids=["kept projection", "nothing kept"])
def test_a_run_with_a_new_event_is_derived_again(tmp_path, kept):
    """A run that came back to life is extended by its one new row when a previous process kept its
    projection, and derived from all its rows when nothing was kept (a first process)."""
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 60, open_run=None)
    src, _ = source(db, root)
    assert len(src.feed(limit=60).runs) == 60  # every run shown once: each one's projection is kept
    assert src.current().status == "completed"
    with Rp1Writer(db) as w:
        w.step(ids[10], "review", "running")  # an old run comes back to life
    checkpoint(db)
    if not kept:
        [path] = Path(cache_dir()).glob("rp1-status-*.json.z")
        path.unlink()
    again, spy = source(db, root)
    summary = again.current()
    assert summary.run.id == ids[10] and summary.status == "running"
    assert summary.projection == project(Rp1Db(db).events([ids[10]])[ids[10]])
    if kept:  # no run's whole history is read again
        assert spy.runs == [] and spy.extended == [ids[10]]
    else:
        assert ids[10] in spy.runs and spy.extended == []


def test_filtered_feed_in_a_new_process_uses_kept_statuses(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 80)
    cold, cold_spy = source(db, None, all_projects=True)
    feed = cold.feed(status="running")
    assert [s.run.id for s in feed.runs] == ["run-open"] and cold_spy.aggregates == 1
    warm, warm_spy = source(db, None, all_projects=True)
    again = warm.feed(status="running")
    assert [s.run.id for s in again.runs] == ["run-open"]
    assert warm_spy.aggregates == 0 and warm_spy.runs == [] and warm_spy.all_runs == 0  # all kept


def test_statuses_of_a_replaced_database_are_not_used(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 60, open_run="running")
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    # Same path, same run ids and event ids, but the open run failed in this one.
    other, _ = make_db(tmp_path / "other" / "rp1.db", root, 60, open_run="failed")
    os.replace(other, db)
    fresh, spy = source(db, None, all_projects=True)
    assert fresh.feed(status="running").total == 0
    assert [s.run.id for s in fresh.feed(status="failed").runs] == ["run-open"]


def test_a_corrupt_or_foreign_store_is_ignored(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    src, _ = source(db, None, all_projects=True)
    src.feed(status="running")
    [path] = Path(cache_dir()).glob("rp1-status-*.json.z")
    _text, doc = decode_document(path.read_bytes())
    doc["runs"][-1] = ["failed"] * len(doc["runs"][0])  # lies, but well formed
    for _last, fold in doc["projections"].values():  # a kept derivation that reads failed
        fold.update(steps={"lie": "failed"}, prompts=[], run_status=None)
    path.write_bytes(encode_document(doc)[1])
    liar, _ = source(db, None, all_projects=True)
    assert liar.feed(status="failed").total == 61  # proof the store is read when it is ours and matches
    os.chmod(path, 0o666)  # anyone could have written it
    assert source(db, None, all_projects=True)[0].feed(status="failed").total == 0
    os.chmod(path, 0o600)
    for bad in ("a name that is a number", "ragged columns", "an event id that is text", "a column missing",
                "a fold filed under a later event"):
        broken = json.loads(json.dumps(doc))
        if bad == "a name that is a number":
            broken["runs"][5][0] = 7
        elif bad == "ragged columns":
            broken["runs"][3].pop()
        elif bad == "an event id that is text":
            broken["runs"][10][0] = "12"
        elif bad == "a column missing":
            broken["runs"].pop(4)
        else:
            for entry in broken["projections"].values():
                entry[0] += 1
        path.write_bytes(encode_document(broken)[1])
        assert source(db, None, all_projects=True)[0].feed(status="failed").total == 0, bad
    path.write_bytes(b'{"format": 1, "identity"')  # truncated
    fresh, _ = source(db, None, all_projects=True)
    assert fresh.feed(status="running").total == 1 and fresh.feed(status="completed").total == 60


def test_the_database_directory_is_never_written(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    before = sorted(os.listdir(db.parent))
    src, _ = source(db, None, all_projects=True)
    src.feed(status="running")
    src.current()
    assert sorted(os.listdir(db.parent)) == before
    assert list(Path(cache_dir()).glob("rp1-status-*.json.z"))


def test_in_process_refresh_reads_only_what_changed(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    full_reads = []
    original = src.db.runs
    src.db.runs = lambda scope=None: (full_reads.append(1), original(scope))[1]
    with Rp1Writer(db) as w:
        w.step(ids[5], "review", "running")  # an old run comes back to life
        fresh = w.start_run("build", project_path=root, run_id="run-new")
        w.step(fresh, "plan", "running")
    feed = src.feed(status="running")
    assert full_reads == []  # merged from the new events, not a pass over every run
    assert [s.run.id for s in feed.runs] == ["run-new", ids[5], "run-open"]
    other, _ = source(db, None, all_projects=True)
    assert [s.run.id for s in other.feed(status="running").runs] == [s.run.id for s in feed.runs]
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET name = 'renamed', updated_at = '2030-01-01T00:00:00.000Z' WHERE id = ?", (ids[0],))
    conn.commit()
    conn.close()
    renamed = {s.run.id: s.run.name for s in src.feed(limit=100).runs}
    assert renamed[ids[0]] == "renamed" and full_reads == []  # updated since: read by its `updated_at`
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM runs WHERE id = ?", (ids[1],))
    conn.commit()
    conn.close()
    assert ids[1] not in {s.run.id for s in src.feed(limit=100).runs} and full_reads == [1]  # gone: read all


def test_a_row_rewritten_behind_the_store_is_shown_as_it_is_now(tmp_path):
    """A later process takes the run list from the store, but every row it shows is read again first, so
    a row rp1 rewrote without moving `updated_at` is not shown as a previous process saw it."""
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    conn = sqlite3.connect(db)
    conn.execute("UPDATE runs SET name = 'quietly renamed' WHERE id IN ('run-open', ?)", (ids[0],))
    conn.commit()
    conn.close()
    later, spy = source(db, None, all_projects=True)
    assert [s.run.name for s in later.feed(status="running").runs] == ["quietly renamed"]
    assert spy.all_runs == 0  # the list itself still came from the store
    names = {s.run.id: s.run.name for s in later.feed(limit=100).runs}
    assert names["run-open"] == names[ids[0]] == "quietly renamed"
    assert later.current().run.name == "quietly renamed"


def test_a_store_newer_than_the_database_or_of_another_scope_is_not_used(tmp_path):
    """A store that says the database had more events than it has now (a database put back from a
    copy, an event deleted) is ignored; a run whose newest event moved is derived again, whatever the
    store says; a store of one project is not used for all projects."""
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    [path] = Path(cache_dir()).glob("rp1-status-*.json.z")
    _text, doc = decode_document(path.read_bytes())
    doc["runs"][-1] = ["failed"] * len(doc["runs"][0])
    for _last, fold in doc["projections"].values():  # a kept derivation that reads failed
        fold.update(steps={"lie": "failed"}, prompts=[], run_status=None)
    path.write_bytes(encode_document({**doc, "marks": [doc["marks"][0] + 1, *doc["marks"][1:]]})[1])
    ahead, spy = source(db, None, all_projects=True)
    assert ahead.feed(status="failed").total == 0 and spy.all_runs == 1  # read again from the database
    path.write_bytes(encode_document(doc)[1])  # the lie again, as of the database's real newest event
    with Rp1Writer(db) as w:
        w.step(ids[3], "review", "running")  # one run moved on since the store was written
    checkpoint(db)
    moved, _ = source(db, None, all_projects=True)
    assert {s.run.id for s in moved.feed(status="running").runs} == {ids[3]}  # derived, not the stored lie
    assert moved.feed(status="failed").total == 60  # the others: as stored (proof the store was read)
    scoped, scoped_spy = source(db, root)  # one project: its own store, nothing of the all-projects one
    assert scoped.feed(status="running").total == 2 and scoped_spy.all_runs == 1


def test_one_source_serves_two_threads_while_rp1_writes(tmp_path):
    """The console's views and its loader share one source from two threads while rp1 appends: every
    answer is whole, and the shared source ends where a fresh one starts."""
    import threading

    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 40)
    shared, _ = source(db, root)
    errors: list[BaseException] = []
    stop = threading.Event()

    def hammer(call) -> None:
        try:
            while not stop.is_set():
                call()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    readers = [threading.Thread(target=hammer, args=(lambda: shared.feed(limit=100),)),
               threading.Thread(target=hammer, args=(shared.current,))]
    for t in readers:
        t.start()
    with Rp1Writer(db) as w:
        for i in range(60):
            w.step(ids[i % 40], f"s{i}", "running" if i % 3 else "completed")
    stop.set()
    for t in readers:
        t.join()
    assert errors == []
    fresh, _ = source(db, root)
    assert [(s.run.id, s.projection) for s in shared.feed(limit=100).runs] == \
        [(s.run.id, s.projection) for s in fresh.feed(limit=100).runs]
    assert shared.current() == fresh.current()


def _runs_of(db: Path, root: Path) -> list[tuple[str, str]]:
    return [(s.run.id, s.status) for s in source(db, root)[0].feed().runs]


def test_a_database_copied_over_the_file_is_not_read_through_the_old_store(tmp_path):
    """Copying another database over the path keeps the file's inode; what was kept of the old contents
    must not show through (runs that do not exist, statuses of another database)."""
    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 6, open_run=None)
    other, _ = make_db(tmp_path / "other" / "rp1.db", root, 9, open_run="running")
    conn = sqlite3.connect(other)
    conn.execute("UPDATE runs SET id = 'b-' || id")
    conn.execute("UPDATE events SET run_id = 'b-' || run_id")
    conn.commit()
    conn.close()
    long_running, _ = source(db, root)
    before = {s.run.id for s in long_running.feed(limit=100).runs}
    inode = os.stat(db).st_ino
    shutil.copyfile(other, db)
    assert os.stat(db).st_ino == inode
    expected = [(s.run.id, s.status) for s in Rp1Source(other, root=root, machines=MachineRegistry({})).feed().runs]
    assert _runs_of(db, root) == expected  # a new process
    now = long_running.feed(limit=100).runs  # and one that kept everything in memory
    assert [(s.run.id, s.status) for s in now] == expected and not before & {s.run.id for s in now}


def test_a_deleted_newest_run_whose_rowid_went_to_a_new_run_is_gone(tmp_path):
    """SQLite gives a deleted newest run's rowid to the next run, so the counts stay as they were."""
    root = tmp_path / "proj"
    root.mkdir()
    db, ids = make_db(tmp_path / "rp1" / "rp1.db", root, 5, open_run=None)
    long_running, _ = source(db, root)
    assert ids[-1] in {s.run.id for s in long_running.feed().runs}
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM events WHERE run_id = ?", (ids[-1],))
    conn.execute("DELETE FROM runs WHERE id = ?", (ids[-1],))
    conn.commit()
    conn.close()
    with Rp1Writer(db) as w:
        w.step(w.start_run("build", project_path=root, run_id="run-new"), "plan", "running")
    checkpoint(db)
    for shown in (_runs_of(db, root), [(s.run.id, s.status) for s in long_running.feed().runs]):
        assert ids[-1] not in {rid for rid, _ in shown} and ("run-new", "running") in shown


def test_a_store_larger_than_the_reader_takes_is_not_written(tmp_path, monkeypatch):
    """A store the cache reader would refuse for its size is never written (it would only cost time), and
    the answers stay right without it."""
    import rcs_tui.files.cache as cache_files

    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 30)
    monkeypatch.setattr(cache_files, "MAX_BYTES", 200)
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    assert list(Path(cache_dir()).glob("rp1-status-*.json.z")) == []
    monkeypatch.setattr(cache_files, "MAX_BYTES", 16 * 1024 * 1024)
    later, _ = source(db, None, all_projects=True)
    assert later.feed(status="running").total == 1
    assert len(list(Path(cache_dir()).glob("rp1-status-*.json.z"))) == 1


@pytest.mark.parametrize("age_s, looks_again", [(0.0, True), (5.0, False)])
def test_a_read_just_after_a_write_is_not_trusted_until_the_files_change(tmp_path, age_s, looks_again):
    """A commit appends to the WAL and only then publishes itself, which changes no file's stat: a read
    in between sees the older rows under the final signature. So while the files were written within the
    last second, the next call looks at the database again instead of answering from the kept list;
    once they have settled, an unchanged signature is trusted."""
    import time

    root = tmp_path / "proj"
    root.mkdir()
    db, _ids = make_db(tmp_path / "rp1" / "rp1.db", root, 5)
    src, _ = source(db, root)
    stamp = time.time_ns() - int(age_s * 1e9)
    src.db.signature = lambda: ((1, 100, stamp), (2, 200, stamp))  # the files' stat, frozen
    calls: list[object] = []
    since = src.db.runs_since
    src.db.runs_since = lambda *a: (calls.append(a), since(*a))[1]
    src.feed()
    src.feed()
    src.feed()
    assert (len(calls) == 2) is looks_again and (calls == []) is not looks_again


def test_a_hundred_thousand_runs_fit_the_cache_reader_compactly():
    """The store of 100 000 runs (random ids, long project paths, two timestamps each) is well under the
    cache reader's cap, and reads back as the same columns."""
    import random
    import uuid

    import rcs_tui.files.cache as cache_files
    from rcs_tui.rp1.db import RunRow

    rng = random.Random(1)
    rows = [RunRow(str(uuid.UUID(int=rng.getrandbits(128), version=4)), rng.choice(["build", "build-fast"]),
                   f"feature-{i % 300}", f"/home/someone/work/projects/project-{i % 40}", None, None, None,
                   rng.choice(["running", "completed"]), f"2026-01-{1 + i % 28:02d}T10:{i % 60:02d}:00.000Z",
                   f"2026-02-{1 + i % 28:02d}T11:{i % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z", 1_000_000 - i)
            for i in range(100_000)]
    statuses = [rng.choice(["running", "completed", "waiting", None]) for _ in rows]
    doc = {"format": 4, "runs": [*(list(c) for c in zip(*rows, strict=True)), statuses]}
    text, data = encode_document(doc)
    assert len(data) < cache_files.MAX_BYTES // 2
    assert decode_document(data)[1]["runs"] == doc["runs"]


def test_any_column_reads_back_as_written_and_is_compacted_when_it_repeats():
    """Columns of every kind (few or many distinct values, values equal across types, values that cannot be
    keys) read back as they were kept: values in order of first appearance, an index when at most half
    are distinct, else the column itself."""
    import random

    rng = random.Random(4)
    for _ in range(2000):
        pool = [None, "a", "b", 1, True, 1.0, "c", 0, False, rng.random(), "d"][: rng.randrange(1, 12)]
        column = [rng.choice(pool) for _ in range(rng.randrange(0, 40))]
        if rng.random() < 0.1:
            column.insert(rng.randrange(len(column) + 1), ["not a key"])
        kept = json.loads(encode_document({"runs": [column]})[0])["runs"][0]
        distinct = []
        for v in column:
            if isinstance(v, list) or not any(v == d and not isinstance(d, list) for d in distinct):
                distinct.append(v)
        if len(column) >= 8 and not any(isinstance(v, list) for v in column) and len(distinct) * 2 <= len(column):
            assert kept["values"] == json.loads(json.dumps(distinct))
            assert [kept["values"][i] for i in kept["index"]] == json.loads(json.dumps(
                [next(d for d in distinct if d == v) for v in column]))
        else:
            assert kept == json.loads(json.dumps(column))


@pytest.mark.parametrize("bad", ["an index past the values", "a negative index", "an index that is text",
                                 "a stream cut short", "more text than a store may hold"])
def test_a_store_whose_compact_columns_do_not_decode_is_ignored(tmp_path, monkeypatch, bad):
    import zlib

    from rcs_tui.rp1 import status_store

    root = tmp_path / "proj"
    root.mkdir()
    db, _ = make_db(tmp_path / "rp1" / "rp1.db", root, 60)
    src, _ = source(db, None, all_projects=True)
    assert src.feed(status="running").total == 1
    [path] = Path(cache_dir()).glob("rp1-status-*.json.z")
    text, doc = decode_document(path.read_bytes())
    doc["runs"][-1] = ["failed"] * len(doc["runs"][0])  # a lie that shows when the store is used
    packed = json.loads(encode_document(doc)[0])
    status = packed["runs"][-1]
    assert isinstance(status, dict)  # kept compact: one distinct value
    if bad == "an index past the values":
        status["index"][3] = len(status["values"])
    elif bad == "a negative index":
        status["index"][3] = -1
    elif bad == "an index that is text":
        status["index"][3] = "0"
    raw = zlib.compress(json.dumps(packed).encode())
    if bad == "a stream cut short":
        raw = raw[:-6]
    elif bad == "more text than a store may hold":
        monkeypatch.setattr(status_store, "MAX_TEXT", len(json.dumps(packed)) - 1)
    path.write_bytes(raw)
    again, _ = source(db, None, all_projects=True)
    assert again.feed(status="failed").total == 0 and again.feed(status="running").total == 1
    monkeypatch.setattr(status_store, "MAX_TEXT", 10**9)
    path.write_bytes(zlib.compress(json.dumps(json.loads(encode_document(doc)[0])).encode()))
    assert source(db, None, all_projects=True)[0].feed(status="failed").total == 61  # the lie, decoded: read
