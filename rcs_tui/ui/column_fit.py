"""Which columns of a table show at a width, and how wide each is: the one fit rule every table uses.

A column gets the width of its content (its widest cell or its label) whenever the width allows; content
wider than `width + grow` gets its width only once every column has what it wants. When the width does
not allow it, the table gives way in the columns' declared order, least important first: a column is cut
down to its `width` when its `cut` priority comes up, and dropped when its `keep` priority does (cutting
before dropping among equals, the rightmost first). A plain column's `cut` is 0, so it is cut before any
column goes; an identifier or a reason (a project name, a run id, why a project needs you) declares a high
`cut`, so the columns less important than it go before it is cut. Whatever the dropping freed goes back
to the columns that were cut, the most important first, never past their content: no column is cut while
another has cells to spare, and the columns never need more than the width.

A `whole` column (a run id) is worth showing only whole or at its `width` (a unique prefix the user can
type): cells between the two are not given to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

PADDING = 2  # cells of padding each column takes beside its own width
SCROLLBAR = 1  # cells kept free on the right for the table's scrollbar


@dataclass(frozen=True)
class Column:
    """A table column. `width`: the narrowest it is still useful at (it is cut to this first); `keep`:
    how late it is dropped as the width shrinks (lowest first); `grow`: how many cells wider than `width`
    its content may make it; `cut`: how late it is cut below its content (0: before any column is
    dropped); `whole`: only its whole content or `width`, nothing between."""

    label: str
    width: int
    keep: int = 0
    grow: int = 0
    cut: int = 0
    whole: bool = False


def cell_width(value: str | Text) -> int:
    return value.cell_len if isinstance(value, Text) else len(value)


def content_widths(rows: Sequence[Sequence[str | Text]], count: int) -> list[int]:
    """The widest cell of each of the first `count` columns over `rows`."""
    widths = [0] * count
    for cells in rows:
        for i, cell in enumerate(cells[:count]):
            size = cell_width(cell)
            if size > widths[i]:
                widths[i] = size
    return widths


def wanted(column: Column, content: int | None, mark: int = 0) -> int:
    """How wide `column` wants to be: its content or its label (and `mark` cells for the sort mark beside
    it), up to `width + grow` (no rows known: as wide as it may grow)."""
    most = column.width + column.grow
    return max(len(column.label) + mark, min(most if content is None else content, most))


def fit(columns: Sequence[Column], content: Sequence[int] | None, width: int,
        mark: int = 0) -> tuple[list[int], list[int]]:
    """The columns that show at `width` (their indexes, in table order) and their widths. `content` is each
    column's widest cell (None: no rows known yet); `mark`: cells each label keeps free for the mark a
    sortable table puts beside the label it sorts by."""
    room = width - SCROLLBAR
    want = [wanted(c, None if content is None else content[i], mark) for i, c in enumerate(columns)]
    widths = {i: w for i, w in enumerate(want)}

    def used() -> int:
        return sum(w + PADDING for w in widths.values())

    # What gives way, in order: (priority, cut before drop, rightmost first).
    steps = sorted([(c.cut, 0, -i) for i, c in enumerate(columns) if want[i] > c.width]
                   + [(c.keep, 1, -i) for i, c in enumerate(columns)])
    for _, drop, minus_i in steps:
        if used() <= room:
            break
        i = -minus_i
        if i not in widths:
            continue
        if drop:
            if len(widths) > 1:
                del widths[i]
        else:
            widths[i] = columns[i].width
    # The cells left go back, most important first: to the columns cut below what they want, then (when
    # every column has what it wants) to content wider than that.
    full = want if content is None else [max(w, c) for w, c in zip(want, content, strict=True)]
    for goal in (want, full):
        for i in sorted(widths, key=lambda i: (-columns[i].keep, i)):
            spare = room - used()
            short = goal[i] - widths[i]
            if short > 0 and (spare >= short or not columns[i].whole):
                widths[i] += max(0, min(short, spare))
    if used() > room and len(widths) == 1:  # one column left, still too wide: it takes what there is
        only = next(iter(widths))
        widths[only] = max(1, room - PADDING)
    shown = sorted(widths)
    return shown, [widths[i] for i in shown]
