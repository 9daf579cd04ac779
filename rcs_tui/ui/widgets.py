"""HUD widgets: the status line/stack, the overlay block and the member list beside it.

Widgets only turn already-decided data (World, spans, overlay lines) into Rich `Text`; every rule
comes from `rcs_tui.core` / `rcs_tui.state` through `rcs_tui.views`.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from rcs_tui.views.hud_line import ASCII_GLYPHS, GLYPHS, HEALTH_STYLE, Span, clean, render_spans
from rcs_tui.views.overlay import build_overlay, runtime_would_list
from rcs_tui.views.world import World


def spans_text(rows: list[list[Span]]) -> Text:
    """Fitted spans → one Rich Text (rows joined by newlines); styles are plain colour words."""
    text = Text(no_wrap=True, overflow="crop", end="")
    for i, row in enumerate(rows):
        if i:
            text.append("\n")
        for chunk, style in row:
            text.append(chunk, style or None)
    return text


class HudView(Widget):
    """The HUD itself: one fitted line when one row high, a vertical stack when taller."""

    def __init__(self, clock: Callable[[], float], preset: str | None = None, ascii_only: bool = False,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.preset = preset
        self.ascii_only = ascii_only
        self.world: World | None = None
        self.notices: tuple[str, ...] = ()

    def show(self, world: World, notices: tuple[str, ...] | None = None) -> None:
        self.world = world
        if notices is not None:
            self.notices = notices
        self.refresh(layout=self.app.is_inline)

    def rows(self, width: int, height: int) -> list[list[Span]]:
        if self.world is None:
            return [[("loading…", "dim")]]
        preset = self.preset or self.world.config.preset
        return render_spans(self.world, self.clock(), max(1, width), max(1, height), preset,
                            ascii_only=self.ascii_only, notices=self.notices)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.rows(width, 12))

    def render(self) -> Text:
        return spans_text(self.rows(self.size.width, self.size.height))


class WorldPanel(Widget):
    """A bordered panel that renders the latest World it was shown ("loading…" before the first)."""

    TITLE = ""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.world: World | None = None
        self.border_title = self.TITLE

    def show(self, world: World) -> None:
        self.world = world
        self.refresh(layout=True)

    def render(self) -> Text:
        return Text("loading…", style="dim") if self.world is None else self.render_world(self.world)

    def render_world(self, world: World) -> Text:
        raise NotImplementedError


class OverlayBlockView(WorldPanel):
    """The Active Modes section exactly as `rcs-tui overlay` prints it."""

    TITLE = "AGENTS overlay"

    def render_world(self, world: World) -> Text:
        block = build_overlay(world.snapshot, world.plans)
        text = Text(no_wrap=False, end="")
        for i, line in enumerate(block.lines):
            if i:
                text.append("\n")
            style = "bold" if line.startswith("**") else None
            if block.gate and line == block.gate:
                style = "bold green" if "UNLOCKED" in line else "bold yellow"
            text.append(line, style)
        text.append(f"\n\n{len(block.text)}/600 chars", style="dim")
        if block.truncated:
            text.append(f", {block.truncated} lines cut", style="dim")
        return text


class MemberList(WorldPanel):
    """Every member of the combined set with its health; flags stale ones the runtime would still list."""

    TITLE = "members"

    def __init__(self, ascii_only: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.ascii_only = ascii_only

    def render_world(self, world: World) -> Text:
        members = world.snapshot.members
        text = Text(end="")
        if not members:
            text.append("no members", style="dim")
        glyphs = ASCII_GLYPHS if self.ascii_only else GLYPHS
        for i, m in enumerate(members):
            if i:
                text.append("\n")
            style = HEALTH_STYLE[m.health]
            text.append(f"{glyphs[m.health]} ", style)
            text.append(m.mode, "bold")
            text.append(f" {m.health}", style)
            if m.scope is None:
                text.append(" · root", "dim")
            if runtime_would_list(m):
                text.append("\n  ! runtime overlay lists it anyway", "bold yellow")
            if m.health != "live":
                text.append(f"\n  {clean(m.reason, 120)}", "dim")
        return text
