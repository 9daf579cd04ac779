"""The live HUD's `?` help (keys and what each glyph means) and its one-line key hint."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rcs_tui.views.hud_line import ASCII_GLYPHS, GLYPHS

KEY_HINT = "q quit · o overlay · r reload · ? help"  # 38 cells: fits a 40-column pane
KEYS = (("q", "quit (ctrl+c too)"), ("o", "show / hide the active-modes overlay and member list"), ("r", "reload now"),
        ("?", "this help"), ("esc", "close this help"))
MEANINGS = {"live": "live: an active mode listed in the active set",
            "stale": "stale: listed, but its file is gone, inactive or finished",
            "orphan": "orphan: an active mode file nothing lists",
            "root-survivor": "root survivor: a root copy still active (can revive a cleared mode)"}


def hud_help_text(ascii_only: bool = False) -> Text:
    out = Text()
    out.append("Keys\n", style="bold")
    for key, what in KEYS:
        out.append(f"{key:>5}  ", style="bold cyan")
        out.append(what + "\n")
    out.append("\nMember glyphs\n", style="bold")
    glyphs = ASCII_GLYPHS if ascii_only else GLYPHS
    for health, meaning in MEANINGS.items():
        out.append(f"{glyphs[health]:>5}  ", style="bold")
        out.append(meaning + "\n")
    out.append("\nThe line reads: [RCS] members | task | rp1 run | turns, tokens, quota | age of the newest write."
               "\nAn age in yellow means nothing has written for a while (the data may be stale).\n", style="dim")
    return out


class HudHelp(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", show=False),
                Binding("q", "close", show=False)]

    def __init__(self, ascii_only: bool = False) -> None:
        super().__init__()
        self.ascii_only = ascii_only

    def compose(self) -> ComposeResult:
        with Vertical(id="hud-help"):
            with VerticalScroll():
                yield Static(hud_help_text(self.ascii_only))
            yield Static(Text("esc / ? / q close", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
