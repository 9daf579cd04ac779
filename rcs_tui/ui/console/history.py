"""The History view: what the flight recorder kept, newest first, with quiet stretches folded into one
line ("… 2h07m quiet …"), under the "while you were away" line (changes since this user last looked,
who waits for the operator and since when, comebacks not acknowledged).

The history is read in a worker (it is a file on disk that another process may be appending to); the
rows on screen stay until the answer. A stretch with no entry longer than `QUIET_S` is one line. Enter on
an entry opens it in full (`history_entry`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from rcs_tui.project.recorder import HISTORY_REL, open_comebacks, read_history, recorder_holder
from rcs_tui.ui.console.background import OneAtATime
from rcs_tui.ui.console.format import styled
from rcs_tui.ui.console.table import Column, Row, matches, project, set_columns
from rcs_tui.ui.linetable import LineTable
from rcs_tui.views.history_text import ack_of, away_line, describe, quiet_words, timeline
from rcs_tui.views.line_fit import ago

COLUMNS = (Column("at", 19, 6), Column("ago", 6, 4), Column("what", 40, 9, grow=120))
KIND_STYLE = {"came_back": "bold red", "cleared": "yellow", "health": "yellow", "outcome": "yellow",
              "worker": "yellow", "ack": "dim", "recorder": "dim", "baseline": "dim", "restored": "green"}


def history_rows(entries: list[dict[str, Any]], now: float, needle: str = "",
                 local_time: Callable[[float], str] | None = None) -> list[Row]:
    """Rows newest first; quiet stretches as one dim row; `needle` keeps entries whose text holds every word
    (quiet rows then go: they fold entries that are no longer shown)."""
    import time

    fmt = local_time or (lambda ts: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)))
    rows: list[Row] = []
    for i, (kind, item) in enumerate(reversed(timeline(entries))):
        if kind == "quiet":
            if not needle:
                rows.append((f"quiet:{i}", [Text(""), Text(""), Text(quiet_words(item), style="dim italic")]))
            continue
        text = describe(item)
        if needle and not matches(needle, text, item.get("id")):
            continue
        ts = item.get("ts")
        known = isinstance(ts, (int, float))
        rows.append((str(item.get("id") or f"row:{i}"), [
            styled(fmt(ts) if known else "?"), styled(ago(now - ts) if known else "-"),
            styled(text, KIND_STYLE.get(str(item.get("kind")), ""), width=300)]))
    return rows


def history_stamp(root: Path) -> tuple[int, int, int]:
    """What tells the history changed (inode, size, mtime; zeros when there is none)."""
    try:
        st = (root / HISTORY_REL).stat()
    except OSError:
        return 0, 0, 0
    return st.st_ino, st.st_size, st.st_mtime_ns


def read_view(root: Path, seen: float | None, now: float) -> tuple[list[dict[str, Any]], str, str]:
    """The entries, the view's one header line (what changed since `seen`, who waits, which comebacks are
    not acknowledged) and its note (who records the project now)."""
    entries = read_history(root)
    line = away_line(entries, seen, now, open_comebacks(entries))
    holder = recorder_holder(root)
    who = (f"recorded now by pid {holder.get('pid')}" if holder else
           "nobody records this project now: a console, HUD, fleet or `rcs-tui record` does")
    return entries, line, f"{who} · {HISTORY_REL} · rcs-tui history --json"


class HistoryPane(Vertical):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads = OneAtATime("history")
        self.drawn: tuple[object, ...] | None = None  # (history stamp, filter, width, second) on screen
        self.entries: list[dict[str, Any]] = []  # what is on screen was drawn from (enter opens one)

    def compose(self) -> ComposeResult:
        yield Static("", id="history-away", classes="detail")
        yield Input(placeholder="filter history…", id="history-filter", classes="filter")
        table = LineTable(id="history-table")
        set_columns(table, COLUMNS, self.app.size.width)
        yield table
        yield Static("", id="history-note", classes="detail")

    def show(self, root: Path, now: float, seen: float | None) -> None:
        """Read the history in a worker and draw it; not read again while it, the filter and width stay."""
        needle = self.query_one("#history-filter", Input).value.strip()
        width, drawn = self.app.size.width, self.drawn

        def read() -> tuple[tuple[object, ...], list[Row], str, str, list[dict[str, Any]]] | None:
            key = (history_stamp(root), needle, width, int(now) // 60)
            if key == drawn:
                return None
            entries, line, note = read_view(root, seen, now)
            return key, history_rows(entries, now, needle), line, note, entries

        if drawn is None:
            self.query_one("#history-note", Static).update(Text("reading the history…", style="dim"))
        self.reads.run(self, read, self._draw)

    def _draw(self, answer: tuple[tuple[object, ...], list[Row], str, str, list[dict[str, Any]]] | None,
              _: BaseException | None) -> None:
        if answer is None:
            return
        self.drawn, rows, line, text, self.entries = answer
        self.query_one("#history-away", Static).update(Text(line, no_wrap=True, overflow="ellipsis"))
        table = self.query_one("#history-table", LineTable)
        table.set_rows(project(rows, COLUMNS, set_columns(table, COLUMNS, self.app.size.width, rows)))
        note = self.query_one("#history-note", Static)
        if not rows:
            note.update(Text("No entry matches the filter." if self.drawn[1] else
                             "Nothing recorded yet: a console, HUD, fleet or `rcs-tui record` records changes.",
                             style="dim"))
        else:
            note.update(Text(text, style="dim", no_wrap=True, overflow="ellipsis"))

    def selected(self) -> str | None:
        return self.query_one("#history-table", LineTable).selected

    def entry(self, key: str | None) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        """The entry a row shows (None for a quiet row) and the later acknowledgement naming it, if any."""
        found = next((e for e in self.entries if key is not None and e.get("id") == key), None)
        return None if found is None else (found, dict(ack_of(self.entries, found) or {}) or None)
