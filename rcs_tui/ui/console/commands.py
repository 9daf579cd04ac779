"""Command palette provider: every console action, searchable (`:` or ctrl+p)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ConsoleCommands(Provider):
    """Lists `app.palette_commands()` (which already honours --readonly)."""

    def _commands(self) -> list[tuple[str, str, str]]:
        return list(getattr(self.app, "palette_commands", lambda: [])())

    async def discover(self) -> Hits:
        for name, help_text, action in self._commands():
            yield DiscoveryHit(name, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self.app.run_action, action), help=help_text)
