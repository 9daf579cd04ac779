"""Notifications (toasts) of every rcs-tui app: plain text through the one sanitiser, never Textual markup.

What a toast says is mostly built from untrusted strings: run ids, project and member names, restored paths.
Textual reads a notification's message as content markup by default, so a name such as `[/x]` stopped the
app (a markup error) and `[@click=app.quit]` made a clickable action of it. Every app mixes this in, so
no call site can forget it.
"""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

from rcs_tui.views.text import strip_controls


class PlainNotices(App):
    """`notify` with the message and title as plain, sanitised text (newlines kept)."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """As `App.notify`, but the text is never markup (`markup` is accepted and ignored)."""
        text, head = strip_controls(message, keep_newlines=True), strip_controls(title)
        if timeout is None:
            super().notify(text, title=head, severity=severity, markup=False)
        else:
            super().notify(text, title=head, severity=severity, timeout=timeout, markup=False)
