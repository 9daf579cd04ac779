"""Keyed DataTable refresh: update cells in place, rebuild only when the rows change, keep the cursor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

Row = tuple[str, Sequence[str | Text]]


@dataclass(frozen=True)
class Column:
    """A table column; when the table is too narrow, columns with the lowest `keep` go first; when it is
    wide, a column with `grow` takes up to that many more cells (so ids and names show whole)."""

    label: str
    width: int
    keep: int = 0
    grow: int = 0


def fit_columns(columns: Sequence[Column], width: int) -> tuple[Column, ...]:
    """The columns that fit `width` cells (each takes its width plus 2 of padding; 1 for the scrollbar),
    dropping the least important ones (lowest `keep`, the rightmost first among equals)."""
    shown = list(columns)
    while len(shown) > 1 and sum(c.width + 2 for c in shown) > width - 1:
        shown.remove(min(reversed(shown), key=lambda c: c.keep))
    return tuple(shown)


def grown_widths(shown: Sequence[Column], width: int) -> list[int]:
    """Each shown column's width once the spare cells of `width` are shared among the growing ones
    (in proportion to how much each may grow, never past it)."""
    spare = width - 1 - sum(c.width + 2 for c in shown)
    total = sum(c.grow for c in shown)
    if spare <= 0 or total == 0:
        return [c.width for c in shown]
    return [c.width + min(c.grow, spare * c.grow // total) for c in shown]


def set_columns(table: DataTable, columns: Sequence[Column], width: int) -> tuple[Column, ...]:
    """Show the columns of `columns` that fit `width`, grown into the spare width; rebuilds the table
    (keeping its cursor) when they change."""
    shown = fit_columns(columns, width)
    widths = grown_widths(shown, width)
    current = [(str(k.value), c.width) for k, c in table.columns.items()]
    if current != [(c.label, w) for c, w in zip(shown, widths, strict=True)]:
        selected = selected_key(table)
        table.clear(columns=True)
        for c, w in zip(shown, widths, strict=True):
            table.add_column(c.label, width=w, key=c.label)
        table._fit_selected = selected  # type: ignore[attr-defined]  # restored by the next sync_rows
    return shown


def column_width(table: DataTable, label: str) -> int | None:
    """The width a column has now (None when it is not shown)."""
    for key, column in table.columns.items():
        if str(key.value) == label:
            return column.width
    return None


def clip_cell(value: str | Text, width: int) -> str | Text:
    """A cell cut to its column with an ellipsis, never silently cropped mid-word by the table."""
    if width <= 0:
        return value
    if isinstance(value, Text):
        if value.cell_len <= width:
            return value
        clipped = value.copy()
        clipped.truncate(width, overflow="ellipsis")
        return clipped
    return value if len(value) <= width else value[: width - 1] + "…"


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


def sync_rows(table: DataTable, rows: list[Row], group: Callable[[str], object] | None = None) -> None:
    """Make `table` show `rows` (key, cells) without clear() when only cell values changed.

    A row given as the very object synced last time (views keep the rows of what did not change) is
    skipped without looking at its cells, so redrawing a view whose data did not change costs a pass
    over the keys, not over every cell. When the selected row is gone (cleared, filtered out), the
    cursor moves to the row that followed it (or, at the end, the one before), preferring rows of the
    same `group`.
    """
    widths = [c.width for c in table.columns.values()]
    keys = [k for k, _ in rows]
    current = [str(r.value) for r in table.rows]
    pending = getattr(table, "_fit_selected", None)
    if pending is not None:
        table._fit_selected = None  # type: ignore[attr-defined]
    synced: dict[str, Row] = getattr(table, "_synced", {})
    columns = list(table.columns)
    if keys == current:
        for row in rows:
            key, cells = row
            if synced.get(key) is row:
                continue
            synced[key] = row
            for col, value in zip(columns, [clip_cell(v, w) for v, w in zip(cells, widths, strict=False)],
                                  strict=False):
                try:
                    shown = table.get_cell(key, col)
                    if shown is not value and shown != value:
                        table.update_cell(key, col, value)
                except (CellDoesNotExist, RowDoesNotExist):
                    pass
        return
    selected = pending if pending is not None and not current else selected_key(table)
    table.clear()
    table._synced = synced = {}  # type: ignore[attr-defined]
    for row in rows:
        key, cells = row
        table.add_row(*[clip_cell(v, w) for v, w in zip(cells, widths, strict=False)], key=key)
        synced[key] = row
    target = selected if selected in keys else successor(current, selected, set(keys), group)
    if target is not None:
        table.move_cursor(row=keys.index(target), animate=False)


def successor(old: list[str], gone: str | None, alive: set[str],
              group: Callable[[str], object] | None = None) -> str | None:
    """The row to select once `gone` disappeared from `old`: the next surviving one, else the previous,
    within `gone`'s group first."""
    if gone is None or gone not in old:
        return None
    at = old.index(gone)
    candidates = [k for k in (*old[at + 1:], *reversed(old[:at])) if k in alive]
    if group is not None:
        same = [k for k in candidates if group(k) == group(gone)]
        if same:
            return same[0]
    return candidates[0] if candidates else None


def selected_key(table: DataTable) -> str | None:
    if not table.row_count:
        return None
    try:
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
    except CellDoesNotExist:
        return None
