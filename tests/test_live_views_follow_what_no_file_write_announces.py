"""Live views (`snapshot --follow`, the fleet's rows, the HUD and console) follow changes that no write of a
watched file announces: a session directory moved out of the tree, `.rcs` moved away and put back from a copy,
a session's owner or a team worker dying without a write, and (polling) a rewrite of the same size whose
modification time was put back. Before, each of these left the old picture on screen under a live marker
until some other file changed. Checked on one process's own watches, the fleet's shared watcher and polling."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rcs_tui.files.io import atomic_write, dump_json
from rcs_tui.project import processes
from rcs_tui.project.feed import SnapshotFeed, follow_documents
from rcs_tui.project.shared_watch import SharedWatcher
from tests.statefix import canonical, mode, pointer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify and /proc are Linux's")

HOW = ["own watches", "shared watcher", "polling"]


class Follow:
    """A follower of `root`, whose first document waits until its watching started and its catching-up
    re-read (the files written just before it started are read again) is behind it, so that only the change
    under test is left to be seen."""

    def __init__(self, root: Path, how: str, watcher: SharedWatcher | None = None) -> None:
        self.docs = follow_documents(SnapshotFeed(root), poll=how == "polling", watcher=watcher)
        self.pending: asyncio.Future | None = None

    async def first(self) -> dict:
        doc = await anext(self.docs)
        self.pending = asyncio.ensure_future(anext(self.docs))  # the follower watches while one is awaited
        await asyncio.sleep(3.0)  # watching starts and catches up: nothing changed, so nothing is sent
        assert not self.pending.done(), "a document was sent though nothing changed"
        return doc

    async def next(self, timeout: float) -> dict:
        pending, self.pending = self.pending, None
        return await asyncio.wait_for(pending if pending is not None else anext(self.docs), timeout)

    async def aclose(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
        await self.docs.aclose()


def follow(root: Path, how: str, watcher: SharedWatcher | None = None) -> Follow:
    return Follow(root, how, watcher)


async def until(docs: Follow, check, timeout: float = 30.0) -> dict:
    """The first document `check` accepts (AssertionError with the last one seen after `timeout`)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    doc: dict = {}
    while loop.time() < end:
        try:
            doc = await docs.next(end - loop.time())
        except TimeoutError:
            break
        if check(doc):
            return doc
    raise AssertionError(f"never shown; last document: scopes {[s['scope'] for s in doc.get('scopes', [])]},"
                         f" active set {doc.get('active_set')}, session {doc.get('session')}")


def scopes(doc: dict) -> list[str]:
    return [s["scope"] for s in doc["scopes"]]


def root_modes(doc: dict) -> dict[str, bool]:
    root = next(s for s in doc["scopes"] if s["scope"] == "root")
    return {m: f["active"] for m, f in root["modes"].items()}


@pytest.fixture
def watchers():
    made: list[SharedWatcher] = []

    def make(how: str) -> SharedWatcher | None:
        if how != "shared watcher":
            return None
        made.append(SharedWatcher())
        return made[-1]

    yield make
    for w in made:
        w.close()


@pytest.mark.parametrize("how", HOW)
async def test_a_session_directory_moved_out_of_the_tree_leaves_the_picture(tmp_path, how, watchers):
    root = tmp_path / "p"
    mode(root, "team", "s1", current_phase="team-exec")
    mode(root, "team", "s2", current_phase="team-exec")
    docs = follow(root, how, watchers(how))
    try:
        assert scopes(await docs.first()) == ["root", "s1", "s2"]
        (root / ".rcs" / "state" / "sessions" / "s2").rename(tmp_path / "trash-s2")
        await until(docs, lambda d: scopes(d) == ["root", "s1"])
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", HOW)
async def test_rcs_moved_away_and_put_back_from_a_copy_is_followed_and_still_watched(tmp_path, how, watchers):
    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    canonical(root, ["ultrawork"])
    shutil.copytree(root / ".rcs", tmp_path / "backup")
    docs = follow(root, how, watchers(how))
    try:
        assert root_modes(await docs.first()) == {"ultrawork": True}
        (root / ".rcs").rename(tmp_path / "old-rcs")
        shutil.copytree(tmp_path / "backup", root / ".rcs")
        shutil.rmtree(tmp_path / "old-rcs")
        await asyncio.sleep(1.0)
        mode(root, "forge", current_phase="executing", iteration=2, max_iterations=10)  # in the new `.rcs`
        (root / ".rcs" / "state" / "ultrawork-state.json").unlink()
        doc = await until(docs, lambda d: root_modes(d) == {"forge": True})
        assert doc["has_rcs"] is True
    finally:
        await docs.aclose()


