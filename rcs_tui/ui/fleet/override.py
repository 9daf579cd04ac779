"""The fleet's task override form: which task, which phase, and the reason (required, recorded).

The form only gathers the three values; the project's own `rcs-tui task override … --dry-run --json`
then checks them (phase reachable, task readable) and its plan is confirmed with focus on Cancel before
the real call, locally or over ssh, exactly as the other fleet actions are.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from rcs_tui.fleet.rows import inert


def task_choices(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(task id, phase) of every task the document lists, open tasks first."""
    tasks = [t for t in doc.get("tasks") or [] if isinstance(t, dict) and isinstance(t.get("id"), str)]
    tasks.sort(key=lambda t: (bool(t.get("terminal")), t["id"]))
    return [(inert(t["id"], 80), inert(t.get("phase") or "unreadable", 30)) for t in tasks]


class TaskOverrideForm(ModalScreen[tuple[str, str, str] | None]):
    """Dismisses with (task id, target phase, reason) once all three are given, else None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, project: str, doc: dict[str, Any]) -> None:
        super().__init__()
        self.project = project
        self.tasks = task_choices(doc)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(f"Override a task's phase in {inert(self.project, 60)}", style="bold"),
                         id="dialog-title")
            yield Static("Task:", classes="label")
            yield OptionList(*[Option(f"{tid}  ({phase})", id=tid) for tid, phase in self.tasks], id="override-task")
            yield Input(placeholder="to phase (must be reachable from the current one)", id="override-to")
            yield Input(placeholder="reason (required, recorded)", id="override-reason")
            yield Static(Text("enter next field · the plan is previewed before anything is written · esc cancel",
                              style="dim"), id="override-keys")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel", variant="primary")
                yield Button("Preview", id="apply", variant="warning", disabled=True)

    def on_mount(self) -> None:
        options = self.query_one("#override-task", OptionList)
        if self.tasks:
            options.highlighted = 0
            options.focus()
        else:
            self.query_one("#override-keys", Static).update(Text("This project lists no tasks.", style="yellow"))
            self.query_one("#cancel", Button).focus()

    def values(self) -> tuple[str, str, str] | None:
        options = self.query_one("#override-task", OptionList)
        if options.highlighted is None or not self.tasks:
            return None
        to = self.query_one("#override-to", Input).value.strip()
        reason = self.query_one("#override-reason", Input).value.strip()
        if not to or not reason:
            return None
        return self.tasks[options.highlighted][0], to, reason

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#apply", Button).disabled = self.values() is None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#override-to", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "override-to":
            self.query_one("#override-reason", Input).focus()
        elif self.values() is not None:
            self.dismiss(self.values())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(self.values() if event.button.id == "apply" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
