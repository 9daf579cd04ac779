"""How a member's health and a worker's condition look, in every face: one glyph, one word, one style.

The HUD, the console, the fleet and their help screens all draw from these tables, so a stale member is
the same mark everywhere. `ASCII_GLYPHS` stands in where only ASCII can be shown.
"""

from __future__ import annotations

HEALTH_GLYPH = {"live": "●", "stale": "◌", "orphan": "◍", "root-survivor": "▲"}
ASCII_GLYPHS = {"live": "*", "stale": "o", "orphan": "?", "root-survivor": "^"}
HEALTH_STYLE = {"live": "green", "stale": "yellow", "orphan": "magenta", "root-survivor": "bold red"}
WORKER_GLYPH = {"alive": ("♥", "green"), "silent": ("◌", "yellow"), "not reporting": ("?", "yellow"),
                "dead": ("✖", "bold red")}  # (glyph, style) per worker condition
