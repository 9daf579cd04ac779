"""Column discovery for rp1 databases of any schema version (6 to 17 seen, later tolerated).

Nothing here assumes a column exists: the reader selects what `PRAGMA table_info` reports and
fills the rest with NULL, so an older or newer database reads the same way.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

REQUIRED_TABLES = ("runs", "events")

# What the reader would like from each table; absent ones come back as NULL.
RUN_COLUMNS = ("id", "flow", "feature_id", "project_path", "project_id", "name", "harness",
               "status", "created_at", "updated_at")
EVENT_COLUMNS = ("id", "run_id", "type", "step", "unit", "data", "parent_step_id", "created_at")
ARTIFACT_COLUMNS = ("id", "doc_id", "run_id", "path", "type", "storage_root", "feature", "step",
                    "subflow", "created_at")


@dataclass(frozen=True)
class Schema:
    """Tables and their columns as found, plus `schema_version` when the table holds one."""

    tables: dict[str, tuple[str, ...]]
    version: int | None

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.tables.get(table)
        return cols is not None and (column is None or column in cols)

    @property
    def missing_tables(self) -> tuple[str, ...]:
        return tuple(t for t in REQUIRED_TABLES if t not in self.tables)

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
    return Schema(tables, version)
