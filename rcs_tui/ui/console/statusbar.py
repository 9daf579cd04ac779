"""The one-line status bar: project, scope and how it was chosen, member counts, live/paused, data age, last error.

It fits its width by giving each part shorter forms and shortening (or dropping) the least important
parts first, so at 80 or 60 columns every word it still shows is whole.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.widget import Widget

from rcs_tui.core.health import Health
from rcs_tui.core.words import plural
from rcs_tui.ui.console.format import age, plain, short_sid
from rcs_tui.ui.hud_app import loading_note
from rcs_tui.ui.updates import content_key
from rcs_tui.views.health import HEALTH_GLYPH, HEALTH_STYLE
from rcs_tui.views.world import World

SEP = " │ "
HEALTHS: tuple[Health, ...] = ("live", "stale", "orphan", "root-survivor")
# Which part gives way next while the line is too wide: each step moves that part to its next
# (shorter) form; a part whose last form is empty disappears. Counts, PAUSED, READ-ONLY and the
# last error are the last to shrink and never vanish: on a very narrow pane the session and the
# live mark go first, then PAUSED and the error keep only their marks (❚❚, ✖), so the edge never cuts
# them off.
STEPS = ("scope", "live", "project", "counts", "problem", "live", "project", "scope", "problem", "live",
         "problem", "scope", "readonly", "counts", "problem", "scope", "scope", "live", "live", "problem")


def clip_words(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut between words (with …), never inside one."""
    if len(text) <= width:
        return text
    cut = text[:max(width - 1, 0)]
    space = len(cut) if text[len(cut)] == " " else cut.rfind(" ")
    return (cut[:space] if space > 0 else "").rstrip(" ,;:—-") + "…"


def _error_forms(err: str) -> list[str]:
    """The last error from its longest form to its mark. A form that would keep none of its words (the
    first one is longer than the room, such as a path) shows "✖ error" instead of a bare "…"."""
    clipped = [clip_words(err, w) for w in (60, 40, 24, 12)]
    return [form if form != "…" else "✖ error" for form in clipped] + ["✖ error", "✖"]


def _t(text: str, style: str = "") -> Text:
    return Text(text, style=style)


def _parts(world: World, now: float, *, paused: bool, readonly: bool, last_error: str | None,
           watching: str, busy: str | None = None) -> dict[str, list[Text]]:
    snap = world.snapshot
    res = snap.resolution
    name = plain(world.root.name)
    parts: dict[str, list[Text]] = {"project": [_t(clip_words(name, 20), "bold"), _t(clip_words(name, 12), "bold"),
                                                Text()]}

    def scope(width: int, how: bool, stale: str) -> Text:
        out = _t(short_sid(res.session_id, width), "bold cyan")
        if how:
            out.append(f" ({res.source})", style="dim")
        if res.pointer.stale_dead:
            out.append(stale, style="bold yellow")
        return out

    parts["scope"] = [scope(64, True, " ⚠ stale-dead pointer"), scope(14, True, " ⚠ stale-dead pointer"),
                      scope(14, False, " ⚠ stale-dead"),
                      scope(10, False, " ⚠ stale"), scope(10, False, " ⚠"), Text()]
    data_age = f" {age(now - world.loaded_at)}"
    if paused:
        # whole until the live mark of a running console would have gone (the fifth form), then its mark
        parts["live"] = [_t("❚❚ PAUSED", "bold yellow")] * 5 + [_t("❚❚", "bold yellow")]
    elif watching == "off":
        parts["live"] = [_t("○ not watching" + data_age, "dim"), _t("○ off" + data_age, "dim"), _t("○ off", "dim"),
                         _t("○", "dim"), Text()]
    else:
        polling = " (polling)" if watching == "polling" else ""
        parts["live"] = [_t(f"● LIVE{polling}{data_age}", "bold green"), _t(f"● LIVE{data_age}", "bold green"),
                         _t("● LIVE", "bold green"), _t("●", "bold green"), Text()]
    # What the first frame left to read right after it (every session, the team...): a partial picture
    # never passes for the whole one. Gives way early, to its mark last.
    loading = loading_note(world)
    parts["loading"] = [_t(loading, "dim"), _t("loading…", "dim"), _t("⟳", "dim")] if loading else [Text()]
    # A write being applied in the background (it may be waiting for the store lock): gives way first.
    parts["busy"] = [_t(f"⟳ applying {plain(busy, 40)}…", "bold yellow"), _t("⟳ applying…", "bold yellow"),
                     _t("⟳", "bold yellow")] if busy else [Text()]
    counts = Counter(m.health for m in snap.members)
    words, glyphs = Text(), Text()
    for health in (h for h in HEALTHS if counts.get(h)):
        style = HEALTH_STYLE[health]
        words.append(("" if not words else " ") + f"{counts[health]} {health.replace('root-', '')}", style=style)
        glyphs.append(("" if not glyphs else " ") + f"{counts[health]}{HEALTH_GLYPH[health]}", style=style)
    parts["counts"] = [words, glyphs] if counts else [_t("no active modes", "dim"), _t("none", "dim")]
    parts["readonly"] = [_t("READ-ONLY", "bold magenta"), _t("RO", "bold magenta")] if readonly else [Text()]
    # What is wrong on disk outranks the last message: an unreadable file keeps its mark whatever was said
    # since, and the message then gives way first (it is also cleared after a few seconds or a key).
    problems = len(world.badges)
    error_forms = [_t(form, "bold red") for form in _error_forms(plain(last_error))] if last_error else [Text()]
    parts["message"] = [Text()]
    if problems:
        parts["problem"] = [_t(f"⚠ {plural(problems, 'unreadable file')}", "bold yellow"),
                            _t(f"⚠ {problems} unreadable", "bold yellow"), _t(f"⚠ {problems}", "bold yellow")]
        if last_error:
            parts["message"] = error_forms[:-1] + [Text()]  # its words, then its mark, then gone
    else:
        parts["problem"] = error_forms
    return parts


