"""The one-line status bar: project, scope and how it was chosen, member counts, live/paused, data age, last error."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.widgets import Static

from rcs_tui.ui.console.format import HEALTH_STYLE, age, plain, short_sid
from rcs_tui.views.world import World


def status_text(world: World | None, now: float, *, paused: bool, readonly: bool, last_error: str | None,
                watching: str = "native") -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    if world is None:
        return out.append("loading…")
    snap = world.snapshot
    out.append(plain(world.root.name, 20), style="bold")
    out.append(" │ ")
    res = snap.resolution
    out.append(short_sid(res.session_id, 14), style="bold cyan")
    out.append(f" ({res.source})", style="dim")
    if res.pointer.stale_dead:
        out.append(" ⚠ stale-dead pointer", style="bold yellow")
    out.append(" │ ")
    if paused:
        out.append("❚❚ PAUSED", style="bold yellow")
    elif watching == "off":
        out.append("○ not watching", style="dim")
    else:
        out.append("● LIVE" + (" (polling)" if watching == "polling" else ""), style="bold green")
    out.append(f" {age(now - world.loaded_at)}", style="dim")
    out.append(" │ ")
    counts = Counter(m.health for m in snap.members)
    if not counts:
        out.append("no active modes", style="dim")
    for health in ("live", "stale", "orphan", "root-survivor"):
        if counts.get(health):
            out.append(f"{counts[health]} {health.replace('root-', '')} ", style=HEALTH_STYLE[health])
    if readonly:
        out.append(" │ READ-ONLY", style="bold magenta")
    problems = len(world.badges)
    if last_error:
        out.append(" │ ")
        out.append(plain(last_error, 60), style="bold red")
    elif problems:
        out.append(" │ ")
        out.append(f"⚠ {problems} unreadable file(s)", style="bold yellow")
    return out


class StatusBar(Static):
    """Re-rendered by the app after every reload, pause toggle or error."""

    def show(self, world: World | None, now: float, *, paused: bool, readonly: bool, last_error: str | None,
             watching: str = "native") -> None:
        self.update(status_text(world, now, paused=paused, readonly=readonly, last_error=last_error,
                                watching=watching))
