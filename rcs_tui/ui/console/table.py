"""The console's tables: the columns that fit a width (`column_fit`), rows cut to them, the filter."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from rcs_tui.ui.column_fit import Column, content_widths, fit
from rcs_tui.ui.linetable import SORT_MARK, LineTable

Row = tuple[str, Sequence[str | Text]]

__all__ = ["Column", "DrawnFrom", "Row", "matches", "project", "set_columns"]


def set_columns(table: LineTable, columns: Sequence[Column], width: int,
                rows: Sequence[Row] | None = None, content: list[int] | None = None) -> tuple[Column, ...]:
    """Show the columns of `columns` that fit `width` (`column_fit.fit`), each as wide as its content in
    `rows` allows (full rows: a cell for every column; an empty table: each column at its `width`; rows
    not known yet: as wide as each may grow), or as `content` says (each column's widest cell, when the
    caller knows it without measuring every row). The table keeps its rows and cursor; the caller hands it
    the rows cut to these columns (`project`) next."""
    if content is None:
        content = (None if rows is None else [c.width for c in columns] if not rows
                   else content_widths([cells for _, cells in rows], len(columns)))
    index, widths = fit(columns, content, width, SORT_MARK if table.sortable else 0)
    shown = tuple(columns[i] for i in index)
    table.set_columns([c.label for c in shown], widths)
    return shown


def project(rows: list[Row], columns: Sequence[Column], shown: Sequence[Column]) -> list[Row]:
    """Rows cut down to the shown columns (rows carry a cell for every column, in `columns` order)."""
    if len(shown) == len(columns):
        return rows
    index = [columns.index(c) for c in shown]
    return [(key, [cells[i] for i in index]) for key, cells in rows]


def matches(needle: str, *values: object) -> bool:
    """Whether every word of the filter `needle` occurs (case-insensitively) in the row's text."""
    hay = " ".join(v.plain if isinstance(v, Text) else str(v or "") for v in values).lower()
    return all(word in hay for word in needle.lower().split())


class DrawnFrom:
    """What a view last drew its rows from. Drawing again from the same inputs within the same second
    is skipped: a view switch, or a batch that changed another section, rebuilds nothing, while ages
    still move once a second. Objects (a World's sections) count as the same only when they are the
    very object drawn; plain values (filter text, width) when equal."""

    def __init__(self) -> None:
        self._inputs: tuple[object, ...] | None = None

    def same(self, now: float, *inputs: object) -> bool:
        key = (int(now), *inputs)
        last = self._inputs
        if last is not None and len(last) == len(key) and all(
                a is b or (isinstance(a, str | int | float | frozenset) and a == b)
                for a, b in zip(last, key, strict=True)):
            return True
        self._inputs = key
        return False
