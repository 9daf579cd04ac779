"""Every cached or incrementally kept answer equals what a fresh build says at that moment.

Random sequences of runtime-like changes (session directories appearing and going, tombstones written
into sessions that had no such file, task directories that get their `state.json` later, team workers
appearing and dying, same-size rewrites with their mtime put back, rp1 events) are applied to one
project; after every step the status line's answer (through its cache) is compared with a build that
uses no cache, and the live views' incrementally kept World with a fresh load.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from statefix import canonical, mode, state_dir
from test_reader_refresh import SCOPES, SESSIONS
from test_reader_refresh import apply as apply_state
from test_reader_refresh import op as state_op

from rcs_tui.files import cache as cache_mod
from rcs_tui.project import answer as answer_mod
from rcs_tui.project.loader import WorldLoader
from rcs_tui.rp1.fixtures import Rp1Writer, create_db
from rcs_tui.views.snapshot_json import snapshot_json

SETTLE = 0.03  # past the (shortened) window in which a same-tick rewrite could go unseen

runtime_op = st.one_of(
    state_op,
    st.tuples(st.just("tombstone"), st.sampled_from(SESSIONS), st.sampled_from(["forge", "ultrawork"])),
    st.tuples(st.just("taskdir"), st.sampled_from(["t1", "t2", "t3"])),
    st.tuples(st.just("taskstate"), st.sampled_from(["t1", "t2", "t3"]),
              st.sampled_from(["planning", "codegen", "done", "nonsense"])),
    st.tuples(st.just("worker"), st.sampled_from(["w1", "w2", "w3"]), st.sampled_from(["working", "idle"])),
    st.tuples(st.just("kill"), st.sampled_from(["w1", "w2", "w3"])),
    st.tuples(st.just("samesize"), st.sampled_from(SCOPES), st.sampled_from(["forge", "team", "ultrawork"])),
    st.tuples(st.just("rp1"), st.sampled_from(["plan", "build", "verify"]),
              st.sampled_from(["running", "completed", "waiting"])),
)


class Runtime:
    """A stand-in runtime: its own worker processes and an rp1 database it appends to."""

    def __init__(self, root: Path, db: Path) -> None:
        self.root, self.db = root, db
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.run_id: str | None = None

    def close(self) -> None:
        for proc in self.workers.values():
            proc.kill()
            proc.wait()

    def apply_batch(self, batch: list[tuple[Any, ...]]) -> set[Path]:
        """Apply a batch; the paths a watcher reports for it, plus the team directory (a worker dying is no
        file event, so the watcher's periodic liveness check reports it)."""
        changed: set[Path] = {self.root / ".rcs" / "state" / "team" / "crew"}
        for action in batch:
            changed |= self.apply(action)
        return changed

    def apply(self, action: tuple[Any, ...]) -> set[Path]:
        kind = action[0]
        rcs = self.root / ".rcs"
        if kind == "tombstone":
            _, sid, m = action
            path = state_dir(self.root, sid) / f"{m}-state.json"
            if state_dir(self.root, sid).is_dir():
                path.write_text(json.dumps({"active": False, "current_phase": "cleared"}))
            return {path}
        if kind == "taskdir":
            (rcs / "tasks" / action[1]).mkdir(parents=True, exist_ok=True)
            return {rcs / "tasks" / action[1]}
        if kind == "taskstate":
            path = rcs / "tasks" / action[1] / "state.json"
            if path.parent.is_dir():
                path.write_text(json.dumps({"phase": action[2]}))
            return {path}
        if kind == "worker":
            _, name, state = action
            wdir = rcs / "state" / "team" / "crew" / "workers" / name
            wdir.mkdir(parents=True, exist_ok=True)
            proc = self.workers.get(name)
            if proc is None or proc.poll() is not None:
                proc = self.workers[name] = subprocess.Popen(["sleep", "600"])
            (wdir / "status.json").write_text(json.dumps({"state": state}))
            (wdir / "heartbeat.json").write_text(json.dumps({"alive": True, "pid": proc.pid}))
            return {wdir / "status.json", wdir / "heartbeat.json"}
        if kind == "kill":
            proc = self.workers.get(action[1])
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            return set()  # a process ending is no file event
        if kind == "samesize":
            _, scope, m = action
            path = state_dir(self.root, scope) / f"{m}-state.json"
            try:
                raw, st_ = path.read_bytes(), path.stat()
            except OSError:
                return set()
            if b"true" in raw:
                new = raw.replace(b"true", b"1   ", 1)
            elif b"1   " in raw:
                new = raw.replace(b"1   ", b"true", 1)
            else:
                return set()
            path.write_bytes(new)
            os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # the same size and mtime: only ctime moves
            return {path}
        if kind == "rp1":
            _, step, status = action
            with Rp1Writer(self.db) as w:
                if self.run_id is None:
                    self.run_id = w.start_run("build", project_path=self.root, run_id="run-1")
                if status == "waiting":
                    w.wait_for_user(self.run_id, step, "which way?")
                else:
                    w.step(self.run_id, step, status)
            return {self.db, Path(f"{self.db}-wal")}
        return apply_state(self.root, action)


def seed(root: Path) -> None:
    mode(root, "forge", None, current_phase="executing", iteration=1)  # active at root: sessions' tombstones count
    canonical(root, ["forge"], None)
    mode(root, "team", "s-a", current_phase="team-exec", team_name="crew")
    mode(root, "ultrawork", "s-a", current_phase="executing")
    canonical(root, ["team", "ultrawork"], "s-a")
    state_dir(root, "s-b").mkdir(parents=True, exist_ok=True)


FILLER_MODES = ("forge", "team", "ultrawork")


def filler_id(i: int) -> str:
    return f"f-{i:04d}"


def add_filler(root: Path, count: int) -> None:
    """`count` more sessions, each with three mode files (one active), as a busy project holds."""
    for i in range(count):
        sid = filler_id(i)
        for m in FILLER_MODES:
            mode(root, m, sid, active=m == "forge", current_phase="executing" if m == "forge" else "complete",
                 iteration=i % 7)
        canonical(root, ["forge"], sid)


@contextmanager
def project_with_runtime(filler: int = 0) -> Iterator[tuple[Path, Path, Runtime]]:
    """A seeded project (with `filler` more sessions), its rp1 database and a stand-in runtime over them,
    all gone afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root, db = base / "p", base / "rp1.db"
        seed(root)
        add_filler(root, filler)
        create_db(db)
        runtime = Runtime(root, db)
        try:
            yield root, db, runtime
        finally:
            runtime.close()


def stored(result: dict[str, Any]) -> str:
    """An answer as comparable text (its JSON document is kept as UTF-8 text)."""
    return json.dumps({k: v.decode() if isinstance(v, bytes | bytearray) else v for k, v in result.items()},
                      sort_keys=True)


@pytest.fixture
def short_window(monkeypatch):
    """Builds are stored once their inputs are SETTLE old (the real window is longer, for coarse clocks)."""
    monkeypatch.setattr(answer_mod, "RACY_NS", 20_000_000)
    monkeypatch.setattr(answer_mod, "COARSE_RACY_NS", 20_000_000)


def cached_equals_fresh(root: Path, db: Path, runtime: Runtime, steps: list[tuple[Any, ...]], session: str | None,
                        as_json: bool, monkeypatch: pytest.MonkeyPatch) -> int:
    """Apply `steps`; after each, ask twice through the cache and compare each answer with a fresh build.
    Returns how many asks the cache answered."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(root.parent / "cache"))
    monkeypatch.setenv("RP1_DB", str(db))
    built = []
    real_build = answer_mod.build
    monkeypatch.setattr(answer_mod, "build", lambda *a, **k: built.append(1) or real_build(*a, **k))
    hits = 0
    for action in [("noop",), *steps]:
        if action[0] != "noop":
            runtime.apply(action)
        time.sleep(SETTLE)
        for _ in range(2):  # the second ask is the one a cache would answer
            before = len(built)
            cached = answer_mod.answer(str(root), session, as_json, False, None)
            hits += len(built) == before
            fresh, _ = real_build(str(root), session, as_json, False, None)
            assert stored(cached) == stored(fresh), (action, session, as_json)
    return hits


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(runtime_op, min_size=3, max_size=14), session=st.sampled_from([None, "s-a"]),
       as_json=st.booleans())
