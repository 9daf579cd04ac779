"""The console's task override: the shared dialog over one task, an optional actor, and the exact file
write and transcript line the core will make, planned here as the operator types."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Input

from rcs_tui.state.tasks import load_task, plan_override
from rcs_tui.state.txn import Plan, TxnError
from rcs_tui.ui.console.format import plain
from rcs_tui.ui.override_dialog import OverrideDialog, in_dialog_words


class OverrideModal(OverrideDialog):
    """Dismisses with (plan, actor, replan) when the operator applies a valid override, else None."""

    KEYS = ("↑/↓ pick a phase · enter next field · tab/shift+tab move · "
            "enter in the actor field or ctrl+s applies · esc cancel")

    def __init__(self, root: Path, task_id: str, default_actor: str, at: Callable[[], str]) -> None:
        task = load_task(root, task_id)
        super().__init__(f"Override task {plain(task_id)} (now {task.phase})", [(task_id, task.phase)])
        self.root = root
        self.task_id = task_id
        self.default_actor = default_actor
        self.at = at
        self.plan: Plan | None = None

    def extra_fields(self) -> ComposeResult:
        yield Input(placeholder=f"actor (default: {self.default_actor})", id="override-actor")

    def _actor(self) -> str:
        return self.query_one("#override-actor", Input).value.strip() or self.default_actor

    def preview(self, task: tuple[str, str], to: str, reason: str) -> tuple[Text, bool]:
        self.plan = None
        try:
            plan = plan_override(self.root, self.task_id, to, reason, actor=self._actor(), at=self.at())
        except (TxnError, ValueError) as exc:
            return Text(in_dialog_words(plain(exc)), style="yellow"), False
        self.plan = plan
        out = Text()
        for change in plan.changes:
            out.append("WRITE ", style="bold yellow")
            out.append(plain(change.describe(self.root)["path"]) + f"  ({plain(change.why)})\n")
        for app in plan.appends:
            out.append("APPEND ", style="bold yellow")
            out.append(plain(app.path.relative_to(self.root)) + "\n")
            out.append(plain(app.line), style="italic")
        return out, True

    def _confirmed(self) -> tuple[Plan, str, Callable[[str], Plan]]:
        """The plan on screen, who applies it, and how to make it again at the moment it is applied (the
        transcript records when the phase changed, not when the dialog opened)."""
        assert self.plan is not None
        to, reason, actor = self.phase() or "", self.reason(), self._actor()
        root, task_id = self.root, self.task_id
        return self.plan, actor, lambda at: plan_override(root, task_id, to, reason, actor=actor, at=at)

    def submit(self) -> None:
        if self.plan is not None:
            self.dismiss(self._confirmed())