def _join(parts: dict[str, list[Text]], level: dict[str, int]) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    for key in ("project", "scope", "live", "loading", "busy", "counts", "readonly", "problem", "message"):
        forms = parts[key]
        piece = forms[min(level.get(key, 0), len(forms) - 1)]
        if piece.plain:
            if out.plain:
                out.append(SEP)
            out.append_text(piece)
    return out


def status_text(world: World | None, now: float, *, paused: bool, readonly: bool, last_error: str | None,
                watching: str = "native", width: int | None = None, busy: str | None = None) -> Text:
    """The status line; with `width`, the longest form of it that fits (see STEPS)."""
    if world is None:
        return Text("loading…", no_wrap=True, overflow="ellipsis")
    parts = _parts(world, now, paused=paused, readonly=readonly, last_error=last_error, watching=watching,
                   busy=busy)
    level: dict[str, int] = {}
    out = _join(parts, level)
    # What is being applied outlasts how the scope was chosen and the data's age, then gives way first.
    busy_steps = ("scope", "live") + ("busy",) * (len(parts["busy"]) - 1) if busy else ()
    loading_steps = ("loading",) * (len(parts["loading"]) - 2)  # to "loading…" early; its mark with the rest
    for step in ("message",) * (len(parts["message"]) - 1) + busy_steps + loading_steps + STEPS + ("loading",):
        if width is None or out.cell_len <= width:
            break
        level[step] = level.get(step, 0) + 1
        out = _join(parts, level)
    return out


class StatusBar(Widget):
    """Given the newest World by the app after every reload, pause toggle or error; repainted only when
    its text changes (a busy runtime reloads many times a second, the line rarely moves), and on resize."""

    DEFAULT_CSS = "StatusBar { height: 1; }"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._args: tuple[World | None, float, dict] | None = None
        self._shown: tuple[object, ...] | None = None

    def show(self, world: World | None, now: float, *, paused: bool, readonly: bool, last_error: str | None,
             watching: str = "native", busy: str | None = None) -> None:
        self._args = (world, now, {"paused": paused, "readonly": readonly, "last_error": last_error,
                                   "watching": watching, "busy": busy})
        if content_key(self._text()) != self._shown:
            self.refresh()

    def _text(self) -> Text:
        if self._args is None:
            return Text()
        world, now, opts = self._args
        return status_text(world, now, width=self.content_size.width or None, **opts)

    def render(self) -> Text:
        text = self._text()
        self._shown = content_key(text)
        return text
