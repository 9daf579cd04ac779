"""Keyed DataTable refresh: update cells in place, rebuild only when the rows change, keep the cursor."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

Row = tuple[str, Sequence[str | Text]]


def sync_rows(table: DataTable, rows: list[Row]) -> None:
    """Make `table` show `rows` (key, cells) without clear() when only cell values changed."""
    keys = [k for k, _ in rows]
    current = [str(r.value) for r in table.rows]
    columns = list(table.columns)
    if keys == current:
        for key, cells in rows:
            for col, value in zip(columns, cells, strict=False):
                try:
                    shown = table.get_cell(key, col)
                    if shown is not value and shown != value:
                        table.update_cell(key, col, value)
                except (CellDoesNotExist, RowDoesNotExist):
                    pass
        return
    selected = None
    if table.row_count and 0 <= table.cursor_row < table.row_count:
        try:
            selected = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        except CellDoesNotExist:
            selected = None
    table.clear()
    for key, cells in rows:
        table.add_row(*cells, key=key)
    if selected in keys:
        table.move_cursor(row=keys.index(selected), animate=False)


def selected_key(table: DataTable) -> str | None:
    if not table.row_count:
        return None
    try:
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
    except CellDoesNotExist:
        return None