@pytest.fixture
def quick_checks(monkeypatch):
    monkeypatch.setattr(processes, "INTERVAL_S", 0.2)  # the follower reads it when it starts


@pytest.fixture
def sleeper():
    """A process to show alive and then end (`end`), never left running."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    if proc.poll() is None:
        end(proc)


def end(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("how", ["own watches", "polling"])
async def test_a_session_owner_that_dies_without_a_write_ends_its_session_on_screen(tmp_path, how, quick_checks,
                                                                                    sleeper):
    mode(tmp_path, "forge", "s1", current_phase="executing")
    mode(tmp_path, "ultrawork", current_phase="executing")
    pointer(tmp_path, "s1", pid=sleeper.pid, cwd=str(tmp_path))
    docs = follow(tmp_path, how)
    try:
        first = await docs.first()
        assert first["session"]["session_id"] == "s1" and first["active_set"] == ["forge"]
        end(sleeper)
        doc = await until(docs, lambda d: d["session"]["source"] == "root")
        assert doc["active_set"] == ["ultrawork"]
        assert doc["session"]["pointer"]["stale_dead"] is True
        assert f"pid {sleeper.pid} is not running" in doc["session"]["pointer"]["reason"]
    finally:
        await docs.aclose()


def a_mode_owner(root: Path, pid: int) -> None:
    mode(root, "ultrawork", current_phase="executing", owner_pid=pid)
    canonical(root, ["ultrawork"])


def a_team_worker(root: Path, pid: int) -> None:
    team = root / ".rcs" / "state" / "team" / "t1"
    atomic_write(team / "config.json", dump_json({"name": "t1", "task": "x", "agent_type": "executor",
                                                  "worker_count": 1, "max_workers": 1, "workers": ["w1"]}))
    atomic_write(team / "workers" / "w1" / "status.json", dump_json({"state": "working"}))
    atomic_write(team / "workers" / "w1" / "heartbeat.json", dump_json(
        {"pid": pid, "alive": True, "turn_count": 3, "last_turn_at": "2026-11-25T21:41:36.953Z"}))
    mode(root, "team", current_phase="team-exec", team_name="t1")


@pytest.mark.parametrize(("whose", "kind"), [(a_mode_owner, "dead-owner"), (a_team_worker, "dead-worker")])
async def test_a_process_that_dies_without_a_write_becomes_a_doctor_finding(tmp_path, quick_checks, sleeper,
                                                                            whose, kind):
    whose(tmp_path, sleeper.pid)
    docs = follow(tmp_path, "own watches")
    try:
        def found(doc: dict) -> bool:
            return any(f["kind"] == kind for f in doc["doctor"]["findings"])

        assert not found(await docs.first())
        end(sleeper)
        await until(docs, found)
    finally:
        await docs.aclose()


async def test_polling_sees_a_same_size_rewrite_whose_modification_time_was_put_back(tmp_path):
    path = mode(tmp_path, "ultrawork", current_phase="executing", active=True)
    canonical(tmp_path, ["ultrawork"])
    docs = follow(tmp_path, "polling")
    try:
        assert root_modes(await docs.first()) == {"ultrawork": True}
        st = path.stat()
        text = path.read_text()
        assert '"active": true' in text
        with open(path, "r+") as fh:  # in place, the same length, then the old times put back
            fh.write(text.replace('"active": true', '"active":false'))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
        await until(docs, lambda d: root_modes(d) == {"ultrawork": False})
    finally:
        await docs.aclose()


def test_polling_compares_every_file_of_a_tree_past_twenty_thousand_files(tmp_path):
    """Polling used to sign at most 20 000 files and say nothing about the rest (7 000 sessions of 3 files):
    their changes were never seen. Every file of such a tree is compared now."""
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.project.watch import scan, watch_targets

    for i in range(7_100):
        d = tmp_path / ".rcs" / "state" / "sessions" / f"s{i:05d}"
        d.mkdir(parents=True)
        for name in ("forge-state.json", "team-state.json", "skill-active-state.json"):
            (d / name).write_bytes(b"{}")
    signed = scan(watch_targets(WorldLoader(tmp_path, rp1_db=False)))
    assert len(signed) == 21_300


async def test_a_worker_whose_heartbeat_goes_silent_is_shown_without_any_write(tmp_path, monkeypatch):
    """Time alone turns a worker silent (no heartbeat for two minutes): the followed document says so on
    its own, as a fresh read at that moment does, though no file changed."""
    from rcs_tui.project import feed as feed_mod
    from rcs_tui.state.team import HEARTBEAT_STALE_SECONDS
    from tests.statefix import state_dir, write

    team = state_dir(tmp_path) / "team" / "crew"
    write(team / "config.json", {"name": "crew"})
    write(team / "workers" / "w1" / "heartbeat.json", {"pid": os.getpid(), "alive": True,
                                                        "last_turn_at": "2026-11-25T21:59:00Z"})
    mode(tmp_path, "team", current_phase="team-exec", team_name="crew")
    now = [1795644000.0 - HEARTBEAT_STALE_SECONDS]  # 2026-11-25T22:00:00Z less the threshold: still beating
    monkeypatch.setattr(feed_mod, "REJUDGE_S", 0.2)
    docs = follow_documents(SnapshotFeed(tmp_path, clock=lambda: now[0]))
    try:
        first = await anext(docs)
        assert first["attention"]["silent"] == []
        now[0] = 1795644000.0 + 600  # eleven minutes after the last turn, nothing written
        later = await asyncio.wait_for(anext(docs), 10)
        assert later["attention"]["silent"] == ["crew/w1"]
        assert later["attention"] == SnapshotFeed(tmp_path, clock=lambda: now[0]).document()["attention"]
    finally:
        await docs.aclose()


def forge_iteration(doc: dict) -> int | None:
    root = next(s for s in doc["scopes"] if s["scope"] == "root")
    return root["modes"]["forge"]["iteration"] if "forge" in root["modes"] else None


@pytest.mark.parametrize("how", HOW)
async def test_rcs_a_link_retargeted_to_another_tree_is_followed_and_watched_there(tmp_path, how, watchers):
    """`.rcs` a link to a data directory, pointed at another (`ln -sfn`): the view reads the new tree, and a
    later write in it is seen (its watches follow the link, not the tree it led to before)."""
    root = tmp_path / "p"
    root.mkdir()
    mode(tmp_path / "d1", "forge", current_phase="executing", iteration=1)
    (tmp_path / "d1" / ".rcs").rename(tmp_path / "data1")
    (root / ".rcs").symlink_to(tmp_path / "data1")
    shutil.copytree(tmp_path / "data1", tmp_path / "data2")
    docs = follow(root, how, watchers(how))
    try:
        # (no `first()`: the doctor's journal check reports the linked `.rcs` on its own schedule)
        assert forge_iteration(await docs.next(30)) == 1
        await asyncio.sleep(3.0)
        mode(tmp_path / "d2", "forge", current_phase="executing", iteration=5)
        shutil.copy(tmp_path / "d2" / ".rcs/state/forge-state.json", tmp_path / "data2/state/forge-state.json")
        (root / ".rcs.new").symlink_to(tmp_path / "data2")
        (root / ".rcs.new").rename(root / ".rcs")
        await until(docs, lambda d: forge_iteration(d) == 5)
        await asyncio.sleep(1.0)
        mode(root, "forge", current_phase="executing", iteration=6)  # through the link: into data2
        await until(docs, lambda d: forge_iteration(d) == 6)
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", HOW)
async def test_an_rp1_database_reached_through_a_link_is_followed(tmp_path, how, watchers, monkeypatch):
    """`RP1_DB` a link into another directory, rp1 holding the database open (its commits in the WAL beside
    the file itself): each commit is followed."""
    from rcs_tui.rp1.fixtures import Rp1Writer, create_db

    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    (tmp_path / "data").mkdir()
    create_db(tmp_path / "data" / "rp1.db")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "rp1.db").symlink_to(tmp_path / "data" / "rp1.db")
    monkeypatch.setenv("RP1_DB", str(tmp_path / "links" / "rp1.db"))
    writer = Rp1Writer(tmp_path / "data" / "rp1.db")
    writer.start_run("build", project_path=root, run_id="run-1")
    writer.step("run-1", "requirements", "running")
    docs = follow(root, how, watchers(how))
    try:
        assert (await docs.next(30))["rp1"]["counts"].get("waiting", 0) == 0
        await asyncio.sleep(3.0)
        writer.wait_for_user("run-1", "requirements", "which database?")
        await until(docs, lambda d: d["rp1"]["counts"].get("waiting") == 1)
    finally:
        writer.close()
        await docs.aclose()


async def test_a_session_pointer_whose_cwd_link_is_retargeted_is_followed(tmp_path):
    """The pointer's `cwd` reaches the project through a link, which is then pointed elsewhere: no file
    changed, yet the session is no longer this project's; the view says so within a few seconds."""
    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    mode(root, "forge", "S1", current_phase="executing")
    canonical(root, ["forge"], "S1")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "via").symlink_to(root)
    pointer(root, "S1", cwd=str(tmp_path / "via"))
    docs = follow(root, "own watches")
    try:
        assert (await docs.first())["session"]["session_id"] == "S1"
        (tmp_path / "via").unlink()
        (tmp_path / "via").symlink_to(tmp_path / "elsewhere")
        await until(docs, lambda d: d["session"]["session_id"] is None, timeout=15)
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", HOW)
async def test_rp1_s_directory_made_after_the_view_started_is_followed(tmp_path, how, watchers, monkeypatch):
    """A first use of rp1 makes its directory while a view runs: the view reads its database from then on,
    and says the database is gone when the directory goes."""
    from rcs_tui.rp1.fixtures import Rp1Writer, create_db

    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RP1_DB", str(home / ".rp1" / "rp1.db"))
    docs = follow(root, how, watchers(how))
    try:
        assert (await docs.first())["rp1"]["status"] == "missing"
        (home / ".rp1").mkdir()
        create_db(home / ".rp1" / "rp1.db")
        with Rp1Writer(home / ".rp1" / "rp1.db") as writer:
            writer.start_run("build", project_path=root, run_id="run-1")
            writer.wait_for_user("run-1", "requirements", "which one?")
        await until(docs, lambda d: d["rp1"]["counts"].get("waiting") == 1)
        (home / ".rp1").rename(tmp_path / "trash-rp1")
        await until(docs, lambda d: d["rp1"]["status"] == "missing")
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", HOW)
async def test_an_rp1_database_kept_inside_rcs_leaves_the_state_watched(tmp_path, how, watchers, monkeypatch):
    """`RP1_DB` inside `.rcs` itself: the state beside it is still followed (its directory was watched flat,
    which hid every session), and so are the database's commits."""
    from rcs_tui.rp1.fixtures import Rp1Writer, create_db

    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    create_db(root / ".rcs" / "rp1.db")
    monkeypatch.setenv("RP1_DB", str(root / ".rcs" / "rp1.db"))
    docs = follow(root, how, watchers(how))
    try:
        await docs.first()
        mode(root, "forge", "S1", current_phase="executing")
        await until(docs, lambda d: "S1" in scopes(d))
        with Rp1Writer(root / ".rcs" / "rp1.db") as writer:
            writer.start_run("build", project_path=root, run_id="run-1")
            writer.wait_for_user("run-1", "requirements", "which one?")
        await until(docs, lambda d: d["rp1"]["counts"].get("waiting") == 1)
    finally:
        await docs.aclose()


