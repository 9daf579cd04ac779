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
    """Title + body; dismisses with "ok", or the value of an offered choice (`offers`: key, label, value),
    e.g. "doctor" or "replan". Its keys are shown on its buttons and in a key line."""

    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, title: str, body: str, *, level: str = "error", offer_doctor: bool = False,
                 offers: tuple[tuple[str, str, str], ...] = ()) -> None:
        super().__init__(classes=f"notice-{level}")
        self.title_text = title
        self.body = body
        self.offers = offers + ((("D", "Open doctor", "doctor"),) if offer_doctor else ())

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            with VerticalScroll(id="notice-body"):
                yield Static(Text(strip_controls(self.body, keep_newlines=True)), id="notice-text")
            with Horizontal(classes="buttons"):
                yield Button("OK (esc)", id="ok", variant="primary")
                for key, label, value in self.offers:
                    yield Button(f"{label} ({key})", id=value, variant="warning")
            keys = " · ".join(f"{key} {label.lower()}" for key, label, _ in self.offers)
            yield Static(Text(f"{keys + ' · ' if keys else ''}esc/enter close", style="dim"), classes="keys")

    def on_mount(self) -> None:
        self.query_one("#ok", Button).focus()

    def on_key(self, event) -> None:
        for key, _, value in self.offers:
            if event.key == key or event.character == key:
                event.stop()
                self.dismiss(value)
                return

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id or "ok")

    def action_close(self) -> None:
        self.dismiss("ok")