def test_the_status_line_cache_never_contradicts_a_fresh_build(short_window, monkeypatch, steps, session, as_json):
    with project_with_runtime() as (root, db, runtime):
        assert cached_equals_fresh(root, db, runtime, steps, session, as_json, monkeypatch) > 0  # the cache was used


FILLER = 300
LIMIT = 64 * 1024  # the cache file's size limit, lowered so that this tree is past it in the per-file form
filler_op = st.one_of(
    runtime_op,
    st.tuples(st.just("samesize"), st.sampled_from([filler_id(0), filler_id(FILLER - 1)]),
              st.sampled_from(FILLER_MODES)),
    st.tuples(st.just("delete"), st.sampled_from([filler_id(1), filler_id(FILLER // 2)]),
              st.sampled_from([f"{m}-state.json" for m in FILLER_MODES])),
    st.tuples(st.just("rmsession"), st.sampled_from([filler_id(2)])),
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(filler_op, min_size=2, max_size=8), session=st.sampled_from([None, "s-a"]))
def test_among_hundreds_of_sessions_the_status_document_reads_only_its_own_and_stays_right(
        short_window, monkeypatch, steps, session):
    """`hud --once --json` answers for root and the current session: the other sessions' files are not read
    (so a project of 300 more sessions costs what a project of none does), their changes never make the
    kept answer contradict a fresh build, and the kept file stays small."""
    monkeypatch.setattr(cache_mod, "MAX_BYTES", LIMIT)
    with project_with_runtime(filler=FILLER) as (root, db, runtime):
        result, recorder = answer_mod.build(str(root), session, True, False, None)
        read = {Path(p).name for p in recorder.inputs if "/sessions/f-" in p and Path(p).suffix == ".json"}
        # At root, a session's tombstone of a mode root holds active makes root's copy a survivor: only that
        # file of each session is read. A session's answer reads no other session at all.
        assert read == ({"forge-state.json"} if session is None else set())
        scopes = [s["scope"] for s in json.loads(bytes(result["json"]))["scopes"]]
        assert scopes == (["root"] if session is None else ["root", session])
        assert cached_equals_fresh(root, db, runtime, steps, session, True, monkeypatch) > 0
        files = list((root.parent / "cache" / "rcs-tui").glob("once-*.json"))
        assert files and all(f.stat().st_size <= LIMIT for f in files)


@settings(max_examples=25, deadline=None)
@given(rounds=st.lists(st.lists(runtime_op, min_size=1, max_size=4), min_size=1, max_size=6),
       session=st.sampled_from([None, "s-a"]))
def test_the_live_views_kept_world_equals_a_fresh_load(rounds, session):
    """The console's and HUD's World, refreshed only from the paths a watcher reports, says what a fresh
    load says: every scope, member, error, badge, task and team (worker deaths are no file event, so
    each round also reports the team directory, as the watcher's periodic liveness check does)."""
    with project_with_runtime() as (root, db, runtime):
        live = WorldLoader(root, session_id=session, rp1_db=db, environ={})
        live.load()
        for batch in rounds:
            world = live.load(runtime.apply_batch(batch))
            fresh = WorldLoader(root, session_id=session, rp1_db=db, environ={}).load()
            assert snapshot_json(world.snapshot) == snapshot_json(fresh.snapshot)
            assert [b.text(root) for b in world.badges] == [b.text(root) for b in fresh.badges]
            assert world.tasks == fresh.tasks
            assert world.teams == fresh.teams
            assert world.run == fresh.run
            assert world.newest_write == fresh.newest_write


@settings(max_examples=20, deadline=None)
@given(rounds=st.lists(st.lists(runtime_op, min_size=1, max_size=4), min_size=1, max_size=5))
def test_the_followed_document_equals_a_fresh_one(rounds):
    """What `snapshot --follow` and the fleet keep per project (a feed rebuilt from changed paths, with its
    per-scope doctor findings reused while a scope is unchanged) is the document a fresh feed builds."""
    from rcs_tui.project.feed import SnapshotFeed

    def comparable(doc: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in doc.items() if k not in ("seq", "taken_at")}

    clock = lambda: 1_900_000_000.0  # noqa: E731 - one instant for both feeds
    with project_with_runtime() as (root, db, runtime):
        live = SnapshotFeed(root, rp1_db=db, clock=clock)
        live.document()
        for batch in rounds:
            doc = live.document(runtime.apply_batch(batch))
            fresh = SnapshotFeed(root, rp1_db=db, clock=clock).document()
            assert comparable(doc) == comparable(fresh)
