"""The console's key footer: fitted to the terminal width by itself, rebuilt only when its keys change.

Every screen's footer fits the same way whenever it is mounted or resized, so a screen pushed after a resize (a
detail view, a dialog over the main screen) never shows a footer laid out for another width. Textual's footer
rebuilds all its key widgets whenever the focus moves (any binding change), which on a view switch was most of
the work: every view's table has the same keys, so the footer is rebuilt only when what it shows differs.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

NARROW = 80  # below this width the footer drops the command-palette hint; below NARROW + 20 it packs keys tighter


class FittedFooter(Footer):
    """A footer that packs its keys tighter on narrow terminals, hides the palette hint on the narrowest,
    and skips its rebuild when the shown keys (and their state) are the same as last time."""

    _shown: object = None

    def on_mount(self) -> None:
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        width = self.app.size.width
        self.compact = width < NARROW + 20
        self.show_command_palette = width >= NARROW

    def _keys(self, screen: Screen) -> object:
        active = screen.active_bindings
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return (tuple((b.key, b.description, b.action, enabled, tooltip)
                      for _, b, enabled, tooltip in active.values() if b.show),
                palette[2] if palette else None, self.show_command_palette, self.compact)

    def bindings_changed(self, screen: Screen) -> None:
        keys = self._keys(screen) if self.is_attached and screen is self.screen else None
        if keys is not None and keys == self._shown and self._bindings_ready:
            return
        self._shown = keys
        super().bindings_changed(screen)
