"""The confirmation modal for every write: shows the core's plan exactly, focus starts on Cancel."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rcs_tui.ui.console.format import plain

ACTION_WORDS = {"delete": "delete", "write": "rewrite"}


def change_word(change: dict[str, Any]) -> str:
    """How a file changes, in the words an operator expects (deleted / tombstoned / rewritten)."""
    why = str(change.get("why", ""))
    if change.get("action") == "delete":
        return "DELETE"
    if "tombstone" in why:
        return "TOMBSTONE"
    if "canonical" in why:
        return "EDIT SET"
    return "WRITE"


def plan_text(preview: dict[str, Any]) -> Text:
    """The plan as the core described it: files and how they change, entries removed, the set after."""
    out = Text()
    changes = preview.get("changes") or []
    if changes:
        out.append("Files\n", style="bold")
        for c in changes:
            word = change_word(c)
            out.append(f"  {word}", style="bold red" if word == "DELETE" else "bold yellow")
            out.append(f" — {plain(c.get('why'))}\n" if c.get("why") else "\n", style="dim")
            out.append(f"    {plain(c.get('path'))}\n")
    else:
        out.append("No file changes.\n", style="bold")
    for app in preview.get("appends") or []:
        out.append("Append to ", style="bold")
        out.append(plain(app.get("path")) + "\n")
        out.append("  " + plain(app.get("line")) + "\n", style="italic")
    removed = preview.get("canonical_removed")
    if removed:
        out.append("Canonical entries removed: ", style="bold")
        out.append(", ".join(plain(r) for r in removed) + "\n")
    if "active_after" in preview:
        after = preview.get("active_after") or []
        out.append("Active set after: ", style="bold")
        out.append((" + ".join(plain(a) for a in after) or "(empty)") + "\n", style="green")
    for key in ("restores",):
        if preview.get(key):
            out.append("Restores: ", style="bold")
            out.append(", ".join(plain(p) for p in preview[key]) + "\n")
    return out


class ConfirmPlan(ModalScreen[bool]):
    """Yes/no over a plan preview. `y` confirms, `n`/esc cancels; the Cancel button has focus."""

    BINDINGS = [Binding("y", "confirm", "Confirm"), Binding("n", "cancel", "Cancel"),
                Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, title: str, preview: dict[str, Any], confirm_label: str = "Confirm",
                 warning: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.preview = preview
        self.confirm_label = confirm_label
        self.warning = warning

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            with VerticalScroll(id="plan"):
                yield Static(plan_text(self.preview), id="plan-text")
                if self.warning:
                    yield Static(Text(self.warning, style="bold yellow"), id="plan-warning")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel", variant="primary")
                yield Button(f"{self.confirm_label} (y)", id="confirm", variant="error")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
