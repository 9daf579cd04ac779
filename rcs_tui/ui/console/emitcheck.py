"""Check an emit against the open run: type a step (optionally a status and `unit=U`) and see what
rp1 would answer, exactly as `rcs-tui rp1 check` prints it. Reads the run (in a worker: the database
may be busy, the field keeps taking keys); writes nothing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rcs_tui.rp1.check import EMIT_STATUSES, CheckError, check_in_source, check_lines
from rcs_tui.rp1.source import Rp1Source
from rcs_tui.ui.console.background import off_thread
from rcs_tui.ui.console.format import plain

KEYS_HINT = "type: STEP [status] [unit=U]   esc close"


def parse_request(text: str) -> tuple[str, str, str | None]:
    """`STEP [status] [unit=U]` -> (step, status, unit); status defaults to running. Anything else is refused
    (ValueError naming it), as the command line refuses it: `verify flarp` is no emit rp1 would take."""
    step, status, unit = "", "running", None
    seen_status = False
    for word in text.split():
        if word.startswith("unit="):
            unit = word[len("unit="):] or None
        elif not step:
            step = word
        elif word in EMIT_STATUSES and not seen_status:
            status, seen_status = word, True
        else:
            what = "a second status" if seen_status and word in EMIT_STATUSES else "an unknown status"
            raise ValueError(f"{what} {word[:40]!r}; an emit's status is one of: {', '.join(EMIT_STATUSES)}")
    return step, status, unit


def check_text(source: Rp1Source, workflow: str, run_id: str, request: str) -> Text:
    try:
        step, status, unit = parse_request(request)
    except ValueError as exc:
        return Text(plain(str(exc), 200), style="yellow")
    if not step:
        return Text("Type the step an agent emitted (or would emit) for this run.", style="dim")
    try:
        data = check_in_source(source, workflow, step, run_id, status=status, unit=unit).to_json()
    except CheckError as exc:
        return Text(plain(str(exc), 200), style="yellow")
    out = Text()
    for i, line in enumerate(check_lines(data)):
        style = ("bold green" if data["verdict"] == "accepted" else "bold red") if i == 0 else (
            "red" if line.startswith("  Error:") else "")
        out.append(plain(line, 400) + "\n", style=style)
    return out


class EmitCheckModal(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, source: Rp1Source, workflow: str, run_id: str, initial: str = "") -> None:
        super().__init__()
        self.source = source
        self.workflow = workflow
        self.run_id = run_id
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(f"Check an emit to {plain(self.workflow)} run {plain(self.run_id)} "
                              "(nothing is written)", style="bold"), id="dialog-title")
            yield Static(Text(KEYS_HINT, style="dim"))
            yield Input(value=self.initial, placeholder="step  [status]  [unit=U]", id="emitcheck-input")
            with VerticalScroll(id="emitcheck-scroll"):
                yield Static(id="emitcheck-result")

    def on_mount(self) -> None:
        field = self.query_one("#emitcheck-input", Input)
        if not getattr(self.app, "blink", True):
            field.cursor_blink = False
        field.focus()
        self._update(field.value)

    def _update(self, value: str) -> None:
        """Check `value` in a worker; a newer keystroke's check replaces one still running."""
        source, workflow, run_id = self.source, self.workflow, self.run_id
        off_thread(self, lambda: check_text(source, workflow, run_id, value),
                   lambda text, _: self.query_one("#emitcheck-result", Static).update(text), group="emitcheck")

    def on_input_changed(self, event: Input.Changed) -> None:
        self._update(event.value)

    def action_close(self) -> None:
        self.dismiss(None)
