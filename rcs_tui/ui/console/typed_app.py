"""The console app as its screens and widgets see it, typed (Textual types a node's `app` as App[object])."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.message_pump import MessagePump

if TYPE_CHECKING:
    from rcs_tui.ui.console.app import ConsoleApp


def console_app(node: MessagePump) -> ConsoleApp:
    """`node.app`: the console, for every screen and widget it shows."""
    return cast("ConsoleApp", node.app)
