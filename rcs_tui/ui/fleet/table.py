"""The fleet table's columns (fitted to the width by the rule every table uses) and each row's cells."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from rcs_tui.fleet.rows import Row
from rcs_tui.ui.column_fit import Column, cell_width, fit
from rcs_tui.ui.linetable import SORT_MARK

# As the terminal narrows, the columns with the lowest `keep` go first. The project name and why it needs
# you (the words behind ▲ attn, or why it cannot be read) go last, and every other column goes before either
# is cut; ACTIVE SET is cut before any column goes.
COLUMNS: tuple[Column, ...] = (
    Column("STATE", 6, 100), Column("PROJECT", 12, 99, grow=28, cut=98), Column("HOST", 9, 50, grow=8),
    Column("NEEDS YOU", 12, 97, grow=48, cut=96), Column("ACTIVE SET", 16, 90, grow=64),
    Column("HEALTH", 12, 72, grow=12), Column("DOC", 3, 30), Column("WORKERS", 9, 70, grow=4),
    Column("TASKS", 14, 20, grow=16), Column("RP1 W/F/R", 9, 40), Column("LAST", 5, 60),
)
CELL_OF = {"STATE": "state", "PROJECT": "project", "HOST": "host", "NEEDS YOU": "why", "ACTIVE SET": "active",
           "HEALTH": "health", "DOC": "doctor", "WORKERS": "workers", "TASKS": "tasks", "RP1 W/F/R": "rp1",
           "LAST": "activity"}
KEYS = tuple(CELL_OF[c.label] for c in COLUMNS)
STATE_STYLE = {"waiting": ("◆ wait", "bold magenta"), "failed": ("✖ fail", "bold red"),
               "trouble": ("▲ attn", "bold yellow"), "running": ("● run", "green"), "idle": ("· idle", "dim"),
               "error": ("⚠ n/a", "bold red"), "…": ("…", "dim")}


def columns_for(width: int, content: Sequence[int] | None = None,
                running: Sequence[int] | None = None) -> tuple[tuple[Column, ...], list[int]]:
    """The columns that fit `width` and their widths, given each column's widest cell (`content`, in
    `COLUMNS` order; None: no rows yet) and its widest cell that runs on over the empty columns after it
    (`running`: why a project cannot be read). A cell that runs on needs no width of its own while
    columns follow it; when none does, its column is fitted to it too."""
    index, widths = fit(COLUMNS, content, width, SORT_MARK)
    if content is not None and running is not None and any(running[index[-1]:]):
        index, widths = fit(COLUMNS, [max(pair) for pair in zip(content, running, strict=True)], width, SORT_MARK)
    return tuple(COLUMNS[i] for i in index), widths


def cell_widths(cells: dict[str, Text]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """How wide each column's cell of one row is, in `COLUMNS` order (kept with the row's cells): the
    cells in their columns, and a cell followed only by empty cells (why a project cannot be read), which
    runs on over their columns (up to what its column may grow to)."""
    widths = [cell_width(cells[key]) for key in KEYS]
    running = [0] * len(KEYS)
    last = max((i for i, w in enumerate(widths) if w), default=0)
    if last < len(KEYS) - 1:
        running[last] = min(widths[last], COLUMNS[last].width + COLUMNS[last].grow)
        widths[last] = 0
    return tuple(widths), tuple(running)


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
    if row.doc is None or row.error:  # why it cannot be read is why it needs you (and runs on across the row)
        out["why"], out["active"] = out["active"], Text("")
    else:
        out["why"] = Text(", ".join(row.needs_you()) if row.needs_you_now else "", style=style)
    return out


def shown_cells(cells: dict[str, Text], shown: tuple[Column, ...]) -> list[Text]:
    return [cells[CELL_OF[c.label]] for c in shown]
