"""Ambient status: one long-running process keeps tmux user options (and, if asked, the terminal title)
current, so a status bar shows `#{@rcs_attention}` without running a command at every refresh.

It follows the project like the live HUD (file events, not polling) and sets only the options whose text
changed, with one `tmux set-option` per changed value: a change costs one short process, an unchanged
project none, whatever the status bar's refresh interval. The line's ages ("updated 5s ago") are drawn
again every `refresh` seconds. Every value is format-escaped (`tmux_literal`): a name from disk such as
`#(cmd)` is shown, never run. The options:

- `@rcs_line`: the HUD line (plain text, `width` columns);
- `@rcs_attention`: what needs you, in words ("1 waiting · 2 dead workers"), empty when nothing does;
- `@rcs_waiting`: how many entries wait for your answer ("0" when none).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from rcs_tui.core.attention import NEEDS_YOU, count_words
from rcs_tui.fleet.alert_channels import run_process
from rcs_tui.views.hud_line import render_spans
from rcs_tui.views.text import strip_controls, tmux_argument

OPTIONS = ("@rcs_line", "@rcs_attention", "@rcs_waiting")


def attention_words(doc: dict[str, Any]) -> str:
    """What needs you, in words, most urgent first: "1 waiting · 2 dead workers" ("" when nothing)."""
    att = doc.get("attention") or {}
    return " · ".join(count_words(k, len(att[k.key])) for k in NEEDS_YOU if att.get(k.key))


def ambient_values(doc: dict[str, Any], world: Any, now: float, *, width: int = 80, preset: str = "focused",
                   ascii_only: bool = False) -> dict[str, str]:
    """The options' plain texts (not yet escaped) for the project as `doc` and `world` show it at `now`."""
    spans = render_spans(world, now, width, 1, preset, ascii_only=ascii_only)[0] if world is not None else []
    return {"@rcs_line": strip_controls("".join(text for text, _style in spans)),
            "@rcs_attention": strip_controls(attention_words(doc)),
            "@rcs_waiting": str(len((doc.get("attention") or {}).get("waiting") or []))}


class TmuxOptions:
    """Sets global tmux user options on the server we run in (or the one at `socket`), only when changed."""

    def __init__(self, socket: str | None = None) -> None:
        exe = shutil.which("tmux")
        if exe is None:
            raise OSError("tmux is not on PATH")
        self.argv = [exe, *(["-S", socket] if socket else [])]
        self.shown: dict[str, str] = {}
        self.sets = 0  # tmux processes run (tests and the benchmark read it)

    async def update(self, values: dict[str, str]) -> str | None:
        """Set each value that differs from what was set last; None when all went in, else why not."""
        for name, value in values.items():
            arg = tmux_argument(value)
            if self.shown.get(name) == arg:
                continue
            self.sets += 1
            why = await run_process([*self.argv, "set-option", "-g", name, arg], None)
            if why is not None:
                return f"tmux set-option {name}: {why}"
            self.shown[name] = arg
        return None


def set_title(out: TextIO, text: str) -> None:
    """The terminal's title (OSC 2), when `out` is a terminal."""
    if out.isatty():
        out.write(f"\x1b]2;{strip_controls(text)[:200]}\x07")
        out.flush()


async def run_ambient(root: Path, *, session_id: str | None = None, socket: str | None = None, width: int = 80,
                      preset: str = "focused", ascii_only: bool = False, title: bool = False, refresh: float = 15.0,
                      poll: bool = False, rp1_db: Path | None = None, out: TextIO = sys.stdout,
                      clock: Callable[[], float] = time.time,
                      on_update: Callable[[dict[str, str]], None] | None = None) -> str:
    """Keep the options current until the tmux server goes away (then say why) or the task is cancelled."""
    from rcs_tui.project.feed import SnapshotFeed, follow_documents

    options = TmuxOptions(socket)
    feed = SnapshotFeed(root, session_id=session_id, rp1_db=rp1_db, clock=clock)
    latest: dict[str, Any] = {}
    changed = asyncio.Event()

    async def follow() -> None:
        async for doc in follow_documents(feed, poll=poll):
            latest["doc"] = doc
            changed.set()

    follower = asyncio.ensure_future(follow())
    try:
        while True:
            if follower.done():
                exc = follower.exception()
                return f"stopped following {root}: {exc}" if exc else f"stopped following {root}"
            with_timeout = asyncio.ensure_future(changed.wait())
            await asyncio.wait({with_timeout, follower}, timeout=refresh, return_when=asyncio.FIRST_COMPLETED)
            with_timeout.cancel()
            changed.clear()
            if "doc" not in latest:
                continue
            values = ambient_values(latest["doc"], feed.loader.world, clock(), width=width, preset=preset,
                                    ascii_only=ascii_only)
            why = await options.update(values)
            if why is not None:
                return why
            if on_update is not None:
                on_update(values)
            if title:
                set_title(out, "rcs-tui " + os.path.basename(str(root)) + (
                    f": {values['@rcs_attention']}" if values["@rcs_attention"] else ""))
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
