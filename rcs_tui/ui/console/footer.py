"""The console's key footer, fitted to the terminal width by itself.

Every screen's footer fits the same way whenever it is mounted or resized, so a screen pushed after a resize (a
detail view, a dialog over the main screen) never shows a footer laid out for another width.
"""

from __future__ import annotations

from textual.widgets import Footer

NARROW = 80  # below this width the footer drops the command-palette hint; below NARROW + 20 it packs keys tighter


class FittedFooter(Footer):
    """A footer that packs its keys tighter on narrow terminals and hides the palette hint on the narrowest."""

    def on_mount(self) -> None:
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        width = self.app.size.width
        self.compact = width < NARROW + 20
        self.show_command_palette = width >= NARROW
