"""LineTable: a keyed table whose rows are rendered once per change and only repainted when they change.

Textual's DataTable re-renders every visible cell after any single cell update (its render caches are
keyed on a table-wide update counter), which costs hundreds of milliseconds a frame at fleet size and
starves the readers behind it. Here each row is drawn to one `Strip` when its cells change; a frame
only hands out the cached strips (with the cursor and zebra styles applied on top), and an update
repaints just the lines of the rows that changed. A re-sort reorders keys and repaints, without
re-rendering any row. Columns have fixed widths (the console's fitting decides them), so an arriving
row never makes the table measure every cell again.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rcs_tui.ui.console.table import clip_cell

PAD = 1  # cells of padding either side of each column


class LineTable(ScrollView, can_focus=True):
    """Rows of styled cells under a fixed header, one highlighted row (the cursor), keyed by string."""

    BINDINGS = [
        Binding("up", "cursor_up", show=False), Binding("down", "cursor_down", show=False),
        Binding("pageup", "page_up", show=False), Binding("pagedown", "page_down", show=False),
        Binding("home", "first", show=False), Binding("end", "last", show=False),
        Binding("enter", "select", show=False),
    ]
    COMPONENT_CLASSES = {"line-table--header", "line-table--cursor", "line-table--even-row"}
    DEFAULT_CSS = """
    LineTable { background: $surface; }
    LineTable > .line-table--header { text-style: bold; background: $panel; color: $foreground; }
    LineTable > .line-table--cursor { background: $block-cursor-blurred-background; }
    LineTable:focus > .line-table--cursor { background: $block-cursor-background;
                                            color: $block-cursor-foreground; text-style: bold; }
    LineTable > .line-table--even-row { background: $surface-lighten-1 10%; }
    """

    class Selected(Message):
        """Enter (or a click on the highlighted row) on row `key`."""

        def __init__(self, table: LineTable, key: str) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> LineTable:
            return self.table

    def __init__(self, *, id: str | None = None, zebra_stripes: bool = True) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.zebra_stripes = zebra_stripes
        self.labels: list[str] = []
        self.widths: list[int] = []
        self.keys: list[str] = []
        self.cells: dict[str, list[Text]] = {}
        self.cursor = 0
        self._strips: dict[str, Strip] = {}
        self._header: Strip | None = None
        self._styles: dict[str, Style] = {}
        self.renders = 0  # rows drawn to strips since mount (what an update costs)

    # -- content ----------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.keys)

    @property
    def selected(self) -> str | None:
        return self.keys[self.cursor] if 0 <= self.cursor < len(self.keys) else None

    def set_columns(self, labels: Sequence[str], widths: Sequence[int]) -> None:
        """New columns: every row is drawn again (only when the terminal width changes what fits)."""
        if list(labels) == self.labels and list(widths) == self.widths:
            return
        self.labels, self.widths = list(labels), list(widths)
        self._header = None
        self._strips.clear()
        self._resize()
        self.refresh()

    def set_rows(self, rows: Sequence[tuple[str, list[Text]]]) -> None:
        """Show `rows` in this order; only rows whose cells differ are drawn again, and when the order is
        unchanged only their lines are repainted. The cursor stays on its row's key when it is still shown."""
        selected = self.selected
        keys = [k for k, _ in rows]
        changed: list[str] = []
        for key, cells in rows:
            if self.cells.get(key) != cells:
                self.cells[key] = cells
                self._strips.pop(key, None)
                changed.append(key)
        for gone in set(self.cells) - set(keys):
            del self.cells[gone]
            self._strips.pop(gone, None)
        if keys != self.keys:
            self.keys = keys
            if selected in keys:
                self.cursor = keys.index(selected)
            self.cursor = max(0, min(self.cursor, len(keys) - 1))
            self._resize()
            self.refresh()
        else:
            for key in changed:
                self._refresh_row(self.keys.index(key))

    def update_row(self, key: str, cells: list[Text]) -> None:
        """Change one shown row's cells in place (its position stays)."""
        if key in self.cells and self.cells[key] != cells:
            self.cells[key] = cells
            self._strips.pop(key, None)
            self._refresh_row(self.keys.index(key))

    def row_text(self, key: str) -> list[str]:
        """The plain text of a row's cells (what tests and copy read)."""
        return [c.plain for c in self.cells.get(key, [])]

    # -- cursor -----------------------------------------------------------------------------
    def move_cursor(self, row: int) -> None:
        if not self.keys:
            return
        row = max(0, min(row, len(self.keys) - 1))
        if row != self.cursor:
            old, self.cursor = self.cursor, row
            self._refresh_row(old)
            self._refresh_row(row)
        self._scroll_to_cursor()

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

    def action_select(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self, self.selected))

    def on_click(self, event: events.Click) -> None:
        if event.y < 1:
            return
        row = int(self.scroll_offset.y) + event.y - 1
        if 0 <= row < len(self.keys):
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

    def _refresh_row(self, index: int) -> None:
        y = index - int(self.scroll_offset.y) + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._header = None
        self._strips.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name, partial=name != "line-table--header")
        return style

    def _draw(self, cells: Sequence[Text | str]) -> Strip:
        """One row as a strip: each cell cut to its column and padded; a cell followed only by empty
        cells (an unreadable project's reason) runs on over them. Each cell's segments carry its column
        index as meta, so adjacent cells stay separate runs (screenshots align them)."""
        console = self.app.console
        texts = [value if isinstance(value, Text) else Text(value) for value in cells]
        segments: list[Segment] = []
        column = 0
        while column < min(len(texts), len(self.widths)):
            width = self.widths[column]
            rest = column + 1
            if all(not t.plain for t in texts[rest:len(self.widths)]):
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

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y == 0:
            if self._header is None:
                self._header = self._draw([Text(label) for label in self.labels])
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