def test_a_polling_scan_with_rp1_inside_rcs_signs_the_state_files_too(tmp_path):
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.project.watch import scan, watch_targets
    from rcs_tui.rp1.fixtures import create_db

    root = tmp_path / "p"
    mode(root, "forge", "S1", current_phase="executing")
    create_db(root / ".rcs" / "rp1.db")
    targets = watch_targets(WorldLoader(root, rp1_db=root / ".rcs" / "rp1.db"))
    signed = {str(p.relative_to(root)) for p in scan(targets)}
    assert {".rcs/state/sessions/S1/forge-state.json", ".rcs/rp1.db"} <= signed


@pytest.mark.parametrize("how", HOW)
async def test_the_projects_rp1_id_written_after_the_view_started_brings_in_its_runs(tmp_path, how, watchers,
                                                                                     monkeypatch):
    """rp1 names a project by its id as well as by its path: `.rp1/project_id` written while a view runs (rp1
    set up in the project then) makes the runs filed under that id the project's; removed, they leave."""
    from rcs_tui.rp1.fixtures import Rp1Writer, create_db

    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    db = tmp_path / "home" / "rp1.db"
    db.parent.mkdir()
    create_db(db)
    monkeypatch.setenv("RP1_DB", str(db))
    with Rp1Writer(db) as writer:  # filed under the id, from a checkout at another path
        writer.start_run("build", project_path=tmp_path / "other-checkout", run_id="run-1", project_id="pid-1")
        writer.wait_for_user("run-1", "requirements", "which one?")
    docs = follow(root, how, watchers(how))
    try:
        assert (await docs.first())["rp1"]["counts"].get("waiting", 0) == 0
        (root / ".rp1").mkdir()
        atomic_write(root / ".rp1" / "project_id", b"pid-1\n")
        await until(docs, lambda d: d["rp1"]["counts"].get("waiting") == 1)
        (root / ".rp1" / "project_id").unlink()
        await until(docs, lambda d: d["rp1"]["counts"].get("waiting", 0) == 0)
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("replace", ["deleted and copied back", "moved away and copied back"])
async def test_the_project_directory_replaced_by_a_copy_is_followed_and_watched(tmp_path, how, replace, watchers):
    """The project's own directory deleted (or moved away) and put back from a copy: the old watches went
    with the old directory (or followed it away), so nothing was seen again. Now the new one is read whole,
    watched, and its later changes shown."""
    root = tmp_path / "p"
    mode(root, "ultrawork", current_phase="executing")
    mode(root, "forge", "S1", current_phase="alpha")
    shutil.copytree(root, tmp_path / "copy", symlinks=True)
    docs = follow(root, how, watchers(how))
    try:
        await docs.first()
        if replace.startswith("deleted"):
            shutil.rmtree(root)
        else:
            root.rename(tmp_path / "away")
        shutil.copytree(tmp_path / "copy", root, symlinks=True)
        await asyncio.sleep(3.0)
        mode(root, "forge", "S1", current_phase="beta")
        await until(docs, lambda d: any(s["scope"] == "S1" and s["modes"]["forge"]["phase"] == "beta"
                                        for s in d.get("scopes", [])))
    finally:
        await docs.aclose()


