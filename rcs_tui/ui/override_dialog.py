"""The task override dialog the console and the fleet share.

The phase is picked from a list: the phases the task lifecycle reaches from the task's phase
(`override_targets`, the rule the core checks again when it plans the override), so a typo cannot happen.
The reason is required and recorded. What the override will do is shown before anything is written, and
a value that is refused leaves everything entered in place. The console plans the override itself; the
fleet asks the project's own rcs-tui (over ssh for a remote project): each supplies its preview and what
applying means (`preview`, `submit`).
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

from rcs_tui.core.task_lifecycle import override_targets
from rcs_tui.views.text import strip_controls


def in_dialog_words(message: str) -> str:
    """A core message that names CLI flags, said the way this dialog asks for the same thing."""
    return message.replace("a non-empty --reason", "a reason (type it in the reason field)").replace(
        "--reason R", "with a reason").replace("--reason", "the reason field")


class OverrideDialog(ModalScreen[Any]):
    """Task (when there is a choice), phase, reason, preview; Cancel or Override.

    `tasks` are (task id, current phase); with one task and `pick_task` False the task list is not shown.
    Subclasses say what the preview shows (`preview`) and what applying does (`submit`)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "apply", "Apply", priority=True)]
    KEYS = "↑/↓ pick · enter next field · tab/shift+tab move · ctrl+s applies · esc cancel"
    APPLY_LABEL = "Override (ctrl+s)"

    def __init__(self, title: str, tasks: list[tuple[str, str]], *, pick_task: bool = False,
                 task: str | None = None, phase: str | None = None, reason: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.tasks = tasks
        self.pick_task = pick_task
        self.start = (task, phase, reason)  # what to show picked and typed when the dialog opens
        self.targets: list[str] = []
        self.error: str | None = None  # the last refusal, shown until a value changes

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            if self.pick_task:
                with Horizontal(id="override-lists"):
                    with Vertical():
                        yield Static("Task (phase now):", classes="label")
                        yield OptionList(*[Option(f"{tid}  ({phase})", id=tid) for tid, phase in self.tasks],
                                         id="override-task")
                    with Vertical():
                        yield Static("Phase (reachable from it):", classes="label")
                        yield OptionList(id="override-phase")
            else:
                yield Static("Phase (reachable from here):", classes="label")
                yield OptionList(id="override-phase")
            yield Input(placeholder="reason (required, recorded)", id="override-reason", value=self.start[2])
            yield from self.extra_fields()
            yield Static(id="override-preview")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (esc)", id="cancel", variant="primary")
                yield Button(self.APPLY_LABEL, id="apply", variant="error", disabled=True)
            yield Static(Text(self.KEYS, style="dim"), classes="keys", id="override-keys")

    def extra_fields(self) -> ComposeResult:
        """Fields after the reason (the console asks who applies it)."""
        yield from ()

    def on_mount(self) -> None:
        if not getattr(self.app, "blink", True):
            for field in self.query(Input):
                field.cursor_blink = False
        start_task, start_phase, _ = self.start
        if self.pick_task:
            options = self.query_one("#override-task", OptionList)
            index = next((i for i, (tid, _) in enumerate(self.tasks) if tid == start_task), 0)
            if self.tasks:
                options.highlighted = index
            self._fill_phases(start_phase)
            options.focus()
        else:
            self._fill_phases(start_phase)
            self.query_one("#override-phase", OptionList).focus()
        self.show_preview()

    def _fill_phases(self, keep: str | None = None) -> None:
        """The phases the lifecycle reaches from the chosen task's phase; `keep` stays picked if it still is one."""
        task = self.chosen_task()
        self.targets = override_targets(task[1]) if task else []
        options = self.query_one("#override-phase", OptionList)
        options.clear_options()
        options.add_options([Option(p, id=p) for p in self.targets])
        if self.targets:
            options.highlighted = self.targets.index(keep) if keep in self.targets else 0

    def set_tasks(self, tasks: list[tuple[str, str]]) -> None:
        """Show the tasks as they are now (a refusal may come from a phase that moved on); the task, the
        phase (while it is still reachable) and the reason stay chosen."""
        if not self.pick_task or tasks == self.tasks:
            return
        task, phase = self.chosen_task(), self.phase()
        self.tasks = tasks
        options = self.query_one("#override-task", OptionList)
        with self.prevent(OptionList.OptionHighlighted):
            options.clear_options()
            options.add_options([Option(f"{tid}  ({now})", id=tid) for tid, now in tasks])
            ids = [tid for tid, _ in tasks]
            if tasks:
                options.highlighted = ids.index(task[0]) if task and task[0] in ids else 0
            self._fill_phases(phase)

    # -- values ------------------------------------------------------------------------------
    def chosen_task(self) -> tuple[str, str] | None:
        """(task id, its phase) chosen."""
        if not self.tasks:
            return None
        if not self.pick_task:
            return self.tasks[0]
        index = self.query_one("#override-task", OptionList).highlighted
        return self.tasks[index] if index is not None and index < len(self.tasks) else None

    def phase(self) -> str | None:
        index = self.query_one("#override-phase", OptionList).highlighted
        return self.targets[index] if index is not None and index < len(self.targets) else None

    def reason(self) -> str:
        return self.query_one("#override-reason", Input).value

    # -- preview -----------------------------------------------------------------------------
    def preview(self, task: tuple[str, str], to: str, reason: str) -> tuple[Text, bool]:
        """What the override will do, and whether it can be applied as it stands."""
        raise NotImplementedError

    def show_preview(self) -> None:
        task, to = self.chosen_task(), self.phase()
        if task is None:
            text, ok = Text("This project lists no tasks.", style="yellow"), False
        elif to is None:
            text, ok = Text(f"No phase is reachable from {strip_controls(task[1])}; a terminal task reopens "
                            "with redo.", style="yellow"), False
        else:
            text, ok = self.preview(task, to, self.reason())
        if self.error:  # the last refusal first, until a value changes
            text = Text(self.error + "\n", style="bold yellow").append_text(text)
        self.query_one("#override-preview", Static).update(text)
        self.query_one("#apply", Button).disabled = not ok

    def refused(self, message: str) -> None:
        """Say why the values were refused; everything entered stays for the operator to correct."""
        self.error = in_dialog_words(strip_controls(message))
        self.show_preview()

    # -- events ------------------------------------------------------------------------------
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "override-task":
            self._fill_phases(self.phase())
        self.error = None
        self.show_preview()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        nxt = "#override-phase" if event.option_list.id == "override-task" else "#override-reason"
        self.query_one(nxt).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.error = None
        self.show_preview()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        fields = list(self.query(Input))
        if event.input is not fields[-1]:
            fields[fields.index(event.input) + 1].focus()
        else:
            self.action_apply()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply":
            self.action_apply()
        else:
            self.dismiss(None)

    def action_apply(self) -> None:
        if not self.query_one("#apply", Button).disabled:
            self.submit()

    def submit(self) -> None:
        """Apply the values on screen (the Override button, ctrl+s, enter in the last field)."""
        raise NotImplementedError

    def action_cancel(self) -> None:
        self.dismiss(None)
