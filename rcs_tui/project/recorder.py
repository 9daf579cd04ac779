"""The flight recorder: every change of a project's combined active set, tasks and rp1 runs, kept on disk.

Whoever watches a project (the live HUD, the console, the fleet, `rcs-tui record`) runs `run_recorder`;
one of them at a time holds the recorder lock (`.rcs/logs/rcs-tui-history.lock`, flock(2), released by
the kernel when its holder dies, even by `kill -9`) and records, the others wait and try again every few
seconds, so a dead recorder is replaced. It follows the project through the snapshot feed (the document
the fleet and `snapshot --follow` use), turns each document into a summary (`summarize`), asks the core
what changed (`core.changes.diff`) and appends one JSON line per change to
`.rcs/logs/rcs-tui-history.jsonl` through the confined file layer.

No change is lost or written twice across a restart or a crash: after appending, the recorder saves a
checkpoint (the summary it has recorded and the last sequence number) by atomic rename, at most every
`CHECKPOINT_EVERY_S` seconds. At start it takes the checkpoint, replays the lines written after it (in the
current file and the one rotated last), and records only the differences between that and the project
as it is now.
The history rotates at `ROTATE_BYTES`, keeping `KEEP` older files; reading is bounded per file.
`acknowledge` appends an operator's acknowledgement (kind `ack`) from any process.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rcs_tui.core import changes
from rcs_tui.core.times import iso
from rcs_tui.files.fsafe import Refused, Tree, open_leaf, rename_within, stage, write_all
from rcs_tui.files.io import read_fd

HISTORY_REL = ".rcs/logs/rcs-tui-history.jsonl"
CHECKPOINT_REL = ".rcs/logs/rcs-tui-history.checkpoint.json"
LOCK_REL = ".rcs/logs/rcs-tui-history.lock"
ROTATE_BYTES = 4 * 1024 * 1024
KEEP = 3  # rotated files kept: rcs-tui-history.1.jsonl (newest) … .3.jsonl
READ_CAP = 2 * ROTATE_BYTES  # the most of one history file a reader reads, from its end
CHECKPOINT_CAP = 32 * 1024 * 1024
RETRY_S = 2.0  # how often a watcher that does not record tries to take over
CHECKPOINT_EVERY_S = 5.0  # the checkpoint is saved at most this often (what came after it is replayed)
RUNS_KEPT = 50  # the newest rp1 runs of the project whose status is followed
FINDING_HEALTH = {"stale-member": "stale", "orphan": "orphan", "root-survivor": "root-survivor",
                  "dead-owner": "dead", "unreadable-member": "unreadable"}
WRITER_KEYS = (("session", ("owner_rcs_session_id", "session_id")), ("pid", ("owner_pid", "pid")),
               ("source", ("source", "transition_source")))


def history_name(gen: int) -> str:
    """File name of history generation `gen` (0 = the one being written)."""
    return "rcs-tui-history.jsonl" if gen == 0 else f"rcs-tui-history.{gen}.jsonl"


def _rel(gen: int) -> str:
    return f".rcs/logs/{history_name(gen)}"


# -- what the recorder keeps of a project -----------------------------------------------------------
def _writer(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a mode file says wrote it (owning session, process, source), when it says."""
    out: dict[str, Any] = {}
    for name, keys in WRITER_KEYS:
        value = next((data[k] for k in keys if data and isinstance(data.get(k), (str, int))
                      and not isinstance(data.get(k), bool)), None)
        if value is not None:
            out[name] = value if isinstance(value, int) else str(value)[:200]
    return out or None


