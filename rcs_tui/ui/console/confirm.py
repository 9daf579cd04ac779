"""The confirmation modal for every write: shows the core's plan exactly, focus starts on Cancel.

The plan's effect (each active set before → after) and its warning come first, so they show on an
80x24 terminal; the files follow and scroll with j/k/PgUp/PgDn whichever button has focus.

When it is given a planner, the plan follows the files while the modal is open: a planned file that
changes on disk makes the modal re-plan, say what changed in the plan and move focus back to Cancel,
so `y` always applies the plan on screen (never one made on bytes that are gone).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from rcs_tui.core.modes import BadName
from rcs_tui.files.io import file_digest
from rcs_tui.state.ops import Operation
from rcs_tui.state.txn import TxnError
from rcs_tui.ui.console.format import plain

POLL_SECONDS = 0.4
KEYS_HINT = "y apply · n/esc cancel · j/k/PgUp/PgDn scroll · tab/enter buttons"


def change_word(change: dict[str, Any]) -> str:
    """How a file changes, in the words an operator expects (deleted / tombstoned / rewritten)."""
    why = str(change.get("why", ""))
    if change.get("action") == "delete":
        return "DELETE"
    if "tombstone" in why:
        return "TOMBSTONE"
    if "canonical" in why:
        return "EDIT SET"
    return "WRITE"


def active_words(names: list[str] | tuple[str, ...]) -> str:
    return " + ".join(plain(n) for n in names) or "(none)"


def size_words(size: object) -> str:
    return f"{size} bytes" if isinstance(size, int) else "absent"


def acted_on_text(preview: dict[str, Any]) -> Text:
    """What an undo or redo acts on (the journal entry: action, when, by whom), or a task's phase move."""
    out = Text()
    entry = preview.get("entry")
    if isinstance(entry, dict):
        out.append("Redoes " if "redoes" in preview else "Undoes ", style="bold")
        out.append(plain(entry.get("action")) + "\n", style="bold cyan")
        when = plain(str(entry.get("at") or "?")[:19].replace("T", " "))
        out.append(f"  done {when} by {plain(entry.get('actor'))}\n  journal entry {plain(entry.get('id'))}\n",
                   style="dim")
    if preview.get("task") and preview.get("from") is not None and preview.get("to") is not None:
        out.append("Task ", style="bold")
        out.append(f"{plain(preview['task'])}: {plain(preview['from'])} → ")
        out.append(plain(preview["to"]) + "\n", style="green")
    return out


def effect_text(preview: dict[str, Any]) -> Text:
    """What the plan does (what it undoes, a task's phase, the active sets before → after): the first thing
    a dialog shows."""
    out = acted_on_text(preview)
    scopes = preview.get("scopes") or []
    if scopes:
        out.append("Active set, before → after\n", style="bold")
        width = max(len(plain(s.get("scope"))) for s in scopes)
        for s in scopes:
            before, after = s.get("before") or [], s.get("after") or []
            out.append(f"  {plain(s.get('scope')):<{width}}  ")
            out.append(active_words(before), style="dim" if before == after else "")
            out.append(" → ")
            out.append(active_words(after) + ("  (unchanged)" if before == after else "") + "\n",
                       style="dim" if before == after else "green")
    elif "active_after" in preview:
        after = preview.get("active_after") or []
        out.append("Active set after: ", style="bold")
        out.append((" + ".join(plain(a) for a in after) or "(empty)") + "\n", style="green")
    return out


def files_text(preview: dict[str, Any]) -> Text:
    """How the plan does it: files and how they change, lines appended, entries removed, what it restores."""
    out = Text()
    changes = preview.get("changes") or []
    sizes = {s.get("path"): s for s in preview.get("file_sizes") or [] if isinstance(s, dict)}
    if changes:
        out.append("Files\n", style="bold")
        for c in changes:
            word = change_word(c)
            out.append(f"  {word}", style="bold red" if word == "DELETE" else "bold yellow")
            out.append(f" — {plain(c.get('why'))}\n" if c.get("why") else "\n", style="dim")
            out.append(f"    {plain(c.get('path'))}\n")
            size = sizes.get(c.get("path"))
            if size is not None:
                out.append(f"      now {size_words(size.get('now'))} → after {size_words(size.get('after'))}\n",
                           style="dim")
        if any(change_word(c) == "TOMBSTONE" for c in changes):
            out.append("  (tombstone: the session's copy becomes an inactive marker, so the root copy cannot\n"
                       "   make the mode come back in this session)\n", style="dim")
    else:
        out.append("No file changes.\n", style="bold")
    for app in preview.get("appends") or []:
        out.append("Append to ", style="bold")
        out.append(plain(app.get("path")) + "\n")
        out.append("  " + plain(app.get("line")) + "\n", style="italic")
    removed = preview.get("canonical_removed")
    if removed:
        out.append("Entries removed from the active-set record: ", style="bold")
        out.append(", ".join(plain(r) for r in removed) + "\n")
    for key in ("restores",):
        if preview.get(key):
            out.append("Restores: ", style="bold")
            out.append(", ".join(plain(p) for p in preview[key]) + "\n")
    return out


def plan_text(preview: dict[str, Any]) -> Text:
    """The plan as the core described it: its effect on the active sets first, then the files."""
    out = effect_text(preview)
    if out.plain:
        out.append("\n")
    out.append_text(files_text(preview))
    return out


