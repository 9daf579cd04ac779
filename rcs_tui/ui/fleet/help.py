"""The fleet's `?` help: its keys and what the row glyphs mean."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from rcs_tui.ui.console.help import HelpModal, keys_text
from rcs_tui.ui.fleet.table import STATE_STYLE
from rcs_tui.views.health import HEALTH_GLYPH, WORKER_GLYPH

KEYS: tuple[tuple[str, str, bool], ...] = (
    ("1 / 2", "projects / alerts", False),
    ("j / k", "move down / up", False),
    ("g / G", "first / last row", False),
    ("> / <", "sort by the next / previous column, then most urgent first", False),
    ("enter", "open the project's console (over ssh -t for a remote one)", False),
    ("i", "project view: members, findings, runs, and its actions", False),
    ("/", "filter projects by name or URL; esc clears", False),
    ("n / N", "next / previous project that needs you", False),
    ("a", "acknowledge its needs: no alert until they change", False),
    ("y", "copy the project's path or ssh:// address", False),
    (":", "command palette", False),
    ("d", "project view: clear the selected member (previewed)", True),
    ("u / U", "project view: undo / redo, showing the entry and its files", True),
    ("D", "project view: doctor; repair one (enter) or all (D)", False),
    ("o", "project view: override a task's phase (from a list)", True),
    ("esc", "back / close", False),
    ("?", "this help", False),
    ("q", "quit (ctrl+c too)", False),
)
GLYPHS = {"waiting": "a member or rp1 run waits for you", "failed": "a member or run failed",
          "trouble": "dead worker, stale member or root survivor", "running": "work in progress",
          "idle": "nothing running", "error": "cannot be read (the row says why)"}


def fleet_help_text(readonly: bool) -> Text:
    out = keys_text(KEYS, readonly, width=7)
    out.append("\nRows, most urgent first\n", style="bold")
    for state, meaning in GLYPHS.items():
        label, style = STATE_STYLE[state]
        out.append(f"{label:>7}  ", style=style)
        out.append(meaning + "\n")
    out.append("\nNEEDS YOU: why it needs you, in words (or why it cannot be read)\n",
               style="dim")
    out.append("WORKERS: " + " ".join(f"{glyph} {condition}" for condition, (glyph, _) in WORKER_GLYPH.items())
               + " (as the console judges them) · HEALTH: members by health (" + " ".join(
                   f"{glyph} {health}" for health, glyph in HEALTH_GLYPH.items()) + ")\n"
               "RP1 W/F/R: runs waiting / failed / running · DOC: doctor findings (… while still reading)\n",
               style="dim")
    if readonly:
        out.append("Read-only: actions that write are hidden.", style="magenta")
    return out


class FleetHelp(HelpModal):
    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text("Fleet keys", style="bold"), id="dialog-title")
            with VerticalScroll():
                yield Static(fleet_help_text(self.readonly))