def summarize(world: Any, doc: Mapping[str, Any], runs: Mapping[str, str] | None = None,
              cache: dict[int, Any] | None = None) -> tuple[changes.Summary, dict[str, dict[str, Any]]]:
    """(the recorder's summary of a project, the fate of each mode file that is not a member).

    Members: every active mode file of every scope (and every file whose outcome waits for the operator),
    and every member the doctor finds wrong (a stale or root-survivor member may have no active file), keyed
    `scope/mode`; health comes from the doctor's findings (stale, orphan, root-survivor, dead owner,
    unreadable), else `live`. `doc` is the snapshot document built from `world`; `runs`: rp1 run id ->
    status. `cache` (kept by the caller between calls) holds each scope's files as last read: the loader
    keeps a scope it did not re-read as the same object, so only the scopes a change touched are read again."""
    snap = world.snapshot
    findings = (doc.get("doctor") or {}).get("findings") or []
    health = {f"{f.get('scope')}/{f.get('subject')}": FINDING_HEALTH[f["kind"]]
              for f in findings if f.get("kind") in FINDING_HEALTH}
    members: dict[str, Any] = {}
    gone: dict[str, dict[str, Any]] = {}
    seen: dict[int, Any] = {}
    for scope in (snap.root_scope, *(s for _, s in sorted(snap.sessions.items()))):
        held = cache.get(id(scope)) if cache is not None else None
        files = held[1] if held is not None and held[0] is scope else _scope_files(scope)
        seen[id(scope)] = (scope, files)
        for key, candidate, base, fate in files:
            if candidate or key in health:
                members[key] = {**base, "health": health.get(key, "live")}
            else:
                gone[key] = fate
    if cache is not None:
        cache.clear()
        cache.update(seen)
    for key, h in health.items():
        members.setdefault(key, {"phase": None, "iteration": None, "health": h, "outcome": None, "writer": None})
    workers = {f"{team}/{w['name']}": "dead" if w.get("dead_reason") else "alive"
               for team, t in (doc.get("team") or {}).items() for w in t.get("workers", [])}
    tasks = {t["id"]: t.get("phase") for t in doc.get("tasks") or []}
    summary = {**changes.empty(), "members": members, "workers": workers, "tasks": tasks, "runs": dict(runs or {})}
    return summary, gone


def _scope_files(scope: Any) -> list[tuple[str, bool, dict[str, Any], dict[str, Any]]]:
    """Per mode file of a scope: its key, whether it is a member by itself (active, or waiting for the
    operator, and not a clear tombstone), what the recorder keeps of it, and its fate when not a member."""
    out = []
    where = scope.session_id or "root"
    for mode, f in scope.modes.items():
        outcome = f.outcome.value or None
        tombstone = bool(f.tombstone)
        candidate = (f.active or outcome in changes.WAITING_OUTCOMES) and not tombstone
        base = {"phase": f.phase, "iteration": f.iteration, "outcome": outcome, "writer": _writer(f.data)}
        out.append((f"{where}/{mode}", candidate, base, {"phase": f.phase, "outcome": outcome,
                                                          "tombstone": tombstone}))
    return out


# -- the lock ----------------------------------------------------------------------------------------
class RecorderLock:
    """The one-recorder-per-project lock, held (non-blocking) until released or the process ends."""

    def __init__(self, root: Path) -> None:
        self.tree = Tree(root)
        self.fd: int | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def acquire(self, actor: str = "") -> bool:
        """Take the lock if free; whether this process holds it now."""
        if self.fd is not None:
            return True
        try:
            with self.tree.parent(LOCK_REL, create=True) as (dfd, name):
                fd = open_leaf(dfd, name, os.O_RDWR | os.O_CREAT, LOCK_REL)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    here = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    held = os.fstat(fd)
                    if (here.st_dev, here.st_ino) != (held.st_dev, held.st_ino):  # replaced meanwhile
                        raise BlockingIOError
                    os.ftruncate(fd, 0)
                    write_all(fd, json.dumps({"pid": os.getpid(), "actor": actor, "since": iso(time.time())}
                                             ).encode())
                except (BlockingIOError, FileNotFoundError):
                    os.close(fd)
                    return False
                except BaseException:
                    os.close(fd)
                    raise
        except (Refused, OSError):
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def recorder_holder(root: Path) -> dict[str, Any] | None:
    """Who records this project now (pid, actor, since), or None when nobody does."""
    tree = Tree(root)
    try:
        with tree.parent(LOCK_REL) as (dfd, name):
            fd = open_leaf(dfd, name, os.O_RDONLY, LOCK_REL)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    got = read_fd(fd, Path(LOCK_REL), max_bytes=4096)
                    data = json.loads(got.raw or b"{}")
                    return data if isinstance(data, dict) else {}
                return None  # nobody holds it
            finally:
                os.close(fd)
    except (Refused, OSError, ValueError):
        return None