class ConfirmPlan(ModalScreen[Any]):
    """Yes/no over a plan preview. `y` confirms, `n`/esc cancels; the Cancel button has focus.

    Dismisses with the operation on screen (or True for a fixed preview) when confirmed, None when not.
    With `planner`, the modal re-plans whenever a planned file changes, and `y` on a plan whose files
    moved re-plans instead of applying.
    """

    BINDINGS = [Binding("y", "confirm", "Confirm"), Binding("n", "cancel", "Cancel"),
                Binding("escape", "cancel", "Cancel", show=False),
                # The plan scrolls whatever has focus (the buttons take none of these keys).
                *[Binding(key, f"scroll('{how}')", show=False) for key, how in (
                    ("j", "down"), ("down", "down"), ("k", "up"), ("up", "up"), ("pagedown", "page_down"),
                    ("pageup", "page_up"), ("home", "home"), ("end", "end"))]]

    def __init__(self, title: str, preview: dict[str, Any] | None = None, confirm_label: str = "Confirm",
                 warning: str | None = None, *, planner: Callable[[], Operation] | None = None,
                 root: Path | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.confirm_label = confirm_label
        self.warning = warning
        self.planner = planner
        self.root = root or Path(".")
        self.op: Operation | None = None
        self.replans = 0
        if planner is not None:
            self.op = planner()
            preview = self.op.preview(self.root)
        self.preview: dict[str, Any] = preview or {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(Text(self.title_text, style="bold"), id="dialog-title")
            yield Static(id="plan-changed")
            with VerticalScroll(id="plan", can_focus=False):  # scrolled by the screen's keys, focus stays put
                yield Static(id="plan-effect")
                yield Static(id="plan-warning")
                yield Static(files_text(self.preview), id="plan-text")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (n)", id="cancel", variant="primary")
                yield Button(f"{self.confirm_label} (y)", id="confirm", variant="error")
            yield Static(Text(KEYS_HINT, style="dim"), id="dialog-keys", classes="keys")

    def _warning_text(self) -> Text:
        """The warning, right under the effect (a blank line after it when there is one)."""
        warning = self.warning or self.preview.get("warning")
        return Text(plain(warning) + "\n", style="bold yellow") if warning else Text("")

    def _show_effect(self) -> None:
        """The effect and the warning under it, each taking no line at all when it has nothing to say."""
        # Each ends in a newline, which a Static draws as the blank line before what follows.
        for name, text in (("#plan-effect", effect_text(self.preview)), ("#plan-warning", self._warning_text())):
            shown = self.query_one(name, Static)
            shown.update(text)
            shown.display = bool(text.plain)

    def action_scroll(self, how: str) -> None:
        plan = self.query_one("#plan", VerticalScroll)
        {"down": plan.scroll_down, "up": plan.scroll_up, "page_down": plan.scroll_page_down,
         "page_up": plan.scroll_page_up, "home": plan.scroll_home, "end": plan.scroll_end}[how](animate=False)

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()
        self.query_one("#plan-changed", Static).display = False
        self._show_effect()
        if self.planner is not None:
            self.set_interval(POLL_SECONDS, self.follow_files)

    def moved(self) -> list[str]:
        """The planned files whose bytes are no longer those the plan was made on, with how they moved."""
        if self.op is None:
            return []
        out = []
        for change in self.op.plan.changes:
            current = file_digest(change.path)
            if current != change.expect:
                how = "appeared" if change.expect is None else ("was removed" if current is None else "changed")
                out.append(f"{change.describe(self.root)['path']} {how}")
        return out

    def follow_files(self) -> bool:
        """Re-plan when a planned file moved (or when the last attempt to plan failed); True if it re-planned."""
        moved = self.moved()
        if self.op is not None and not moved:
            return False
        self.replan(moved)
        return True

    def replan(self, moved: list[str]) -> None:
        assert self.planner is not None
        old = plan_text(self.preview).plain.splitlines()
        note = self.query_one("#plan-changed", Static)
        confirm = self.query_one("#confirm", Button)
        try:
            self.op = self.planner()
        except (TxnError, BadName) as exc:
            self.op = None
            confirm.disabled = True
            note.update(Text(f"⟳ {'; '.join(moved) or 'the files changed'} on disk, and the action cannot be "
                             f"planned now:\n{plain(exc)}", style="bold yellow"))
            note.display = True
            self._back_to_cancel()
            return
        self._back_to_cancel()
        self.replans += 1
        self.preview = self.op.preview(self.root)
        confirm.disabled = False
        new = plan_text(self.preview).plain.splitlines()
        diff = [line for line in difflib.ndiff(old, new) if line[:1] in "+-"]
        out = Text(f"⟳ Re-planned with fresh data ({'; '.join(moved) or 'files changed'} on disk).\n",
                   style="bold yellow")
        if diff:
            out.append("What changed in the plan:\n", style="bold")
            for line in diff[:8]:
                out.append(f"  {line}\n", style="red" if line.startswith("-") else "green")
        else:
            out.append("The plan itself is the same; it now expects the new bytes.\n", style="dim")
        note.update(out)
        note.display = True
        self.query_one("#plan-text", Static).update(files_text(self.preview))
        self._show_effect()

    def _back_to_cancel(self) -> None:
        """Focus Cancel now, not after the queued messages (`Widget.focus` defers it): an enter pressed
        just after a re-plan must never reach the Apply button."""
        self.set_focus(self.query_one("#cancel", Button))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "confirm":
            self.action_confirm()
        else:
            self.dismiss(None)

    def action_confirm(self) -> None:
        if self.planner is not None:
            if self.follow_files():  # the plan on screen is not the one on disk any more: show the fresh one
                self.notify("the files changed: the plan was re-made; read it and press y again",
                            severity="warning")
                return
            if self.op is None:
                return
            self.dismiss(self.op)
        else:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(None)
