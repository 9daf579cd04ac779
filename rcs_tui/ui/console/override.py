"""Override a task's phase: only phases reachable in principle, a required reason, an optional actor,
and the exact transcript line the core will write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from rcs_tui.state.tasks import load_task, next_report, plan_override
from rcs_tui.state.txn import Plan, TxnError
from rcs_tui.ui.console.format import plain


class OverrideModal(ModalScreen[tuple[Plan, str, Callable[[str], Plan]] | None]):
    """Dismisses with (plan, actor) when the operator applies a valid override, else None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "apply", "Apply", priority=True)]
    KEYS = ("↑/↓ pick a phase · enter next field · tab/shift+tab move · "
            "enter in the actor field or ctrl+s applies · esc cancel")

    def __init__(self, root: Path, task_id: str, default_actor: str, at: Callable[[], str]) -> None:
        super().__init__()
        self.root = root
        self.task_id = task_id
        self.default_actor = default_actor
        self.at = at
        self.plan: Plan | None = None
        task = load_task(root, task_id)
        self.phase = task.phase
        self.reachable = [p for p in next_report(task)["reachable"] if p != task.phase]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(f"Override task {plain(self.task_id)} (now {self.phase})", style="bold"),
                         id="dialog-title")
            yield Static("Phase (reachable from here):", classes="label")
            yield OptionList(*[Option(p, id=p) for p in self.reachable], id="override-phase")
            yield Input(placeholder="reason (required, recorded)", id="override-reason")
            yield Input(placeholder=f"actor (default: {self.default_actor})", id="override-actor")
            yield Static(id="override-preview")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (esc)", id="cancel", variant="primary")
                yield Button("Override (ctrl+s)", id="apply", variant="error", disabled=True)
            yield Static(Text(self.KEYS, style="dim"), classes="keys", id="override-keys")

    def on_mount(self) -> None:
        if not getattr(self.app, "blink", True):
            for field in self.query(Input):
                field.cursor_blink = False
        options = self.query_one("#override-phase", OptionList)
        if self.reachable:
            options.highlighted = 0
        options.focus()
        self._preview()

    def _choice(self) -> str | None:
        options = self.query_one("#override-phase", OptionList)
        if options.highlighted is None or not self.reachable:
            return None
        return self.reachable[options.highlighted]

    def _actor(self) -> str:
        return self.query_one("#override-actor", Input).value.strip() or self.default_actor

    def _confirmed(self) -> tuple[Plan, str, Callable[[str], Plan]]:
        """The plan on screen, who applies it, and how to make it again at the moment it is applied (the
        transcript records when the phase changed, not when the dialog opened)."""
        assert self.plan is not None
        to, reason, actor = self._choice() or "", self.query_one("#override-reason", Input).value, self._actor()
        root, task_id = self.root, self.task_id
        return self.plan, actor, lambda at: plan_override(root, task_id, to, reason, actor=actor, at=at)

    def _preview(self) -> None:
        preview = self.query_one("#override-preview", Static)
        apply = self.query_one("#apply", Button)
        self.plan = None
        to = self._choice()
        reason = self.query_one("#override-reason", Input).value
        if to is None:
            preview.update(Text("No phase is reachable from here; a terminal task reopens with redo.", style="yellow"))
            apply.disabled = True
            return
        try:
            plan = plan_override(self.root, self.task_id, to, reason, actor=self._actor(), at=self.at())
        except (TxnError, ValueError) as exc:
            preview.update(Text(in_console_words(plain(exc)), style="yellow"))
            apply.disabled = True
            return
        self.plan = plan
        out = Text()
        for change in plan.changes:
            out.append("WRITE ", style="bold yellow")
            out.append(plain(change.describe(self.root)["path"]) + f"  ({plain(change.why)})\n")
        for app in plan.appends:
            out.append("APPEND ", style="bold yellow")
            out.append(plain(app.path.relative_to(self.root)) + "\n")
            out.append(plain(app.line), style="italic")
        preview.update(out)
        apply.disabled = False

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._preview()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#override-reason", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._preview()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "override-reason":
            self.query_one("#override-actor", Input).focus()
        elif self.plan is not None:
            self.dismiss(self._confirmed())

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "apply" and self.plan is not None:
            self.dismiss(self._confirmed())
        else:
            self.dismiss(None)

    def action_apply(self) -> None:
        if self.plan is not None:
            self.dismiss(self._confirmed())

    def action_cancel(self) -> None:
        self.dismiss(None)


def in_console_words(message: str) -> str:
    """A core message that names CLI flags, said the way this dialog asks for the same thing."""
    return message.replace("a non-empty --reason", "a reason (type it in the reason field)").replace(
        "--reason R", "with a reason").replace("--reason", "the reason field")