# -- reading the history -----------------------------------------------------------------------------
def _read_gen(tree: Tree, gen: int, warnings: list[str]) -> list[dict[str, Any]]:
    rel = _rel(gen)
    try:
        with tree.parent(rel) as (dfd, name):
            fd = open_leaf(dfd, name, os.O_RDONLY, rel)
            try:
                got = read_fd(fd, Path(rel), max_bytes=READ_CAP, part="tail")
            finally:
                os.close(fd)
    except FileNotFoundError:
        return []
    except (Refused, OSError) as exc:
        warnings.append(f"{rel}: {exc}")
        return []
    if got.raw is None:
        warnings.append(f"{rel}: {got.error}")
        return []
    lines = got.raw.split(b"\n")
    if got.truncated:
        lines = lines[1:]  # the first line is cut
        warnings.append(f"{rel} is larger than a history file grows: only its newest entries were read")
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            entry = None
        if not isinstance(entry, dict):
            if i < len(lines) - 1 or line.endswith(b"}"):
                warnings.append(f"{rel}: a line that is not a history entry; skipped")
            continue
        why = changes.entry_problem(entry)
        if why is not None:
            warnings.append(f"{rel}: a line that is not a history entry ({why}); skipped")
            continue
        out.append(entry)
    return out


def read_history(root: Path, warnings: list[str] | None = None) -> list[dict[str, Any]]:
    """Every history entry kept, oldest first (rotated files first); unreadable lines are skipped."""
    tree = Tree(root)
    sink = warnings if warnings is not None else []
    out: list[dict[str, Any]] = []
    for gen in range(KEEP, -1, -1):
        out += _read_gen(tree, gen, sink)
    return out


