"""The fleet's task override: the shared override dialog over every task of a project.

The task and its phase are picked from lists (the phases the lifecycle reaches from the task's phase, as
in the console); the preview says from → to and that the reason is recorded. `Preview plan` asks the
project's own `rcs-tui task override … --dry-run --json` (over ssh for a remote one) while the dialog stays
open: a refusal is shown in the dialog with everything entered still there; a plan closes it and goes to
the confirmation (focus on Cancel).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from rcs_tui.fleet.actions import ActionError
from rcs_tui.fleet.rows import inert
from rcs_tui.ui.console.background import off_thread
from rcs_tui.ui.override_dialog import OverrideDialog

Check = Callable[[str, str, str], dict[str, Any]]


def task_choices(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(task id, phase) of every task the document lists, open tasks first."""
    tasks = [t for t in doc.get("tasks") or [] if isinstance(t, dict) and isinstance(t.get("id"), str)]
    tasks.sort(key=lambda t: (bool(t.get("terminal")), t["id"]))
    return [(inert(t["id"], 80), inert(t.get("phase") or "unreadable", 30)) for t in tasks]


class TaskOverrideForm(OverrideDialog):
    """Dismisses with (task id, target phase, reason, the project's dry run) once the project planned it."""

    KEYS = "↑/↓ pick · enter next field · ctrl+s previews the plan · esc cancel"
    APPLY_LABEL = "Preview plan (ctrl+s)"

    def __init__(self, project: str, doc: dict[str, Any], check: Check, *, task: str | None = None,
                 phase: str | None = None, reason: str = "",
                 doc_now: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__(f"Override a task's phase in {inert(project, 60)}", task_choices(doc), pick_task=True,
                         task=task, phase=phase, reason=reason)
        self.check = check
        self.doc_now = doc_now  # the project's document as the fleet has it now
        self.checking = False

    def preview(self, task: tuple[str, str], to: str, reason: str) -> tuple[Text, bool]:
        out = Text()
        out.append(f"task {task[0]}: ", style="bold")
        out.append(task[1], style="dim")
        out.append(" → ")
        out.append(to + "\n", style="bold green")
        if self.checking:
            out.append("asking the project's rcs-tui for the plan…", style="bold yellow")
            return out, False
        if not reason.strip():
            out.append("A reason is required: it is recorded in the task's transcript.", style="yellow")
            return out, False
        if self.error:  # the refusal above says what to change instead
            out.rstrip()
        else:
            out.append("Nothing is written yet: you confirm the project's plan next.", style="dim")
        return out, True

    def submit(self) -> None:
        task, to = self.chosen_task(), self.phase()
        if task is None or to is None or self.checking:
            return
        reason = self.reason().strip()
        self.checking = True
        self.show_preview()

        def answered(preview: dict[str, Any] | None, error: BaseException | None) -> None:
            self.checking = False
            if error is not None or preview is None:
                if self.doc_now is not None:
                    self.set_tasks(task_choices(self.doc_now()))
                self.refused(str(error))
                return
            self.dismiss((task[0], to, reason, preview))

        off_thread(self, lambda: self.check(task[0], to, reason), answered, group="override-check",
                   errors=(ActionError,))
