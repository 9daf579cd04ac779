"""One history entry in full: when, the member, what changed from → to, who or what did it (the operator
with the journal entry, the runtime, the session and pid that wrote the file), how long after a clear it
came back and whether that was acknowledged, then every field as recorded. Long values wrap, never cut.
Pushed by enter in the History view; esc goes back.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from rcs_tui.ui.console.footer import FittedFooter
from rcs_tui.ui.console.format import pretty_json
from rcs_tui.ui.console.statusbar import StatusBar
from rcs_tui.ui.updates import show_content
from rcs_tui.views.history_text import detail_fields
from rcs_tui.views.world import World

LABEL = 13


def local_time(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def entry_text(entry: Mapping[str, Any], now: float, acknowledged: Mapping[str, Any] | None,
               width: int = 80) -> Text:
    """The page for `width` cells: each field's words wrapped under its value column (long ids and names
    break across lines, never cut), then the entry as recorded."""
    out = Text(no_wrap=False)
    room = max(20, width - LABEL - 6)
    for label, value in detail_fields(entry, now, local_time, acknowledged):
        out.append(f"{label:>{LABEL}}  ", style="bold")
        lines = textwrap.wrap(value, room, break_long_words=True, break_on_hyphens=False) or [""]
        out.append(("\n" + " " * (LABEL + 2)).join(lines) + "\n", style="bold red" if label == "came back" else "")
    out.append("\nevery field as recorded\n", style="bold")
    out.append_text(pretty_json(dict(entry)))
    return out


class HistoryEntryScreen(Screen):
    """The detail of one history entry; esc goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, entry: Mapping[str, Any], acknowledged: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.entry = entry
        self.acknowledged = acknowledged

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with VerticalScroll(id="history-entry-scroll"):
            yield Static(id="history-entry-text")
        yield FittedFooter()

    def show(self, world: World, now: float) -> None:
        show_content(self.query_one("#history-entry-text", Static), entry_text(self.entry, now, self.acknowledged,
                                                                                self.app.size.width))

    def selection(self) -> tuple[None, str | None]:
        ident = self.entry.get("id")
        return None, ident if isinstance(ident, str) else None
