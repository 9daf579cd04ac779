"""Updating a live widget only when what it shows changed.

A `Static.update` asks Textual for a layout pass, and a layout pass repaints the whole screen: a view
refreshed on every write of a busy runtime would redraw every widget on every batch even when its own
text stayed the same. `show_content` hands the widget its new content only when it differs from the last.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.widgets import Static


class Parts:
    """Renderables shown one under the other (each drawn at the widget's width), compared by their parts."""

    def __init__(self, *parts: Any) -> None:
        self.parts = parts

    def content_key(self) -> tuple[Any, ...] | None:
        keys = tuple(content_key(p) for p in self.parts)
        return None if None in keys else ("parts", keys)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.parts


def content_key(content: Any) -> tuple[Any, ...] | None:
    """What makes two contents draw the same (None: not comparable, so always drawn).

    Rich's `Text` equality ignores the base style and wrapping settings, so a note turning from dim to
    yellow would compare equal: the key takes them all."""
    if isinstance(content, str):
        return ("str", content)
    if isinstance(content, Text):
        return ("text", content.plain, str(content.style), tuple(content.spans), content.justify,
                content.overflow, content.no_wrap, content.end)
    key = getattr(content, "content_key", None)
    return key() if callable(key) else None


def show_content(static: Static, content: Any) -> bool:
    """Give `static` this content unless it shows the same already; whether it was updated."""
    key = content_key(content)
    if key is not None and getattr(static, "_shown_key", None) == key:
        return False
    static.update(content)
    static._shown_key = key  # type: ignore[attr-defined]
    return True
