"""`fleet --once`: each project read once and nothing followed, each within its own time limit, every
project a row (answered, or saying why not) — in this process and in a helper process alike."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from rcs_tui.fleet.once import gather_once, once_doc, read_local
from rcs_tui.fleet.projects import expand_projects, parse_project
from tests.procfix import inotify_instances
from tests.test_fleet import fleet_dir
from tests.test_fleet_source import FakeSource, doc


def six_projects(tmp_path: Path) -> list:
    """Five projects (waiting, failed, stale, running, idle) and a directory without `.rcs/`."""
    base = fleet_dir(tmp_path)
    return expand_projects([f"{base}/*", str(base / "not-a-project")])[0]




def summary(rows) -> list[tuple]:
    return sorted((r.project.name, r.rank_name, r.error, r.doc and r.doc["active_set"],
                   r.attention.get("waiting"), r.attention.get("stale")) for r in rows)


async def test_each_local_project_is_read_once_and_no_watcher_is_left_running(tmp_path):
    projects = six_projects(tmp_path)
    before = inotify_instances()
    held: list[int] = []

    def read(root: Path) -> dict:
        held.append(inotify_instances() - before)  # what the projects read so far still hold
        return read_local(root)

    rows = await gather_once(projects, read=read, helpers=0)
    assert len(held) == len(projects) == 6 and held == [0] * 6
    assert inotify_instances() == before
    by_name = {r.project.name: r for r in rows}
    assert by_name["api"].attention["waiting"] == ["root/autopilot"]
    assert by_name["web"].doc["active_set"] == ["forge"] and by_name["web"].rank_name == "running"


async def test_a_remote_stream_is_closed_after_its_first_document():
    remote = parse_project("ssh://devbox/srv/api")
    source = FakeSource(remote, [[doc("forge"), doc("forge", "team")]], linger=True)
    started = time.monotonic()
    rows = await gather_once([remote], open_remote=lambda p: source, timeout=5)
    assert time.monotonic() - started < 2  # not held open until the timeout
    assert rows[0].doc["active_set"] == ["forge"]
    assert source.opened == 1 and source.closed_streams == 1 and source.closed


async def test_a_project_past_its_own_timeout_is_a_row_saying_so_and_the_others_answer(tmp_path):
    projects = six_projects(tmp_path)
    release = threading.Event()

    def read(root: Path) -> dict:
        if root.name == "billing":
            release.wait(10)  # a hung mount: its read never returns in time
        return read_local(root)

    silent = parse_project("ssh://devbox/srv/quiet")
    started = time.monotonic()
    try:
        rows = await gather_once([*projects, silent], read=read, helpers=0, timeout=0.5,
                                 open_remote=lambda p: FakeSource(p, [[]], linger=True))
    finally:
        release.set()
    elapsed = time.monotonic() - started
    by_name = {r.project.name: r for r in rows}
    assert by_name["billing"].error == "no answer within 0.5s" and by_name["billing"].doc is None
    assert by_name["quiet"].error == "no answer within 0.5s"
    assert by_name["not-a-project"].error == f"no .rcs/ in {tmp_path / 'code' / 'not-a-project'}"
    assert {n for n, r in by_name.items() if r.error is None} == {"api", "docs", "web", "notes"}
    assert by_name["api"].attention["waiting"] == ["root/autopilot"]
    assert elapsed < 5  # the stuck read was left behind, not waited for


async def test_the_timeout_counts_from_each_projects_own_read(tmp_path):
    # Six reads of 0.3 s one after another take 1.8 s, each well inside its own 1 s.
    projects = six_projects(tmp_path)

    def read(root: Path) -> dict:
        time.sleep(0.3)
        return read_local(root)

    rows = await gather_once(projects, read=read, helpers=0, timeout=1)
    assert sum(r.error is None for r in rows) == 5


async def test_projects_not_answered_by_the_deadline_are_rows_that_say_so(tmp_path):
    projects = six_projects(tmp_path)

    def read(root: Path) -> dict:
        time.sleep(0.4)
        return read_local(root)

    rows = await gather_once(projects, read=read, helpers=0, timeout=5, deadline=1)
    assert len(rows) == 6
    errors = [r.error for r in rows]
    assert errors.count(None) >= 1
    assert "no answer within the fleet's overall 1s" in errors
    assert all(r.doc is not None or r.error for r in rows)


async def test_a_helper_process_reads_as_this_process_does(tmp_path):
    projects = six_projects(tmp_path)
    alone = await gather_once(projects, helpers=0)
    helped = await gather_once(projects, helpers=1)
    assert summary(helped) == summary(alone)
    assert ("api", "waiting", None, ["forge"], ["root/autopilot"], []) in summary(helped)


def test_help_says_the_timeout_is_per_project_and_the_deadline_bounds_the_run(run_cli):
    res = run_cli("fleet", "--help")
    text = " ".join(res.stdout.split())
    assert "--timeout FLOAT RANGE --once: how long each project's read may take, from when it starts" in text
    assert "--deadline FLOAT RANGE --once: the whole run ends within this many seconds" in text


def test_once_over_the_cli_answers_every_row_within_a_short_deadline(run_cli, tmp_path):
    base = fleet_dir(tmp_path)
    res = run_cli("fleet", "--once", "--json", "--timeout", "5", "--deadline", "30", "--project", f"{base}/*",
                  "--project", str(base / "not-a-project"))
    assert res.code == 0, res.stderr
    assert [(r["name"], r["error"]) for r in res.json] == [
        ("api", None), ("billing", None), ("docs", None),
        ("not-a-project", f"no .rcs/ in {base / 'not-a-project'}"), ("web", None), ("notes", None)]


async def test_no_projects_is_an_empty_answer():
    assert await asyncio.wait_for(gather_once([]), 5) == []


def test_once_reports_what_the_full_document_says_without_reading_the_journal(tmp_path):
    # `--once` leaves the doctor's journal findings out (a scan of the tree no attention list reads): every
    # row it prints must be the row a full document gives, for projects with such findings too.
    from rcs_tui.fleet.rows import Row, once_json
    from rcs_tui.project.feed import SnapshotFeed

    projects = [p for p in six_projects(tmp_path) if p.name != "not-a-project"]
    for p in projects:
        (Path(p.path) / ".rcs" / "state" / ".forge-state.json.0123456789.rcs-tui.tmp").write_text("")
    for p in projects:
        root = Path(p.path)
        full = SnapshotFeed(root, summary=True).document()
        read = read_local(root)
        assert "leftover-temp" in {f["kind"] for f in full["doctor"]["findings"]}
        assert "leftover-temp" not in {f["kind"] for f in read["doctor"]["findings"]}
        rows = []
        for d in (full, once_doc(read)):
            row = Row(p)
            row.take(d, now=1.8e9)
            rows.append(once_json([row]))
        assert rows[0] == rows[1]
