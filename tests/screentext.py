"""What a widget shows, as plain text, for tests that read the screen."""

from __future__ import annotations

import io

from rich.console import Console


def shown(static, width: int = 120) -> str:
    """The widget's content drawn at `width` columns, without colour (any content a Static holds:
    text, a renderable, or several parts)."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(static.content)
    return console.export_text()
