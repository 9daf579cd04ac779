"""The console's footer: Textual's, rebuilt only when the keys it would show change.

Textual's footer rebuilds all its key widgets whenever the focus moves (any binding change), which on
a view switch is most of the work: every view's table has the same keys, so the footer need not be
rebuilt at all.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A Footer that skips its rebuild when the shown keys (and their state) are the same as last time."""

    _shown: object = None

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
