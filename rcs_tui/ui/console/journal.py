"""The journal of operator actions, newest first; enter or `u` on an entry offers to undo it."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from rcs_tui.state.journal import read_journal, undone_ids
from rcs_tui.ui.console.format import plain, styled
from rcs_tui.ui.console.table import Row, selected_key, sync_rows

COLUMNS = (("at", 19), ("action", 24), ("files", 5), ("state", 8), ("actor", 20))


def journal_rows(root: Path) -> list[Row]:
    entries = read_journal(root)
    undone = undone_ids(entries)
    rows: list[Row] = []
    for e in reversed(entries):
        state = ("undone", "dim") if e["id"] in undone else (("undo", "cyan") if "undoes" in e else ("", ""))
        rows.append((e["id"], [styled(str(e.get("at", ""))[:19].replace("T", " ")), styled(e.get("action"), width=40),
                               Text(str(len(e.get("files") or []))), Text(state[0], style=state[1]),
                               styled(e.get("actor"), width=40)]))
    return rows


class JournalPane(Vertical):
    def compose(self) -> ComposeResult:
        table = DataTable(id="journal-table", cursor_type="row")
        for label, width in COLUMNS:
            table.add_column(label, width=width, key=label)
        yield table
        yield Static(Text("u / enter: undo the selected entry (refused if a file changed since)", style="dim"),
                     id="journal-note", classes="detail")

    def show(self, root: Path) -> None:
        rows = journal_rows(root)
        sync_rows(self.query_one("#journal-table", DataTable), rows)
        if not rows:
            self.query_one("#journal-note", Static).update(Text("No operator actions recorded yet.", style="dim"))

    def selected(self) -> str | None:
        return selected_key(self.query_one("#journal-table", DataTable))


__all__ = ["JournalPane", "journal_rows", "plain"]
