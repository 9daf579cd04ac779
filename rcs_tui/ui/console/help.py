"""The `?` help: every key, grouped, honouring --readonly."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, str, bool], ...] = (
    ("1-6 / tab", "switch view: scopes, team, tasks, rp1, journal, history", False),
    ("j / k", "move down / up", False),
    ("g / G", "first / last row", False),
    ("n / N", "next / previous row that needs you (any view)", False),
    ("a", "acknowledge it: n / N skip it until it changes", False),
    ("> / <", "sort by the next / previous column, then back", False),
    ("enter", "open the row: member, scope, worker, task, run, entry", False),
    ("esc", "back / close / clear the filter", False),
    ("/", "filter the current view", False),
    ("y", "copy the selected path (or id)", False),
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
    ("U", "redo the last undone (or selected) action", True),
    ("e", "edit the selected file in $VISUAL / $EDITOR", True),
    ("?", "this help", False),
    ("q / ctrl+c", "quit", False),
)

LEGEND: tuple[tuple[str, str], ...] = (
    ("◆", "the current session (scope header)"),
    ("◇ / ▸", "another scope, expanded / collapsed (enter toggles)"),
    ("●", "live member: active file, listed in the active set"),
    ("◌", "stale member: listed, but its file is gone, inactive or finished"),
    ("◍", "orphan: an active file no active-set entry lists"),
    ("▲ ↳root", "root survivor: a root copy still active, can bring a cleared mode back"),
    ("♥ alive", "worker beating recently"),
    ("◌ silent", "worker whose last heartbeat is older than the runtime allows"),
    ("✖ dead", "worker whose process is gone or says it is dead"),
    ("? not reporting", "worker without a heartbeat flag"),
    ("waiting (1?)", "rp1 run waiting on 1 question for you (enter shows it)"),
    ("↻", "a retried rp1 step"),
    ("⚠", "something to look at: stale pointer, unreadable file, violation"),
    ("· reported", "why: the runtime or rp1 said so itself (a question, a failure)"),
    ("· inferred", "why: rcs-tui concluded it (old heartbeat, dead pid, file state)"),
    ("✓ … (acked)", "acknowledged: n / N pass it by until its state changes"),
    ("TOMBSTONE", "a session's copy rewritten inactive so a root copy cannot revive it"),
)


def keys_text(keys: tuple[tuple[str, str, bool], ...], readonly: bool, width: int = 15) -> Text:
    """A key listing (key, what it does, whether it writes), right-aligned keys; read-only hides the writers."""
    out = Text()
    for key, what, mutating in keys:
        if mutating and readonly:
            continue
        out.append(f"{key:>{width}}  ", style="bold cyan")
        out.append(what + "\n")
    return out


def help_text(readonly: bool) -> Text:
    out = keys_text(KEYS, readonly)
    if readonly:
        out.append("\nRead-only: clear, override, undo, redo and edit are hidden.\n", style="magenta")
    out.append("\nLegend\n", style="bold")
    for glyph, what in LEGEND:
        out.append(f"{glyph:>15}  ", style="bold")
        out.append(what + "\n")
    return out


class HelpModal(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close"), Binding("question_mark", "close", "Close", show=False),
                Binding("q", "close", "Close", show=False), Binding("j", "scroll('down')", show=False),
                Binding("k", "scroll('up')", show=False)]

    def __init__(self, readonly: bool) -> None:
        super().__init__()
        self.readonly = readonly

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text("Keys", style="bold"), id="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(help_text(self.readonly))
            yield Static(Text("j/k scroll · esc/?/q close", style="dim"), classes="keys")

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_down() if direction == "down" else scroll.scroll_up()

    def action_close(self) -> None:
        self.dismiss(None)