@pytest.mark.parametrize("how", ["own watches", "shared watcher"])
async def test_a_tree_past_the_directories_one_view_watches_is_polled_not_left_half_watched(tmp_path, how, watchers,
                                                                                              monkeypatch):
    """Past the bound on directories one view watches, the rest were silently never watched: a write there
    never showed. The view now polls the project, and says so."""
    from rcs_tui.project import shared_watch, watch

    monkeypatch.setattr(watch, "MAX_DIRS", 6)
    monkeypatch.setattr(shared_watch, "MAX_DIRS", 6)
    root = tmp_path / "p"
    for i in range(8):
        mode(root, "forge", f"S{i}", current_phase="alpha")
    docs = follow(root, how, watchers(how))
    try:
        await docs.first()
        mode(root, "forge", "S7", current_phase="beta")
        mode(root, "forge", "S0", current_phase="beta")
        await until(docs, lambda d: sum(s["modes"].get("forge", {}).get("phase") == "beta"
                                        for s in d.get("scopes", [])) == 2)
    finally:
        await docs.aclose()


def test_a_directory_that_could_not_be_watched_is_watched_when_its_permissions_change(tmp_path):
    """Made unreadable (its watch refused), then given its permissions back: the change of its attributes is
    the only event, and it counts as the directory coming. A watched directory's attributes change with
    every entry made in it, which is no reason to walk it again."""
    from rcs_tui.project.loader import WorldLoader
    from rcs_tui.project.watch import directory_event, watch_targets

    root = tmp_path / "p"
    mode(root, "forge", "S1", current_phase="alpha")
    targets = watch_targets(WorldLoader(root, rp1_db=False))
    session = root / ".rcs/state/sessions/S1"
    attrib, isdir = 0x4, 0x40000000
    assert directory_event(attrib | isdir, session, targets, watched=False) == (False, True, True)
    assert directory_event(attrib | isdir, session, targets, watched=True) == (False, False, False)
