"""The fleet table's columns (fitted to the width the way the console fits its tables) and each row's cells."""

from __future__ import annotations

from rich.text import Text

from rcs_tui.fleet.rows import Row
from rcs_tui.ui.console.table import Column, fit_columns, grown_widths

# When the terminal is narrow the columns with the lowest `keep` go first; ACTIVE SET (where a row's
# error also goes) takes most of the spare width.
COLUMNS: tuple[Column, ...] = (
    Column("STATE", 6, 100), Column("PROJECT", 12, 99, grow=12), Column("HOST", 9, 5, grow=8),
    Column("ACTIVE SET", 16, 98, grow=80), Column("HEALTH", 12, 2, grow=12), Column("DOC", 3, 6),
    Column("WORKERS", 9, 3, grow=4), Column("TASKS", 14, 1, grow=16), Column("RP1 W/F/R", 9, 4), Column("LAST", 5, 7),
)
CELL_OF = {"STATE": "state", "PROJECT": "project", "HOST": "host", "ACTIVE SET": "active", "HEALTH": "health",
           "DOC": "doctor", "WORKERS": "workers", "TASKS": "tasks", "RP1 W/F/R": "rp1", "LAST": "activity"}
STATE_STYLE = {"waiting": ("◆ wait", "bold magenta"), "failed": ("✖ fail", "bold red"),
               "trouble": ("▲ attn", "bold yellow"), "running": ("● run", "green"), "idle": ("· idle", "dim"),
               "error": ("⚠ n/a", "bold red"), "…": ("…", "dim")}


def columns_for(width: int) -> tuple[tuple[Column, ...], list[int]]:
    """The columns that fit `width` and their widths."""
    shown = fit_columns(COLUMNS, width)
    return shown, grown_widths(shown, width)


def row_cells(row: Row, cells: dict[str, str | Text]) -> dict[str, Text]:
    """Every column's styled cell of one row, from its plain `Row.cells` (the table cuts them to width)."""
    state = "…" if row.doc is None and not row.error else row.rank_name
    label, style = STATE_STYLE.get(state, (state, ""))
    out: dict[str, Text] = {}
    for key, value in cells.items():
        if isinstance(value, Text):
            out[key] = value
        elif key == "active":
            text = f"[read-only] {value}" if row.readonly_reason and row.doc is not None else value
            out[key] = Text(text, style="red" if row.doc is None or row.error else "")
        elif key == "project":
            out[key] = Text(value, style="bold")
        elif key == "doctor":
            out[key] = Text(value, style="yellow" if value not in ("", "—", "…") else "dim")
        elif key == "rp1":
            out[key] = Text(value, style="magenta" if value[:1] not in ("", "0") else "")
        else:
            out[key] = Text(value)
    out["state"] = Text(label, style=style)
    return out


def shown_cells(cells: dict[str, Text], shown: tuple[Column, ...]) -> list[Text]:
    return [cells[CELL_OF[c.label]] for c in shown]
