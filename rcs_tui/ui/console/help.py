"""The `?` help: every key, grouped, honouring --readonly."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, str, bool], ...] = (
    ("1-5 / tab", "switch view: scopes, team, tasks, rp1, journal", False),
    ("j / k", "move down / up", False),
    ("enter", "open the selected member, task or run", False),
    ("esc", "back / close", False),
    ("/", "filter the current view", False),
    (": / ctrl+p", "command palette (every action)", False),
    ("r", "reload now", False),
    ("space", "pause / resume live updates", False),
    ("w", "what-if: see the policy's decision, write nothing", False),
    ("D", "doctor: findings and repairs", False),
    ("c", "run timeline: what rp1 would answer to an emit", False),
    ("d", "clear the selected member (this scope)", True),
    ("C", "clear the selected mode across ALL sessions", True),
    ("o", "override the selected task's phase", True),
    ("u", "undo the last (or selected journal) action", True),
    ("?", "this help", False),
    ("q", "quit", False),
)


def help_text(readonly: bool) -> Text:
    out = Text()
    for key, what, mutating in KEYS:
        if mutating and readonly:
            continue
        out.append(f"{key:>11}  ", style="bold cyan")
        out.append(what + "\n")
    if readonly:
        out.append("\nRead-only: clear, override and undo are hidden.", style="magenta")
    return out


class HelpModal(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", "Close", show=False),
                Binding("q", "close", "Close", show=False)]

    def __init__(self, readonly: bool) -> None:
        super().__init__()
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), id="dialog-title")
            with VerticalScroll():
                yield Static(help_text(self.readonly))

    def action_close(self) -> None:
        self.dismiss(None)
