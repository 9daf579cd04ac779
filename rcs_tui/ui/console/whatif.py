"""What-if: type a request (`forge`, or `$blueprint $team $forge fix it`) and see the core's decision
against the current active set, with the audit fields an auto-complete would write. Writes nothing."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rcs_tui.core.policy import decide_prompt
from rcs_tui.core.reconcile import audit_complete
from rcs_tui.state.snapshot import Scope
from rcs_tui.ui.console.format import plain, pretty_json
from rcs_tui.ui.console.member import KIND_STYLE


def whatif_text(request: str, scope: Scope, now_iso: str) -> Text:
    active = scope.active_modes()
    data = {m: f.data for m, f in scope.modes.items()}
    out = Text()
    out.append("against ", style="dim")
    out.append(f"{scope.label}: ", style="bold")
    out.append((" + ".join(active) or "(empty set)") + "\n\n")
    if not request.strip():
        return out.append("Type a mode or a prompt; nothing is written.", style="dim")
    result = decide_prompt(request, active, data)
    for note in result.notes:
        out.append(plain(note) + "\n", style="yellow")
    if result.deferred:
        out.append(f"deferred: {', '.join(result.deferred)}\n", style="yellow")
    for d in result.decisions:
        out.append(f"{d.request}: ", style="bold")
        out.append(d.kind.upper(), style=f"bold {KIND_STYLE.get(d.kind, '')}")
        out.append(f"  {' + '.join(d.active_before) or '∅'} → {' + '.join(d.active_after) or '∅'}\n")
        out.append(plain(d.operator_message) + "\n", style="red" if not d.allowed else "")
        for src in d.sources:
            out.append(f"\n{src} would be auto-completed with:\n", style="cyan")
            after = audit_complete(data.get(src), src, d.request, now_iso, "rcs-tui")
            audit = {k: after[k] for k in ("active", "current_phase", "completed_at", "auto_completed_reason",
                                            "completion_note", "transition_source", "transition_target_mode")}
            out.append_text(pretty_json(audit))
            out.append("\n")
    if result.decisions and result.decisions[-1].allowed:
        out.append("\nfinal active set: ", style="bold")
        out.append(" + ".join(result.final), style="green")
    return out


class WhatIfModal(ModalScreen[None]):
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, scope: Scope, now_iso: str, initial: str = "") -> None:
        super().__init__()
        self.scope = scope
        self.now_iso = now_iso
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text("What if… (nothing is written)", style="bold"), id="dialog-title")
            yield Input(value=self.initial, placeholder="forge   or   $blueprint $team $forge fix it",
                        id="whatif-input")
            with VerticalScroll(id="whatif-scroll"):
                yield Static(id="whatif-result")

    def on_mount(self) -> None:
        field = self.query_one("#whatif-input", Input)
        if not getattr(self.app, "blink", True):
            field.cursor_blink = False
        field.focus()
        self._update(field.value)

    def _update(self, value: str) -> None:
        self.query_one("#whatif-result", Static).update(whatif_text(value, self.scope, self.now_iso))

    def on_input_changed(self, event: Input.Changed) -> None:
        self._update(event.value)

    def action_close(self) -> None:
        self.dismiss(None)
