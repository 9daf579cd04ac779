"""A message the operator must see: a refusal from the core, a resurrected member, a result."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rcs_tui.views.text import strip_controls


class Notice(ModalScreen[str]):
    """Title + body; dismisses with "ok", or "doctor" when the doctor is offered and chosen."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("enter", "close", "Close", show=False)]

    def __init__(self, title: str, body: str, *, level: str = "error", offer_doctor: bool = False) -> None:
        super().__init__(classes=f"notice-{level}")
        self.title_text = title
        self.body = body
        self.offer_doctor = offer_doctor

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            with VerticalScroll(id="notice-body"):
                yield Static(Text(strip_controls(self.body, keep_newlines=True)), id="notice-text")
            with Horizontal(classes="buttons"):
                yield Button("OK", id="ok", variant="primary")
                if self.offer_doctor:
                    yield Button("Open doctor (D)", id="doctor", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#ok", Button).focus()

    def on_key(self, event) -> None:
        if self.offer_doctor and event.key == "D":
            event.stop()
            self.dismiss("doctor")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id or "ok")

    def action_close(self) -> None:
        self.dismiss("ok")
