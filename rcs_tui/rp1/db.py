"""Read-only access to rp1's SQLite database, reporting problems as a status, never raising.

Opening rules (never write, never migrate, never create):
- a WAL database with no `-wal` file (no writer attached, fully checkpointed) is opened with
  `immutable=1`: SQLite then touches no file at all, not even to create `-wal`/`-shm`; a file change
  seen during the read triggers a retry;
- otherwise `mode=ro`: SQLite reads the WAL through its shared-memory index like any reader.
Each answer reads one database state: every read made inside `Rp1Db.snapshot` runs on one connection,
in one read transaction, closed when the block ends, so no reader lingers to keep the WAL alive.
"""

from __future__ import annotations

import os
import sqlite3
import time
from _thread import allocate_lock, get_ident
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import quote

from rcs_tui.core.frozen import Frozen, set_field
from rcs_tui.files.io import read_bounded
from rcs_tui.rp1.projection import Event, StatusRow, parse_data
from rcs_tui.rp1.schema import ARTIFACT_COLUMNS, EVENT_COLUMNS, RUN_COLUMNS, Schema, discover
from rcs_tui.rp1.status_read import cell_text as _s
from rcs_tui.rp1.status_read import deciding_rows

T = TypeVar("T")
SQLITE_MAGIC = b"SQLite format 3\x00"
PROJECT_ID_FILE = Path(".rp1") / "project_id"


def wal_of(db: str | os.PathLike[str]) -> str:
    """The path of the WAL of database file `db`: beside the file its path leads to (links resolved)."""
    return os.path.realpath(db) + "-wal"


