"""The console's tables: which columns fit a width (and how wide they grow), rows cut to them, the filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from rcs_tui.ui.linetable import LineTable

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


def set_columns(table: LineTable, columns: Sequence[Column], width: int) -> tuple[Column, ...]:
    """Show the columns of `columns` that fit `width`, grown into the spare width. The table keeps its
    rows and cursor; the caller hands it the rows cut to these columns (`project`) next."""
    shown = fit_columns(columns, width)
    table.set_columns([c.label for c in shown], grown_widths(shown, width))
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