def open_comebacks(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`came_back` entries not acknowledged since (an `ack` naming the entry's id or its member)."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.get("kind") == "came_back" and isinstance(e.get("subject"), str):
            out[e["subject"]] = e
        elif e.get("kind") == "ack":
            item = e.get("item")
            for key, cb in list(out.items()):
                if item in (cb.get("id"), key):
                    del out[key]
    return list(out.values())


# -- writing -------------------------------------------------------------------------------------------
def _line(entry: Mapping[str, Any]) -> bytes:
    return (json.dumps(entry, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n").encode()


def _rotate(tree: Tree, limit: int) -> None:
    st = tree.lstat(HISTORY_REL)
    if st is None or st.st_size < limit:
        return
    with tree.parent(HISTORY_REL) as (dfd, _name):
        for gen in range(KEEP, 0, -1):
            rename_within(dfd, history_name(gen - 1), history_name(gen))
        with contextlib.suppress(OSError):
            os.fsync(dfd)


def acknowledge(root: Path, item_id: str, actor: str, *, clock: Callable[[], float] = time.time,
                of: str | None = None) -> dict[str, Any]:
    """Record that `actor` acknowledged `item_id` (a history entry's `id`, or a member key such as
    `root/forge`): a `came_back` it names stops being open. `of`: what about it was acknowledged (`silent`,
    `waiting`, ...), so another kind of trouble with the same member or worker is not covered. Any process
    may call it; returns the entry."""
    now = clock()
    entry = {"v": changes.VERSION, "id": f"ack-{uuid.uuid4().hex[:12]}", "at": iso(now, ms=True),
             "ts": round(now, 3), "kind": "ack", "item": str(item_id), "actor": str(actor),
             **({"of": str(of)} if of else {})}
    Tree(root).append(HISTORY_REL, _line(entry))
    return entry


class Recorder:
    """Appends the changes of one project; call only while holding its `RecorderLock`."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time,
                 rotate_bytes: int = ROTATE_BYTES, checkpoint_every: float = CHECKPOINT_EVERY_S) -> None:
        self.root = Path(root)
        self.tree = Tree(self.root)
        self.clock = clock
        self.rotate_bytes = rotate_bytes
        self.checkpoint_every = checkpoint_every
        self.summary: changes.Summary | None = None
        self.seq = 0
        self._saved = -1e18  # when the checkpoint was last saved (monotonic)
        self.scopes: dict[int, Any] = {}  # `summarize`'s per-scope cache

    def start(self) -> None:
        """Take the checkpoint and replay what was appended after it (a crash between the two)."""
        summary, seq = changes.empty(), 0
        got = self.tree.read_file(CHECKPOINT_REL, CHECKPOINT_CAP)
        fresh = got.raw is None
        if got.raw is not None:
            try:
                data = json.loads(got.raw)
                if (isinstance(data, dict) and data.get("v") == changes.VERSION
                        and changes.summary_problem(data.get("summary")) is None
                        and isinstance(data.get("seq"), int) and not isinstance(data["seq"], bool)):
                    summary, seq = data["summary"], data["seq"]
                else:
                    fresh = True  # damaged: recorded afresh from the lines kept (a new baseline if none)
            except (ValueError, KeyError, TypeError, RecursionError):
                fresh = True
        written = _read_gen(self.tree, 1, []) + _read_gen(self.tree, 0, [])  # a rotation may fall in between
        later = [e for e in written if isinstance(e.get("seq"), int) and e["seq"] > seq]
        if later:
            summary = changes.apply(summary, later)
            seq = max(e["seq"] for e in later)
        self.summary = None if fresh and not later else summary
        self.seq = seq

    def observe(self, after: changes.Summary, gone: Mapping[str, Mapping[str, Any]],
                journal: list[dict[str, Any]], parse_time: Callable[[Any], float | None]) -> list[dict[str, Any]]:
        """Record what changed since the last recorded summary; the entries written."""
        now = self.clock()
        after = {**after, "at": now}
        if self.summary is None:  # the first recording ever: one baseline entry, not one per item
            self.seq += 1
            entry = self._stamp({"kind": "baseline", "members": after["members"], "tasks": len(after["tasks"]),
                                 "runs": len(after["runs"]), "workers": len(after["workers"])}, now)
            self.summary = after
            self._checkpoint()  # first: a crash before the line leaves no baseline rather than two
            self._append([entry])
            return [entry]
        before = self.summary
        events = changes.diff(before, after, journal=journal, gone=gone, parse_time=parse_time)
        if not events:
            return []
        entries = []
        for e in events:
            self.seq += 1
            entries.append(self._stamp(e, now))
        self._append(entries)
        self.summary = changes.apply(before, entries, at=now, runs_now=after["runs"])
        if time.monotonic() - self._saved >= self.checkpoint_every:
            self._checkpoint()
        return entries

    def note(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Append an entry about the recorder itself (`recorder`: started, took over)."""
        self.seq += 1
        entry = self._stamp({"kind": kind, **fields}, self.clock())
        self._append([entry])
        if self.summary is not None:
            self._checkpoint()
        return entry

    def _stamp(self, event: Mapping[str, Any], now: float) -> dict[str, Any]:
        return {"v": changes.VERSION, "seq": self.seq, "id": f"h{self.seq}", "at": iso(now, ms=True),
                "ts": round(now, 3), **event}

    def _append(self, entries: list[dict[str, Any]]) -> None:
        _rotate(self.tree, self.rotate_bytes)
        self.tree.append(HISTORY_REL, b"".join(_line(e) for e in entries))

    def _checkpoint(self) -> None:
        self._saved = time.monotonic()
        data = json.dumps({"v": changes.VERSION, "seq": self.seq, "summary": self.summary},
                          ensure_ascii=False, allow_nan=False).encode()
        with self.tree.parent(CHECKPOINT_REL, create=True) as (dfd, name):
            tmp = stage(dfd, name, data)
            try:
                os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise


# -- driving it from a watcher -------------------------------------------------------------------------
def rp1_runs(feed: Any, before: Mapping[str, str] | None) -> dict[str, str]:
    """The status of the project's newest runs, and of older ones last seen not finished."""
    source = getattr(feed, "_rp1_source", None)
    if source is None:
        return {}
    try:
        page = source.feed(limit=RUNS_KEPT)
    except Exception:  # noqa: BLE001 - an rp1 database that cannot be read records no run change
        return dict(before or {})
    if not source.state.ok:
        return dict(before or {})
    runs = {r.run.id: r.status for r in page.runs}
    for rid, status in (before or {}).items():
        if rid not in runs and status not in changes.TERMINAL_RUNS:
            runs[rid] = status
    return runs


def observe_feed(recorder: Recorder, feed: Any, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Record the change a new snapshot document shows (`feed`: the `SnapshotFeed` that built it)."""
    from rcs_tui.state.journal import read_journal
    from rcs_tui.state.metrics import parse_time

    world = feed.world
    if world is None:
        return []
    before_runs = (recorder.summary or {}).get("runs")
    summary, gone = summarize(world, doc, rp1_runs(feed, before_runs), recorder.scopes)
    known = (recorder.summary or {}).get("members") or {}
    # the journal only explains members leaving or coming back: not read while the set of members stays
    journal = read_journal(recorder.root) if known.keys() != summary["members"].keys() else []
    return recorder.observe(summary, gone, journal, parse_time)


@contextlib.contextmanager
def _held(lock: RecorderLock) -> Iterator[None]:
    try:
        yield
    finally:
        lock.release()


async def run_recorder(root: Path, *, session_id: str | None = None, rp1_db: Path | None = None,
                       clock: Callable[[], float] = time.time, retry_s: float = RETRY_S, poll: bool = False,
                       actor: str = "", on_status: Callable[[str], None] | None = None) -> None:
    """Record this project for as long as it runs: wait for the lock (trying every `retry_s` seconds), then
    follow the project and record each change. `on_status` hears `standby` and `recording`."""
    from rcs_tui.project.feed import SnapshotFeed, follow_documents

    lock = RecorderLock(Path(root))
    told = False
    while not await asyncio.to_thread(lock.acquire, actor):
        if on_status is not None and not told:
            on_status("standby")
            told = True
        await asyncio.sleep(retry_s)
    with _held(lock):
        if on_status is not None:
            on_status("recording")
        recorder = Recorder(Path(root), clock=clock)
        await asyncio.to_thread(recorder.start)
        if recorder.summary is not None:
            await asyncio.to_thread(recorder.note, "recorder", event="started", pid=os.getpid(), actor=actor)
        feed = SnapshotFeed(Path(root), session_id=session_id, rp1_db=rp1_db, clock=clock, summary=True,
                            scopes=False)
        async for doc in follow_documents(feed, poll=poll):
            await asyncio.to_thread(observe_feed, recorder, feed, doc)


class RecorderTap:
    """The recorder riding on documents a face builds anyway (the fleet's local projects): it takes the lock
    when it is free (trying at most every `retry_s` seconds) and, while it holds it, records each full
    document's changes. `close()` gives the lock back. Call `observe` off the event loop (it reads and writes)."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time, retry_s: float = RETRY_S,
                 actor: str = "") -> None:
        self.root = Path(root)
        self.lock = RecorderLock(self.root)
        self.clock = clock
        self.retry_s = retry_s
        self.actor = actor
        self.recorder: Recorder | None = None
        self._tried = -1e18

    def observe(self, feed: Any, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
        if doc.get("partial"):
            return []
        if self.recorder is None:
            now = time.monotonic()
            if now - self._tried < self.retry_s:
                return []
            self._tried = now
            if not self.lock.acquire(self.actor):
                return []
            self.recorder = Recorder(self.root, clock=self.clock)
            self.recorder.start()
            if self.recorder.summary is not None:
                self.recorder.note("recorder", event="started", pid=os.getpid(), actor=self.actor)
        return observe_feed(self.recorder, feed, doc)

    def close(self) -> None:
        self.lock.release()
        self.recorder = None