def default_db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--db`, else `$RP1_DB`, else `~/.rp1/rp1.db`."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("RP1_DB")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".rp1" / "rp1.db"


class DbState(Frozen):
    """Outcome of the last read: `code` is ok|missing|busy|corrupt|no_schema|error.

    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("code", "message")
    code: str
    message: str | None

    def __init__(self, code: str, message: str | None = None) -> None:
        set_field(self, "code", code)
        set_field(self, "message", message)

    @property
    def ok(self) -> bool:
        return self.code == "ok"


OK = DbState("ok")


class Unavailable(Exception):
    """Internal: the database cannot be read right now; carries the status to show."""

    def __init__(self, state: DbState) -> None:
        super().__init__(state.message)
        self.state = state


class Scope(Frozen):
    """Which runs belong to "this project": by path, or by rp1's project id when both sides have it.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("project_path", "project_id")
    project_path: str
    project_id: str | None

    def __init__(self, project_path: str, project_id: str | None = None) -> None:
        set_field(self, "project_path", project_path)
        set_field(self, "project_id", project_id)


def project_scope(root: str | os.PathLike[str]) -> Scope:
    """Scope for a project root: its resolved path plus `<root>/.rp1/project_id` if readable."""
    root = Path(root).resolve()
    return Scope(str(root), project_id_at(root))


def project_id_at(root: Path) -> str | None:
    """The id rp1 gave the project at `root` (`.rp1/project_id`, one short line), None without one."""
    raw = read_bounded(root / PROJECT_ID_FILE, max_bytes=4096).raw
    text = raw.decode("utf-8", "replace").strip() if raw is not None else ""
    return text if text and len(text) <= 200 and "\n" not in text else None


class RunRow(NamedTuple):
    """A `runs` row as stored (its `status` is rp1's cache, shown only as `cached_status`).

    A named tuple: a feed over ten thousand runs builds ten thousand of these on every new process."""

    id: str
    flow: str
    feature_id: str | None
    project_path: str | None
    project_id: str | None
    name: str | None
    harness: str | None
    cached_status: str | None
    created_at: str | None
    updated_at: str | None
    last_event_id: int = 0


SETTLE_NS = 1_000_000_000  # a commit may still be publishing itself this long after the files' last write
# The connections this process has open on each database file, by (device, inode), with the header read
# when the first of them opened. Closing any descriptor of a file drops every lock the process holds on
# it (POSIX), so `Rp1Db` reads the header with a descriptor of its own only while no connection of this
# process is open on the file; meanwhile the header read then stands in (the file was a database, in
# the journal mode it had). Otherwise a read in one thread could let a writer commit under another's.
_FILES_LOCK = allocate_lock()
_OPEN_FILES: dict[tuple[int, int], list[Any]] = {}  # (device, inode) -> [connections open, header]


class Marks(NamedTuple):
    """Where the database stood when a run list was read: newest event id, newest run rowid, run count (`runs`),
    latest `runs.updated_at`, and two anchors: the run of that newest event and the id of the run at
    that rowid. The counts tell what was added since; the anchors tell it is still the same database
    (a copy written over the file keeps its inode, and a deleted newest run's rowid is given to the
    next run, keeping the counts)."""

    top: int
    rowid: int
    runs: int  # not `count`, which would shadow tuple.count
    latest: str
    top_run: str | None
    last_run: str | None


def _read_marks(conn: sqlite3.Connection, schema: Schema) -> Marks:
    """Where the database stands (`Marks`), read inside the caller's transaction.

    One aggregate per query: SQLite takes MAX(rowid) from the table's last leaf and counts rows with
    its b-tree count only when each stands alone; asked together with MAX(updated_at), all three cost
    a pass decoding every row (2.5 ms at 10 000 runs against 1 ms), on every refresh of a busy database.
    """
    top = int(conn.execute("SELECT MAX(id) FROM events").fetchone()[0] or 0)
    rowid = int(conn.execute("SELECT MAX(rowid) FROM runs").fetchone()[0] or 0)
    count = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    latest = (conn.execute("SELECT MAX(updated_at) FROM runs").fetchone()[0]
              if schema.has("runs", "updated_at") else "")
    return Marks(top, rowid, int(count or 0), _s(latest) or "", *_anchors(conn, top, rowid))


def _anchors(conn: sqlite3.Connection, top: int, rowid: int) -> tuple[str | None, str | None]:
    """The run of event `top` and the id of the run at `rowid` (None where there is none), by primary key."""
    event = conn.execute("SELECT run_id FROM events WHERE id = ?", (top,)).fetchone()
    run = conn.execute("SELECT id FROM runs WHERE rowid = ?", (rowid,)).fetchone()
    return (_s(event[0]) if event else None), (_s(run[0]) if run else None)


def _same_database(conn: sqlite3.Connection, marks: Marks) -> bool:
    """Whether the rows the anchors name are still there as they were."""
    return _anchors(conn, marks.top, marks.rowid) == (marks.top_run, marks.last_run)


def run_json(run: RunRow) -> dict[str, Any]:
    """A run row as the JSON output names its fields (rp1's `flow` is the workflow; `status` is its cache)."""
    return {"id": run.id, "workflow": run.flow, "feature_id": run.feature_id, "name": run.name,
            "project_path": run.project_path, "project_id": run.project_id, "harness": run.harness,
            "cached_status": run.cached_status, "created_at": run.created_at, "updated_at": run.updated_at}


class Artifact(Frozen):
    """An `artifacts` row (or an `artifact_registered` event's payload when the table lacks it).
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("path", "step", "type", "doc_id", "storage_root", "subflow", "created_at")
    path: str
    step: str | None
    type: str | None
    doc_id: str | None
    storage_root: str | None
    subflow: bool
    created_at: str | None

    def __init__(self, path: str, step: str | None, type: str | None, doc_id: str | None,  # noqa: A002
                 storage_root: str | None, subflow: bool, created_at: str | None) -> None:
        set_field(self, "path", path)
        set_field(self, "step", step)
        set_field(self, "type", type)
        set_field(self, "doc_id", doc_id)
        set_field(self, "storage_root", storage_root)
        set_field(self, "subflow", subflow)
        set_field(self, "created_at", created_at)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "step": self.step, "type": self.type, "doc_id": self.doc_id,
                "storage_root": self.storage_root, "subflow": self.subflow, "created_at": self.created_at}


class Snapshot:
    """One read transaction on one connection, held for the reads of one answer (`Rp1Db.snapshot`).

    `again` is True when the answer must be read again: the file changed under an `immutable` read, or
    the database was busy."""

    __slots__ = ("busy", "close", "conn", "failed", "immutable", "schema", "before", "torn")

    def __init__(self) -> None:
        self.conn: sqlite3.Connection | None = None
        self.schema: Schema | None = None
        self.immutable = False
        self.before: tuple[Any, ...] = ()
        self.close: Callable[[], None] | None = None
        self.failed = self.busy = self.torn = False

    @property
    def again(self) -> bool:
        return self.torn or self.busy


def _classify(exc: sqlite3.Error, path: Path) -> DbState:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return DbState("busy", "rp1: database busy, retrying")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return DbState("corrupt", f"rp1: database corrupt or not SQLite at {path} ({exc})")
    if "no such table" in text or "no such column" in text:
        return DbState("no_schema", f"rp1: unexpected schema at {path} ({exc})")
    return DbState("error", f"rp1: cannot read database at {path} ({exc})")


class Rp1Db:
    """The rp1 database, read-only. Every public method returns data and sets `state`."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, busy_timeout: float = 0.1,
                 retries: int = 3) -> None:
        self.path = default_db_path(path)
        self.busy_timeout = busy_timeout
        self.retries = retries
        self.state: DbState = OK
        self.schema: Schema | None = None
        self._schema_sig: tuple[Any, ...] | None = None
        self._snapshots: dict[int, Snapshot] = {}  # thread -> the read transaction its reads join

    @property
    def wal_path(self) -> Path:
        """The WAL SQLite keeps beside the database file itself: beside the file a symlink leads to, as it
        is now (a WAL looked for beside the link is never there, and the database would be read as if
        every commit in it had not happened)."""
        return Path(wal_of(self.path))

    # -- change detection -------------------------------------------------------------------
    def signature(self) -> tuple[Any, ...]:
        """Cheap fingerprint of the files (stat only): changes whenever a commit lands. The database file's
        change time too (a same-size commit whose modification time a tool put back moves only that); not
        the WAL's, which SQLite moves without a commit when a reader closes."""
        out: list[Any] = []
        for p in (self.path, self.wal_path):
            try:
                st = p.stat()
                out.append((st.st_ino, st.st_size, st.st_mtime_ns) if p is not self.path
                           else (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def settled(self, sig: tuple[Any, ...]) -> bool:
        """Whether `sig`, taken before a read, can stand for what that read saw until the files change.

        Not while the WAL was written within `SETTLE_NS`: a commit appends to the WAL (its size and
        mtime change) and only then publishes itself in the shared-memory index, which changes no file's
        stat, so a read in between sees the older snapshot under the newer signature. Such a read is kept
        only until the next call, which looks at the database again (a range read of what is new).
        Without a WAL a writer changes the file under its exclusive lock, which no read gets past before
        the commit, so the file's stat stands for what a read saw.
        """
        wal = sig[1] if len(sig) > 1 else None
        return wal is None or time.time_ns() - wal[2] > SETTLE_NS

    # -- connections ------------------------------------------------------------------------
    def _uri(self, immutable: bool) -> str:
        target = quote(str(self.path.resolve()), safe="/")
        return f"file:{target}?mode=ro" + ("&immutable=1" if immutable else "")

    def _header(self) -> bytes:
        got = read_bounded(self.path, max_bytes=100, part="head")
        if not got.exists:
            raise Unavailable(DbState("missing", f"rp1: no database at {self.path}"))
        if got.kind == "directory":
            raise Unavailable(DbState("error", f"rp1: {self.path} is a directory, not a database"))
        if got.raw is None:
            raise Unavailable(DbState("error", f"rp1: cannot read {self.path}: {got.error}"))
        return got.raw

    def _claim(self) -> tuple[tuple[int, int] | None, bytes]:
        """The file's identity and header, counting a connection about to open on it (`_OPEN_FILES`)."""
        try:
            st = os.stat(self.path)
            key: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except OSError:
            key = None  # no file: `_header` says what is there instead
        with _FILES_LOCK:
            held = _OPEN_FILES.get(key) if key is not None else None
            if held is not None:
                held[0] += 1
                return key, held[1]
            header = self._header()
            if key is not None:
                _OPEN_FILES[key] = [1, header]
            return key, header

    @staticmethod
    def _release(key: tuple[int, int] | None) -> None:
        if key is None:
            return
        with _FILES_LOCK:
            held = _OPEN_FILES.get(key)
            if held is not None:
                held[0] -= 1
                if not held[0]:
                    del _OPEN_FILES[key]

    @contextmanager
    def _connect(self) -> Iterator[tuple[sqlite3.Connection, bool]]:
        key, header = self._claim()
        try:
            if not header:
                raise Unavailable(DbState("no_schema", f"rp1: empty database file at {self.path} (no rp1 tables)"))
            if not header.startswith(SQLITE_MAGIC) or len(header) < 100:
                raise Unavailable(DbState("corrupt", f"rp1: {self.path} is not an SQLite database (corrupt?)"))
            immutable = header[18] == 2 and not self.wal_path.exists()
            with self._open(immutable) as conn:
                yield conn, immutable
        finally:
            self._release(key)

    @contextmanager
    def _open(self, immutable: bool) -> Iterator[sqlite3.Connection]:
        """A read-only connection to the database, `immutable` or not, opened by SQLite alone: never
        through a descriptor of ours, whose closing would drop this process's locks (see `_OPEN_FILES`).
        SQLite's own opens and closes keep them."""
        conn = sqlite3.connect(self._uri(immutable), uri=True, timeout=self.busy_timeout,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA query_only = 1")
            yield conn
        finally:
            conn.close()

    def _schema_for(self, conn: sqlite3.Connection) -> Schema:
        sig = self.signature()
        if self.schema is None or sig[0] != (self._schema_sig or (None,))[0]:
            self.schema = discover(conn)
            self._schema_sig = sig
        schema = self.schema
        if schema.missing_tables:
            raise Unavailable(DbState(
                "no_schema", f"rp1: no rp1 tables ({', '.join(schema.missing_tables)}) in {self.path}"))
        return schema

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """Every read made in the block (by this thread) sees one database state.

        The first read opens the connection and begins the read transaction (under WAL, its first
        SELECT pins the snapshot); the later reads run in it; the block's end closes it. Opening at the
        first read, not at the block's start, keeps a signature taken before that read older than what
        it reads. A read that fails leaves the rest of the block's reads failing too (no second state).
        Nested blocks join the outer one.
        """
        me = get_ident()
        if me in self._snapshots:
            yield self._snapshots[me]
            return
        snap = self._snapshots[me] = Snapshot()
        try:
            yield snap
        finally:
            del self._snapshots[me]
            if snap.close is not None:
                snap.close()
                if snap.immutable and (self.signature()[0] != snap.before[0] or self.wal_path.exists()):
                    self.schema = None
                    snap.torn = True  # a writer touched the file mid-read: what was read may be torn

    def read(self, fn: Callable[[sqlite3.Connection, Schema], T], default: T) -> T:
        """Run `fn(conn, schema)` in the read transaction of the current `snapshot`, else in one of its
        own; on any problem set `state` and return `default`."""
        snap = self._snapshots.get(get_ident())
        if snap is not None:
            return self._read_in(snap, fn, default)
        result = default
        for _attempt in range(self.retries):
            with self.snapshot() as snap:
                result = self._read_in(snap, fn, default)
            if not snap.again:
                return result
        if self.state.ok:
            self.state = DbState("busy", "rp1: database busy, retrying")
        return default

    def _fail(self, snap: Snapshot, state: DbState) -> None:
        self.state = state
        snap.failed = True
        snap.busy = state.code == "busy"

    def _read_in(self, snap: Snapshot, fn: Callable[[sqlite3.Connection, Schema], T], default: T) -> T:
        """`fn` in `snap`'s transaction, begun here by the block's first read."""
        if snap.failed:
            return default  # `state` already says why
        try:
            if snap.conn is None:
                with ExitStack() as stack:
                    snap.before = self.signature()
                    conn, snap.immutable = stack.enter_context(self._connect())
                    conn.execute("BEGIN")
                    snap.schema = self._schema_for(conn)
                    result = fn(conn, snap.schema)
                    snap.conn, snap.close = conn, stack.pop_all().close  # held until the block ends
            else:
                assert snap.schema is not None
                result = fn(snap.conn, snap.schema)
        except Unavailable as exc:
            self._fail(snap, exc.state)
            return default
        except sqlite3.Error as exc:
            self.schema = None
            self._fail(snap, _classify(exc, self.path))
            return default
        self.state = OK
        return result

    # -- queries ----------------------------------------------------------------------------
    @staticmethod
    def _scope_sql(schema: Schema, scope: Scope | None) -> tuple[str, list[Any]]:
        if scope is None:
            return "", []
        if scope.project_id and schema.has("runs", "project_id"):
            return " WHERE (r.project_path = ? OR r.project_id = ?)", [scope.project_path, scope.project_id]
        return " WHERE r.project_path = ?", [scope.project_path]

    @classmethod
    def _events_of(cls, schema: Schema, scope: Scope | None, run_ids: Sequence[str] | None) -> tuple[str, list[Any]]:
        """The condition (`AND …`) and parameters that keep the events of these runs, else of the runs in scope."""
        if run_ids is not None:
            return f" AND run_id IN ({','.join('?' for _ in run_ids)})", list(run_ids)
        where, params = cls._scope_sql(schema, scope)
        return (f" AND run_id IN (SELECT r.id FROM runs r{where})" if scope is not None else ""), params

    @staticmethod
    def _run_row(row: Sequence[Any]) -> RunRow:
        (rid, flow, *cells, last) = row
        if all(c.__class__ is str or c is None for c in cells):  # the usual row: every cell text already
            return RunRow._make((_s(rid) or "", _s(flow) or "unknown", *cells, int(last or 0)))
        return RunRow._make((_s(rid) or "", _s(flow) or "unknown", *map(_s, cells), int(last or 0)))

    @classmethod
    def _run_rows(cls, raw: list[Any]) -> list[RunRow]:
        """`_run_row` of every row. When every cell is what the usual row holds (text ids and non-empty
        workflows, text or null elsewhere, an integer newest event id), checked a column at a time, the
        rows are taken as they are: a first read of every run builds tens of thousands of them, and a
        call per row cost more than the query."""
        if raw:
            cols = list(zip(*raw, strict=True))
            if (len(cols) == len(RunRow._fields) and set(map(type, cols[0])) <= {str}
                    and set(map(type, cols[1])) <= {str} and all(cols[1])
                    and all(set(map(type, c)) <= {str, type(None)} for c in cols[2:-1])
                    and set(map(type, cols[-1])) <= {int}):
                return list(map(tuple.__new__, repeat(RunRow), raw))
        return [cls._run_row(r) for r in raw]

    def runs(self, scope: Scope | None = None) -> list[RunRow]:
        """Runs in scope with the id of their newest event, newest activity first."""
        def q(conn: sqlite3.Connection, schema: Schema) -> list[RunRow]:
            where, params = self._scope_sql(schema, scope)
            sql = (f"SELECT {schema.select_list('runs', RUN_COLUMNS, 'r')},"
                   f" (SELECT MAX(e.id) FROM events e WHERE e.run_id = r.id) AS last_event_id"
                   f" FROM runs r{where}")
            rows = self._run_rows(conn.execute(sql, params).fetchall())
            rows.sort(key=lambda r: (r.last_event_id, r.created_at or ""), reverse=True)
            return rows
        return self.read(q, [])

    def runs_marks(self) -> Marks | None:
        """Where the database stands now (`Marks`; None when unreadable)."""
        return self.read(_read_marks, None)

    def describes(self, marks: Marks) -> bool | None:
        """Whether `marks` were taken of this database (its anchors still hold); None when unreadable."""
        return self.read(lambda conn, _schema: _same_database(conn, marks), None)

    def runs_since(self, scope: Scope | None, marks: Marks) -> tuple[list[RunRow], Marks, set[str]] | None:
        """Runs in scope that have events newer than `marks`, were updated since (`updated_at` later than
        the newest kept) or were inserted since, the new marks, and the ids of every run that changed, in
        scope or not (one whose update took it out of the scope leaves a kept list by that).

        None when `marks` are not of this database any more (`describes`), or the `runs` table changed in
        another way (a row deleted; a row changed without a later `updated_at` while no event or run was
        added): read all runs then. Costs a primary-key range scan of the new events, however large the
        database, plus one pass over `runs.updated_at` when it moved.
        """
        def q(conn: sqlite3.Connection, schema: Schema) -> tuple[list[RunRow], Marks, set[str]] | None:
            top, rowid, count, latest = marks.top, marks.rowid, marks.runs, marks.latest
            if not _same_database(conn, marks):
                return None
            now = _read_marks(conn, schema)
            new_rowid, new_count, new_latest = now.rowid, now.runs, now.latest
            added = new_count - count
            if added < 0 or new_rowid - rowid != added:
                return None  # deleted or replaced rows
            # A rowid range scan (DISTINCT here would walk the whole run_id index instead).
            touched = list(dict.fromkeys(_s(r[0]) or "" for r in conn.execute(
                "SELECT run_id FROM events WHERE id > ? ORDER BY id", (top,))))
            new_top = now.top
            if new_top < top:
                return None  # fewer events than when the marks were taken: not the database they describe
            if new_latest != latest:
                # Rows rp1 updated (its `updated_at` moved past the newest one kept) are read again too.
                updated_ids = [_s(r[0]) or "" for r in conn.execute(
                    "SELECT id FROM runs WHERE updated_at > ?", (latest,))] if schema.has("runs", "updated_at") else []
                if not updated_ids and not touched and not added:
                    return None  # a row changed in a way its `updated_at` does not show: read every run
                touched = list(dict.fromkeys([*touched, *updated_ids]))
            where, params = self._scope_sql(schema, scope)
            rows: list[RunRow] = []
            base = (f"SELECT {schema.select_list('runs', RUN_COLUMNS, 'r')},"
                    f" (SELECT MAX(e.id) FROM events e WHERE e.run_id = r.id) AS last_event_id FROM runs r")
            extra = f" AND ({where[len(' WHERE '):]})" if where else ""
            for i in range(0, len(touched), 500):
                chunk = touched[i:i + 500]
                marks_sql = ",".join("?" for _ in chunk)
                rows += [self._run_row(r) for r in conn.execute(f"{base} WHERE r.id IN ({marks_sql}){extra}",
                                                                [*chunk, *params])]
            if added:
                rows += [self._run_row(r) for r in conn.execute(f"{base} WHERE r.rowid > ?{extra}", [rowid, *params])]
            return rows, now, set(touched)
        return self.read(q, None)

    def runs_after(self, scope: Scope | None, marks: Marks, known: dict[str, tuple[int, Any]]
                   ) -> tuple[list[RunRow], Marks, set[str]] | None:
        """Runs in scope with their newest event id, when `known` gives each run's newest event id as of
        `marks` (the database's newest event then): only the events after it are read (a primary-key
        range scan), not every run's newest event. Also the marks now and the runs that moved.

        None when the database's newest event is older than then, or `marks` are not of this database
        (`describes`): not the database `known` came from.
        """
        as_of = marks.top

        def q(conn: sqlite3.Connection, schema: Schema) -> tuple[list[RunRow], Marks, set[str]] | None:
            now = _read_marks(conn, schema)
            if now.top < as_of or not _same_database(conn, marks):
                return None
            # A rowid range scan in id order, the newest id per run kept last (GROUP BY would walk the
            # whole run_id index instead).
            moved = {_s(run) or "": int(eid) for run, eid in conn.execute(
                "SELECT run_id, id FROM events WHERE id > ? ORDER BY id", (as_of,))}
            where, params = self._scope_sql(schema, scope)
            cells = conn.execute(f"SELECT {schema.select_list('runs', RUN_COLUMNS, 'r')}, NULL FROM runs r{where}",
                                 params).fetchall()
            last: dict[str, int] = {}
            unknown: list[str] = []
            for row in cells:
                rid = _s(row[0]) or ""
                if rid in moved:
                    last[rid] = moved[rid]
                elif rid in known:
                    last[rid] = known[rid][0]
                else:
                    unknown.append(rid)
            for i in range(0, len(unknown), 500):
                chunk = unknown[i:i + 500]
                slots = ",".join("?" for _ in chunk)
                last.update((_s(r) or "", int(m or 0)) for r, m in conn.execute(
                    f"SELECT run_id, MAX(id) FROM events WHERE run_id IN ({slots}) GROUP BY run_id", chunk))
            rows = [self._run_row((*row[:-1], last.get(_s(row[0]) or "", 0))) for row in cells]
            rows.sort(key=lambda r: (r.last_event_id, r.created_at or ""), reverse=True)
            return rows, now, set(moved)
        return self.read(q, None)

    def runs_by_id(self, run_ids: Sequence[str]) -> dict[str, RunRow] | None:
        """These runs' rows as they are now, by primary key (None when unreadable; a run no longer there is
        absent). Their newest event id is left 0: the caller keeps the one it ordered them by."""
        def q(conn: sqlite3.Connection, schema: Schema) -> dict[str, RunRow]:
            cols = f"SELECT {schema.select_list('runs', RUN_COLUMNS, 'r')}, 0 FROM runs r WHERE r.id IN "
            out: dict[str, RunRow] = {}
            ids = list(run_ids)
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                for row in conn.execute(cols + f"({','.join('?' for _ in chunk)})", chunk):
                    run = self._run_row(row)
                    out[run.id] = run
            return out
        return self.read(q, None)

    def run(self, run_id: str) -> RunRow | None:
        """One run by id, or by a unique id prefix (at least 4 characters)."""
        def q(conn: sqlite3.Connection, schema: Schema) -> RunRow | None:
            cols = (f"SELECT {schema.select_list('runs', RUN_COLUMNS, 'r')},"
                    f" (SELECT MAX(e.id) FROM events e WHERE e.run_id = r.id) FROM runs r")
            row = conn.execute(cols + " WHERE r.id = ?", (run_id,)).fetchone()
            if row is None and len(run_id) >= 4:
                found = conn.execute(cols + " WHERE r.id >= ? AND r.id < ? LIMIT 2",
                                     (run_id, run_id + "\U0010ffff")).fetchall()
                row = found[0] if len(found) == 1 else None
            return self._run_row(row) if row else None
        return self.read(q, None)

    @staticmethod
    def _event(row: Sequence[Any]) -> Event:
        (eid, run_id, type_, step, unit, data, parent, created) = row
        return Event(int(eid), _s(run_id) or "", _s(type_) or "", _s(step) or None, _s(unit) or None,
                     parse_data(data), _s(created) or "", _s(parent))

    def events(self, run_ids: Sequence[str]) -> dict[str, list[Event]]:
        """All events of these runs (via the `events(run_id)` index), in id order (rp1's write order)."""
        def q(conn: sqlite3.Connection, schema: Schema) -> dict[str, list[Event]]:
            out: dict[str, list[Event]] = {rid: [] for rid in run_ids}
            cols = schema.select_list("events", EVENT_COLUMNS)
            ids = list(run_ids)
            for i in range(0, len(ids), 500):
                chunk = ids[i:i + 500]
                marks = ",".join("?" for _ in chunk)
                for row in conn.execute(f"SELECT {cols} FROM events WHERE run_id IN ({marks})", chunk):
                    ev = self._event(row)
                    out.setdefault(ev.run_id, []).append(ev)
            for evs in out.values():
                evs.sort(key=lambda e: e.sort_key)
            return out
        return self.read(q, {})

    def events_after(self, after: dict[str, int]) -> dict[str, list[Event]]:
        """For each run, its events with an id above the one given, in id order: what a kept event list
        lacks (one seek of the `events(run_id)` index per run, however old the kept list)."""
        def q(conn: sqlite3.Connection, schema: Schema) -> dict[str, list[Event]]:
            cols = schema.select_list("events", EVENT_COLUMNS)
            sql = f"SELECT {cols} FROM events WHERE run_id = ? AND id > ? ORDER BY id"
            return {rid: [self._event(r) for r in conn.execute(sql, (rid, last))] for rid, last in after.items()}
        return self.read(q, {})

    def status_rows(self, scope: Scope | None = None, run_ids: Sequence[str] | None = None,
                    ) -> tuple[dict[str, list[StatusRow]], set[str]]:
        """Per run, the few rows its status depends on, without reading every event in Python.

        `project` over these rows gives the status it gives over all of the run's rows; runs this
        cannot answer exactly come back in the second set (project those from full events).
        `run_ids`: only these runs' rows (a few runs that moved), else every run's in scope.
        """
        def q(conn: sqlite3.Connection, schema: Schema) -> tuple[dict[str, list[StatusRow]], set[str]]:
            if not (schema.has("events", "data") and schema.has("events", "created_at")):
                return {}, {_s(r[0]) or "" for r in conn.execute("SELECT DISTINCT run_id FROM events")}
            in_scope, params = self._events_of(schema, scope, run_ids)
            return deciding_rows(conn, schema, in_scope, params)
        nothing: tuple[dict[str, list[StatusRow]], set[str]] = ({}, set())
        return self.read(q, nothing)

    def artifacts(self, run_id: str) -> list[Artifact]:
        """Rows of the `artifacts` table for a run (empty when the table is absent)."""
        def q(conn: sqlite3.Connection, schema: Schema) -> list[Artifact]:
            if not schema.has("artifacts", "run_id"):
                return []
            cols = schema.select_list("artifacts", ARTIFACT_COLUMNS)
            out = []
            for row in conn.execute(f"SELECT {cols} FROM artifacts WHERE run_id = ? ORDER BY id", (run_id,)):
                (_id, doc_id, _run, path, type_, root, _feature, step, subflow, created) = row
                out.append(Artifact(_s(path) or "", _s(step), _s(type_), _s(doc_id), _s(root),
                                    bool(subflow), _s(created)))
            return out
        return self.read(q, [])

    def events_since(self, cursor: int, limit: int = 1000) -> list[Event]:
        """Events with `id > cursor` in id order: the live-tail query (primary-key range scan)."""
        def q(conn: sqlite3.Connection, schema: Schema) -> list[Event]:
            cols = schema.select_list("events", EVENT_COLUMNS)
            rows = conn.execute(f"SELECT {cols} FROM events WHERE id > ? ORDER BY id LIMIT ?", (cursor, limit))
            return [self._event(r) for r in rows]
        return self.read(q, [])

    def max_event_id(self) -> int:
        return self.read(lambda conn, _s: int(conn.execute("SELECT MAX(id) FROM events").fetchone()[0] or 0), 0)
