"""LineTable: a keyed table whose rows are rendered once per change and only repainted when they change.

Textual's DataTable re-renders every visible cell after any single cell update (its render caches are
keyed on a table-wide update counter), which costs hundreds of milliseconds a frame at a thousand rows
and starves the readers behind it. Here each row is drawn to one `Strip` when its cells change; a frame
only hands out the cached strips (with the cursor and zebra styles applied on top), and an update
repaints just the lines of the rows that changed. A re-sort reorders keys and repaints, without
re-rendering any row. Columns have fixed widths (the caller's fitting decides them), so an arriving
row never makes the table measure every cell again.

The cursor follows its row's key. When that row goes (cleared, filtered out), it moves to the row
that followed it, else the one before, preferring rows of the same group. Every time the highlighted
key changes (a key, a click, rows changing under it) the table posts `Highlighted`; enter, or a click
on the highlighted row, posts `Selected`.

Keys: g / G (and home / end) go to the first / last row. `>` and `<` pick the sort column (htop's habit):
each press moves to the next / previous column, past the last one back to the order the caller gave, and
the header marks the sorted column with `▲`. A table whose rows form a tree (`sortable=False`) keeps its
order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

PAD = 1  # cells of padding either side of each column
SORT_MARK = 2  # cells the header's " ▲" takes beside the label of the column the rows are sorted by

Cells = Sequence[Text | str]


def clip_cell(value: str | Text, width: int) -> str | Text:
    """A cell cut to its column with an ellipsis, never silently cropped mid-word."""
    if width <= 0:
        return value
    if isinstance(value, Text):
        if value.cell_len <= width:
            return value
        clipped = value.copy()
        clipped.truncate(width, overflow="ellipsis")
        return clipped
    return value if len(value) <= width else value[: width - 1] + "…"


def content_widths(labels: Sequence[str], rows: Sequence[tuple[str, Cells]]) -> list[int]:
    """Each column as wide as its widest cell or label (for small tables that need no fitting)."""
    widths = [len(label) for label in labels]
    for _, cells in rows:
        for i, cell in enumerate(cells[:len(widths)]):
            widths[i] = max(widths[i], cell.cell_len if isinstance(cell, Text) else len(cell))
    return widths


def successor(old: Sequence[str], gone: str | None, alive: set[str],
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


_AGE = re.compile(r"(\d+)([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_CHUNKS = re.compile(r"(\d+)")


def sort_key(value: str | Text) -> tuple[tuple[int, int | str], ...]:
    """How a cell sorts: an age (`45s`, `3m`, `2h`) by its seconds, other text by its words with the
    numbers in it taken as numbers (`task-9` before `task-10`), case ignored; empty and `-` cells last."""
    text = (value.plain if isinstance(value, Text) else value).strip()
    for glyph in "●◌◍▲♥✖?◆◇▸↳ ":
        text = text.lstrip(glyph)
    if not text or text == "-":
        return ((2, 0),)
    age = _AGE.fullmatch(text)
    if age:
        return ((0, int(age.group(1)) * _UNIT[age.group(2)]),)
    return tuple((0, int(part)) if part.isdigit() else (1, part.lower()) for part in _CHUNKS.split(text) if part)


class RowMessage(Message):
    """A message about one row of a LineTable (`key`), from that table (`control`)."""

    def __init__(self, table: LineTable, key: str | None) -> None:
        super().__init__()
        self.table = table
        self.key = key

    @property
    def control(self) -> LineTable:
        return self.table


class LineTable(ScrollView, can_focus=True):
    """Rows of styled cells under a fixed header, one highlighted row (the cursor), keyed by string."""

    BINDINGS = [
        Binding("up", "cursor_up", show=False), Binding("down", "cursor_down", show=False),
        Binding("pageup", "page_up", show=False), Binding("pagedown", "page_down", show=False),
        Binding("home", "first", show=False), Binding("end", "last", show=False),
        Binding("g", "first", "Top", show=False), Binding("G", "last", "Bottom", show=False),
        Binding("enter", "select", show=False),
        Binding("greater_than_sign", "sort(1)", "Sort", show=True),
        Binding("less_than_sign", "sort(-1)", "Sort back", show=False),
    ]
    COMPONENT_CLASSES = {"line-table--header", "line-table--cursor", "line-table--even-row"}
    DEFAULT_CSS = """
    LineTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        &:focus {
            background-tint: $foreground 5%;
            & > .line-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .line-table--header { background-tint: $foreground 5%; }
        }
        & > .line-table--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .line-table--header { background: ansi_bright_blue; color: ansi_default; }
        & > .line-table--even-row { background: $surface-lighten-1 10%; }
        & > .line-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class Selected(RowMessage):
        """Enter (or a click on the highlighted row) on row `key`."""

    class Highlighted(RowMessage):
        """The cursor is now on row `key` (None: the table is empty)."""

    def __init__(self, *, id: str | None = None, zebra_stripes: bool = False,  # noqa: A002 - Textual's name
                 run_on: bool = False, sortable: bool = True) -> None:
        super().__init__(id=id)
        self.sortable = sortable
        self.sort_column: int | None = None  # the column the rows are sorted by (None: the caller's order)
        self._given: Sequence[tuple[str, Cells]] = ()
        self._group: Callable[[str], object] | None = None
        self.zebra_stripes = zebra_stripes
        self.run_on = run_on  # a cell followed only by empty cells runs on over their columns
        self.labels: list[str] = []
        self.widths: list[int] = []
        self.keys: list[str] = []
        self.cells: dict[str, Cells] = {}
        self.cursor = 0
        self._strips: dict[str, Strip] = {}
        self._header: Strip | None = None
        self._announced: str | None = None
        self._base: Style | None = None
        self.renders = 0  # rows drawn to strips since mount (what an update costs)

    # -- content ----------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.keys)

    @property
    def selected(self) -> str | None:
        return self.keys[self.cursor] if 0 <= self.cursor < len(self.keys) else None

    def column_width(self, label: str) -> int | None:
        """The width column `label` has now (None when it is not shown)."""
        return self.widths[self.labels.index(label)] if label in self.labels else None

    def set_columns(self, labels: Sequence[str], widths: Sequence[int]) -> None:
        """New columns: every row is drawn again (only when the terminal width changes what fits). The
        rows and the cursor stay; the caller hands the rows cut to the new columns next."""
        if list(labels) == self.labels and list(widths) == self.widths:
            return
        if self.sort_column is not None and self.sort_column >= len(labels):
            self.sort_column = None
        self.labels, self.widths = list(labels), list(widths)
        self._header = None
        self._strips.clear()
        self._resize()
        self.refresh()

    def set_rows(self, rows: Sequence[tuple[str, Cells]], group: Callable[[str], object] | None = None) -> None:
        """Show `rows` in this order. Only rows whose cells differ are drawn again (cells handed over as
        the very object shown are not even compared), and only the lines whose row changed, moved or
        gained or lost the cursor are repainted. The cursor stays on its key; when that row is gone it
        goes to the `successor` (within the same `group` first). With a sort column chosen, the rows are
        shown sorted by it (ties keep the given order)."""
        self._given, self._group = rows, group
        column = self.sort_column
        if column is not None:
            rows = sorted(rows, key=lambda row: sort_key(row[1][column]) if column < len(row[1]) else ((2, 0),))
        selected, old_cursor = self.selected, self.cursor
        old_keys = self.keys
        keys = [k for k, _ in rows]
        changed: list[int] = []
        cells_of = self.cells
        for index, (key, cells) in enumerate(rows):
            shown = cells_of.get(key)
            if shown is cells:
                continue
            if shown is None or list(shown) != list(cells):
                self._strips.pop(key, None)
                changed.append(index)
            cells_of[key] = cells
        if keys != old_keys:
            alive = set(keys)
            for gone in [k for k in cells_of if k not in alive]:
                del cells_of[gone]
                self._strips.pop(gone, None)
            self.keys = keys
            if selected in alive:
                self.cursor = keys.index(selected)
            else:
                target = successor(old_keys, selected, alive, group)
                self.cursor = keys.index(target) if target is not None else max(0, min(self.cursor, len(keys) - 1))
            if len(keys) != len(old_keys):
                self._resize()
                self.refresh()
            else:  # a re-sort: repaint the lines that now show another row
                changed.extend(i for i, (new, old) in enumerate(zip(keys, old_keys, strict=True)) if new != old)
            self._scroll_to_cursor()
        if self.cursor != old_cursor:
            changed += [old_cursor, self.cursor]
        self._refresh_rows(changed)
        self._announce()

    def row_text(self, key: str) -> list[str]:
        """The plain text of a row's cells, whole (before they are cut to their columns)."""
        return [c.plain if isinstance(c, Text) else c for c in self.cells.get(key, [])]

    def drawn(self, key: str) -> list[str]:
        """The text each column shows of row `key`, as drawn: cut to its column, padding removed."""
        strip = self._strips.get(key) or self._draw(self.cells[key])
        columns: dict[int, str] = {}
        for segment in strip:
            column = segment.style.meta.get("column", -1) if segment.style else -1
            columns[column] = columns.get(column, "") + segment.text
        return [columns[c][PAD:].rstrip() for c in sorted(columns) if c >= 0]

    # -- cursor -----------------------------------------------------------------------------
    def move_cursor(self, row: int) -> None:
        if not self.keys:
            return
        row = max(0, min(row, len(self.keys) - 1))
        if row != self.cursor:
            old, self.cursor = self.cursor, row
            self._refresh_rows((old, row))
        self._scroll_to_cursor()
        self._announce()

    def select_key(self, key: str) -> None:
        """Put the cursor on row `key` (when it is shown)."""
        if key in self.cells:
            self.move_cursor(self.keys.index(key))

    def _announce(self) -> None:
        """Post `Highlighted` when the highlighted key is not the one last announced."""
        if self.selected != self._announced:
            self._announced = self.selected
            self.post_message(self.Highlighted(self, self._announced))

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor - max(1, self.size.height - 2))

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor + max(1, self.size.height - 2))

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self.keys) - 1)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.sortable or action != "sort"

    def action_sort(self, step: int) -> None:
        """Sort by the next (`step` 1) or previous (-1) column; past either end, the caller's order."""
        if not self.sortable or not self.labels:
            return
        stops = [None, *range(len(self.labels))]
        self.sort_column = stops[(stops.index(self.sort_column) + step) % len(stops)]
        self._header = None
        self.refresh()
        self.set_rows(self._given, self._group)
        label = "the given order" if self.sort_column is None else self.labels[self.sort_column]
        self.notify(f"sorted by {label}", timeout=1.5)

    def action_select(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self, self.selected))

    def on_click(self, event: events.Click) -> None:
        if event.y < 1:
            return
        row = int(self.scroll_offset.y) + event.y - 1
        if 0 <= row < len(self.keys):
            event.stop()
            again = row == self.cursor
            self.move_cursor(row)
            if again:
                self.action_select()

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        room = max(1, self.size.height - 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + room:
            self.scroll_to(y=self.cursor - room + 1, animate=False)

    # -- drawing ----------------------------------------------------------------------------
    def _resize(self) -> None:
        width = sum(w + 2 * PAD for w in self.widths)
        self.virtual_size = Size(width, len(self.keys) + 1)

    def _refresh_rows(self, indexes: Iterable[int]) -> None:
        """Repaint the on-screen lines of these rows, one region per run of adjacent lines: a re-sort
        moves every line below the row that jumped, and a refresh call per line cost more than drawing."""
        top, (width, height) = int(self.scroll_offset.y), self.size
        lines = sorted({y for i in indexes if 1 <= (y := i - top + 1) < height})
        regions: list[Region] = []
        for y in lines:
            if regions and regions[-1].bottom == y:
                regions[-1] = Region(0, regions[-1].y, width, regions[-1].height + 1)
            else:
                regions.append(Region(0, y, width, 1))
        if regions:
            self.refresh(*regions)

    def _style(self, name: str) -> Style:
        """A component's full style (blended over the table's background, as DataTable draws its cursor).
        Textual caches it until the next refresh, which is also when a change of focus lands in it."""
        return self.get_component_rich_style(name)

    def _draw(self, cells: Cells) -> Strip:
        """One row as a strip: each cell cut to its column and padded; with `run_on`, a cell followed only
        by empty cells (an unreadable project's reason) runs on over them. Each cell's segments carry its
        column index as meta, so adjacent cells stay separate runs (screenshots align them)."""
        console = self.app.console
        texts = [value if isinstance(value, Text) else Text(value) for value in cells]
        segments: list[Segment] = []
        column = 0
        while column < min(len(texts), len(self.widths)):
            width = self.widths[column]
            rest = column + 1
            if self.run_on and all(not t.plain for t in texts[rest:len(self.widths)]):
                width += sum(w + 2 * PAD for w in self.widths[rest:])
                rest = len(self.widths)
            cell = clip_cell(texts[column], width)
            assert isinstance(cell, Text)
            tag = Style.from_meta({"column": column})
            segments.append(Segment(" " * PAD, tag))
            segments.extend(Segment.apply_style(cell.render(console), console.get_style(cell.style) + tag))
            segments.append(Segment(" " * (width - cell.cell_len + PAD), tag))
            column = rest
        self.renders += 1
        return Strip(segments, sum(w + 2 * PAD for w in self.widths))

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # one walk up the DOM per pass, not one per line
        try:
            return super().render_lines(crop)
        finally:
            self._base = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base or self.rich_style
        if y == 0:
            if self._header is None:
                self._header = self._draw([Text(label + (" ▲" if i == self.sort_column else ""))
                                           for i, label in enumerate(self.labels)])
            header = self._style("line-table--header")
            return self._header.apply_style(base + header).crop_extend(int(self.scroll_offset.x),
                                                                       int(self.scroll_offset.x) + width,
                                                                       base + header)
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self.keys):
            return Strip.blank(width, base)
        key = self.keys[index]
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._draw(self.cells[key])
        style = base
        if self.zebra_stripes and index % 2:
            style = style + self._style("line-table--even-row")
        strip = strip.apply_style(style)
        if index == self.cursor:
            cursor = self._style("line-table--cursor")
            strip = Strip(Segment.apply_style(strip, post_style=cursor), strip.cell_length)
            style = style + cursor
        x = int(self.scroll_offset.x)
        return strip.crop_extend(x, x + width, style)
