"""Small pure helpers the console screens share: ages, timestamps, untrusted-text rendering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text

from rcs_tui.state.metrics import parse_time as parse_ts
from rcs_tui.views.text import ago, clip, strip_controls

STATUS_STYLE = {"running": "cyan", "waiting": "yellow", "completed": "green", "failed": "red",
                "skipped": "dim", "not_started": "dim", "cancelled": "dim", "abandoned": "dim",
                "inactive": "dim", "in_progress": "cyan", "pending": "dim", "blocked": "yellow",
                "working": "cyan", "idle": "dim", "done": "green"}


def age(seconds: float | None) -> str:
    """`42s`, `5m`, `2h07m`, `3d`; `-` when unknown."""
    return "-" if seconds is None else ago(seconds)


def age_of(data: dict[str, Any] | None, now: float, keys: tuple[str, ...] = (
        "updated_at", "last_turn_at", "started_at", "completed_at")) -> str:
    """Age of a record from the newest timestamp it carries (file contents, not mtimes: stable and honest)."""
    times = [t for t in (parse_ts((data or {}).get(k)) for k in keys) if t is not None]
    return age(now - max(times)) if times else "-"


def plain(value: object, width: int | None = None) -> str:
    """Untrusted value as one line of plain text (controls stripped, clipped)."""
    text = strip_controls("" if value is None else value)
    return clip(text, width) if width else text


def styled(value: object, style: str = "", width: int | None = None) -> Text:
    """Untrusted value as a Rich Text (never parsed as markup)."""
    return Text(plain(value, width), style=style)


def pretty_json(data: Any) -> Text:
    """A JSON document, indented, as inert text (keys and values from files stay data)."""
    try:
        dumped = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError, RecursionError):
        dumped = repr(data)
    return Text(strip_controls(dumped, keep_newlines=True))


def rel(path: Path | None, root: Path) -> str:
    if path is None:
        return "-"
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def short_sid(sid: str | None, width: int = 18) -> str:
    """A session id short enough for a table cell, keeping the distinctive tail."""
    if sid is None:
        return "root"
    return sid if len(sid) <= width else "…" + sid[-(width - 1):]
