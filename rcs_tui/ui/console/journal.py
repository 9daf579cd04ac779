"""The journal of operator actions, newest first; enter opens an entry, `u` / `U` undo / redo it.

The journal is read in a worker (it grows with every action); the rows on screen stay until the answer.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.core.history import undone_ids
from rcs_tui.state.journal import interrupted, read_journal
from rcs_tui.state.txn import JOURNAL_REL
from rcs_tui.ui.console.background import OneAtATime
from rcs_tui.ui.console.format import plain, styled
from rcs_tui.ui.console.table import Column, Row, matches, project, set_columns
from rcs_tui.ui.linetable import LineTable

JOURNAL_KEYS = "enter details · u undo · U redo (refused if a file changed since)"
# The action shows whole whenever the width allows: the file count and the actor go before it is cut
# (enter opens the whole entry).
COLUMNS = (Column("at", 19, 6), Column("action", 20, 9, grow=100, cut=5), Column("files", 5, 2),
           Column("state", 11, 8), Column("actor", 13, 3, grow=40))


def entry_state(entry: dict, undone: set[str], cut_short: set[str]) -> Text:
    """What became of an entry, as the journal records it: undone, INTERRUPTED (its write never
    committed and nothing rolled it back; undo rolls it back), or done."""
    if entry["id"] in undone:
        return Text("undone", style="dim")
    if entry["id"] in cut_short:
        return Text("INTERRUPTED", style="bold red")
    return Text("done", style="green")


def journal_rows(root: Path, needle: str = "") -> list[Row]:
    """Newest first; `needle` keeps the entries whose action, file paths or actor contain every word."""
    entries = read_journal(root)
    undone = undone_ids(entries)
    cut_short = {e["id"] for e in interrupted(entries)}
    rows: list[Row] = []
    for e in reversed(entries):
        paths = [f.get("path") for f in (e.get("files") or []) + (e.get("appends") or []) if isinstance(f, dict)]
        if needle and not matches(needle, e.get("action"), e.get("actor"), e.get("id"), *paths):
            continue
        # the files it touched: those it rewrote and those it appended a line to (a task's transcript), each once
        rows.append((e["id"], [styled(str(e.get("at", ""))[:19].replace("T", " ")), styled(e.get("action"), width=200),
                               Text(str(len(set(paths)))), entry_state(e, undone, cut_short),
                               styled(e.get("actor"), width=200)]))
    return rows


def journal_stamp(root: Path) -> tuple[int, int, int]:
    """What tells the journal changed (inode, size, mtime; zeros when there is none)."""
    try:
        st = (root / JOURNAL_REL).stat()
    except OSError:
        return 0, 0, 0
    return st.st_ino, st.st_size, st.st_mtime_ns


class JournalPane(Vertical):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reads = OneAtATime("journal")
        self.drawn: tuple[object, ...] | None = None  # (journal stamp, filter, width) of the rows on screen

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter by action/path…", id="journal-filter", classes="filter")
        table = LineTable(id="journal-table")
        set_columns(table, COLUMNS, self.app.size.width)
        yield table
        yield Static(Text(JOURNAL_KEYS, style="dim"), id="journal-note", classes="detail")

    def show(self, root: Path) -> None:
        """Read the journal in a worker and draw it; nothing is read again while it and the view stay the same."""
        needle = self.query_one("#journal-filter", Input).value.strip()
        width, drawn = self.app.size.width, self.drawn

        def read() -> tuple[tuple[object, ...], list[Row]] | None:
            key = (journal_stamp(root), needle, width)
            return None if key == drawn else (key, journal_rows(root, needle))

        if drawn is None:
            self.query_one("#journal-note", Static).update(Text("reading the journal…", style="dim"))
        self.reads.run(self, read, self._draw)

    def _draw(self, answer: tuple[tuple[object, ...], list[Row]] | None, _: BaseException | None) -> None:
        if answer is None:
            return
        self.drawn, rows = answer
        needle = self.drawn[1]
        table = self.query_one("#journal-table", LineTable)
        table.set_rows(project(rows, COLUMNS, set_columns(table, COLUMNS, self.app.size.width, rows)))
        note = self.query_one("#journal-note", Static)
        if not rows:
            note.update(Text("No entry matches the filter." if needle else "No operator actions recorded yet.",
                             style="dim"))
        else:
            note.update(Text(JOURNAL_KEYS, style="dim"))

    def selected(self) -> str | None:
        return self.query_one("#journal-table", LineTable).selected


__all__ = ["JournalPane", "journal_rows", "plain"]
