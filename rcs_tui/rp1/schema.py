"""Column discovery for rp1 databases of any schema version (6 to 17 seen, later tolerated).

Nothing here assumes a column exists: the reader selects what `PRAGMA table_info` reports and
fills the rest with NULL, so an older or newer database reads the same way.
"""

from __future__ import annotations

import sqlite3

from rcs_tui.core.frozen import Frozen, set_field

REQUIRED_TABLES = ("runs", "events")

# What the reader would like from each table; absent ones come back as NULL.
RUN_COLUMNS = ("id", "flow", "feature_id", "project_path", "project_id", "name", "harness",
               "status", "created_at", "updated_at")
EVENT_COLUMNS = ("id", "run_id", "type", "step", "unit", "data", "parent_step_id", "created_at")
ARTIFACT_COLUMNS = ("id", "doc_id", "run_id", "path", "type", "storage_root", "feature", "step",
                    "subflow", "created_at")


class Schema(Frozen):
    """Tables and their columns as found, plus `schema_version` when the table holds one.
    `Frozen`, not a dataclass: the status-line commands that build it pay for every import at each start."""

    __slots__ = _compared = ("tables", "version", "event_indexes")
    tables: dict[str, tuple[str, ...]]
    version: int | None
    # Plain indexes of `events` (not partial, keys compared byte for byte), as their key columns.
    event_indexes: dict[str, tuple[str, ...]]

    def __init__(self, tables: dict[str, tuple[str, ...]], version: int | None,
                 event_indexes: dict[str, tuple[str, ...]] | None = None) -> None:
        set_field(self, "tables", tables)
        set_field(self, "version", version)
        set_field(self, "event_indexes", {} if event_indexes is None else event_indexes)

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.tables.get(table)
        return cols is not None and (column is None or column in cols)

    @property
    def missing_tables(self) -> tuple[str, ...]:
        return tuple(t for t in REQUIRED_TABLES if t not in self.tables)

    def events_index(self, *leading: str) -> str | None:
        """The name of an `events` index whose keys start with `leading` (None when there is none)."""
        for name, cols in self.event_indexes.items():
            if cols[:len(leading)] == leading:
                return name
        return None

    def select_list(self, table: str, wanted: tuple[str, ...], alias: str = "") -> str:
        """`a.col, NULL AS col2, ...` in `wanted` order, NULL for columns the table lacks."""
        cols = self.tables.get(table, ())
        prefix = f"{alias}." if alias else ""
        return ", ".join(f'{prefix}"{c}"' if c in cols else f'NULL AS "{c}"' for c in wanted)


def discover(conn: sqlite3.Connection) -> Schema:
    """Read table and column names (and the version number) without touching any data."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    tables: dict[str, tuple[str, ...]] = {}
    for name in names:
        if name.startswith("sqlite_"):
            continue
        quoted = name.replace('"', '""')
        tables[name] = tuple(r[1] for r in conn.execute(f'PRAGMA table_info("{quoted}")'))
    version = None
    if "version" in tables.get("schema_version", ()):
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        if row and isinstance(row[0], int):
            version = row[0]
    return Schema(tables, version, _event_indexes(conn) if "events" in tables else {})


def _event_indexes(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """Indexes of `events` a grouped read may walk: whole-table ones whose keys use BINARY collation."""
    out: dict[str, tuple[str, ...]] = {}
    for row in conn.execute("PRAGMA index_list(events)"):
        name, partial = row[1], row[4] if len(row) > 4 else 0
        if partial or not isinstance(name, str):
            continue
        quoted = name.replace('"', '""')
        keys = [r for r in conn.execute(f'PRAGMA index_xinfo("{quoted}")') if r[5]]  # key columns only
        if keys and all(r[2] is not None and r[4] == "BINARY" for r in keys):
            out[name] = tuple(r[2] for r in keys)
    return out
